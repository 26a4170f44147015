// program.cpp - the functions' memory and devices, the context and calls
// into the compiled program.
#include "program.h"

#include "distributed.h"

#include "error.h"
#include "onnx_weights.h"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sys/stat.h>

namespace tidalrt_driver {

std::vector<update> find_updates(const function_info &function) {
  std::vector<update> updates;
  for (const tensor_slot &result : function.results) {
    const tensor_slot *arg = function.find_arg(result.name);
    if (arg && arg->is_persistent() &&
        (arg->host != result.host || arg->offset != result.offset))
      updates.push_back({&result, arg});
  }
  return updates;
}

namespace {

context_ptr make_context(const manifest &m, uint64_t seed) {
  tidalrt_context_options_t options;
  options.num_ops = m.ops.size();
  options.seed = seed;
  tidalrt_context_t *context = nullptr;
  tidalrt_status_t status = tidalrt_context_create(&options, &context);
  if (status)
    fail_runtime(take_message(status));
  return context_ptr(context);
}

// A device of `kind` and `bytes` bytes for the function `whose` ("step's")
// (on SIM, the link bandwidth from TIDAL_SIM_LINK_GBPS).
device_ptr make_device(tidalrt_device_kind_t kind, uint64_t bytes,
                       const char *whose) {
  tidalrt_device_options_t options;
  options.kind = kind;
  options.memory_bytes = bytes;
  options.link_gbps = 0;
  tidalrt_device_t *device = nullptr;
  tidalrt_status_t status = tidalrt_device_create(&options, &device);
  if (status) {
    // A malformed TIDAL_SIM_LINK_GBPS or TIDAL_CUDA_DEVICE is bad input;
    // no device (no GPU, no driver, no CUDA runtime linked in, too little
    // memory) is a runtime fault.
    bool bad_environment =
        tidalrt_status_code(status) == TIDALRT_INVALID_ARGUMENT;
    std::string message = take_message(status);
    if (bad_environment)
      fail_input(message);
    fail_runtime(std::string("cannot create the ") + whose + " " +
                 device_kind_name(kind) + " device of " +
                 std::to_string(bytes) + " bytes: " + message);
  }
  return device_ptr(device);
}

// Puts `function` on a device of `kind`: its arena becomes the (zeroed)
// device arena, with a (zeroed) host arena for copies and host slots,
// attached to `context`.
void attach_device(const function_info &function, tidalrt_device_kind_t kind,
                   const char *whose, tidalrt_context_t *context,
                   device_ptr &device, function_memory &memory) {
  device = make_device(kind, *function.device_bytes, whose);
  memory.attach(device.get(), function.arena_bytes, function.host_arena_bytes);
  tidalrt_status_t status = tidalrt_context_set_device(
      context, device.get(), memory.host_arena(), function.host_arena_bytes,
      static_cast<int64_t>(function.num_copies));
  if (status)
    fail_runtime(take_message(status));
}

// The device a device target's functions run on: the target's, unless
// TIDAL_DEVICE says `sim` or `cuda`. The generated program is the same for
// both, so TIDAL_DEVICE=sim runs a cuda executable's plan on the simulated
// device with the CPU kernels: the reference for comparing the GPU's
// kernels op by op (TIDAL_DUMP_DIR, scripts/compare_dumps.py).
tidalrt_device_kind_t device_kind(const manifest &m) {
  const char *kind = std::getenv("TIDAL_DEVICE");
  if (!kind || !*kind)
    return m.device_kind();
  if (std::strcmp(kind, "sim") == 0)
    return TIDALRT_DEVICE_SIM;
  if (std::strcmp(kind, "cuda") == 0)
    return TIDALRT_DEVICE_CUDA;
  fail_input(std::string("TIDAL_DEVICE must be 'sim' or 'cuda', not '") + kind +
             "'");
}

// TIDAL_DUMP_DIR: the folder (made if missing) and its ops.tsv, which names
// the op index of each dumped file (program_dump.cpp).
void prepare_dump_dir(const manifest &m) {
  const char *dir = std::getenv("TIDAL_DUMP_DIR");
  if (!dir || !*dir)
    return;
  if (mkdir(dir, 0777) != 0 && errno != EEXIST)
    fail_input(std::string("TIDAL_DUMP_DIR: cannot make ") + dir + ": " +
               std::strerror(errno));
  std::string path = std::string(dir) + "/ops.tsv";
  std::FILE *file = std::fopen(path.c_str(), "w");
  if (!file)
    fail_input("TIDAL_DUMP_DIR: cannot write " + path + ": " +
               std::strerror(errno));
  std::fprintf(file, "index\tkind\tname\n");
  for (size_t i = 0; i < m.ops.size(); ++i)
    std::fprintf(file, "%zu\t%s\t%s\n", i, m.ops[i].kind.c_str(),
                 m.ops[i].name.c_str());
  if (std::fclose(file) != 0)
    fail_input("TIDAL_DUMP_DIR: cannot write " + path + ": " +
               std::strerror(errno));
}

} // namespace

program_runner::program_runner(const manifest &manifest,
                               const tidalrt_program_t &program, uint64_t seed,
                               bool evaluate)
    : manifest_(manifest), program_(program),
      use_predict_(evaluate && manifest.predict.has_value()) {
  if (!program.step)
    fail_runtime("the program has no step function");
  if (manifest.predict && !program.predict)
    fail_runtime("the manifest lists a predict function the program lacks");
  context_ = make_context(manifest, seed);
  if (manifest.device_target())
    prepare_dump_dir(manifest);
  if (manifest.device_target())
    attach_device(manifest.step, device_kind(manifest), "step's",
                  context_.get(), step_device_, step_);
  else
    step_.allocate(manifest.step.arena_bytes);
  // The predict arena exists only for runs that evaluate.
  if (use_predict_) {
    const function_info &predict = *manifest.predict;
    if (manifest.device_target())
      predict_context_ = make_context(manifest, seed);
    if (predict.device_bytes)
      attach_device(predict, device_kind(manifest), "predict function's",
                    predict_context_.get(), predict_device_, predict_);
    else
      predict_.allocate(predict.arena_bytes);
  }
  step_updates_ = find_updates(manifest.step);
}

program_runner::~program_runner() = default;

void program_runner::set_comm(tidalrt_comm_t *comm) {
  comm_ = comm;
  tidalrt_context_set_comm(context_.get(), comm);
  // The step's device runs the collectives among the ranks' devices (CUDA:
  // NCCL, bootstrapped over `comm`); the predict function has none.
  if (comm && step_device_)
    if (tidalrt_status_t status =
            tidalrt_device_join_comm(step_device_.get(), comm, comm_timeout()))
      fail_runtime("cannot join the data-parallel run's devices: " +
                   take_message(status));
}

// A sharded optimizer's state: this rank's chunk of the whole tensor that
// --init (or a resumed checkpoint) holds, else zeros.
void program_runner::load_chunk(const tensor_slot &slot,
                                const onnx_model &model, const onnx_model *init,
                                function_memory &into) {
  tensor_slot full = slot.full();
  std::vector<uint8_t> whole(full.bytes);
  bool found = model.load(full, whole.data());
  if (init && init->load(full, whole.data()))
    found = true;
  const uint64_t c = slot.element_count(), n = full.element_count();
  const uint64_t rank =
      comm_ ? static_cast<uint64_t>(tidalrt_comm_rank(comm_)) : 0;
  const uint64_t begin = std::min(n, rank * c);
  const uint64_t len = found ? std::min(c, n - begin) : 0;
  const size_t width = tidalrt_element_type_size(slot.type);
  uint8_t *dst = into.begin_write(slot, /*keep=*/false);
  if (len)
    std::memcpy(dst, whole.data() + begin * width, len * width);
  std::memset(dst + len * width, 0, (c - len) * width);
  into.end_write(slot);
}

void program_runner::load_initial_values(const onnx_model &model,
                                         const onnx_model *init) {
  auto load = [&](const function_info &function, function_memory &into,
                  const function_info *already) {
    for (const tensor_slot &slot : function.args) {
      if (!slot.is_persistent())
        continue;
      // The predict function shares the step's values (copied before each
      // evaluation); only its own extra arguments are loaded here.
      if (already && already->find_arg(slot.name))
        continue;
      if (slot.sharded()) {
        load_chunk(slot, model, init, into);
        continue;
      }
      // A slot on a device is assembled in host memory, then written.
      uint8_t *dst = into.begin_write(slot, /*keep=*/true);
      bool found = model.load(slot, dst);
      if (!found && slot.role != "optimizer_state")
        fail_runtime(model.name() +
                     ": the compiled model has no initializer '" + slot.name +
                     "' (" + slot.role + ")");
      if (init && !init->load(slot, dst) && slot.role == "param")
        fail_input(init->name() + ": no initializer for the parameter '" +
                   slot.name + "' (" + describe_slot(slot) + ")");
      into.end_write(slot);
    }
  };
  load(manifest_.step, step_, nullptr);
  if (use_predict_)
    load(*manifest_.predict, predict_, &manifest_.step);
}

void program_runner::call(tidalrt_status_t (*fn)(tidalrt_context_t *,
                                                 uint8_t *),
                          tidalrt_context_t *context,
                          const function_memory &memory, const char *what) {
  tidalrt_device_t *device = memory.device();
  tidalrt_status_t status = fn(context, memory.base());
  if (device) {
    // The generated function ends with tidalrt_dev_synchronize; this also
    // covers a return before it (an enqueue error), after which enqueued
    // work may still run.
    tidalrt_status_t pending = tidalrt_device_synchronize(device);
    if (status)
      tidalrt_status_free(pending);
    else
      status = pending;
  }
  if (!status)
    return;
  std::string message = take_message(status);
  int64_t op = tidalrt_context_failed_op(context);
  if (op >= 0 && static_cast<uint64_t>(op) < manifest_.ops.size()) {
    const op_info &info = manifest_.ops[static_cast<size_t>(op)];
    fail_runtime(
        "op '" + (info.name.empty() ? "#" + std::to_string(op) : info.name) +
        "' (" + (info.kind.empty() ? "unknown" : info.kind) + "): " + message);
  }
  fail_runtime(std::string(what) + ": " + message);
}

void program_runner::prepare() {
  std::vector<tidalrt_context_t *> contexts = {context_.get()};
  if (use_predict_ && predict_context_)
    contexts.push_back(predict_context_.get());
  for (tidalrt_context_t *context : contexts)
    tidalrt_context_begin_prepare(context);
  try {
    call(program_.step, context_.get(), step_, "step");
    if (use_predict_)
      call(program_.predict, predict_context(), predict_, "predict");
  } catch (...) {
    // Leave preparation mode even on failure; the context is freed later.
    for (tidalrt_context_t *context : contexts)
      tidalrt_status_free(tidalrt_context_end_prepare(context));
    throw;
  }
  for (tidalrt_context_t *context : contexts) {
    tidalrt_status_t status = tidalrt_context_end_prepare(context);
    if (status)
      fail_runtime(take_message(status));
  }
}

void program_runner::set_threads(int threads) {
  bool unprepared = false;
  std::vector<tidalrt_context_t *> contexts = {context_.get()};
  if (predict_context_)
    contexts.push_back(predict_context_.get());
  for (tidalrt_context_t *context : contexts) {
    tidalrt_status_t status = tidalrt_context_set_threads(context, threads);
    if (status)
      fail_runtime(take_message(status));
    unprepared = unprepared || !tidalrt_context_prepared(context);
  }
  if (unprepared)
    prepare();
}

void program_runner::run_step(uint64_t step) {
  tidalrt_context_set_step(context_.get(), step);
  tidalrt_device_t *device = step_device_.get();
  if (device)
    tidalrt_device_reset_stats(device);
  call(program_.step, context_.get(), step_, "step");
  if (device) {
    tidalrt_device_stats_t stats;
    tidalrt_device_stats(device, &stats);
    figures_.peak_bytes = stats.peak_device_bytes;
    figures_.bytes_to_host = stats.bytes_to_host;
    figures_.bytes_to_device = stats.bytes_to_device;
    figures_.copy_seconds = stats.copy_seconds;
    figures_.copy_stall_seconds = stats.compute_wait_seconds;
  }
  for (const update &u : step_updates_)
    step_.copy(*u.arg, step_, *u.result);
}

void program_runner::sync_predict_from_step() {
  for (const tensor_slot &slot : manifest_.predict->args) {
    if (!slot.is_persistent())
      continue;
    const tensor_slot *source = manifest_.step.find_arg(slot.name);
    if (!source)
      continue;
    if (source->type != slot.type || source->shape != slot.shape)
      fail_runtime("predict argument '" + slot.name + "' is " +
                   describe_slot(slot) + " but the step's is " +
                   describe_slot(*source));
    predict_.copy(slot, step_, *source);
  }
}

void program_runner::run_predict(uint64_t step) {
  tidalrt_context_set_step(predict_context(), step);
  call(program_.predict, predict_context(), predict_, "predict");
}

uint64_t program_runner::host_bytes() const {
  uint64_t bytes = step_.host_bytes() + predict_.host_bytes() +
                   tidalrt_context_scratch_bytes(context_.get());
  if (predict_context_)
    bytes += tidalrt_context_scratch_bytes(predict_context_.get());
  return bytes;
}

} // namespace tidalrt_driver
