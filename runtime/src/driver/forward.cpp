// forward.cpp - forward mode: run the compiled forward pass over every
// sample and write each result to --output-dir as NAME.npy.
#include "data.h"
#include "error.h"
#include "file_util.h"
#include "progress.h"
#include "session.h"
#include "step_log.h"
#include "thread_adapter.h"
#include "trace.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <optional>
#include <set>

namespace tidalrt_driver {

std::string sanitize_file_name(const std::string &name) {
  std::string out = name.empty() ? "_" : name;
  for (char &c : out)
    if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
          (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-'))
      c = '_';
  if (out == "." || out == "..")
    out = std::string(out.size(), '_');
  return out;
}

namespace {

using clock_type = std::chrono::steady_clock;

struct output_buffer {
  const tensor_slot *slot;
  // Whether dim 0 is the batch: rows are gathered from every batch.
  bool batched;
  size_t row_bytes;
  std::vector<uint8_t> data;
  std::string path;
};

// The arrays of the --input files when each holds exactly its argument's
// shape and type: the form of the ONNX node tests, whose inputs need not
// share a leading dimension (or have one). Such inputs run once, unbatched.
// Empty when any input is missing, unreadable or batch-shaped; the batched
// path then reports what is wrong.
std::vector<array_ptr> exact_inputs(const manifest &m, const options &o) {
  std::vector<array_ptr> arrays;
  for (const tensor_slot *slot : m.step.data_inputs()) {
    const std::string *path = nullptr;
    for (const auto &[name, file] : o.inputs)
      if (name == slot->name)
        path = &file;
    tidalrt_array_t *array = nullptr;
    if (!path)
      return {};
    if (tidalrt_status_t status = tidalrt_npy_map(path->c_str(), &array)) {
      tidalrt_status_free(status);
      return {};
    }
    array_ptr owned(array);
    const int64_t *dims = tidalrt_array_dims(array);
    if (tidalrt_array_element_type(array) != slot->type ||
        tidalrt_array_rank(array) != slot->shape.size() ||
        !std::equal(slot->shape.begin(), slot->shape.end(), dims))
      return {};
    arrays.push_back(std::move(owned));
  }
  if (arrays.empty() || o.inputs.size() != arrays.size())
    return {};
  return arrays;
}

} // namespace

int run_forward(const session &s) {
  namespace fs = std::filesystem;
  const manifest &m = s.info;
  const options &o = s.opts;
  std::vector<array_ptr> exact = exact_inputs(m, o);
  bool whole = !exact.empty();
  data_set data;
  if (!whole)
    data = load_data(m.step.data_inputs(), o.inputs, "--input", m, &s.program,
                     m.batch_size,
                     /*need_full_batch=*/false);
  std::error_code error;
  fs::create_directories(o.output_dir, error);
  if (error || !fs::is_directory(o.output_dir))
    fail_input("--output-dir " + o.output_dir + ": cannot create: " +
               (error ? error.message() : errno_message(ENOTDIR)));
  if (!o.trace.empty())
    check_output_path("--trace", o.trace);
  step_log log(o.log);
  trace_recorder trace(!o.trace.empty());

  loaded_program loaded = load_program(s, trace, !s.opts.eval_inputs.empty());
  program_runner &runner = *loaded.runner;

  uint64_t batch = static_cast<uint64_t>(m.batch_size);
  uint64_t samples = data.inputs.empty() ? batch : data.samples;
  if (whole)
    samples = batch;
  uint64_t batches = (samples + batch - 1) / batch;

  // Every result but the new values of persistent arguments is an output.
  std::vector<output_buffer> outputs;
  std::set<std::string> files;
  for (const tensor_slot &result : m.step.results) {
    const tensor_slot *arg = m.step.find_arg(result.name);
    if (arg && arg->is_persistent())
      continue;
    output_buffer out;
    out.slot = &result;
    out.batched = !whole && !result.shape.empty() &&
                  result.shape[0] == static_cast<int64_t>(batch);
    out.row_bytes = out.batched ? result.bytes / batch : result.bytes;
    out.data.resize(out.batched ? out.row_bytes * samples : result.bytes);
    std::string file = sanitize_file_name(result.name);
    std::string unique = file;
    for (int n = 2; !files.insert(unique).second; ++n)
      unique = file + "_" + std::to_string(n);
    out.path = (fs::path(o.output_dir) / (unique + ".npy")).string();
    outputs.push_back(std::move(out));
  }

  const tensor_slot *loss_slot = m.step.loss_result();
  function_memory &memory = runner.step_memory();
  const std::vector<const tensor_slot *> slots = m.step.data_inputs();
  uint64_t host_bytes = runner.host_bytes();
  progress_bar progress(s.err, !o.quiet, batches, "batches");
  std::vector<uint64_t> rows(batch);
  double step_ms_sum = 0;
  // --threads auto: the count follows the load (thread_adapter.h).
  std::optional<thread_adapter> governor;
  if (s.adaptive_threads)
    governor.emplace(s.threads);
  trace.threads(trace.now_us(), s.threads);
  auto loop_start = clock_type::now();
  try {
    for (uint64_t b = 0; b < batches; ++b) {
      double trace_start = trace.now_us();
      trace.host_bytes(trace_start, host_bytes);
      auto start = clock_type::now();
      uint64_t first = b * batch;
      uint64_t count = std::min(batch, samples - first);
      for (uint64_t i = 0; i < count; ++i)
        rows[i] = first + i;
      for (const data_input &input : data.inputs)
        memory.write_rows(input, rows.data(), count, m.batch_size);
      for (size_t i = 0; whole && i < exact.size(); ++i)
        memory.write(*slots[i], tidalrt_array_data(exact[i].get()));
      runner.run_step(b);
      // A partial batch's padding rows are not read.
      for (output_buffer &out : outputs) {
        if (out.batched)
          memory.read(*out.slot, 0, out.data.data() + first * out.row_bytes,
                      count * out.row_bytes);
        else
          memory.read(*out.slot, out.data.data());
      }
      double ms =
          std::chrono::duration<double, std::milli>(clock_type::now() - start)
              .count();
      step_ms_sum += ms;
      double loss = NAN;
      if (loss_slot) {
        float value;
        memory.read(*loss_slot, 0, &value, sizeof(value));
        loss = value;
      }
      // From the trace's own clock at both ends, as the training step's.
      trace.complete("batch " + std::to_string(b + 1), "step", trace_start,
                     trace.now_us() - trace_start);
      const device_figures &figures = runner.step_device_figures();
      log.write(b + 1, loss, ms, host_bytes, figures.peak_bytes,
                figures.bytes_to_host, figures.bytes_to_device,
                figures.copy_seconds, figures.copy_stall_seconds,
                governor ? governor->threads() : s.threads);
      if (governor && governor->after_step(runner))
        trace.threads(trace.now_us(), governor->threads());
      progress.update(b + 1, loss);
    }
  } catch (const driver_error &e) {
    if (e.exit_status() == EXIT_RUNTIME_FAULT && trace.enabled()) {
      progress.clear();
      try {
        trace.write(o.trace, s.program_name);
      } catch (const driver_error &) {
      }
    }
    throw;
  }
  double loop_seconds =
      std::chrono::duration<double>(clock_type::now() - loop_start).count();
  progress.clear();
  log.close();

  for (const output_buffer &out : outputs) {
    std::vector<int64_t> dims = out.slot->shape;
    if (out.batched)
      dims[0] = static_cast<int64_t>(samples);
    check_status(tidalrt_npy_write_data(out.path.c_str(), out.slot->type,
                                        dims.size(), dims.data(),
                                        out.data.data()),
                 "output '" + out.slot->name + "'");
  }
  if (trace.enabled())
    trace.write(o.trace, s.program_name);

  std::fprintf(s.out, "batches %llu\n",
               static_cast<unsigned long long>(batches));
  std::fprintf(s.out, "samples %llu\n",
               static_cast<unsigned long long>(samples));
  std::fprintf(
      s.out, "mean_step_ms %s\n",
      text_number(batches ? step_ms_sum / static_cast<double>(batches) : NAN)
          .c_str());
  std::fprintf(s.out, "samples_per_s %s\n",
               text_number(loop_seconds > 0
                               ? static_cast<double>(samples) / loop_seconds
                               : NAN)
                   .c_str());
  for (const output_buffer &out : outputs)
    std::fprintf(s.out, "output %s\n", out.path.c_str());
  std::fflush(s.out);
  return EXIT_OK;
}

} // namespace tidalrt_driver
