// driver_train_test.cpp - the training loop: batch order, shuffling,
// resuming bit for bit, --save, --log, --trace, runtime faults.
#include "driver_train_fixtures.h"

#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <omp.h>
#include <set>
#include <sys/resource.h>
#include <unistd.h>

namespace {

using namespace driver_test;

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

} // namespace
