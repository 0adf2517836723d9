# Sourced by the tests of this folder: what `dot-core ... --help` lists,
# read from its text (CLI11's help layout: "Section:" headers, entries
# indented by two spaces), independently of dot-core-docgen.

# help_section SECTION ARGS...: the first column of SECTION's entries in
# `dot-core ARGS --help` (an option entry like "-h,--help" is one field).
help_section() {
  local section=$1
  shift
  "$DOT_CORE" "$@" --help | awk -v want="$section:" '
    /^[^ ].*:$/ { in_section = ($0 == want); next }
    in_section && /^  [^ ]/ { print $1 }'
}
# help_subcommands ARGS...: the subcommands `dot-core ARGS --help` lists.
help_subcommands() { help_section Subcommands "$@"; }
# help_options ARGS...: every option name `dot-core ARGS --help` lists, one
# a line ("-h,--help" gives -h and --help).
help_options() { help_section Options "$@" | tr ',' '\n' | grep '^-'; }
# help_positionals ARGS...: the positional arguments it lists.
help_positionals() { help_section Positionals "$@"; }
# command_paths [ARGS...]: every command path below ARGS ("plan", "jcs
# canonicalize"), one a line, as --help lists them.
command_paths() {
  local sub
  for sub in $(help_subcommands "$@"); do
    echo "${*:+$* }$sub"
    command_paths "$@" "$sub"
  done
}
fail() { echo "FAIL: $*"; exit 1; }
