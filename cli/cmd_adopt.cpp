// `dot-core adopt`: a root made by the Go reference implementation
// (docs/spec/go-roots.md), recognised and verified read-only (adopt/go_root.h).
// Wiring only: every rule is in dot_adopt. JSON shape: docs/user-guide.md,
// "Coming from the Go reference".
#include <filesystem>
#include <memory>
#include <string>

#include <fmt/format.h>

#include <CLI/CLI.hpp>

#include "commands.h"
#include "hints.h"

#include "armed_hooks.h"
#include "dot/adopt/adopt.h"
#include "dot/adopt/go_root.h"
#include "dot/core/registry.h"
#include "dot/store/root.h"
#include "json_writer.h"
#include "output.h"

namespace dot::cli {
namespace {

struct AdoptOptions {
  std::string root;
  bool dry_run = false;
  bool json = false;
};

void write_survey(JsonWriter& w, const adopt::Survey& s) {
  const adopt::Transaction* t = s.active ? &*s.active : nullptr;
  w.begin_object();
  w.key("finish").string(adopt::finish_name(s.finish));
  w.key("format").string("go-hello");
  w.key("generation").string(adopt::generation_name(s.generation));
  w.key("history").begin_array();
  for (const auto& h : s.history) {
    w.begin_object();
    w.key("plan_id").string(h.plan_id);
    w.key("proposal_id").string(h.proposal_id);
    w.key("state").string(adopt::ref_state_name(h.state));
    w.end_object();
  }
  w.end_array();
  w.key("plan_id").string_or_null(t ? std::string_view(t->plan_id) : std::string_view());
  w.key("plugin_untrusted").string_or_null(s.plugin_untrusted);
  w.key("proposal_id").string_or_null(t ? std::string_view(t->proposal_id) : std::string_view());
  w.key("root_id").string(s.root_id);
  w.key("state").string(adopt::ref_state_name(s.state));
  w.end_object();
}

int print_survey_json(const adopt::Survey& s) {
  JsonWriter w;
  write_survey(w, s);
  (void)write_stdout(std::move(w).line());
  return kExitOk;
}

int print_survey_human(const adopt::Survey& s) {
  std::string out = fmt::format("Go reference root {}\n", shown(s.root));
  out += fmt::format("  root id      {}\n", s.root_id);
  out += fmt::format("  generation   {}\n", adopt::generation_name(s.generation));
  if (s.manifest && !s.plugin_untrusted.empty())
    out += fmt::format("  plugin       not trusted: {}; finishing never runs it, and adopt will register no plugin\n",
                       shown(s.plugin_untrusted));
  else if (s.manifest)
    out += fmt::format("  plugin       .dot-plugin, sha256 {}, assurance {}{}\n", s.manifest->sha256,
                       s.manifest->assurance, s.manifest->has_profile ? "" : " (manifest without profile)");
  else
    out += "  plugin       none registered\n";
  out += fmt::format("  state        {}\n", adopt::ref_state_name(s.state));
  if (s.active && !s.active->plan_id.empty()) {
    out += fmt::format("  plan id      {}\n", s.active->plan_id);
    out += fmt::format("  proposal id  {}\n", s.active->proposal_id);
  }
  out += fmt::format("  history      {} generation(s)\n", s.history.size());
  for (const auto& h : s.history) out += fmt::format("    {}  {}\n", h.plan_id, adopt::ref_state_name(h.state));
  std::string leftovers;
  for (const auto& n : s.next_files) leftovers += (leftovers.empty() ? "" : ", ") + n;
  if (s.has_stage) leftovers += std::string(leftovers.empty() ? "" : ", ") + ".dot-stage/";
  if (s.has_partial_import)
    leftovers += std::string(leftovers.empty() ? "" : ", ") + std::string(adopt::kImportDir) +
                 "/ (an import adopt began and never made durable; it starts again)";
  if (!leftovers.empty()) out += fmt::format("  leftovers    {}\n", leftovers);
  out += fmt::format("  finish       {}\n", adopt::describe_finish(s));
  out += "dry run: nothing was changed\n";
  (void)print_text(out);
  return kExitOk;
}

// A root adopt already imported: what its adoption record says.
int print_adopted(const adopt::Adopted& a, bool json) {
  if (json) {
    JsonWriter w;
    w.begin_object();
    w.key("adopted").boolean(true);
    w.key("cleanup_pending").boolean(a.cleanup_pending);
    w.key("finish").string(a.cleanup_pending ? "cleanup" : "nothing");
    w.key("format").string("go-hello");
    w.key("generation").string(adopt::generation_name(a.record.generation));
    w.key("history").begin_array().end_array();
    w.key("plan_id").null();
    w.key("proposal_id").null();
    w.key("root_id").string(a.record.root_id);
    w.key("state").string("ADOPTED");
    w.end_object();
    (void)write_stdout(std::move(w).line());
    return kExitOk;
  }
  std::string out = fmt::format("adopted Go reference root, root id {}\n", a.record.root_id);
  out += fmt::format("  adopted from {} ({}), {} transaction(s) imported\n", adopt::ref_state_name(a.record.state),
                     adopt::generation_name(a.record.generation), a.record.transactions);
  out += a.cleanup_pending ? "  cleanup      interrupted: the reference's files are still there; adopt removes them\n"
                           : "  cleanup      done: nothing left to adopt\n";
  out += "dry run: nothing was changed\n";
  (void)print_text(out);
  return kExitOk;
}

std::string_view outcome_name(adopt::AdoptOutcome o) {
  switch (o) {
    case adopt::AdoptOutcome::Adopted:
      return "adopted";
    case adopt::AdoptOutcome::CleanupFinished:
      return "cleanup-finished";
    case adopt::AdoptOutcome::AlreadyAdopted:
      return "already-adopted";
  }
  return "adopted";
}

int print_result_json(const adopt::AdoptResult& a) {
  const bool surveyed = a.outcome == adopt::AdoptOutcome::Adopted;
  JsonWriter w;
  w.begin_object();
  w.key("finished");
  if (surveyed)
    write_survey(w, a.finished);
  else
    w.null();
  w.key("found");
  if (surveyed)
    write_survey(w, a.found);
  else
    w.null();
  w.key("imported").number(static_cast<std::uint64_t>(surveyed ? a.record.transactions : 0));
  w.key("outcome").string(outcome_name(a.outcome));
  w.key("removed").number(static_cast<std::uint64_t>(a.removed));
  w.key("root_id").string(a.record.root_id);
  w.key("steps").begin_array();
  for (const auto& step : a.steps) w.string(step);
  w.end_array();
  w.end_object();
  (void)write_stdout(std::move(w).line());
  return kExitOk;
}

int print_result_human(const adopt::AdoptResult& a, const std::string& dir) {
  std::string out;
  switch (a.outcome) {
    case adopt::AdoptOutcome::AlreadyAdopted:
      out = fmt::format("{} is already adopted (root id {}): nothing to do\n", shown(dir), a.record.root_id);
      break;
    case adopt::AdoptOutcome::CleanupFinished:
      out = fmt::format(
          "{} was adopted (root id {}); the interrupted cleanup is finished: {} reference entries removed\n",
          shown(dir), a.record.root_id, a.removed);
      break;
    case adopt::AdoptOutcome::Adopted:
      out = fmt::format("adopted Go reference root {}\n", shown(dir));
      out += fmt::format("  root id      {} (kept)\n", a.record.root_id);
      out += fmt::format("  found        {}, {}\n", adopt::ref_state_name(a.found.state),
                         adopt::generation_name(a.found.generation));
      for (const auto& step : a.steps) out += fmt::format("  finished     {}\n", step);
      out += fmt::format("  imported     {} transaction(s), original ids kept\n", a.record.transactions);
      if (!a.plugin_not_registered.empty())
        out += fmt::format(
            "  plugin       none registered: {}; nothing adopt did ran it. Register a plugin you trust "
            "before `plan`: {}\n",
            shown(a.plugin_not_registered), command_for(dir, "register") + std::string(core::kRegisterArguments));
      else if (a.finished.manifest)
        out += fmt::format("  plugin       org.dot.hello, sha256 {}, assurance {}\n", a.finished.manifest->sha256,
                           a.finished.manifest->assurance);
      out += fmt::format("  removed      {} reference entries (.dot-root last)\n", a.removed);
      break;
  }
  (void)print_text(out);
  return kExitOk;
}

int run_adopt(const AdoptOptions& o) {
  std::string dir = std::filesystem::absolute(o.root).lexically_normal().string();
  if (dir.size() > 1 && dir.back() == '/') dir.pop_back();
  if (o.dry_run) {
    auto adopted = adopt::find_adoption(dir);
    if (!adopted.ok()) return report(adopted.error(), o.json);
    if (*adopted) {
      // The decision adopt itself would take: a refusal is reported as one.
      if (auto refused = adopt::cleanup_refusal(dir, **adopted); !refused.ok()) return report(refused.error(), o.json);
      return print_adopted(**adopted, o.json);
    }
    auto s = adopt::survey(dir);
    if (!s.ok()) return report(s.error(), o.json);
    return o.json ? print_survey_json(*s) : print_survey_human(*s);
  }
  auto hooks = armed_test_hooks();
  if (!hooks.ok()) return report(hooks.error(), o.json);
  auto a = adopt::adopt(dir, *hooks);
  if (!a.ok()) return report(a.error(), o.json);
  return o.json ? print_result_json(*a) : print_result_human(*a, dir);
}

}  // namespace

void add_adopt_command(CLI::App& app, Context& ctx) {
  auto o = std::make_shared<AdoptOptions>();
  auto* cmd = app.add_subcommand("adopt", "Recognise and verify a root made by the Go reference implementation");
  // Never found by walking up or from $DOT_ROOT: a reference root is not a
  // managed root of ours yet, and adopting is named explicitly.
  cmd->add_option("--root", o->root, "The reference's managed root")->required();
  cmd->add_flag("--dry-run", o->dry_run, "Only recognise, verify and report; change nothing");
  cmd->add_flag("--json", o->json, "Machine-readable output");
  cmd->footer(
      "--dry-run changes no byte and creates no file (not even a lock).\n"
      "Without it, an interrupted transaction, rollback, archive or post-commit effect is finished\n"
      "the way the reference's own recover / retry-effects / archive finishes it, every transaction is\n"
      "imported into dot-core's journal with its original ids, and the reference's files are removed.\nExample:\n"
      "  dot-core adopt --root ~/managed --dry-run");
  cmd->callback([&ctx, o] { ctx.action = [o] { return run_adopt(*o); }; });
}

}  // namespace dot::cli
