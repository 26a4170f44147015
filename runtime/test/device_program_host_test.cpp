// device_program_host_test.cpp - host-placed kernels in generated device
// programs (tidalrt/device.h, "Generated device programs", ABI 0.5):
// tidalrt_dev_launch_host and tidalrt_dev_host_arena. Hand-written steps mix
// device kernels (tidalrt_dev_launch), host kernels, offloads and
// prefetches, with test kernels that sleep before they touch their buffers,
// on a SIM device whose link is throttled, so that a missing order between
// a host kernel and a copy shows up as wrong numbers (and as a race under
// ThreadSanitizer). Each case runs on HOST and SIM devices; the ZeRO-style
// program is also compared bit for bit with the no-device path.
#include "device_test_util.h"
#include "kernel_test_util.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
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

constexpr int64_t kN = 16384;               // floats per tensor
constexpr uint64_t kT = kN * sizeof(float); // 64 KiB per tensor
// A throttled SIM link: a 64 KiB copy lasts about 1.3 ms.
constexpr double kSlowLink = 0.05;

// What the test kernels compute (desc[1]); desc = {op, formula, sleep_us,
// seed}. Every kernel sleeps desc[2] microseconds before it touches its
// buffers, so that work it is not ordered after has time to run first.
enum formula : int64_t {
  kCopy = 0,     // b[1] = b[0]
  kFill = 1,     // b[0][i] = pattern(seed, i)
  kGrad = 2,     // b[2] = b[0] * b[1] + 0.25
  kAdd = 3,      // b[2] = b[0] + b[1]
  kMomentum = 4, // b[0] = 0.9 * b[0] + b[1]
  kSquare = 5,   // b[0] = b[0] + b[1] * b[1]
  kUpdate = 6,   // b[0] = b[0] - 0.01 * b[1] / (1 + b[2]) + 0.001 * b[3]
  kFail = 7,     // fails
  kNothing = 8,  // only sleeps
};

using desc_t = std::array<int64_t, 4>;

float pattern(int64_t seed, int64_t i) {
  return static_cast<float>(((i * 37 + seed * 101) % 53) - 26) / 8;
}

std::vector<float> patterned(int64_t seed) {
  std::vector<float> v(kN);
  for (int64_t i = 0; i < kN; ++i)
    v[i] = pattern(seed, i);
  return v;
}

// How many test kernels run at once (kernels of one context must never
// overlap), and the most seen; which threads ran kernels of each kind.
struct kernel_watch {
  std::atomic<int> inside{0};
  std::atomic<int> most{0};
  std::atomic<int> runs{0};
};
kernel_watch &watch() {
  static kernel_watch w;
  return w;
}
void reset_watch() {
  watch().inside = 0;
  watch().most = 0;
  watch().runs = 0;
}

tidalrt_status_t test_kernel(tidalrt_context_t *ctx, const int64_t *desc,
                             void *const *buffers) {
  if (tidalrt::preparing(ctx))
    return nullptr;
  int now = ++watch().inside;
  int most = watch().most.load();
  while (most < now && !watch().most.compare_exchange_weak(most, now)) {
  }
  ++watch().runs;
  if (desc[2] > 0)
    std::this_thread::sleep_for(std::chrono::microseconds(desc[2]));
  auto f = [&](int k) { return static_cast<float *>(buffers[k]); };
  tidalrt_status_t status = nullptr;
  switch (desc[1]) {
  case kCopy:
    memcpy(f(1), f(0), kT);
    break;
  case kFill:
    for (int64_t i = 0; i < kN; ++i)
      f(0)[i] = pattern(desc[3], i);
    break;
  case kGrad:
    for (int64_t i = 0; i < kN; ++i)
      f(2)[i] = f(0)[i] * f(1)[i] + 0.25f;
    break;
  case kAdd:
    for (int64_t i = 0; i < kN; ++i)
      f(2)[i] = f(0)[i] + f(1)[i];
    break;
  case kMomentum:
    for (int64_t i = 0; i < kN; ++i)
      f(0)[i] = 0.9f * f(0)[i] + f(1)[i];
    break;
  case kSquare:
    for (int64_t i = 0; i < kN; ++i)
      f(0)[i] = f(0)[i] + f(1)[i] * f(1)[i];
    break;
  case kUpdate:
    for (int64_t i = 0; i < kN; ++i)
      f(0)[i] = f(0)[i] - 0.01f * f(1)[i] / (1.0f + f(2)[i]) + 0.001f * f(3)[i];
    break;
  case kFail:
    status = tidalrt_status_make(TIDALRT_INTERNAL, "op %lld: injected failure",
                                 static_cast<long long>(desc[0]));
    break;
  default:
    break;
  }
  --watch().inside;
  return status;
}

#define TRY(expr)                                                              \
  do {                                                                         \
    if (tidalrt_status_t status_ = (expr))                                     \
      return status_;                                                          \
  } while (0)

struct context_deleter {
  void operator()(tidalrt_context_t *ctx) const { tidalrt_context_free(ctx); }
};
using context_ptr = std::unique_ptr<tidalrt_context_t, context_deleter>;

context_ptr make_context(int64_t num_ops) {
  tidalrt_context_options_t options = {static_cast<size_t>(num_ops), 7};
  tidalrt_context_t *ctx = nullptr;
  EXPECT_STATUS_OK(tidalrt_context_create(&options, &ctx));
  return context_ptr(ctx);
}

std::string message(tidalrt_status_t status) {
  status_ptr owned(status);
  return tidalrt_status_message(owned.get());
}

// A program instance and the calls its step makes, as generated code would
// make them: on a device (kind HOST or SIM), or, with kind < 0, on the
// no-device path, where device and host tensors live in plain memory and
// the copies are memcpy (every kernel has run when its call returns;
// while preparing there is no data, so nothing is copied). The
// device is declared first so that the context (which detaches) goes first.
struct program {
  device_ptr device;
  context_ptr ctx;
  std::vector<uint8_t> plain_device, plain_host, host_storage;
  uint8_t *dev = nullptr;    // the device arena
  uint8_t *host = nullptr;   // the host arena
  std::vector<desc_t> descs; // per op; valid until the kernel has run

  program(int kind, int64_t num_ops, uint64_t device_tensors,
          uint64_t host_tensors, int64_t num_copies, double link_gbps = 0)
      : descs(static_cast<size_t>(num_ops)) {
    ctx = make_context(num_ops);
    host_storage.assign(host_tensors * kT + 64, 0);
    uint8_t *base = host_storage.data();
    host = base + (64 - reinterpret_cast<uintptr_t>(base) % 64) % 64;
    if (kind < 0) {
      plain_device.assign(device_tensors * kT + 64, 0);
      base = plain_device.data();
      dev = base + (64 - reinterpret_cast<uintptr_t>(base) % 64) % 64;
      return;
    }
    device = make_device(static_cast<tidalrt_device_kind_t>(kind),
                         device_tensors * kT, link_gbps);
    EXPECT_STATUS_OK(tidalrt_context_set_device(ctx.get(), device.get(), host,
                                                host_tensors * kT, num_copies));
    dev = tidalrt_device_memory(device.get());
    memset(dev, 0, device_tensors * kT);
  }
  ~program() { ctx.reset(); }

  bool on_device() const { return device != nullptr; }

  const int64_t *desc(int64_t op, int64_t formula, int64_t sleep_us,
                      int64_t seed) {
    desc_t &d = descs[static_cast<size_t>(op)];
    d = {op, formula, sleep_us, seed};
    return d.data();
  }

  // A device kernel on tensors `t` (device tensor numbers); all but the
  // last `writes` are read.
  tidalrt_status_t dev_op(int64_t op, int64_t formula, int64_t sleep_us,
                          std::initializer_list<uint64_t> t, int64_t writes = 1,
                          int64_t seed = 0) {
    void *buffers[4];
    tidalrt_range_t ranges[4];
    int64_t n = 0;
    for (uint64_t tensor : t) {
      buffers[n] = dev + tensor * kT;
      ranges[n] = {tensor * kT, kT};
      ++n;
    }
    return tidalrt_dev_launch(ctx.get(), test_kernel,
                              desc(op, formula, sleep_us, seed), buffers, n, op,
                              ranges, n - writes, writes);
  }

  // A host kernel on host tensors `t`. On a device, the host pointers come
  // from tidalrt_dev_host_arena, once per call as generated code would.
  tidalrt_status_t host_op(int64_t op, int64_t formula, int64_t sleep_us,
                           std::initializer_list<uint64_t> t,
                           int64_t seed = 0) {
    uint8_t *arena = on_device() ? tidalrt_dev_host_arena(ctx.get()) : host;
    void *buffers[4];
    int64_t n = 0;
    for (uint64_t tensor : t)
      buffers[n++] = arena + tensor * kT;
    return tidalrt_dev_launch_host(ctx.get(), test_kernel,
                                   desc(op, formula, sleep_us, seed), buffers,
                                   n, op);
  }

  tidalrt_status_t offload(int64_t copy_id, uint64_t host_tensor,
                           uint64_t dev_tensor) {
    if (!on_device()) {
      if (!tidalrt::preparing(ctx.get()))
        memcpy(host + host_tensor * kT, dev + dev_tensor * kT, kT);
      return nullptr;
    }
    return tidalrt_dev_offload(ctx.get(), copy_id, host_tensor * kT,
                               dev_tensor * kT, kT);
  }
  tidalrt_status_t prefetch(int64_t copy_id, uint64_t host_tensor,
                            uint64_t dev_tensor) {
    if (!on_device()) {
      if (!tidalrt::preparing(ctx.get()))
        memcpy(dev + dev_tensor * kT, host + host_tensor * kT, kT);
      return nullptr;
    }
    return tidalrt_dev_prefetch(ctx.get(), copy_id, host_tensor * kT,
                                dev_tensor * kT, kT);
  }
  tidalrt_status_t wait(int64_t copy_id) {
    return on_device() ? tidalrt_dev_wait(ctx.get(), copy_id) : nullptr;
  }
  tidalrt_status_t sync() { return tidalrt_dev_synchronize(ctx.get()); }

  // Tensor contents (after a synchronisation).
  std::vector<float> dev_tensor(uint64_t t) const { return read(dev, t); }
  std::vector<float> host_tensor(uint64_t t) const { return read(host, t); }
  void set_dev(uint64_t t, const std::vector<float> &v) { write(dev, t, v); }
  void set_host(uint64_t t, const std::vector<float> &v) { write(host, t, v); }

  static std::vector<float> read(const uint8_t *arena, uint64_t t) {
    std::vector<float> v(kN);
    memcpy(v.data(), arena + t * kT, kT);
    return v;
  }
  static void write(uint8_t *arena, uint64_t t, const std::vector<float> &v) {
    memcpy(arena + t * kT, v.data(), kT);
  }
};

class DeviceProgramHostTest
    : public ::testing::TestWithParam<tidalrt_device_kind_t> {
protected:
  void SetUp() override { reset_watch(); }
  int kind() const { return GetParam(); }
  // SIM copies are throttled; HOST copies never are.
  double link() const {
    return GetParam() == TIDALRT_DEVICE_SIM ? kSlowLink : 0;
  }
};

INSTANTIATE_TEST_SUITE_P(Kinds, DeviceProgramHostTest,
                         ::testing::Values(TIDALRT_DEVICE_HOST,
                                           TIDALRT_DEVICE_SIM),
                         [](const auto &info) {
                           return std::string(device_kind_name(info.param));
                         });

// A device kernel writes p (slowly), p is offloaded to host tensor A, and a
// host kernel copies A to B with no tidalrt_dev_wait: the protocol alone
// (rule a) must run it after the offload.
TEST_P(DeviceProgramHostTest, HostLaunchAfterOffloadSeesTheOffloadedBytes) {
  // Device: x 0, p 1. Host: A 0, B 1.
  program p(kind(), 2, 2, 2, 1, link());
  for (int iteration = 0; iteration < 8; ++iteration) {
    std::vector<float> x = patterned(iteration);
    p.set_dev(0, x);
    p.set_host(0, std::vector<float>(kN, -100.0f)); // stale
    p.set_host(1, std::vector<float>(kN, 0.0f));
    ASSERT_STATUS_OK(p.dev_op(0, kCopy, 3000, {0, 1}));
    ASSERT_STATUS_OK(p.offload(0, 0, 1));
    ASSERT_STATUS_OK(p.host_op(1, kCopy, 0, {0, 1}));
    ASSERT_STATUS_OK(p.sync());
    ASSERT_EQ(p.host_tensor(1), x) << "iteration " << iteration;
    ASSERT_EQ(p.host_tensor(0), x) << "iteration " << iteration;
  }
  EXPECT_EQ(tidalrt_context_failed_op(p.ctx.get()), -1);
}

// A host kernel writes A (after sleeping), then A is prefetched to device
// tensor D: the prefetch (rule b) gets the written values.
TEST_P(DeviceProgramHostTest, PrefetchAfterHostLaunchSeesTheWrittenBytes) {
  // Device: D 0, E 1. Host: A 0.
  program p(kind(), 2, 2, 1, 1, link());
  for (int iteration = 0; iteration < 8; ++iteration) {
    p.set_host(0, std::vector<float>(kN, -100.0f)); // stale
    ASSERT_STATUS_OK(p.host_op(0, kFill, 3000, {0}, iteration));
    ASSERT_STATUS_OK(p.prefetch(0, 0, 0));
    ASSERT_STATUS_OK(p.wait(0));
    ASSERT_STATUS_OK(p.dev_op(1, kCopy, 0, {0, 1}));
    ASSERT_STATUS_OK(p.sync());
    std::vector<float> want = patterned(iteration);
    ASSERT_EQ(p.dev_tensor(0), want) << "iteration " << iteration;
    ASSERT_EQ(p.dev_tensor(1), want) << "iteration " << iteration;
  }
}

// A prefetch reads A (it starts only after a slow device kernel, and the
// link is slow), then a host kernel overwrites A at once: the device gets
// the OLD values (rule a: the host launch waits for the prefetch).
TEST_P(DeviceProgramHostTest, HostLaunchAfterPrefetchDoesNotChangeItsBytes) {
  // Device: x 0, y 1, D 2. Host: A 0.
  program p(kind(), 2, 3, 1, 1, link());
  for (int iteration = 0; iteration < 8; ++iteration) {
    std::vector<float> old_values = patterned(iteration);
    p.set_host(0, old_values);
    p.set_dev(2, std::vector<float>(kN, -100.0f));
    ASSERT_STATUS_OK(p.dev_op(0, kCopy, 3000, {0, 1}));
    ASSERT_STATUS_OK(p.prefetch(0, 0, 2));
    ASSERT_STATUS_OK(p.host_op(1, kFill, 0, {0}, iteration + 1000));
    ASSERT_STATUS_OK(p.sync());
    ASSERT_EQ(p.dev_tensor(2), old_values) << "iteration " << iteration;
    ASSERT_EQ(p.host_tensor(0), patterned(iteration + 1000))
        << "iteration " << iteration;
  }
}

// An offload into host bytes that an earlier host kernel still reads (rule
// b): the host kernel sees the values from before the offload.
TEST_P(DeviceProgramHostTest, OffloadAfterHostLaunchDoesNotChangeItsInput) {
  // Device: g 0. Host: A 0, B 1.
  program p(kind(), 2, 1, 2, 1, link());
  for (int iteration = 0; iteration < 8; ++iteration) {
    std::vector<float> old_values = patterned(iteration);
    std::vector<float> new_values = patterned(iteration + 500);
    p.set_host(0, old_values);
    p.set_dev(0, new_values);
    ASSERT_STATUS_OK(p.host_op(0, kCopy, 3000, {0, 1})); // B = A, slowly
    ASSERT_STATUS_OK(p.offload(0, 0, 0));                // A = g
    ASSERT_STATUS_OK(p.sync());
    ASSERT_EQ(p.host_tensor(1), old_values) << "iteration " << iteration;
    ASSERT_EQ(p.host_tensor(0), new_values) << "iteration " << iteration;
  }
}

// Host writes in step 1; step 2 prefetches them.
TEST_P(DeviceProgramHostTest, PrefetchInTheNextStepSeesHostWrites) {
  // Device: x 0, y 1, D 2. Host: A 0.
  program p(kind(), 3, 3, 1, 1, link());
  for (int step = 0; step < 6; ++step) {
    // Step 1: a device kernel, and a slow host kernel writing A.
    ASSERT_STATUS_OK(p.dev_op(0, kCopy, 500, {0, 1}));
    ASSERT_STATUS_OK(p.host_op(1, kFill, 2000, {0}, step));
    ASSERT_STATUS_OK(p.sync());
    // Step 2: prefetch A.
    ASSERT_STATUS_OK(p.prefetch(0, 0, 2));
    ASSERT_STATUS_OK(p.wait(0));
    ASSERT_STATUS_OK(p.dev_op(2, kCopy, 0, {2, 1}));
    ASSERT_STATUS_OK(p.sync());
    ASSERT_EQ(p.dev_tensor(1), patterned(step)) << "step " << step;
  }
}

// A ZeRO-Offload style step: the gradient is computed on the device and
// offloaded; host kernels update the optimizer state and the master weights
// in the host arena; the weights are prefetched back. Several host launches
// and copies, each pair ordered only by the protocol.
//
// Device: x 0, w 1, g 2, g2 3, out 4. Host: gh 0, m 1, v 2, wm 3.
tidalrt_status_t zero_step(program &p) {
  TRY(p.dev_op(0, kGrad, 500, {1, 0, 2}));     // g = w * x + 0.25
  TRY(p.offload(0, 0, 2));                     // gh = g
  TRY(p.host_op(1, kMomentum, 300, {1, 0}));   // m = 0.9 m + gh   (rule a)
  TRY(p.host_op(2, kSquare, 300, {2, 0}));     // v = v + gh * gh
  TRY(p.dev_op(3, kAdd, 500, {2, 1, 3}));      // g2 = g + w (overlaps them)
  TRY(p.offload(1, 0, 3));                     // gh = g2          (rule b)
  TRY(p.host_op(4, kUpdate, 0, {3, 1, 2, 0})); // wm -= ...(m, v, gh) (a)
  TRY(p.prefetch(2, 3, 1));                    // w = wm           (rule b)
  TRY(p.wait(2));
  TRY(p.dev_op(5, kAdd, 0, {1, 0, 4})); // out = w + x
  return p.sync();
}

void zero_init(program &p) {
  std::vector<float> w = patterned(3);
  for (float &value : w)
    value *= 0.1f;
  p.set_dev(1, w);
  p.set_host(3, w);
  p.set_host(1, std::vector<float>(kN, 0.0f));
  p.set_host(2, std::vector<float>(kN, 0.0f));
}

TEST_P(DeviceProgramHostTest, ZeroOffloadStepsEqualTheNoDevicePath) {
  program d(kind(), 6, 5, 4, 3, link());
  program h(-1, 6, 5, 4, 3);
  zero_init(d);
  zero_init(h);
  for (program *p : {&d, &h}) {
    tidalrt_context_begin_prepare(p->ctx.get());
    ASSERT_STATUS_OK(zero_step(*p));
    ASSERT_STATUS_OK(tidalrt_context_end_prepare(p->ctx.get()));
  }
  for (int step = 0; step < 12; ++step) {
    std::vector<float> x = patterned(step + 40);
    d.set_dev(0, x);
    h.set_dev(0, x);
    ASSERT_STATUS_OK(zero_step(d));
    ASSERT_STATUS_OK(zero_step(h));
    for (uint64_t t : {1, 2, 3, 4})
      ASSERT_EQ(d.dev_tensor(t), h.dev_tensor(t))
          << "step " << step << ", device tensor " << t;
    for (uint64_t t : {0, 1, 2, 3})
      ASSERT_EQ(d.host_tensor(t), h.host_tensor(t))
          << "step " << step << ", host tensor " << t;
  }
  // The state really changed (the comparison is not of zeros).
  EXPECT_NE(d.host_tensor(2), std::vector<float>(kN, 0.0f));
  EXPECT_EQ(tidalrt_context_failed_op(d.ctx.get()), -1);
  // Host launches count as launches; no device range raises the peak.
  tidalrt_device_stats_t stats;
  tidalrt_device_reset_stats(d.device.get());
  ASSERT_STATUS_OK(zero_step(d));
  tidalrt_device_stats(d.device.get(), &stats);
  EXPECT_EQ(stats.launches, 6u);
  EXPECT_EQ(stats.copies, 3u);
  EXPECT_EQ(stats.bytes_to_host, 2 * kT);
  EXPECT_EQ(stats.bytes_to_device, kT);
  EXPECT_EQ(stats.peak_device_bytes, 5 * kT);
}

// The same op launched twice on the host stream in one step: the second
// launch waits for the first, whose record it reuses.
TEST_P(DeviceProgramHostTest, HostOpLaunchedTwiceInOneStepKeepsBothLaunches) {
  program p(kind(), 1, 1, 3, 0);
  // Each launch has its own desc (the first may still be running when the
  // second is made).
  const desc_t slow = {0, kCopy, 1000, 0}, fast = {0, kCopy, 0, 0};
  for (int iteration = 0; iteration < 10; ++iteration) {
    std::vector<float> a = patterned(iteration);
    p.set_host(0, a);
    p.set_host(1, std::vector<float>(kN, 0.0f));
    p.set_host(2, std::vector<float>(kN, 0.0f));
    uint8_t *host = tidalrt_dev_host_arena(p.ctx.get());
    void *first[2] = {host, host + kT};
    ASSERT_STATUS_OK(tidalrt_dev_launch_host(p.ctx.get(), test_kernel,
                                             slow.data(), first, 2, 0));
    void *second[2] = {host + kT, host + 2 * kT};
    ASSERT_STATUS_OK(tidalrt_dev_launch_host(p.ctx.get(), test_kernel,
                                             fast.data(), second, 2, 0));
    ASSERT_STATUS_OK(p.sync());
    ASSERT_EQ(p.host_tensor(2), a) << "iteration " << iteration;
  }
}

// A failing host kernel: tidalrt_dev_synchronize returns its failure and
// the context names its op; later work is skipped, including copies that
// follow it (rule b) and device work that waits for them.
TEST_P(DeviceProgramHostTest, HostKernelFailureNamesItsOp) {
  // Device: x 0, D 1, M 2. Host: A 0.
  {
    program p(kind(), 4, 3, 1, 1, link());
    p.set_dev(2, std::vector<float>(kN, 0.0f));
    ASSERT_STATUS_OK(p.dev_op(0, kNothing, 0, {0}));
    ASSERT_STATUS_OK(p.host_op(1, kFail, 500, {0}));
    ASSERT_STATUS_OK(p.prefetch(0, 0, 1));
    ASSERT_STATUS_OK(p.wait(0));
    ASSERT_STATUS_OK(p.dev_op(2, kFill, 0, {2}, 1, 7)); // skipped
    ASSERT_STATUS_OK(p.host_op(3, kNothing, 0, {0}));   // skipped
    tidalrt_status_t status = p.sync();
    ASSERT_NE(status, nullptr);
    EXPECT_EQ(tidalrt_status_code(status), TIDALRT_INTERNAL);
    std::string text = message(status);
    EXPECT_NE(text.find("op 1: injected failure"), std::string::npos) << text;
    // The host stream is the fourth stream, a compute-kind stream.
    EXPECT_NE(text.find("stream 3 (host), launch #1"), std::string::npos)
        << text;
    EXPECT_EQ(tidalrt_context_failed_op(p.ctx.get()), 1);
    EXPECT_EQ(watch().runs, 2); // ops 0 and 1 only
    EXPECT_EQ(p.dev_tensor(2), std::vector<float>(kN, 0.0f));
    // Sticky: the next step reports it again.
    ASSERT_STATUS_OK(p.host_op(3, kNothing, 0, {0}));
    text = message(p.sync());
    EXPECT_NE(text.find("op 1: injected failure"), std::string::npos) << text;
  }
  // Only the host stream fails: its failure is returned as is.
  {
    program p(kind(), 3, 1, 1, 1, link());
    ASSERT_STATUS_OK(p.host_op(0, kNothing, 0, {0}));
    ASSERT_STATUS_OK(p.host_op(2, kFail, 0, {0}));
    ASSERT_STATUS_OK(p.dev_op(1, kNothing, 0, {0}));
    std::string text = message(p.sync());
    EXPECT_EQ(text, "stream 3 (host), launch #2: op 2: injected failure");
    EXPECT_EQ(tidalrt_context_failed_op(p.ctx.get()), 2);
  }
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

// Reserves 1000 bytes of scratch while preparing and fills them in steps.
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

TEST_P(DeviceProgramHostTest, PrepareRunsHostKernelsHereAndEnqueuesNothing) {
  probes().clear();
  program p(kind(), 2, 1, 1, 0);
  p.set_host(0, std::vector<float>(kN, 0.0f));
  std::vector<int64_t> desc = {1, 0, 0};
  auto step = [&] {
    void *buffers[1] = {tidalrt_dev_host_arena(p.ctx.get())};
    TRY(tidalrt_dev_launch_host(p.ctx.get(), probe_kernel, desc.data(), buffers,
                                1, 1));
    return p.sync();
  };
  tidalrt_context_begin_prepare(p.ctx.get());
  ASSERT_STATUS_OK(step());
  ASSERT_STATUS_OK(tidalrt_context_end_prepare(p.ctx.get()));
  EXPECT_EQ(tidalrt_context_scratch_bytes(p.ctx.get()), 1000u);
  ASSERT_EQ(probes().size(), 1u);
  EXPECT_TRUE(probes()[0].preparing);
  EXPECT_EQ(probes()[0].thread, std::this_thread::get_id());
  EXPECT_EQ(probes()[0].scratch, nullptr);
  tidalrt_device_stats_t stats;
  tidalrt_device_stats(p.device.get(), &stats);
  EXPECT_EQ(stats.launches, 0u);
  EXPECT_EQ(p.host_tensor(0)[0], 0.0f);
  for (int i = 0; i < 3; ++i)
    ASSERT_STATUS_OK(step());
  ASSERT_EQ(probes().size(), 4u);
  for (size_t i = 1; i < 4; ++i) {
    EXPECT_FALSE(probes()[i].preparing);
    EXPECT_NE(probes()[i].scratch, nullptr);
    EXPECT_EQ(probes()[i].scratch, probes()[1].scratch); // allocated once
    // SIM runs host kernels on the host stream's thread, HOST on this one.
    if (GetParam() == TIDALRT_DEVICE_SIM) {
      EXPECT_NE(probes()[i].thread, std::this_thread::get_id());
    } else {
      EXPECT_EQ(probes()[i].thread, std::this_thread::get_id());
    }
  }
  tidalrt_device_stats(p.device.get(), &stats);
  EXPECT_EQ(stats.launches, 3u);
  EXPECT_EQ(p.host_tensor(0)[0], 3.0f);
}

TEST_P(DeviceProgramHostTest, ArgumentErrorsNameTheCall) {
  program p(kind(), 2, 1, 1, 0);
  tidalrt_context_t *ctx = p.ctx.get();
  desc_t desc = {0, kNothing, 0, 0};
  void *buffers[1] = {p.host};
  for (bool preparing : {false, true}) {
    SCOPED_TRACE(preparing ? "preparing" : "in a step");
    if (preparing)
      tidalrt_context_begin_prepare(ctx);
    tidalrt_status_t status =
        tidalrt_dev_launch_host(ctx, test_kernel, desc.data(), buffers, 1, 2);
    EXPECT_EQ(tidalrt_status_code(status), TIDALRT_INTERNAL);
    std::string text = message(status);
    EXPECT_NE(text.find("tidalrt_dev_launch_host: op index 2 outside the "
                        "program's 2 ops"),
              std::string::npos)
        << text;
    EXPECT_EQ(tidalrt_context_failed_op(ctx), 2);
    status =
        tidalrt_dev_launch_host(ctx, test_kernel, desc.data(), buffers, 1, -1);
    EXPECT_EQ(tidalrt_status_code(status), TIDALRT_INTERNAL);
    EXPECT_NE(message(status).find("op index -1"), std::string::npos);
    status =
        tidalrt_dev_launch_host(ctx, test_kernel, desc.data(), buffers, -1, 1);
    EXPECT_EQ(tidalrt_status_code(status), TIDALRT_INVALID_ARGUMENT);
    text = message(status);
    EXPECT_NE(text.find("tidalrt_dev_launch_host: op 1: bad counts (-1 "
                        "buffers"),
              std::string::npos)
        << text;
    EXPECT_EQ(tidalrt_context_failed_op(ctx), 1);
    status =
        tidalrt_dev_launch_host(ctx, test_kernel, desc.data(), nullptr, 1, 0);
    EXPECT_EQ(tidalrt_status_code(status), TIDALRT_INVALID_ARGUMENT);
    EXPECT_NE(message(status).find("NULL list"), std::string::npos);
    EXPECT_EQ(tidalrt_context_failed_op(ctx), 0);
    status = tidalrt_dev_launch_host(ctx, nullptr, desc.data(), buffers, 1, 0);
    EXPECT_EQ(tidalrt_status_code(status), TIDALRT_INVALID_ARGUMENT);
    EXPECT_EQ(message(status), "tidalrt_dev_launch_host: NULL argument");
    status = tidalrt_dev_launch_host(nullptr, test_kernel, desc.data(), buffers,
                                     1, 0);
    EXPECT_EQ(tidalrt_status_code(status), TIDALRT_INVALID_ARGUMENT);
    EXPECT_EQ(message(status), "tidalrt_dev_launch_host: NULL argument");
    if (preparing) {
      EXPECT_STATUS_OK(tidalrt_context_end_prepare(ctx));
    }
  }
  // Nothing was enqueued; the streams did not fail.
  EXPECT_STATUS_OK(p.sync());
  tidalrt_device_stats_t stats;
  tidalrt_device_stats(p.device.get(), &stats);
  EXPECT_EQ(stats.launches, 0u);
  EXPECT_EQ(watch().runs, 0);
}

// Where device memory is host memory (no device, HOST, SIM), the constants
// device kernels read are the program's image itself; a CUDA device gets a
// copy (cuda_device_test.cpp).
TEST_P(DeviceProgramHostTest, ConstantsAreTheImageWhereDeviceMemoryIsHost) {
  static const uint8_t image[64] = {1, 2, 3};
  const uint8_t *out = nullptr;
  context_ptr ctx = make_context(1);
  EXPECT_STATUS_OK(tidalrt_dev_constants(ctx.get(), image, 64, &out));
  EXPECT_EQ(out, image); // no device
  device_ptr device = make_device(GetParam(), 256);
  ASSERT_STATUS_OK(
      tidalrt_context_set_device(ctx.get(), device.get(), nullptr, 0, 1));
  out = nullptr;
  EXPECT_STATUS_OK(tidalrt_dev_constants(ctx.get(), image, 64, &out));
  EXPECT_EQ(out, image);
  for (tidalrt_status_t status :
       {tidalrt_dev_constants(nullptr, image, 64, &out),
        tidalrt_dev_constants(ctx.get(), image, 64, nullptr),
        tidalrt_dev_constants(ctx.get(), nullptr, 64, &out)}) {
    EXPECT_EQ(tidalrt_status_code(status), TIDALRT_INVALID_ARGUMENT);
    tidalrt_status_free(status);
  }
  ASSERT_STATUS_OK(
      tidalrt_context_set_device(ctx.get(), nullptr, nullptr, 0, 0));
}

TEST_P(DeviceProgramHostTest, HostArenaIsTheAttachedOne) {
  EXPECT_EQ(tidalrt_dev_host_arena(nullptr), nullptr);
  context_ptr ctx = make_context(1);
  EXPECT_EQ(tidalrt_dev_host_arena(ctx.get()), nullptr); // no device
  device_ptr device = make_device(GetParam(), 256);
  std::vector<uint8_t> host(128);
  ASSERT_STATUS_OK(
      tidalrt_context_set_device(ctx.get(), device.get(), host.data(), 128, 1));
  EXPECT_EQ(tidalrt_dev_host_arena(ctx.get()), host.data());
  ASSERT_STATUS_OK(
      tidalrt_context_set_device(ctx.get(), device.get(), nullptr, 0, 1));
  EXPECT_EQ(tidalrt_dev_host_arena(ctx.get()), nullptr); // 0 bytes
  ASSERT_STATUS_OK(
      tidalrt_context_set_device(ctx.get(), device.get(), host.data(), 0, 1));
  EXPECT_EQ(tidalrt_dev_host_arena(ctx.get()), nullptr); // 0 bytes
  ASSERT_STATUS_OK(
      tidalrt_context_set_device(ctx.get(), device.get(), host.data(), 64, 0));
  EXPECT_EQ(tidalrt_dev_host_arena(ctx.get()), host.data());
  ASSERT_STATUS_OK(
      tidalrt_context_set_device(ctx.get(), nullptr, nullptr, 0, 0));
  EXPECT_EQ(tidalrt_dev_host_arena(ctx.get()), nullptr); // detached
}

// Host and device kernels of one context never run at the same time (they
// share its scratch and per-op state), although they run on two threads.
TEST_P(DeviceProgramHostTest, HostAndDeviceKernelsNeverOverlap) {
  constexpr int64_t kOpsPerKind = 24;
  // Device: 0 (kernels), 1 (offloaded), 2 (prefetched into).
  program p(kind(), 2 * kOpsPerKind, 3, 2, 2, link());
  for (int step = 0; step < 5; ++step) {
    for (int64_t i = 0; i < kOpsPerKind; ++i) {
      ASSERT_STATUS_OK(p.dev_op(i, kNothing, 150, {0}));
      ASSERT_STATUS_OK(p.host_op(kOpsPerKind + i, kNothing, 150, {0}));
      if (i % 8 == 3) { // copies overlap both kinds
        ASSERT_STATUS_OK(p.offload(0, 1, 1));
        ASSERT_STATUS_OK(p.prefetch(1, 0, 2));
      }
    }
    ASSERT_STATUS_OK(p.sync());
  }
  EXPECT_EQ(watch().runs, 5 * 2 * kOpsPerKind);
  EXPECT_EQ(watch().most, 1);
  EXPECT_EQ(watch().inside, 0);
}

// The no-device path: tidalrt_dev_launch_host calls the kernel at once.
TEST(DeviceProgramHostNoDeviceTest, LaunchHostCallsTheKernel) {
  reset_watch();
  context_ptr ctx = make_context(2);
  std::vector<float> a = patterned(1), b(kN, 0.0f);
  void *buffers[2] = {a.data(), b.data()};
  desc_t copy = {0, kCopy, 0, 0};
  ASSERT_STATUS_OK(tidalrt_dev_launch_host(ctx.get(), test_kernel, copy.data(),
                                           buffers, 2, 0));
  EXPECT_EQ(b, a);
  EXPECT_EQ(tidalrt_dev_host_arena(ctx.get()), nullptr);
  EXPECT_EQ(tidalrt_context_failed_op(ctx.get()), -1);
  desc_t fail = {1, kFail, 0, 0};
  std::string text = message(tidalrt_dev_launch_host(
      ctx.get(), test_kernel, fail.data(), buffers, 2, 1));
  EXPECT_EQ(text, "op 1: injected failure");
  EXPECT_EQ(tidalrt_context_failed_op(ctx.get()), 1);
  EXPECT_EQ(tidalrt_status_code(
                status_ptr(tidalrt_dev_launch_host(ctx.get(), nullptr,
                                                   copy.data(), buffers, 2, 0))
                    .get()),
            TIDALRT_INVALID_ARGUMENT);
  EXPECT_STATUS_OK(tidalrt_dev_synchronize(ctx.get()));
  EXPECT_EQ(watch().runs, 2);
}

} // namespace
