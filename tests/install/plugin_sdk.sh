#!/usr/bin/env bash
# The plugin SDK as an outside author gets it from `cmake --install BUILD
# --prefix P`: every installed header compiles on its own against P/include
# alone; with the source and build trees hidden (as in prefix.sh), the motd
# example of docs/writing-plugins.md builds from P/share/doc/dot-core/examples
# with find_package(dot-core COMPONENTS plugin), and again with pkg-config
# (dot-core-plugin.pc), and both builds pass `dot-core dpp conform`, as does
# the Python example on the installed dot_plugin; a component the package
# does not have is refused.
set -euo pipefail
build_dir=$(realpath "$1") source_dir=$(realpath "$2") cxx=${3:-c++} ldflags=${4:-}
fail() { echo "FAIL: $*"; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
prefix=$tmp/p
cmake --install "$build_dir" --prefix "$prefix" >/dev/null

for f in lib/libdot-core-plugin.a lib/cmake/dot-core/dot-coreConfig.cmake \
         lib/cmake/dot-core/dot-coreConfigVersion.cmake lib/cmake/dot-core/dot-core-plugin-targets.cmake \
         lib/pkgconfig/dot-core-plugin.pc \
         include/dot/dpp/runtime.h include/dot/dpp/plugin.h share/doc/dot-core/examples/CMakeLists.txt \
         lib/python3/dist-packages/dot_plugin.py; do
  [ -f "$prefix/$f" ] || fail "not installed: $f"
done
# Only the runtime's headers: nothing of core, store or the host side.
! [ -e "$prefix/include/dot/dpp/host_session.h" ] && ! [ -e "$prefix/include/dot/base/sandbox.h" ] &&
  ! [ -e "$prefix/include/dot/core" ] || fail "headers beyond the plugin runtime are installed"
while IFS= read -r header; do
  echo "#include \"${header#"$prefix/include/"}\"" |
    "$cxx" -std=c++20 -fsyntax-only -Wall -Werror -I "$prefix/include" -x c++ - ||
    fail "$header does not compile on its own against the installed headers"
done < <(find "$prefix/include" -name '*.h' | sort)

hide=(--mount --propagation private)
[ "$(id -u)" -eq 0 ] || hide+=(--map-root-user)
cd "$tmp"
unshare "${hide[@]}" env -i PATH=/usr/bin:/bin HOME="$tmp" BUILD="$build_dir" SOURCE="$source_dir" \
  P="$prefix" T="$tmp" CXX_FOR_EXAMPLE="$cxx" LDFLAGS_FOR_EXAMPLE="$ldflags" \
  bash -c '
    set -euo pipefail
    fail() { echo "FAIL: $*"; exit 1; }
    mount -t tmpfs none "$SOURCE"
    [[ $BUILD == "$SOURCE"/* ]] || mount -t tmpfs none "$BUILD"
    [ -z "$(ls -A "$SOURCE")" ] && [ ! -e "$BUILD/bin/dot-core" ] || fail "the trees are not hidden"
    cp -r "$P/share/doc/dot-core/examples" "$T/ex"
    cmake -S "$T/ex" -B "$T/ex/build" -G Ninja -DCMAKE_PREFIX_PATH="$P" -DCMAKE_BUILD_TYPE=Release \
      -DCMAKE_CXX_COMPILER="$CXX_FOR_EXAMPLE" -DCMAKE_EXE_LINKER_FLAGS="$LDFLAGS_FOR_EXAMPLE" >/dev/null ||
      fail "the example does not configure against the installed package"
    cmake --build "$T/ex/build" >/dev/null || fail "the example does not build against the installed package"
    "$P/bin/dot-core" dpp conform --id org.example.motd -- "$T/ex/build/motd-plugin" | tail -1
    flags=$(PKG_CONFIG_PATH="$P/lib/pkgconfig" pkg-config --cflags --libs dot-core-plugin) || fail "pkg-config: $flags"
    # shellcheck disable=SC2086  # the flags are words
    "$CXX_FOR_EXAMPLE" -O2 -o "$T/motd-pc" "$T/ex/motd_plugin.cpp" $flags $LDFLAGS_FOR_EXAMPLE ||
      fail "the example does not build with pkg-config"
    "$P/bin/dot-core" dpp conform --id org.example.motd -- "$T/motd-pc" | tail -1
    # A plugin gets no PYTHONPATH from conform: env sets it, then runs python3.
    "$P/bin/dot-core" dpp conform --id org.example.py -- /usr/bin/env PYTHONPATH="$P/lib/python3/dist-packages" \
      /usr/bin/python3 -B "$P/share/doc/dot-core/examples/general_plugin.py" | tail -1
    mkdir "$T/other"
    echo "cmake_minimum_required(VERSION 3.25)
project(p LANGUAGES CXX)
find_package(dot-core REQUIRED COMPONENTS plugin nonesuch)" > "$T/other/CMakeLists.txt"
    out=$(cmake -S "$T/other" -B "$T/other/build" -DCMAKE_PREFIX_PATH="$P" 2>&1) &&
      fail "a missing component was accepted"
    grep -q "no component \"nonesuch\"" <<<"$out" || fail "a missing component is refused without naming it: $out"
    echo "ok   the motd example builds with CMake and with pkg-config and conforms; so does the Python example"'
