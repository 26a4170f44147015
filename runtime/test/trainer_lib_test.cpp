// trainer_lib_test.cpp - the trainer library's C ABI (tidalrt/trainer.h) on
// the fake linear program: steps equal the executable's, values read and
// written by name, save/load, counters, and misuse answered by statuses.
#include "driver_test_util.h"

#include "trainer_lib.h"

#include <cstddef>
#include <cstring>
#include <omp.h>

namespace {

using namespace driver_test;

class TrainerLibTest : public tidalrt_test::TempDirTest {
protected:
  void SetUp() override {
    TempDirTest::SetUp();
    make_linear_program(program);
    linear_data(8, &x, &y);
    x_dims[0] = y_dims[0] = 4;
    x_dims[1] = 2;
  }

  tidalrt_trainer_t create(const tidalrt_trainer_options_t *options = nullptr) {
    tidalrt_trainer_t trainer = 0;
    std::string error = message(
        tidalrt_trainer_create_program(program.get(), options, &trainer));
    EXPECT_EQ(error, "");
    EXPECT_NE(trainer, 0u);
    return trainer;
  }

  // The status's message ("" for success); frees it.
  static std::string message(tidalrt_status_t status) {
    if (!status)
      return "";
    std::string text = tidalrt_status_message(status);
    tidalrt_status_free(status);
    return text;
  }

  // Batch `b` (samples 4b..4b+3) as the step's two inputs.
  std::vector<tidalrt_tensor_view_t> batch(int b) {
    return {{"x", TIDALRT_ELEMENT_TYPE_F32, 2, x_dims, x.data() + 8 * b, 32},
            {"y", TIDALRT_ELEMENT_TYPE_F32, 1, y_dims, y.data() + 4 * b, 16}};
  }

  std::string step(tidalrt_trainer_t trainer,
                   std::vector<tidalrt_tensor_view_t> inputs,
                   float *loss = nullptr) {
    return message(
        tidalrt_trainer_step(trainer, inputs.data(), inputs.size(), loss));
  }

  fake_program program;
  std::vector<float> x, y;
  int64_t x_dims[2], y_dims[1];
};

TEST_F(TrainerLibTest, StepsTrainAsTheExecutableDoes) {
  EXPECT_EQ(tidalrt_trainer_abi_version(), TIDALRT_TRAINER_ABI_VERSION);
  tidalrt_trainer_t trainer = create();
  float losses[3];
  for (int i = 0; i < 3; ++i)
    ASSERT_EQ(step(trainer, batch(i % 2), &losses[i]), "");
  // The same steps as the executable's (file order, 8 samples, batch 4).
  EXPECT_EQ(linear().steps, (std::vector<uint64_t>{0, 1, 2}));
  EXPECT_EQ(linear().losses, std::vector<float>(losses, losses + 3));
  std::vector<float> w(2);
  ASSERT_EQ(message(tidalrt_trainer_read(trainer, "w", w.data(), 8)), "");
  EXPECT_EQ(w, linear().last_w);

  make_linear_program(program);
  std::vector<std::string> args = {"--steps", "3", "--quiet"};
  write_npy(path("x.npy"), TIDALRT_ELEMENT_TYPE_F32, {8, 2}, x.data());
  write_npy(path("y.npy"), TIDALRT_ELEMENT_TYPE_F32, {8}, y.data());
  run_result result =
      run_driver(program.get(), {"--input", "x=" + path("x.npy"), "--input",
                                 "y=" + path("y.npy"), "--steps", "3"});
  ASSERT_EQ(result.status, 0) << result.err;
  EXPECT_EQ(linear().last_w, w);

  tidalrt_trainer_counters_t counters;
  counters.struct_size = sizeof(counters);
  ASSERT_EQ(message(tidalrt_trainer_counters(trainer, &counters)), "");
  EXPECT_EQ(counters.steps, 3u);
  EXPECT_GT(counters.host_bytes, 0u);
  EXPECT_EQ(message(tidalrt_trainer_destroy(trainer)), "");
}

TEST_F(TrainerLibTest, WriteSaveAndLoadRoundTrip) {
  tidalrt_trainer_t trainer = create();
  float w[2] = {2.0f, 3.0f};
  ASSERT_EQ(message(tidalrt_trainer_write(trainer, "w", w, sizeof(w))), "");
  ASSERT_EQ(step(trainer, batch(0)), "");
  ASSERT_EQ(message(tidalrt_trainer_save(trainer, path("a.onnx").c_str())), "");
  std::vector<float> saved(2);
  tidalrt_trainer_read(trainer, "w", saved.data(), 8);
  EXPECT_EQ(metadata(read_model(path("a.onnx")), "tidal.steps_done"), "1");

  // A second trainer loads it: same values, same step count.
  tidalrt_trainer_t other = create();
  ASSERT_EQ(message(tidalrt_trainer_load(other, path("a.onnx").c_str())), "");
  std::vector<float> loaded(2);
  tidalrt_trainer_read(other, "w", loaded.data(), 8);
  EXPECT_EQ(loaded, saved);
  tidalrt_trainer_counters_t counters;
  counters.struct_size = sizeof(counters);
  tidalrt_trainer_counters(other, &counters);
  EXPECT_EQ(counters.steps, 1u);
  // ... and options->init_path does the same at creation.
  tidalrt_trainer_options_t options{};
  options.struct_size = sizeof(options);
  std::string init = path("a.onnx");
  options.init_path = init.c_str();
  tidalrt_trainer_t third = create(&options);
  tidalrt_trainer_read(third, "w", loaded.data(), 8);
  EXPECT_EQ(loaded, saved);
  for (tidalrt_trainer_t t : {trainer, other, third})
    tidalrt_trainer_destroy(t);
}

TEST_F(TrainerLibTest, BadInputsAreStatusesNamingTheProblem) {
  tidalrt_trainer_t trainer = create();
  auto inputs = batch(0);
  inputs[0].type = TIDALRT_ELEMENT_TYPE_F64;
  EXPECT_EQ(step(trainer, inputs),
            "tidalrt_trainer_step: input 'x' expects float32 [4, 2], got "
            "float64 [4, 2]");
  inputs = batch(0);
  int64_t short_dims[2] = {3, 2};
  inputs[0].dims = short_dims;
  EXPECT_EQ(step(trainer, inputs),
            "tidalrt_trainer_step: input 'x' expects float32 [4, 2], got "
            "float32 [3, 2]");
  inputs = batch(0);
  inputs[1].bytes = 12;
  EXPECT_EQ(step(trainer, inputs), "tidalrt_trainer_step: input 'y' is 16 "
                                   "bytes, the buffer holds 12");
  inputs = batch(0);
  inputs.pop_back();
  EXPECT_EQ(step(trainer, inputs),
            "tidalrt_trainer_step: input 'y' is missing");
  inputs = batch(0);
  inputs[1].name = "x";
  EXPECT_EQ(step(trainer, inputs),
            "tidalrt_trainer_step: input 'x' is given twice");
  inputs[1].name = "label";
  EXPECT_EQ(step(trainer, inputs), "tidalrt_trainer_step: no data input "
                                   "named 'label' (the inputs are: x, y)");
  inputs = batch(0);
  inputs[0].data = nullptr;
  EXPECT_EQ(step(trainer, inputs),
            "tidalrt_trainer_step: input 'x' has no data");
  EXPECT_EQ(linear().steps.size(), 0u); // none of them ran

  float w[3];
  EXPECT_EQ(message(tidalrt_trainer_read(trainer, "w", w, sizeof(w))),
            "tidalrt_trainer_read: 'w' (float32 [2]) is 8 bytes, the buffer "
            "holds 12");
  EXPECT_EQ(message(tidalrt_trainer_write(trainer, "nope", w, 8)),
            "tidalrt_trainer_write: no parameter, state or optimizer state "
            "named 'nope'");
  EXPECT_EQ(message(tidalrt_trainer_read(trainer, "x", w, 32)),
            "tidalrt_trainer_read: no parameter, state or optimizer state "
            "named 'x'");
  EXPECT_EQ(message(tidalrt_trainer_predict(trainer, nullptr, 0, nullptr, 0)),
            "tidalrt_trainer_predict: this program has no predict function");
  EXPECT_NE(message(tidalrt_trainer_load(trainer, path("none.onnx").c_str())),
            "");
  tidalrt_trainer_counters_t counters{};
  EXPECT_NE(message(tidalrt_trainer_counters(trainer, &counters))
                .find("struct_size is 0"),
            std::string::npos);
  tidalrt_trainer_destroy(trainer);
}

TEST_F(TrainerLibTest, DestroyedHandlesAreErrorsNotCrashes) {
  tidalrt_trainer_t trainer = create();
  ASSERT_EQ(message(tidalrt_trainer_destroy(trainer)), "");
  std::string gone = "trainer " + std::to_string(trainer) +
                     " does not exist (destroyed, or never created)";
  EXPECT_EQ(step(trainer, batch(0)), "tidalrt_trainer_step: " + gone);
  EXPECT_EQ(message(tidalrt_trainer_destroy(trainer)),
            "tidalrt_trainer_destroy: " + gone);
  float w[2];
  EXPECT_EQ(message(tidalrt_trainer_read(trainer, "w", w, 8)),
            "tidalrt_trainer_read: " + gone);
  EXPECT_NE(message(tidalrt_trainer_save(0, path("x.onnx").c_str())), "");
  // A new trainer never reuses the old handle.
  tidalrt_trainer_t next = create();
  EXPECT_NE(next, trainer);
  tidalrt_trainer_destroy(next);
}

TEST_F(TrainerLibTest, CreateChecksItsArguments) {
  EXPECT_EQ(
      message(tidalrt_trainer_create_program(program.get(), nullptr, nullptr)),
      "tidalrt_trainer_create: out_trainer is NULL");
  tidalrt_trainer_options_t options{};
  tidalrt_trainer_t trainer = 7;
  EXPECT_NE(
      message(tidalrt_trainer_create_program(program.get(), &options, &trainer))
          .find("struct_size is 0"),
      std::string::npos);
  EXPECT_EQ(trainer, 0u);
  options.struct_size = sizeof(options);
  options.init_path = "/nonexistent/init.onnx";
  EXPECT_NE(message(tidalrt_trainer_create_program(program.get(), &options,
                                                   &trainer)),
            "");
  EXPECT_EQ(trainer, 0u);
}

} // namespace

// threads = TIDALRT_TRAINER_THREADS_AUTO: the trainer starts at OpenMP's
// count and reports the count it runs at; a caller built before `threads`
// existed passes the shorter struct and keeps working; other negative
// counts are refused.
TEST_F(TrainerLibTest, ThreadsAutoAndTheCountersThreadField) {
  int before = omp_get_max_threads();
  omp_set_num_threads(2);
  tidalrt_trainer_options_t options{};
  options.struct_size = sizeof(options);
  options.threads = TIDALRT_TRAINER_THREADS_AUTO;
  tidalrt_trainer_t trainer = create(&options);
  float loss = 0;
  for (int i = 0; i < 4; ++i)
    ASSERT_EQ(step(trainer, batch(i % 2), &loss), "");
  tidalrt_trainer_counters_t counters{};
  counters.struct_size = sizeof(counters);
  ASSERT_EQ(message(tidalrt_trainer_counters(trainer, &counters)), "");
  EXPECT_GE(counters.threads, 1);
  EXPECT_LE(counters.threads, 2);
  EXPECT_EQ(counters.steps, 4u);

  tidalrt_trainer_counters_t old{};
  old.threads = -7;
  old.struct_size = offsetof(tidalrt_trainer_counters_t, threads);
  ASSERT_EQ(message(tidalrt_trainer_counters(trainer, &old)), "");
  EXPECT_EQ(old.steps, 4u);
  EXPECT_EQ(old.threads, -7); // beyond the caller's struct: untouched
  tidalrt_trainer_destroy(trainer);

  options.threads = -2;
  tidalrt_trainer_t bad = 0;
  EXPECT_EQ(
      message(tidalrt_trainer_create_program(program.get(), &options, &bad)),
      "tidalrt_trainer_create: threads must be 0 (default) to 4096 or "
      "TIDALRT_TRAINER_THREADS_AUTO (-1), got -2");
  omp_set_num_threads(before);
}
