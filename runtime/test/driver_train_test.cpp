// driver_train_test.cpp - the training loop: batch order, shuffling,
// resuming bit for bit, --save, --log, --trace, evaluation, runtime faults.
#include "driver_test_util.h"

#include "data.h"
#include "program.h"

#include <algorithm>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <omp.h>
#include <set>
#include <sys/resource.h>
#include <unistd.h>

namespace {

using namespace driver_test;

class DriverTrainTest : public tidalrt_test::TempDirTest {
protected:
  void SetUp() override {
    TempDirTest::SetUp();
    make_linear_program(program);
    use_samples(10);
  }

  void use_samples(int64_t samples) {
    linear_data(samples, &x, &y);
    write_npy(path("x.npy"), TIDALRT_ELEMENT_TYPE_F32, {samples, 2}, x.data());
    write_npy(path("y.npy"), TIDALRT_ELEMENT_TYPE_F32, {samples}, y.data());
  }

  run_result run(std::vector<std::string> more) {
    std::vector<std::string> args = {"--input", "x=" + path("x.npy"), "--input",
                                     "y=" + path("y.npy")};
    args.insert(args.end(), more.begin(), more.end());
    return run_driver(program.get(), args);
  }

  // The sample indices of each step's batch.
  std::vector<std::vector<int64_t>> batches() const {
    std::vector<std::vector<int64_t>> result;
    for (const auto &x0 : linear().x0)
      result.push_back(rows_of(x0));
    return result;
  }

  void reset_record() {
    linear_model &m = linear();
    m.steps.clear();
    m.x0.clear();
    m.losses.clear();
    m.prepare_calls = 0;
  }

  fake_program program;
  std::vector<float> x, y;
};

TEST_F(DriverTrainTest, BatchesInFileOrder) {
  run_result result = run({"--epochs", "2"});
  ASSERT_EQ(result.status, 0) << result.err;
  // 10 samples, batch 4: two batches per epoch, samples 8 and 9 dropped.
  std::vector<std::vector<int64_t>> expected = {
      {0, 1, 2, 3}, {4, 5, 6, 7}, {0, 1, 2, 3}, {4, 5, 6, 7}};
  EXPECT_EQ(batches(), expected);
  EXPECT_EQ(linear().steps, (std::vector<uint64_t>{0, 1, 2, 3}));
  // Prepared once, before the first step.
  EXPECT_EQ(linear().prepare_calls, 1);
}

TEST_F(DriverTrainTest, StepsRunAcrossEpochs) {
  ASSERT_EQ(run({"--steps", "5"}).status, 0);
  std::vector<std::vector<int64_t>> expected = {
      {0, 1, 2, 3}, {4, 5, 6, 7}, {0, 1, 2, 3}, {4, 5, 6, 7}, {0, 1, 2, 3}};
  EXPECT_EQ(batches(), expected);
  reset_record();
  run_result result = run({"--steps", "0"});
  EXPECT_EQ(result.status, 0) << result.err;
  EXPECT_TRUE(linear().steps.empty());
  EXPECT_NE(result.out.find("steps 0\n"), std::string::npos) << result.out;
}

TEST_F(DriverTrainTest, ShuffleDrawsOnePermutationPerEpoch) {
  use_samples(12);
  ASSERT_EQ(run({"--shuffle", "--seed", "7", "--epochs", "3"}).status, 0);
  std::vector<std::vector<int64_t>> seen = batches();
  ASSERT_EQ(seen.size(), 9u);
  std::vector<std::vector<int64_t>> epochs(3);
  for (size_t i = 0; i < seen.size(); ++i)
    epochs[i / 3].insert(epochs[i / 3].end(), seen[i].begin(), seen[i].end());
  std::vector<int64_t> identity(12);
  for (int64_t i = 0; i < 12; ++i)
    identity[static_cast<size_t>(i)] = i;
  for (size_t e = 0; e < 3; ++e) {
    // Every sample once per epoch, in the documented order.
    std::vector<uint64_t> order = tidalrt_driver::epoch_permutation(12, 7, e);
    EXPECT_EQ(epochs[e], std::vector<int64_t>(order.begin(), order.end()));
    std::vector<int64_t> sorted = epochs[e];
    std::sort(sorted.begin(), sorted.end());
    EXPECT_EQ(sorted, identity);
    EXPECT_NE(epochs[e], identity);
  }
  EXPECT_NE(epochs[0], epochs[1]);
  EXPECT_NE(epochs[1], epochs[2]);

  // The same seed gives the same batches; another seed others.
  reset_record();
  ASSERT_EQ(run({"--shuffle", "--seed", "7", "--epochs", "3"}).status, 0);
  EXPECT_EQ(batches(), seen);
  reset_record();
  ASSERT_EQ(run({"--shuffle", "--seed", "8", "--epochs", "3"}).status, 0);
  EXPECT_NE(batches(), seen);
}

TEST_F(DriverTrainTest, ShuffleDropsTheLastPartialBatch) {
  // 10 samples: each epoch uses 8 distinct samples of a permutation.
  ASSERT_EQ(run({"--shuffle", "--epochs", "4"}).status, 0);
  std::vector<std::vector<int64_t>> seen = batches();
  ASSERT_EQ(seen.size(), 8u);
  for (size_t e = 0; e < 4; ++e) {
    std::vector<uint64_t> order = tidalrt_driver::epoch_permutation(10, 0, e);
    std::vector<int64_t> expected(order.begin(), order.begin() + 8);
    std::vector<int64_t> got = seen[2 * e];
    got.insert(got.end(), seen[2 * e + 1].begin(), seen[2 * e + 1].end());
    EXPECT_EQ(got, expected);
  }
}

TEST_F(DriverTrainTest, EpochPermutationIsUniformish) {
  // Each sample lands in each position about equally often.
  const uint64_t n = 5, epochs = 5000;
  std::vector<std::vector<int>> counts(n, std::vector<int>(n));
  for (uint64_t e = 0; e < epochs; ++e) {
    std::vector<uint64_t> order = tidalrt_driver::epoch_permutation(n, 42, e);
    for (uint64_t i = 0; i < n; ++i)
      ++counts[i][order[i]];
  }
  for (const auto &row : counts)
    for (int count : row)
      EXPECT_NEAR(count, static_cast<int>(epochs / n), 120);
}

TEST_F(DriverTrainTest, ResumeIsBitForBit) {
  use_samples(14);
  std::vector<std::string> common = {"--shuffle", "--seed", "3"};
  auto with = [&](std::vector<std::string> more) {
    std::vector<std::string> args = common;
    args.insert(args.end(), more.begin(), more.end());
    return args;
  };
  // One run of 6 steps (two epochs of 3 batches)...
  ASSERT_EQ(run(with({"--steps", "6", "--save", path("full.onnx"), "--log",
                      path("full.jsonl")}))
                .status,
            0);
  std::vector<std::vector<int64_t>> full_batches = batches();
  std::vector<uint64_t> full_steps = linear().steps;
  // ...equals 4 steps, saved, then 2 more from the saved file (resuming
  // mid-epoch), and 3 + 3.
  for (int first : {4, 3}) {
    reset_record();
    ASSERT_EQ(run(with({"--steps", std::to_string(first), "--save",
                        path("part.onnx"), "--log", path("part1.jsonl")}))
                  .status,
              0);
    EXPECT_EQ(metadata(read_model(path("part.onnx")), "tidal.steps_done"),
              std::to_string(first));
    run_result second = run(
        with({"--init", path("part.onnx"), "--steps", std::to_string(6 - first),
              "--save", path("resumed.onnx"), "--log", path("part2.jsonl")}));
    ASSERT_EQ(second.status, 0) << second.err;
    EXPECT_EQ(batches(), full_batches);
    EXPECT_EQ(linear().steps, full_steps);
    EXPECT_NE(second.out.find("steps_done 6\n"), std::string::npos);
    // The saved models are the same bytes: weights, momentum, step count,
    // state and metadata.
    EXPECT_EQ(read_file(path("resumed.onnx")), read_file(path("full.onnx")))
        << "resuming after " << first << " steps";
    std::vector<json> full = read_jsonl(path("full.jsonl"));
    std::vector<json> part = read_jsonl(path("part1.jsonl"));
    std::vector<json> rest = read_jsonl(path("part2.jsonl"));
    part.insert(part.end(), rest.begin(), rest.end());
    ASSERT_EQ(part.size(), full.size());
    for (size_t i = 0; i < full.size(); ++i) {
      EXPECT_EQ(part[i]["step"], full[i]["step"]);
      EXPECT_EQ(part[i]["loss"], full[i]["loss"]) << "step " << i + 1;
    }
  }
}

TEST_F(DriverTrainTest, SaveWritesTheTrainedModel) {
  ASSERT_EQ(run({"--steps", "3", "--save", path("out.onnx")}).status, 0);
  onnx::ModelProto saved = read_model(path("out.onnx"));
  onnx::ModelProto original = linear_onnx();
  // The graph is the input model's, with updated initializers.
  EXPECT_EQ(saved.graph().node_size(), 1);
  EXPECT_EQ(saved.graph().node(0).op_type(), "MatMul");
  EXPECT_EQ(saved.ir_version(), original.ir_version());
  EXPECT_EQ(saved.producer_name(), "driver_test");
  EXPECT_EQ(metadata(saved, "tidal.steps_done"), "3");

  const onnx::TensorProto *w = find_initializer(saved, "w");
  ASSERT_NE(w, nullptr);
  EXPECT_EQ(w->data_type(), onnx::TensorProto::FLOAT);
  EXPECT_EQ(w->float_data_size(), 0);
  ASSERT_EQ(w->raw_data().size(), 8u);
  EXPECT_EQ(std::memcmp(w->raw_data().data(), linear().last_w.data(), 8), 0);
  ASSERT_EQ(w->dims_size(), 1);
  EXPECT_EQ(w->dims(0), 2);

  // State and constants are written back too; optimizer state the model
  // lacked is appended under its documented name.
  const onnx::TensorProto *seen = find_initializer(saved, "seen");
  ASSERT_NE(seen, nullptr);
  float samples;
  std::memcpy(&samples, seen->raw_data().data(), 4);
  EXPECT_EQ(samples, 12.0f);
  const onnx::TensorProto *two = find_initializer(saved, "two");
  ASSERT_NE(two, nullptr);
  EXPECT_EQ(two->int64_data_size(), 0);
  EXPECT_EQ(two->raw_data(), std::string("\x02\0\0\0\0\0\0\0", 8));
  const onnx::TensorProto *step = find_initializer(saved, "optimizer.step");
  ASSERT_NE(step, nullptr);
  EXPECT_EQ(step->data_type(), onnx::TensorProto::INT64);
  EXPECT_EQ(step->dims_size(), 0);
  int64_t count;
  std::memcpy(&count, step->raw_data().data(), 8);
  EXPECT_EQ(count, 3);
  const onnx::TensorProto *momentum =
      find_initializer(saved, "w.momentum_buffer");
  ASSERT_NE(momentum, nullptr);
  EXPECT_EQ(momentum->raw_data().size(), 8u);
  EXPECT_EQ(saved.graph().initializer_size(), 5);

  // Saving again from the saved file replaces (not duplicates) everything.
  ASSERT_EQ(run({"--init", path("out.onnx"), "--steps", "1", "--save",
                 path("again.onnx")})
                .status,
            0);
  onnx::ModelProto again = read_model(path("again.onnx"));
  EXPECT_EQ(metadata(again, "tidal.steps_done"), "4");
  EXPECT_EQ(again.graph().initializer_size(), 5);
  EXPECT_EQ(linear().steps.back(), 3u);
}

TEST_F(DriverTrainTest, InitOverridesTheCompiledWeights) {
  onnx::ModelProto model = linear_onnx(/*with_momentum_buffer=*/true);
  onnx::TensorProto *w = model.mutable_graph()->mutable_initializer(0);
  w->clear_float_data();
  float values[2] = {2.0f, 3.0f};
  w->set_raw_data(values, sizeof(values));
  // The momentum buffer is read from the file too.
  onnx::TensorProto *buf = model.mutable_graph()->mutable_initializer(3);
  buf->set_float_data(0, 1.0f);
  write_file(path("init.onnx"), model.SerializeAsString());
  ASSERT_EQ(run({"--init", path("init.onnx"), "--steps", "1", "--save",
                 path("out.onnx")})
                .status,
            0);
  // One step from w = (2, 3), momentum buffer (1, 0).
  float r[4], g0 = 0, g1 = 0;
  for (int b = 0; b < 4; ++b) {
    r[b] = x[2 * b] * 2.0f + x[2 * b + 1] * 3.0f - y[b];
    g0 += r[b] * x[2 * b];
    g1 += r[b] * x[2 * b + 1];
  }
  float scale = 2.0f / 4.0f;
  float expected[2] = {2.0f - 0.05f * (0.9f * 1.0f + g0 * scale),
                       3.0f - 0.05f * (0.9f * 0.0f + g1 * scale)};
  EXPECT_EQ(linear().last_w, std::vector<float>(expected, expected + 2));
  // Without tidal.steps_done the run starts at step 0.
  EXPECT_EQ(linear().steps, (std::vector<uint64_t>{0}));
}

TEST_F(DriverTrainTest, FailedSaveKeepsTheOldFile) {
  // A model larger than the limit below.
  onnx::ModelProto model = linear_onnx();
  model.mutable_graph()->set_doc_string(std::string(8192, 'd'));
  program.set_model(model);
  write_file(path("out.onnx"), "previous contents");
  // A file-size limit makes the write fail part way, as a full disk would.
  struct rlimit old_limit;
  ASSERT_EQ(getrlimit(RLIMIT_FSIZE, &old_limit), 0);
  struct rlimit limit = old_limit;
  limit.rlim_cur = 4096;
  void (*old_handler)(int) = std::signal(SIGXFSZ, SIG_IGN);
  ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &limit), 0);
  run_result result = run({"--steps", "2", "--save", path("out.onnx")});
  setrlimit(RLIMIT_FSIZE, &old_limit);
  std::signal(SIGXFSZ, old_handler);

  EXPECT_EQ(result.status, 1);
  EXPECT_EQ(result.err, "prog: error: " + path("out.onnx") +
                            ": cannot write: File too large\n");
  EXPECT_EQ(read_file(path("out.onnx")), "previous contents");
  EXPECT_EQ(list(), (std::vector<std::string>{"out.onnx", "x.npy", "y.npy"}));
}

TEST_F(DriverTrainTest, RuntimeFaultNamesTheOpAndSavesNothing) {
  write_file(path("out.onnx"), "previous contents");
  linear().fail_call = 1;
  run_result result = run(
      {"--steps", "3", "--save", path("out.onnx"), "--log", path("log.jsonl")});
  EXPECT_EQ(result.status, 2);
  EXPECT_EQ(result.err,
            "prog: error: op '/fc/Gemm' (gemm): injected failure\n");
  EXPECT_EQ(result.out, "");
  EXPECT_EQ(read_file(path("out.onnx")), "previous contents");
  // The steps before the fault are logged.
  EXPECT_EQ(read_jsonl(path("log.jsonl")).size(), 1u);

  // Without a save file, none appears.
  make_linear_program(program);
  linear().fail_call = 0;
  linear().fail_op = 99; // outside the manifest's ops
  result = run({"--steps", "3", "--save", path("new.onnx")});
  EXPECT_EQ(result.status, 2);
  EXPECT_EQ(result.err, "prog: error: step: injected failure\n");
  EXPECT_EQ(list(), (std::vector<std::string>{"log.jsonl", "out.onnx", "x.npy",
                                              "y.npy"}));
}

TEST_F(DriverTrainTest, PrepareFaultIsARuntimeFault) {
  linear().fail_prepare = true;
  linear().fail_op = 2;
  run_result result = run({"--steps", "3"});
  EXPECT_EQ(result.status, 2);
  EXPECT_EQ(result.err, "prog: error: op '/sgd' (sgd_momentum_update): "
                        "injected prepare\n");
  EXPECT_TRUE(linear().steps.empty());
}

TEST_F(DriverTrainTest, LogHasOneObjectPerStep) {
  ASSERT_EQ(run({"--steps", "3", "--log", path("log.jsonl")}).status, 0);
  std::string text = read_file(path("log.jsonl"));
  std::vector<std::string> log_lines = lines(text);
  ASSERT_EQ(log_lines.size(), 3u);
  for (size_t i = 0; i < 3; ++i) {
    json entry = json::parse(log_lines[i]);
    std::vector<std::string> keys;
    for (auto it = entry.begin(); it != entry.end(); ++it)
      keys.push_back(it.key());
    EXPECT_EQ(keys, (std::vector<std::string>{
                        "step", "loss", "step_ms", "device_peak_bytes",
                        "host_peak_bytes", "bytes_to_host", "bytes_to_device",
                        "copy_seconds", "copy_stall_seconds", "threads"}));
    EXPECT_EQ(entry["step"], i + 1);
    // %.9g: the float32 loss survives the round trip exactly.
    EXPECT_EQ(static_cast<float>(entry["loss"].get<double>()),
              linear().losses[i]);
    EXPECT_GE(entry["step_ms"].get<double>(), 0.0);
    EXPECT_EQ(entry["device_peak_bytes"], 0);
    EXPECT_EQ(entry["host_peak_bytes"], linear().step.arena_bytes);
    EXPECT_EQ(entry["bytes_to_host"], 0);
    EXPECT_EQ(entry["bytes_to_device"], 0);
    EXPECT_EQ(entry["copy_seconds"], 0);
    EXPECT_EQ(entry["copy_stall_seconds"], 0);
    EXPECT_GE(entry["threads"].get<int>(), 1);
  }
}

TEST_F(DriverTrainTest, SummaryOnStdout) {
  // A fixed team: with --threads auto (TIDAL_THREADS unset) the summary
  // also has the team sizes (driver_options_test.cpp).
  run_result result = run({"--steps", "12", "--threads", "2"});
  ASSERT_EQ(result.status, 0);
  EXPECT_EQ(result.err, ""); // not a terminal: no progress bar
  std::vector<std::string> out = lines(result.out);
  ASSERT_EQ(out.size(), 5u) << result.out;
  EXPECT_EQ(out[0], "steps 12");
  EXPECT_EQ(out[1], "steps_done 12");
  // The mean of the last 10 losses.
  double sum = 0;
  for (size_t i = 2; i < 12; ++i)
    sum += linear().losses[i];
  char expected[64];
  std::snprintf(expected, sizeof(expected), "final_loss %.9g", sum / 10);
  EXPECT_EQ(out[2], expected);
  EXPECT_EQ(out[3].rfind("mean_step_ms ", 0), 0u);
  EXPECT_EQ(out[4].rfind("samples_per_s ", 0), 0u);
}

TEST_F(DriverTrainTest, EpochLines) {
  run_result result = run({"--epochs", "3", "--threads", "2"});
  ASSERT_EQ(result.status, 0);
  std::vector<std::string> out = lines(result.out);
  ASSERT_EQ(out.size(), 8u) << result.out;
  const std::vector<float> &losses = linear().losses;
  for (size_t e = 0; e < 3; ++e) {
    char expected[64];
    std::snprintf(expected, sizeof(expected), "epoch %zu mean_loss %.9g", e + 1,
                  (static_cast<double>(losses[2 * e]) + losses[2 * e + 1]) / 2);
    EXPECT_EQ(out[e], expected);
  }
  EXPECT_EQ(out[3], "steps 6");
  // With --epochs the final loss is the last epoch's mean.
  EXPECT_EQ(out[5], "final_loss " + out[2].substr(out[2].rfind(' ') + 1));
}

TEST_F(DriverTrainTest, TraceIsAChromeTrace) {
  ASSERT_EQ(run({"--steps", "3", "--trace", path("trace.json")}).status, 0);
  json trace = json::parse(read_file(path("trace.json")));
  ASSERT_TRUE(trace["traceEvents"].is_array());
  int steps = 0, counters = 0, threads = 0;
  bool host_thread = false;
  for (const json &event : trace["traceEvents"]) {
    if (event["ph"] == "M" && event["name"] == "thread_name")
      host_thread = event["args"]["name"] == "host";
    if (event["ph"] == "X" && event["cat"] == "step") {
      ++steps;
      EXPECT_EQ(event["name"], "step " + std::to_string(steps));
      EXPECT_EQ(event["tid"], 1);
      EXPECT_GE(event["dur"].get<double>(), 0.0);
      EXPECT_EQ(static_cast<float>(event["args"]["loss"].get<double>()),
                linear().losses[static_cast<size_t>(steps - 1)]);
    }
    if (event["ph"] == "C" && event["name"] == "threads")
      threads = event["args"]["threads"].get<int>();
    if (event["ph"] == "C" && event["name"] == "host_bytes") {
      ++counters;
      EXPECT_EQ(event["args"]["host"], linear().step.arena_bytes);
    }
  }
  EXPECT_TRUE(host_thread);
  EXPECT_EQ(steps, 3);
  EXPECT_GE(counters, 3);
  EXPECT_EQ(threads, omp_get_max_threads());
  EXPECT_EQ(list(), (std::vector<std::string>{"trace.json", "x.npy", "y.npy"}));
}

// Runs the driver with stderr on a pseudo-terminal; returns what it drew.
std::string run_on_terminal(const tidalrt_program_t *program,
                            std::vector<std::string> args, int *status) {
  int master = posix_openpt(O_RDWR | O_NOCTTY);
  if (master < 0 || grantpt(master) != 0 || unlockpt(master) != 0)
    return "no pty";
  int slave = open(ptsname(master), O_RDWR | O_NOCTTY);
  if (slave < 0)
    return "no pty";
  std::FILE *err = fdopen(slave, "w");
  std::FILE *out = std::tmpfile();
  args.insert(args.begin(), "prog");
  std::vector<char *> argv;
  for (std::string &arg : args)
    argv.push_back(arg.data());
  *status = tidalrt_driver::run(static_cast<int>(args.size()), argv.data(),
                                program, out, err);
  std::fclose(err);
  std::fclose(out);
  fcntl(master, F_SETFL, O_NONBLOCK);
  std::string drawn;
  char buffer[4096];
  ssize_t n;
  while ((n = read(master, buffer, sizeof(buffer))) > 0)
    drawn.append(buffer, static_cast<size_t>(n));
  close(master);
  return drawn;
}

TEST_F(DriverTrainTest, ProgressBarOnlyOnATerminal) {
  std::vector<std::string> args = {"--input", "x=" + path("x.npy"),
                                   "--input", "y=" + path("y.npy"),
                                   "--steps", "2"};
  int status = -1;
  std::string drawn = run_on_terminal(program.get(), args, &status);
  if (drawn == "no pty")
    GTEST_SKIP() << "no pseudo-terminal";
  EXPECT_EQ(status, 0);
  EXPECT_NE(drawn.find("\r\033[K["), std::string::npos) << drawn;
  EXPECT_NE(drawn.find("] 2/2 loss "), std::string::npos) << drawn;
  EXPECT_NE(drawn.find(" samples/s  ETA 0:00"), std::string::npos) << drawn;
  // The bar is erased at the end.
  EXPECT_EQ(drawn.substr(drawn.size() - 4), "\r\033[K");
  args.push_back("--quiet");
  EXPECT_EQ(run_on_terminal(program.get(), args, &status), "");
  EXPECT_EQ(status, 0);
}

//===----------------------------------------------------------------------===
// Evaluation with a predict function: a two-class classifier with
// logits[b, c] = x[b, c] * w[c] and cross-entropy.
//===----------------------------------------------------------------------===

struct classifier_model {
  function_layout step;
  function_layout predict;
  int predict_calls = 0;
  std::vector<float> predict_w; // w as the last predict call saw it
};

classifier_model &classifier() {
  static classifier_model model;
  return model;
}

float cross_entropy(const float *logits, int64_t label, float *probs) {
  float m = std::max(logits[0], logits[1]);
  float e0 = std::exp(logits[0] - m), e1 = std::exp(logits[1] - m);
  float sum = e0 + e1;
  if (probs) {
    probs[0] = e0 / sum;
    probs[1] = e1 / sum;
  }
  return std::log(sum) + m - logits[label];
}

tidalrt_status_t classifier_step(tidalrt_context_t *ctx, uint8_t *arena) {
  if (tidalrt::preparing(ctx))
    return nullptr;
  const function_layout &f = classifier().step;
  const float *x = reinterpret_cast<const float *>(arena + f.args.at("x"));
  const int64_t *label =
      reinterpret_cast<const int64_t *>(arena + f.args.at("label"));
  const float *w = reinterpret_cast<const float *>(arena + f.args.at("w"));
  float loss = 0, grad[2] = {0, 0};
  for (int b = 0; b < 4; ++b) {
    float logits[2] = {x[2 * b] * w[0], x[2 * b + 1] * w[1]}, probs[2];
    loss += cross_entropy(logits, label[b], probs);
    for (int c = 0; c < 2; ++c)
      grad[c] += (probs[c] - (label[b] == c ? 1.0f : 0.0f)) * x[2 * b + c];
  }
  *reinterpret_cast<float *>(arena + f.results.at("loss")) = loss / 4;
  float *w_new = reinterpret_cast<float *>(arena + f.results.at("w"));
  for (int c = 0; c < 2; ++c)
    w_new[c] = w[c] - 0.5f * grad[c] / 4;
  return nullptr;
}

tidalrt_status_t classifier_predict(tidalrt_context_t *ctx, uint8_t *arena) {
  if (tidalrt::preparing(ctx))
    return nullptr;
  const function_layout &f = classifier().predict;
  const float *x = reinterpret_cast<const float *>(arena + f.args.at("x"));
  const int64_t *label =
      reinterpret_cast<const int64_t *>(arena + f.args.at("label"));
  const float *w = reinterpret_cast<const float *>(arena + f.args.at("w"));
  float *logits = reinterpret_cast<float *>(arena + f.results.at("logits"));
  float loss = 0;
  for (int b = 0; b < 4; ++b) {
    logits[2 * b] = x[2 * b] * w[0];
    logits[2 * b + 1] = x[2 * b + 1] * w[1];
    loss += cross_entropy(logits + 2 * b, label[b], nullptr);
  }
  *reinterpret_cast<float *>(arena + f.results.at("loss")) = loss / 4;
  ++classifier().predict_calls;
  classifier().predict_w.assign(w, w + 2);
  return nullptr;
}

class DriverEvalTest : public tidalrt_test::TempDirTest {
protected:
  void SetUp() override {
    TempDirTest::SetUp();
    classifier_model &m = classifier();
    m = classifier_model();
    std::vector<slot_spec> inputs = {{"x", "input", "float32", {4, 2}},
                                     {"label", "input", "int64", {4}},
                                     {"w", "param", "float32", {2}}};
    m.step = layout_function(inputs, {{"loss", "loss", "float32", {}},
                                      {"w", "param", "float32", {2}}});
    m.predict =
        layout_function(inputs, {{"logits", "output", "float32", {4, 2}},
                                 {"loss", "loss", "float32", {}}});
    program.manifest = base_manifest("train", 4);
    program.manifest["model"] = "classifier.onnx";
    program.manifest["loss"] = "cross-entropy";
    onnx::ModelProto model;
    model.set_ir_version(8);
    onnx::TensorProto *w = add_initializer(model.mutable_graph(), "w",
                                           onnx::TensorProto::FLOAT, {2});
    w->add_float_data(1.0f);
    w->add_float_data(-1.0f);
    program.set_model(model);
    program.manifest["functions"] = {{"step", m.step.description},
                                     {"predict", m.predict.description}};
    program.program.step = classifier_step;
    program.program.predict = classifier_predict;

    // Training data: 8 samples; held-out data: 10 samples.
    for (int i = 0; i < 10; ++i) {
      float a = static_cast<float>(i % 3) - 1.0f;
      float b = static_cast<float>(i % 4) / 2 - 0.5f;
      eval_x.push_back(a);
      eval_x.push_back(b);
      eval_label.push_back(i % 2);
    }
    write_npy(path("x.npy"), TIDALRT_ELEMENT_TYPE_F32, {8, 2}, eval_x.data());
    write_npy(path("label.npy"), TIDALRT_ELEMENT_TYPE_I64, {8},
              eval_label.data());
    write_npy(path("ex.npy"), TIDALRT_ELEMENT_TYPE_F32, {10, 2}, eval_x.data());
    write_npy(path("elabel.npy"), TIDALRT_ELEMENT_TYPE_I64, {10},
              eval_label.data());
  }

  run_result run(std::vector<std::string> more) {
    std::vector<std::string> args = {
        "--input",      "x=" + path("x.npy"),
        "--input",      "label=" + path("label.npy"),
        "--eval-input", "x=" + path("ex.npy"),
        "--eval-input", "label=" + path("elabel.npy")};
    args.insert(args.end(), more.begin(), more.end());
    return run_driver(program.get(), args);
  }

  // The expected loss (full batches) and accuracy (every sample) for w.
  void expected_eval(const std::vector<float> &w, double *loss,
                     double *accuracy) const {
    double loss_sum = 0;
    int correct = 0;
    for (int batch = 0; batch < 2; ++batch) {
      float batch_loss = 0;
      for (int b = 0; b < 4; ++b) {
        int i = batch * 4 + b;
        float logits[2] = {eval_x[2 * i] * w[0], eval_x[2 * i + 1] * w[1]};
        batch_loss += cross_entropy(logits, eval_label[i], nullptr);
      }
      loss_sum += batch_loss / 4;
    }
    for (int i = 0; i < 10; ++i) {
      float l0 = eval_x[2 * i] * w[0], l1 = eval_x[2 * i + 1] * w[1];
      correct += (l1 > l0 ? 1 : 0) == eval_label[i];
    }
    *loss = loss_sum / 2;
    *accuracy = correct / 10.0;
  }

  fake_program program;
  std::vector<float> eval_x;
  std::vector<int64_t> eval_label;
};

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

//===----------------------------------------------------------------------===
// --target sim: the step runs on a SIM device whose memory is the arena.
//===----------------------------------------------------------------------===

TEST_F(DriverEvalTest, SimTargetEqualsCpu) {
  run_result cpu = run({"--steps", "3", "--log", path("cpu.jsonl")});
  ASSERT_EQ(cpu.status, 0) << cpu.err;
  std::vector<float> cpu_w = classifier().predict_w;
  // The step on a device; the predict function on the host (no
  // device_bytes), then on a device of its own.
  program.manifest["target"] = "sim";
  program.manifest["functions"]["step"]["device_bytes"] =
      classifier().step.arena_bytes + 64;
  for (bool predict_on_device : {false, true}) {
    if (predict_on_device)
      program.manifest["functions"]["predict"]["device_bytes"] =
          classifier().predict.arena_bytes;
    classifier().predict_calls = 0;
    run_result sim = run({"--steps", "3", "--log", path("sim.jsonl")});
    ASSERT_EQ(sim.status, 0) << sim.err;
    EXPECT_EQ(untimed(sim.out), untimed(cpu.out));
    EXPECT_EQ(classifier().predict_calls, 3);
    EXPECT_EQ(classifier().predict_w, cpu_w);
    // Host memory: the predict arena if it is on the host (the step's
    // arena is device memory; no copies, no scratch).
    EXPECT_EQ(read_jsonl(path("sim.jsonl")).at(0)["host_peak_bytes"],
              predict_on_device ? 0 : classifier().predict.arena_bytes);
  }
}

class DriverSimDeviceTest : public DriverTrainTest {
protected:
  void SetUp() override {
    DriverTrainTest::SetUp();
    make_sim_program(program);
  }

  static void make_sim_program(fake_program &p) {
    make_linear_device_program(p, "sim");
  }
};

TEST_F(DriverSimDeviceTest, TrainingEqualsTheCpuTarget) {
  fake_program cpu_program;
  make_linear_program(cpu_program);
  std::vector<std::string> args = {"--input",  "x=" + path("x.npy"),
                                   "--input",  "y=" + path("y.npy"),
                                   "--steps",  "7",
                                   "--shuffle"};
  std::vector<std::string> cpu_args = args, sim_args = args;
  cpu_args.insert(cpu_args.end(), {"--save", path("cpu.onnx")});
  sim_args.insert(sim_args.end(), {"--save", path("sim.onnx")});
  run_result cpu = run_driver(cpu_program.get(), cpu_args);
  ASSERT_EQ(cpu.status, 0) << cpu.err;
  std::vector<float> cpu_losses = linear().losses;
  std::vector<float> cpu_w = linear().last_w;
  make_sim_program(program);
  run_result sim = run_driver(program.get(), sim_args);
  ASSERT_EQ(sim.status, 0) << sim.err;
  EXPECT_EQ(linear().prepare_calls, 1);
  EXPECT_EQ(linear().losses, cpu_losses);
  EXPECT_EQ(linear().last_w, cpu_w);
  EXPECT_EQ(untimed(sim.out), untimed(cpu.out));
  EXPECT_EQ(read_file(path("sim.onnx")), read_file(path("cpu.onnx")));
}

TEST_F(DriverSimDeviceTest, LogHasTheDeviceFigures) {
  ASSERT_EQ(run({"--steps", "3", "--log", path("log.jsonl")}).status, 0);
  std::vector<json> log = read_jsonl(path("log.jsonl"));
  ASSERT_EQ(log.size(), 3u);
  for (const json &entry : log) {
    // Op 0 touches the whole arena: the measured peak is its size.
    EXPECT_EQ(entry["device_peak_bytes"], linear().step.arena_bytes);
    EXPECT_EQ(entry["bytes_to_host"], 8);
    EXPECT_EQ(entry["bytes_to_device"], 8);
    // Host memory: the 64-byte host arena (no scratch).
    EXPECT_EQ(entry["host_peak_bytes"], 64);
  }
}

TEST_F(DriverSimDeviceTest, KernelFaultNamesTheLaunchedOp) {
  linear().fail_call = 1;
  linear().fail_op = 2; // the launch's op (0) wins
  run_result result = run({"--steps", "3", "--log", path("log.jsonl")});
  EXPECT_EQ(result.status, 2);
  EXPECT_EQ(result.err.rfind("prog: error: op '/MatMul' (matmul): ", 0), 0u)
      << result.err;
  EXPECT_NE(result.err.find("stream 0 (compute)"), std::string::npos)
      << result.err;
  EXPECT_NE(result.err.find("injected failure"), std::string::npos)
      << result.err;
  EXPECT_EQ(read_jsonl(path("log.jsonl")).size(), 1u);
}

TEST_F(DriverSimDeviceTest, PrepareFaultNamesTheLaunchedOp) {
  linear().fail_prepare = true;
  linear().fail_op = 2;
  run_result result = run({"--steps", "3"});
  EXPECT_EQ(result.status, 2);
  EXPECT_EQ(result.err,
            "prog: error: op '/MatMul' (matmul): injected prepare\n");
  EXPECT_TRUE(linear().steps.empty());
}

TEST_F(DriverSimDeviceTest, ManifestErrors) {
  auto expect_error = [&](const std::string &message) {
    run_result result = run({"--steps", "1"});
    EXPECT_EQ(result.status, 2);
    EXPECT_NE(result.err.find(message), std::string::npos) << result.err;
  };
  json &step = program.manifest["functions"]["step"];
  program.manifest["target"] = "tpu";
  expect_error("malformed program manifest: target 'tpu' is not one this "
               "runtime runs (cpu, sim, cuda)");
  program.manifest["target"] = "sim";
  step["device_bytes"] = linear().step.arena_bytes - 64;
  expect_error("functions.step.device_bytes " +
               std::to_string(linear().step.arena_bytes - 64) +
               " is below its arena_bytes");
  step.erase("device_bytes");
  expect_error("functions.step has copies (host_arena_bytes, num_copies) but "
               "no device_bytes");
  step["host_arena_bytes"] = 0;
  step["num_copies"] = 0;
  expect_error("functions.step of a sim program has no \"device_bytes\"");
  program.manifest["target"] = "cpu";
  step["num_copies"] = 2;
  step["device_bytes"] = 4096;
  expect_error("a cpu program has copies");
}

TEST_F(DriverSimDeviceTest, LinkBandwidthFromTheEnvironment) {
  setenv("TIDAL_SIM_LINK_GBPS", "fast", 1);
  run_result bad = run({"--steps", "1"});
  setenv("TIDAL_SIM_LINK_GBPS", "0.001", 1); // 8 bytes in 8 us
  run_result slow = run({"--steps", "2"});
  unsetenv("TIDAL_SIM_LINK_GBPS");
  EXPECT_EQ(bad.status, 1);
  EXPECT_NE(bad.err.find("TIDAL_SIM_LINK_GBPS='fast' is not a bandwidth"),
            std::string::npos)
      << bad.err;
  EXPECT_EQ(slow.status, 0) << slow.err;
}

//===----------------------------------------------------------------------===
// Slots in the host arena ("space": "host"): ZeRO-Offload keeps the
// optimizer state in host memory (with --placement host, even the inputs,
// params and loss). Such a slot's offset is in the function's host arena,
// which the driver allocates (zeroed) and attaches to the device, and where
// it loads, updates, syncs, reads and saves the value.
//===----------------------------------------------------------------------===

// A function whose code (`inner`) finds every slot at its place in the
// arena (a function_layout), while the manifest puts some of them in the
// host arena: the function prefetches those args from the host arena to
// their arena places before running `inner`, and offloads those results
// from their arena places to the host arena after it. The values live in
// the host arena between calls: only the driver puts them there.
struct host_slot {
  bool result;
  uint64_t host_offset;
  uint64_t device_offset;
  uint64_t bytes;
};

struct host_placement {
  std::vector<host_slot> slots;
  int64_t first_copy = 0;
  tidalrt_status_t (*inner)(tidalrt_context_t *, uint8_t *) = nullptr;
};

host_placement &step_placement() {
  static host_placement placement;
  return placement;
}

host_placement &predict_placement() {
  static host_placement placement;
  return placement;
}

tidalrt_status_t run_placed(const host_placement &p, tidalrt_context_t *ctx,
                            uint8_t *arena) {
  tidalrt_status_t status = nullptr;
  int64_t copy = p.first_copy;
  for (const host_slot &slot : p.slots)
    if (!slot.result && !status)
      status = tidalrt_dev_prefetch(ctx, copy++, slot.host_offset,
                                    slot.device_offset, slot.bytes);
  // `inner` may read the arena on this thread: let the prefetches land.
  if (!status)
    status = tidalrt_dev_synchronize(ctx);
  if (!status)
    status = p.inner(ctx, arena);
  for (const host_slot &slot : p.slots)
    if (slot.result && !status)
      status = tidalrt_dev_offload(ctx, copy++, slot.host_offset,
                                   slot.device_offset, slot.bytes);
  if (status)
    return status;
  return tidalrt_dev_synchronize(ctx);
}

tidalrt_status_t placed_step(tidalrt_context_t *ctx, uint8_t *arena) {
  return run_placed(step_placement(), ctx, arena);
}

tidalrt_status_t placed_predict(tidalrt_context_t *ctx, uint8_t *arena) {
  return run_placed(predict_placement(), ctx, arena);
}

// Moves the args named in `args` and the results named in `results` of
// `function` (a manifest function with a device_bytes) to its host arena,
// after the host_arena_bytes it has, 64-byte aligned; with `in_place`, a
// moved result shares the host bytes of the moved arg of its name. Adds one
// copy id per moved slot.
host_placement
place_in_host(json &function, const std::set<std::string> &args,
              const std::set<std::string> &results, bool in_place,
              tidalrt_status_t (*inner)(tidalrt_context_t *, uint8_t *)) {
  host_placement placement;
  placement.inner = inner;
  uint64_t next = function.value("host_arena_bytes", uint64_t{0});
  next = (next + 63) / 64 * 64;
  int64_t copies = function.value("num_copies", int64_t{0});
  placement.first_copy = copies;
  std::map<std::string, uint64_t> arg_offsets;
  auto move = [&](json &slot, bool result) {
    std::string name = slot["name"].get<std::string>();
    uint64_t bytes = slot["bytes"].get<uint64_t>();
    uint64_t host_offset;
    if (result && in_place && arg_offsets.count(name)) {
      host_offset = arg_offsets[name];
    } else {
      host_offset = next;
      next += (bytes + 63) / 64 * 64;
    }
    if (!result)
      arg_offsets[name] = host_offset;
    placement.slots.push_back(
        {result, host_offset, slot["offset"].get<uint64_t>(), bytes});
    slot["space"] = "host";
    slot["offset"] = host_offset;
    ++copies;
  };
  for (json &slot : function["args"])
    if (args.count(slot["name"].get<std::string>()))
      move(slot, false);
  for (json &slot : function["results"])
    if (results.count(slot["name"].get<std::string>()))
      move(slot, true);
  function["host_arena_bytes"] = next;
  function["num_copies"] = copies;
  return placement;
}

class DriverHostArenaTest : public DriverSimDeviceTest {
protected:
  // The sim program of the linear model with the named args and results
  // in the host arena.
  static void make_host_program(fake_program &p,
                                const std::set<std::string> &args,
                                const std::set<std::string> &results,
                                bool in_place = false) {
    make_sim_program(p);
    step_placement() = place_in_host(p.manifest["functions"]["step"], args,
                                     results, in_place, linear_sim_step);
    p.program.step = placed_step;
  }
  static void make_host_program(fake_program &p,
                                const std::set<std::string> &names,
                                bool in_place = false) {
    make_host_program(p, names, names, in_place);
  }

  struct outcome {
    run_result result;
    std::vector<float> losses;
    std::vector<float> last_w;
    std::string saved;
  };

  // Runs `p` with the data and `more`, saving to `save`.
  outcome train(fake_program &p, std::vector<std::string> more,
                const std::string &save) {
    std::vector<std::string> args = {"--input", "x=" + path("x.npy"),
                                     "--input", "y=" + path("y.npy"),
                                     "--save",  save};
    args.insert(args.end(), more.begin(), more.end());
    outcome o;
    o.result = run_driver(p.get(), args);
    o.losses = linear().losses;
    o.last_w = linear().last_w;
    o.saved = read_file(save);
    return o;
  }

  // Training the linear model with the named args and results in the host
  // arena is bit for bit that of the program with every slot in the arena
  // (and that of the cpu target).
  void expect_same_training(const std::set<std::string> &args,
                            const std::set<std::string> &results,
                            bool in_place = false,
                            std::vector<std::string> more = {"--steps", "7",
                                                             "--shuffle"}) {
    fake_program cpu_program, arena_program, host_program;
    make_linear_program(cpu_program);
    outcome cpu = train(cpu_program, more, path("cpu.onnx"));
    ASSERT_EQ(cpu.result.status, 0) << cpu.result.err;
    make_sim_program(arena_program);
    outcome in_arena = train(arena_program, more, path("arena.onnx"));
    ASSERT_EQ(in_arena.result.status, 0) << in_arena.result.err;
    make_host_program(host_program, args, results, in_place);
    std::vector<std::string> logged = more;
    logged.insert(logged.end(), {"--log", path("host.jsonl")});
    outcome in_host = train(host_program, logged, path("host.onnx"));
    ASSERT_EQ(in_host.result.status, 0) << in_host.result.err;
    ASSERT_FALSE(in_host.losses.empty());
    EXPECT_EQ(in_host.losses, in_arena.losses);
    EXPECT_EQ(in_host.last_w, in_arena.last_w);
    EXPECT_EQ(untimed(in_host.result.out), untimed(in_arena.result.out));
    EXPECT_EQ(in_host.saved, in_arena.saved);
    EXPECT_EQ(in_arena.saved, cpu.saved);
    EXPECT_EQ(in_arena.losses, cpu.losses);
    // Host memory: the host arena, copies and host slots alike.
    uint64_t host_arena_bytes =
        host_program.manifest["functions"]["step"]["host_arena_bytes"];
    for (const json &entry : read_jsonl(path("host.jsonl")))
      EXPECT_EQ(entry["host_peak_bytes"], host_arena_bytes);
  }
};

TEST_F(DriverHostArenaTest, OptimizerStateTrainsAsInTheArena) {
  std::set<std::string> names = {"w.momentum_buffer", "optimizer.step"};
  expect_same_training(names, names);
}

TEST_F(DriverHostArenaTest, ParamStateAndConstantTrainAsInTheArena) {
  // "two" is a constant: an arg without a result, loaded from the model.
  std::set<std::string> names = {"w", "seen", "two"};
  expect_same_training(names, names);
}

TEST_F(DriverHostArenaTest, EverySlotInTheHostArena) {
  // --placement host: the inputs, every persistent value and the loss.
  std::set<std::string> names = {
      "x",    "y",   "loss",          "w", "w.momentum_buffer",
      "seen", "two", "optimizer.step"};
  expect_same_training(names, names);
  // Epochs read the loss from the host arena too.
  expect_same_training(names, names, false, {"--epochs", "2"});
}

TEST_F(DriverHostArenaTest, InPlaceHostSlotsTrainAsInTheArena) {
  std::set<std::string> names = {"w", "w.momentum_buffer", "optimizer.step",
                                 "seen"};
  expect_same_training(names, names, /*in_place=*/true);
}

TEST_F(DriverHostArenaTest, ArgAndResultInDifferentSpaces) {
  // The new w goes to the host arena and is copied into the arena's w; the
  // new momentum buffer goes to the arena and is copied into the host
  // arena's.
  expect_same_training({"w.momentum_buffer", "seen"}, {"w", "seen"});
}

TEST_F(DriverHostArenaTest, UpdatesCompareSpaceAndOffset) {
  auto updates = [](fake_program &p) {
    const tidalrt_program_t *program = p.get();
    tidalrt_driver::manifest m =
        tidalrt_driver::parse_manifest(program->manifest, program->blob_size);
    std::map<std::string, std::pair<bool, bool>> found; // arg, result host
    for (const tidalrt_driver::update &u : tidalrt_driver::find_updates(m.step))
      found[u.arg->name] = {u.arg->host, u.result->host};
    return found;
  };
  using spaces = std::map<std::string, std::pair<bool, bool>>;
  fake_program p;
  make_sim_program(p);
  spaces in_arena = {{"w", {false, false}},
                     {"w.momentum_buffer", {false, false}},
                     {"optimizer.step", {false, false}},
                     {"seen", {false, false}}};
  EXPECT_EQ(updates(p), in_arena);
  // Same space, other offsets: copied.
  make_host_program(p, {"w", "w.momentum_buffer", "optimizer.step", "seen"});
  spaces in_host = {{"w", {true, true}},
                    {"w.momentum_buffer", {true, true}},
                    {"optimizer.step", {true, true}},
                    {"seen", {true, true}}};
  EXPECT_EQ(updates(p), in_host);
  // Same space, same offset: nothing to copy.
  make_host_program(p, {"w", "w.momentum_buffer"}, /*in_place=*/true);
  spaces in_place = {{"optimizer.step", {false, false}},
                     {"seen", {false, false}}};
  EXPECT_EQ(updates(p), in_place);
  // Another space at the same offset: copied.
  make_sim_program(p);
  json &step = p.manifest["functions"]["step"];
  step["host_arena_bytes"] = 4096;
  for (json &slot : step["results"])
    if (slot["name"] == "w") {
      for (json &arg : step["args"])
        if (arg["name"] == "w")
          slot["offset"] = arg["offset"];
      slot["space"] = "host";
    }
  spaces crossed = in_arena;
  crossed["w"] = {false, true};
  EXPECT_EQ(updates(p), crossed);
}

TEST_F(DriverHostArenaTest, InitLoadsHostResidentValues) {
  // A checkpoint with trained params, momentum, optimizer step and state.
  fake_program cpu_program, arena_program, host_program;
  make_linear_program(cpu_program);
  outcome start = train(cpu_program, {"--steps", "3"}, path("start.onnx"));
  ASSERT_EQ(start.result.status, 0) << start.result.err;
  std::vector<std::string> more = {"--init", path("start.onnx"), "--steps",
                                   "4"};
  make_sim_program(arena_program);
  outcome in_arena = train(arena_program, more, path("arena.onnx"));
  ASSERT_EQ(in_arena.result.status, 0) << in_arena.result.err;
  make_host_program(host_program, {"w", "w.momentum_buffer", "optimizer.step",
                                   "seen", "two"});
  outcome in_host = train(host_program, more, path("host.onnx"));
  ASSERT_EQ(in_host.result.status, 0) << in_host.result.err;
  EXPECT_EQ(in_host.losses, in_arena.losses);
  EXPECT_EQ(in_host.saved, in_arena.saved);
  EXPECT_NE(in_host.saved, start.saved);
  EXPECT_EQ(untimed(in_host.result.out), untimed(in_arena.result.out));
  // The resumed run went on from the checkpoint's values: its first loss
  // is not that of the initial weights.
  make_host_program(host_program, {"w", "w.momentum_buffer", "optimizer.step",
                                   "seen", "two"});
  outcome fresh = train(host_program, {"--steps", "4"}, path("fresh.onnx"));
  ASSERT_EQ(fresh.result.status, 0) << fresh.result.err;
  ASSERT_FALSE(fresh.losses.empty());
  EXPECT_NE(in_host.losses.at(0), fresh.losses.at(0));
}

TEST_F(DriverHostArenaTest, ForwardModeUsesHostSlots) {
  auto forward_run = [&](fake_program &p, const std::string &dir) {
    p.manifest["mode"] = "forward";
    run_result result =
        run_driver(p.get(), {"--input", "x=" + path("x.npy"), "--input",
                             "y=" + path("y.npy"), "--output-dir", path(dir)});
    EXPECT_EQ(result.status, 0) << result.err;
    return read_file(path(dir + "/loss.npy"));
  };
  fake_program arena_program, host_program;
  make_sim_program(arena_program);
  std::string in_arena = forward_run(arena_program, "arena");
  std::vector<float> arena_losses = linear().losses;
  make_host_program(host_program, {"x", "y", "loss", "w", "two"});
  std::string in_host = forward_run(host_program, "host");
  EXPECT_EQ(linear().losses.size(), 3u);
  EXPECT_EQ(linear().losses, arena_losses);
  EXPECT_FALSE(in_host.empty());
  EXPECT_EQ(in_host, in_arena);
}

TEST_F(DriverHostArenaTest, ManifestErrors) {
  auto expect_error = [&](const std::string &message) {
    run_result result = run({"--steps", "1"});
    EXPECT_EQ(result.status, 2);
    EXPECT_NE(result.err.find("malformed program manifest: " + message),
              std::string::npos)
        << result.err;
  };
  make_host_program(program, {"w.momentum_buffer"});
  json &step = program.manifest["functions"]["step"];
  json &buf = step["args"][3];
  ASSERT_EQ(buf["name"], "w.momentum_buffer");
  uint64_t host_arena_bytes = step["host_arena_bytes"];
  // "space": "device" is the arena, as no space.
  step["args"][2]["space"] = "device";
  EXPECT_EQ(run({"--steps", "1"}).status, 0);
  buf["space"] = "gpu";
  expect_error("functions.step.args[3] ('w.momentum_buffer') has unknown "
               "space 'gpu' (neither 'device' nor 'host')");
  buf["space"] = 1;
  expect_error("functions.step.args[3] ('w.momentum_buffer').space is not a "
               "string");
  buf["space"] = "host";
  buf["offset"] = host_arena_bytes - 4;
  expect_error("functions.step.args[3] ('w.momentum_buffer') lies outside "
               "the " +
               std::to_string(host_arena_bytes) + "-byte host arena");
  // Within the arena, but the host arena is smaller.
  buf["offset"] = host_arena_bytes + 64;
  ASSERT_LT(host_arena_bytes + 72, linear().step.arena_bytes);
  expect_error("functions.step.args[3] ('w.momentum_buffer') lies outside "
               "the " +
               std::to_string(host_arena_bytes) + "-byte host arena");
  buf["offset"] = 64;
  ASSERT_EQ(run({"--steps", "1"}).status, 0);
  // A cpu program has no host arena, whatever its device fields say.
  program.manifest["target"] = "cpu";
  expect_error("functions.step.args[3] ('w.momentum_buffer') is in the host "
               "arena (\"space\": \"host\"), which a cpu program does not "
               "have");
  step["host_arena_bytes"] = 0;
  step["num_copies"] = 0;
  buf["offset"] = 0;
  buf["bytes"] = 0;
  buf["shape"] = json::array({0});
  expect_error("functions.step.args[3] ('w.momentum_buffer') is in the host "
               "arena (\"space\": \"host\"), which a cpu program does not "
               "have");
}

TEST_F(DriverEvalTest, HostSlotsNeedADevice) {
  // A sim predict function without a device_bytes runs on the host: it has
  // no host arena.
  program.manifest["target"] = "sim";
  json &functions = program.manifest["functions"];
  functions["step"]["device_bytes"] = classifier().step.arena_bytes;
  functions["predict"]["host_arena_bytes"] = 0;
  functions["predict"]["args"][2]["space"] = "host";
  run_result result = run({"--steps", "1"});
  EXPECT_EQ(result.status, 2);
  EXPECT_NE(result.err.find("malformed program manifest: "
                            "functions.predict.args[2] ('w') is in the host "
                            "arena (\"space\": \"host\"), but "
                            "functions.predict has no \"device_bytes\": it "
                            "runs on the host, without a host arena"),
            std::string::npos)
      << result.err;
}

TEST_F(DriverEvalTest, PredictSyncsFromHostSlots) {
  run_result cpu = run({"--steps", "3"});
  ASSERT_EQ(cpu.status, 0) << cpu.err;
  std::vector<float> cpu_w = classifier().predict_w;
  // The step keeps w (and reads x) in its host arena; the predict function
  // runs on the host, then on a device of its own with w, x, its logits
  // and loss in its host arena.
  program.manifest["target"] = "sim";
  json &functions = program.manifest["functions"];
  functions["step"]["device_bytes"] = classifier().step.arena_bytes;
  step_placement() = place_in_host(functions["step"], {"w", "x"}, {"w"},
                                   /*in_place=*/false, classifier_step);
  program.program.step = placed_step;
  for (bool predict_on_device : {false, true}) {
    if (predict_on_device) {
      functions["predict"]["device_bytes"] = classifier().predict.arena_bytes;
      predict_placement() =
          place_in_host(functions["predict"], {"w", "x"}, {"logits", "loss"},
                        /*in_place=*/false, classifier_predict);
      program.program.predict = placed_predict;
    }
    classifier().predict_calls = 0;
    classifier().predict_w.clear();
    run_result sim = run({"--steps", "3"});
    ASSERT_EQ(sim.status, 0) << sim.err;
    EXPECT_EQ(untimed(sim.out), untimed(cpu.out));
    EXPECT_NE(untimed(sim.out).find("eval_accuracy "), std::string::npos);
    EXPECT_EQ(classifier().predict_calls, 3);
    EXPECT_EQ(classifier().predict_w, cpu_w);
  }
}

} // namespace
