// `dot-core frames decode`: the options, then the decoder of the chosen wire format
// (frames_dpp.cpp, frames_metewand.cpp, frames_adpp.cpp).
#include <memory>

#include <CLI/CLI.hpp>

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
  decode
      ->add_option("--direction", opts->direction,
                   "Which side's frames the stream holds (required with --format adpp, which has no "
                   "way to tell; refused with the others)")
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
  decode->callback([&ctx, opts, format, decode] {
    // An ADPP request and response stream look alike on the wire: guessing
    // would decode one as the other, so the side is never defaulted.
    bool adpp = *format == "adpp";
    if (adpp != (decode->count("--direction") > 0))
      throw CLI::ValidationError(adpp ? "--format adpp requires --direction request|response"
                                      : "--direction applies to --format adpp only");
    ctx.action = [opts, format] {
      if (*format == "dpp") return decode_frames_dpp(*opts);
      if (*format == "metewand") return decode_frames_metewand(*opts);
      return decode_frames_adpp(*opts);
    };
  });
}

}  // namespace dot::cli
