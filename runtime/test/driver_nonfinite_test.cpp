// driver_nonfinite_test.cpp - non-finite losses and weights: --on-nonfinite
// stop|skip, --check-finite loss|state, and never saving non-finite values.
#include "driver_test_util.h"

#include <cmath>

namespace {

using namespace driver_test;

class DriverNonFiniteTest : public tidalrt_test::TempDirTest {
protected:
  void SetUp() override {
    TempDirTest::SetUp();
    make_linear_program(program);
    linear_data(10, &x, &y);
    write_npy(path("x.npy"), TIDALRT_ELEMENT_TYPE_F32, {10, 2}, x.data());
    write_npy(path("y.npy"), TIDALRT_ELEMENT_TYPE_F32, {10}, y.data());
  }

  run_result run(std::vector<std::string> more) {
    std::vector<std::string> args = {"--input", "x=" + path("x.npy"), "--input",
                                     "y=" + path("y.npy")};
    args.insert(args.end(), more.begin(), more.end());
    return run_driver(program.get(), args);
  }

  fake_program program;
  std::vector<float> x, y;
};

TEST_F(DriverNonFiniteTest, NonFiniteLossStopsTheRunBeforeSaving) {
  write_file(path("out.onnx"), "previous contents");
  linear().nan_from = 1;
  run_result result = run(
      {"--steps", "4", "--log", path("log.jsonl"), "--save", path("out.onnx")});
  EXPECT_EQ(result.status, 1);
  EXPECT_EQ(result.err,
            "prog: error: step 2: the loss is nan; every weight and optimizer "
            "state is still finite; training stopped (--on-nonfinite stop; "
            "skip undoes such steps), and nothing was saved after the "
            "previous step\n");
  EXPECT_EQ(linear().steps.size(), 2u);
  EXPECT_EQ(read_file(path("out.onnx")), "previous contents");
  // The log holds the step that stopped the run, its loss as null.
  std::vector<json> log = read_jsonl(path("log.jsonl"));
  ASSERT_EQ(log.size(), 2u);
  EXPECT_TRUE(log[1]["loss"].is_null());
}

TEST_F(DriverNonFiniteTest, SkipUndoesTheStepAndGoesOn) {
  linear().nan_from = 1;
  linear().nan_until = 3;
  run_result result = run(
      {"--steps", "5", "--on-nonfinite", "skip", "--save", path("out.onnx")});
  ASSERT_EQ(result.status, 0) << result.err;
  EXPECT_EQ(result.err,
            "prog: warning: step 2: the loss is nan; the step's update is "
            "undone (--on-nonfinite skip)\n"
            "prog: warning: step 3: the loss is nan; the step's update is "
            "undone (--on-nonfinite skip)\n");
  const linear_model &m = linear();
  ASSERT_EQ(m.w_in.size(), 5u);
  // Steps 2 and 3 (calls 1 and 2) are undone: calls 2 and 3 start from the
  // weights call 1 started from.
  EXPECT_NE(m.w_in[1], m.w_in[0]);
  EXPECT_EQ(m.w_in[2], m.w_in[1]);
  EXPECT_EQ(m.w_in[3], m.w_in[1]);
  EXPECT_NE(m.w_in[4], m.w_in[3]);
  // The batches still advance: step 4 takes samples 4..7 (wrapped).
  EXPECT_EQ(m.steps, (std::vector<uint64_t>{0, 1, 2, 3, 4}));
  EXPECT_NE(result.out.find("skipped_steps 2\n"), std::string::npos)
      << result.out;
  // The mean of the last losses counts only the steps that stand.
  double sum = static_cast<double>(m.losses[0]) + m.losses[3] + m.losses[4];
  char expected[64];
  std::snprintf(expected, sizeof(expected), "final_loss %.9g\n", sum / 3);
  EXPECT_NE(result.out.find(expected), std::string::npos) << result.out;
  onnx::ModelProto saved = read_model(path("out.onnx"));
  const onnx::TensorProto *step = find_initializer(saved, "optimizer.step");
  ASSERT_NE(step, nullptr);
  int64_t count;
  std::memcpy(&count, step->raw_data().data(), 8);
  EXPECT_EQ(count, 3); // the optimizer's own step count is undone too
  EXPECT_EQ(metadata(saved, "tidal.steps_done"), "5");
}

TEST_F(DriverNonFiniteTest, CheckStateNamesTheFirstNonFiniteWeight) {
  linear().nan_weight_from = 2;
  run_result result = run({"--steps", "4", "--check-finite", "state"});
  EXPECT_EQ(result.status, 1);
  EXPECT_EQ(result.err,
            "prog: error: step 3: the loss is finite but 'w' (param) holds "
            "nan at element 1 after the step; training stopped "
            "(--on-nonfinite stop; skip undoes such steps), and nothing was "
            "saved after the previous step\n");
  EXPECT_EQ(linear().steps.size(), 3u);
}

TEST_F(DriverNonFiniteTest, SaveRefusesNonFiniteWeights) {
  // Checking only the loss, the run goes on; the final --save refuses.
  write_file(path("out.onnx"), "previous contents");
  linear().nan_weight_from = 2;
  run_result result = run({"--steps", "3", "--save", path("out.onnx")});
  EXPECT_EQ(result.status, 1);
  EXPECT_EQ(result.err,
            "prog: error: not writing --save " + path("out.onnx") +
                ": 'w' (param) holds nan at element 1 (--check-finite state "
                "stops a run at the step that makes it so)\n");
  EXPECT_EQ(read_file(path("out.onnx")), "previous contents");
}

TEST_F(DriverNonFiniteTest, NonFiniteInputIsAnErrorAtLoadTime) {
  x[7] = INFINITY; // sample 3, feature 1
  write_npy(path("x.npy"), TIDALRT_ELEMENT_TYPE_F32, {10, 2}, x.data());
  run_result result = run({"--steps", "1"});
  EXPECT_EQ(result.status, 1);
  EXPECT_EQ(result.err, "prog: error: " + path("x.npy") +
                            ": input 'x' holds inf at element 7 (sample 3)\n");
  EXPECT_TRUE(linear().steps.empty());
}

TEST_F(DriverNonFiniteTest, BadOptionValues) {
  run_result result = run({"--on-nonfinite", "ignore"});
  EXPECT_EQ(result.status, 1);
  EXPECT_EQ(result.err, "prog: error: --on-nonfinite expects stop or skip, "
                        "got 'ignore'\n");
  result = run({"--check-finite", "gradients"});
  EXPECT_EQ(result.status, 1);
  EXPECT_EQ(result.err, "prog: error: --check-finite expects loss or state, "
                        "got 'gradients'\n");
}

} // namespace
