// cuda_device_test.cpp - the CUDA device (TIDALRT_DEVICE_CUDA): arena,
// transfers, streams, host streams, events, copies and stats, and device
// programs whose CPU kernels run as their CUDA twins. Every test skips,
// naming the reason, without a usable GPU.
#include "cuda_test_util.h"
#include "device_test_util.h"

#include "tidalrt/tidalrt.h"

#include <cuda_runtime.h>

#include <atomic>
#include <cstring>
#include <numeric>
#include <string>
#include <thread>
#include <vector>

using namespace tidalrt_test;

namespace {

TEST(CudaDevice, TransfersRoundTripAndBoundsAreChecked) {
  TIDALRT_REQUIRE_GPU();
  device_ptr device = make_device(TIDALRT_DEVICE_CUDA, 4096);
  ASSERT_NE(tidalrt_device_memory(device.get()), nullptr);
  EXPECT_EQ(tidalrt_device_memory_bytes(device.get()), 4096u);
  std::vector<uint8_t> in(1000), out(1000, 0);
  std::iota(in.begin(), in.end(), 7);
  ASSERT_STATUS_OK(tidalrt_device_write(device.get(), 96, in.data(), 1000));
  // An overlapping move, then a fill.
  ASSERT_STATUS_OK(tidalrt_device_move(device.get(), 100, 96, 1000));
  ASSERT_STATUS_OK(tidalrt_device_read(device.get(), 100, out.data(), 1000));
  EXPECT_EQ(out, in);
  ASSERT_STATUS_OK(tidalrt_device_fill(device.get(), 100, 0xab, 10));
  ASSERT_STATUS_OK(tidalrt_device_read(device.get(), 100, out.data(), 1000));
  EXPECT_EQ(out[9], 0xab);
  EXPECT_EQ(out[10], in[10]);
  std::string error =
      message_of(tidalrt_device_write(device.get(), 4000, in.data(), 200));
  EXPECT_NE(error.find("tidalrt_device_write"), std::string::npos) << error;
}

TEST(CudaDevice, AnArenaLargerThanTheGpuIsOutOfMemory) {
  TIDALRT_REQUIRE_GPU();
  tidalrt_device_options_t options = {TIDALRT_DEVICE_CUDA, 1ull << 50, 0};
  tidalrt_device_t *device = nullptr;
  tidalrt_status_t status = tidalrt_device_create(&options, &device);
  EXPECT_EQ(tidalrt_status_code(status), TIDALRT_OUT_OF_MEMORY);
  std::string text = message_of(status);
  EXPECT_NE(text.find("bytes free"), std::string::npos) << text;
  EXPECT_EQ(device, nullptr);
  // The failed allocation leaves the GPU usable.
  device_ptr small = make_device(TIDALRT_DEVICE_CUDA, 256);
  EXPECT_NE(small, nullptr);
}

TEST(CudaDevice, ComputeLaunchesRunOnTheCallingThreadAndCountAtEnqueue) {
  TIDALRT_REQUIRE_GPU();
  device_ptr device = make_device(TIDALRT_DEVICE_CUDA, 1024);
  stream_ptr compute = make_stream(device.get(), TIDALRT_STREAM_COMPUTE);
  std::thread::id ran_on;
  auto work = [](void *arg) -> tidalrt_status_t {
    *static_cast<std::thread::id *>(arg) = std::this_thread::get_id();
    return nullptr;
  };
  tidalrt_range_t write = {512, 256};
  ASSERT_STATUS_OK(tidalrt_stream_launch(compute.get(), work, &ran_on, nullptr,
                                         0, &write, 1));
  EXPECT_EQ(ran_on, std::this_thread::get_id());
  ASSERT_STATUS_OK(tidalrt_stream_synchronize(compute.get()));
  tidalrt_device_stats_t stats;
  tidalrt_device_stats(device.get(), &stats);
  EXPECT_EQ(stats.launches, 1u);
  EXPECT_EQ(stats.peak_device_bytes, 768u);
}

TEST(CudaDevice, AFailedLaunchFailsItsStreamAndIsReportedOnce) {
  TIDALRT_REQUIRE_GPU();
  device_ptr device = make_device(TIDALRT_DEVICE_CUDA, 1024);
  stream_ptr compute = make_stream(device.get(), TIDALRT_STREAM_COMPUTE);
  auto failing = [](void *) -> tidalrt_status_t {
    return tidalrt_status_make(TIDALRT_INTERNAL, "injected");
  };
  int later = 0;
  auto counting = [](void *arg) -> tidalrt_status_t {
    ++*static_cast<int *>(arg);
    return nullptr;
  };
  ASSERT_STATUS_OK(tidalrt_stream_launch(compute.get(), failing, nullptr,
                                         nullptr, 0, nullptr, 0));
  ASSERT_STATUS_OK(tidalrt_stream_launch(compute.get(), counting, &later,
                                         nullptr, 0, nullptr, 0));
  EXPECT_EQ(later, 0) << "a failed stream skips later work";
  std::string text = message_of(tidalrt_stream_synchronize(compute.get()));
  EXPECT_EQ(text, "stream 0 (compute), launch #1: injected");
  EXPECT_EQ(message_of(tidalrt_device_synchronize(device.get())), text);
}

// A host stream runs its work on the CPU in stream order, and events order
// it with copies: the copy to the device waits for the host work that fills
// its source, and the host work waits for the copy that fills its input.
TEST(CudaDevice, HostStreamsAreOrderedWithCopiesByEvents) {
  TIDALRT_REQUIRE_GPU();
  device_ptr device = make_device(TIDALRT_DEVICE_CUDA, 4096);
  stream_ptr host = make_stream(device.get(), TIDALRT_STREAM_HOST);
  stream_ptr to_device =
      make_stream(device.get(), TIDALRT_STREAM_COPY_TO_DEVICE);
  stream_ptr to_host = make_stream(device.get(), TIDALRT_STREAM_COPY_TO_HOST);
  event_ptr filled = make_event(device.get());
  event_ptr back = make_event(device.get());
  struct buffers {
    std::vector<float> source = std::vector<float>(256, 0.0f);
    std::vector<float> result = std::vector<float>(256, 0.0f);
    float sum = 0;
    std::thread::id ran_on;
  } b;
  auto fill = [](void *arg) -> tidalrt_status_t {
    auto *b = static_cast<buffers *>(arg);
    // Slow enough that an unordered copy would see zeros.
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    for (size_t i = 0; i < b->source.size(); ++i)
      b->source[i] = float(i) + 0.5f;
    b->ran_on = std::this_thread::get_id();
    return nullptr;
  };
  auto total = [](void *arg) -> tidalrt_status_t {
    auto *b = static_cast<buffers *>(arg);
    for (float v : b->result)
      b->sum += v;
    return nullptr;
  };
  // Pinned, as programs pin their host arena: CUDA reads pageable memory
  // of an asynchronous copy to the device when the copy is enqueued, not
  // in stream order (seen on an H100: the copy saw the zeros).
  ASSERT_EQ(cudaHostRegister(b.source.data(), 1024, cudaHostRegisterDefault),
            cudaSuccess);
  ASSERT_EQ(cudaHostRegister(b.result.data(), 1024, cudaHostRegisterDefault),
            cudaSuccess);
  ASSERT_STATUS_OK(
      tidalrt_stream_launch(host.get(), fill, &b, nullptr, 0, nullptr, 0));
  ASSERT_STATUS_OK(tidalrt_event_record(filled.get(), host.get()));
  ASSERT_STATUS_OK(tidalrt_stream_wait_event(to_device.get(), filled.get()));
  ASSERT_STATUS_OK(
      tidalrt_stream_copy(to_device.get(), b.source.data(), 1024, 1024));
  ASSERT_STATUS_OK(tidalrt_event_record(back.get(), to_device.get()));
  ASSERT_STATUS_OK(tidalrt_stream_wait_event(to_host.get(), back.get()));
  ASSERT_STATUS_OK(
      tidalrt_stream_copy(to_host.get(), b.result.data(), 1024, 1024));
  event_ptr copied = make_event(device.get());
  ASSERT_STATUS_OK(tidalrt_event_record(copied.get(), to_host.get()));
  ASSERT_STATUS_OK(tidalrt_stream_wait_event(host.get(), copied.get()));
  ASSERT_STATUS_OK(
      tidalrt_stream_launch(host.get(), total, &b, nullptr, 0, nullptr, 0));
  ASSERT_STATUS_OK(tidalrt_device_synchronize(device.get()));
  EXPECT_NE(b.ran_on, std::this_thread::get_id());
  EXPECT_EQ(b.result, b.source);
  EXPECT_EQ(b.sum, 256.0f * 255.0f / 2 + 128.0f);
  tidalrt_device_stats_t stats;
  tidalrt_device_stats(device.get(), &stats);
  EXPECT_EQ(stats.bytes_to_device, 1024u);
  EXPECT_EQ(stats.bytes_to_host, 1024u);
  EXPECT_EQ(stats.copies, 2u);
  EXPECT_GT(stats.copy_seconds, 0.0) << "copies are timed on the GPU";
  cudaHostUnregister(b.source.data());
  cudaHostUnregister(b.result.data());
}

TEST(CudaDevice, AFailedHostLaunchIsReportedWithItsStream) {
  TIDALRT_REQUIRE_GPU();
  device_ptr device = make_device(TIDALRT_DEVICE_CUDA, 256);
  stream_ptr host = make_stream(device.get(), TIDALRT_STREAM_HOST);
  std::atomic<int> later{0};
  auto failing = [](void *) -> tidalrt_status_t {
    return tidalrt_status_make(TIDALRT_INTERNAL, "host kernel failed");
  };
  auto counting = [](void *arg) -> tidalrt_status_t {
    ++*static_cast<std::atomic<int> *>(arg);
    return nullptr;
  };
  ASSERT_STATUS_OK(tidalrt_stream_launch(host.get(), failing, nullptr, nullptr,
                                         0, nullptr, 0));
  ASSERT_STATUS_OK(tidalrt_stream_launch(host.get(), counting, &later, nullptr,
                                         0, nullptr, 0));
  std::string text = message_of(tidalrt_stream_synchronize(host.get()));
  EXPECT_EQ(text, "stream 0 (host): host kernel failed");
  EXPECT_EQ(later.load(), 0);
  // Sticky: reported again.
  EXPECT_EQ(message_of(tidalrt_stream_synchronize(host.get())), text);
}

TEST(CudaDevice, EventsQueryAndSynchronize) {
  TIDALRT_REQUIRE_GPU();
  device_ptr device = make_device(TIDALRT_DEVICE_CUDA, 1 << 20);
  stream_ptr copy = make_stream(device.get(), TIDALRT_STREAM_COPY_TO_HOST);
  event_ptr event = make_event(device.get());
  EXPECT_EQ(tidalrt_event_query(event.get()), 1) << "never recorded";
  std::vector<uint8_t> host(1 << 20);
  ASSERT_STATUS_OK(tidalrt_stream_copy(copy.get(), host.data(), 0, 1 << 20));
  ASSERT_STATUS_OK(tidalrt_event_record(event.get(), copy.get()));
  ASSERT_STATUS_OK(tidalrt_event_synchronize(event.get()));
  EXPECT_EQ(tidalrt_event_query(event.get()), 1);
}

// A generated program's launch of a CPU kernel runs its CUDA twin on the
// device's memory: relu over device buffers equals the CPU kernel.
// Device kernels read the program's constants from a device copy, made once
// per attached device (a host pointer faults on the GPU).
TEST(CudaDeviceProgram, ConstantsGetOneDeviceCopy) {
  TIDALRT_REQUIRE_GPU();
  device_ptr device = make_device(TIDALRT_DEVICE_CUDA, 256);
  tidalrt_context_options_t options = {1, 0};
  tidalrt_context_t *ctx = nullptr;
  ASSERT_STATUS_OK(tidalrt_context_create(&options, &ctx));
  ASSERT_STATUS_OK(
      tidalrt_context_set_device(ctx, device.get(), nullptr, 0, 0));
  std::vector<uint8_t> image(100);
  std::iota(image.begin(), image.end(), uint8_t(7));
  const uint8_t *first = nullptr, *again = nullptr;
  ASSERT_STATUS_OK(tidalrt_dev_constants(ctx, image.data(), 100, &first));
  ASSERT_NE(first, nullptr);
  EXPECT_NE(first, image.data());
  ASSERT_STATUS_OK(tidalrt_dev_constants(ctx, image.data(), 100, &again));
  EXPECT_EQ(again, first);
  std::vector<uint8_t> back(100);
  ASSERT_EQ(cudaMemcpy(back.data(), first, 100, cudaMemcpyDeviceToHost),
            cudaSuccess);
  EXPECT_EQ(back, image);
  ASSERT_STATUS_OK(tidalrt_context_set_device(ctx, nullptr, nullptr, 0, 0));
  tidalrt_context_free(ctx);
}

TEST(CudaDeviceProgram, LaunchesRunTheCudaTwinOfTheCpuKernel) {
  TIDALRT_REQUIRE_GPU();
  device_ptr device = make_device(TIDALRT_DEVICE_CUDA, 2048);
  tidalrt_context_options_t options = {1, 0};
  tidalrt_context_t *ctx = nullptr;
  ASSERT_STATUS_OK(tidalrt_context_create(&options, &ctx));
  std::vector<uint8_t> host_arena(64);
  ASSERT_STATUS_OK(
      tidalrt_context_set_device(ctx, device.get(), host_arena.data(), 64, 0));
  std::vector<float> x(200), expected(200), y(200);
  for (size_t i = 0; i < x.size(); ++i)
    x[i] = float(i) - 100.5f;
  ASSERT_STATUS_OK(tidalrt_device_write(device.get(), 0, x.data(), 800));
  uint8_t *base = tidalrt_device_memory(device.get());
  void *buffers[2] = {base, base + 1024};
  KernelCall call;
  call.f32({200}, x.data()).f32({200}, expected.data());
  ASSERT_EQ(call.run(tidalrt_k_relu), "");
  std::vector<int64_t> desc = call.descriptor();
  tidalrt_range_t ranges[2] = {{0, 800}, {1024, 800}};
  tidalrt_context_begin_prepare(ctx);
  ASSERT_STATUS_OK(tidalrt_dev_launch(ctx, tidalrt_k_relu, desc.data(), buffers,
                                      2, 0, ranges, 1, 1));
  ASSERT_STATUS_OK(tidalrt_context_end_prepare(ctx));
  ASSERT_STATUS_OK(tidalrt_dev_launch(ctx, tidalrt_k_relu, desc.data(), buffers,
                                      2, 0, ranges, 1, 1));
  ASSERT_STATUS_OK(tidalrt_dev_synchronize(ctx));
  ASSERT_STATUS_OK(tidalrt_device_read(device.get(), 1024, y.data(), 800));
  EXPECT_EQ(y, expected);
  tidalrt_context_free(ctx);
}

} // namespace
