// driver_eval_test.cpp - evaluation with a predict function: loss and
// accuracy after training and every epoch, the predict arena, --eval-input
// errors.
#include "driver_train_fixtures.h"

namespace {

using namespace driver_test;

TEST_F(DriverEvalTest, ReportsLossAndAccuracyAfterTraining) {
  run_result result = run({"--steps", "3"});
  ASSERT_EQ(result.status, 0) << result.err;
  // Three batches of the 10 held-out samples, the last one padded.
  EXPECT_EQ(classifier().predict_calls, 3);
  double loss, accuracy;
  expected_eval(classifier().predict_w, &loss, &accuracy);
  char expected[128];
  std::snprintf(expected, sizeof(expected),
                "eval_loss %.9g\neval_accuracy %.9g\n", loss, accuracy);
  EXPECT_NE(result.out.find(expected), std::string::npos)
      << result.out << "expected:\n"
      << expected;
  // The predict function saw the trained weights, not the initial ones.
  EXPECT_NE(classifier().predict_w, (std::vector<float>{1.0f, -1.0f}));
}

TEST_F(DriverEvalTest, PredictArenaOnlyWhenEvaluating) {
  // Without --eval-input the predict function is neither prepared nor given
  // an arena: the host bytes are the step's arena alone.
  run_result plain =
      run_driver(program.get(), {"--input", "x=" + path("x.npy"), "--input",
                                 "label=" + path("label.npy"), "--steps", "1",
                                 "--log", path("plain.jsonl")});
  ASSERT_EQ(plain.status, 0) << plain.err;
  EXPECT_EQ(classifier().predict_calls, 0);
  EXPECT_EQ(read_jsonl(path("plain.jsonl")).at(0)["host_peak_bytes"],
            classifier().step.arena_bytes);
  ASSERT_EQ(run({"--steps", "1", "--log", path("eval.jsonl")}).status, 0);
  EXPECT_EQ(read_jsonl(path("eval.jsonl")).at(0)["host_peak_bytes"],
            classifier().step.arena_bytes + classifier().predict.arena_bytes);
}

TEST_F(DriverEvalTest, EvaluatesEveryEpoch) {
  run_result result = run({"--epochs", "2"});
  ASSERT_EQ(result.status, 0) << result.err;
  EXPECT_EQ(classifier().predict_calls, 6);
  std::vector<std::string> out = lines(result.out);
  ASSERT_GE(out.size(), 2u);
  for (int e = 0; e < 2; ++e) {
    EXPECT_EQ(out[e].rfind("epoch " + std::to_string(e + 1) + " mean_loss ", 0),
              0u);
    EXPECT_NE(out[e].find(" eval_loss "), std::string::npos) << out[e];
    EXPECT_NE(out[e].find(" eval_accuracy "), std::string::npos) << out[e];
  }
}

TEST_F(DriverEvalTest, EvalInputErrors) {
  write_npy(path("ex3.npy"), TIDALRT_ELEMENT_TYPE_F32, {10, 3},
            std::vector<float>(30).data());
  run_result result =
      run_driver(program.get(), {"--input", "x=" + path("x.npy"), "--input",
                                 "label=" + path("label.npy"), "--eval-input",
                                 "x=" + path("ex3.npy"), "--eval-input",
                                 "label=" + path("elabel.npy")});
  EXPECT_EQ(result.status, 1);
  EXPECT_EQ(result.err, "prog: error: " + path("ex3.npy") +
                            ": input 'x' expects float32 [*, 2], got float32 "
                            "[10, 3]\n");
  result = run_driver(program.get(), {"--input", "x=" + path("x.npy"),
                                      "--input", "label=" + path("label.npy"),
                                      "--eval-input", "x=" + path("ex.npy")});
  EXPECT_EQ(result.status, 1);
  EXPECT_EQ(result.err, "prog: error: missing input 'label' (int64 [N]): "
                        "give --eval-input label=FILE.npy\n");
}

} // namespace
