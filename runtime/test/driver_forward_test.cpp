// driver_forward_test.cpp - forward-mode programs: every sample runs
// through the forward pass in batches and each result lands in
// --output-dir as NAME.npy.
#include "driver_test_util.h"

#include "session.h"

#include <sys/stat.h>

namespace {

using namespace driver_test;

// y[b] = x[b] * w (element-wise), "out/total:0" = sum of this batch's y.
struct forward_model {
  function_layout step;
  std::vector<std::vector<float>> x_batches;
  std::vector<uint64_t> steps;
};

forward_model &forward() {
  static forward_model model;
  return model;
}

tidalrt_status_t forward_step(tidalrt_context_t *ctx, uint8_t *arena) {
  if (tidalrt::preparing(ctx))
    return nullptr;
  forward_model &m = forward();
  m.steps.push_back(tidalrt::step(ctx));
  const float *x = reinterpret_cast<const float *>(arena + m.step.args.at("x"));
  const float *w = reinterpret_cast<const float *>(arena + m.step.args.at("w"));
  float *y = reinterpret_cast<float *>(arena + m.step.results.at("y"));
  float total = 0;
  for (int i = 0; i < 8; ++i) {
    y[i] = x[i] * w[i % 2];
    total += y[i];
  }
  *reinterpret_cast<float *>(arena + m.step.results.at("out/total:0")) = total;
  m.x_batches.emplace_back(x, x + 8);
  return nullptr;
}

class DriverForwardTest : public tidalrt_test::TempDirTest {
protected:
  void SetUp() override {
    TempDirTest::SetUp();
    forward_model &m = forward();
    m = forward_model();
    m.step = layout_function(
        {{"x", "input", "float32", {4, 2}}, {"w", "param", "float32", {2}}},
        {{"y", "output", "float32", {4, 2}},
         {"out/total:0", "output", "float32", {}}});
    program.manifest = base_manifest("forward", 4);
    program.manifest.erase("loss");
    program.manifest.erase("optimizer");
    onnx::ModelProto model;
    model.set_ir_version(8);
    onnx::TensorProto *w = add_initializer(model.mutable_graph(), "w",
                                           onnx::TensorProto::FLOAT, {2});
    w->add_float_data(2.0f);
    w->add_float_data(-3.0f);
    program.set_model(model);
    program.manifest["functions"] = {{"step", m.step.description}};
    program.program.step = forward_step;
    for (int i = 0; i < 20; ++i)
      x.push_back(static_cast<float>(i + 1));
    write_npy(path("x.npy"), TIDALRT_ELEMENT_TYPE_F32, {10, 2}, x.data());
  }

  run_result run(std::vector<std::string> more) {
    std::vector<std::string> args = {"--input", "x=" + path("x.npy")};
    args.insert(args.end(), more.begin(), more.end());
    return run_driver(program.get(), args);
  }

  fake_program program;
  std::vector<float> x;
};

TEST_F(DriverForwardTest, WritesEveryOutput) {
  run_result result = run({"--output-dir", path("out")});
  ASSERT_EQ(result.status, 0) << result.err;
  // 10 samples in batches of 4: the last batch holds 2 samples and zeros.
  ASSERT_EQ(forward().x_batches.size(), 3u);
  EXPECT_EQ(forward().steps, (std::vector<uint64_t>{0, 1, 2}));
  EXPECT_EQ(forward().x_batches[2],
            (std::vector<float>{17, 18, 19, 20, 0, 0, 0, 0}));
  EXPECT_EQ(list("out"),
            (std::vector<std::string>{"out_total_0.npy", "y.npy"}));

  std::vector<int64_t> dims;
  std::vector<float> y = read_npy_floats(path("out/y.npy"), &dims);
  EXPECT_EQ(dims, (std::vector<int64_t>{10, 2}));
  ASSERT_EQ(y.size(), 20u);
  for (size_t i = 0; i < 20; ++i)
    EXPECT_EQ(y[i], x[i] * (i % 2 ? -3.0f : 2.0f)) << i;
  // A result without a batch dimension keeps the last batch's value.
  std::vector<float> total =
      read_npy_floats(path("out/out_total_0.npy"), &dims);
  EXPECT_TRUE(dims.empty());
  ASSERT_EQ(total.size(), 1u);
  EXPECT_EQ(total[0], 17 * 2.0f + 18 * -3.0f + 19 * 2.0f + 20 * -3.0f);

  std::vector<std::string> out = lines(result.out);
  ASSERT_EQ(out.size(), 6u) << result.out;
  EXPECT_EQ(out[0], "batches 3");
  EXPECT_EQ(out[1], "samples 10");
  EXPECT_EQ(out[4], "output " + path("out") + "/y.npy");
  EXPECT_EQ(out[5], "output " + path("out") + "/out_total_0.npy");
}

TEST_F(DriverForwardTest, FewerSamplesThanABatch) {
  write_npy(path("x1.npy"), TIDALRT_ELEMENT_TYPE_F32, {1, 2}, x.data());
  run_result result =
      run_driver(program.get(),
                 {"--input", "x=" + path("x1.npy"), "--output-dir", path("o")});
  ASSERT_EQ(result.status, 0) << result.err;
  std::vector<int64_t> dims;
  std::vector<float> y = read_npy_floats(path("o/y.npy"), &dims);
  EXPECT_EQ(dims, (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(y, (std::vector<float>{2.0f, -6.0f}));
}

TEST_F(DriverForwardTest, InitReplacesWeights) {
  onnx::ModelProto model;
  onnx::TensorProto *w = add_initializer(model.mutable_graph(), "w",
                                         onnx::TensorProto::FLOAT, {2});
  w->add_float_data(1.0f);
  w->add_float_data(1.0f);
  write_file(path("init.onnx"), model.SerializeAsString());
  ASSERT_EQ(
      run({"--output-dir", path("out"), "--init", path("init.onnx")}).status,
      0);
  std::vector<int64_t> dims;
  EXPECT_EQ(read_npy_floats(path("out/y.npy"), &dims), x);
}

TEST_F(DriverForwardTest, NeedsAnOutputDirectory) {
  run_result result = run({});
  EXPECT_EQ(result.status, 1);
  EXPECT_EQ(result.err, "prog: error: this program runs the forward pass of "
                        "linear.onnx; give --output-dir DIR for its outputs\n");
  EXPECT_TRUE(forward().steps.empty());
  write_file(path("file"), "");
  result = run({"--output-dir", path("file")});
  EXPECT_EQ(result.status, 1);
  EXPECT_EQ(result.err.rfind("prog: error: --output-dir " + path("file") +
                                 ": cannot create: ",
                             0),
            0u)
      << result.err;
}

TEST_F(DriverForwardTest, RejectsTrainingOptions) {
  for (std::vector<std::string> extra :
       {std::vector<std::string>{"--save", path("m.onnx")},
        std::vector<std::string>{"--steps", "2"},
        std::vector<std::string>{"--epochs", "2"},
        std::vector<std::string>{"--shuffle"}}) {
    extra.push_back("--output-dir");
    extra.push_back(path("out"));
    run_result result = run(extra);
    EXPECT_EQ(result.status, 1) << extra[0];
    EXPECT_EQ(result.err, "prog: error: " + extra[0] +
                              " does not apply: this program runs the forward "
                              "pass of linear.onnx (it was compiled without a "
                              "loss)\n");
  }
  EXPECT_TRUE(forward().steps.empty());
}

TEST_F(DriverForwardTest, NoArgumentsPrintsUsage) {
  run_result result = run_driver(program.get(), {});
  EXPECT_EQ(result.status, 1);
  EXPECT_EQ(result.err.rfind("usage: prog [--input NAME=FILE.npy ...] "
                             "--output-dir DIR [options]\n",
                             0),
            0u)
      << result.err;
}

TEST_F(DriverForwardTest, Usage) {
  run_result result = run_driver(program.get(), {"--help"});
  EXPECT_EQ(result.status, 0);
  EXPECT_NE(result.out.find("Runs the forward pass of linear.onnx over every "
                            "sample, in batches of 4.\n"),
            std::string::npos)
      << result.out;
  EXPECT_NE(result.out.find("Data inputs (N samples each):\n  x"),
            std::string::npos)
      << result.out;
  EXPECT_NE(result.out.find("--output-dir DIR"), std::string::npos);
  EXPECT_NE(result.out.find("--log FILE.jsonl        one JSON object per "
                            "batch"),
            std::string::npos);
  EXPECT_EQ(result.out.find("--save"), std::string::npos);
  EXPECT_EQ(result.out.find("--shuffle"), std::string::npos);
}

TEST_F(DriverForwardTest, LogHasOneObjectPerBatch) {
  ASSERT_EQ(
      run({"--output-dir", path("out"), "--log", path("log.jsonl")}).status, 0);
  std::vector<std::string> log = lines(read_file(path("log.jsonl")));
  ASSERT_EQ(log.size(), 3u);
  json last = json::parse(log[2]);
  EXPECT_EQ(last["step"], 3);
  EXPECT_TRUE(last["loss"].is_null());
}

TEST_F(DriverForwardTest, SimTargetWritesTheSameOutputs) {
  // The batches in, the outputs (the last batch's real rows only) and the
  // loss out go through the device's transfers; an input of exactly its
  // argument's shape is written whole.
  write_npy(path("x4.npy"), TIDALRT_ELEMENT_TYPE_F32, {4, 2}, x.data());
  for (const char *input : {"x.npy", "x4.npy"}) {
    std::vector<std::string> args = {"--input", "x=" + path(input),
                                     "--output-dir", path("out")};
    program.manifest.erase("target");
    program.manifest["functions"]["step"].erase("device_bytes");
    run_result cpu = run_driver(program.get(), args);
    ASSERT_EQ(cpu.status, 0) << cpu.err;
    std::string cpu_y = read_file(path("out/y.npy"));
    std::string cpu_total = read_file(path("out/out_total_0.npy"));
    std::vector<std::vector<float>> cpu_batches = forward().x_batches;
    forward().x_batches.clear();
    program.manifest["target"] = "sim";
    program.manifest["functions"]["step"]["device_bytes"] =
        forward().step.arena_bytes + 64;
    run_result sim = run_driver(program.get(), args);
    ASSERT_EQ(sim.status, 0) << sim.err;
    EXPECT_EQ(forward().x_batches, cpu_batches) << input;
    EXPECT_EQ(read_file(path("out/y.npy")), cpu_y) << input;
    EXPECT_EQ(read_file(path("out/out_total_0.npy")), cpu_total) << input;
    EXPECT_EQ(untimed(sim.out), untimed(cpu.out)) << input;
    forward().x_batches.clear();
  }
}

TEST_F(DriverForwardTest, SanitizedFileNames) {
  EXPECT_EQ(tidalrt_driver::sanitize_file_name("out/total:0"), "out_total_0");
  EXPECT_EQ(tidalrt_driver::sanitize_file_name("a.b-c_D9"), "a.b-c_D9");
  EXPECT_EQ(tidalrt_driver::sanitize_file_name(".."), "__");
  EXPECT_EQ(tidalrt_driver::sanitize_file_name(""), "_");
  EXPECT_EQ(tidalrt_driver::sanitize_file_name("caf\xc3\xa9"), "caf__");
}

} // namespace
