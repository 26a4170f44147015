// driver_checkpoint_test.cpp - periodic checkpoints and --resume:
// cadence, pruning, bit-exact continuation, the log of a resumed run,
// mismatched options and failed writes.
#include "driver_test_util.h"

#include <csignal>
#include <sys/resource.h>
#include <sys/stat.h>

namespace {

using namespace driver_test;

class DriverCheckpointTest : public tidalrt_test::TempDirTest {
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

  std::string saved_w(const std::string &file) {
    onnx::ModelProto model = read_model(file);
    const onnx::TensorProto *w = find_initializer(model, "w");
    return w ? w->raw_data() : "";
  }

  fake_program program;
  std::vector<float> x, y;
};

TEST_F(DriverCheckpointTest, WritesEveryNStepsAndAtTheEndKeepingTheNewest) {
  run_result result =
      run({"--steps", "7", "--shuffle", "--seed", "3", "--checkpoint-dir",
           path("ck"), "--checkpoint-every", "2", "--checkpoint-keep", "2"});
  ASSERT_EQ(result.status, 0) << result.err;
  // Steps 2, 4, 6 and the end (7); the newest two remain.
  EXPECT_EQ(list("ck"), (std::vector<std::string>{"step-000000000006.onnx",
                                                  "step-000000000007.onnx"}));
  EXPECT_NE(result.out.find("checkpoints 4\n"), std::string::npos);
  onnx::ModelProto last = read_model(path("ck/step-000000000007.onnx"));
  EXPECT_EQ(metadata(last, "tidal.steps_done"), "7");
  EXPECT_EQ(metadata(last, "tidal.seed"), "3");
  EXPECT_EQ(metadata(last, "tidal.shuffle"), "1");
  EXPECT_EQ(metadata(last, "tidal.run_first_step"), "0");
  EXPECT_NE(find_initializer(last, "w.momentum_buffer"), nullptr);
}

TEST_F(DriverCheckpointTest, ResumeContinuesBitForBit) {
  ASSERT_EQ(
      run({"--steps", "9", "--shuffle", "--save", path("whole.onnx")}).status,
      0);
  // A run that stops after step 5 (as a killed one would have, its last
  // checkpoint at 4), then the same command line again with --resume.
  make_linear_program(program);
  ASSERT_EQ(run({"--steps", "5", "--shuffle", "--checkpoint-every", "2",
                 "--resume", path("ck"), "--log", path("log.jsonl")})
                .status,
            0);
  ASSERT_EQ(std::remove(path("ck/step-000000000005.onnx").c_str()), 0);
  write_file(path("ck/step-000000000006.onnx.tmp.12345"), "torn write");
  make_linear_program(program);
  run_result result = run({"--steps", "9", "--shuffle", "--checkpoint-every",
                           "2", "--resume", path("ck"), "--log",
                           path("log.jsonl"), "--save", path("resumed.onnx")});
  ASSERT_EQ(result.status, 0) << result.err;
  EXPECT_EQ(result.err, "prog: resuming from " +
                            path("ck/step-000000000004.onnx") +
                            " (step 4 of 9)\n");
  EXPECT_EQ(linear().steps, (std::vector<uint64_t>{4, 5, 6, 7, 8}));
  EXPECT_EQ(saved_w(path("resumed.onnx")), saved_w(path("whole.onnx")));
  onnx::ModelProto a = read_model(path("resumed.onnx"));
  onnx::ModelProto b = read_model(path("whole.onnx"));
  for (const char *name : {"w.momentum_buffer", "optimizer.step", "seen"})
    EXPECT_EQ(find_initializer(a, name)->raw_data(),
              find_initializer(b, name)->raw_data())
        << name;
  // The temporary file of the torn write is gone; the log has each step
  // once (step 5 of the first run is dropped, redone by the second).
  for (const std::string &name : list("ck"))
    EXPECT_EQ(name.find(".tmp."), std::string::npos) << name;
  std::vector<json> log = read_jsonl(path("log.jsonl"));
  ASSERT_EQ(log.size(), 9u);
  for (size_t i = 0; i < log.size(); ++i)
    EXPECT_EQ(log[i]["step"], i + 1);
}

TEST_F(DriverCheckpointTest, ResumeWithoutCheckpointStartsAfresh) {
  run_result result =
      run({"--steps", "3", "--resume", path("ck"), "--save", path("a.onnx")});
  ASSERT_EQ(result.status, 0) << result.err;
  EXPECT_EQ(result.err, "");
  EXPECT_EQ(linear().steps, (std::vector<uint64_t>{0, 1, 2}));
  // A finished run resumed again has nothing left to do.
  make_linear_program(program);
  result =
      run({"--steps", "3", "--resume", path("ck"), "--save", path("b.onnx")});
  ASSERT_EQ(result.status, 0) << result.err;
  EXPECT_TRUE(linear().steps.empty());
  EXPECT_EQ(saved_w(path("a.onnx")), saved_w(path("b.onnx")));
}

TEST_F(DriverCheckpointTest, UnreadableNewestCheckpointFallsBack) {
  ASSERT_EQ(run({"--steps", "4", "--checkpoint-every", "2", "--checkpoint-dir",
                 path("ck")})
                .status,
            0);
  write_file(path("ck/step-000000000004.onnx"), "not a model");
  make_linear_program(program);
  run_result result = run({"--steps", "4", "--resume", path("ck")});
  ASSERT_EQ(result.status, 0) << result.err;
  EXPECT_NE(result.err.find("prog: warning: skipping a checkpoint that does "
                            "not read back: " +
                            path("ck/step-000000000004.onnx")),
            std::string::npos)
      << result.err;
  EXPECT_NE(
      result.err.find("resuming from " + path("ck/step-000000000002.onnx")),
      std::string::npos);
  EXPECT_EQ(linear().steps, (std::vector<uint64_t>{2, 3}));
}

TEST_F(DriverCheckpointTest, ResumeChecksTheSeedAndShuffle) {
  ASSERT_EQ(run({"--steps", "2", "--seed", "5", "--checkpoint-dir", path("ck")})
                .status,
            0);
  run_result result =
      run({"--steps", "4", "--seed", "6", "--resume", path("ck")});
  EXPECT_EQ(result.status, 1);
  EXPECT_EQ(result.err, "prog: error: " + path("ck/step-000000000002.onnx") +
                            " was written with --seed 5, this run has --seed "
                            "6; resume with the options of the run that "
                            "wrote it\n");
  result =
      run({"--steps", "4", "--seed", "5", "--shuffle", "--resume", path("ck")});
  EXPECT_EQ(result.status, 1);
  EXPECT_NE(result.err.find("was written without --shuffle"), std::string::npos)
      << result.err;
}

TEST_F(DriverCheckpointTest, OptionErrors) {
  run_result result = run({"--checkpoint-every", "2"});
  EXPECT_EQ(result.status, 1);
  EXPECT_EQ(result.err, "prog: error: --checkpoint-every needs "
                        "--checkpoint-dir DIR (or --resume DIR)\n");
  result = run({"--checkpoint-every", "0", "--checkpoint-dir", path("ck")});
  EXPECT_EQ(result.status, 1);
  write_file(path("file"), "");
  result = run({"--steps", "1", "--checkpoint-dir", path("file")});
  EXPECT_EQ(result.status, 1);
  EXPECT_EQ(result.err, "prog: error: --checkpoint-dir " + path("file") +
                            ": not a directory\n");
}

TEST_F(DriverCheckpointTest, FailedWriteKeepsTheLastGoodCheckpoint) {
  onnx::ModelProto model = linear_onnx();
  model.mutable_graph()->set_doc_string(std::string(3000, 'd'));
  program.set_model(model);
  ASSERT_EQ(run({"--steps", "2", "--checkpoint-dir", path("ck")}).status, 0);
  std::string good = read_file(path("ck/step-000000000002.onnx"));
  // Now the model outgrows a file-size limit, as on a full disk.
  model.mutable_graph()->set_doc_string(std::string(8192, 'd'));
  program.set_model(model);
  struct rlimit old_limit;
  ASSERT_EQ(getrlimit(RLIMIT_FSIZE, &old_limit), 0);
  struct rlimit limit = old_limit;
  limit.rlim_cur = 4096;
  void (*old_handler)(int) = std::signal(SIGXFSZ, SIG_IGN);
  ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &limit), 0);
  run_result result =
      run({"--steps", "4", "--checkpoint-every", "1", "--resume", path("ck")});
  setrlimit(RLIMIT_FSIZE, &old_limit);
  std::signal(SIGXFSZ, old_handler);
  EXPECT_EQ(result.status, 1);
  EXPECT_NE(result.err.find("prog: error: checkpoint at step 3: " +
                            path("ck/step-000000000003.onnx") +
                            ": cannot write: File too large (the earlier "
                            "checkpoints in " +
                            path("ck") + " are intact)\n"),
            std::string::npos)
      << result.err;
  EXPECT_EQ(list("ck"), (std::vector<std::string>{"step-000000000002.onnx"}));
  EXPECT_EQ(read_file(path("ck/step-000000000002.onnx")), good);
}

} // namespace
