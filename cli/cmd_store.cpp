// `dot-core init`, `dot-core store check|prune`, `dot-core inspect list|show|events`.
// The JSON shapes printed here are documented in docs/store.md and kept stable.
#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include <CLI/CLI.hpp>

#include "commands.h"
#include "dot/base/jcs.h"
#include "dot/base/sha256.h"
#include "dot/store/root.h"
#include "dot/store/store.h"
#include "error_kinds.h"
#include "json_writer.h"
#include "numbers.h"
#include "output.h"
#include "root_option.h"
#include "store_json.h"
#include "style.h"

namespace dot::cli {
namespace {

using store::State;
using store::TxnDetail;
using store::TxnSummary;

// ---- human tables ---------------------------------------------------------

// The columns a shown() cell takes: one per code point (shown() leaves only
// valid UTF-8), so that a name like notes/café.txt keeps the columns after
// it aligned.
std::size_t columns(std::string_view cell) {
  return static_cast<std::size_t>(
      std::count_if(cell.begin(), cell.end(), [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; }));
}

// Left-aligned columns separated by two spaces; the last column is not padded.
// A cell is one line whatever it holds (a stored name, code or detail may be
// anything a plugin or a forged row put there): each is shown() on its own.
std::string table(std::vector<std::vector<std::string>> rows) {
  std::vector<std::size_t> width;
  for (auto& r : rows) {
    if (width.size() < r.size()) width.resize(r.size(), 0);
    for (std::size_t i = 0; i < r.size(); ++i) {
      r[i] = shown(r[i]);
      width[i] = std::max(width[i], columns(r[i]));
    }
  }
  std::string out;
  for (const auto& r : rows) {
    std::string line;
    for (std::size_t i = 0; i < r.size(); ++i) {
      line += r[i];
      if (i + 1 < r.size()) line.append(width[i] - columns(r[i]) + 2, ' ');
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line;
    out += '\n';
  }
  return out;
}

// What `inspect show` accepts for the row: its plan id, else its proposal
// id (an abandoned or running proposal), else its row number.
std::string short_id(const TxnSummary& t) {
  if (!t.plan_id.empty()) return t.plan_id.substr(0, 16);
  if (!t.proposal_id.empty()) return t.proposal_id.substr(0, 12);
  return fmt::format("{}{}", store::kRowIdPrefix, t.id);
}

// ---- opening --------------------------------------------------------------

Result<store::Store> open_read_only(const std::string& root) {
  DOT_ASSIGN_OR_RETURN(std::string dir, resolve_root(root));
  DOT_ASSIGN_OR_RETURN(store::OpenedRoot dirs, store::open_root(dir));
  store::OpenOptions o;
  o.read_only = true;
  DOT_ASSIGN_OR_RETURN(store::Store db, store::Store::open(dirs.layout.database, o));
  DOT_TRY(dirs.confirm_database());
  return db;
}

// One transaction of a root opened read-only, named as Store::find takes it.
struct Found {
  store::Store db;
  store::TxnId txn = 0;
};

Result<Found> open_transaction(const std::string& root, const std::string& id) {
  DOT_ASSIGN_OR_RETURN(store::Store db, open_read_only(root));
  DOT_ASSIGN_OR_RETURN(store::TxnId txn, db.find(id));
  return Found{std::move(db), txn};
}

struct Locked {
  store::RootLock lock;
  store::Store db;
};

Result<Locked> open_locked(const std::string& root) {
  DOT_ASSIGN_OR_RETURN(std::string dir, resolve_root(root));
  DOT_ASSIGN_OR_RETURN(store::OpenedRoot dirs, store::open_root(dir));
  DOT_ASSIGN_OR_RETURN(store::RootLock lock, store::RootLock::acquire(dirs));
  DOT_ASSIGN_OR_RETURN(store::Store db, store::Store::open(dirs.layout.database));
  DOT_TRY(dirs.confirm_database());
  return Locked{std::move(lock), std::move(db)};
}

// A record (or a list of them) as one line of JSON, by its writer.
template <typename Write, typename Record>
std::string json_line(Write&& write, const Record& record) {
  JsonWriter w;
  write(w, record);
  return std::move(w).line();
}

// A list of records as one line of JSON: an array, each by its writer.
template <typename Items, typename Write>
std::string json_array_line(const Items& items, Write&& write) {
  JsonWriter w;
  w.array_of(items, write);
  return std::move(w).line();
}

int emit_json(const std::string& json) { return write_stdout(json) ? kExitOk : kExitError; }
// State names are coloured on a terminal (style.h); the text is escaped first.
int emit_text(const std::string& text) { return print_styled(text, Paint::States) ? kExitOk : kExitError; }

// ---- commands -------------------------------------------------------------

struct CommonOptions {
  std::string root;
  bool json = false;
};

int run_init(const CommonOptions& o) {
  auto r = store::init_root(root_to_create(o.root));
  if (!r.ok()) return report(r.error(), o.json);
  if (o.json) {
    JsonWriter w;
    w.begin_object();
    w.key("root").string(r->layout.root);
    w.key("root_id").string(r->root_id);
    w.key("database").string(r->layout.database);
    w.end_object();
    return emit_json(std::move(w).line());
  }
  return emit_text(fmt::format("initialized managed root {}\nroot id   {}\ndatabase  {}\n", shown(r->layout.root),
                               r->root_id, shown(r->layout.database)));
}

int run_check(const CommonOptions& o, store::Store::PlanJudge judge) {
  auto db = open_read_only(o.root);
  if (!db.ok()) return report(db.error(), o.json);
  auto r = db->check(judge);
  if (!r.ok()) return report(r.error(), o.json);
  bool ok = r->problems.empty();
  std::optional<Error> failure;
  if (!ok)
    failure = make_error(cli::ErrorKind::CheckFailed,
                         fmt::format("{}: {} problem(s) found by the store check", db->path(), r->problems.size()));
  if (o.json) {
    JsonWriter w;
    w.begin_object();
    w.key("ok").boolean(ok);
    w.key("transactions").number(r->transactions);
    w.key("blobs").number(r->blobs);
    w.key("problems").string_array(r->problems);
    if (failure) {
      std::string err = failure->json();  // {"error":{...}}: take the inner object
      w.key("error").raw(std::string_view(err).substr(9, err.size() - 10));
    }
    w.end_object();
    if (emit_json(std::move(w).line()) != kExitOk) return kExitError;
  } else {
    std::string out;
    for (const auto& p : r->problems) out += "problem: " + shown(p) + "\n";
    if (ok) out += fmt::format("ok: {} transactions, {} blobs verified\n", r->transactions, r->blobs);
    if (emit_text(out) != kExitOk) return kExitError;
  }
  return failure ? report(*failure, false) : kExitOk;
}

int run_prune(const CommonOptions& o, std::size_t keep) {
  auto db = open_locked(o.root);
  if (!db.ok()) return report(db.error(), o.json);
  auto r = db->db.prune(keep);
  if (!r.ok()) return report(r.error(), o.json);
  if (o.json) {
    JsonWriter w;
    w.begin_object().key("pruned").number(r->pruned).key("keep").number(keep).end_object();
    return emit_json(std::move(w).line());
  }
  return emit_text(fmt::format("pruned {} finished transaction(s), kept the newest {}\n", r->pruned, keep));
}

int run_list(const CommonOptions& o, const std::string& state, std::size_t limit) {
  store::ListFilter f;
  f.limit = limit;
  if (!state.empty()) f.state = store::state_from_name(state);  // validated by CLI11
  auto db = open_read_only(o.root);
  if (!db.ok()) return report(db.error(), o.json);
  auto rows = db->list(f);
  if (!rows.ok()) return report(rows.error(), o.json);
  if (o.json) return emit_json(json_array_line(*rows, write_summary));
  if (rows->empty()) return emit_text("no transactions\n");
  std::vector<std::vector<std::string>> t = {{"ID", "STATE", "CREATED", "PLUGIN", "OPS", "EFFECTS", "CODE"}};
  for (const auto& r : *rows)
    t.push_back({short_id(r), std::string(store::state_name(r.state)), format_time_ms(r.created_at_ms), r.plugin_id,
                 std::to_string(r.operation_count), r.effect_count ? std::to_string(*r.effect_count) : "-",
                 r.code.empty() ? "-" : r.code});
  return emit_text(table(t));
}

// A proposal's dot.log messages for a person (the message is plugin text:
// table() shows each cell on one line, escaped).
std::string log_table(const std::vector<store::LogRecord>& logs) {
  if (logs.empty()) return {};
  std::vector<std::vector<std::string>> t = {{"LEVEL", "DURING", "MESSAGE"}};
  for (const auto& l : logs) t.push_back({l.level, l.method, l.message});
  return "\nplugin log\n" + table(t);
}

// `inspect show` for a person: the summary, then each part the row holds.
std::string detail_text(const TxnDetail& d) {
  const auto& s = d.summary;
  std::vector<std::vector<std::string>> head = {
      {"plan", s.plan_id.empty() ? "-" : s.plan_id},
      {"proposal", s.proposal_id.empty() ? "-" : s.proposal_id},
      {"state", std::string(store::state_name(s.state))},
      {"status", std::string(store::display_status(s))},
      {"plugin", s.plugin_id + (d.plugin_digest.empty() ? "" : " sha256:" + d.plugin_digest)},
      {"created", format_time_ms(s.created_at_ms)},
      {"updated", format_time_ms(s.updated_at_ms)},
      {"effects", s.effect_count ? std::to_string(*s.effect_count) : "none (pre-capability or not sealed)"},
  };
  if (!d.canonical_plan.empty() && sha256_hex(d.canonical_plan) != s.plan_id)
    head.push_back({"integrity", "PLAN BYTES DO NOT MATCH THE PLAN ID"});
  if (!d.proposal_document.empty() && sha256_hex(d.proposal_document) != s.proposal_id)
    head.push_back({"integrity", "PROPOSAL DOCUMENT DOES NOT MATCH THE PROPOSAL ID"});
  // NO_CHANGES is why a proposal ended, not an error.
  if (!s.code.empty())
    head.push_back(
        {s.code == store::kNoChangesCode ? "outcome" : "error", s.code + (d.detail.empty() ? "" : ": " + d.detail)});
  if (s.pruned) head.push_back({"pruned", "blobs and events dropped by store prune"});
  std::string out = table(head);
  if (!d.operations.empty()) {
    std::vector<std::vector<std::string>> ops = {{"SLOT", "NAME", "BEFORE", "AFTER"}};
    for (std::size_t i = 0; i < d.operations.size(); ++i) {
      const auto& op = d.operations[i];
      ops.push_back({std::to_string(i), op.name, op.before_sha256.empty() ? "(absent)" : op.before_sha256.substr(0, 16),
                     op.after_sha256.empty() ? "(absent)" : op.after_sha256.substr(0, 16)});
    }
    out += "\noperations\n" + table(ops);
  }
  // What the plugin proposed (core's before observations, no after), kept
  // for every proposal: plugin-controlled text, escaped.
  if (!d.proposal_document.empty())
    out += fmt::format("\nproposal document ({} bytes, canonical JSON)\n  {}\n", d.proposal_document.size(),
                       shown(d.proposal_document));
  if (!d.effects.empty()) {
    std::vector<std::vector<std::string>> eff = {{"INDEX", "STATE", "ATTEMPTS", "UPDATED", "CODE"}};
    for (const auto& e : d.effects)
      eff.push_back({std::to_string(e.index), std::string(store::effect_state_name(e.state)),
                     std::to_string(e.attempts), format_time_ms(e.updated_at_ms), e.code.empty() ? "-" : e.code});
    out += "\neffect ledger\n" + table(eff);
  }
  if (!d.events.empty()) {
    std::vector<std::vector<std::string>> ev = {{"AT", "STATE", "CODE", "DETAIL"}};
    for (const auto& e : d.events)
      ev.push_back(
          {format_time_ms(e.at_ms), std::string(store::state_name(e.state)), e.code.empty() ? "-" : e.code, e.detail});
    out += "\nevents\n" + table(ev);
  }
  out += log_table(d.logs);
  if (!d.plugin_stderr.empty()) {
    out += "\nplugin stderr" + std::string(d.plugin_stderr_truncated ? " (truncated)" : "") + "\n";
    std::string_view rest = d.plugin_stderr;
    while (!rest.empty()) {
      auto nl = rest.find('\n');
      out += "  " + shown(rest.substr(0, nl)) + "\n";
      if (nl == std::string_view::npos) break;
      rest.remove_prefix(nl + 1);
    }
  }
  return out;
}

int run_show(const CommonOptions& o, const std::string& id) {
  auto found = open_transaction(o.root, id);
  if (!found.ok()) return report(found.error(), o.json);
  auto d = found->db.detail(found->txn);
  if (!d.ok()) return report(d.error(), o.json);
  return o.json ? emit_json(json_line(write_txn_detail, *d)) : emit_text(detail_text(*d));
}

int run_events(const CommonOptions& o, const std::string& id) {
  auto found = open_transaction(o.root, id);
  if (!found.ok()) return report(found.error(), o.json);
  auto evs = found->db.events(found->txn);
  if (!evs.ok()) return report(evs.error(), o.json);
  if (o.json) return emit_json(json_array_line(*evs, write_event));
  auto logs = found->db.logs(found->txn);
  if (!logs.ok()) return report(logs.error(), o.json);
  if (evs->empty()) return emit_text("no events\n" + log_table(*logs));
  std::vector<std::vector<std::string>> t = {{"SEQ", "AT", "STATE", "CODE", "DETAIL"}};
  for (const auto& e : *evs)
    t.push_back({std::to_string(e.seq), format_time_ms(e.at_ms), std::string(store::state_name(e.state)),
                 e.code.empty() ? "-" : e.code, e.detail});
  return emit_text(table(t) + log_table(*logs));
}

// A subcommand of `parent` with the options every store command takes
// (--root, --json) into `o`.
CLI::App* add_root_command(CLI::App& parent, const std::string& name, const std::string& about, CommonOptions& o) {
  auto* cmd = parent.add_subcommand(name, about);
  add_root_option(cmd, o.root);
  cmd->add_flag("--json", o.json, "Machine output (shapes in docs/store.md)");
  return cmd;
}

// `inspect show` and `inspect events`: one transaction, named by a plan or
// proposal id, a unique prefix of one, or txn-N (Store::find).
void add_one_transaction_command(CLI::App* group, Context& ctx, const char* name, const char* description,
                                 const char* footer, int (*run)(const CommonOptions&, const std::string&)) {
  auto o = std::make_shared<CommonOptions>();
  auto id = std::make_shared<std::string>();
  auto* cmd = add_root_command(*group, name, description, *o);
  cmd->add_option("id", *id,
                  "A plan or proposal id, a unique hex prefix of one (at least 4 characters), or the ID "
                  "`inspect list` prints (txn-N for a proposal without an id)")
      ->required();
  cmd->footer(footer);
  cmd->callback([&ctx, o, id, run] { ctx.action = [o, id, run] { return run(*o, *id); }; });
}

}  // namespace

void add_init_command(CLI::App& app, Context& ctx) {
  auto o = std::make_shared<CommonOptions>();
  auto* init =
      add_root_command(app, "init", "Make a folder a managed root: a new one, or an existing one in place", *o);
  init->footer(
      "A DIR that does not exist is created (mode 0700). An existing DIR (your home\n"
      "folder, /etc) is taken in place: nothing in it changes but the new hidden state\n"
      "folder DIR/.dot (the database, the lock file, a random root id). It must be\n"
      "yours and writable by you alone (group write only when the group is your own\n"
      "private group, as under Debian's umask 002). DIR is --root, else $DOT_ROOT\n"
      "(never found from the current directory). Commands run anywhere inside DIR\n"
      "find it, as git finds its repository.\n"
      "Examples:\n  dot-core init --root ~\n  dot-core init --root ~/managed");
  init->get_option("--root")->description("The folder to make a root (default: $DOT_ROOT)");
  init->callback([&ctx, o] {
    // A new root is always named: walking up would find the root we are in.
    if (root_to_create(o->root).empty()) throw CLI::RequiredError("--root DIR (or DOT_ROOT)");
    ctx.action = [o] { return run_init(*o); };
  });
}

void add_store_group(CLI::App& app, Context& ctx, store::Store::PlanJudge judge) {
  auto* group = app.add_subcommand("store", "Check or prune a root's store");
  group->require_subcommand(1);
  group->footer(
      "Examples:\n  dot-core store check --root ~/managed\n  dot-core store prune --root ~/managed --keep 100");
  auto co = std::make_shared<CommonOptions>();
  auto* check = add_root_command(*group, "check", "Verify the database and every stored invariant (read-only)", *co);
  check->footer(
      "Runs PRAGMA integrity_check, then checks every event history against the\n"
      "legal transitions, the effect ledger against each plan, every plan and blob\n"
      "against its digest, and every stored plan against what `plan` enforced when\n"
      "it sealed (as apply, rollback and recover do). Exit 0 only when everything\n"
      "holds.\n"
      "Example:\n  dot-core store check --root ~/managed");
  check->callback([&ctx, co, judge] { ctx.action = [co, judge] { return run_check(*co, judge); }; });

  auto po = std::make_shared<CommonOptions>();
  auto keep = std::make_shared<std::size_t>(0);
  auto* prune = add_root_command(*group, "prune", "Drop blobs and events of old finished transactions", *po);
  add_count_option(prune, "--keep", *keep, "How many of the newest finished transactions keep everything")->required();
  prune->footer(
      "Finished = DONE, ROLLED_BACK, DISCARDED, STALE, ABANDONED; their summary rows,\n"
      "plan bytes and proposal ids stay (proposal documents go). Unfinished\n"
      "transactions are never touched.\n"
      "Example:\n  dot-core store prune --root ~/managed --keep 100");
  prune->callback([&ctx, po, keep] { ctx.action = [po, keep] { return run_prune(*po, *keep); }; });
}

void add_inspect_commands(CLI::App& app, Context& ctx) {
  auto* group = app.add_subcommand("inspect", "Show stored transactions (read-only, never takes the root lock)");
  group->require_subcommand(1);
  group->footer(
      "Examples:\n  dot-core inspect list --root ~/managed --json\n"
      "  dot-core inspect show --root ~/managed 3f2a9c1e\n  dot-core inspect events --root ~/managed 3f2a9c1e");
  std::vector<std::string> names;
  for (State s : store::all_states()) names.emplace_back(store::state_name(s));

  auto lo = std::make_shared<CommonOptions>();
  auto state = std::make_shared<std::string>();
  auto limit = std::make_shared<std::size_t>(50);
  auto* list = add_root_command(*group, "list", "List transactions, newest first", *lo);
  list->add_option("--state", *state, "Only transactions in this state")->check(CLI::IsMember(names));
  add_count_option(list, "--limit", *limit, "At most this many rows (0: all)")->default_str(std::to_string(*limit));
  list->footer("Example:\n  dot-core inspect list --root ~/managed --state SEALED --limit 10 --json");
  list->callback(
      [&ctx, lo, state, limit] { ctx.action = [lo, state, limit] { return run_list(*lo, *state, *limit); }; });

  add_one_transaction_command(group, ctx, "show", "Show one transaction: plan, operations, effects, events, stderr",
                              "Example:\n  dot-core inspect show --root ~/managed 3f2a9c1e --json", run_show);
  add_one_transaction_command(group, ctx, "events", "Show the event log of one transaction",
                              "Example:\n  dot-core inspect events --root ~/managed 3f2a9c1e", run_events);
}

}  // namespace dot::cli
