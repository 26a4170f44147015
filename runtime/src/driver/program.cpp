// program.cpp - arenas, the context and calls into the compiled program.
#include "program.h"

#include "error.h"
#include "onnx_weights.h"

#include <cstdlib>
#include <cstring>

namespace tidalrt_driver {

arena::arena(uint64_t bytes) {
  uint64_t rounded = (bytes + TIDALRT_ARRAY_ALIGNMENT - 1) /
                     TIDALRT_ARRAY_ALIGNMENT * TIDALRT_ARRAY_ALIGNMENT;
  if (rounded == 0)
    rounded = TIDALRT_ARRAY_ALIGNMENT;
  if (rounded < bytes || rounded > SIZE_MAX)
    fail_runtime("cannot allocate an arena of " + std::to_string(bytes) +
                 " bytes");
  bytes_ = static_cast<uint8_t *>(std::aligned_alloc(
      TIDALRT_ARRAY_ALIGNMENT, static_cast<size_t>(rounded)));
  if (!bytes_)
    fail_runtime("cannot allocate the " + std::to_string(bytes) +
                 "-byte arena: out of memory");
  std::memset(bytes_, 0, static_cast<size_t>(rounded));
  size_ = bytes;
}

arena::~arena() { std::free(bytes_); }

arena::arena(arena &&other) noexcept
    : bytes_(other.bytes_), size_(other.size_) {
  other.bytes_ = nullptr;
  other.size_ = 0;
}

arena &arena::operator=(arena &&other) noexcept {
  if (this != &other) {
    std::free(bytes_);
    bytes_ = other.bytes_;
    size_ = other.size_;
    other.bytes_ = nullptr;
    other.size_ = 0;
  }
  return *this;
}

std::vector<update> find_updates(const function_info &function) {
  std::vector<update> updates;
  for (const tensor_slot &result : function.results) {
    const tensor_slot *arg = function.find_arg(result.name);
    if (arg && arg->is_persistent() && arg->offset != result.offset)
      updates.push_back({&result, arg});
  }
  return updates;
}

program_runner::program_runner(const manifest &manifest,
                               const tidalrt_program_t &program, uint64_t seed,
                               bool evaluate)
    : manifest_(manifest), program_(program),
      use_predict_(evaluate && manifest.predict.has_value()) {
  if (!program.step)
    fail_runtime("the program has no step function");
  if (manifest.predict && !program.predict)
    fail_runtime("the manifest lists a predict function the program lacks");
  tidalrt_context_options_t options;
  options.num_ops = manifest.ops.size();
  options.seed = seed;
  tidalrt_status_t status = tidalrt_context_create(&options, &context_);
  if (status)
    fail_runtime(take_message(status));
  step_ = arena(manifest.step.arena_bytes);
  // The predict arena exists only for runs that evaluate.
  if (use_predict_)
    predict_ = arena(manifest.predict->arena_bytes);
  step_updates_ = find_updates(manifest.step);
}

program_runner::~program_runner() { tidalrt_context_free(context_); }

void program_runner::load_initial_values(const onnx_model &model,
                                         const onnx_model *init) {
  auto load = [&](const function_info &function, const arena &into,
                  const function_info *already) {
    for (const tensor_slot &slot : function.args) {
      if (!slot.is_persistent())
        continue;
      // The predict function shares the step's values (copied before each
      // evaluation); only its own extra arguments are loaded here.
      if (already && already->find_arg(slot.name))
        continue;
      uint8_t *dst = into.at(slot);
      bool found = model.load(slot, dst);
      if (!found && slot.role != "optimizer_state")
        fail_runtime(model.name() +
                     ": the compiled model has no initializer '" + slot.name +
                     "' (" + slot.role + ")");
      if (init && !init->load(slot, dst) && slot.role == "param")
        fail_input(init->name() + ": no initializer for the parameter '" +
                   slot.name + "' (" + describe_slot(slot) + ")");
    }
  };
  load(manifest_.step, step_, nullptr);
  if (use_predict_)
    load(*manifest_.predict, predict_, &manifest_.step);
}

void program_runner::call(tidalrt_status_t (*fn)(tidalrt_context_t *,
                                                 uint8_t *),
                          uint8_t *memory, const char *what) {
  tidalrt_status_t status = fn(context_, memory);
  if (!status)
    return;
  std::string message = take_message(status);
  int64_t op = tidalrt_context_failed_op(context_);
  if (op >= 0 && static_cast<uint64_t>(op) < manifest_.ops.size()) {
    const op_info &info = manifest_.ops[static_cast<size_t>(op)];
    fail_runtime(
        "op '" + (info.name.empty() ? "#" + std::to_string(op) : info.name) +
        "' (" + (info.kind.empty() ? "unknown" : info.kind) + "): " + message);
  }
  fail_runtime(std::string(what) + ": " + message);
}

void program_runner::prepare() {
  tidalrt_context_begin_prepare(context_);
  try {
    call(program_.step, step_.data(), "step");
    if (use_predict_)
      call(program_.predict, predict_.data(), "predict");
  } catch (...) {
    // Leave preparation mode even on failure; the context is freed later.
    tidalrt_status_free(tidalrt_context_end_prepare(context_));
    throw;
  }
  tidalrt_status_t status = tidalrt_context_end_prepare(context_);
  if (status)
    fail_runtime(take_message(status));
}

void program_runner::run_step(uint64_t step) {
  tidalrt_context_set_step(context_, step);
  call(program_.step, step_.data(), "step");
  for (const update &u : step_updates_)
    std::memmove(step_.at(*u.arg), step_.at(*u.result), u.arg->bytes);
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
    std::memcpy(predict_.at(slot), step_.at(*source), slot.bytes);
  }
}

void program_runner::run_predict(uint64_t step) {
  tidalrt_context_set_step(context_, step);
  call(program_.predict, predict_.data(), "predict");
}

uint64_t program_runner::host_bytes() const {
  return step_.size() + predict_.size() +
         tidalrt_context_scratch_bytes(context_);
}

} // namespace tidalrt_driver
