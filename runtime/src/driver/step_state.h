// step_state.h - the training step's persistent state (weights, optimizer
// state, running statistics): collecting it for --save and checkpoints,
// snapshots that undo a step (--on-nonfinite skip), and finding non-finite
// values in it or in data.
#ifndef TIDALRT_DRIVER_STEP_STATE_H
#define TIDALRT_DRIVER_STEP_STATE_H

#include "tidalrt/tidalrt.h"

#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace tidalrt_driver {

struct manifest;
struct tensor_slot;
class function_memory;

using slot_values = std::vector<std::pair<const tensor_slot *, const void *>>;

// Every persistent slot of the step with its bytes: in place for slots in
// host memory, else read into a host copy appended to `copies` (a deque:
// the copies stay where they are as it grows).
slot_values persistent_values(const manifest &m, function_memory &memory,
                              std::deque<std::vector<uint8_t>> &copies);

// The index of the first element of `count` elements of `type` at `data`
// that is NaN or infinite; nullopt if there is none (or the type is not a
// floating-point one).
std::optional<uint64_t> first_nonfinite(tidalrt_element_type_t type,
                                        const void *data, uint64_t count);

// "nan", "inf" or "-inf": element `index` of `data`.
std::string describe_nonfinite(tidalrt_element_type_t type, const void *data,
                               uint64_t index);

// The first persistent slot (in argument order) holding a non-finite
// value, with the element's index; null if every value is finite.
struct nonfinite_value {
  const tensor_slot *slot = nullptr;
  uint64_t index = 0;
  std::string value;
};
nonfinite_value find_nonfinite_state(const manifest &m,
                                     function_memory &memory);
// The same over values already in host memory.
nonfinite_value find_nonfinite(const slot_values &values);

// A copy of every persistent slot, taken before a step and put back to
// undo it.
class state_snapshot {
public:
  void take(const manifest &m, function_memory &memory);
  void restore(function_memory &memory) const;

private:
  std::vector<std::pair<const tensor_slot *, std::vector<uint8_t>>> saved;
};

} // namespace tidalrt_driver

#endif // TIDALRT_DRIVER_STEP_STATE_H
