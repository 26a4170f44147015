// device_common_test.cpp - what HOST and SIM devices must both do.
#include "device_test_util.h"

#include <atomic>
#include <cmath>
#include <cstring>
#include <thread>
#include <vector>

namespace {

using namespace tidalrt_test;

class DeviceTest : public ::testing::TestWithParam<tidalrt_device_kind_t> {
protected:
  tidalrt_device_kind_t kind() const { return GetParam(); }
};

INSTANTIATE_TEST_SUITE_P(Kinds, DeviceTest,
                         ::testing::Values(TIDALRT_DEVICE_HOST,
                                           TIDALRT_DEVICE_SIM),
                         [](const auto &info) {
                           return std::string(device_kind_name(info.param));
                         });

TEST_P(DeviceTest, CreateGivesAnAlignedArenaOfExactlyTheBudget) {
  device_ptr device = make_device(kind(), 1000);
  ASSERT_TRUE(device);
  EXPECT_EQ(tidalrt_device_kind(device.get()), kind());
  EXPECT_EQ(tidalrt_device_memory_bytes(device.get()), 1000u);
  uint8_t *memory = tidalrt_device_memory(device.get());
  ASSERT_NE(memory, nullptr);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(memory) % TIDALRT_ARRAY_ALIGNMENT, 0u);
  memset(memory, 0xab, 1000); // all of it is usable
  tidalrt_device_stats_t stats;
  tidalrt_device_stats(device.get(), &stats);
  EXPECT_EQ(stats.peak_device_bytes, 0u);
  EXPECT_EQ(stats.launches, 0u);
  EXPECT_EQ(stats.copies, 0u);
  EXPECT_EQ(stats.copy_seconds, 0.0);
}

TEST_P(DeviceTest, ZeroByteArena) {
  device_ptr device = make_device(kind(), 0);
  ASSERT_TRUE(device);
  EXPECT_NE(tidalrt_device_memory(device.get()), nullptr);
  stream_ptr stream = make_stream(device.get(), TIDALRT_STREAM_COMPUTE);
  work_list works;
  EXPECT_STATUS_OK(works.launch(
      stream.get(), [] { return tidalrt_status_t(nullptr); }, {{0, 0}}));
  status_ptr status(works.launch(
      stream.get(), [] { return tidalrt_status_t(nullptr); }, {{0, 1}}));
  EXPECT_EQ(tidalrt_status_code(status.get()), TIDALRT_INVALID_ARGUMENT);
  EXPECT_STATUS_OK(tidalrt_stream_synchronize(stream.get()));
}

TEST_P(DeviceTest, CreateRejectsBadOptions) {
  tidalrt_device_t *device = reinterpret_cast<tidalrt_device_t *>(1);
  tidalrt_device_options_t options = {kind(), 64, -1.0};
  status_ptr negative(tidalrt_device_create(&options, &device));
  EXPECT_EQ(tidalrt_status_code(negative.get()), TIDALRT_INVALID_ARGUMENT);
  EXPECT_NE(message_of(negative).find("link_gbps"), std::string::npos);
  EXPECT_EQ(device, nullptr);
  options.link_gbps = NAN;
  status_ptr nan(tidalrt_device_create(&options, &device));
  EXPECT_EQ(tidalrt_status_code(nan.get()), TIDALRT_INVALID_ARGUMENT);
  options.link_gbps = 0;
  options.memory_bytes = UINT64_MAX;
  status_ptr huge(tidalrt_device_create(&options, &device));
  EXPECT_EQ(tidalrt_status_code(huge.get()), TIDALRT_OUT_OF_MEMORY);
  EXPECT_EQ(device, nullptr);
  status_ptr null(tidalrt_device_create(nullptr, &device));
  EXPECT_EQ(tidalrt_status_code(null.get()), TIDALRT_INVALID_ARGUMENT);
  tidalrt_device_free(nullptr); // allowed
}

TEST(DeviceCreateTest, CudaIsUnsupportedAndUnknownKindsInvalid) {
  tidalrt_device_t *device = nullptr;
  tidalrt_device_options_t options = {TIDALRT_DEVICE_CUDA, 64, 0};
  status_ptr cuda(tidalrt_device_create(&options, &device));
  EXPECT_EQ(tidalrt_status_code(cuda.get()), TIDALRT_UNSUPPORTED);
  EXPECT_EQ(device, nullptr);
  // As a C caller may: any int in the enum (a C++ cast would be undefined).
  int seven = 7;
  memcpy(&options.kind, &seven, sizeof seven);
  status_ptr unknown(tidalrt_device_create(&options, &device));
  EXPECT_EQ(tidalrt_status_code(unknown.get()), TIDALRT_INVALID_ARGUMENT);
}

TEST_P(DeviceTest, OneStreamRunsItsWorkInOrder) {
  work_list works;
  device_ptr device = make_device(kind(), 64);
  stream_ptr stream = make_stream(device.get(), TIDALRT_STREAM_COMPUTE);
  std::vector<int> order; // touched only by the stream's work, then here
  for (int i = 0; i < 1000; ++i)
    ASSERT_STATUS_OK(works.launch(stream.get(), [&order, i] {
      order.push_back(i);
      return tidalrt_status_t(nullptr);
    }));
  ASSERT_STATUS_OK(tidalrt_stream_synchronize(stream.get()));
  ASSERT_EQ(order.size(), 1000u);
  for (int i = 0; i < 1000; ++i)
    ASSERT_EQ(order[i], i);
  tidalrt_device_stats_t stats;
  tidalrt_device_stats(device.get(), &stats);
  EXPECT_EQ(stats.launches, 1000u);
  EXPECT_EQ(stats.peak_device_bytes, 0u); // no ranges given
}

TEST_P(DeviceTest, BoundsChecksFailFastAndNameTheRange) {
  work_list works;
  device_ptr device = make_device(kind(), 1024);
  stream_ptr compute = make_stream(device.get(), TIDALRT_STREAM_COMPUTE);
  stream_ptr offload = make_stream(device.get(), TIDALRT_STREAM_COPY_TO_HOST);
  stream_ptr prefetch =
      make_stream(device.get(), TIDALRT_STREAM_COPY_TO_DEVICE);
  std::atomic<int> ran{0};
  auto work = [&ran] {
    ++ran;
    return tidalrt_status_t(nullptr);
  };

  status_ptr write(
      works.launch(compute.get(), work, {{0, 16}}, {{0, 8}, {1000, 64}}));
  EXPECT_EQ(tidalrt_status_code(write.get()), TIDALRT_INVALID_ARGUMENT);
  EXPECT_EQ(message_of(write),
            "tidalrt_stream_launch: write range 1 [1000, 1064) (64 bytes at "
            "offset 1000) is outside the device arena of 1024 bytes");

  status_ptr read(works.launch(compute.get(), work, {{0, 1}, {1024, 1}}));
  EXPECT_NE(message_of(read).find("read range 1 [1024, 1025)"),
            std::string::npos)
      << message_of(read);

  // offset + bytes wraps around 2^64.
  status_ptr wraps(works.launch(compute.get(), work, {{UINT64_MAX, 2}}));
  EXPECT_EQ(tidalrt_status_code(wraps.get()), TIDALRT_INVALID_ARGUMENT);
  EXPECT_NE(message_of(wraps).find("2 bytes at offset 18446744073709551615"),
            std::string::npos)
      << message_of(wraps);

  std::vector<uint8_t> host(2048);
  status_ptr copy_out(tidalrt_stream_copy(offload.get(), host.data(), 1, 1024));
  EXPECT_EQ(tidalrt_status_code(copy_out.get()), TIDALRT_INVALID_ARGUMENT);
  EXPECT_NE(message_of(copy_out).find("tidalrt_stream_copy: source range "
                                      "[1, 1025)"),
            std::string::npos)
      << message_of(copy_out);
  status_ptr copy_in(
      tidalrt_stream_copy(prefetch.get(), host.data(), 2000, 16));
  EXPECT_NE(message_of(copy_in).find("destination range [2000, 2016)"),
            std::string::npos)
      << message_of(copy_in);

  // Nothing was enqueued and no stream failed: edge ranges still work.
  EXPECT_STATUS_OK(
      works.launch(compute.get(), work, {{0, 1024}, {1024, 0}}, {{1023, 1}}));
  EXPECT_STATUS_OK(tidalrt_stream_copy(offload.get(), host.data(), 0, 1024));
  EXPECT_STATUS_OK(tidalrt_stream_copy(prefetch.get(), host.data(), 1024, 0));
  EXPECT_STATUS_OK(tidalrt_device_synchronize(device.get()));
  EXPECT_EQ(ran.load(), 1);
}

TEST_P(DeviceTest, StreamKindsAndArgumentsAreChecked) {
  work_list works;
  device_ptr device = make_device(kind(), 64);
  device_ptr other = make_device(kind(), 64);
  stream_ptr compute = make_stream(device.get(), TIDALRT_STREAM_COMPUTE);
  stream_ptr offload = make_stream(device.get(), TIDALRT_STREAM_COPY_TO_HOST);
  uint8_t host[64];
  status_ptr launch_on_copy(
      works.launch(offload.get(), [] { return tidalrt_status_t(nullptr); }));
  EXPECT_EQ(tidalrt_status_code(launch_on_copy.get()),
            TIDALRT_INVALID_ARGUMENT);
  EXPECT_EQ(message_of(launch_on_copy),
            "tidalrt_stream_launch: stream 1 (copy to host) is a copy stream; "
            "launches need a compute or host stream");
  status_ptr copy_on_compute(tidalrt_stream_copy(compute.get(), host, 0, 8));
  EXPECT_EQ(message_of(copy_on_compute),
            "tidalrt_stream_copy: stream 0 (compute) is not a copy stream");
  status_ptr null_host(tidalrt_stream_copy(offload.get(), nullptr, 0, 8));
  EXPECT_EQ(tidalrt_status_code(null_host.get()), TIDALRT_INVALID_ARGUMENT);
  status_ptr null_fn(tidalrt_stream_launch(compute.get(), nullptr, nullptr,
                                           nullptr, 0, nullptr, 0));
  EXPECT_EQ(tidalrt_status_code(null_fn.get()), TIDALRT_INVALID_ARGUMENT);
  status_ptr null_list(tidalrt_stream_launch(
      compute.get(), [](void *) { return tidalrt_status_t(nullptr); }, nullptr,
      nullptr, 1, nullptr, 0));
  EXPECT_EQ(tidalrt_status_code(null_list.get()), TIDALRT_INVALID_ARGUMENT);
  tidalrt_stream_t *stream = reinterpret_cast<tidalrt_stream_t *>(1);
  status_ptr bad_kind(tidalrt_stream_create(
      device.get(), static_cast<tidalrt_stream_kind_t>(4), &stream));
  EXPECT_EQ(tidalrt_status_code(bad_kind.get()), TIDALRT_INVALID_ARGUMENT);
  EXPECT_EQ(stream, nullptr);

  event_ptr foreign = make_event(other.get());
  status_ptr record(tidalrt_event_record(foreign.get(), compute.get()));
  EXPECT_EQ(tidalrt_status_code(record.get()), TIDALRT_INVALID_ARGUMENT);
  status_ptr wait(tidalrt_stream_wait_event(compute.get(), foreign.get()));
  EXPECT_EQ(tidalrt_status_code(wait.get()), TIDALRT_INVALID_ARGUMENT);
  tidalrt_stream_free(nullptr); // allowed
  tidalrt_event_free(nullptr);  // allowed
}

TEST_P(DeviceTest, PeakIsTheHighestByteTouched) {
  work_list works;
  device_ptr device = make_device(kind(), 4096);
  stream_ptr compute = make_stream(device.get(), TIDALRT_STREAM_COMPUTE);
  stream_ptr offload = make_stream(device.get(), TIDALRT_STREAM_COPY_TO_HOST);
  auto nothing = [] { return tidalrt_status_t(nullptr); };
  std::vector<uint8_t> host(4096);

  ASSERT_STATUS_OK(works.launch(compute.get(), nothing, {{0, 100}}));
  ASSERT_STATUS_OK(
      works.launch(compute.get(), nothing, {{50, 10}}, {{200, 100}}));
  ASSERT_STATUS_OK(works.launch(compute.get(), nothing, {}, {{4000, 0}}));
  ASSERT_STATUS_OK(tidalrt_device_synchronize(device.get()));
  tidalrt_device_stats_t stats;
  tidalrt_device_stats(device.get(), &stats);
  EXPECT_EQ(stats.peak_device_bytes, 300u); // empty ranges do not count
  EXPECT_EQ(stats.launches, 3u);

  ASSERT_STATUS_OK(tidalrt_stream_copy(offload.get(), host.data(), 1000, 24));
  ASSERT_STATUS_OK(tidalrt_stream_synchronize(offload.get()));
  tidalrt_device_stats(device.get(), &stats);
  EXPECT_EQ(stats.peak_device_bytes, 1024u);

  tidalrt_device_reset_stats(device.get());
  tidalrt_device_stats(device.get(), &stats);
  EXPECT_EQ(stats.peak_device_bytes, 0u);
  EXPECT_EQ(stats.launches, 0u);
  EXPECT_EQ(stats.copies, 0u);
  EXPECT_EQ(stats.bytes_to_host, 0u);
  ASSERT_STATUS_OK(works.launch(compute.get(), nothing, {{0, 10}}));
  ASSERT_STATUS_OK(tidalrt_stream_synchronize(compute.get()));
  tidalrt_device_stats(device.get(), &stats);
  EXPECT_EQ(stats.peak_device_bytes, 10u);
  EXPECT_EQ(stats.launches, 1u);
}

TEST_P(DeviceTest, CopiesMoveTheBytesAndAreCounted) {
  constexpr size_t n = 100000;
  work_list works;
  device_ptr device = make_device(kind(), n + 64);
  stream_ptr compute = make_stream(device.get(), TIDALRT_STREAM_COMPUTE);
  stream_ptr offload = make_stream(device.get(), TIDALRT_STREAM_COPY_TO_HOST);
  stream_ptr prefetch =
      make_stream(device.get(), TIDALRT_STREAM_COPY_TO_DEVICE);
  uint8_t *memory = tidalrt_device_memory(device.get());
  std::vector<uint8_t> in(n), out(n);
  for (size_t i = 0; i < n; ++i)
    in[i] = static_cast<uint8_t>(i * 7 + 3);

  // host -> device [64, 64 + n), +1 on the device, device -> host.
  event_ptr copied = make_event(device.get());
  event_ptr added = make_event(device.get());
  ASSERT_STATUS_OK(tidalrt_stream_copy(prefetch.get(), in.data(), 64, n));
  ASSERT_STATUS_OK(tidalrt_event_record(copied.get(), prefetch.get()));
  ASSERT_STATUS_OK(tidalrt_stream_wait_event(compute.get(), copied.get()));
  ASSERT_STATUS_OK(works.launch(compute.get(),
                                [&] {
                                  for (size_t i = 0; i < n; ++i)
                                    ++memory[64 + i];
                                  return tidalrt_status_t(nullptr);
                                },
                                {{64, n}}, {{64, n}}));
  ASSERT_STATUS_OK(tidalrt_event_record(added.get(), compute.get()));
  ASSERT_STATUS_OK(tidalrt_stream_wait_event(offload.get(), added.get()));
  ASSERT_STATUS_OK(tidalrt_stream_copy(offload.get(), out.data(), 64, n));
  ASSERT_STATUS_OK(tidalrt_stream_synchronize(offload.get()));
  for (size_t i = 0; i < n; ++i)
    ASSERT_EQ(out[i], static_cast<uint8_t>(in[i] + 1)) << i;

  tidalrt_device_stats_t stats;
  tidalrt_device_stats(device.get(), &stats);
  EXPECT_EQ(stats.bytes_to_device, n);
  EXPECT_EQ(stats.bytes_to_host, n);
  EXPECT_EQ(stats.copies, 2u);
  EXPECT_EQ(stats.launches, 1u);
  EXPECT_EQ(stats.peak_device_bytes, n + 64);
  EXPECT_GE(stats.copy_seconds, 0.0);
}

// The synchronous transfers of drivers (0.6): memcpy, memmove and memset
// on the arena on HOST and SIM, bounds-checked, not counted in the stats.
TEST_P(DeviceTest, TransfersRoundTrip) {
  device_ptr device = make_device(kind(), 1024);
  uint8_t *memory = tidalrt_device_memory(device.get());
  std::vector<uint8_t> in(300), out(300, 0xee);
  for (size_t i = 0; i < in.size(); ++i)
    in[i] = static_cast<uint8_t>(i * 13 + 5);
  memset(memory, 0, 1024);
  // Up to the last byte of the arena.
  ASSERT_STATUS_OK(tidalrt_device_write(device.get(), 724, in.data(), 300));
  EXPECT_EQ(memcmp(memory + 724, in.data(), 300), 0);
  EXPECT_EQ(memory[723], 0);
  ASSERT_STATUS_OK(tidalrt_device_read(device.get(), 724, out.data(), 300));
  EXPECT_EQ(out, in);
  // A part.
  std::vector<uint8_t> part(24, 0);
  ASSERT_STATUS_OK(tidalrt_device_read(device.get(), 1000, part.data(), 24));
  EXPECT_EQ(memcmp(part.data(), in.data() + 300 - 24, 24), 0);
  ASSERT_STATUS_OK(tidalrt_device_read(device.get(), 0, part.data(), 24));
  EXPECT_EQ(part, std::vector<uint8_t>(24, 0));
  // Empty transfers, even at the end of the arena or with a NULL host.
  EXPECT_STATUS_OK(tidalrt_device_write(device.get(), 1024, nullptr, 0));
  EXPECT_STATUS_OK(tidalrt_device_read(device.get(), 1024, nullptr, 0));
  EXPECT_STATUS_OK(tidalrt_device_move(device.get(), 1024, 0, 0));
  EXPECT_STATUS_OK(tidalrt_device_fill(device.get(), 1024, 1, 0));
  tidalrt_device_stats_t stats;
  tidalrt_device_stats(device.get(), &stats);
  EXPECT_EQ(stats.copies, 0u);
  EXPECT_EQ(stats.bytes_to_device, 0u);
  EXPECT_EQ(stats.bytes_to_host, 0u);
  EXPECT_EQ(stats.peak_device_bytes, 0u);
}

TEST_P(DeviceTest, MoveHandlesOverlapAndFillSetsBytes) {
  device_ptr device = make_device(kind(), 256);
  std::vector<uint8_t> start(256), expected, got(256);
  for (size_t i = 0; i < start.size(); ++i)
    start[i] = static_cast<uint8_t>(i);
  ASSERT_STATUS_OK(tidalrt_device_write(device.get(), 0, start.data(), 256));
  expected = start;
  // Forward (dst above src) and backward overlapping moves: memmove.
  ASSERT_STATUS_OK(tidalrt_device_move(device.get(), 10, 0, 100));
  memmove(expected.data() + 10, expected.data(), 100);
  ASSERT_STATUS_OK(tidalrt_device_move(device.get(), 150, 160, 90));
  memmove(expected.data() + 150, expected.data() + 160, 90);
  ASSERT_STATUS_OK(tidalrt_device_read(device.get(), 0, got.data(), 256));
  EXPECT_EQ(got, expected);
  // A move onto itself changes nothing.
  ASSERT_STATUS_OK(tidalrt_device_move(device.get(), 5, 5, 200));
  ASSERT_STATUS_OK(tidalrt_device_read(device.get(), 0, got.data(), 256));
  EXPECT_EQ(got, expected);
  // Fill uses the low byte of the value, as memset does.
  ASSERT_STATUS_OK(tidalrt_device_fill(device.get(), 64, 0x1a7, 32));
  memset(expected.data() + 64, 0xa7, 32);
  ASSERT_STATUS_OK(tidalrt_device_fill(device.get(), 0, 0, 8));
  memset(expected.data(), 0, 8);
  ASSERT_STATUS_OK(tidalrt_device_read(device.get(), 0, got.data(), 256));
  EXPECT_EQ(got, expected);
}

TEST_P(DeviceTest, TransferErrorsNameTheCall) {
  device_ptr device = make_device(kind(), 128);
  uint8_t *memory = tidalrt_device_memory(device.get());
  memset(memory, 0x55, 128);
  uint8_t buffer[16] = {0};
  auto expect_error = [](tidalrt_status_t status, const std::string &message) {
    status_ptr owned(status);
    EXPECT_EQ(tidalrt_status_code(owned.get()), TIDALRT_INVALID_ARGUMENT)
        << message;
    EXPECT_EQ(message_of(owned), message);
  };
  expect_error(tidalrt_device_write(device.get(), 120, buffer, 16),
               "tidalrt_device_write: range [120, 136) (16 bytes at offset "
               "120) is outside the device arena of 128 bytes");
  expect_error(tidalrt_device_read(device.get(), 129, buffer, 0),
               "tidalrt_device_read: range [129, 129) (0 bytes at offset 129) "
               "is outside the device arena of 128 bytes");
  expect_error(tidalrt_device_move(device.get(), 0, 113, 16),
               "tidalrt_device_move: source range [113, 129) (16 bytes at "
               "offset 113) is outside the device arena of 128 bytes");
  expect_error(tidalrt_device_move(device.get(), 113, 0, 16),
               "tidalrt_device_move: range [113, 129) (16 bytes at offset "
               "113) is outside the device arena of 128 bytes");
  expect_error(tidalrt_device_fill(device.get(), UINT64_MAX, 0, 2),
               "tidalrt_device_fill: range (2 bytes at offset "
               "18446744073709551615) is outside the device arena of 128 "
               "bytes");
  expect_error(tidalrt_device_write(device.get(), 0, nullptr, 8),
               "tidalrt_device_write: NULL host pointer for 8 bytes");
  expect_error(tidalrt_device_read(device.get(), 0, nullptr, 8),
               "tidalrt_device_read: NULL host pointer for 8 bytes");
  expect_error(tidalrt_device_read(nullptr, 0, buffer, 8),
               "tidalrt_device_read: NULL device");
  expect_error(tidalrt_device_fill(nullptr, 0, 0, 8),
               "tidalrt_device_fill: NULL device");
  // A failed transfer touches nothing.
  for (int i = 0; i < 128; ++i)
    ASSERT_EQ(memory[i], 0x55) << i;
  for (uint8_t byte : buffer)
    EXPECT_EQ(byte, 0);
}

// The planner's pattern, many times over without a host synchronisation:
// a producer kernel writes tensor A; it is offloaded to host memory after
// the producer (event `produced`); its device bytes are reused by another
// kernel once the offload is done (`offloaded`); it is prefetched back after
// the reuse (`reused`); a consumer kernel reads it after the prefetch
// (`prefetched`). Every wait is needed: dropping any one is a race.
TEST_P(DeviceTest, OffloadAndPrefetchKeepTheDataOverManyIterations) {
  constexpr uint64_t n = 4096;
  constexpr int iterations = 300;
  work_list works;
  device_ptr device = make_device(kind(), n);
  stream_ptr compute = make_stream(device.get(), TIDALRT_STREAM_COMPUTE);
  stream_ptr offload = make_stream(device.get(), TIDALRT_STREAM_COPY_TO_HOST);
  stream_ptr prefetch =
      make_stream(device.get(), TIDALRT_STREAM_COPY_TO_DEVICE);
  event_ptr produced = make_event(device.get());
  event_ptr offloaded = make_event(device.get());
  event_ptr reused = make_event(device.get());
  event_ptr prefetched = make_event(device.get());
  uint8_t *a = tidalrt_device_memory(device.get());
  std::vector<uint8_t> home(n); // A's host copy, reused every iteration
  std::vector<int> bad(iterations, -1);

  for (int it = 0; it < iterations; ++it) {
    uint8_t value = static_cast<uint8_t>(it * 31 + 1);
    ASSERT_STATUS_OK(works.launch(
        compute.get(),
        [=] {
          if (it % 50 == 7) // let the copy streams fall behind sometimes
            std::this_thread::sleep_for(std::chrono::milliseconds(2));
          memset(a, value, n);
          return tidalrt_status_t(nullptr);
        },
        {}, {{0, n}}));
    ASSERT_STATUS_OK(tidalrt_event_record(produced.get(), compute.get()));
    ASSERT_STATUS_OK(tidalrt_stream_wait_event(offload.get(), produced.get()));
    ASSERT_STATUS_OK(tidalrt_stream_copy(offload.get(), home.data(), 0, n));
    ASSERT_STATUS_OK(tidalrt_event_record(offloaded.get(), offload.get()));
    ASSERT_STATUS_OK(tidalrt_stream_wait_event(compute.get(), offloaded.get()));
    ASSERT_STATUS_OK(works.launch(
        compute.get(),
        [=] {
          memset(a, 0xee, n); // another tensor lives here meanwhile
          return tidalrt_status_t(nullptr);
        },
        {}, {{0, n}}));
    ASSERT_STATUS_OK(tidalrt_event_record(reused.get(), compute.get()));
    ASSERT_STATUS_OK(tidalrt_stream_wait_event(prefetch.get(), reused.get()));
    ASSERT_STATUS_OK(tidalrt_stream_copy(prefetch.get(), home.data(), 0, n));
    ASSERT_STATUS_OK(tidalrt_event_record(prefetched.get(), prefetch.get()));
    ASSERT_STATUS_OK(
        tidalrt_stream_wait_event(compute.get(), prefetched.get()));
    ASSERT_STATUS_OK(works.launch(compute.get(),
                                  [=, &bad] {
                                    int wrong = 0;
                                    for (uint64_t i = 0; i < n; ++i)
                                      wrong += a[i] != value;
                                    bad[it] = wrong;
                                    return tidalrt_status_t(nullptr);
                                  },
                                  {{0, n}}));
  }
  ASSERT_STATUS_OK(tidalrt_device_synchronize(device.get()));
  for (int it = 0; it < iterations; ++it)
    ASSERT_EQ(bad[it], 0) << "iteration " << it;
  tidalrt_device_stats_t stats;
  tidalrt_device_stats(device.get(), &stats);
  EXPECT_EQ(stats.bytes_to_host, n * iterations);
  EXPECT_EQ(stats.bytes_to_device, n * iterations);
  EXPECT_EQ(stats.copies, 2u * iterations);
  EXPECT_EQ(stats.launches, 3u * iterations);
  EXPECT_EQ(stats.peak_device_bytes, n);
  EXPECT_EQ(tidalrt_event_query(prefetched.get()), 1);
}

TEST_P(DeviceTest, EventsNeverRecordedAreComplete) {
  work_list works;
  device_ptr device = make_device(kind(), 64);
  stream_ptr compute = make_stream(device.get(), TIDALRT_STREAM_COMPUTE);
  event_ptr event = make_event(device.get());
  EXPECT_EQ(tidalrt_event_query(event.get()), 1);
  EXPECT_STATUS_OK(tidalrt_event_synchronize(event.get()));
  EXPECT_STATUS_OK(tidalrt_stream_wait_event(compute.get(), event.get()));
  bool ran = false;
  ASSERT_STATUS_OK(works.launch(compute.get(), [&ran] {
    ran = true;
    return tidalrt_status_t(nullptr);
  }));
  EXPECT_STATUS_OK(tidalrt_stream_synchronize(compute.get()));
  EXPECT_TRUE(ran);
}

TEST_P(DeviceTest, FailureStopsTheStreamAndIsReportedEveryTime) {
  work_list works;
  device_ptr device = make_device(kind(), 64);
  stream_ptr compute = make_stream(device.get(), TIDALRT_STREAM_COMPUTE);
  event_ptr before = make_event(device.get());
  int ran = 0;
  auto count = [&ran] {
    ++ran;
    return tidalrt_status_t(nullptr);
  };
  ASSERT_STATUS_OK(works.launch(compute.get(), count));
  ASSERT_STATUS_OK(tidalrt_event_record(before.get(), compute.get()));
  // Enqueueing succeeds; the failure shows at synchronisation.
  ASSERT_STATUS_OK(works.launch(compute.get(), [] {
    return tidalrt_status_make(TIDALRT_INTERNAL, "op 12 (conv): boom");
  }));
  ASSERT_STATUS_OK(works.launch(compute.get(), count, {{0, 64}}));
  ASSERT_STATUS_OK(works.launch(compute.get(), count));

  for (int i = 0; i < 2; ++i) {
    status_ptr status(tidalrt_stream_synchronize(compute.get()));
    EXPECT_EQ(tidalrt_status_code(status.get()), TIDALRT_INTERNAL);
    EXPECT_EQ(message_of(status),
              "stream 0 (compute), launch #2: op 12 (conv): boom");
  }
  EXPECT_EQ(ran, 1); // the work after the failure was skipped
  EXPECT_STATUS_OK(tidalrt_event_synchronize(before.get()));
  tidalrt_device_stats_t stats;
  tidalrt_device_stats(device.get(), &stats);
  EXPECT_EQ(stats.launches, 2u); // the failed launch ran
  EXPECT_EQ(stats.peak_device_bytes, 0u);
  status_ptr all(tidalrt_device_synchronize(device.get()));
  EXPECT_EQ(tidalrt_status_code(all.get()), TIDALRT_INTERNAL);
}

// A failure reaches the streams that wait on the failed stream's events,
// and their own later work is skipped too.
TEST_P(DeviceTest, FailurePropagatesThroughEvents) {
  work_list works;
  device_ptr device = make_device(kind(), 64);
  stream_ptr compute = make_stream(device.get(), TIDALRT_STREAM_COMPUTE);
  stream_ptr offload = make_stream(device.get(), TIDALRT_STREAM_COPY_TO_HOST);
  stream_ptr other = make_stream(device.get(), TIDALRT_STREAM_COMPUTE);
  event_ptr event = make_event(device.get());
  std::vector<uint8_t> host(64, 7);
  ASSERT_STATUS_OK(works.launch(compute.get(), [] {
    return tidalrt_status_make(TIDALRT_OUT_OF_MEMORY, "no scratch");
  }));
  ASSERT_STATUS_OK(tidalrt_event_record(event.get(), compute.get()));
  ASSERT_STATUS_OK(tidalrt_stream_wait_event(offload.get(), event.get()));
  ASSERT_STATUS_OK(tidalrt_stream_copy(offload.get(), host.data(), 0, 64));

  status_ptr offload_status(tidalrt_stream_synchronize(offload.get()));
  EXPECT_EQ(tidalrt_status_code(offload_status.get()), TIDALRT_OUT_OF_MEMORY);
  EXPECT_EQ(message_of(offload_status),
            "stream 1 (copy to host): waited on an event whose work failed: "
            "stream 0 (compute), launch #1: no scratch");
  EXPECT_EQ(host, std::vector<uint8_t>(64, 7)); // the copy was skipped
  status_ptr event_status(tidalrt_event_synchronize(event.get()));
  EXPECT_EQ(message_of(event_status),
            "the event's work failed: stream 0 (compute), launch #1: no "
            "scratch");
  EXPECT_EQ(tidalrt_event_query(event.get()), 1);
  // An unrelated stream is unaffected.
  EXPECT_STATUS_OK(
      works.launch(other.get(), [] { return tidalrt_status_t(nullptr); }));
  EXPECT_STATUS_OK(tidalrt_stream_synchronize(other.get()));
  // The device reports the first failed stream in creation order.
  status_ptr all(tidalrt_device_synchronize(device.get()));
  EXPECT_EQ(message_of(all), "stream 0 (compute), launch #1: no scratch");

  tidalrt_device_stats_t stats;
  tidalrt_device_stats(device.get(), &stats);
  EXPECT_EQ(stats.copies, 0u);
  EXPECT_EQ(stats.bytes_to_host, 0u);
}

// Freeing a device with queued work runs the work and stops every thread;
// so does freeing after failures, with streams still waiting on events of
// the failed stream, and with the event handles freed early.
TEST_P(DeviceTest, FreeWithPendingWork) {
  work_list works;
  std::atomic<int> ran{0};
  std::vector<uint8_t> host(1 << 16, 1);
  {
    tidalrt_device_t *device = make_device(kind(), 1 << 16).release();
    tidalrt_stream_t *compute =
        make_stream(device, TIDALRT_STREAM_COMPUTE).release();
    tidalrt_stream_t *prefetch =
        make_stream(device, TIDALRT_STREAM_COPY_TO_DEVICE).release();
    tidalrt_stream_t *offload =
        make_stream(device, TIDALRT_STREAM_COPY_TO_HOST).release();
    tidalrt_event_t *event = make_event(device).release();
    for (int i = 0; i < 50; ++i) {
      ASSERT_STATUS_OK(
          tidalrt_stream_copy(prefetch, host.data(), 0, host.size()));
      ASSERT_STATUS_OK(tidalrt_event_record(event, prefetch));
      ASSERT_STATUS_OK(tidalrt_stream_wait_event(compute, event));
      ASSERT_STATUS_OK(works.launch(compute, [&ran] {
        std::this_thread::sleep_for(std::chrono::microseconds(200));
        ++ran;
        return tidalrt_status_t(nullptr);
      }));
    }
    ASSERT_STATUS_OK(works.launch(compute, [] {
      return tidalrt_status_make(TIDALRT_INTERNAL, "late failure");
    }));
    ASSERT_STATUS_OK(tidalrt_event_record(event, compute));
    ASSERT_STATUS_OK(tidalrt_stream_wait_event(offload, event));
    ASSERT_STATUS_OK(tidalrt_stream_copy(offload, host.data(), 0, 64));
    tidalrt_event_free(event); // queued work keeps what it needs
    tidalrt_device_free(device);
  }
  EXPECT_EQ(ran.load(), 50);

  // Streams freed one by one, each with queued work.
  {
    device_ptr device = make_device(kind(), 64);
    tidalrt_stream_t *compute =
        make_stream(device.get(), TIDALRT_STREAM_COMPUTE).release();
    for (int i = 0; i < 20; ++i)
      ASSERT_STATUS_OK(works.launch(compute, [&ran] {
        ++ran;
        return tidalrt_status_t(nullptr);
      }));
    tidalrt_stream_free(compute);
    EXPECT_EQ(ran.load(), 70);
  }
}

TEST_P(DeviceTest, ReRecordingReplacesTheCapture) {
  work_list works;
  device_ptr device = make_device(kind(), 64);
  stream_ptr first = make_stream(device.get(), TIDALRT_STREAM_COMPUTE);
  stream_ptr second = make_stream(device.get(), TIDALRT_STREAM_COMPUTE);
  event_ptr event = make_event(device.get());
  std::vector<int> log; // ordered by events only
  ASSERT_STATUS_OK(works.launch(first.get(), [&log] {
    log.push_back(1);
    return tidalrt_status_t(nullptr);
  }));
  ASSERT_STATUS_OK(tidalrt_event_record(event.get(), first.get()));
  ASSERT_STATUS_OK(works.launch(first.get(), [&log] {
    log.push_back(2);
    return tidalrt_status_t(nullptr);
  }));
  ASSERT_STATUS_OK(tidalrt_event_record(event.get(), first.get()));
  ASSERT_STATUS_OK(tidalrt_stream_wait_event(second.get(), event.get()));
  ASSERT_STATUS_OK(works.launch(second.get(), [&log] {
    log.push_back(3);
    return tidalrt_status_t(nullptr);
  }));
  ASSERT_STATUS_OK(tidalrt_stream_synchronize(second.get()));
  ASSERT_STATUS_OK(tidalrt_stream_synchronize(first.get()));
  EXPECT_EQ(log, (std::vector<int>{1, 2, 3}));
}

} // namespace
