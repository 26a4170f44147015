// driver_options_test.cpp - the generated executable's command line, its
// usage, and every bad-input path (one line on stderr, exit status 1).
#include "driver_test_util.h"

#include <cstdlib>
#include <omp.h>

namespace {

using namespace driver_test;

class DriverOptionsTest : public tidalrt_test::TempDirTest {
protected:
  void SetUp() override {
    TempDirTest::SetUp();
    make_linear_program(program);
    linear_data(10, &x, &y);
    write_npy(path("x.npy"), TIDALRT_ELEMENT_TYPE_F32, {10, 2}, x.data());
    write_npy(path("y.npy"), TIDALRT_ELEMENT_TYPE_F32, {10}, y.data());
  }

  run_result run(const std::vector<std::string> &args) {
    return run_driver(program.get(), args);
  }

  std::vector<std::string> inputs(std::vector<std::string> more = {}) {
    std::vector<std::string> args = {"--input", "x=" + path("x.npy"), "--input",
                                     "y=" + path("y.npy")};
    args.insert(args.end(), more.begin(), more.end());
    return args;
  }

  // A failed run: nothing on stdout, one line on stderr, no step run.
  void expect_error(const run_result &result, int status,
                    const std::string &message) {
    EXPECT_EQ(result.status, status);
    EXPECT_EQ(result.err, "prog: error: " + message + "\n");
    EXPECT_EQ(result.out, "");
    EXPECT_TRUE(linear().steps.empty());
  }

  fake_program program;
  std::vector<float> x, y;
};

TEST_F(DriverOptionsTest, HelpPrintsUsageOnStdout) {
  run_result result = run({"--help"});
  EXPECT_EQ(result.status, 0);
  EXPECT_EQ(result.err, "");
  const std::string &usage = result.out;
  EXPECT_EQ(usage.rfind("usage: prog [--input NAME=FILE.npy ...] "
                        "[--steps N | --epochs E] [options]\n",
                        0),
            0u)
      << usage;
  EXPECT_NE(usage.find("Trains linear.onnx: batch size 4, loss output, "
                       "optimizer sgd lr=0.05 momentum=0.9."),
            std::string::npos)
      << usage;
  EXPECT_NE(usage.find("  x" + std::string(23, ' ') + "float32 [N, 2]\n"),
            std::string::npos)
      << usage;
  EXPECT_NE(usage.find("  y" + std::string(23, ' ') + "float32 [N]\n"),
            std::string::npos)
      << usage;
  for (const char *option :
       {"--input NAME=FILE.npy", "--steps N", "--epochs E", "--shuffle",
        "--seed S", "--init FILE.onnx", "--save FILE.onnx", "--log FILE.jsonl",
        "--trace FILE.json", "--threads N", "--quiet", "--help"})
    EXPECT_NE(usage.find(option), std::string::npos) << option;
  EXPECT_TRUE(linear().steps.empty());
  EXPECT_EQ(run({"-h"}).out, usage);
  // --help wins over anything else on the line.
  EXPECT_EQ(run({"--steps", "3", "--help"}).status, 0);
}

TEST_F(DriverOptionsTest, NoArgumentsWithoutEmbeddedDataPrintsUsage) {
  run_result result = run({});
  EXPECT_EQ(result.status, 1);
  EXPECT_EQ(result.out, "");
  EXPECT_EQ(result.err.rfind("usage: prog ", 0), 0u) << result.err;
  EXPECT_TRUE(linear().steps.empty());
}

TEST_F(DriverOptionsTest, NoArgumentsTrainsOnEmbeddedData) {
  program.embed("x", npy_bytes(TIDALRT_ELEMENT_TYPE_F32, {10, 2}, x.data()));
  program.embed("y", npy_bytes(TIDALRT_ELEMENT_TYPE_F32, {10}, y.data()));
  run_result result = run({});
  EXPECT_EQ(result.status, 0) << result.err;
  // One epoch: 10 samples in batches of 4, the last partial batch dropped.
  EXPECT_EQ(linear().steps, (std::vector<uint64_t>{0, 1}));
  EXPECT_EQ(rows_of(linear().x0[1]), (std::vector<int64_t>{4, 5, 6, 7}));
  EXPECT_NE(result.out.find("steps 2\n"), std::string::npos) << result.out;
  // The usage marks embedded inputs.
  EXPECT_NE(run({"--help"}).out.find("(embedded data: "), std::string::npos);
}

TEST_F(DriverOptionsTest, FilesOverrideEmbeddedData) {
  std::vector<float> zeros(20, 0.0f);
  program.embed("x",
                npy_bytes(TIDALRT_ELEMENT_TYPE_F32, {10, 2}, zeros.data()));
  run_result result = run({"--input", "y=" + path("y.npy")});
  EXPECT_EQ(result.status, 0) << result.err;
  EXPECT_EQ(rows_of(linear().x0[1]), (std::vector<int64_t>{0, 0, 0, 0}));
  linear().x0.clear();
  linear().steps.clear();
  result = run(inputs());
  EXPECT_EQ(result.status, 0) << result.err;
  EXPECT_EQ(rows_of(linear().x0[1]), (std::vector<int64_t>{4, 5, 6, 7}));
}

TEST_F(DriverOptionsTest, BadEmbeddedDataNamesTheInput) {
  program.embed("x", "not an npy file");
  run_result result = run({"--input", "y=" + path("y.npy")});
  EXPECT_EQ(result.status, 1);
  EXPECT_EQ(result.err.rfind("prog: error: embedded data 'x': ", 0), 0u)
      << result.err;
  EXPECT_NE(result.err.find("(input 'x')"), std::string::npos) << result.err;
}

TEST_F(DriverOptionsTest, UnknownOption) {
  expect_error(run(inputs({"--bogus"})), 1,
               "unknown option '--bogus' (see --help)");
  expect_error(run(inputs({"--bogus=3"})), 1,
               "unknown option '--bogus' (see --help)");
  expect_error(run({"stray"}), 1, "unexpected argument 'stray' (see --help)");
  expect_error(run({"-x"}), 1, "unexpected argument '-x' (see --help)");
}

TEST_F(DriverOptionsTest, StepsWithEpochs) {
  expect_error(run(inputs({"--steps", "2", "--epochs", "1"})), 1,
               "--steps and --epochs cannot be combined");
}

TEST_F(DriverOptionsTest, MalformedValues) {
  expect_error(run(inputs({"--steps", "abc"})), 1,
               "--steps expects a non-negative integer, got 'abc'");
  expect_error(run(inputs({"--steps=-1"})), 1,
               "--steps expects a non-negative integer, got '-1'");
  expect_error(run(inputs({"--epochs", "1.5"})), 1,
               "--epochs expects a non-negative integer, got '1.5'");
  expect_error(run(inputs({"--seed", "99999999999999999999"})), 1,
               "--seed value '99999999999999999999' is too large");
  expect_error(run(inputs({"--threads", "0"})), 1,
               "--threads expects auto or a count from 1 to 4096, got '0'");
  expect_error(run(inputs({"--threads", "many"})), 1,
               "--threads expects auto or a count from 1 to 4096, got 'many'");
  expect_error(run(inputs({"--steps"})), 1, "--steps expects a value");
  expect_error(run(inputs({"--shuffle=yes"})), 1, "--shuffle takes no value");
  expect_error(run({"--input", "x.npy"}), 1,
               "--input expects NAME=FILE.npy, got 'x.npy'");
  expect_error(run({"--input", "x="}), 1,
               "--input expects NAME=FILE.npy, got 'x='");
  expect_error(run(inputs({"--steps", "1", "--steps", "2"})), 1,
               "--steps is given more than once");
  expect_error(run(inputs({"--input", "x=" + path("y.npy")})), 1,
               "--input x is given more than once");
  expect_error(run(inputs({"--save="})), 1, "--save expects a file name");
  expect_error(run(inputs({"--output-dir", path("out")})), 1,
               "--output-dir applies only to forward-mode programs");
}

TEST_F(DriverOptionsTest, EqualsFormsAreAccepted) {
  run_result result =
      run({"--input=x=" + path("x.npy"), "--input=y=" + path("y.npy"),
           "--steps=3", "--seed=5", "--quiet"});
  EXPECT_EQ(result.status, 0) << result.err;
  EXPECT_EQ(linear().steps.size(), 3u);
}

TEST_F(DriverOptionsTest, MissingInput) {
  expect_error(run({"--input", "x=" + path("x.npy")}), 1,
               "missing input 'y' (float32 [N]): give --input y=FILE.npy");
}

TEST_F(DriverOptionsTest, UnknownInput) {
  expect_error(run(inputs({"--input", "z=" + path("x.npy")})), 1,
               "--input z=" + path("x.npy") +
                   ": the model has no data input 'z' (its inputs: x, y)");
}

TEST_F(DriverOptionsTest, UnreadableInputFile) {
  std::string missing = path("missing.npy");
  expect_error(
      run({"--input", "x=" + missing, "--input", "y=" + path("y.npy")}), 1,
      missing + ": cannot open: No such file or directory (input "
                "'x')");
}

TEST_F(DriverOptionsTest, MalformedNpyFile) {
  write_file(path("bad.npy"), "PK\x03\x04 this is a zip file");
  run_result result =
      run({"--input", "x=" + path("bad.npy"), "--input", "y=" + path("y.npy")});
  EXPECT_EQ(result.status, 1);
  EXPECT_EQ(result.err.rfind("prog: error: " + path("bad.npy") + ": ", 0), 0u)
      << result.err;
  EXPECT_NE(result.err.find("(input 'x')\n"), std::string::npos) << result.err;
  EXPECT_EQ(std::count(result.err.begin(), result.err.end(), '\n'), 1);
}

TEST_F(DriverOptionsTest, WrongDtype) {
  std::vector<double> wide(x.begin(), x.end());
  write_npy(path("x64.npy"), TIDALRT_ELEMENT_TYPE_F64, {10, 2}, wide.data());
  expect_error(
      run({"--input", "x=" + path("x64.npy"), "--input", "y=" + path("y.npy")}),
      1,
      path("x64.npy") +
          ": input 'x' expects float32 [*, 2], got float64 [10, 2]");
}

TEST_F(DriverOptionsTest, WrongTrailingShape) {
  std::vector<float> three(30, 1.0f);
  write_npy(path("x3.npy"), TIDALRT_ELEMENT_TYPE_F32, {10, 3}, three.data());
  expect_error(
      run({"--input", "x=" + path("x3.npy"), "--input", "y=" + path("y.npy")}),
      1,
      path("x3.npy") +
          ": input 'x' expects float32 [*, 2], got float32 [10, 3]");
  // A scalar has no sample dimension at all.
  float one = 1;
  write_npy(path("scalar.npy"), TIDALRT_ELEMENT_TYPE_F32, {}, &one);
  expect_error(run({"--input", "x=" + path("x.npy"), "--input",
                    "y=" + path("scalar.npy")}),
               1,
               path("scalar.npy") +
                   ": input 'y' expects float32 [*], got float32 []");
}

TEST_F(DriverOptionsTest, UnequalSampleCounts) {
  write_npy(path("y8.npy"), TIDALRT_ELEMENT_TYPE_F32, {8}, y.data());
  expect_error(
      run({"--input", "x=" + path("x.npy"), "--input", "y=" + path("y8.npy")}),
      1,
      path("y8.npy") + ": input 'y' has 8 samples but input 'x' (" +
          path("x.npy") +
          ") has 10; every input needs the same number of samples "
          "(dim 0)");
}

TEST_F(DriverOptionsTest, TooFewSamples) {
  write_npy(path("x3.npy"), TIDALRT_ELEMENT_TYPE_F32, {3, 2}, x.data());
  write_npy(path("y3.npy"), TIDALRT_ELEMENT_TYPE_F32, {3}, y.data());
  expect_error(
      run({"--input", "x=" + path("x3.npy"), "--input", "y=" + path("y3.npy")}),
      1,
      path("x3.npy") +
          ": input 'x' has 3 samples, fewer than the batch size 4");
}

TEST_F(DriverOptionsTest, UnreadableInit) {
  expect_error(run(inputs({"--init", path("none.onnx")})), 1,
               path("none.onnx") + ": cannot read: No such file or directory");
  write_file(path("junk.onnx"), std::string("\xff\xff\xff\xff junk", 9));
  expect_error(run(inputs({"--init", path("junk.onnx")})), 1,
               path("junk.onnx") +
                   ": not a valid ONNX model (the ModelProto does not parse)");
  expect_error(run(inputs({"--init", dir})), 1,
               dir + ": cannot read: Is a directory");
}

TEST_F(DriverOptionsTest, InitShapeMismatch) {
  onnx::ModelProto model = linear_onnx();
  onnx::TensorProto *w = model.mutable_graph()->mutable_initializer(0);
  w->add_dims(1); // [2] -> [2, 1]
  write_file(path("init.onnx"), model.SerializeAsString());
  expect_error(run(inputs({"--init", path("init.onnx")})), 1,
               path("init.onnx") +
                   ": initializer 'w' is float32 [2, 1], the compiled model "
                   "expects float32 [2]");

  model = linear_onnx();
  model.mutable_graph()->mutable_initializer(0)->set_data_type(
      onnx::TensorProto::DOUBLE);
  write_file(path("init.onnx"), model.SerializeAsString());
  expect_error(run(inputs({"--init", path("init.onnx")})), 1,
               path("init.onnx") +
                   ": initializer 'w' is float64 [2], the compiled model "
                   "expects float32 [2]");

  model = linear_onnx();
  model.mutable_graph()->mutable_initializer(0)->add_float_data(3);
  write_file(path("init.onnx"), model.SerializeAsString());
  expect_error(run(inputs({"--init", path("init.onnx")})), 1,
               path("init.onnx") +
                   ": initializer 'w' (float32 [2]) does not hold 2 values");

  model = linear_onnx();
  model.mutable_graph()->mutable_initializer(1)->set_raw_data("12345678");
  write_file(path("init.onnx"), model.SerializeAsString());
  expect_error(run(inputs({"--init", path("init.onnx")})), 1,
               path("init.onnx") +
                   ": initializer 'seen' holds 8 bytes of raw data, float32 "
                   "[1] needs 4");
}

TEST_F(DriverOptionsTest, InitWithoutAParameter) {
  onnx::ModelProto model = linear_onnx();
  model.mutable_graph()->mutable_initializer()->DeleteSubrange(0, 1);
  write_file(path("init.onnx"), model.SerializeAsString());
  expect_error(run(inputs({"--init", path("init.onnx")})), 1,
               path("init.onnx") +
                   ": no initializer for the parameter 'w' (float32 [2])");
}

TEST_F(DriverOptionsTest, InitWithBadStepCount) {
  onnx::ModelProto model = linear_onnx();
  auto *prop = model.add_metadata_props();
  prop->set_key("tidal.steps_done");
  prop->set_value("12x");
  write_file(path("init.onnx"), model.SerializeAsString());
  expect_error(run(inputs({"--init", path("init.onnx")})), 1,
               path("init.onnx") +
                   ": metadata tidal.steps_done '12x' is not a step count");
}

TEST_F(DriverOptionsTest, UnwritableOutputsFailBeforeTraining) {
  expect_error(run(inputs({"--save", path("no/dir/out.onnx")})), 1,
               "--save " + path("no/dir/out.onnx") +
                   ": cannot write: No such file or directory");
  expect_error(run(inputs({"--save", dir})), 1,
               "--save " + dir + ": cannot write: Is a directory");
  expect_error(run(inputs({"--trace", path("no/t.json")})), 1,
               "--trace " + path("no/t.json") +
                   ": cannot write: No such file or directory");
  expect_error(run(inputs({"--log", path("no/log.jsonl")})), 1,
               "--log " + path("no/log.jsonl") +
                   ": cannot write: No such file or directory");
}

TEST_F(DriverOptionsTest, EvalInputWithoutPredictFunction) {
  expect_error(
      run(inputs({"--eval-input", "x=" + path("x.npy")})), 1,
      "--eval-input: this program has no predict function to evaluate with");
}

TEST_F(DriverOptionsTest, ThreadsSetsOpenMP) {
  int before = omp_get_max_threads();
  run_result result = run(inputs({"--threads", "3", "--steps", "1"}));
  EXPECT_EQ(result.status, 0) << result.err;
  EXPECT_EQ(omp_get_max_threads(), 3);
  omp_set_num_threads(before);
}

// --threads auto (the default without OMP_NUM_THREADS) trains at the start
// count on a quiet machine and reports the count per step and in the
// summary; a fixed count reports it per step only.
TEST_F(DriverOptionsTest, ThreadsAutoReportsTheCount) {
  int before = omp_get_max_threads();
  omp_set_num_threads(2);
  run_result result = run(
      inputs({"--threads", "auto", "--steps", "4", "--log", path("a.jsonl")}));
  EXPECT_EQ(result.status, 0) << result.err;
  EXPECT_NE(result.out.find("\nthreads_mean "), std::string::npos)
      << result.out;
  EXPECT_NE(result.out.find("\nthread_changes "), std::string::npos)
      << result.out;
  std::string log = read_file(path("a.jsonl"));
  EXPECT_NE(log.find("\"threads\": "), std::string::npos) << log;

  result =
      run(inputs({"--threads", "2", "--steps", "2", "--log", path("f.jsonl")}));
  EXPECT_EQ(result.status, 0) << result.err;
  EXPECT_EQ(result.out.find("threads_mean"), std::string::npos) << result.out;
  log = read_file(path("f.jsonl"));
  EXPECT_NE(log.find("\"threads\": 2}"), std::string::npos) << log;
  omp_set_num_threads(before);
}

// A program compiled with a calibrated profile carries its parallel grain
// (tidalc --device-profile): the driver sets it before anything runs; a
// malformed one is a runtime fault.
// TIDAL_THREADS=N|auto is --threads' default (tidal's own: PyTorch and
// other OpenMP programs keep theirs); --threads wins over it.
TEST_F(DriverOptionsTest, TidalThreadsVariableIsTheDefault) {
  int before = omp_get_max_threads();
  const char *saved = std::getenv("TIDAL_THREADS");
  std::string keep = saved ? saved : "";
  setenv("TIDAL_THREADS", "bogus", 1);
  expect_error(run(inputs()), 1,
               "TIDAL_THREADS expects auto or a count from 1 to 4096, got "
               "'bogus'");
  setenv("TIDAL_THREADS", "3", 1);
  run_result result = run(inputs({"--steps", "1"}));
  EXPECT_EQ(result.status, 0) << result.err;
  EXPECT_EQ(omp_get_max_threads(), 3);
  EXPECT_EQ(result.out.find("threads_mean"), std::string::npos);
  result = run(inputs({"--steps", "1", "--threads", "1"}));
  EXPECT_EQ(omp_get_max_threads(), 1);
  omp_set_num_threads(2);
  setenv("TIDAL_THREADS", "auto", 1);
  result = run(inputs({"--steps", "2"}));
  EXPECT_EQ(result.status, 0) << result.err;
  EXPECT_NE(result.out.find("\nthreads_mean "), std::string::npos)
      << result.out;
  if (saved)
    setenv("TIDAL_THREADS", keep.c_str(), 1);
  else
    unsetenv("TIDAL_THREADS");
  omp_set_num_threads(before);
}

TEST_F(DriverOptionsTest, ManifestParallelGrainIsApplied) {
  program.manifest["parallel_grain"] = 0;
  expect_error(run(inputs()), 2,
               "malformed program manifest: parallel_grain 0 is out of range");
  EXPECT_EQ(tidalrt_parallel_grain(), TIDALRT_DEFAULT_PARALLEL_GRAIN);
  program.manifest["parallel_grain"] = 4096;
  run_result result = run(inputs({"--steps", "1"}));
  EXPECT_EQ(result.status, 0) << result.err;
  EXPECT_EQ(tidalrt_parallel_grain(), 4096);
  tidalrt_set_parallel_grain(0);
  make_linear_program(program);
}

TEST_F(DriverOptionsTest, MalformedManifestIsARuntimeFault) {
  program.manifest["format"] = 2;
  expect_error(run(inputs()), 2,
               "malformed program manifest: format 2 is not 1");
  make_linear_program(program);
  program.manifest["functions"]["step"]["args"][0]["bytes"] = 12;
  expect_error(run(inputs()), 2,
               "malformed program manifest: functions.step.args[0] ('x') is "
               "float32 [4, 2] but says 12 bytes");
  make_linear_program(program);
  program.manifest["functions"]["step"]["args"][1]["offset"] = 1u << 20;
  EXPECT_EQ(run(inputs()).status, 2);
  make_linear_program(program);
  program.manifest["functions"]["step"]["results"].erase(0);
  expect_error(run(inputs()), 2,
               "malformed program manifest: functions.step has no result with "
               "role \"loss\"");
  make_linear_program(program);
  program.manifest["model_blob"]["size"] = program.blob.size() + 1;
  EXPECT_EQ(run(inputs()).status, 2);
  make_linear_program(program);
  program.manifest_text = "{not json";
  program.program.manifest = program.manifest_text.c_str();
  run_result result = run_driver(&program.program, inputs());
  EXPECT_EQ(result.status, 2);
  EXPECT_EQ(result.err,
            "prog: error: malformed program manifest: not valid JSON\n");
}

TEST_F(DriverOptionsTest, CompiledModelWithoutAnInitializer) {
  onnx::ModelProto model = linear_onnx();
  model.mutable_graph()->mutable_initializer()->DeleteSubrange(2, 1);
  program.set_model(model);
  expect_error(run(inputs()), 2,
               "linear.onnx (compiled in): the compiled model has no "
               "initializer 'two' (constant)");
}

} // namespace
