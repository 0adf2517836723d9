// Reading and verifying a root written by the Go reference implementation (go_root.h, docs/spec/go-roots.md).
#include "dot/adopt/go_root.h"
#include "dot/adopt/error_kinds.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <map>

#include <fmt/format.h>

#include "dot/base/beneath.h"
#include "dot/base/fd.h"
#include "dot/base/sha256.h"
#include "dot/core/plan_document.h"
#include "dot/core/target.h"
#include "dot/dpp/hello.h"

namespace dot::adopt {

// The engine's plan model and target observation, which the reference's
// plans are read into.
using core::check_plan_invariants;
using core::decode_plan_document;
using core::Effect;
using core::is_valid_slot_name;
using core::kPlanVersion;
using core::Operation;
using core::Plan;
using core::Snapshot;
using core::snapshot_of;

namespace {

using beneath::FileObservation;
using beneath::FileType;

// The five WAL records, byte for byte (docs/spec/go-roots.md section 3), in
// WalState order.
constexpr std::array<std::string_view, 5> kWalRecords = {R"({"state":"PREPARED"})", R"({"state":"COMMITTING"})",
                                                         R"({"state":"COMMITTED"})", R"({"state":"ROLLING_BACK"})",
                                                         R"({"state":"ROLLED_BACK"})"};
constexpr std::array<EffectState, 3> kEffectStates = {EffectState::Attempted, EffectState::Failed,
                                                      EffectState::Succeeded};
// Entries of a transaction folder: plan, journal, ledger, and one artifact
// and backup per slot (at most 16 slots).
constexpr std::size_t kMaxSlots = 16;
// The ledger holds at most this many complete records (effects.go).
constexpr std::size_t kMaxLedgerRecords = 256;
// discard-abandoned accepts at most this many entries in a stage folder and
// in an abandoned transaction folder.
constexpr std::size_t kMaxStageEntries = 16;
constexpr std::size_t kMaxAbandonedEntries = 34;

bool legal_succession(std::optional<WalState> from, WalState to) {
  if (!from) return to == WalState::Prepared;
  switch (*from) {
    case WalState::Prepared:
      return to == WalState::Committing || to == WalState::RollingBack;
    case WalState::Committing:
      return to == WalState::Committed || to == WalState::RollingBack;
    case WalState::Committed:
      return to == WalState::RollingBack;
    case WalState::RollingBack:
      return to == WalState::RollingBack || to == WalState::RolledBack;
    case WalState::RolledBack:
      return false;
  }
  return false;
}

// A slot index written as the reference writes it: decimal, no leading zero.
std::optional<std::size_t> slot_suffix(std::string_view name, std::string_view prefix) {
  if (name.size() <= prefix.size() || name.substr(0, prefix.size()) != prefix) return std::nullopt;
  std::string_view digits = name.substr(prefix.size());
  if (digits.size() > 2 || (digits.size() > 1 && digits[0] == '0')) return std::nullopt;
  std::size_t n = 0;
  for (char c : digits) {
    if (c < '0' || c > '9') return std::nullopt;
    n = n * 10 + static_cast<std::size_t>(c - '0');
  }
  if (n >= kMaxSlots) return std::nullopt;
  return n;
}

std::string show(const Snapshot& s) {
  if (!s.exists) return "absent";
  return fmt::format("sha256 {}, mode {:04o}, uid {}, gid {}", s.sha256.hex(), s.mode, s.uid, s.gid);
}

void append_snapshot(std::string& out, const Snapshot& s) {
  out += fmt::format(R"({{"exists":{},"sha256":"{}","mode":{},"uid":{},"gid":{}}})", s.exists ? "true" : "false",
                     s.sha256.hex(), s.mode, s.uid, s.gid);
}

// One survey: the root descriptor and the path it was opened at (messages
// name files as ROOT/...).
class Reader {
 public:
  Reader(std::string root, UniqueFd fd) : root_(std::move(root)), fd_(std::move(fd)) {}

  int fd() const { return fd_.get(); }
  std::string path(std::string_view rel) const { return fmt::format("{}/{}", root_, rel); }

  // A lower layer's error about the file at `rel`: its code and kind, named by path.
  Error rephrase(const Error& e, std::string_view rel, std::string_view why) const {
    return make_error_as(e.code, e.kind, fmt::format("{}: {}", path(rel), why));
  }

  Error refuse(ErrorKind kind, std::string_view rel, std::string_view why) const {
    return make_error(kind, fmt::format("{}: {}", path(rel), why));
  }

  // A file the reference reads, judged by its read rules (fs_unix.go, strict
  // version): regular, one link, at most 64 KiB, no group or other bits,
  // owner-read set, no setuid/setgid/sticky, owned by us. nullopt when absent.
  Result<std::optional<FileObservation>> read(int dirfd, std::string_view name, std::string_view rel,
                                              std::size_t max_bytes = kMaxFileBytes) const {
    DOT_ASSIGN_OR_RETURN(
        FileObservation o,
        observe(dirfd, name, rel, beneath::ObserveOptions{.max_bytes = max_bytes, .keep_content = true}));
    if (!o.exists()) return std::optional<FileObservation>();
    DOT_TRY(check_file(o, rel, max_bytes));
    return std::optional<FileObservation>(std::move(o));
  }

  Status check_file(const FileObservation& o, std::string_view rel, std::size_t max_bytes = kMaxFileBytes) const {
    if (o.type != FileType::Regular)
      return refuse(adopt::ErrorKind::NotRegular, rel,
                    fmt::format("is a {}, not a regular file", beneath::file_type_name(o.type)));
    if (o.nlink != 1) return refuse(adopt::ErrorKind::Links, rel, fmt::format("has {} links, not 1", o.nlink));
    if (o.too_large) return refuse(adopt::ErrorKind::TooLarge, rel, fmt::format("is longer than {} bytes", max_bytes));
    if (o.mode & 07000)
      return refuse(adopt::ErrorKind::Mode, rel,
                    fmt::format("has setuid, setgid or sticky bits (mode {:04o})", o.mode));
    if (o.mode & 077)
      return refuse(adopt::ErrorKind::Mode, rel, fmt::format("is accessible to group or others (mode {:04o})", o.mode));
    if (!(o.mode & 0400))
      return refuse(adopt::ErrorKind::Mode, rel, fmt::format("is not readable by its owner (mode {:04o})", o.mode));
    if (o.uid != ::geteuid())
      return refuse(adopt::ErrorKind::Owner, rel,
                    fmt::format("is owned by uid {}, not by us (uid {})", o.uid, ::geteuid()));
    return {};
  }

  // Any entry, never followed: a symlink is refused wherever it is.
  Result<FileObservation> observe(int dirfd, std::string_view name, std::string_view rel,
                                  const beneath::ObserveOptions& options = {}) const {
    auto o = beneath::observe_beneath(dirfd, name, options);
    if (!o.ok()) {
      if (o.error().code == Code::PathEscape)
        return refuse(adopt::ErrorKind::Symlink, rel, "is reached through a symlink (refused, never followed)");
      return rephrase(o.error(), rel, o.error().message());
    }
    if (o->type == FileType::Symlink)
      return refuse(adopt::ErrorKind::Symlink, rel, "is a symlink (refused, never followed)");
    return std::move(*o);
  }

  // A folder the reference holds to the root's rule: a directory (never a
  // symlink), mode exactly 0700, owned by us. nullopt when absent.
  Result<std::optional<UniqueFd>> open_dir(int dirfd, std::string_view name, std::string_view rel) const {
    DOT_ASSIGN_OR_RETURN(FileObservation o, observe(dirfd, name, rel));
    if (!o.exists()) return std::optional<UniqueFd>();
    if (o.type != FileType::Directory)
      return refuse(adopt::ErrorKind::NotDirectory, rel,
                    fmt::format("is a {}, not a directory", beneath::file_type_name(o.type)));
    auto fd = beneath::open_beneath(dirfd, name, O_RDONLY | O_DIRECTORY);
    if (!fd.ok()) return rephrase(fd.error(), rel, fd.error().message());
    DOT_TRY(check_dir(fd->get(), rel));
    return std::optional<UniqueFd>(std::move(*fd));
  }

  Status check_dir(int fd, std::string_view rel) const {
    struct stat st {};
    if (::fstat(fd, &st) != 0) return beneath::errno_error(errno, "fstat", path(rel));
    if ((st.st_mode & 07777) != 0700)
      return refuse(adopt::ErrorKind::Mode, rel, fmt::format("has mode {:04o}, not 0700", st.st_mode & 07777));
    if (st.st_uid != ::geteuid())
      return refuse(adopt::ErrorKind::Owner, rel,
                    fmt::format("is owned by uid {}, not by us (uid {})", st.st_uid, ::geteuid()));
    return {};
  }

  Result<std::vector<std::string>> entries(int dirfd, std::string_view rel) const {
    auto list = beneath::list_entries(dirfd);
    if (!list.ok()) return rephrase(list.error(), rel, list.error().message());
    std::sort(list->begin(), list->end());
    return std::move(*list);
  }

 private:
  std::string root_;
  UniqueFd fd_;
};

struct WalRead {
  std::vector<WalState> states;
  std::size_t torn = 0;
};

// The journal as the reference reads it: complete LF-terminated records
// only, each exactly a record its writer produces (the reference's decoder
// would also take whitespace or another key case, which its writer never
// writes: refused here); an unterminated tail is a record not yet durable
// and is ignored, but only when it is the start of one.
Result<WalRead> parse_wal(const Reader& r, std::string_view bytes, std::string_view rel) {
  WalRead out;
  std::size_t pos = 0;
  std::optional<WalState> last;
  for (std::size_t line = 1;; ++line) {
    std::size_t nl = bytes.find('\n', pos);
    if (nl == std::string_view::npos) break;
    std::string_view record = bytes.substr(pos, nl - pos);
    auto it = std::find(kWalRecords.begin(), kWalRecords.end(), record);
    if (it == kWalRecords.end())
      return r.refuse(adopt::ErrorKind::CorruptWal, rel,
                      fmt::format("line {} is not a record the reference writes (corrupt WAL)", line));
    auto state = static_cast<WalState>(it - kWalRecords.begin());
    if (!legal_succession(last, state))
      return r.refuse(adopt::ErrorKind::IllegalTransition, rel,
                      fmt::format("line {}: {} may not follow {} (illegal transition)", line, wal_state_name(state),
                                  last ? wal_state_name(*last) : std::string_view("the start")));
    out.states.push_back(state);
    last = state;
    pos = nl + 1;
  }
  std::string_view tail = bytes.substr(pos);
  if (!tail.empty()) {
    bool prefix = std::any_of(kWalRecords.begin(), kWalRecords.end(), [&](std::string_view rec) {
      return rec.size() > tail.size() && rec.substr(0, tail.size()) == tail;
    });
    if (!prefix)
      return r.refuse(adopt::ErrorKind::CorruptWal, rel,
                      "ends in bytes that are not the start of a record (not a torn record the reference could leave)");
    out.torn = tail.size();
  }
  return out;
}

// effects.wal of a hello plan (exactly one effect, index 0), spec section 4.
Result<std::vector<EffectState>> parse_ledger(const Reader& r, std::string_view bytes, std::string_view rel,
                                              std::string_view plan_id) {
  const std::string key = effect_key(plan_id);
  std::vector<EffectState> out;
  std::size_t pos = 0;
  for (std::size_t line = 1;; ++line) {
    std::size_t nl = bytes.find('\n', pos);
    if (nl == std::string_view::npos) break;
    std::string_view record = bytes.substr(pos, nl - pos);
    std::optional<EffectState> state;
    for (EffectState s : kEffectStates)
      if (record == ledger_record(key, s)) state = s;
    if (!state)
      return r.refuse(adopt::ErrorKind::CorruptLedger, rel,
                      fmt::format("line {} is not a record the reference writes for effect 0 of plan {} "
                                  "(index 0, idempotency key {})",
                                  line, plan_id, key));
    const std::optional<EffectState> current = out.empty() ? std::nullopt : std::optional(out.back());
    bool legal =
        *state == EffectState::Attempted ? current != EffectState::Succeeded : current == EffectState::Attempted;
    if (!legal)
      return r.refuse(adopt::ErrorKind::IllegalTransition, rel,
                      fmt::format("line {}: {} may not follow {}", line, effect_state_name(*state),
                                  current ? effect_state_name(*current) : std::string_view("the start")));
    out.push_back(*state);
    if (out.size() > kMaxLedgerRecords)
      return r.refuse(adopt::ErrorKind::CorruptLedger, rel,
                      fmt::format("holds more than {} records", kMaxLedgerRecords));
    pos = nl + 1;
  }
  std::string_view tail = bytes.substr(pos);
  if (!tail.empty()) {
    bool prefix = false;
    for (auto s : kEffectStates) {
      std::string rec = ledger_record(key, s);
      prefix = prefix || (rec.size() > tail.size() && std::string_view(rec).substr(0, tail.size()) == tail);
    }
    if (!prefix)
      return r.refuse(adopt::ErrorKind::CorruptLedger, rel,
                      "ends in bytes that are not the start of a record (not a torn record the reference could leave)");
  }
  return out;
}

RefState ledger_status(const std::vector<EffectState>& ledger) {
  if (ledger.empty()) return RefState::PostCommitPending;
  return ledger.back() == EffectState::Succeeded ? RefState::Committed : RefState::PostCommitFailed;
}

// The status word of a transaction whose journal ends in `last` (COMMITTED
// is refined by the ledger, ledger_status).
RefState ref_state_of(WalState last) noexcept {
  switch (last) {
    case WalState::Prepared:
      return RefState::Prepared;
    case WalState::Committing:
      return RefState::Committing;
    case WalState::Committed:
      return RefState::Committed;
    case WalState::RollingBack:
      return RefState::RollingBack;
    case WalState::RolledBack:
      return RefState::RolledBack;
  }
  return RefState::Abandoned;
}

Error rename_error(Error e, const Reader& r, std::string_view rel) {
  e.detail = fmt::format("{}: {}", r.path(rel), e.detail);
  return e;
}

struct Context {
  std::string root_id;
  std::optional<Manifest> manifest;
};

struct VerifiedPlan {
  Plan plan;
  std::string plan_id;
  std::string proposal_id;
};

// plan.json: strict JSON, both ids recomputed with the hello canonical form,
// byte-identical to what the reference's writer produces for that plan,
// every rule the reference's schema and dot-core's plan rules hold, this
// root's id and the registered plugin's digest.
Result<VerifiedPlan> verify_plan(const Reader& r, std::string_view bytes, std::string_view rel, const Context& ctx) {
  auto doc = decode_plan_document(bytes);
  if (!doc.ok()) return rename_error(std::move(doc).error(), r, rel);
  if (doc->version != kPlanVersion)
    return r.refuse(adopt::ErrorKind::NotWriterForm, rel,
                    "is not a version-1 hello plan, the only one the reference writes");
  if (doc->claimed_plan_id.empty())
    return r.refuse(adopt::ErrorKind::NotWriterForm, rel,
                    "is a bare plan, not the {plan, plan_id} the reference writes");
  if (writer_form(doc->plan, doc->plan_id) != bytes)
    return r.refuse(adopt::ErrorKind::NotWriterForm, rel,
                    "is a valid plan but not byte for byte what the reference writes for it "
                    "(member order, spacing or a trailing newline differ)");
  if (auto s = check_plan_invariants(doc->plan); !s.ok()) return rename_error(std::move(s).error(), r, rel);
  for (const auto& op : doc->plan.operations)
    if (op.before.exists && op.before.mode != 0400 && op.before.mode != 0500 && op.before.mode != 0600 &&
        op.before.mode != 0700)
      return r.refuse(adopt::ErrorKind::PlanSchema, rel,
                      fmt::format("{} before has mode {:04o}, outside the reference's schema (0400, 0500, 0600, 0700)",
                                  op.name, op.before.mode));
  if (doc->plan.root_id != ctx.root_id)
    return r.refuse(adopt::ErrorKind::RootIdMismatch, rel,
                    fmt::format("plan root_id {} is not this root's id {}", doc->plan.root_id, ctx.root_id));
  if (!ctx.manifest)
    return r.refuse(adopt::ErrorKind::Unregistered, rel, "a sealed plan in a root with no registered plugin");
  if (doc->plan.plugin_digest != ctx.manifest->sha256)
    return r.refuse(adopt::ErrorKind::PluginDigest, rel,
                    fmt::format("plan names plugin {}, the registered plugin is {}", doc->plan.plugin_digest,
                                ctx.manifest->sha256));
  VerifiedPlan out;
  out.proposal_id = doc->plan.proposal_id;
  out.plan_id = doc->plan_id;
  out.plan = std::move(doc->plan);
  return out;
}

// A stage folder (root .dot-stage, or stage/ inside a transaction): files
// named as targets, each within the read rules; with `plan`, exactly the
// plan's names, each equal to its `after`.
Result<std::size_t> check_stage(const Reader& r, int fd, std::string_view rel, const Plan* plan) {
  DOT_ASSIGN_OR_RETURN(std::vector<std::string> names, r.entries(fd, rel));
  if (names.size() > kMaxStageEntries)
    return r.refuse(adopt::ErrorKind::Stage, rel,
                    fmt::format("holds {} entries, more than {}", names.size(), kMaxStageEntries));
  std::map<std::string, Snapshot> seen;
  for (const auto& name : names) {
    std::string frel = fmt::format("{}/{}", rel, name);
    if (!is_valid_slot_name(name)) return r.refuse(adopt::ErrorKind::UnknownEntry, frel, "is not a target name");
    DOT_ASSIGN_OR_RETURN(std::optional<FileObservation> o, r.read(fd, name, frel));
    if (o) seen[name] = snapshot_of(*o);
  }
  if (plan) {
    bool same = seen.size() == plan->operations.size();
    for (const auto& op : plan->operations) {
      auto it = seen.find(op.name);
      if (it == seen.end() || it->second != op.after) same = false;
    }
    if (!same)
      return r.refuse(adopt::ErrorKind::StagedFile, rel,
                      "does not hold exactly the plan's files as sealed (the reference staged and sealed them)");
  }
  return names.size();
}

// The files of one transaction folder, each read by the reference's rules
// (a file gone meanwhile is judged as absent).
struct TxnFiles {
  std::size_t entries = 0;
  std::optional<std::string> plan, wal, ledger;
  std::map<std::size_t, FileObservation> artifacts, backups;
};

// Reads the folder's entries into `files`; only the names the reference
// writes in a transaction are accepted. Notes the stage in `t`.
Result<TxnFiles> read_txn_files(const Reader& r, int fd, const std::string& rel, Transaction& t) {
  auto at = [&](std::string_view name) { return fmt::format("{}/{}", rel, name); };
  DOT_ASSIGN_OR_RETURN(std::vector<std::string> names, r.entries(fd, rel));
  TxnFiles files;
  files.entries = names.size();
  for (const auto& name : names) {
    if (name == "stage") {
      DOT_ASSIGN_OR_RETURN(std::optional<UniqueFd> sfd, r.open_dir(fd, name, at(name)));
      t.has_stage = sfd.has_value();
      continue;
    }
    auto art = slot_suffix(name, "artifact-");
    auto bak = slot_suffix(name, "backup-");
    if (name != "plan.json" && name != "wal" && name != "effects.wal" && !art && !bak)
      return r.refuse(adopt::ErrorKind::UnknownEntry, at(name), "is not a file the reference writes in a transaction");
    DOT_ASSIGN_OR_RETURN(std::optional<FileObservation> o, r.read(fd, name, at(name)));
    if (!o) continue;  // gone meanwhile: judged as absent below
    if (name == "plan.json")
      files.plan = o->content;
    else if (name == "wal")
      files.wal = o->content;
    else if (name == "effects.wal")
      files.ledger = o->content;
    else if (art)
      files.artifacts.emplace(*art, std::move(*o));
    else
      files.backups.emplace(*bak, std::move(*o));
  }
  return files;
}

// The plan of `bytes`, verified, into `t`.
Status take_plan(const Reader& r, std::string_view bytes, const std::string& rel, const Context& ctx, Transaction& t) {
  DOT_ASSIGN_OR_RETURN(VerifiedPlan vp, verify_plan(r, bytes, rel, ctx));
  t.plan = std::move(vp.plan);
  t.plan_id = std::move(vp.plan_id);
  t.proposal_id = std::move(vp.proposal_id);
  t.plan_bytes = std::string(bytes);
  return {};
}

// A transaction that never reached a durable PREPARED: what the reference's
// newest discard-abandoned accepts (anything else it preserves, and so do we).
Result<Transaction> load_abandoned(const Reader& r, const std::string& rel, const TxnFiles& files, const Context& ctx,
                                   Transaction t) {
  if (files.ledger || t.has_stage)
    return r.refuse(adopt::ErrorKind::NotAbandoned, rel,
                    "has no durable PREPARED but holds an effect ledger or a stage (the reference never leaves that)");
  if (files.entries > kMaxAbandonedEntries)
    return r.refuse(adopt::ErrorKind::NotAbandoned, rel, fmt::format("holds {} entries", files.entries));
  // A complete plan.json is recorded with the abandoned transaction, and so
  // it must verify; one the JSON reader cannot even parse is the unsealed
  // remains the reference would discard.
  if (files.plan && json::validate(*files.plan).ok()) DOT_TRY(take_plan(r, *files.plan, rel + "/plan.json", ctx, t));
  t.state = RefState::Abandoned;
  return t;
}

// Every artifact equals its `after`, every backup its `before` (an absent
// backup stands for an absent `before`); nothing for slots the plan lacks.
// Their bytes go into `t`.
Status check_slots(const Reader& r, const std::string& rel, const TxnFiles& files, Transaction& t) {
  auto at = [&](std::string_view name) { return fmt::format("{}/{}", rel, name); };
  const Plan& plan = *t.plan;
  for (std::size_t i = 0; i < kMaxSlots; ++i) {
    auto a = files.artifacts.find(i);
    auto b = files.backups.find(i);
    if (i >= plan.operations.size()) {
      if (a != files.artifacts.end() || b != files.backups.end())
        return r.refuse(adopt::ErrorKind::ExtraSlot,
                        at(a != files.artifacts.end() ? fmt::format("artifact-{}", i) : fmt::format("backup-{}", i)),
                        fmt::format("names slot {}, the plan has {}", i, plan.operations.size()));
      continue;
    }
    const Operation& op = plan.operations[i];
    Snapshot art = a == files.artifacts.end() ? Snapshot::absent() : snapshot_of(a->second);
    if (art != op.after)
      return r.refuse(adopt::ErrorKind::Artifact, at(fmt::format("artifact-{}", i)),
                      fmt::format("is {}, the plan seals {} for {}", show(art), show(op.after), op.name));
    Snapshot bak = b == files.backups.end() ? Snapshot::absent() : snapshot_of(b->second);
    if (bak != op.before)
      return r.refuse(adopt::ErrorKind::Backup, at(fmt::format("backup-{}", i)),
                      fmt::format("is {}, the plan saw {} before {}", show(bak), show(op.before), op.name));
    t.artifact_bytes.push_back(a->second.content);
    t.backup_bytes.push_back(b == files.backups.end() ? std::nullopt : std::optional<std::string>(b->second.content));
  }
  return {};
}

// The effect ledger (only after COMMITTED, only for a plan with effects)
// and the state the WAL and the ledger give.
Status take_ledger_and_state(const Reader& r, const std::string& rel, const TxnFiles& files, Transaction& t) {
  const Plan& plan = *t.plan;
  const bool committed = std::find(t.wal.begin(), t.wal.end(), WalState::Committed) != t.wal.end();
  if (files.ledger) {
    const std::string ledger_rel = rel + "/effects.wal";
    if (plan.pre_capability())
      return r.refuse(adopt::ErrorKind::UnexpectedLedger, ledger_rel,
                      "a plan without effects has no effect ledger (unexpected effect WAL)");
    if (!committed)
      return r.refuse(adopt::ErrorKind::UnexpectedLedger, ledger_rel,
                      "effects run only after COMMITTED, which the WAL never reached");
    DOT_ASSIGN_OR_RETURN(t.ledger, parse_ledger(r, *files.ledger, ledger_rel, t.plan_id));
    t.has_ledger = true;
  }
  const WalState last = t.wal.back();
  if (last == WalState::Committed)
    t.state = plan.pre_capability() ? RefState::Committed : ledger_status(t.ledger);
  else
    t.state = ref_state_of(last);
  return {};
}

// One transaction folder (spec sections 2 to 5).
Result<Transaction> load_txn(const Reader& r, int fd, std::string rel, const Context& ctx) {
  Transaction t;
  t.dir = rel;
  DOT_ASSIGN_OR_RETURN(TxnFiles files, read_txn_files(r, fd, rel, t));
  t.artifacts = files.artifacts.size();
  t.backups = files.backups.size();
  WalRead wal;
  if (files.wal) {
    struct stat st {};
    if (::fstatat(fd, "wal", &st, AT_SYMLINK_NOFOLLOW) == 0)
      t.wal_mtime = {static_cast<std::int64_t>(st.st_mtim.tv_sec), static_cast<std::int64_t>(st.st_mtim.tv_nsec)};
    DOT_ASSIGN_OR_RETURN(wal, parse_wal(r, *files.wal, rel + "/wal"));
  }
  t.wal = wal.states;
  t.wal_torn_bytes = wal.torn;
  if (!files.plan || wal.states.empty()) return load_abandoned(r, rel, files, ctx, std::move(t));

  DOT_TRY(take_plan(r, *files.plan, rel + "/plan.json", ctx, t));
  DOT_TRY(check_slots(r, rel, files, t));
  DOT_TRY(take_ledger_and_state(r, rel, files, t));
  if (t.has_stage) {
    DOT_ASSIGN_OR_RETURN(UniqueFd sfd, beneath::open_beneath(fd, "stage", O_RDONLY | O_DIRECTORY));
    DOT_TRY(check_stage(r, sfd.get(), rel + "/stage", &*t.plan));
  }
  return t;
}

bool terminal(const Transaction& t) { return t.state == RefState::Committed || t.state == RefState::RolledBack; }

// A target as the reference's snapshot reads it (its read rules apply).
Result<Snapshot> target_snapshot(const Reader& r, std::string_view name) {
  DOT_ASSIGN_OR_RETURN(std::optional<FileObservation> o, r.read(r.fd(), name, name));
  return o ? snapshot_of(*o) : Snapshot::absent();
}

// What the reference's recover checks before it rolls a slot back: the
// target is still `before` (nothing to do) or still `after` (restored from
// the backup); anything else is someone's edit it preserves as evidence.
Result<std::vector<std::size_t>> check_rollback_targets(const Reader& r, const Transaction& t) {
  std::vector<std::size_t> restore;
  for (std::size_t i = 0; i < t.plan->operations.size(); ++i) {
    const Operation& op = t.plan->operations[i];
    DOT_ASSIGN_OR_RETURN(Snapshot now, target_snapshot(r, op.name));
    if (now != op.before) restore.push_back(i);
    if (now != op.before && now != op.after)
      return r.refuse(adopt::ErrorKind::ConcurrentEdit, op.name,
                      fmt::format("was edited since the reference's transaction {} (now {}); its recover refuses "
                                  "this (concurrent edit, preserve evidence) and so does adopt",
                                  t.plan_id, show(now)));
    // Restoring writes a new file, which gets our group: a `before` of
    // another group could not come back as it was (a mix, never all-before).
    if (now != op.before && op.before.exists && op.before.gid != ::getegid())
      return r.refuse(adopt::ErrorKind::Group, op.name,
                      fmt::format("must be restored with gid {}, but files we create get gid {}; adopt cannot "
                                  "roll the reference's transaction {} back exactly (run it as that group)",
                                  op.before.gid, ::getegid(), t.plan_id));
  }
  return restore;
}

// What the reference's archive re-checks: every target is still what the
// terminal transaction left.
Status check_terminal_targets(const Reader& r, const Transaction& t) {
  const bool after = t.state == RefState::Committed;
  for (const auto& op : t.plan->operations) {
    DOT_ASSIGN_OR_RETURN(Snapshot now, target_snapshot(r, op.name));
    const Snapshot& want = after ? op.after : op.before;
    if (now != want)
      return r.refuse(adopt::ErrorKind::ChangedTarget, op.name,
                      fmt::format("is {}, not what the archived transaction {} left ({}); the reference refuses to "
                                  "finish the archive (changed target) and so does adopt",
                                  show(now), t.plan_id, show(want)));
  }
  return {};
}

Result<Manifest> parse_manifest(const Reader& r, std::string_view bytes) {
  // {"id":"org.dot.hello","sha256":"<hex>","protocol":1[,"profile":"org.dot.hello/v1"],"assurance":"audit"|"process"}
  constexpr std::string_view head = R"({"id":"org.dot.hello","sha256":")";
  auto bad = [&] {
    return r.refuse(adopt::ErrorKind::Manifest, kManifestName,
                    "is not a registration manifest the reference writes (manifest policy)");
  };
  if (bytes.size() < head.size() + 64 || bytes.substr(0, head.size()) != head) return bad();
  Manifest m;
  m.sha256 = std::string(bytes.substr(head.size(), 64));
  if (!is_sha256_hex(m.sha256)) return bad();
  std::string_view rest = bytes.substr(head.size() + 64);
  if (rest == R"(","protocol":1,"assurance":"audit"})") {
    m.assurance = "audit";
  } else if (rest == R"(","protocol":1,"profile":"org.dot.hello/v1","assurance":"audit"})") {
    m.has_profile = true;
    m.assurance = "audit";
  } else if (rest == R"(","protocol":1,"profile":"org.dot.hello/v1","assurance":"process"})") {
    m.has_profile = true;
    m.assurance = "process";
  } else {
    return bad();
  }
  return m;
}

// The marker: exactly "dot-hello-profile-v1:" + 64 lowercase hex + LF.
Result<std::string> read_marker(const Reader& r) {
  auto o = r.read(r.fd(), kMarkerName, kMarkerName);
  if (!o.ok()) return std::move(o).error();
  if (!o->has_value())
    return make_error(adopt::ErrorKind::NotReferenceRoot,
                      fmt::format("{}: no {}; not a root made by the Go reference", r.path(""), kMarkerName));
  std::string_view c = (*o)->content;
  if (c.size() != kMarkerPrefix.size() + 65 || c.substr(0, kMarkerPrefix.size()) != kMarkerPrefix || c.back() != '\n' ||
      !is_sha256_hex(c.substr(kMarkerPrefix.size(), 64)))
    return r.refuse(adopt::ErrorKind::NotReferenceRoot, kMarkerName,
                    fmt::format("is not \"{}\" + 64 lowercase hex + a newline (86 bytes)", kMarkerPrefix));
  return std::string(c.substr(kMarkerPrefix.size(), 64));
}

Result<ArchiveIntent> parse_intent(const Reader& r, std::string_view bytes) {
  constexpr std::string_view head = R"({"plan_id":")";
  ArchiveIntent a;
  if (bytes.size() > head.size() + 64 && bytes.substr(0, head.size()) == head) {
    a.plan_id = std::string(bytes.substr(head.size(), 64));
    std::string_view rest = bytes.substr(head.size() + 64);
    if (is_sha256_hex(a.plan_id) && (rest == R"(","stage":true})" || rest == R"(","stage":false})")) {
      a.stage = rest == R"(","stage":true})";
      return a;
    }
  }
  return r.refuse(adopt::ErrorKind::ArchiveIntent, kArchiveIntent,
                  "is not an archive intent the reference writes (invalid archive intent)");
}

bool is_known_entry(std::string_view name) {
  for (std::string_view k :
       {kMarkerName, kLockName, kPluginName, kManifestName, kStageDir, kTxnDir, kArchiveIntent, kHistoryDir})
    if (name == k) return true;
  return false;
}

}  // namespace

std::string_view generation_name(Generation g) noexcept {
  switch (g) {
    case Generation::PreCapability:
      return "pre-capability";
    case Generation::Effects:
      return "effects";
    case Generation::Unknown:
      return "unknown";
  }
  return "unknown";
}

std::optional<Generation> generation_from_name(std::string_view name) noexcept {
  for (Generation g : {Generation::PreCapability, Generation::Effects, Generation::Unknown})
    if (generation_name(g) == name) return g;
  return std::nullopt;
}

std::string_view finish_name(Finish f) noexcept {
  switch (f) {
    case Finish::Nothing:
      return "nothing";
    case Finish::AllBefore:
      return "all-before";
    case Finish::AllAfter:
      return "all-after";
    case Finish::Effects:
      return "effects";
    case Finish::Discard:
      return "discard";
  }
  return "nothing";
}

std::string_view effect_state_name(EffectState s) noexcept {
  switch (s) {
    case EffectState::Attempted:
      return "ATTEMPTED";
    case EffectState::Failed:
      return "FAILED";
    case EffectState::Succeeded:
      return "SUCCEEDED";
  }
  return "?";
}

std::string_view ref_state_name(RefState s) noexcept {
  switch (s) {
    case RefState::Idle:
      return "IDLE";
    case RefState::Abandoned:
      return "ABANDONED";
    case RefState::Archiving:
      return "ARCHIVING";
    case RefState::Prepared:
      return "PREPARED";
    case RefState::Committing:
      return "COMMITTING";
    case RefState::Committed:
      return "COMMITTED";
    case RefState::PostCommitPending:
      return "POST_COMMIT_PENDING";
    case RefState::PostCommitFailed:
      return "POST_COMMIT_FAILED";
    case RefState::RollingBack:
      return "ROLLING_BACK";
    case RefState::RolledBack:
      return "ROLLED_BACK";
  }
  return "?";
}

std::optional<RefState> ref_state_from_name(std::string_view name) noexcept {
  for (RefState s : {RefState::Idle, RefState::Abandoned, RefState::Archiving, RefState::Prepared, RefState::Committing,
                     RefState::Committed, RefState::PostCommitPending, RefState::PostCommitFailed,
                     RefState::RollingBack, RefState::RolledBack})
    if (ref_state_name(s) == name) return s;
  return std::nullopt;
}

std::string_view wal_record(WalState s) noexcept { return kWalRecords[static_cast<std::size_t>(s)]; }

std::string effect_key(std::string_view plan_id) { return sha256_hex(fmt::format("{}:commit:0", plan_id)); }

std::string ledger_record(std::string_view key, EffectState s) {
  // Go's field order (index, idempotency_key, state): not canonical JSON.
  return fmt::format(R"({{"index":0,"idempotency_key":"{}","state":"{}"}})", key, effect_state_name(s));
}

std::string_view wal_state_name(WalState s) noexcept { return ref_state_name(ref_state_of(s)); }

std::string writer_form(const Plan& plan, std::string_view plan_id) {
  std::string out = fmt::format(
      R"({{"plan":{{"version":{},"root_id":"{}","nonce":"{}","plugin_digest":"{}","proposal_id":"{}","operations":[)",
      plan.version, plan.root_id, plan.nonce, plan.plugin_digest, plan.proposal_id);
  for (std::size_t i = 0; i < plan.operations.size(); ++i) {
    const Operation& op = plan.operations[i];
    out += fmt::format(R"({}{{"name":"{}","before":)", i ? "," : "", op.name);
    append_snapshot(out, op.before);
    out += R"(,"after":)";
    append_snapshot(out, op.after);
    out += "}";
  }
  out += "]";
  // Go's omitempty: no key for an absent or empty list.
  if (plan.effects && !plan.effects->empty()) {
    out += R"(,"effects":[)";
    for (std::size_t i = 0; i < plan.effects->size(); ++i) {
      const Effect& e = (*plan.effects)[i];
      out += fmt::format(R"({}{{"kind":"{}","target":"{}","failure_policy":"{}"}})", i ? "," : "", e.kind, e.target,
                         e.failure_policy);
    }
    out += "]";
  }
  out += fmt::format(R"(}},"plan_id":"{}"}})", plan_id);
  return out;
}

namespace {

// The reference's lock, when there is one: held shared for the survey, so a
// reference command running now is seen, and none starts meanwhile (unless
// the caller holds it already). The held descriptor; none without a lock.
Result<UniqueFd> hold_reference_lock(const Reader& r, const SurveyOptions& options, Survey& s) {
  DOT_ASSIGN_OR_RETURN(FileObservation o, r.observe(r.fd(), kLockName, kLockName));
  if (!o.exists()) return UniqueFd();
  DOT_TRY(r.check_file(o, kLockName));
  if (o.mode != 0600)
    return r.refuse(adopt::ErrorKind::Mode, kLockName, fmt::format("has mode {:04o}, not 0600", o.mode));
  s.has_lock = true;
  if (options.caller_holds_lock) return UniqueFd();
  auto fd = beneath::open_beneath(r.fd(), kLockName, O_RDONLY);
  if (!fd.ok()) return rename_error(std::move(fd).error(), r, kLockName);
  if (::flock(fd->get(), LOCK_SH | LOCK_NB) != 0) {
    if (errno == EWOULDBLOCK)
      return r.refuse(adopt::ErrorKind::Locked, kLockName, "a reference dot-core command holds this root's lock");
    return beneath::errno_error(errno, "flock", r.path(kLockName));
  }
  return std::move(*fd);
}

// Every entry of the reference's own at the top: known, and never a symlink.
Status check_top_entries(const Reader& r, Survey& s) {
  DOT_ASSIGN_OR_RETURN(std::vector<std::string> top, r.entries(r.fd(), "."));
  for (const auto& name : top) {
    if (name == ".dot") {
      s.has_dot_core_state = true;
      continue;
    }
    if (name == kImportDir) {
      s.has_partial_import = true;
      continue;
    }
    if (name.rfind(".dot-next-", 0) == 0) {
      if (!slot_suffix(name, ".dot-next-"))
        return r.refuse(adopt::ErrorKind::UnknownEntry, name, "is not an entry the reference writes");
      DOT_ASSIGN_OR_RETURN(FileObservation o, r.observe(r.fd(), name, name));
      DOT_TRY(r.check_file(o, name));
      s.next_files.push_back(name);
      continue;
    }
    if (name.rfind(".dot-", 0) == 0 && !is_known_entry(name))
      return r.refuse(adopt::ErrorKind::UnknownEntry, name, "is not an entry the reference writes");
  }
  for (const auto& name : dpp::hello::allowed_names()) DOT_TRY(r.observe(r.fd(), name, name));
  return {};
}

// Registration: the manifest as written, the plugin copy hashing to it.
Status check_registration(const Reader& r, Survey& s, Context& ctx) {
  DOT_ASSIGN_OR_RETURN(std::optional<FileObservation> m, r.read(r.fd(), kManifestName, kManifestName));
  DOT_ASSIGN_OR_RETURN(FileObservation p, r.observe(r.fd(), kPluginName, kPluginName,
                                                    beneath::ObserveOptions{.max_bytes = kMaxPluginBytes}));
  if (!m && p.exists())
    return r.refuse(adopt::ErrorKind::Registration, kManifestName,
                    "is missing while the other half of the registration exists");
  if (!m) return {};
  if (m->mode != 0600)
    return r.refuse(adopt::ErrorKind::Mode, kManifestName, fmt::format("has mode {:04o}, not 0600", m->mode));
  DOT_ASSIGN_OR_RETURN(Manifest man, parse_manifest(r, m->content));
  // The manifest's digest is what the plans name and verify against. The
  // copy itself is only ever run by a later plan, never by finishing (the
  // reference's recover does not run it either): one that no longer matches
  // is not trusted, and not registered, but blocks nothing.
  if (p.exists() && (p.type != FileType::Regular || p.too_large))
    return r.refuse(adopt::ErrorKind::Plugin, kPluginName, "is not a regular file of at most 16 MiB");
  if (!p.exists())
    s.plugin_untrusted = fmt::format("{} is missing", kPluginName);
  else if (p.nlink != 1 || (p.mode & 07022) || p.uid != ::geteuid())
    s.plugin_untrusted =
        fmt::format("{} is not a single-link file owned by us and writable by no one else", kPluginName);
  else if (p.sha256 != man.sha256)
    s.plugin_untrusted =
        fmt::format("{} hashes to {}, not to the digest {} it was registered with", kPluginName, p.sha256, man.sha256);
  ctx.manifest = man;
  s.manifest = std::move(man);
  return {};
}

// Every archived generation, loaded as the active one is; each is terminal
// and named by its plan id.
Result<std::vector<Transaction>> load_history(const Reader& r, const Context& ctx) {
  DOT_ASSIGN_OR_RETURN(std::optional<UniqueFd> hist_fd, r.open_dir(r.fd(), kHistoryDir, kHistoryDir));
  std::vector<Transaction> history;
  if (!hist_fd) return history;
  DOT_ASSIGN_OR_RETURN(std::vector<std::string> ids, r.entries(hist_fd->get(), kHistoryDir));
  for (const auto& id : ids) {
    std::string rel = fmt::format("{}/{}", kHistoryDir, id);
    if (!is_sha256_hex(id))
      return r.refuse(adopt::ErrorKind::UnknownEntry, rel, "is not named by a plan id (64 lowercase hex)");
    DOT_ASSIGN_OR_RETURN(std::optional<UniqueFd> gfd, r.open_dir(hist_fd->get(), id, rel));
    if (!gfd) continue;
    DOT_ASSIGN_OR_RETURN(Transaction g, load_txn(r, gfd->get(), rel, ctx));
    if (g.plan_id != id)
      return r.refuse(
          adopt::ErrorKind::PlanIdMismatch, rel,
          fmt::format("holds plan {}, not the plan its name says", g.plan_id.empty() ? "(none)" : g.plan_id));
    if (!terminal(g))
      return r.refuse(adopt::ErrorKind::History, rel,
                      fmt::format("is {}; the reference archives only a COMMITTED (effects done) or ROLLED_BACK "
                                  "transaction",
                                  ref_state_name(g.state)));
    history.push_back(std::move(g));
  }
  return history;
}

// An archive intent: the transaction it archives is the active one (not yet
// moved) or a generation in the history (moved; taken out of `history` as
// the active one), terminal either way, its targets as it left them.
Status derive_archiving(const Reader& r, Survey& s, std::optional<Transaction>& txn,
                        std::vector<Transaction>& history) {
  s.state = RefState::Archiving;
  const ArchiveIntent& a = *s.archive;
  auto in_history =
      std::find_if(history.begin(), history.end(), [&](const Transaction& t) { return t.plan_id == a.plan_id; });
  if (txn) {
    if (txn->plan_id != a.plan_id)
      return r.refuse(adopt::ErrorKind::ArchiveIntent, kArchiveIntent,
                      fmt::format("names plan {}, but {} holds {}", a.plan_id, kTxnDir,
                                  txn->plan_id.empty() ? "no sealed plan" : txn->plan_id));
    if (!terminal(*txn))
      return r.refuse(adopt::ErrorKind::ArchiveIntent, kArchiveIntent,
                      fmt::format("archives a transaction that is {}, not terminal", ref_state_name(txn->state)));
    if (in_history != history.end())
      return r.refuse(adopt::ErrorKind::ArchiveIntent, kArchiveIntent,
                      fmt::format("plan {} is both in {} and in {}", a.plan_id, kTxnDir, kHistoryDir));
    if (s.has_stage && txn->has_stage)
      return r.refuse(adopt::ErrorKind::ArchiveIntent, kStageDir,
                      "exists beside the stage already moved into the transaction");
    if (a.stage != (s.has_stage || txn->has_stage))
      return r.refuse(adopt::ErrorKind::ArchiveIntent, kArchiveIntent,
                      fmt::format("says stage:{}, the root says otherwise", a.stage));
  } else {
    if (in_history == history.end())
      return r.refuse(adopt::ErrorKind::ArchiveIntent, kArchiveIntent,
                      fmt::format("names plan {}, which is neither in {} nor in {} (a missing generation)", a.plan_id,
                                  kTxnDir, kHistoryDir));
    if (s.has_stage)
      return r.refuse(adopt::ErrorKind::ArchiveIntent, kStageDir,
                      "exists although the archived transaction already left");
    if (a.stage != in_history->has_stage)
      return r.refuse(adopt::ErrorKind::ArchiveIntent, kArchiveIntent,
                      fmt::format("says stage:{}, the archived generation says otherwise", a.stage));
    txn = std::move(*in_history);
    history.erase(in_history);
  }
  DOT_TRY(check_terminal_targets(r, *txn));
  s.finish = txn->state == RefState::Committed ? Finish::AllAfter : Finish::AllBefore;
  return {};
}

// The state and what finishing does, in the order the reference's status
// derives them (section 7).
Status derive_state(const Reader& r, Survey& s, std::optional<Transaction>& txn, std::vector<Transaction>& history) {
  if (s.archive) return derive_archiving(r, s, txn, history);
  if (!txn) {
    s.state = s.has_stage ? RefState::Abandoned : RefState::Idle;
    s.finish = s.has_stage ? Finish::Discard : Finish::Nothing;
    return {};
  }
  s.state = txn->state;
  const RefState t = txn->state;
  if (t == RefState::Abandoned) {
    s.finish = Finish::Discard;
  } else if (t == RefState::Prepared || t == RefState::Committing || t == RefState::RollingBack) {
    DOT_ASSIGN_OR_RETURN(s.to_restore, check_rollback_targets(r, *txn));
    s.finish = Finish::AllBefore;
  } else if (t == RefState::RolledBack) {
    s.finish = Finish::AllBefore;
  } else if (t == RefState::Committed) {
    s.finish = Finish::AllAfter;
  } else {
    s.finish = Finish::Effects;
  }
  return {};
}

// Which generation of the reference wrote the root: one whose plans carry
// effects, one before them, or unknown (no plan anywhere).
Generation generation_of(const Survey& s) {
  bool any_plan = false, effects = false;
  auto look = [&](const Transaction& t) {
    if (!t.plan) return;
    any_plan = true;
    effects = effects || !t.plan->pre_capability();
  };
  if (s.active) look(*s.active);
  for (const auto& t : s.history) look(t);
  return effects ? Generation::Effects : any_plan ? Generation::PreCapability : Generation::Unknown;
}

}  // namespace

Result<Survey> survey(const std::string& dir, const SurveyOptions& options) {
  Survey s;
  s.root = dir;
  // The root itself: a directory reached without a symlink, 0700, ours.
  auto root_fd = beneath::open_root(dir);
  if (!root_fd.ok()) {
    Error e = std::move(root_fd).error();
    if (e.code == Code::PathEscape)
      e.detail = fmt::format("{}: is a symlink or not a directory (refused, never followed)", dir);
    return e;
  }
  Reader r(dir, std::move(*root_fd));
  DOT_TRY(r.check_dir(r.fd(), "."));
  DOT_ASSIGN_OR_RETURN(s.root_id, read_marker(r));
  DOT_ASSIGN_OR_RETURN(UniqueFd lock, hold_reference_lock(r, options, s));
  DOT_TRY(check_top_entries(r, s));
  Context ctx;
  ctx.root_id = s.root_id;
  DOT_TRY(check_registration(r, s, ctx));

  // The stage the latest apply left at the root.
  DOT_ASSIGN_OR_RETURN(std::optional<UniqueFd> stage, r.open_dir(r.fd(), kStageDir, kStageDir));
  s.has_stage = stage.has_value();
  DOT_ASSIGN_OR_RETURN(std::optional<FileObservation> intent_file, r.read(r.fd(), kArchiveIntent, kArchiveIntent));
  if (intent_file) {
    DOT_ASSIGN_OR_RETURN(ArchiveIntent a, parse_intent(r, intent_file->content));
    s.archive = a;
  }
  DOT_ASSIGN_OR_RETURN(std::optional<UniqueFd> txn_fd, r.open_dir(r.fd(), kTxnDir, kTxnDir));
  std::optional<Transaction> txn;
  if (txn_fd) {
    DOT_ASSIGN_OR_RETURN(Transaction t, load_txn(r, txn_fd->get(), std::string(kTxnDir), ctx));
    txn = std::move(t);
  }
  if (stage) {
    // After PREPARED the stage is what the reference verified and sealed;
    // before it (or alone) it is whatever the plugin got to write.
    const Plan* sealed = txn && txn->state != RefState::Abandoned ? &*txn->plan : nullptr;
    DOT_ASSIGN_OR_RETURN(s.stage_files, check_stage(r, stage->get(), kStageDir, sealed));
  }
  DOT_ASSIGN_OR_RETURN(std::vector<Transaction> history, load_history(r, ctx));
  DOT_TRY(derive_state(r, s, txn, history));
  s.active = std::move(txn);
  s.history = std::move(history);
  s.generation = generation_of(s);
  return s;
}

std::string describe_finish(const Survey& s) {
  switch (s.finish) {
    case Finish::Nothing:
      return "nothing to finish: no transaction is active";
    case Finish::Discard:
      return "discard: the last apply never reached a durable PREPARED; its leftovers go and the targets, never "
             "touched, stay as they are";
    case Finish::Effects:
      return "effects: the transaction is committed; its post-commit effect (root sync) runs again under the same "
             "idempotency key, as the reference's retry-effects does";
    case Finish::AllAfter:
      return s.state == RefState::Archiving
                 ? "all-after: the committed transaction's archive is completed; targets unchanged"
                 : "all-after: the transaction is committed; nothing to do";
    case Finish::AllBefore:
      if (s.state == RefState::Archiving)
        return "all-before: the rolled-back transaction's archive is completed; targets unchanged";
      if (s.state == RefState::RolledBack) return "all-before: the transaction is rolled back; nothing to do";
      return "all-before: the interrupted transaction is rolled back, every target restored to what it was before, "
             "as the reference's recover does";
  }
  return "";
}

}  // namespace dot::adopt
