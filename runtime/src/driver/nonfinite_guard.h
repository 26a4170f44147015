// nonfinite_guard.h - what a training run does about non-finite values
// (--on-nonfinite stop|skip, --check-finite loss|state).
#ifndef TIDALRT_DRIVER_NONFINITE_GUARD_H
#define TIDALRT_DRIVER_NONFINITE_GUARD_H

#include "step_state.h"

#include <cstdint>

namespace tidalrt_driver {

struct session;

class nonfinite_guard {
public:
  nonfinite_guard(const session &s, function_memory &memory);

  // Before each step: with skip, snapshots the persistent state.
  void before_step();

  // After step `step` (0-based global index) with its `loss`: checks the
  // loss (and with --check-finite state every persistent value). Returns
  // true if the step stands. With skip, a non-finite step is undone (the
  // snapshot put back, a warning printed) and false returned; with stop it
  // throws (exit 1) naming the step and the first non-finite value, before
  // anything is saved.
  bool after_step(uint64_t step, float loss);

  uint64_t skipped() const { return skipped_; }
  bool skipping() const { return skip; }

private:
  const session &s;
  function_memory &memory;
  bool skip, check_state;
  state_snapshot snapshot;
  uint64_t skipped_ = 0;
};

} // namespace tidalrt_driver

#endif // TIDALRT_DRIVER_NONFINITE_GUARD_H
