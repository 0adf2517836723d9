// `dot-core adopt`: a root made by the Go reference implementation
// (spec/go-roots.md), recognised and verified read-only (core/go_root.h).
// Wiring only: every rule is in dot_core. JSON shape: docs/user-guide.md,
// "Coming from the Go reference".
#include <filesystem>
#include <memory>
#include <string>

#include <fmt/format.h>

#include "commands.h"

#include "dot/core/go_adopt.h"
#include "dot/core/go_root.h"
#include "dot/core/test_hooks.h"
#include "json_writer.h"
#include "output.h"

namespace dot::cli {
namespace {

struct AdoptOptions {
  std::string root;
  bool dry_run = false;
  bool json = false;
};

void write_survey(JsonWriter& w, const core::go::Survey& s) {
  const core::go::Transaction* t = s.active ? &*s.active : nullptr;
  w.begin_object();
  w.key("finish").string(core::go::finish_name(s.finish));
  w.key("format").string("go-hello");
  w.key("generation").string(core::go::generation_name(s.generation));
  w.key("history").begin_array();
  for (const auto& h : s.history) {
    w.begin_object();
    w.key("plan_id").string(h.plan_id);
    w.key("proposal_id").string(h.proposal_id);
    w.key("state").string(h.state);
    w.end_object();
  }
  w.end_array();
  w.key("plan_id").string_or_null(t ? std::string_view(t->plan_id) : std::string_view());
  w.key("proposal_id").string_or_null(t ? std::string_view(t->proposal_id) : std::string_view());
  w.key("root_id").string(s.root_id);
  w.key("state").string(s.state);
  w.end_object();
}

int print_survey_json(const core::go::Survey& s) {
  JsonWriter w;
  write_survey(w, s);
  (void)write_stdout(std::move(w).line());
  return kExitOk;
}

int print_survey_human(const core::go::Survey& s) {
  std::string out = fmt::format("Go reference root {}\n", shown(s.root));
  out += fmt::format("  root id      {}\n", s.root_id);
  out += fmt::format("  generation   {}\n", core::go::generation_name(s.generation));
  if (s.manifest)
    out += fmt::format("  plugin       .dot-plugin, sha256 {}, assurance {}{}\n", s.manifest->sha256, s.manifest->assurance,
                       s.manifest->has_profile ? "" : " (manifest without profile)");
  else
    out += "  plugin       none registered\n";
  out += fmt::format("  state        {}\n", s.state);
  if (s.active && !s.active->plan_id.empty()) {
    out += fmt::format("  plan id      {}\n", s.active->plan_id);
    out += fmt::format("  proposal id  {}\n", s.active->proposal_id);
  }
  out += fmt::format("  history      {} generation(s)\n", s.history.size());
  for (const auto& h : s.history) out += fmt::format("    {}  {}\n", h.plan_id, h.state);
  std::string leftovers;
  for (const auto& n : s.next_files) leftovers += (leftovers.empty() ? "" : ", ") + n;
  if (s.has_stage) leftovers += std::string(leftovers.empty() ? "" : ", ") + ".dot-stage/";
  if (!leftovers.empty()) out += fmt::format("  leftovers    {}\n", leftovers);
  out += fmt::format("  finish       {}\n", core::go::describe_finish(s));
  out += "dry run: nothing was changed\n";
  (void)print_text(out);
  return kExitOk;
}

int run_adopt(const AdoptOptions& o) {
  std::string dir = std::filesystem::absolute(o.root).lexically_normal().string();
  if (dir.size() > 1 && dir.back() == '/') dir.pop_back();
  if (o.dry_run) {
    auto s = core::go::survey(dir);
    if (!s.ok()) return report(s.error(), o.json);
    return o.json ? print_survey_json(*s) : print_survey_human(*s);
  }
  auto hooks = core::TestHooks::from_environment();
  if (!hooks.ok()) return report(hooks.error(), o.json);
  auto a = core::go::adopt(dir, *hooks);
  if (!a.ok()) return report(a.error(), o.json);
  if (o.json) {
    JsonWriter w;
    w.begin_object();
    w.key("finished");
    write_survey(w, a->finished);
    w.key("found");
    write_survey(w, a->found);
    w.key("steps").begin_array();
    for (const auto& step : a->steps) w.string(step);
    w.end_array();
    w.end_object();
    (void)write_stdout(std::move(w).line());
    return kExitOk;
  }
  std::string out = fmt::format("Go reference root {}: {}, {}\n", shown(a->found.root), a->found.state,
                                core::go::generation_name(a->found.generation));
  for (const auto& step : a->steps) out += fmt::format("  finished     {}\n", step);
  if (a->steps.empty()) out += "  finished     nothing to finish\n";
  out += fmt::format("  state now    {}\n", a->finished.state);
  (void)print_text(out);
  return kExitOk;
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
  cmd->footer("--dry-run changes no byte and creates no file (not even a lock).\n"
              "Without it, an interrupted transaction, rollback, archive or post-commit effect is finished\n"
              "the way the reference's own recover / retry-effects / archive finishes it.\nExample:\n"
              "  dot-core adopt --root ~/managed --dry-run");
  cmd->callback([&ctx, o] { ctx.action = [o] { return run_adopt(*o); }; });
}

}  // namespace dot::cli
