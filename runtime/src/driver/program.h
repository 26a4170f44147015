// program.h - one compiled program in memory: its arenas, its execution
// context, and calling its functions with failures named by op.
#ifndef TIDALRT_DRIVER_PROGRAM_H
#define TIDALRT_DRIVER_PROGRAM_H

#include "driver.h"
#include "manifest.h"

#include <cstdint>
#include <memory>
#include <vector>

namespace tidalrt_driver {

class onnx_model;

// A zero-initialised, 64-byte aligned block.
class arena {
public:
  arena() = default;
  explicit arena(uint64_t bytes);
  ~arena();
  arena(const arena &) = delete;
  arena &operator=(const arena &) = delete;
  arena(arena &&other) noexcept;
  arena &operator=(arena &&other) noexcept;

  uint8_t *data() const { return bytes_; }
  uint64_t size() const { return size_; }
  uint8_t *at(const tensor_slot &slot) const { return bytes_ + slot.offset; }

private:
  uint8_t *bytes_ = nullptr;
  uint64_t size_ = 0;
};

// Copies of results into the arguments of the same name (new values of
// params, state and optimizer state) after each call.
struct update {
  const tensor_slot *result;
  const tensor_slot *arg;
};
std::vector<update> find_updates(const function_info &function);

class program_runner {
public:
  // `evaluate`: the run evaluates held-out data, so the predict function
  // (if the program has one) gets its arena and is prepared.
  program_runner(const manifest &manifest, const tidalrt_program_t &program,
                 uint64_t seed, bool evaluate);
  ~program_runner();

  const manifest &info() const { return manifest_; }
  arena &step_arena() { return step_; }
  arena &predict_arena() { return predict_; }

  // Fills every persistent argument of the step (and predict) function:
  // from `model` (the compiled-in one), then from `init` if not NULL.
  // Optimizer state found in neither starts at zero.
  void load_initial_values(const onnx_model &model, const onnx_model *init);

  // Runs each function once in preparation mode (kernels build their state
  // and reserve scratch), then allocates the scratch.
  void prepare();

  // Calls the step function as global step `step`, then applies its
  // updates. Throws a driver_error (exit 2) naming the failing op.
  void run_step(uint64_t step);
  // Copies the current values of the step's persistent arguments into the
  // predict function's arguments of the same name.
  void sync_predict_from_step();
  // Calls the predict function.
  void run_predict(uint64_t step);

  // Host memory in use: the arenas and the kernels' scratch.
  uint64_t host_bytes() const;

private:
  void call(tidalrt_status_t (*fn)(tidalrt_context_t *, uint8_t *),
            uint8_t *arena, const char *what);

  const manifest &manifest_;
  const tidalrt_program_t &program_;
  tidalrt_context_t *context_ = nullptr;
  arena step_;
  bool use_predict_;
  arena predict_;
  std::vector<update> step_updates_;
};

} // namespace tidalrt_driver

#endif // TIDALRT_DRIVER_PROGRAM_H
