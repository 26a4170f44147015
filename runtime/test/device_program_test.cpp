// device_program_test.cpp - generated device programs (tidalrt/device.h,
// "Generated device programs"): hand-written step functions that call
// tidalrt_dev_launch with real kernels and offload, wait, prefetch and wait
// as the compiler's --target sim code does, on HOST and SIM devices, against
// the same program on the host path (no device).
#include "device_test_util.h"
#include "kernel_test_util.h"

#include <atomic>
#include <cstring>
#include <thread>
#include <vector>

// Internal context accessors (runtime/src/cpu/context.cpp), as kernels use
// them.
namespace tidalrt {
bool preparing(const tidalrt_context_t *ctx);
void *scratch(tidalrt_context_t *ctx, size_t bytes);
} // namespace tidalrt

namespace {

using namespace tidalrt_test;

constexpr int64_t kN = 1024;                // floats per tensor
constexpr uint64_t kT = kN * sizeof(float); // bytes per tensor
constexpr int64_t kOps = 6;

// Where the program's tensors live in the device arena. The program:
//   op 0: a = relu(x)
//   op 1: b = a + w
//         [offload a, copy 0]
//   op 2: c = b * b
//         [wait copy 0: a's bytes are free]
//   op 3: d = c + x           (swap: d takes a's bytes)
//   op 4: e = relu(d)         (swap: e takes b's bytes)
//         [prefetch a into c's bytes, copy 1; wait copy 1]
//   op 5: out = e + a
struct layout {
  uint64_t x, w, a, b, c, d, e, a_back, out, device_bytes;
  bool swap;
};
const layout kSwap = {0,      kT,     2 * kT, 3 * kT, 4 * kT, 2 * kT,
                      3 * kT, 4 * kT, 5 * kT, 6 * kT, true};
const layout kNoSwap = {0,      kT,     2 * kT, 3 * kT, 4 * kT, 5 * kT,
                        6 * kT, 2 * kT, 7 * kT, 8 * kT, false};

std::vector<int64_t> unary_desc(int64_t op) {
  KernelCall call(op);
  call.f32({kN}, nullptr).f32({kN}, nullptr);
  return call.descriptor();
}
std::vector<int64_t> binary_desc(int64_t op) {
  KernelCall call(op);
  call.f32({kN}, nullptr).f32({kN}, nullptr).f32({kN}, nullptr);
  return call.descriptor();
}

// The program's constants, as the compiler would emit them.
struct program {
  std::vector<int64_t> desc[kOps] = {unary_desc(0),  binary_desc(1),
                                     binary_desc(2), binary_desc(3),
                                     unary_desc(4),  binary_desc(5)};
  tidalrt_kernel_fn_t fn[kOps] = {tidalrt_k_relu, tidalrt_k_add,
                                  tidalrt_k_mul,  tidalrt_k_add,
                                  tidalrt_k_relu, tidalrt_k_add};
  const layout *at = &kSwap;
  // Tests may break one launch's range.
  int64_t bad_range_op = -1;
};

program &prog() {
  static program p;
  return p;
}

#define TRY(expr)                                                              \
  do {                                                                         \
    if (tidalrt_status_t status_ = (expr))                                     \
      return status_;                                                          \
  } while (0)

// One launch: `ins` read, `out` written (all kT bytes); the buffer list
// lives on this stack frame, as in generated code.
tidalrt_status_t launch(tidalrt_context_t *ctx, uint8_t *arena, int64_t op,
                        std::initializer_list<uint64_t> ins, uint64_t out) {
  program &p = prog();
  void *buffers[3];
  tidalrt_range_t ranges[3];
  int64_t n = 0;
  for (uint64_t in : ins) {
    buffers[n] = arena + in;
    ranges[n] = {in, kT};
    ++n;
  }
  buffers[n] = arena + out;
  ranges[n] = {out, kT};
  if (op == p.bad_range_op)
    ranges[n].offset = 1ull << 40;
  return tidalrt_dev_launch(ctx, p.fn[op], p.desc[op].data(), buffers, n + 1,
                            op, ranges, n, 1);
}

// The step function of a --target sim program (and, with kNoSwap and no
// device, of the same program on the host path).
tidalrt_status_t swap_step(tidalrt_context_t *ctx, uint8_t *arena) {
  const layout &l = *prog().at;
  TRY(launch(ctx, arena, 0, {l.x}, l.a));
  TRY(launch(ctx, arena, 1, {l.a, l.w}, l.b));
  if (l.swap)
    TRY(tidalrt_dev_offload(ctx, 0, 0, l.a, kT));
  TRY(launch(ctx, arena, 2, {l.b, l.b}, l.c));
  if (l.swap)
    TRY(tidalrt_dev_wait(ctx, 0));
  TRY(launch(ctx, arena, 3, {l.c, l.x}, l.d));
  TRY(launch(ctx, arena, 4, {l.d}, l.e));
  if (l.swap) {
    TRY(tidalrt_dev_prefetch(ctx, 1, 0, l.a_back, kT));
    TRY(tidalrt_dev_wait(ctx, 1));
  }
  TRY(launch(ctx, arena, 5, {l.e, l.a_back}, l.out));
  return tidalrt_dev_synchronize(ctx);
}

// The same arithmetic in C++ (each kernel here is exact IEEE arithmetic, so
// the results agree bit for bit).
std::vector<float> expected(const std::vector<float> &x,
                            const std::vector<float> &w) {
  std::vector<float> out(kN);
  for (int64_t i = 0; i < kN; ++i) {
    float a = x[i] > 0 ? x[i] : 0.0f;
    float b = a + w[i];
    float c = b * b;
    float d = c + x[i];
    float e = d > 0 ? d : 0.0f;
    out[i] = e + a;
  }
  return out;
}

std::vector<float> inputs(int seed, float scale) {
  std::vector<float> v(kN);
  for (int64_t i = 0; i < kN; ++i)
    v[i] = scale * static_cast<float>(((i * 37 + seed * 101) % 53) - 26) / 8;
  return v;
}

struct context_deleter {
  void operator()(tidalrt_context_t *ctx) const { tidalrt_context_free(ctx); }
};
using context_ptr = std::unique_ptr<tidalrt_context_t, context_deleter>;

context_ptr make_context(int64_t num_ops = kOps) {
  tidalrt_context_options_t options = {static_cast<size_t>(num_ops), 7};
  tidalrt_context_t *ctx = nullptr;
  EXPECT_STATUS_OK(tidalrt_context_create(&options, &ctx));
  return context_ptr(ctx);
}

std::string message(tidalrt_status_t status) {
  status_ptr owned(status);
  return tidalrt_status_message(owned.get());
}

// A program instance: context, device, host arena; the device is declared
// first so that the context (which detaches) is freed before it.
struct instance {
  device_ptr device;
  std::vector<uint8_t> host_storage;
  uint8_t *host = nullptr;
  context_ptr ctx;
  std::vector<uint8_t> plain; // the arena on the host path
  uint8_t *memory = nullptr;

  // `kind` < 0: the host path (no device), with the no-swap layout.
  instance(int kind, double link_gbps = 0) {
    ctx = make_context();
    if (kind < 0) {
      plain.assign(kNoSwap.device_bytes, 0);
      memory = plain.data();
      return;
    }
    device = make_device(static_cast<tidalrt_device_kind_t>(kind),
                         kSwap.device_bytes, link_gbps);
    host_storage.assign(kT + 64, 0);
    host = host_storage.data();
    EXPECT_STATUS_OK(
        tidalrt_context_set_device(ctx.get(), device.get(), host, kT, 2));
    memory = tidalrt_device_memory(device.get());
  }
  ~instance() { ctx.reset(); }

  const layout &at() const { return device ? kSwap : kNoSwap; }

  tidalrt_status_t prepare() {
    prog().at = &at();
    tidalrt_context_begin_prepare(ctx.get());
    tidalrt_status_t status = swap_step(ctx.get(), memory);
    tidalrt_status_t end = tidalrt_context_end_prepare(ctx.get());
    if (status) {
      tidalrt_status_free(end);
      return status;
    }
    return end;
  }

  tidalrt_status_t step(const std::vector<float> &x,
                        const std::vector<float> &w) {
    prog().at = &at();
    memcpy(memory + at().x, x.data(), kT);
    memcpy(memory + at().w, w.data(), kT);
    return swap_step(ctx.get(), memory);
  }

  std::vector<float> out() const {
    std::vector<float> v(kN);
    memcpy(v.data(), memory + at().out, kT);
    return v;
  }
};

class DeviceProgramTest
    : public ::testing::TestWithParam<tidalrt_device_kind_t> {
protected:
  void SetUp() override { prog() = program(); }
  void TearDown() override { prog() = program(); }
  int kind() const { return GetParam(); }
};

INSTANTIATE_TEST_SUITE_P(Kinds, DeviceProgramTest,
                         ::testing::Values(TIDALRT_DEVICE_HOST,
                                           TIDALRT_DEVICE_SIM),
                         [](const auto &info) {
                           return std::string(device_kind_name(info.param));
                         });

TEST_P(DeviceProgramTest, SwapProgramEqualsTheHostPath) {
  instance device(kind());
  instance host(-1);
  ASSERT_STATUS_OK(device.prepare());
  ASSERT_STATUS_OK(host.prepare());
  EXPECT_EQ(tidalrt_context_device(device.ctx.get()), device.device.get());
  EXPECT_EQ(tidalrt_context_device(host.ctx.get()), nullptr);
  for (int step = 0; step < 5; ++step) {
    std::vector<float> x = inputs(step, 1), w = inputs(step + 17, 0.5f);
    ASSERT_STATUS_OK(device.step(x, w));
    ASSERT_STATUS_OK(host.step(x, w));
    std::vector<float> want = expected(x, w);
    EXPECT_EQ(device.out(), host.out()) << "step " << step;
    EXPECT_EQ(device.out(), want) << "step " << step;
    // The offloaded copy is in the host arena.
    std::vector<float> a(kN);
    memcpy(a.data(), device.host, kT);
    for (int64_t i = 0; i < kN; ++i)
      ASSERT_EQ(a[i], x[i] > 0 ? x[i] : 0.0f);
  }
  EXPECT_EQ(tidalrt_context_failed_op(device.ctx.get()), -1);
}

TEST_P(DeviceProgramTest, StatsGiveThePeakAndTheBytesMoved) {
  instance device(kind());
  ASSERT_STATUS_OK(device.prepare());
  tidalrt_device_stats_t stats;
  // Preparation enqueues nothing.
  tidalrt_device_stats(device.device.get(), &stats);
  EXPECT_EQ(stats.launches, 0u);
  EXPECT_EQ(stats.copies, 0u);
  EXPECT_EQ(stats.peak_device_bytes, 0u);
  for (int step = 0; step < 3; ++step) {
    tidalrt_device_reset_stats(device.device.get());
    ASSERT_STATUS_OK(device.step(inputs(step, 1), inputs(step, 2)));
    tidalrt_device_stats(device.device.get(), &stats);
    EXPECT_EQ(stats.launches, 6u);
    EXPECT_EQ(stats.copies, 2u);
    EXPECT_EQ(stats.bytes_to_host, kT);
    EXPECT_EQ(stats.bytes_to_device, kT);
    EXPECT_EQ(stats.peak_device_bytes, kSwap.out + kT); // = device_bytes
  }
}

// A kernel that fails; op 3's kernel in the failure test.
tidalrt_status_t failing_kernel(tidalrt_context_t *ctx, const int64_t *desc,
                                void *const *) {
  if (tidalrt::preparing(ctx))
    return nullptr;
  return tidalrt_status_make(TIDALRT_INTERNAL, "op %lld: injected failure",
                             static_cast<long long>(desc[0]));
}

TEST_P(DeviceProgramTest, KernelFailureNamesTheLaunchedOp) {
  instance device(kind());
  ASSERT_STATUS_OK(device.prepare());
  ASSERT_STATUS_OK(device.step(inputs(1, 1), inputs(2, 1)));
  prog().fn[3] = failing_kernel;
  tidalrt_status_t status = device.step(inputs(1, 1), inputs(2, 1));
  ASSERT_NE(status, nullptr);
  EXPECT_EQ(tidalrt_status_code(status), TIDALRT_INTERNAL);
  std::string text = message(status);
  EXPECT_NE(text.find("stream 0 (compute)"), std::string::npos) << text;
  EXPECT_NE(text.find("op 3: injected failure"), std::string::npos) << text;
  EXPECT_EQ(tidalrt_context_failed_op(device.ctx.get()), 3);
  // The stream stays failed: the next step reports it again.
  prog().fn[3] = tidalrt_k_add;
  text = message(device.step(inputs(1, 1), inputs(2, 1)));
  EXPECT_NE(text.find("op 3: injected failure"), std::string::npos) << text;
}

TEST_P(DeviceProgramTest, EnqueueErrorsNameTheOp) {
  // While preparing: before any step.
  {
    instance device(kind());
    prog().bad_range_op = 2;
    std::string text = message(device.prepare());
    EXPECT_NE(text.find("op 2: tidalrt_dev_launch: write range 0"),
              std::string::npos)
        << text;
    EXPECT_NE(text.find("outside the device arena of 24576 bytes"),
              std::string::npos)
        << text;
    EXPECT_EQ(tidalrt_context_failed_op(device.ctx.get()), 2);
  }
  // In a step (a context that was never prepared).
  {
    instance device(kind());
    prog().bad_range_op = 4;
    tidalrt_status_t status = device.step(inputs(1, 1), inputs(2, 1));
    EXPECT_EQ(tidalrt_status_code(status), TIDALRT_INVALID_ARGUMENT);
    std::string text = message(status);
    EXPECT_NE(text.find("op 4: tidalrt_stream_launch: write range 0"),
              std::string::npos)
        << text;
    EXPECT_EQ(tidalrt_context_failed_op(device.ctx.get()), 4);
    // The work enqueued before it still runs and succeeds.
    EXPECT_STATUS_OK(tidalrt_dev_synchronize(device.ctx.get()));
  }
}

TEST_P(DeviceProgramTest, CopyArgumentsAreChecked) {
  instance device(kind());
  tidalrt_context_t *ctx = device.ctx.get();
  std::string text = message(tidalrt_dev_offload(ctx, 2, 0, 0, 64));
  EXPECT_NE(text.find("tidalrt_dev_offload: copy 2 outside the 2 copies"),
            std::string::npos)
      << text;
  text = message(tidalrt_dev_prefetch(ctx, 0, 64, 0, kT));
  EXPECT_NE(text.find("tidalrt_dev_prefetch: copy 0: host range (4096 bytes "
                      "at offset 64) is outside the host arena of 4096 bytes"),
            std::string::npos)
      << text;
  text = message(tidalrt_dev_offload(ctx, 1, 0, 6 * kT - 64, 128));
  EXPECT_NE(text.find("copy 1: tidalrt_dev_offload: device range"),
            std::string::npos)
      << text;
  text = message(tidalrt_dev_wait(ctx, -1));
  EXPECT_NE(text.find("tidalrt_dev_wait: copy -1 outside"), std::string::npos)
      << text;
  // Also while preparing, when copies enqueue nothing.
  tidalrt_context_begin_prepare(ctx);
  EXPECT_NE(message(tidalrt_dev_wait(ctx, 5)), "");
  EXPECT_STATUS_OK(tidalrt_dev_offload(ctx, 0, 0, 0, kT));
  EXPECT_STATUS_OK(tidalrt_dev_wait(ctx, 0));
  EXPECT_STATUS_OK(tidalrt_context_end_prepare(ctx));
  tidalrt_device_stats_t stats;
  tidalrt_device_stats(device.device.get(), &stats);
  EXPECT_EQ(stats.copies, 0u);
  // A wait for a copy never enqueued waits for nothing.
  EXPECT_STATUS_OK(tidalrt_dev_wait(ctx, 1));
  EXPECT_STATUS_OK(tidalrt_dev_synchronize(ctx));
}

// What the probe kernel saw, per call.
struct probe_record {
  std::thread::id thread;
  bool preparing = false;
  void *scratch = nullptr;
};
std::vector<probe_record> &probes() {
  static std::vector<probe_record> records;
  return records;
}

// Reserves 1000 bytes of scratch while preparing and fills them in steps,
// like a oneDNN kernel.
tidalrt_status_t probe_kernel(tidalrt_context_t *ctx, const int64_t *,
                              void *const *buffers) {
  probe_record record;
  record.thread = std::this_thread::get_id();
  record.preparing = tidalrt::preparing(ctx);
  record.scratch = tidalrt::scratch(ctx, 1000);
  if (!record.preparing) {
    memset(record.scratch, 0x5a, 1000);
    *static_cast<float *>(buffers[0]) += 1;
  }
  probes().push_back(record);
  return nullptr;
}

TEST_P(DeviceProgramTest, PrepareRunsKernelsHereAndReservesScratch) {
  probes().clear();
  device_ptr device = make_device(GetParam(), 256);
  context_ptr ctx = make_context(2);
  ASSERT_STATUS_OK(
      tidalrt_context_set_device(ctx.get(), device.get(), nullptr, 0, 0));
  uint8_t *arena = tidalrt_device_memory(device.get());
  memset(arena, 0, 256);
  std::vector<int64_t> desc = {1, 0, 0};
  auto step = [&] {
    void *buffers[1] = {arena + 64};
    tidalrt_range_t range = {64, 4};
    TRY(tidalrt_dev_launch(ctx.get(), probe_kernel, desc.data(), buffers, 1, 1,
                           &range, 0, 1));
    return tidalrt_dev_synchronize(ctx.get());
  };
  tidalrt_context_begin_prepare(ctx.get());
  ASSERT_STATUS_OK(step());
  ASSERT_STATUS_OK(tidalrt_context_end_prepare(ctx.get()));
  EXPECT_EQ(tidalrt_context_scratch_bytes(ctx.get()), 1000u);
  ASSERT_EQ(probes().size(), 1u);
  EXPECT_TRUE(probes()[0].preparing);
  EXPECT_EQ(probes()[0].thread, std::this_thread::get_id());
  EXPECT_EQ(probes()[0].scratch, nullptr);
  for (int i = 0; i < 3; ++i)
    ASSERT_STATUS_OK(step());
  ASSERT_EQ(probes().size(), 4u);
  for (size_t i = 1; i < 4; ++i) {
    EXPECT_FALSE(probes()[i].preparing);
    EXPECT_NE(probes()[i].scratch, nullptr);
    EXPECT_EQ(probes()[i].scratch, probes()[1].scratch); // allocated once
    // SIM runs kernels on the compute stream's thread, HOST on this one.
    if (GetParam() == TIDALRT_DEVICE_SIM) {
      EXPECT_NE(probes()[i].thread, std::this_thread::get_id());
    } else {
      EXPECT_EQ(probes()[i].thread, std::this_thread::get_id());
    }
  }
  float value;
  memcpy(&value, arena + 64, sizeof value);
  EXPECT_EQ(value, 3.0f);
}

// layer_norm with a broadcast scale and bias uses scratch (reserved while
// preparing): the same on the device as on the host path.
TEST_P(DeviceProgramTest, RealScratchKernelEqualsTheHostPath) {
  const std::vector<int64_t> shape = {2, 3, 4};
  KernelCall call(0);
  call.f32(shape, nullptr)
      .f32({4}, nullptr)
      .f32({4}, nullptr)
      .f32(shape, nullptr)
      .f32({2, 1, 1}, nullptr)
      .f32({2, 1, 1}, nullptr)
      .attrInt(1)
      .attrFloat(1e-5);
  std::vector<int64_t> desc = call.descriptor();
  // Layout: x 0, scale 128, bias 192, y 256, mean 384, inv 448; 512 bytes.
  const uint64_t offsets[6] = {0, 128, 192, 256, 384, 448};
  const uint64_t sizes[6] = {96, 16, 16, 96, 8, 8};
  auto run = [&](tidalrt_context_t *ctx, uint8_t *arena) {
    void *buffers[6];
    tidalrt_range_t ranges[6];
    for (int i = 0; i < 6; ++i) {
      buffers[i] = arena + offsets[i];
      ranges[i] = {offsets[i], sizes[i]};
    }
    TRY(tidalrt_dev_launch(ctx, tidalrt_k_layer_norm, desc.data(), buffers, 6,
                           0, ranges, 3, 3));
    return tidalrt_dev_synchronize(ctx);
  };
  auto fill = [&](uint8_t *arena) {
    float *f = reinterpret_cast<float *>(arena);
    for (int i = 0; i < 24; ++i)
      f[i] = static_cast<float>((i * 7) % 11) - 5;
    for (int i = 0; i < 4; ++i) {
      f[32 + i] = 0.5f + static_cast<float>(i);
      f[48 + i] = static_cast<float>(i) - 1;
    }
  };
  device_ptr device = make_device(GetParam(), 512);
  context_ptr dctx = make_context(1), hctx = make_context(1);
  ASSERT_STATUS_OK(
      tidalrt_context_set_device(dctx.get(), device.get(), nullptr, 0, 0));
  std::vector<uint8_t> host(512 + 64);
  uint8_t *harena =
      host.data() + (64 - reinterpret_cast<uintptr_t>(host.data()) % 64) % 64;
  uint8_t *darena = tidalrt_device_memory(device.get());
  memset(darena, 0, 512);
  memset(harena, 0, 512);
  for (auto [ctx, arena] :
       {std::pair(dctx.get(), darena), std::pair(hctx.get(), harena)}) {
    tidalrt_context_begin_prepare(ctx);
    ASSERT_STATUS_OK(run(ctx, arena));
    ASSERT_STATUS_OK(tidalrt_context_end_prepare(ctx));
    EXPECT_GT(tidalrt_context_scratch_bytes(ctx), 0u);
    fill(arena);
    ASSERT_STATUS_OK(run(ctx, arena));
  }
  EXPECT_EQ(memcmp(darena, harena, 512), 0);
  float y0;
  memcpy(&y0, darena + 256, sizeof y0);
  EXPECT_NE(y0, 0.0f);
}

TEST_P(DeviceProgramTest, OpLaunchedTwiceInOneStepKeepsBothLaunches) {
  device_ptr device = make_device(GetParam(), 3 * kT);
  context_ptr ctx = make_context(1);
  ASSERT_STATUS_OK(
      tidalrt_context_set_device(ctx.get(), device.get(), nullptr, 0, 0));
  uint8_t *arena = tidalrt_device_memory(device.get());
  std::vector<int64_t> desc = unary_desc(0);
  auto relu = [&](uint64_t in, uint64_t out) {
    void *buffers[2] = {arena + in, arena + out};
    tidalrt_range_t ranges[2] = {{in, kT}, {out, kT}};
    return tidalrt_dev_launch(ctx.get(), tidalrt_k_relu, desc.data(), buffers,
                              2, 0, ranges, 1, 1);
  };
  for (int iteration = 0; iteration < 20; ++iteration) {
    std::vector<float> x = inputs(iteration, 1);
    memcpy(arena, x.data(), kT);
    memset(arena + kT, 0, 2 * kT);
    ASSERT_STATUS_OK(relu(0, kT));
    ASSERT_STATUS_OK(relu(0, 2 * kT)); // the same op (record) again
    ASSERT_STATUS_OK(tidalrt_dev_synchronize(ctx.get()));
    EXPECT_EQ(memcmp(arena + kT, arena + 2 * kT, kT), 0);
    float v;
    memcpy(&v, arena + 2 * kT + 4, sizeof v);
    EXPECT_EQ(v, x[1] > 0 ? x[1] : 0.0f);
  }
}

TEST_P(DeviceProgramTest, AttachDetachAndReattach) {
  context_ptr ctx = make_context();
  device_ptr first = make_device(GetParam(), kSwap.device_bytes);
  device_ptr second = make_device(GetParam(), kSwap.device_bytes);
  std::vector<uint8_t> host(kT);
  EXPECT_EQ(tidalrt_status_code(
                status_ptr(tidalrt_context_set_device(ctx.get(), first.get(),
                                                      host.data(), kT, -1))
                    .get()),
            TIDALRT_INVALID_ARGUMENT);
  EXPECT_EQ(tidalrt_status_code(
                status_ptr(tidalrt_context_set_device(ctx.get(), first.get(),
                                                      nullptr, kT, 2))
                    .get()),
            TIDALRT_INVALID_ARGUMENT);
  EXPECT_EQ(tidalrt_context_device(ctx.get()), nullptr);
  EXPECT_EQ(tidalrt_context_device(nullptr), nullptr);
  ASSERT_STATUS_OK(
      tidalrt_context_set_device(ctx.get(), first.get(), host.data(), kT, 2));
  EXPECT_EQ(tidalrt_context_device(ctx.get()), first.get());
  prog().at = &kSwap;
  std::vector<float> x = inputs(3, 1), w = inputs(4, 1);
  for (tidalrt_device_t *device : {first.get(), second.get()}) {
    if (device == second.get()) {
      ASSERT_STATUS_OK(
          tidalrt_context_set_device(ctx.get(), device, host.data(), kT, 2));
    }
    uint8_t *arena = tidalrt_device_memory(device);
    memcpy(arena + kSwap.x, x.data(), kT);
    memcpy(arena + kSwap.w, w.data(), kT);
    ASSERT_STATUS_OK(swap_step(ctx.get(), arena));
    std::vector<float> out(kN);
    memcpy(out.data(), arena + kSwap.out, kT);
    EXPECT_EQ(out, expected(x, w));
  }
  EXPECT_EQ(tidalrt_context_device(ctx.get()), second.get());
  ASSERT_STATUS_OK(
      tidalrt_context_set_device(ctx.get(), nullptr, nullptr, 0, 0));
  EXPECT_EQ(tidalrt_context_device(ctx.get()), nullptr);
  // Detached, the device may go first; the context still runs on the host.
  first.reset();
  std::vector<uint8_t> plain(kNoSwap.device_bytes);
  prog().at = &kNoSwap;
  memcpy(plain.data() + kNoSwap.x, x.data(), kT);
  memcpy(plain.data() + kNoSwap.w, w.data(), kT);
  ASSERT_STATUS_OK(swap_step(ctx.get(), plain.data()));
  std::vector<float> out(kN);
  memcpy(out.data(), plain.data() + kNoSwap.out, kT);
  EXPECT_EQ(out, expected(x, w));
}

TEST(DeviceProgramNoDeviceTest, LaunchCallsTheKernelAndCopiesFail) {
  context_ptr ctx = make_context(1);
  std::vector<float> x = {-1, 2, -3, 4}, y(4);
  KernelCall call(0);
  call.f32({4}, x.data()).f32({4}, y.data());
  std::vector<int64_t> desc = call.descriptor();
  void *buffers[2] = {x.data(), y.data()};
  ASSERT_STATUS_OK(tidalrt_dev_launch(ctx.get(), tidalrt_k_relu, desc.data(),
                                      buffers, 2, 0, nullptr, 0, 0));
  EXPECT_EQ(y, (std::vector<float>{0, 2, 0, 4}));
  EXPECT_STATUS_OK(tidalrt_dev_synchronize(ctx.get()));
  std::string text = message(tidalrt_dev_offload(ctx.get(), 0, 0, 0, 4));
  EXPECT_NE(text.find("no device is attached"), std::string::npos) << text;
  EXPECT_NE(message(tidalrt_dev_prefetch(ctx.get(), 0, 0, 0, 4)), "");
  EXPECT_NE(message(tidalrt_dev_wait(ctx.get(), 0)), "");
  // A kernel failure names its op.
  EXPECT_EQ(tidalrt_context_failed_op(ctx.get()), -1);
  std::vector<int64_t> bad_desc = {0, 0, 0};
  text = message(tidalrt_dev_launch(ctx.get(), failing_kernel, bad_desc.data(),
                                    nullptr, 0, 0, nullptr, 0, 0));
  EXPECT_NE(text.find("injected failure"), std::string::npos) << text;
  EXPECT_EQ(tidalrt_context_failed_op(ctx.get()), 0);
  EXPECT_EQ(
      tidalrt_status_code(
          status_ptr(tidalrt_dev_launch(nullptr, tidalrt_k_relu, desc.data(),
                                        buffers, 2, 0, nullptr, 0, 0))
              .get()),
      TIDALRT_INVALID_ARGUMENT);
}

// Many steps on a SIM device whose copies are throttled (a 4 KiB copy takes
// about 0.2 ms, far longer than a kernel): a wait missing from the runtime's
// protocol would let op 3 overwrite a before its offload read it, or op 5
// read a before its prefetch wrote it. Each result must still equal the
// host path's, bit for bit (and ThreadSanitizer must see no race).
TEST(DeviceProgramSimTest, ManyThrottledStepsEqualTheHostPath) {
  prog() = program();
  instance device(TIDALRT_DEVICE_SIM, /*link_gbps=*/0.02);
  EXPECT_EQ(tidalrt_device_link_gbps(device.device.get()), 0.02);
  instance host(-1);
  ASSERT_STATUS_OK(device.prepare());
  ASSERT_STATUS_OK(host.prepare());
  for (int step = 0; step < 150; ++step) {
    std::vector<float> x = inputs(step, 1), w = inputs(step * 3 + 1, 0.25f);
    ASSERT_STATUS_OK(device.step(x, w));
    ASSERT_STATUS_OK(host.step(x, w));
    ASSERT_EQ(device.out(), host.out()) << "step " << step;
  }
  tidalrt_device_stats_t stats;
  tidalrt_device_stats(device.device.get(), &stats);
  EXPECT_EQ(stats.copies, 300u);
  EXPECT_GE(stats.copy_seconds, 300 * kT / 0.02e9 * 0.99);
}

} // namespace
