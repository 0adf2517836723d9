// `dot-core init`, `dot-core store check|prune`, `dot-core inspect list|show|events`.
// The JSON shapes printed here are documented in docs/store.md and kept stable.
#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "commands.h"
#include "dot/base/jcs.h"
#include "dot/base/sha256.h"
#include "dot/store/root.h"
#include "dot/store/store.h"
#include "numbers.h"
#include "output.h"

namespace dot::cli {
namespace {

using store::State;
using store::TxnDetail;
using store::TxnSummary;

// ---- JSON writing ---------------------------------------------------------

// Replaces every byte that is not part of valid UTF-8 with U+FFFD, so that
// arbitrary bytes (a plugin's stderr) can be printed as a JSON string.
std::string valid_utf8(std::string_view in) {
  std::string out;
  out.reserve(in.size());
  std::size_t i = 0;
  while (i < in.size()) {
    auto c = static_cast<unsigned char>(in[i]);
    std::size_t len = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xe ? 3 : (c >> 3) == 0x1e ? 4 : 0;
    bool ok = len > 0 && i + len <= in.size();
    std::uint32_t cp = len == 1 ? c : len == 2 ? (c & 0x1f) : len == 3 ? (c & 0x0f) : (c & 0x07);
    for (std::size_t k = 1; ok && k < len; ++k) {
      auto cc = static_cast<unsigned char>(in[i + k]);
      if ((cc & 0xc0) != 0x80) ok = false;
      cp = (cp << 6) | (cc & 0x3f);
    }
    // Overlong forms, surrogates and values past U+10FFFF are invalid too.
    if (ok && ((len == 2 && cp < 0x80) || (len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) ||
               (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff))
      ok = false;
    if (ok) {
      out.append(in.substr(i, len));
      i += len;
    } else {
      out += "\xef\xbf\xbd";
      ++i;
    }
  }
  return out;
}

void str(std::string& out, std::string_view s) { jcs::append_string(out, valid_utf8(s)); }
void str_or_null(std::string& out, std::string_view s) {
  if (s.empty())
    out += "null";
  else
    str(out, s);
}
void key(std::string& out, std::string_view k) {
  if (out.back() != '{') out += ',';
  jcs::append_string(out, k);
  out += ':';
}
void time_or_null(std::string& out, std::int64_t ms) {
  if (ms == 0)
    out += "null";
  else
    str(out, format_time_ms(ms));
}

// What `status` shows: the stored state, refined for COMMITTED by its ledger.
std::string status_of(const TxnSummary& t) {
  if (t.state != State::Committed || !t.effect_count) return std::string(store::state_name(t.state));
  return t.effect_failed ? "POST_COMMIT_FAILED" : "POST_COMMIT_PENDING";
}

void summary_fields(std::string& out, const TxnSummary& t) {
  key(out, "id");
  out += std::to_string(t.id);
  key(out, "plan_id");
  str_or_null(out, t.plan_id);
  key(out, "proposal_id");
  str_or_null(out, t.proposal_id);
  key(out, "state");
  str(out, store::state_name(t.state));
  key(out, "created_at");
  time_or_null(out, t.created_at_ms);
  key(out, "updated_at");
  time_or_null(out, t.updated_at_ms);
  key(out, "plugin_id");
  str(out, t.plugin_id);
  key(out, "code");
  str_or_null(out, t.code);
  key(out, "operation_count");
  out += std::to_string(t.operation_count);
  key(out, "effect_count");
  if (t.effect_count)
    out += std::to_string(*t.effect_count);
  else
    out += "null";
  key(out, "pruned");
  out += t.pruned ? "true" : "false";
}

void event_json(std::string& out, const store::Event& e) {
  out += '{';
  key(out, "seq");
  out += std::to_string(e.seq);
  key(out, "state");
  str(out, store::state_name(e.state));
  key(out, "at");
  str(out, format_time_ms(e.at_ms));
  key(out, "code");
  str_or_null(out, e.code);
  key(out, "detail");
  str_or_null(out, e.detail);
  out += '}';
}

std::string show_json(const TxnDetail& d) {
  std::string out = "{";
  summary_fields(out, d.summary);
  key(out, "status");
  str(out, status_of(d.summary));
  key(out, "plugin_digest");
  str_or_null(out, d.plugin_digest);
  key(out, "started_at");
  time_or_null(out, d.started_at_ms);
  key(out, "finished_at");
  time_or_null(out, d.finished_at_ms);
  key(out, "detail");
  str_or_null(out, d.detail);
  // The plan object exactly as hashed, when its bytes still hash to the plan
  // id; bytes that do not are shown as a string so the output stays JSON.
  bool verified = !d.canonical_plan.empty() && sha256_hex(d.canonical_plan) == d.summary.plan_id;
  key(out, "plan");
  if (d.canonical_plan.empty())
    out += "null";
  else if (verified)
    out += d.canonical_plan;
  else
    out += "null";
  key(out, "plan_verified");
  out += verified ? "true" : "false";
  if (!d.canonical_plan.empty() && !verified) {
    key(out, "plan_text");
    str(out, d.canonical_plan);
  }
  key(out, "operations");
  out += '[';
  for (std::size_t i = 0; i < d.operations.size(); ++i) {
    if (i) out += ',';
    out += '{';
    key(out, "slot");
    out += std::to_string(i);
    key(out, "name");
    str(out, d.operations[i].name);
    key(out, "before_sha256");
    str(out, d.operations[i].before_sha256);
    key(out, "after_sha256");
    str(out, d.operations[i].after_sha256);
    out += '}';
  }
  out += ']';
  key(out, "effects");
  out += '[';
  for (std::size_t i = 0; i < d.effects.size(); ++i) {
    const auto& e = d.effects[i];
    if (i) out += ',';
    out += '{';
    key(out, "index");
    out += std::to_string(e.index);
    key(out, "state");
    str(out, store::effect_state_name(e.state));
    key(out, "idempotency_key");
    str(out, e.idempotency_key);
    key(out, "attempts");
    out += std::to_string(e.attempts);
    key(out, "updated_at");
    time_or_null(out, e.updated_at_ms);
    key(out, "code");
    str_or_null(out, e.code);
    key(out, "detail");
    str_or_null(out, e.detail);
    out += '}';
  }
  out += ']';
  key(out, "events");
  out += '[';
  for (std::size_t i = 0; i < d.events.size(); ++i) {
    if (i) out += ',';
    event_json(out, d.events[i]);
  }
  out += ']';
  key(out, "backups");
  out += d.has_backups ? "true" : "false";
  if (!d.plugin_stderr.empty()) {
    key(out, "plugin_stderr");
    str(out, d.plugin_stderr);
    key(out, "plugin_stderr_truncated");
    out += d.plugin_stderr_truncated ? "true" : "false";
  }
  out += "}\n";
  return out;
}

// ---- human tables ---------------------------------------------------------

// Left-aligned columns separated by two spaces; the last column is not padded.
std::string table(const std::vector<std::vector<std::string>>& rows) {
  std::vector<std::size_t> width;
  for (const auto& r : rows) {
    if (width.size() < r.size()) width.resize(r.size(), 0);
    for (std::size_t i = 0; i < r.size(); ++i) width[i] = std::max(width[i], r[i].size());
  }
  std::string out;
  for (const auto& r : rows) {
    std::string line;
    for (std::size_t i = 0; i < r.size(); ++i) {
      line += r[i];
      if (i + 1 < r.size()) line.append(width[i] - r[i].size() + 2, ' ');
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line;
    out += '\n';
  }
  return out;
}

// One line of a human table: control characters (a plugin's stderr, a
// detail) never reach the terminal raw.
std::string printable(std::string_view s) {
  std::string v = valid_utf8(s);
  std::string out;
  for (char c : v) {
    auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7f)
      out += fmt::format("\\x{:02x}", u);
    else
      out += c;
  }
  return out;
}

std::string short_id(const TxnSummary& t) {
  if (!t.plan_id.empty()) return t.plan_id.substr(0, 16);
  if (!t.proposal_id.empty()) return "(proposal " + t.proposal_id.substr(0, 8) + ")";
  return fmt::format("(proposal #{})", t.id);
}

// ---- opening --------------------------------------------------------------

Result<store::Store> open_read_only(const std::string& root) {
  DOT_ASSIGN_OR_RETURN(store::RootLayout layout, store::locate_root(root));
  store::OpenOptions o;
  o.read_only = true;
  return store::Store::open(layout.database, o);
}

struct Locked {
  store::RootLock lock;
  store::Store db;
};

Result<Locked> open_locked(const std::string& root) {
  DOT_ASSIGN_OR_RETURN(store::RootLayout layout, store::locate_root(root));
  DOT_ASSIGN_OR_RETURN(store::RootLock lock, store::RootLock::acquire(layout));
  DOT_ASSIGN_OR_RETURN(store::Store db, store::Store::open(layout.database));
  return Locked{std::move(lock), std::move(db)};
}

int emit(const std::string& text) { return write_stdout(text) ? kExitOk : kExitError; }

// ---- commands -------------------------------------------------------------

struct CommonOptions {
  std::string root;
  bool json = false;
};

int run_init(const CommonOptions& o) {
  auto r = store::init_root(o.root);
  if (!r.ok()) return report(r.error(), o.json);
  if (o.json) {
    std::string out = "{";
    key(out, "root");
    str(out, r->layout.root);
    key(out, "root_id");
    str(out, r->root_id);
    key(out, "database");
    str(out, r->layout.database);
    out += "}\n";
    return emit(out);
  }
  return emit(fmt::format("initialized managed root {}\nroot id   {}\ndatabase  {}\n", r->layout.root, r->root_id,
                          r->layout.database));
}

int run_check(const CommonOptions& o) {
  auto db = open_read_only(o.root);
  if (!db.ok()) return report(db.error(), o.json);
  auto r = db->check();
  if (!r.ok()) return report(r.error(), o.json);
  bool ok = r->problems.empty();
  std::optional<Error> failure;
  if (!ok)
    failure = make_error(Code::Store, "check_failed",
                         fmt::format("{}: {} problem(s) found by the store check", db->path(), r->problems.size()));
  if (o.json) {
    std::string out = "{";
    key(out, "ok");
    out += ok ? "true" : "false";
    key(out, "transactions");
    out += std::to_string(r->transactions);
    key(out, "blobs");
    out += std::to_string(r->blobs);
    key(out, "problems");
    out += '[';
    for (std::size_t i = 0; i < r->problems.size(); ++i) {
      if (i) out += ',';
      str(out, r->problems[i]);
    }
    out += ']';
    if (failure) {
      key(out, "error");
      std::string err = failure->json();  // {"error":{...}}: take the inner object
      out += err.substr(9, err.size() - 10);
    }
    out += "}\n";
    if (emit(out) != kExitOk) return kExitError;
  } else {
    std::string out;
    for (const auto& p : r->problems) out += "problem: " + printable(p) + "\n";
    if (ok) out += fmt::format("ok: {} transactions, {} blobs verified\n", r->transactions, r->blobs);
    if (emit(out) != kExitOk) return kExitError;
  }
  return failure ? report(*failure, false) : kExitOk;
}

int run_prune(const CommonOptions& o, std::size_t keep) {
  auto db = open_locked(o.root);
  if (!db.ok()) return report(db.error(), o.json);
  auto r = db->db.prune(keep);
  if (!r.ok()) return report(r.error(), o.json);
  if (o.json) return emit(fmt::format("{{\"pruned\":{},\"keep\":{}}}\n", r->pruned, keep));
  return emit(fmt::format("pruned {} finished transaction(s), kept the newest {}\n", r->pruned, keep));
}

int run_list(const CommonOptions& o, const std::string& state, std::size_t limit) {
  store::ListFilter f;
  f.limit = limit;
  if (!state.empty()) f.state = store::state_from_name(state);  // validated by CLI11
  auto db = open_read_only(o.root);
  if (!db.ok()) return report(db.error(), o.json);
  auto rows = db->list(f);
  if (!rows.ok()) return report(rows.error(), o.json);
  if (o.json) {
    std::string out = "[";
    for (std::size_t i = 0; i < rows->size(); ++i) {
      if (i) out += ',';
      out += '{';
      summary_fields(out, (*rows)[i]);
      key(out, "status");
      str(out, status_of((*rows)[i]));
      out += '}';
    }
    out += "]\n";
    return emit(out);
  }
  if (rows->empty()) return emit("no transactions\n");
  std::vector<std::vector<std::string>> t = {{"PLAN", "STATE", "CREATED", "OPS", "EFFECTS", "CODE"}};
  for (const auto& r : *rows)
    t.push_back({short_id(r), std::string(store::state_name(r.state)), format_time_ms(r.created_at_ms),
                 std::to_string(r.operation_count), r.effect_count ? std::to_string(*r.effect_count) : "-",
                 r.code.empty() ? "-" : r.code});
  return emit(table(t));
}

int run_show(const CommonOptions& o, const std::string& id) {
  auto db = open_read_only(o.root);
  if (!db.ok()) return report(db.error(), o.json);
  auto txn = db->find(id);
  if (!txn.ok()) return report(txn.error(), o.json);
  auto d = db->detail(*txn);
  if (!d.ok()) return report(d.error(), o.json);
  if (o.json) return emit(show_json(*d));
  const auto& s = d->summary;
  std::vector<std::vector<std::string>> head = {
      {"plan", s.plan_id.empty() ? "-" : s.plan_id},
      {"proposal", s.proposal_id.empty() ? "-" : s.proposal_id},
      {"state", std::string(store::state_name(s.state))},
      {"status", status_of(s)},
      {"plugin", s.plugin_id + (d->plugin_digest.empty() ? "" : " sha256:" + d->plugin_digest)},
      {"created", format_time_ms(s.created_at_ms)},
      {"updated", format_time_ms(s.updated_at_ms)},
      {"effects", s.effect_count ? std::to_string(*s.effect_count) : "none (pre-capability or not sealed)"},
  };
  if (!d->canonical_plan.empty() && sha256_hex(d->canonical_plan) != s.plan_id)
    head.push_back({"integrity", "PLAN BYTES DO NOT MATCH THE PLAN ID"});
  if (!s.code.empty()) head.push_back({"error", s.code + (d->detail.empty() ? "" : ": " + printable(d->detail))});
  if (s.pruned) head.push_back({"pruned", "blobs and events dropped by store prune"});
  std::string out = table(head);
  if (!d->operations.empty()) {
    std::vector<std::vector<std::string>> ops = {{"SLOT", "NAME", "BEFORE", "AFTER"}};
    for (std::size_t i = 0; i < d->operations.size(); ++i) {
      const auto& op = d->operations[i];
      ops.push_back({std::to_string(i), printable(op.name), op.before_sha256.empty() ? "(absent)" : op.before_sha256.substr(0, 16),
                     op.after_sha256.empty() ? "(absent)" : op.after_sha256.substr(0, 16)});
    }
    out += "\noperations\n" + table(ops);
  }
  if (!d->effects.empty()) {
    std::vector<std::vector<std::string>> eff = {{"INDEX", "STATE", "ATTEMPTS", "UPDATED", "CODE"}};
    for (const auto& e : d->effects)
      eff.push_back({std::to_string(e.index), std::string(store::effect_state_name(e.state)), std::to_string(e.attempts),
                     format_time_ms(e.updated_at_ms), e.code.empty() ? "-" : e.code});
    out += "\neffect ledger\n" + table(eff);
  }
  if (!d->events.empty()) {
    std::vector<std::vector<std::string>> ev = {{"AT", "STATE", "CODE", "DETAIL"}};
    for (const auto& e : d->events)
      ev.push_back({format_time_ms(e.at_ms), std::string(store::state_name(e.state)), e.code.empty() ? "-" : e.code,
                    printable(e.detail)});
    out += "\nevents\n" + table(ev);
  }
  if (!d->plugin_stderr.empty()) {
    out += "\nplugin stderr" + std::string(d->plugin_stderr_truncated ? " (truncated)" : "") + "\n";
    std::string_view rest = d->plugin_stderr;
    while (!rest.empty()) {
      auto nl = rest.find('\n');
      out += "  " + printable(rest.substr(0, nl)) + "\n";
      if (nl == std::string_view::npos) break;
      rest.remove_prefix(nl + 1);
    }
  }
  return emit(out);
}

int run_events(const CommonOptions& o, const std::string& id) {
  auto db = open_read_only(o.root);
  if (!db.ok()) return report(db.error(), o.json);
  auto txn = db->find(id);
  if (!txn.ok()) return report(txn.error(), o.json);
  auto evs = db->events(*txn);
  if (!evs.ok()) return report(evs.error(), o.json);
  if (o.json) {
    std::string out = "[";
    for (std::size_t i = 0; i < evs->size(); ++i) {
      if (i) out += ',';
      event_json(out, (*evs)[i]);
    }
    out += "]\n";
    return emit(out);
  }
  if (evs->empty()) return emit("no events\n");
  std::vector<std::vector<std::string>> t = {{"SEQ", "AT", "STATE", "CODE", "DETAIL"}};
  for (const auto& e : *evs)
    t.push_back({std::to_string(e.seq), format_time_ms(e.at_ms), std::string(store::state_name(e.state)),
                 e.code.empty() ? "-" : e.code, printable(e.detail)});
  return emit(table(t));
}

void add_common(CLI::App* cmd, CommonOptions& o, bool json) {
  cmd->add_option("--root", o.root, "The managed root directory")->required();
  if (json) cmd->add_flag("--json", o.json, "Machine output (shapes in docs/store.md)");
}

// `inspect show` and `inspect events`: one transaction, named by a plan id or
// a unique prefix of one.
void add_one_transaction_command(CLI::App* group, Context& ctx, const char* name, const char* description,
                                 const char* footer, int (*run)(const CommonOptions&, const std::string&)) {
  auto* cmd = group->add_subcommand(name, description);
  auto o = std::make_shared<CommonOptions>();
  auto id = std::make_shared<std::string>();
  add_common(cmd, *o, true);
  cmd->add_option("id", *id, "A plan id or a unique hex prefix of at least 8 characters")->required();
  cmd->footer(footer);
  cmd->callback([&ctx, o, id, run] { ctx.action = [o, id, run] { return run(*o, *id); }; });
}

}  // namespace

void add_init_command(CLI::App& app, Context& ctx) {
  auto* init = app.add_subcommand("init", "Create a new managed root (a directory that must not exist yet)");
  auto o = std::make_shared<CommonOptions>();
  add_common(init, *o, true);
  init->footer(
      "Creates DIR (mode 0700) with its hidden state folder DIR/.dot holding the\n"
      "database, the lock file and a random root id.\n"
      "Example:\n  dot-core init --root ~/managed");
  init->callback([&ctx, o] { ctx.action = [o] { return run_init(*o); }; });
}

void add_store_commands(CLI::App& app, Context& ctx) {
  auto* group = app.add_subcommand("store", "Check or prune a root's store");
  group->require_subcommand(1);
  group->footer("Examples:\n  dot-core store check --root ~/managed\n  dot-core store prune --root ~/managed --keep 100");
  auto* check = group->add_subcommand("check", "Verify the database and every stored invariant (read-only)");
  auto co = std::make_shared<CommonOptions>();
  add_common(check, *co, true);
  check->footer(
      "Runs PRAGMA integrity_check, then checks every event history against the\n"
      "legal transitions, the effect ledger against each plan, every plan and blob\n"
      "against its digest. Exit 0 only when everything holds.\n"
      "Example:\n  dot-core store check --root ~/managed");
  check->callback([&ctx, co] { ctx.action = [co] { return run_check(*co); }; });

  auto* prune = group->add_subcommand("prune", "Drop blobs and events of old finished transactions");
  auto po = std::make_shared<CommonOptions>();
  auto keep = std::make_shared<std::size_t>(0);
  add_common(prune, *po, true);
  add_count_option(prune, "--keep", *keep, "How many of the newest finished transactions keep everything")->required();
  prune->footer(
      "Finished = DONE, ROLLED_BACK, DISCARDED, STALE, ABANDONED; their summary rows\n"
      "and plan bytes stay. Unfinished transactions are never touched.\n"
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

  auto* list = group->add_subcommand("list", "List transactions, newest first");
  auto lo = std::make_shared<CommonOptions>();
  auto state = std::make_shared<std::string>();
  auto limit = std::make_shared<std::size_t>(50);
  add_common(list, *lo, true);
  list->add_option("--state", *state, "Only transactions in this state")->check(CLI::IsMember(names));
  add_count_option(list, "--limit", *limit, "At most this many rows (0: all)")->default_str(std::to_string(*limit));
  list->footer("Example:\n  dot-core inspect list --root ~/managed --state SEALED --limit 10 --json");
  list->callback([&ctx, lo, state, limit] { ctx.action = [lo, state, limit] { return run_list(*lo, *state, *limit); }; });

  add_one_transaction_command(group, ctx, "show", "Show one transaction: plan, operations, effects, events, stderr",
                              "Example:\n  dot-core inspect show --root ~/managed 3f2a9c1e --json", run_show);
  add_one_transaction_command(group, ctx, "events", "Show the event log of one transaction",
                              "Example:\n  dot-core inspect events --root ~/managed 3f2a9c1e", run_events);
}

}  // namespace dot::cli
