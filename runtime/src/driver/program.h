// program.h - one compiled program in memory: its arenas, its execution
// context, and calling its functions with failures named by op.
#ifndef TIDALRT_DRIVER_PROGRAM_H
#define TIDALRT_DRIVER_PROGRAM_H

#include "driver.h"
#include "manifest.h"
#include "memory.h"

#include "tidalrt/comm.h"

#include <cstdint>
#include <memory>
#include <vector>

namespace tidalrt_driver {

class onnx_model;

struct context_deleter {
  void operator()(tidalrt_context_t *context) const {
    tidalrt_context_free(context);
  }
};
using context_ptr = std::unique_ptr<tidalrt_context_t, context_deleter>;
struct device_deleter {
  void operator()(tidalrt_device_t *device) const {
    tidalrt_device_free(device);
  }
};
using device_ptr = std::unique_ptr<tidalrt_device_t, device_deleter>;

// Device figures of the last step (all 0 on the cpu target).
struct device_figures {
  uint64_t peak_bytes = 0;
  uint64_t bytes_to_host = 0;
  uint64_t bytes_to_device = 0;
  // The time the step's copies took (tidalrt_device_stats_t::copy_seconds).
  double copy_seconds = 0;
  // The time the compute stream waited for them
  // (tidalrt_device_stats_t::compute_wait_seconds; measured on sim only).
  double copy_stall_seconds = 0;
};

// Copies of results into the arguments of the same name (new values of
// params, state and optimizer state) after each call: those whose result
// is not the argument's own bytes (another space, or another offset).
struct update {
  const tensor_slot *result;
  const tensor_slot *arg;
};
std::vector<update> find_updates(const function_info &function);

// On a device target (manifest "target": "sim" or "cuda") the step
// function runs on one device of that kind (TIDALRT_DEVICE_SIM or
// TIDALRT_DEVICE_CUDA) of functions.step.device_bytes bytes whose arena is
// the step's arena (the generated step ends with tidalrt_dev_synchronize,
// so the device is idle between steps, when the driver reads and writes
// the slots through function_memory), with a host arena of
// host_arena_bytes for offloaded copies and the slots that live in host
// memory ("space": "host").
// The predict function has its own context: on a device of its own (of the
// same kind) if functions.predict has a device_bytes, else on the host (its
// own zeroed arena, no device: tidalrt_dev_launch calls kernels directly).
class program_runner {
public:
  // `evaluate`: the run evaluates held-out data, so the predict function
  // (if the program has one) gets its arena and is prepared.
  program_runner(const manifest &manifest, const tidalrt_program_t &program,
                 uint64_t seed, bool evaluate);
  ~program_runner();

  const manifest &info() const { return manifest_; }
  // The step (predict) function's slots: every access to their bytes goes
  // through these.
  function_memory &step_memory() { return step_; }
  function_memory &predict_memory() { return predict_; }

  // Fills every persistent argument of the step (and predict) function:
  // from `model` (the compiled-in one), then from `init` if not NULL.
  // Optimizer state found in neither starts at zero.
  void load_initial_values(const onnx_model &model, const onnx_model *init);

  // Runs each function once in preparation mode (kernels build their state
  // and reserve scratch), then allocates the scratch.
  void prepare();
  // Runs the kernels of both functions on `threads` OpenMP threads from
  // the next call on (tidalrt_context_set_threads), preparing them first if
  // they never ran at that count. Between steps only.
  void set_threads(int threads);

  // The communicator of a data-parallel run, for the step's all-reduce
  // kernels (before prepare(), which checks the number of ranks).
  void set_comm(tidalrt_comm_t *comm);

  // Calls the step function as global step `step`, then applies its
  // updates. Throws a driver_error (exit 2) naming the failing op.
  void run_step(uint64_t step);
  // Copies the current values of the step's persistent arguments into the
  // predict function's arguments of the same name.
  void sync_predict_from_step();
  // Calls the predict function.
  void run_predict(uint64_t step);

  // Host memory in use: the arenas in host memory (on sim: the host arenas
  // of copies and a predict arena on the host, not the device memory) and
  // the kernels' scratch.
  uint64_t host_bytes() const;

  // What the device did in the last run_step (zeros on the cpu target).
  const device_figures &step_device_figures() const { return figures_; }
  // The step's device; NULL on the cpu target.
  tidalrt_device_t *step_device() const { return step_device_.get(); }

private:
  void call(tidalrt_status_t (*fn)(tidalrt_context_t *, uint8_t *),
            tidalrt_context_t *context, const function_memory &memory,
            const char *what);
  tidalrt_context_t *predict_context() const {
    return predict_context_ ? predict_context_.get() : context_.get();
  }

  const manifest &manifest_;
  const tidalrt_program_t &program_;
  bool use_predict_;
  // Destroyed in reverse order: the contexts (which detach from their
  // devices) first, then the devices, then the functions' memory (the
  // arena views of device memory, which free nothing, and the host arenas
  // that device copies use).
  function_memory step_{"step"};
  function_memory predict_{"predict function"};
  device_ptr step_device_;
  device_ptr predict_device_;
  void load_chunk(const tensor_slot &slot, const onnx_model &model,
                  const onnx_model *init, function_memory &into);

  tidalrt_comm_t *comm_ = nullptr;
  context_ptr context_;
  // A device target's predict context; NULL: the predict function shares
  // the step's context.
  context_ptr predict_context_;
  std::vector<update> step_updates_;
  device_figures figures_;
};

} // namespace tidalrt_driver

#endif // TIDALRT_DRIVER_PROGRAM_H
