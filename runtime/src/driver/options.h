// options.h - the executable's command line (docs/executable.md).
#ifndef TIDALRT_DRIVER_OPTIONS_H
#define TIDALRT_DRIVER_OPTIONS_H

#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace tidalrt_driver {

struct manifest;

struct options {
  // NAME=FILE pairs, in command-line order.
  std::vector<std::pair<std::string, std::string>> inputs;
  std::vector<std::pair<std::string, std::string>> eval_inputs;
  std::optional<uint64_t> steps;
  std::optional<uint64_t> epochs;
  bool shuffle = false;
  uint64_t seed = 0;
  std::string init;
  std::string save;
  // --save-external-data: the saved initializers in FILE.onnx.data.
  bool save_external_data = false;
  std::string log;
  std::string trace;
  // --threads N fixes the count; --threads auto (the default when neither
  // --threads nor OMP_NUM_THREADS is given) adapts it to the load
  // (thread_governor.h), up to OpenMP's count.
  std::optional<int> threads;
  bool threads_auto = false;
  bool quiet = false;
  // A data-parallel rank other than 0 (distributed.h): it takes part in
  // every save and checkpoint (a sharded optimizer's state is gathered)
  // but writes no file.
  bool follower = false;
  std::string output_dir;
  // --checkpoint-every N (steps; 0: once per epoch with --epochs, else
  // only at the end), --checkpoint-dir DIR, --checkpoint-keep K and
  // --resume DIR (docs/executable.md "Checkpoints").
  std::optional<uint64_t> checkpoint_every;
  std::string checkpoint_dir;
  uint64_t checkpoint_keep = 2;
  std::string resume;
  // --on-nonfinite stop|skip and --check-finite loss|state.
  bool skip_nonfinite = false;
  bool check_state = false;
  bool help = false;
  // No arguments at all (train on the embedded data, or print the usage).
  bool no_arguments = false;
};

// Parses argv[1..argc-1]. Throws a driver_error (exit 1) for an unknown
// option, a missing or malformed value, a repeated option, or --steps with
// --epochs.
options parse_options(int argc, char **argv);

// --threads VALUE (or the TIDAL_THREADS variable, `source` naming it):
// "auto" or a count from 1 to 4096. Throws a driver_error (exit 1)
// otherwise.
void parse_threads(const std::string &source, const std::string &value,
                   options &result);
// Without --threads, TIDAL_THREADS=N|auto sets it: a tidal-only default
// that leaves other OpenMP programs (and OMP_NUM_THREADS) alone.
void threads_from_environment(options &result);

// Prints the usage: the model, its batch size and data inputs, the
// optimizer and every option.
void print_usage(std::FILE *stream, const std::string &program_name,
                 const manifest &manifest);

} // namespace tidalrt_driver

#endif // TIDALRT_DRIVER_OPTIONS_H
