// checkpoint.h - periodic checkpoints (--checkpoint-dir, --checkpoint-every,
// --checkpoint-keep) and --resume (docs/executable.md "Checkpoints").
//
// A checkpoint is a --save file named DIR/step-NNNNNNNNNNNN.onnx (the
// global step count, 12 digits): the model with every weight, optimizer
// state and running statistic, tidal.steps_done, and what the rest of the
// run's state is a function of: the seed and shuffle flag (the data order
// and every random op are drawn from (seed, step)) and the step the run
// started from (so that --steps/--epochs keep meaning the whole run). Each
// is written atomically (temporary file, fsync, rename, fsync of DIR); older
// ones are removed only after a newer one is complete.
#ifndef TIDALRT_DRIVER_CHECKPOINT_H
#define TIDALRT_DRIVER_CHECKPOINT_H

#include "onnx_weights.h"

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace tidalrt_driver {

struct session;

// The metadata keys a checkpoint adds to tidal.steps_done.
extern const char *const seed_key;
extern const char *const shuffle_key;
extern const char *const run_first_step_key;

// DIR/step-NNNNNNNNNNNN.onnx.
std::string checkpoint_path(const std::string &dir, uint64_t step);

struct found_checkpoint {
  std::string path;
  uint64_t step = 0;
  std::unique_ptr<onnx_model> model;
};

// The newest checkpoint in `dir` that reads back whole (one that does not
// is skipped with a warning, and the one before it used). Removes the
// temporary files of writes that a killed run left. Returns an empty
// result when `dir` does not exist or holds no checkpoint.
found_checkpoint find_newest_checkpoint(const session &s,
                                        const std::string &dir);

// Checks that a checkpoint was written with the options that decide the
// data order and the random ops (--seed, --shuffle). Throws (exit 1) naming
// both otherwise.
void check_resume_options(const session &s, const found_checkpoint &found);

class checkpoint_writer {
public:
  // Creates `dir` if it is missing (its parent must exist). Throws (exit
  // 1) if it cannot be created or is not a directory.
  checkpoint_writer(const session &s, std::string dir, uint64_t keep,
                    uint64_t run_first_step);

  // Writes the checkpoint of step count `steps_done` from `values` (every
  // persistent slot), then removes all but the newest `keep`. A failed
  // write throws (exit 1) and leaves the earlier checkpoints as they were.
  void
  write(const onnx_model &model,
        const std::vector<std::pair<const tensor_slot *, const void *>> &values,
        uint64_t steps_done);

  uint64_t written() const { return count; }

private:
  const session &s;
  std::string dir;
  uint64_t keep;
  uint64_t run_first_step;
  uint64_t count = 0;
};

} // namespace tidalrt_driver

#endif // TIDALRT_DRIVER_CHECKPOINT_H
