// trainer_lib.cpp - the trainer library's C ABI (tidalrt/trainer.h) on top
// of the driver's program runner: handles, argument checks, and every
// failure turned into a status object.
#include "trainer_lib.h"

#include "cpu_contention.h"
#include "error.h"
#include "file_util.h"
#include "onnx_weights.h"
#include "session.h"
#include "step_state.h"
#include "thread_adapter.h"
#include "trace.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstring>
#include <deque>
#include <memory>
#include <mutex>
#include <new>
#include <omp.h>
#include <unordered_map>

namespace tidalrt_driver {

namespace {

struct trainer_state {
  std::mutex mutex;
  tidalrt_program_t program;
  manifest info;
  options opts;
  std::FILE *quiet = nullptr;
  std::unique_ptr<session> s;
  loaded_program loaded;
  uint64_t steps = 0;
  uint64_t bytes_to_host = 0, bytes_to_device = 0;
  // threads = TIDALRT_TRAINER_THREADS_AUTO on the cpu target.
  std::unique_ptr<thread_adapter> adapter;
  double last_step_seconds = 0;

  ~trainer_state() {
    loaded = loaded_program();
    if (quiet)
      std::fclose(quiet);
  }
};

// Live trainers by handle. Handles count up from 1 and are never reused,
// so a destroyed one stays invalid.
std::mutex registry_mutex;
std::unordered_map<uint64_t, std::shared_ptr<trainer_state>> registry;
uint64_t next_handle = 1;

tidalrt_status_t status_of(int code, const std::string &what,
                           const char *call) {
  tidalrt_status_code_t status_code =
      code == EXIT_BAD_INPUT ? TIDALRT_INVALID_ARGUMENT : TIDALRT_INTERNAL;
  return tidalrt_status_make(status_code, "%s: %s", call, what.c_str());
}

// Runs `body`, turning every exception into a status naming `call`.
template <typename F> tidalrt_status_t guarded(const char *call, F &&body) {
  try {
    body();
    return nullptr;
  } catch (const driver_error &e) {
    return status_of(e.exit_status(), e.what(), call);
  } catch (const std::bad_alloc &) {
    return tidalrt_status_make(TIDALRT_OUT_OF_MEMORY, "%s: out of memory",
                               call);
  } catch (const std::exception &e) {
    return tidalrt_status_make(TIDALRT_INTERNAL, "%s: internal error: %s", call,
                               e.what());
  }
}

// The trainer of `handle`, locked for the call; throws if there is none.
struct locked_trainer {
  std::shared_ptr<trainer_state> state;
  std::unique_lock<std::mutex> lock;
};

locked_trainer find(tidalrt_trainer_t handle) {
  std::shared_ptr<trainer_state> state;
  {
    std::lock_guard<std::mutex> guard(registry_mutex);
    auto it = registry.find(handle);
    if (it != registry.end())
      state = it->second;
  }
  if (!state)
    fail_input("trainer " + std::to_string(handle) +
               " does not exist (destroyed, or never created)");
  return {state, std::unique_lock<std::mutex>(state->mutex)};
}

std::string describe_view(const tidalrt_tensor_view_t &view) {
  std::string shape = "[";
  for (size_t i = 0; i < view.rank; ++i)
    shape += (i ? ", " : "") + std::to_string(view.dims[i]);
  return std::string(tidalrt_element_type_name(view.type)) + " " + shape + "]";
}

// Writes `inputs` into the data inputs of `function`: each exactly once,
// with the slot's dtype, shape and byte size.
void write_inputs(const function_info &function, function_memory &memory,
                  const tidalrt_tensor_view_t *inputs, size_t count) {
  std::vector<const tensor_slot *> slots = function.data_inputs();
  if (count && !inputs)
    fail_input("inputs is NULL");
  std::vector<bool> given(slots.size(), false);
  for (size_t i = 0; i < count; ++i) {
    const tidalrt_tensor_view_t &view = inputs[i];
    if (!view.name)
      fail_input("input " + std::to_string(i) + " has no name");
    size_t k = 0;
    while (k < slots.size() && slots[k]->name != view.name)
      ++k;
    if (k == slots.size()) {
      std::string names;
      for (const tensor_slot *slot : slots)
        names += (names.empty() ? "" : ", ") + slot->name;
      fail_input("no data input named '" + std::string(view.name) +
                 "' (the inputs are: " + names + ")");
    }
    const tensor_slot &slot = *slots[k];
    if (given[k])
      fail_input("input '" + slot.name + "' is given twice");
    given[k] = true;
    if (view.rank && !view.dims)
      fail_input("input '" + slot.name + "' has no dims");
    bool same = view.type == slot.type && view.rank == slot.shape.size();
    for (size_t d = 0; same && d < view.rank; ++d)
      same = view.dims[d] == slot.shape[d];
    if (!same)
      fail_input("input '" + slot.name + "' expects " +
                 describe_slot(slot, /*sample_dim=*/false) + ", got " +
                 describe_view(view));
    if (view.bytes != slot.bytes)
      fail_input("input '" + slot.name + "' is " + std::to_string(slot.bytes) +
                 " bytes, the buffer holds " + std::to_string(view.bytes));
    if (!view.data && view.bytes)
      fail_input("input '" + slot.name + "' has no data");
    memory.write(slot, view.data);
  }
  for (size_t k = 0; k < slots.size(); ++k)
    if (!given[k])
      fail_input("input '" + slots[k]->name + "' is missing");
}

const tensor_slot &persistent_slot(const manifest &m, const char *name) {
  if (!name)
    fail_input("name is NULL");
  const tensor_slot *slot = m.step.find_arg(name);
  if (!slot || !slot->is_persistent())
    fail_input("no parameter, state or optimizer state named '" +
               std::string(name) + "'");
  return *slot;
}

void check_buffer(const tensor_slot &slot, const void *data, size_t bytes) {
  if (bytes != slot.bytes)
    fail_input("'" + slot.name + "' (" + describe_slot(slot, false) + ") is " +
               std::to_string(slot.bytes) + " bytes, the buffer holds " +
               std::to_string(bytes));
  if (!data && bytes)
    fail_input("the buffer for '" + slot.name + "' is NULL");
}

} // namespace

} // namespace tidalrt_driver

using namespace tidalrt_driver;

extern "C" {

uint32_t tidalrt_trainer_abi_version(void) {
  return TIDALRT_TRAINER_ABI_VERSION;
}

tidalrt_status_t
tidalrt_trainer_create_program(const tidalrt_program_t *program,
                               const tidalrt_trainer_options_t *options,
                               tidalrt_trainer_t *out_trainer) {
  const char *call = "tidalrt_trainer_create";
  if (!out_trainer)
    return tidalrt_status_make(TIDALRT_INVALID_ARGUMENT,
                               "%s: out_trainer is NULL", call);
  *out_trainer = 0;
  if (options && options->struct_size < sizeof(tidalrt_trainer_options_t))
    return tidalrt_status_make(TIDALRT_INVALID_ARGUMENT,
                               "%s: options->struct_size is %zu, expected %zu "
                               "(set it to sizeof(tidalrt_trainer_options_t))",
                               call, options->struct_size,
                               sizeof(tidalrt_trainer_options_t));
  auto state = std::make_shared<trainer_state>();
  return guarded(call, [&] {
    if (!program)
      fail_input("no program");
    state->program = *program;
    state->info = parse_manifest(program->manifest, program->blob_size);
    if (state->info.forward_mode())
      fail_input("this program runs the forward pass of " + state->info.model +
                 " only (it was compiled without a loss): nothing to train");
    if (options) {
      if (options->threads < TIDALRT_TRAINER_THREADS_AUTO ||
          options->threads > 4096)
        fail_input("threads must be 0 (default) to 4096 or "
                   "TIDALRT_TRAINER_THREADS_AUTO (-1), got " +
                   std::to_string(options->threads));
      if (options->threads > 0)
        omp_set_num_threads(std::min(options->threads, omp_get_thread_limit()));
    }
    if (state->info.parallel_grain)
      tidalrt_set_parallel_grain(state->info.parallel_grain);
    if (options) {
      state->opts.seed = options->seed;
      if (options->init_path)
        state->opts.init = options->init_path;
    }
    state->quiet = std::fopen("/dev/null", "w");
    state->s = std::make_unique<session>(session{"tidal trainer", state->info,
                                                 state->program, state->opts,
                                                 state->quiet, state->quiet});
    // Kernels run on this count whichever thread calls step(). Adapting
    // ones start from the cores the process may use (another library in
    // the process, such as PyTorch, may have lowered OpenMP's count).
    bool adapt = options && options->threads == TIDALRT_TRAINER_THREADS_AUTO &&
                 !state->info.device_target();
    state->s->threads = adapt ? std::min(allowed_cpus(), omp_get_thread_limit())
                              : omp_get_max_threads();
    trace_recorder trace(false);
    state->loaded = load_program(*state->s, trace,
                                 /*evaluate=*/state->info.predict.has_value());
    state->steps = state->loaded.steps_done;
    if (adapt && state->s->threads > 1)
      state->adapter = std::make_unique<thread_adapter>(state->s->threads);
    std::lock_guard<std::mutex> guard(registry_mutex);
    *out_trainer = next_handle++;
    registry.emplace(*out_trainer, state);
  });
}

tidalrt_status_t tidalrt_trainer_destroy(tidalrt_trainer_t trainer) {
  std::shared_ptr<trainer_state> state;
  {
    std::lock_guard<std::mutex> guard(registry_mutex);
    auto it = registry.find(trainer);
    if (it == registry.end())
      return tidalrt_status_make(
          TIDALRT_INVALID_ARGUMENT,
          "tidalrt_trainer_destroy: trainer %llu does not exist (destroyed, "
          "or never created)",
          static_cast<unsigned long long>(trainer));
    state = std::move(it->second);
    registry.erase(it);
  }
  // Waits for a call in progress on another thread, then frees.
  std::lock_guard<std::mutex> wait(state->mutex);
  return nullptr;
}

tidalrt_status_t tidalrt_trainer_step(tidalrt_trainer_t trainer,
                                      const tidalrt_tensor_view_t *inputs,
                                      size_t input_count, float *out_loss) {
  return guarded("tidalrt_trainer_step", [&] {
    locked_trainer t = find(trainer);
    trainer_state &st = *t.state;
    program_runner &runner = *st.loaded.runner;
    function_memory &memory = runner.step_memory();
    write_inputs(st.info.step, memory, inputs, input_count);
    auto start = std::chrono::steady_clock::now();
    runner.run_step(st.steps);
    st.last_step_seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
            .count();
    if (st.adapter)
      st.adapter->after_step(runner);
    ++st.steps;
    const device_figures &figures = runner.step_device_figures();
    st.bytes_to_host += figures.bytes_to_host;
    st.bytes_to_device += figures.bytes_to_device;
    if (out_loss) {
      const tensor_slot *loss = st.info.step.loss_result();
      *out_loss = NAN;
      if (loss)
        memory.read(*loss, 0, out_loss, sizeof(float));
    }
  });
}

tidalrt_status_t tidalrt_trainer_predict(tidalrt_trainer_t trainer,
                                         const tidalrt_tensor_view_t *inputs,
                                         size_t input_count,
                                         const tidalrt_tensor_buffer_t *outputs,
                                         size_t output_count) {
  return guarded("tidalrt_trainer_predict", [&] {
    locked_trainer t = find(trainer);
    trainer_state &st = *t.state;
    if (!st.info.predict)
      fail_input("this program has no predict function");
    const function_info &predict = *st.info.predict;
    if (output_count && !outputs)
      fail_input("outputs is NULL");
    // Check the outputs before running anything.
    std::vector<const tensor_slot *> slots;
    for (size_t i = 0; i < output_count; ++i) {
      const char *name = outputs[i].name;
      const tensor_slot *slot = nullptr;
      for (const tensor_slot &result : predict.results)
        if (name && result.name == name)
          slot = &result;
      if (!slot) {
        std::string names;
        for (const tensor_slot &result : predict.results)
          names += (names.empty() ? "" : ", ") + result.name;
        fail_input("no result named '" + std::string(name ? name : "(null)") +
                   "' (the results are: " + names + ")");
      }
      check_buffer(*slot, outputs[i].data, outputs[i].bytes);
      slots.push_back(slot);
    }
    program_runner &runner = *st.loaded.runner;
    runner.sync_predict_from_step();
    function_memory &memory = runner.predict_memory();
    write_inputs(predict, memory, inputs, input_count);
    runner.run_predict(st.steps);
    for (size_t i = 0; i < output_count; ++i)
      memory.read(*slots[i], outputs[i].data);
  });
}

tidalrt_status_t tidalrt_trainer_read(tidalrt_trainer_t trainer,
                                      const char *name, void *dst,
                                      size_t bytes) {
  return guarded("tidalrt_trainer_read", [&] {
    locked_trainer t = find(trainer);
    const tensor_slot &slot = persistent_slot(t.state->info, name);
    check_buffer(slot, dst, bytes);
    t.state->loaded.runner->step_memory().read(slot, dst);
  });
}

tidalrt_status_t tidalrt_trainer_write(tidalrt_trainer_t trainer,
                                       const char *name, const void *src,
                                       size_t bytes) {
  return guarded("tidalrt_trainer_write", [&] {
    locked_trainer t = find(trainer);
    const tensor_slot &slot = persistent_slot(t.state->info, name);
    check_buffer(slot, src, bytes);
    t.state->loaded.runner->step_memory().write(slot, src);
  });
}

tidalrt_status_t tidalrt_trainer_save(tidalrt_trainer_t trainer,
                                      const char *path) {
  return guarded("tidalrt_trainer_save", [&] {
    locked_trainer t = find(trainer);
    if (!path || !*path)
      fail_input("no path");
    check_output_path("save", path);
    trainer_state &st = *t.state;
    std::deque<std::vector<uint8_t>> copies;
    slot_values values =
        persistent_values(st.info, st.loaded.runner->step_memory(), copies);
    st.loaded.model->save(values, st.steps, path);
  });
}

tidalrt_status_t tidalrt_trainer_load(tidalrt_trainer_t trainer,
                                      const char *path) {
  return guarded("tidalrt_trainer_load", [&] {
    locked_trainer t = find(trainer);
    if (!path || !*path)
      fail_input("no path");
    trainer_state &st = *t.state;
    std::unique_ptr<onnx_model> model = onnx_model::read(path);
    // Every value is read before any is written: a file that does not fit
    // leaves the trainer as it was.
    std::vector<std::pair<const tensor_slot *, std::vector<uint8_t>>> values;
    for (const tensor_slot &slot : st.info.step.args) {
      if (!slot.is_persistent())
        continue;
      std::vector<uint8_t> bytes(slot.bytes);
      if (model->load(slot, bytes.data()))
        values.emplace_back(&slot, std::move(bytes));
    }
    uint64_t steps = model->steps_done().value_or(st.steps);
    function_memory &memory = st.loaded.runner->step_memory();
    for (const auto &[slot, bytes] : values)
      memory.write(*slot, bytes.data());
    st.steps = steps;
  });
}

tidalrt_status_t tidalrt_trainer_counters(tidalrt_trainer_t trainer,
                                          tidalrt_trainer_counters_t *out) {
  return guarded("tidalrt_trainer_counters", [&] {
    if (!out)
      fail_input("out is NULL");
    // The first version of the struct ended at last_step_seconds.
    const size_t first =
        offsetof(tidalrt_trainer_counters_t, last_step_seconds) +
        sizeof(double);
    if (out->struct_size < first)
      fail_input("out->struct_size is " + std::to_string(out->struct_size) +
                 ", expected " +
                 std::to_string(sizeof(tidalrt_trainer_counters_t)) +
                 " (set it to sizeof(tidalrt_trainer_counters_t))");
    locked_trainer t = find(trainer);
    trainer_state &st = *t.state;
    size_t size = out->struct_size;
    std::memset(out, 0, std::min(size, sizeof(*out)));
    out->struct_size = size;
    if (size >= offsetof(tidalrt_trainer_counters_t, threads) + sizeof(int))
      out->threads = st.adapter ? st.adapter->threads() : st.s->threads;
    out->steps = st.steps;
    out->host_bytes = st.loaded.runner->host_bytes();
    out->device_peak_bytes = st.loaded.runner->step_device_figures().peak_bytes;
    out->bytes_to_host = st.bytes_to_host;
    out->bytes_to_device = st.bytes_to_device;
    out->last_step_seconds = st.last_step_seconds;
  });
}

} // extern "C"
