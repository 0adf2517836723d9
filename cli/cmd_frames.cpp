#include <memory>

#include "commands.h"

namespace dot::cli {

void add_frames_commands(CLI::App& app, Context& ctx) {
  auto* frames = app.add_subcommand("frames", "Decode captured protocol streams");
  frames->require_subcommand(1);
  auto* decode = frames->add_subcommand("decode", "Decode a captured stream, one JSON line per frame");
  auto opts = std::make_shared<FramesOptions>();
  auto format = std::make_shared<std::string>();
  decode->add_option("--format", *format, "Wire format of the stream")
      ->required()
      ->check(CLI::IsMember({"dpp", "metewand", "adpp"}));
  decode->add_option("--direction", opts->direction, "ADPP only: which side's frames the stream holds")
      ->check(CLI::IsMember({"request", "response"}));
  decode->add_flag("--count", opts->count_only, "Print only the final line");
  decode->add_option("input", opts->input, "Captured stream (FILE, or - for stdin)");
  decode->footer(
      "Output: {\"frame\":N,\"offset\":O,\"value\":...} per frame, then {\"end\":\"eof\",\"frames\":N}\n"
      "or the first error {\"error\":KIND,\"offset\":O,...} (exit 1).\n"
      "Examples:\n"
      "  dot-core frames decode --format dpp capture.bin\n"
      "  dot-core frames decode --format metewand --count - < worker.log\n"
      "  dot-core frames decode --format adpp --direction response provider.out");
  decode->callback([&ctx, opts, format] {
    ctx.action = [opts, format] {
      if (*format == "dpp") return decode_frames_dpp(*opts);
      if (*format == "metewand") return decode_frames_metewand(*opts);
      return decode_frames_adpp(*opts);
    };
  });
}

}  // namespace dot::cli
