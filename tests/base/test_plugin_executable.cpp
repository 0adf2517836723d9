// Which executables a plugin may be (dot/base/plugin_executable.h): the `#!`
// lines accepted and refused, `/usr/bin/env NAME` resolved through absolute
// PATH entries only, python3's runtime folders derived from its own path,
// and open_plugin_executable's answer for an ELF file, a script and text.
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <climits>
#include <cstdlib>
#include <fstream>

#include "dot/base/plugin_executable.h"

namespace dot {
namespace {

std::string real(const std::string& p) {
  char buf[PATH_MAX];
  return ::realpath(p.c_str(), buf) != nullptr ? std::string(buf) : std::string();
}

struct Folder {
  std::string path;
  Folder() {
    std::string tmpl = testing::TempDir() + "dot-plugin-exe-XXXXXX";
    EXPECT_NE(::mkdtemp(tmpl.data()), nullptr);
    path = real(tmpl);
  }
  ~Folder() { (void)::system(("rm -rf '" + path + "'").c_str()); }
  std::string file(const std::string& rel, const std::string& bytes, mode_t mode = 0755) const {
    std::string p = path + "/" + rel;
    std::ofstream(p, std::ios::binary) << bytes;
    ::chmod(p.c_str(), mode);
    return p;
  }
  std::string dir(const std::string& rel) const {
    std::string p = path + "/" + rel;
    EXPECT_EQ(::system(("mkdir -p '" + p + "'").c_str()), 0);
    return p;
  }
};

TEST(ResolveInterpreter, AbsolutePathAndEnvName) {
  auto abs = resolve_interpreter("#!/bin/sh\nexit 0\n", "p", "/bin");
  ASSERT_TRUE(abs.ok()) << abs.error().line();
  EXPECT_EQ(abs->path, real("/bin/sh"));
  EXPECT_TRUE(abs->options.empty());
  EXPECT_TRUE(abs->runtime_dirs.empty());
  // Spaces around the path are a shell's too; a CRLF line ends the same.
  auto spaced = resolve_interpreter("#! /bin/sh \r\n", "p", "/bin");
  ASSERT_TRUE(spaced.ok()) << spaced.error().line();
  EXPECT_EQ(spaced->path, real("/bin/sh"));
  // Relative PATH entries are skipped, absolute ones searched.
  auto env = resolve_interpreter("#!/usr/bin/env sh\n", "p", "bin:.:/bin");
  ASSERT_TRUE(env.ok()) << env.error().line();
  EXPECT_EQ(env->path, real("/bin/sh"));
}

TEST(ResolveInterpreter, RefusesLinesThatWouldRunOtherwiseThanTheyRead) {
  for (const char* bad : {"#!sh\n", "#!/bin/sh -e\n", "#!/usr/bin/env -S sh -e\n", "#!/usr/bin/env\n",
                          "#!/usr/bin/env a/sh\n", "#!\n", "#!/bin/sh", "exit 0\n", "#!/nonexistent/sh\n"}) {
    auto r = resolve_interpreter(bad, "plugin p", "/bin");
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.error().code, Code::Policy) << bad;
    EXPECT_EQ(r.error().kind, "plugin_script") << bad;
    EXPECT_EQ(r.error().detail.rfind("plugin p is a #! script", 0), 0u) << r.error().detail;
  }
  auto missing = resolve_interpreter("#!/usr/bin/env no-such-interpreter-here\n", "p", "/bin:/usr/bin");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().kind, "plugin_script");
  EXPECT_NE(missing.error().detail.find("no-such-interpreter-here is not found"), std::string::npos);
}

TEST(ParseShebang, ReadsTheLineWithoutTheFilesystem) {
  using namespace std::string_literals;
  EXPECT_EQ(parse_shebang("#!/no/such/interpreter\n", "p").value(), (Shebang{"/no/such/interpreter", {}}));
  EXPECT_EQ(parse_shebang("#!\t/usr/bin/env  \tpython3 \r\nrest", "p").value(), (Shebang{{}, "python3"}));
  // A NUL would cut the path where the system reads it, a CR inside the line
  // (found by fuzz_shebang) makes a path with no canonical line: control
  // characters are refused, in the path or after it.
  for (const std::string& bad : {"#!/bin/sh\0/evil\n"s, "#!/usr/bin/env py\0thon\n"s, "#!/bin/sh \0\n"s}) {
    auto r = parse_shebang(bad, "plugin p");
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.error().kind, "plugin_script");
    EXPECT_EQ(r.error().detail, "plugin p is a #! script whose #! line holds the control character 0x00");
  }
  for (const std::string& bad : {"#!/\r'\nusr/3\r\n"s, "#!/a\r\r\n"s, "#!/bin/sh\x1b\n"s, "#!/bin\x7f\n"s}) {
    auto r = parse_shebang(bad, "plugin p");
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_NE(r.error().detail.find("holds the control character 0x"), std::string::npos) << r.error().detail;
  }
  // The 256-byte bound is on the line's end: a line of 256 bytes before "\n" is read.
  const std::string longest = "#!/" + std::string(253, 'a');
  EXPECT_TRUE(parse_shebang(longest + "\n", "p").ok());
  EXPECT_FALSE(parse_shebang(longest + "a\n", "p").ok());
}

TEST(ResolveInterpreter, Python3GetsIsolationAndItsLibraryFolders) {
  Folder d;
  d.dir("bin");
  d.file("bin/python3.42", "\x7f" "ELF");
  ::symlink("python3.42", (d.path + "/bin/python3").c_str());
  const std::string lib = d.dir("lib/python3.42");
  const std::string dist = d.dir("lib/python3/dist-packages");
  // PREFIX/local/lib/python3.42/dist-packages does not exist: not granted.
  auto r = resolve_interpreter("#!/usr/bin/env python3\n", "p", d.path + "/bin");
  ASSERT_TRUE(r.ok()) << r.error().line();
  EXPECT_EQ(r->path, d.path + "/bin/python3.42");  // the symlink resolved
  EXPECT_EQ(r->options, std::vector<std::string>{"-I"});
  EXPECT_EQ(r->runtime_dirs, (std::vector<std::string>{lib, dist}));
  EXPECT_EQ(interpreter_argv(*r),
            (std::vector<std::string>{d.path + "/bin/python3.42", "-I", std::string(kScriptChildPath)}));
  // Not a python3.N name: nothing derived.
  d.file("bin/python3.x", "\x7f" "ELF");
  auto other = resolve_interpreter("#!" + d.path + "/bin/python3.x\n", "p", "/bin");
  ASSERT_TRUE(other.ok()) << other.error().line();
  EXPECT_TRUE(other->options.empty());
  EXPECT_TRUE(other->runtime_dirs.empty());
}

TEST(OpenPluginExecutable, ElfScriptAndText) {
  Folder d;
  auto elf = open_plugin_executable("/bin/echo", "plugin", 64 << 20);
  ASSERT_TRUE(elf.ok()) << elf.error().line();
  EXPECT_FALSE(elf->script.has_value());
  EXPECT_FALSE(elf->interpreter.has_value());
  EXPECT_TRUE(is_sealed_memfd(elf->program.fd.get()));

  const std::string script = d.file("plugin.sh", "#!/bin/sh\nexit 0\n");
  auto s = open_plugin_executable(script, "plugin", 64 << 20);
  ASSERT_TRUE(s.ok()) << s.error().line();
  ASSERT_TRUE(s->script.has_value());
  EXPECT_TRUE(is_sealed_memfd(s->script->fd.get()));
  EXPECT_EQ(s->script->size, 17u);
  EXPECT_EQ(s->program_path, real("/bin/sh"));
  ASSERT_TRUE(s->interpreter.has_value());
  EXPECT_EQ(s->interpreter->path, real("/bin/sh"));

  const std::string text = d.file("text", "exit 0\n");
  auto t = open_plugin_executable(text, "plugin", 64 << 20);
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.error().kind, "plugin_not_elf");
  const std::string on_text = d.file("on-text.sh", "#!" + text + "\n");
  auto ot = open_plugin_executable(on_text, "plugin", 64 << 20);
  ASSERT_FALSE(ot.ok());
  EXPECT_EQ(ot.error().code, Code::Policy);
  EXPECT_EQ(ot.error().detail, "the interpreter " + text +
                                   " is not an ELF executable; a plugin's #! line must lead to an ELF interpreter: "
                                   "write that interpreter's absolute path in the #! line (`command -v NAME`, or a "
                                   "version manager's `which NAME`, prints it)");
  // `env NAME` finding a wrapper script first in PATH (as pyenv's shims
  // are): refused, naming how it was found and what to write instead.
  d.dir("shims");
  const std::string shim = d.file("shims/python3", "#!/bin/sh\nexec /usr/bin/python3 \"$@\"\n");
  const std::string via_env = d.file("via-env.py", "#!/usr/bin/env python3\n");
  const char* saved = std::getenv("PATH");
  const std::string saved_path = saved != nullptr ? saved : "";
  ::setenv("PATH", (d.path + "/shims:/usr/bin:/bin").c_str(), 1);
  auto ve = open_plugin_executable(via_env, "plugin", 64 << 20);
  ::setenv("PATH", saved_path.c_str(), 1);
  ASSERT_FALSE(ve.ok());
  EXPECT_EQ(ve.error().code, Code::Policy);
  EXPECT_NE(ve.error().detail.find("the interpreter " + shim + " is a #! script"), std::string::npos)
      << ve.error().detail;
  EXPECT_NE(ve.error().detail.find("(`#!/usr/bin/env python3` found it first in PATH); a plugin's #! line must lead "
                                   "to an ELF interpreter: write that interpreter's absolute path"),
            std::string::npos)
      << ve.error().detail;
  auto dir = open_plugin_executable(d.path, "plugin", 64 << 20);
  ASSERT_FALSE(dir.ok());
  EXPECT_EQ(dir.error().kind, "plugin_type");
}

}  // namespace
}  // namespace dot
