// nonfinite_guard.cpp - stopping on, or undoing, a non-finite step.
#include "nonfinite_guard.h"

#include "error.h"
#include "session.h"
#include "step_log.h"

#include <cmath>

namespace tidalrt_driver {

namespace {

// At most this many skipped steps are named on stderr (the summary counts
// them all).
constexpr uint64_t max_skip_warnings = 10;

std::string describe(const nonfinite_value &v) {
  return "'" + v.slot->name + "' (" + v.slot->role + ") holds " + v.value +
         " at element " + std::to_string(v.index);
}

} // namespace

nonfinite_guard::nonfinite_guard(const session &s, function_memory &memory)
    : s(s), memory(memory), skip(s.opts.skip_nonfinite),
      check_state(s.opts.check_state) {}

void nonfinite_guard::before_step() {
  if (skip)
    snapshot.take(s.info, memory);
}

bool nonfinite_guard::after_step(uint64_t step, float loss) {
  bool finite_loss = std::isfinite(loss);
  if (finite_loss && !check_state)
    return true;
  nonfinite_value state = find_nonfinite_state(s.info, memory);
  if (finite_loss && !state.slot)
    return true;
  std::string what = "step " + std::to_string(step + 1) + ": ";
  if (finite_loss)
    what += "the loss is finite but " + describe(state) + " after the step";
  else
    what += "the loss is " + text_number(loss);
  if (skip) {
    snapshot.restore(memory);
    ++skipped_;
    if (skipped_ <= max_skip_warnings)
      s.warn(what + "; the step's update is undone (--on-nonfinite skip)" +
             (skipped_ == max_skip_warnings
                  ? "; further skipped steps are only counted"
                  : ""));
    return false;
  }
  if (!finite_loss && state.slot)
    what += "; after the step " + describe(state);
  else if (!finite_loss)
    what += "; every weight and optimizer state is still finite";
  fail_input(what + "; training stopped (--on-nonfinite stop; skip undoes such "
                    "steps), and nothing was saved after the previous step");
}

} // namespace tidalrt_driver
