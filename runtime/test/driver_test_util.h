// driver_test_util.h - fake compiled programs for the driver's tests: a
// manifest built here, a tiny ONNX model, and step functions written in C++.
#ifndef TIDALRT_TEST_DRIVER_TEST_UTIL_H
#define TIDALRT_TEST_DRIVER_TEST_UTIL_H

#include "driver.h"
#include "test_util.h"

#include <nlohmann/json.hpp>
#include <onnx/onnx_pb.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

// Internal context accessors (runtime/src/cpu/context.cpp): a fake step,
// like a kernel, reads no data while the context is preparing.
namespace tidalrt {
bool preparing(const tidalrt_context_t *ctx);
uint64_t step(const tidalrt_context_t *ctx);
} // namespace tidalrt

namespace driver_test {

using json = nlohmann::ordered_json;

struct slot_spec {
  std::string name;
  std::string role;
  std::string dtype;
  std::vector<int64_t> shape;
};

inline uint64_t dtype_size(const std::string &dtype) {
  if (dtype == "float64" || dtype == "int64")
    return 8;
  if (dtype == "bool" || dtype == "uint8" || dtype == "int8")
    return 1;
  return 4;
}

// A function's arena layout: every slot at a 64-byte aligned offset.
struct function_layout {
  std::map<std::string, uint64_t> args;
  std::map<std::string, uint64_t> results;
  uint64_t arena_bytes = 0;
  json description;
};

inline function_layout layout_function(const std::vector<slot_spec> &args,
                                       const std::vector<slot_spec> &results) {
  function_layout layout;
  json arg_list = json::array(), result_list = json::array();
  uint64_t next = 0;
  auto place = [&](const slot_spec &spec, json &list,
                   std::map<std::string, uint64_t> &offsets) {
    uint64_t bytes = dtype_size(spec.dtype);
    for (int64_t dim : spec.shape)
      bytes *= static_cast<uint64_t>(dim);
    offsets[spec.name] = next;
    list.push_back({{"name", spec.name},
                    {"role", spec.role},
                    {"dtype", spec.dtype},
                    {"shape", spec.shape},
                    {"offset", next},
                    {"bytes", bytes}});
    next += (bytes + 63) / 64 * 64;
  };
  for (const slot_spec &spec : args)
    place(spec, arg_list, layout.args);
  for (const slot_spec &spec : results)
    place(spec, result_list, layout.results);
  layout.arena_bytes = next;
  layout.description = {
      {"arena_bytes", next}, {"args", arg_list}, {"results", result_list}};
  return layout;
}

// A program: the manifest text, the blob (the ONNX model, then embedded
// .npy images) and the functions.
struct fake_program {
  json manifest;
  std::string manifest_text;
  std::vector<unsigned char> blob;
  tidalrt_program_t program{};

  void set_model(const onnx::ModelProto &model) {
    std::string bytes = model.SerializeAsString();
    blob.assign(bytes.begin(), bytes.end());
    manifest["model_blob"] = {{"offset", 0}, {"size", bytes.size()}};
    manifest["embedded"] = json::array();
  }
  void embed(const std::string &name, const std::string &npy) {
    while (blob.size() % 64)
      blob.push_back(0);
    manifest["embedded"].push_back(
        {{"name", name}, {"offset", blob.size()}, {"size", npy.size()}});
    blob.insert(blob.end(), npy.begin(), npy.end());
  }
  const tidalrt_program_t *get() {
    manifest_text = manifest.dump(2);
    program.manifest = manifest_text.c_str();
    program.blob = blob.data();
    program.blob_size = blob.size();
    return &program;
  }
};

inline onnx::TensorProto *add_initializer(onnx::GraphProto *graph,
                                          const std::string &name, int type,
                                          const std::vector<int64_t> &dims) {
  onnx::TensorProto *tensor = graph->add_initializer();
  tensor->set_name(name);
  tensor->set_data_type(type);
  for (int64_t dim : dims)
    tensor->add_dims(dim);
  return tensor;
}

// The bytes of a .npy file holding `data` of `type` and shape `dims`.
inline std::string npy_bytes(tidalrt_element_type_t type,
                             const std::vector<int64_t> &dims,
                             const void *data) {
  char name[] = "/tmp/tidalrt-driver-npy-XXXXXX";
  int fd = mkstemp(name);
  EXPECT_GE(fd, 0);
  close(fd);
  EXPECT_TRUE(tidalrt_test::is_ok(
      tidalrt_npy_write_data(name, type, dims.size(), dims.data(), data)));
  std::ifstream in(name, std::ios::binary);
  std::ostringstream bytes;
  bytes << in.rdbuf();
  std::remove(name);
  return bytes.str();
}

inline void write_file(const std::string &path, const std::string &bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

inline std::string read_file(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

inline void write_npy(const std::string &path, tidalrt_element_type_t type,
                      const std::vector<int64_t> &dims, const void *data) {
  ASSERT_TRUE(tidalrt_test::is_ok(tidalrt_npy_write_data(
      path.c_str(), type, dims.size(), dims.data(), data)));
}

inline std::vector<float> read_npy_floats(const std::string &path,
                                          std::vector<int64_t> *dims) {
  tidalrt_array_t *array = nullptr;
  EXPECT_TRUE(tidalrt_test::is_ok(tidalrt_npy_read(path.c_str(), &array)));
  if (!array)
    return {};
  const int64_t *d = tidalrt_array_dims(array);
  dims->assign(d, d + tidalrt_array_rank(array));
  const float *data =
      static_cast<const float *>(tidalrt_array_const_data(array));
  std::vector<float> values(data, data + tidalrt_array_element_count(array));
  tidalrt_array_free(array);
  return values;
}

// What a run of the driver printed and returned.
struct run_result {
  int status = -1;
  std::string out;
  std::string err;
};

inline std::string slurp(std::FILE *file) {
  std::fflush(file);
  std::rewind(file);
  std::string text;
  char buffer[4096];
  size_t n;
  while ((n = std::fread(buffer, 1, sizeof(buffer), file)) > 0)
    text.append(buffer, n);
  std::fclose(file);
  return text;
}

inline run_result run_driver(const tidalrt_program_t *program,
                             const std::vector<std::string> &args) {
  std::vector<std::string> words = {"prog"};
  words.insert(words.end(), args.begin(), args.end());
  std::vector<char *> argv;
  for (std::string &word : words)
    argv.push_back(word.data());
  argv.push_back(nullptr);
  std::FILE *out = std::tmpfile();
  std::FILE *err = std::tmpfile();
  run_result result;
  result.status = tidalrt_driver::run(static_cast<int>(words.size()),
                                      argv.data(), program, out, err);
  result.out = slurp(out);
  result.err = slurp(err);
  return result;
}

// The lines of `text`.
inline std::vector<std::string> lines(const std::string &text) {
  std::vector<std::string> result;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line))
    result.push_back(line);
  return result;
}

// The stdout summary without its timings, nor --threads auto's team sizes
// (the cpu target's governor follows the machine's load; the sim target
// has none).
inline std::string untimed(const std::string &out) {
  std::string kept;
  for (const std::string &line : lines(out))
    if (line.rfind("mean_step_ms ", 0) != 0 &&
        line.rfind("samples_per_s ", 0) != 0 &&
        line.rfind("threads_mean ", 0) != 0 &&
        line.rfind("thread_changes ", 0) != 0)
      kept += line + "\n";
  return kept;
}

// The objects of a JSON Lines file (--log).
inline std::vector<json> read_jsonl(const std::string &path) {
  std::vector<json> result;
  for (const std::string &line : lines(read_file(path)))
    result.push_back(json::parse(line));
  return result;
}

//===----------------------------------------------------------------------===
// The linear model: pred = x . w, loss = mean((pred - y)^2), SGD with
// momentum; a state `seen` (samples seen) and a constant `two` (int64).
//===----------------------------------------------------------------------===

struct linear_model {
  int64_t batch = 4;
  float lr = 0.05f;
  float momentum = 0.9f;
  function_layout step;
  // Injected failures: the index of the (non-preparing) call that fails,
  // the op it names; or failing while preparing.
  int64_t fail_call = -1;
  int64_t fail_op = 1;
  bool fail_prepare = false;
  // Calls from this index (up to nan_until, exclusive) return a NaN loss;
  // calls from nan_weight_from on write a NaN into w[1] (the loss stays
  // finite).
  int64_t nan_from = -1;
  int64_t nan_until = INT64_MAX;
  int64_t nan_weight_from = -1;
  // What the step saw.
  int prepare_calls = 0;
  std::vector<uint64_t> steps;
  std::vector<std::vector<float>> x0; // x[:, 0] per call
  std::vector<float> losses;
  std::vector<float> last_w;
  std::vector<std::vector<float>> w_in; // w as each call found it
};

inline linear_model &linear() {
  static linear_model model;
  return model;
}

inline tidalrt_status_t linear_step(tidalrt_context_t *ctx, uint8_t *arena) {
  linear_model &m = linear();
  if (tidalrt::preparing(ctx)) {
    ++m.prepare_calls;
    if (m.fail_prepare) {
      tidalrt_context_fail_at(ctx, m.fail_op);
      return tidalrt_status_make(TIDALRT_OUT_OF_MEMORY, "injected prepare");
    }
    return nullptr;
  }
  int64_t call = static_cast<int64_t>(m.steps.size());
  m.steps.push_back(tidalrt::step(ctx));
  if (call == m.fail_call) {
    tidalrt_context_fail_at(ctx, m.fail_op);
    return tidalrt_status_make(TIDALRT_INTERNAL, "injected failure");
  }
  auto arg = [&](const char *name) { return arena + m.step.args.at(name); };
  auto result = [&](const char *name) {
    return arena + m.step.results.at(name);
  };
  const float *x = reinterpret_cast<const float *>(arg("x"));
  const float *y = reinterpret_cast<const float *>(arg("y"));
  const float *w = reinterpret_cast<const float *>(arg("w"));
  const float *buf = reinterpret_cast<const float *>(arg("w.momentum_buffer"));
  const int64_t *opt_step =
      reinterpret_cast<const int64_t *>(arg("optimizer.step"));
  const float *seen = reinterpret_cast<const float *>(arg("seen"));
  const int64_t *two = reinterpret_cast<const int64_t *>(arg("two"));
  std::vector<float> column;
  float loss = 0, g0 = 0, g1 = 0;
  for (int64_t b = 0; b < m.batch; ++b) {
    column.push_back(x[2 * b]);
    float r = x[2 * b] * w[0] + x[2 * b + 1] * w[1] - y[b];
    loss += r * r;
    g0 += r * x[2 * b];
    g1 += r * x[2 * b + 1];
  }
  float scale = static_cast<float>(*two) / static_cast<float>(m.batch);
  loss /= static_cast<float>(m.batch);
  if (m.nan_from >= 0 && call >= m.nan_from && call < m.nan_until)
    loss = std::copysign(NAN, -1.0f); // as x86 makes it: printf says -nan
  m.w_in.push_back({w[0], w[1]});
  float *w_new = reinterpret_cast<float *>(result("w"));
  float *buf_new = reinterpret_cast<float *>(result("w.momentum_buffer"));
  float grad[2] = {g0 * scale, g1 * scale};
  for (int j = 0; j < 2; ++j) {
    buf_new[j] = m.momentum * buf[j] + grad[j];
    w_new[j] = w[j] - m.lr * buf_new[j];
  }
  if (m.nan_weight_from >= 0 && call >= m.nan_weight_from)
    w_new[1] = NAN;
  *reinterpret_cast<float *>(result("loss")) = loss;
  *reinterpret_cast<int64_t *>(result("optimizer.step")) = *opt_step + 1;
  *reinterpret_cast<float *>(result("seen")) =
      *seen + static_cast<float>(m.batch);
  m.x0.push_back(column);
  m.losses.push_back(loss);
  m.last_w.assign(w_new, w_new + 2);
  return nullptr;
}

// The initial weights of the linear model's ONNX file.
inline const float *linear_initial_w() {
  static const float w[2] = {0.5f, -0.25f};
  return w;
}

inline onnx::ModelProto linear_onnx(bool with_momentum_buffer = false) {
  onnx::ModelProto model;
  model.set_ir_version(8);
  model.set_producer_name("driver_test");
  model.add_opset_import()->set_version(17);
  onnx::GraphProto *graph = model.mutable_graph();
  graph->set_name("linear");
  auto *input = graph->add_input();
  input->set_name("x");
  auto *node = graph->add_node();
  node->set_op_type("MatMul");
  node->add_input("x");
  node->add_input("w");
  node->add_output("pred");
  graph->add_output()->set_name("pred");
  // w in the typed field, seen as raw data, two as int64_data.
  onnx::TensorProto *w =
      add_initializer(graph, "w", onnx::TensorProto::FLOAT, {2});
  w->add_float_data(linear_initial_w()[0]);
  w->add_float_data(linear_initial_w()[1]);
  float seen = 0;
  add_initializer(graph, "seen", onnx::TensorProto::FLOAT, {1})
      ->set_raw_data(&seen, sizeof(seen));
  add_initializer(graph, "two", onnx::TensorProto::INT64, {})
      ->add_int64_data(2);
  if (with_momentum_buffer) {
    onnx::TensorProto *buf = add_initializer(graph, "w.momentum_buffer",
                                             onnx::TensorProto::FLOAT, {2});
    buf->add_float_data(0);
    buf->add_float_data(0);
  }
  return model;
}

inline json base_manifest(const char *mode, int64_t batch) {
  return {{"format", 1},
          {"model", "linear.onnx"},
          {"mode", mode},
          {"loss", "output"},
          {"batch_size", batch},
          {"num_ops", 3},
          {"ops",
           {{{"name", "/MatMul"}, {"kind", "matmul"}},
            {{"name", "/fc/Gemm"}, {"kind", "gemm"}},
            {{"name", "/sgd"}, {"kind", "sgd_momentum_update"}}}},
          {"optimizer", {{"name", "sgd"}, {"lr", 0.05}, {"momentum", 0.9}}}};
}

// Resets the linear model's record and builds its program (batch size
// `batch`).
inline void make_linear_program(fake_program &p, int64_t batch = 4) {
  linear_model &m = linear();
  m = linear_model();
  m.batch = batch;
  m.step =
      layout_function({{"x", "input", "float32", {batch, 2}},
                       {"y", "input", "float32", {batch}},
                       {"w", "param", "float32", {2}},
                       {"w.momentum_buffer", "optimizer_state", "float32", {2}},
                       {"optimizer.step", "optimizer_state", "int64", {}},
                       {"seen", "state", "float32", {1}},
                       {"two", "constant", "int64", {}}},
                      {{"loss", "loss", "float32", {}},
                       {"w", "param", "float32", {2}},
                       {"w.momentum_buffer", "optimizer_state", "float32", {2}},
                       {"optimizer.step", "optimizer_state", "int64", {}},
                       {"seen", "state", "float32", {1}}});
  p.manifest = base_manifest("train", batch);
  p.set_model(linear_onnx());
  p.manifest["functions"] = {{"step", m.step.description}};
  p.program.step = linear_step;
  p.program.predict = nullptr;
}

// Data for the linear model: x[i] = (i/16, 1 - i/32), y[i] = 1 + i/8; a
// sample's index is x[i][0] * 16 (see row_of).
inline void linear_data(int64_t samples, std::vector<float> *x,
                        std::vector<float> *y) {
  x->clear();
  y->clear();
  for (int64_t i = 0; i < samples; ++i) {
    x->push_back(static_cast<float>(i) / 16);
    x->push_back(1.0f - static_cast<float>(i) / 32);
    y->push_back(1.0f + static_cast<float>(i) / 8);
  }
}

inline std::vector<int64_t> rows_of(const std::vector<float> &x0) {
  std::vector<int64_t> rows;
  for (float v : x0)
    rows.push_back(static_cast<int64_t>(std::lround(v * 16)));
  return rows;
}

//===----------------------------------------------------------------------===
// The linear model on a device target: its step as generated device code.
//===----------------------------------------------------------------------===

// Op 0 computes everything (linear_step over the whole arena), then the new
// w is offloaded (copy 0), op 1 overwrites its device bytes, and w is
// prefetched back (copy 1).
inline tidalrt_status_t linear_kernel(tidalrt_context_t *ctx, const int64_t *,
                                      void *const *buffers) {
  return linear_step(ctx, static_cast<uint8_t *>(buffers[0]));
}

inline tidalrt_status_t scribble_kernel(tidalrt_context_t *ctx, const int64_t *,
                                        void *const *buffers) {
  if (!tidalrt::preparing(ctx))
    std::memset(buffers[0], 0xff, 8);
  return nullptr;
}

inline tidalrt_status_t linear_sim_step(tidalrt_context_t *ctx,
                                        uint8_t *arena) {
  static const int64_t desc0[] = {0, 0, 0}, desc1[] = {1, 0, 0};
  const function_layout &f = linear().step;
  uint64_t w = f.results.at("w");
  void *whole[1] = {arena};
  tidalrt_range_t all[2] = {{0, f.arena_bytes}, {0, f.arena_bytes}};
  void *w_buffer[1] = {arena + w};
  tidalrt_range_t w_range = {w, 8};
  tidalrt_status_t status =
      tidalrt_dev_launch(ctx, linear_kernel, desc0, whole, 1, 0, all, 1, 1);
  if (!status)
    status = tidalrt_dev_offload(ctx, 0, 0, w, 8);
  if (!status)
    status = tidalrt_dev_wait(ctx, 0);
  if (!status)
    status = tidalrt_dev_launch(ctx, scribble_kernel, desc1, w_buffer, 1, 1,
                                &w_range, 0, 1);
  if (!status)
    status = tidalrt_dev_prefetch(ctx, 1, 0, w, 8);
  if (!status)
    status = tidalrt_dev_wait(ctx, 1);
  if (status)
    return status;
  return tidalrt_dev_synchronize(ctx);
}

// The linear model's program for `target` ("sim", "cuda"): its step on a
// device of arena_bytes + 256 bytes with a 64-byte host arena and 2 copies.
inline void make_linear_device_program(fake_program &p, const char *target) {
  make_linear_program(p);
  p.manifest["target"] = target;
  json &step = p.manifest["functions"]["step"];
  step["device_bytes"] = linear().step.arena_bytes + 256;
  step["host_arena_bytes"] = 64;
  step["num_copies"] = 2;
  p.program.step = linear_sim_step;
}

// Reading --save and checkpoint files back.
inline onnx::ModelProto read_model(const std::string &path) {
  onnx::ModelProto model;
  EXPECT_TRUE(model.ParseFromString(read_file(path))) << path;
  return model;
}

inline const onnx::TensorProto *find_initializer(const onnx::ModelProto &model,
                                                 const std::string &name) {
  for (const auto &tensor : model.graph().initializer())
    if (tensor.name() == name)
      return &tensor;
  return nullptr;
}

inline std::string metadata(const onnx::ModelProto &model,
                            const std::string &key) {
  std::string value;
  int count = 0;
  for (const auto &prop : model.metadata_props())
    if (prop.key() == key) {
      value = prop.value();
      ++count;
    }
  EXPECT_LE(count, 1) << key << " appears " << count << " times";
  return value;
}

} // namespace driver_test

#endif // TIDALRT_TEST_DRIVER_TEST_UTIL_H
