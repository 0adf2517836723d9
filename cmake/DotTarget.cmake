# Project-wide compile settings applied to every target we write ourselves.
# Generated code (protobuf) does not use this, so it builds without -Werror.
function(dot_target_defaults target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic -Wshadow
    -Wnon-virtual-dtor -Wcast-align -Wunused -Woverloaded-virtual
    -Wformat=2 -Wimplicit-fallthrough)
  if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
    # g++ 12 reports a false -Wrestrict inside libstdc++'s string code.
    target_compile_options(${target} PRIVATE -Wno-restrict)
    if(DOT_SANITIZED)
      # g++ 12 at -O1 with ASan/UBSan reports false -Wmaybe-uninitialized inside
      # libstdc++'s std::variant/std::vector moves; the release build keeps the warning.
      target_compile_options(${target} PRIVATE -Wno-maybe-uninitialized)
    endif()
  endif()
  if(DOT_WERROR)
    target_compile_options(${target} PRIVATE -Werror)
  endif()
endfunction()

# dot_fuzz_coverage(target): with DOT_FUZZ (the asan preset), libFuzzer's
# coverage instrumentation on `target`: every library a fuzz target links,
# and the fuzz targets themselves. Only those: the tests, the command line and
# the plugins are built from the same preset without it (the fuzzers never
# run them, and it made each test file about a third slower to compile and
# every sanitized process slower to run).
function(dot_fuzz_coverage target)
  if(DOT_FUZZ)
    target_compile_options(${target} PRIVATE -fsanitize=fuzzer-no-link)
  endif()
endfunction()

# dot_add_library(name SOURCES ... DEPS ...): one library per module folder,
# public headers under <folder>/include/dot/<folder>/.
function(dot_add_library name)
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPS;PRIVATE_DEPS" ${ARGN})
  add_library(${name} STATIC ${ARG_SOURCES})
  target_include_directories(${name} PUBLIC ${CMAKE_CURRENT_SOURCE_DIR}/include)
  target_link_libraries(${name} PUBLIC ${ARG_DEPS} PRIVATE ${ARG_PRIVATE_DEPS})
  dot_target_defaults(${name})
  dot_fuzz_coverage(${name})
endfunction()

# The settings of every test file (dot_add_test), shared with the target
# that makes their precompiled header (dot_test_pch): the same definitions
# and options, or the compiler could not use it.
function(dot_test_settings target)
  target_compile_definitions(${target} PRIVATE
    DOT_SOURCE_DIR="${PROJECT_SOURCE_DIR}" DOT_BIN_DIR="${CMAKE_RUNTIME_OUTPUT_DIRECTORY}")
  dot_target_defaults(${target})
  # A test file is mostly GoogleTest macros and set-up code that runs once;
  # the code under test keeps the preset's optimization: it lives in the
  # libraries. At -O0 the sanitized build compiles a test file in about half
  # the time; the release build at -O1 in three quarters of -O2's (-O0 there
  # would slow the tests that loop in the test file itself).
  if(DOT_SANITIZED)
    target_compile_options(${target} PRIVATE -O0)
  elseif(CMAKE_BUILD_TYPE STREQUAL "Release")
    target_compile_options(${target} PRIVATE -O1)
  endif()
  if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
    # g++ 12 at -O1 reports false -Warray-bounds and -Wstringop-overflow
    # inside libstdc++'s string copies (a list of std::string, a string built
    # from a temporary) in test files compiled with the precompiled header, as
    # it reports -Wrestrict everywhere (dot_target_defaults); the libraries
    # keep both warnings. (Test files are not linted: clang-tidy could not
    # read g++'s precompiled header.)
    target_compile_options(${target} PRIVATE -Wno-array-bounds -Wno-stringop-overflow)
  endif()
endfunction()

# dot_test_pch(): the precompiled header every test executable uses
# (GoogleTest and the standard headers the test files include), made once
# per build: parsing them was about 2 s of each of the 110 test files'
# compile time, in each of CI's two builds. Called by tests/CMakeLists.txt
# before any test is added.
function(dot_test_pch)
  add_library(dot_test_pch OBJECT ${PROJECT_SOURCE_DIR}/tests/pch.cpp)
  target_link_libraries(dot_test_pch PRIVATE GTest::gtest)
  # Compiled as the executables that use it are: -fPIE, not a library's -fPIC.
  set_target_properties(dot_test_pch PROPERTIES POSITION_INDEPENDENT_CODE OFF)
  target_compile_options(dot_test_pch PRIVATE -fPIE)
  dot_test_settings(dot_test_pch)
  target_precompile_headers(dot_test_pch PRIVATE
    <gtest/gtest.h> <algorithm> <chrono> <cstdint> <filesystem> <functional> <map> <memory> <optional> <set>
    <string> <string_view> <vector>)
endfunction()

# dot_add_test(name SOURCES ... DEPS ...): a GoogleTest executable registered with ctest.
function(dot_add_test name)
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPS;PROPERTIES" ${ARGN})
  add_executable(${name} ${ARG_SOURCES})
  target_link_libraries(${name} PRIVATE ${ARG_DEPS} GTest::gtest GTest::gtest_main)
  dot_test_settings(${name})
  target_precompile_headers(${name} REUSE_FROM dot_test_pch)
  gtest_discover_tests(${name} DISCOVERY_TIMEOUT 60 PROPERTIES ${ARG_PROPERTIES})
endfunction()

# dot_add_fuzzer(name SOURCES ... DEPS ...): a libFuzzer target (DOT_FUZZ: the asan preset).
function(dot_add_fuzzer name)
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPS" ${ARGN})
  add_executable(${name} ${ARG_SOURCES})
  target_link_libraries(${name} PRIVATE ${ARG_DEPS})
  target_link_options(${name} PRIVATE -fsanitize=fuzzer)
  dot_target_defaults(${name})
  dot_fuzz_coverage(${name})
  # Every seed, and every finding kept beside them, is a regression test:
  # -runs=0 executes each file of the corpus once and fails on an oracle abort.
  string(REGEX REPLACE "^fuzz_" "" corpus ${name})
  set(seeds ${PROJECT_SOURCE_DIR}/fuzz/corpus/${corpus})
  if(EXISTS ${seeds})
    add_test(NAME fuzz_corpus.${corpus} COMMAND ${name} -runs=0 ${seeds})
  endif()
endfunction()
