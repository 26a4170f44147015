// driver_device_test.cpp - the driver on device targets: the manifest's
// targets, a cuda program where no CUDA device can be created, reading,
// writing and copying slots (function_memory) on the cpu and sim layouts,
// and the step's copy time in the log.
#include "driver_test_util.h"

#include "data.h"
#include "error.h"
#include "manifest.h"
#include "memory.h"
#include "program.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <numeric>

namespace {

using namespace driver_test;
using tidalrt_driver::driver_error;
using tidalrt_driver::function_memory;
using tidalrt_driver::manifest;
using tidalrt_driver::tensor_slot;

//===----------------------------------------------------------------------===
// Targets in the manifest
//===----------------------------------------------------------------------===

manifest parse(fake_program &p) {
  const tidalrt_program_t *program = p.get();
  return tidalrt_driver::parse_manifest(program->manifest, program->blob_size);
}

// The message of the runtime fault that parsing `p` raises ("" if none).
std::string parse_error(fake_program &p) {
  try {
    parse(p);
  } catch (const driver_error &e) {
    EXPECT_EQ(e.exit_status(), 2) << e.what();
    return e.what();
  }
  return "";
}

TEST(DriverDeviceManifestTest, TargetsAndTheirDevices) {
  fake_program p;
  make_linear_device_program(p, "cuda");
  // A slot in the host arena, as on sim.
  json &step = p.manifest["functions"]["step"];
  ASSERT_EQ(step["args"][3]["name"], "w.momentum_buffer");
  step["args"][3]["space"] = "host";
  step["args"][3]["offset"] = 0;
  manifest cuda = parse(p);
  EXPECT_EQ(cuda.target, "cuda");
  EXPECT_TRUE(cuda.device_target());
  EXPECT_EQ(cuda.device_kind(), TIDALRT_DEVICE_CUDA);
  ASSERT_TRUE(cuda.step.device_bytes.has_value());
  EXPECT_EQ(*cuda.step.device_bytes, linear().step.arena_bytes + 256);
  EXPECT_EQ(cuda.step.host_arena_bytes, 64u);
  EXPECT_EQ(cuda.step.num_copies, 2u);
  EXPECT_TRUE(cuda.step.args[3].host);

  p.manifest["target"] = "sim";
  manifest sim = parse(p);
  EXPECT_TRUE(sim.device_target());
  EXPECT_EQ(sim.device_kind(), TIDALRT_DEVICE_SIM);

  fake_program cpu_program;
  make_linear_program(cpu_program);
  manifest cpu = parse(cpu_program);
  EXPECT_EQ(cpu.target, "cpu");
  EXPECT_FALSE(cpu.device_target());
  cpu_program.manifest["target"] = "cpu";
  EXPECT_FALSE(parse(cpu_program).device_target());
}

TEST(DriverDeviceManifestTest, UnknownTargetsAreRejected) {
  fake_program p;
  make_linear_device_program(p, "cuda");
  for (const char *target : {"tpu", "CUDA", "", "cuda "}) {
    p.manifest["target"] = target;
    EXPECT_EQ(parse_error(p),
              "malformed program manifest: target '" + std::string(target) +
                  "' is not one this runtime runs (cpu, sim, cuda)");
  }
  p.manifest["target"] = 2;
  EXPECT_EQ(parse_error(p),
            "malformed program manifest: manifest.target is not a string");
}

TEST(DriverDeviceManifestTest, CudaNeedsWhatSimNeeds) {
  fake_program p;
  make_linear_device_program(p, "cuda");
  json &step = p.manifest["functions"]["step"];
  step["device_bytes"] = linear().step.arena_bytes - 64;
  EXPECT_NE(parse_error(p).find("functions.step.device_bytes " +
                                std::to_string(linear().step.arena_bytes - 64) +
                                " is below its arena_bytes"),
            std::string::npos);
  step.erase("device_bytes");
  step["host_arena_bytes"] = 0;
  step["num_copies"] = 0;
  EXPECT_EQ(parse_error(p), "malformed program manifest: functions.step of a "
                            "cuda program has no \"device_bytes\"");
}

//===----------------------------------------------------------------------===
// A cuda program without a CUDA device
//===----------------------------------------------------------------------===

// Whether a CUDA device can be created in this process (tidalrt-tests does
// not link tidalrt_cuda, so it cannot).
bool cuda_device_available() {
  tidalrt_device_options_t options = {TIDALRT_DEVICE_CUDA, 64, 0};
  tidalrt_device_t *device = nullptr;
  tidalrt_status_t status = tidalrt_device_create(&options, &device);
  tidalrt_status_free(status);
  tidalrt_device_free(device);
  return device != nullptr;
}

class DriverCudaTest : public tidalrt_test::TempDirTest {
protected:
  void SetUp() override {
    TempDirTest::SetUp();
    if (cuda_device_available())
      GTEST_SKIP() << "a CUDA device is available";
    make_linear_device_program(program, "cuda");
    std::vector<float> x, y;
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

  // Expects exit 2 with one line naming the step's cuda device.
  void expect_no_device(const run_result &result) {
    EXPECT_EQ(result.status, 2);
    std::string prefix = "prog: error: cannot create the step's cuda device "
                         "of " +
                         std::to_string(linear().step.arena_bytes + 256) +
                         " bytes: ";
    EXPECT_EQ(result.err.rfind(prefix, 0), 0u) << result.err;
    EXPECT_GT(result.err.size(), prefix.size() + 1) << result.err;
    EXPECT_EQ(std::count(result.err.begin(), result.err.end(), '\n'), 1)
        << result.err;
    EXPECT_EQ(result.out, "");
    EXPECT_EQ(linear().prepare_calls, 0);
    EXPECT_TRUE(linear().steps.empty());
  }

  fake_program program;
};

TEST_F(DriverCudaTest, TrainingWithoutACudaDeviceIsARuntimeFault) {
  run_result result = run({"--steps", "3", "--save", path("model.onnx")});
  expect_no_device(result);
  EXPECT_NE(result.err.find("tidalrt_cuda"), std::string::npos) << result.err;
  EXPECT_EQ(list(), (std::vector<std::string>{"x.npy", "y.npy"}));
}

TEST_F(DriverCudaTest, ForwardModeWithoutACudaDeviceIsARuntimeFault) {
  program.manifest["mode"] = "forward";
  expect_no_device(run({"--output-dir", path("out")}));
}

//===----------------------------------------------------------------------===
// function_memory: every access to a slot's bytes
//===----------------------------------------------------------------------===

tensor_slot float_slot(const std::string &name, int64_t count, uint64_t offset,
                       bool host = false) {
  tensor_slot slot;
  slot.name = name;
  slot.role = "param";
  slot.type = TIDALRT_ELEMENT_TYPE_F32;
  slot.shape = {count};
  slot.offset = offset;
  slot.bytes = static_cast<uint64_t>(count) * sizeof(float);
  slot.host = host;
  return slot;
}

std::vector<float> floats(std::initializer_list<float> values) {
  return std::vector<float>(values);
}

// `count` floats at `at`.
std::vector<float> floats_at(const uint8_t *at, size_t count) {
  std::vector<float> values(count);
  std::memcpy(values.data(), at, count * sizeof(float));
  return values;
}

bool all_zero(const uint8_t *at, size_t bytes) {
  for (size_t i = 0; i < bytes; ++i)
    if (at[i])
      return false;
  return true;
}

tidalrt_driver::device_ptr make_sim_device(uint64_t bytes) {
  tidalrt_device_options_t options = {TIDALRT_DEVICE_SIM, bytes, 0};
  tidalrt_device_t *device = nullptr;
  EXPECT_STATUS_OK(tidalrt_device_create(&options, &device));
  return tidalrt_driver::device_ptr(device);
}

// The message of the driver_error that `fn` throws, checking its status.
template <class Fn> std::string fault_of(Fn fn, int exit_status = 2) {
  try {
    fn();
  } catch (const driver_error &e) {
    EXPECT_EQ(e.exit_status(), exit_status) << e.what();
    return e.what();
  }
  ADD_FAILURE() << "no driver_error";
  return "";
}

TEST(DriverFunctionMemoryTest, ArenaLargerThanTheMachineIsAnError) {
  // 2^50 bytes: more than any test machine's memory and swap; refused
  // before allocating, not left to the OOM killer.
  function_memory memory("step");
  try {
    memory.allocate(uint64_t(1) << 50);
    FAIL() << "no error";
  } catch (const driver_error &e) {
    EXPECT_EQ(e.exit_status(), 2);
    std::string what = e.what();
    EXPECT_EQ(what.rfind("cannot allocate the 1125899906842624-byte arena: "
                         "this machine has ",
                         0),
              0u)
        << what;
    EXPECT_NE(what.find(" bytes of memory and swap"), std::string::npos);
  }
}

TEST(DriverFunctionMemoryTest, CpuLayoutIsHostMemory) {
  function_memory memory("step");
  memory.allocate(256);
  EXPECT_EQ(memory.device(), nullptr);
  EXPECT_EQ(memory.host_bytes(), 256u);
  ASSERT_NE(memory.base(), nullptr);
  EXPECT_TRUE(all_zero(memory.base(), 256));
  tensor_slot a = float_slot("a", 4, 64), b = float_slot("b", 4, 128);
  EXPECT_FALSE(memory.on_device(a));
  EXPECT_EQ(memory.host_at(a), memory.base() + 64);

  std::vector<float> values = floats({1, 2, 3, 4});
  memory.write(a, values.data());
  EXPECT_EQ(floats_at(memory.base() + 64, 4), values);
  // A part of the slot: bytes [4, 12).
  std::vector<float> part = floats({-2, -3});
  memory.write(a, 4, part.data(), 8);
  EXPECT_EQ(floats_at(memory.base() + 64, 4), floats({1, -2, -3, 4}));
  std::vector<float> read(2);
  memory.read(a, 8, read.data(), 8);
  EXPECT_EQ(read, floats({-3, 4}));
  std::vector<float> whole(4);
  memory.read(a, whole.data());
  EXPECT_EQ(whole, floats({1, -2, -3, 4}));

  // In host memory, begin_write and view are the slot itself.
  EXPECT_EQ(memory.begin_write(b, true), memory.base() + 128);
  EXPECT_EQ(memory.view(b), memory.base() + 128);
  memory.copy(b, memory, a);
  EXPECT_EQ(floats_at(memory.base() + 128, 4), floats({1, -2, -3, 4}));
  // Overlapping slots copy as memmove does.
  tensor_slot c = float_slot("c", 4, 72);
  memory.copy(c, memory, a);
  EXPECT_EQ(floats_at(memory.base() + 72, 4), floats({1, -2, -3, 4}));
  EXPECT_EQ(floats_at(memory.base() + 64, 2), floats({1, -2}));

  EXPECT_NE(fault_of([&] { memory.write(a, 12, part.data(), 8); })
                .find("internal error: a write of 8 bytes at byte 12 of the "
                      "step's 'a' (16 bytes)"),
            std::string::npos);
  EXPECT_NE(fault_of([&] {
              memory.read(a, 17, read.data(), 0);
            }).find("internal error: a read"),
            std::string::npos);
}

TEST(DriverFunctionMemoryTest, SimLayoutGoesThroughTheDevice) {
  tidalrt_driver::device_ptr device = make_sim_device(512);
  uint8_t *arena = tidalrt_device_memory(device.get());
  std::memset(arena, 0xab, 512); // attach zeroes all of it
  function_memory memory("step");
  memory.attach(device.get(), 384, 128);
  EXPECT_EQ(memory.device(), device.get());
  EXPECT_EQ(memory.base(), arena);
  EXPECT_TRUE(all_zero(arena, 512));
  ASSERT_NE(memory.host_arena(), nullptr);
  EXPECT_EQ(memory.host_arena_bytes(), 128u);
  EXPECT_TRUE(all_zero(memory.host_arena(), 128));
  // The device arena is not host memory; the host arena is.
  EXPECT_EQ(memory.host_bytes(), 128u);

  tensor_slot d = float_slot("d", 4, 64), h = float_slot("h", 4, 32, true);
  EXPECT_TRUE(memory.on_device(d));
  EXPECT_FALSE(memory.on_device(h));
  EXPECT_EQ(memory.host_at(d), nullptr);
  EXPECT_EQ(memory.host_at(h), memory.host_arena() + 32);

  std::vector<float> values = floats({1, 2, 3, 4});
  memory.write(d, values.data());
  EXPECT_EQ(floats_at(arena + 64, 4), values);
  EXPECT_TRUE(all_zero(arena, 64));
  EXPECT_TRUE(all_zero(arena + 80, 512 - 80));
  EXPECT_TRUE(all_zero(memory.host_arena(), 128));
  std::vector<float> part = floats({-2, -3});
  memory.write(d, 4, part.data(), 8);
  EXPECT_EQ(floats_at(arena + 64, 4), floats({1, -2, -3, 4}));
  std::vector<float> read(2);
  memory.read(d, 8, read.data(), 8);
  EXPECT_EQ(read, floats({-3, 4}));
  memory.write(h, values.data());
  EXPECT_EQ(floats_at(memory.host_arena() + 32, 4), values);
  EXPECT_TRUE(all_zero(arena + 80, 512 - 80));

  // A device slot is assembled in the staging buffer, then written.
  uint8_t *staged = memory.begin_write(d, /*keep=*/true);
  ASSERT_NE(staged, nullptr);
  EXPECT_TRUE(staged < arena || staged >= arena + 512);
  EXPECT_EQ(floats_at(staged, 4), floats({1, -2, -3, 4}));
  float nine = 9;
  std::memcpy(staged + 12, &nine, 4);
  EXPECT_EQ(floats_at(arena + 64, 4), floats({1, -2, -3, 4}));
  memory.end_write(d);
  EXPECT_EQ(floats_at(arena + 64, 4), floats({1, -2, -3, 9}));
  // begin_write on a host slot is the slot: end_write writes nothing.
  EXPECT_EQ(memory.begin_write(h), memory.host_arena() + 32);
  memory.end_write(h);
  EXPECT_EQ(floats_at(arena + 64, 4), floats({1, -2, -3, 9}));
  const uint8_t *view = memory.view(d);
  EXPECT_TRUE(view < arena || view >= arena + 512);
  EXPECT_EQ(floats_at(view, 4), floats({1, -2, -3, 9}));
  EXPECT_EQ(memory.view(h), memory.host_arena() + 32);

  // Copies: device -> host arena, host arena -> device, within the device
  // (overlapping ranges too).
  tensor_slot h2 = float_slot("h2", 4, 64, true), d2 = float_slot("d2", 4, 128);
  memory.copy(h2, memory, d);
  EXPECT_EQ(floats_at(memory.host_arena() + 64, 4), floats({1, -2, -3, 9}));
  memory.copy(d2, memory, h);
  EXPECT_EQ(floats_at(arena + 128, 4), values);
  tensor_slot d3 = float_slot("d3", 4, 256);
  memory.copy(d3, memory, d);
  EXPECT_EQ(floats_at(arena + 256, 4), floats({1, -2, -3, 9}));
  tensor_slot overlap = float_slot("o", 4, 72);
  memory.copy(overlap, memory, d);
  EXPECT_EQ(floats_at(arena + 72, 4), floats({1, -2, -3, 9}));
  EXPECT_EQ(floats_at(arena + 64, 2), floats({1, -2}));

  // Driver transfers do not count as the step's copies.
  tidalrt_device_stats_t stats;
  tidalrt_device_stats(device.get(), &stats);
  EXPECT_EQ(stats.copies, 0u);
  EXPECT_EQ(stats.bytes_to_device, 0u);
  EXPECT_EQ(stats.peak_device_bytes, 0u);
}

TEST(DriverFunctionMemoryTest, CopiesAcrossFunctionsAndDevices) {
  tidalrt_driver::device_ptr step_device = make_sim_device(256);
  tidalrt_driver::device_ptr predict_device = make_sim_device(256);
  uint8_t *step_arena = tidalrt_device_memory(step_device.get());
  uint8_t *predict_arena = tidalrt_device_memory(predict_device.get());
  function_memory step("step"), predict("predict function"), host("host");
  step.attach(step_device.get(), 256, 64);
  predict.attach(predict_device.get(), 256, 64);
  host.allocate(256);
  tensor_slot step_w = float_slot("w", 4, 64);
  tensor_slot step_h = float_slot("w", 4, 16, true);
  std::vector<float> values = floats({5, 6, 7, 8});
  step.write(step_w, values.data());
  step.write(step_h, floats({1, 2, 3, 4}).data());

  // Device to device through the staging buffer.
  tensor_slot predict_w = float_slot("w", 4, 128);
  predict.copy(predict_w, step, step_w);
  EXPECT_EQ(floats_at(predict_arena + 128, 4), values);
  EXPECT_TRUE(all_zero(predict_arena, 128));
  // Host arena of one device to another device.
  tensor_slot predict_v = float_slot("v", 4, 192);
  predict.copy(predict_v, step, step_h);
  EXPECT_EQ(floats_at(predict_arena + 192, 4), floats({1, 2, 3, 4}));
  // Device to a function on the host, and back.
  tensor_slot host_w = float_slot("w", 4, 32);
  host.copy(host_w, step, step_w);
  EXPECT_EQ(floats_at(host.base() + 32, 4), values);
  std::vector<float> back = floats({-1, -2, -3, -4});
  host.write(host_w, back.data());
  tensor_slot step_x = float_slot("x", 4, 192);
  step.copy(step_x, host, host_w);
  EXPECT_EQ(floats_at(step_arena + 192, 4), back);
  EXPECT_EQ(floats_at(step_arena + 64, 4), values);

  EXPECT_NE(fault_of([&] { predict.copy(float_slot("w", 2, 0), step, step_w); })
                .find("internal error: copying 16 bytes of the step's 'w' into "
                      "the 8 bytes of the predict function's 'w'"),
            std::string::npos);
}

TEST(DriverFunctionMemoryTest, WriteRowsGathersABatch) {
  // 6 samples of 2 floats; a batch of 4 rows, 3 of them filled.
  tidalrt_array_t *array = nullptr;
  int64_t dims[2] = {6, 2};
  ASSERT_STATUS_OK(
      tidalrt_array_create(TIDALRT_ELEMENT_TYPE_F32, 2, dims, &array));
  float *data = static_cast<float *>(tidalrt_array_data(array));
  std::iota(data, data + 12, 1.0f);
  tensor_slot x = float_slot("x", 8, 128);
  x.role = "input";
  x.shape = {4, 2};
  tidalrt_driver::data_input input;
  input.slot = &x;
  input.source = "x.npy";
  input.array.reset(array);
  input.row_bytes = 8;
  const uint64_t rows[4] = {5, 0, 1, 3};
  std::vector<float> expected = floats({11, 12, 1, 2, 3, 4, 0, 0});

  tidalrt_driver::device_ptr device = make_sim_device(256);
  uint8_t *arena = tidalrt_device_memory(device.get());
  function_memory on_device("step"), on_host("step");
  on_device.attach(device.get(), 256, 0);
  on_host.allocate(256);
  for (function_memory *memory : {&on_device, &on_host}) {
    // Rows count..3 are zeroed, whatever the slot held.
    std::vector<float> junk(8, 7.0f);
    memory->write(x, junk.data());
    memory->write_rows(input, rows, 3, 4);
    std::vector<float> got(8);
    memory->read(x, got.data());
    EXPECT_EQ(got, expected) << memory->device();
  }
  EXPECT_EQ(floats_at(arena + 128, 8), expected);
  EXPECT_TRUE(all_zero(arena, 128));
  EXPECT_TRUE(all_zero(arena + 160, 96));
}

TEST(DriverFunctionMemoryTest, FailedTransfersAreRuntimeFaultsNamingTheSlot) {
  // Slots beyond the device arena: the device refuses the transfers.
  tidalrt_driver::device_ptr device = make_sim_device(128);
  function_memory memory("step");
  memory.attach(device.get(), 128, 0);
  tensor_slot w = float_slot("w", 2, 256), v = float_slot("v", 2, 0);
  std::vector<float> values(2);
  EXPECT_EQ(fault_of([&] { memory.read(w, values.data()); }),
            "cannot read 'w' (param, float32 [2]) from the step's sim device: "
            "tidalrt_device_read: range [256, 264) (8 bytes at offset 256) is "
            "outside the device arena of 128 bytes");
  EXPECT_EQ(fault_of([&] { memory.write(w, 4, values.data(), 4); }),
            "cannot write 'w' (param, float32 [2]) to the step's sim device: "
            "tidalrt_device_write: range [260, 264) (4 bytes at offset 260) is "
            "outside the device arena of 128 bytes");
  EXPECT_EQ(fault_of([&] { memory.copy(w, memory, v); }),
            "cannot copy 'v' to 'w' (param, float32 [2]) within the step's sim "
            "device: tidalrt_device_move: range [256, 264) (8 bytes at offset "
            "256) is outside the device arena of 128 bytes");
  EXPECT_NE(fault_of([&] { memory.view(w); }).find("cannot read 'w'"),
            std::string::npos);
  EXPECT_NE(fault_of([&] {
              memory.begin_write(w);
              memory.end_write(w);
            }).find("cannot write 'w'"),
            std::string::npos);
}

//===----------------------------------------------------------------------===
// copy_seconds in the log
//===----------------------------------------------------------------------===

class DriverDeviceLogTest : public tidalrt_test::TempDirTest {
protected:
  void SetUp() override {
    TempDirTest::SetUp();
    std::vector<float> x, y;
    linear_data(10, &x, &y);
    write_npy(path("x.npy"), TIDALRT_ELEMENT_TYPE_F32, {10, 2}, x.data());
    write_npy(path("y.npy"), TIDALRT_ELEMENT_TYPE_F32, {10}, y.data());
  }

  std::vector<json> run_logged(fake_program &p) {
    run_result result =
        run_driver(p.get(), {"--input", "x=" + path("x.npy"), "--input",
                             "y=" + path("y.npy"), "--steps", "3", "--log",
                             path("log.jsonl")});
    EXPECT_EQ(result.status, 0) << result.err;
    return read_jsonl(path("log.jsonl"));
  }
};

TEST_F(DriverDeviceLogTest, CopySecondsIsTheStepsCopyTime) {
  fake_program cpu, sim;
  make_linear_program(cpu);
  for (const json &entry : run_logged(cpu)) {
    EXPECT_EQ(entry.at("copy_seconds"), 0);
    EXPECT_EQ(entry.at("copy_stall_seconds"), 0);
  }
  // Each step offloads and prefetches 8 bytes at 1e6 bytes/s: at least
  // 8 us each, one after the other within the step.
  setenv("TIDAL_SIM_LINK_GBPS", "0.001", 1);
  make_linear_device_program(sim, "sim");
  std::vector<json> log = run_logged(sim);
  unsetenv("TIDAL_SIM_LINK_GBPS");
  ASSERT_EQ(log.size(), 3u);
  for (const json &entry : log) {
    double seconds = entry.at("copy_seconds").get<double>();
    EXPECT_GE(seconds, 16e-6) << entry.dump();
    // The step's own copies (the stats are reset before each step).
    EXPECT_LE(seconds * 1000, entry.at("step_ms").get<double>())
        << entry.dump();
    // The compute stream's wait for them: part of the step.
    double stall = entry.at("copy_stall_seconds").get<double>();
    EXPECT_GE(stall, 0.0) << entry.dump();
    EXPECT_LE(stall * 1000, entry.at("step_ms").get<double>()) << entry.dump();
    EXPECT_EQ(entry.at("bytes_to_host"), 8);
    EXPECT_EQ(entry.at("bytes_to_device"), 8);
  }
}

} // namespace
