// dot-core-docgen OUTDIR: the man pages and the bash and zsh completions of
// dot-core, written under OUTDIR in the layout of share/:
//   man/man1/dot-core.1, man/man1/dot-core-COMMAND.1 (one per command),
//   bash-completion/completions/dot-core, zsh/vendor-completions/_dot-core.
//
// A build-time tool, never installed and not a dot-core command. It walks the
// very CLI11 app `dot-core --help` prints (make_full_app over
// all_command_groups()) and formats each option with that app's own help
// formatter, so the pages and completions cannot drift from --help: a new
// option is in them at the next build. cli/CMakeLists.txt runs it.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "app.h"

namespace dot::cli {
namespace {

namespace fs = std::filesystem;

std::vector<const CLI::App*> visible_subcommands(const CLI::App& app) {
  // CLI11 hides a subcommand by giving it the empty group (as --help does).
  return app.get_subcommands([](const CLI::App* s) { return !s->get_name().empty() && !s->get_group().empty(); });
}

std::vector<const CLI::Option*> visible_options(const CLI::App& app, bool positional) {
  return app.get_options([positional](const CLI::Option* o) {
    return !o->get_group().empty() && o->get_positional() == positional && (positional || o->nonpositional());
  });
}

// The names the user types: "plan", or "jcs canonicalize" below "jcs".
std::string command_path(const CLI::App& app) {
  if (app.get_parent() == nullptr) return "";
  std::string parent = command_path(*app.get_parent());
  return parent.empty() ? app.get_name() : parent + " " + app.get_name();
}

const CLI::Formatter& formatter_of(const CLI::App& app) {
  // --help's formatter: if somebody installs one that is not a
  // CLI::Formatter, the build stops here rather than the pages drifting.
  auto* f = dynamic_cast<const CLI::Formatter*>(app.get_formatter().get());
  if (f == nullptr) throw std::runtime_error("dot-core-docgen: the app's help formatter is not a CLI::Formatter");
  return *f;
}

// Every text comes from our own command definitions; a control byte in one is
// a mistake there, so it stops the build instead of reaching roff or a shell.
void require_plain(std::string_view text) {
  for (unsigned char c : text)
    if ((c < 0x20 && c != '\n') || c == 0x7f)
      throw std::runtime_error("dot-core-docgen: a control byte in a command definition: " + std::string(text));
}

// ---- man pages (man-pages(7), roff) ----

// Text for roff: backslashes and hyphens escaped (so "--root" is typed as
// shown), and a line that would start with a control character (. or ')
// guarded by \&.
std::string roff(std::string_view text) {
  require_plain(text);
  std::string out;
  bool line_start = true;
  for (char c : text) {
    if (line_start && (c == '.' || c == '\'')) out += "\\&";
    line_start = c == '\n';
    if (c == '\\')
      out += "\\e";
    else if (c == '-')
      out += "\\-";
    else
      out += c;
  }
  return out;
}

std::string strip_usage_label(std::string usage) {
  constexpr std::string_view kLabel = "Usage: ";
  if (usage.rfind(kLabel, 0) == 0) usage.erase(0, kLabel.size());
  while (!usage.empty() && usage.back() == '\n') usage.pop_back();
  return usage;
}

std::string man_options(const CLI::App& app) {
  const auto& f = formatter_of(app);
  std::string out;
  for (bool positional : {true, false}) {
    auto options = visible_options(app, positional);
    if (options.empty()) continue;
    out += positional ? ".PP\nArguments:\n" : ".PP\nOptions:\n";
    for (const CLI::Option* o : options) {
      out += ".TP\n\\fB" + roff(f.make_option_name(o, positional)) + "\\fR" + roff(f.make_option_opts(o)) + "\n";
      std::string desc = f.make_option_desc(o);
      out += (desc.empty() ? std::string("\\&") : roff(desc)) + "\n";
    }
  }
  return out;
}

std::string man_body(const CLI::App& app) {
  const auto& f = formatter_of(app);
  std::string path = command_path(app);
  std::string out =
      ".nf\n" + roff(strip_usage_label(f.make_usage(&app, "dot-core" + (path.empty() ? "" : " " + path)))) + "\n.fi\n";
  if (!app.get_description().empty()) out += ".PP\n" + roff(app.get_description()) + "\n";
  out += man_options(app);
  std::string footer = app.get_footer();
  while (!footer.empty() && footer.back() == '\n') footer.pop_back();
  if (!footer.empty()) out += ".PP\n.nf\n" + roff(footer) + "\n.fi\n";
  return out;
}

std::string man_subcommands(const CLI::App& app) {
  std::string out;
  for (const CLI::App* sub : visible_subcommands(app)) {
    out += ".SS \"" + roff("dot-core " + command_path(*sub)) + "\"\n" + man_body(*sub);
    out += man_subcommands(*sub);
  }
  return out;
}

std::string man_header(const std::string& page, std::string_view summary, const char* version) {
  std::string upper = page;
  for (char& c : upper) c = static_cast<char>(c >= 'a' && c <= 'z' ? c - 'a' + 'A' : c);
  std::string out = ".\\\" Generated by dot-core-docgen from the command definitions; do not edit.\n";
  out += ".TH " + roff(upper) + " 1 \"\" \"dot-core " + roff(version) + "\" \"dot-core manual\"\n";
  out += ".SH NAME\n" + roff(page) + " \\- " + roff(summary) + "\n";
  return out;
}

std::string man_page_of_command(const CLI::App& cmd, const char* version) {
  std::string page = "dot-core-" + cmd.get_name();
  std::string out = man_header(page, cmd.get_description(), version);
  out += ".SH SYNOPSIS\n" + man_body(cmd);
  if (!visible_subcommands(cmd).empty()) out += ".SH COMMANDS\n" + man_subcommands(cmd);
  out += ".SH SEE ALSO\n\\fBdot\\-core\\fR(1)\n";
  return out;
}

std::string man_page_of_root(const CLI::App& app, const char* version) {
  std::string out = man_header("dot-core", app.get_description(), version);
  out += ".SH SYNOPSIS\n" + man_body(app);
  out += ".SH COMMANDS\n";
  for (const CLI::App* sub : visible_subcommands(app)) {
    out += ".TP\n\\fB" + roff(sub->get_name()) + "\\fR\n" + roff(sub->get_description()) + "\n";
    out += "See \\fBdot\\-core\\-" + roff(sub->get_name()) + "\\fR(1).\n";
  }
  out += ".SH SEE ALSO\n";
  std::string sep;
  for (const CLI::App* sub : visible_subcommands(app)) {
    out += sep + "\\fBdot\\-core\\-" + roff(sub->get_name()) + "\\fR(1)";
    sep = ",\n";
  }
  out +=
      "\n.PP\nThe user guide and the reference documents are installed in share/doc/dot\\-core/ "
      "under the installation prefix (/usr/share/doc/dot\\-core/ from the Debian package).\n";
  return out;
}

// ---- completions ----

// What completion needs to know about one command path.
struct Spec {
  std::vector<std::pair<std::string, std::string>> subcommands;  // name (and each alias), description
  std::vector<std::pair<std::string, std::string>> flags;        // option names that take no value
  std::vector<std::pair<std::string, std::string>> valued;       // option names followed by a value
  bool positionals = false;
};

void collect(const CLI::App& app, std::map<std::string, Spec>& specs) {
  Spec& spec = specs[command_path(app)];
  for (const CLI::App* sub : visible_subcommands(app)) {
    require_plain(sub->get_name());
    spec.subcommands.emplace_back(sub->get_name(), sub->get_description());
    for (const auto& alias : sub->get_aliases()) spec.subcommands.emplace_back(alias, sub->get_description());
    collect(*sub, specs);
  }
  spec.positionals = !visible_options(app, true).empty();
  for (const CLI::Option* o : visible_options(app, false)) {
    // A flag expects no value (CLI11 gives a flag a type size of 1 and
    // expected(0), so the type size alone does not tell).
    auto& into = o->get_expected_max() == 0 ? spec.flags : spec.valued;
    for (const auto& s : o->get_snames()) into.emplace_back("-" + s, o->get_description());
    for (const auto& l : o->get_lnames()) into.emplace_back("--" + l, o->get_description());
  }
}

// A shell word in single quotes (bash and zsh read it the same way).
std::string sh_quote(std::string_view text) {
  require_plain(text);
  std::string out = "'";
  for (char c : text) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

std::string names_of(const std::vector<std::pair<std::string, std::string>>& items) {
  std::string out;
  for (const auto& [name, desc] : items) out += (out.empty() ? "" : " ") + name;
  return out;
}

std::string bash_completion(const std::map<std::string, Spec>& specs) {
  std::string subs, flags, valued, positionals;
  for (const auto& [path, spec] : specs) {
    std::string key = "[" + sh_quote(path.empty() ? "dot-core" : "dot-core " + path) + "]=";
    subs += "    " + key + sh_quote(names_of(spec.subcommands)) + "\n";
    flags += "    " + key + sh_quote(names_of(spec.flags)) + "\n";
    valued += "    " + key + sh_quote(names_of(spec.valued)) + "\n";
    positionals += "    " + key + (spec.positionals ? "1" : "0") + "\n";
  }
  return "# bash completion for dot-core. Generated by dot-core-docgen from the same\n"
         "# command definitions as `dot-core --help`; do not edit.\n"
         "_dot_core() {\n"
         "  local -A subs=(\n" +
         subs +
         "  )\n"
         "  local -A flags=(\n" +
         flags +
         "  )\n"
         "  local -A valued=(\n" +
         valued +
         "  )\n"
         "  local -A positionals=(\n" +
         positionals +
         "  )\n"
         R"(  local cur=${COMP_WORDS[COMP_CWORD]} path=dot-core word i
  # The command path so far: subcommand names, skipping each option's value.
  for ((i = 1; i < COMP_CWORD; i++)); do
    word=${COMP_WORDS[i]}
    if [[ " ${valued[$path]} " == *" $word "* ]]; then
      ((i++))
    elif [[ " ${subs[$path]} " == *" $word "* ]]; then
      path="$path $word"
    fi
  done
  COMPREPLY=()
  # The value of an option: file names (complete -o default).
  if ((COMP_CWORD > 1)) && [[ " ${valued[$path]} " == *" ${COMP_WORDS[COMP_CWORD-1]} "* ]]; then
    return 0
  fi
  if [[ $cur != -* && -n ${subs[$path]} ]]; then
    mapfile -t COMPREPLY < <(compgen -W "${subs[$path]}" -- "$cur")
  elif [[ $cur == -* || ${positionals[$path]} == 0 ]]; then
    mapfile -t COMPREPLY < <(compgen -W "${flags[$path]} ${valued[$path]}" -- "$cur")
  fi
  return 0
}
complete -o default -F _dot_core dot-core
)";
}

// name:description items for zsh's _describe (a ':' in a name escaped).
std::string zsh_items(const std::vector<std::pair<std::string, std::string>>& items) {
  std::string out;
  for (const auto& [name, desc] : items) {
    std::string n;
    for (char c : name) n += c == ':' ? std::string("\\:") : std::string(1, c);
    out += " " + sh_quote(n + ":" + desc);
  }
  return out;
}

std::string zsh_completion(const std::map<std::string, Spec>& specs) {
  std::string cases;
  for (const auto& [path, spec] : specs) {
    cases += "    (" + sh_quote(path.empty() ? "dot-core" : "dot-core " + path) + ")\n";
    cases += "      subs=(" + zsh_items(spec.subcommands) + ")\n";
    cases += "      flags=(" + zsh_items(spec.flags) + ")\n";
    cases += "      valued=(" + zsh_items(spec.valued) + ")\n";
    cases += std::string("      positionals=") + (spec.positionals ? "1" : "0") + " ;;\n";
  }
  return "#compdef dot-core\n"
         "# zsh completion for dot-core. Generated by dot-core-docgen from the same\n"
         "# command definitions as `dot-core --help`; do not edit.\n"
         "__dot_core_spec() {\n"
         "  subs=() flags=() valued=() positionals=0\n"
         "  case $1 in\n" +
         cases +
         "  esac\n}\n"
         R"(
# True when $1 is the name of one of the name:description items of array $2.
__dot_core_has() {
  local item
  for item in "${(@P)2}"; do
    [[ ${item%%:*} == "$1" ]] && return 0
  done
  return 1
}

_dot-core() {
  local cmdpath=dot-core word i positionals
  local -a subs flags valued
  __dot_core_spec dot-core
  # The command path so far: subcommand names, skipping each option's value.
  for ((i = 2; i < CURRENT; i++)); do
    word=${words[i]}
    if __dot_core_has "$word" valued; then
      ((i++))
    elif __dot_core_has "$word" subs; then
      cmdpath="$cmdpath $word"
      __dot_core_spec "$cmdpath"
    fi
  done
  if ((CURRENT > 2)) && __dot_core_has "${words[CURRENT-1]}" valued; then
    _files
  elif [[ $PREFIX != -* && ${#subs} -gt 0 ]]; then
    _describe -t commands 'dot-core command' subs
  elif [[ $PREFIX == -* || $positionals == 0 ]]; then
    _describe -t options 'option' flags -- valued
  else
    _files
  fi
}

_dot-core "$@"
)";
}

void write_file(const fs::path& path, const std::string& text) {
  fs::create_directories(path.parent_path());
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  out.close();
  if (!out) throw std::runtime_error("dot-core-docgen: cannot write " + path.string());
}

int generate(const fs::path& out_dir) {
  Context ctx;
  auto app = make_full_app(all_command_groups(), ctx);
  // A fresh tree, so a removed command leaves no page behind to be installed.
  fs::remove_all(out_dir);
  const fs::path man1 = out_dir / "man" / "man1";
  write_file(man1 / "dot-core.1", man_page_of_root(*app, DOT_VERSION));
  for (const CLI::App* cmd : visible_subcommands(*app))
    write_file(man1 / ("dot-core-" + cmd->get_name() + ".1"), man_page_of_command(*cmd, DOT_VERSION));

  std::map<std::string, Spec> specs;
  collect(*app, specs);
  write_file(out_dir / "bash-completion" / "completions" / "dot-core", bash_completion(specs));
  write_file(out_dir / "zsh" / "vendor-completions" / "_dot-core", zsh_completion(specs));
  return 0;
}

}  // namespace
}  // namespace dot::cli

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fputs("usage: dot-core-docgen OUTDIR\n", stderr);
    return 2;
  }
  try {
    return dot::cli::generate(argv[1]);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
}
