// device_host_test.cpp - the host device: all work runs at once, inline.
#include "device_test_util.h"

#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

namespace {

using namespace tidalrt_test;

TEST(DeviceHostTest, LaunchRunsOnTheCallingThreadBeforeReturning) {
  work_list works;
  device_ptr device = make_device(TIDALRT_DEVICE_HOST, 64);
  stream_ptr stream = make_stream(device.get(), TIDALRT_STREAM_COMPUTE);
  std::thread::id ran_on;
  ASSERT_STATUS_OK(works.launch(stream.get(), [&ran_on] {
    ran_on = std::this_thread::get_id();
    return tidalrt_status_t(nullptr);
  }));
  EXPECT_EQ(ran_on, std::this_thread::get_id());
  tidalrt_device_stats_t stats;
  tidalrt_device_stats(device.get(), &stats);
  EXPECT_EQ(stats.launches, 1u);
}

TEST(DeviceHostTest, CopiesAreDoneWhenTheCallReturns) {
  device_ptr device = make_device(TIDALRT_DEVICE_HOST, 256);
  stream_ptr prefetch =
      make_stream(device.get(), TIDALRT_STREAM_COPY_TO_DEVICE);
  stream_ptr offload = make_stream(device.get(), TIDALRT_STREAM_COPY_TO_HOST);
  std::vector<uint8_t> in(128, 9), out(128, 0);
  ASSERT_STATUS_OK(tidalrt_stream_copy(prefetch.get(), in.data(), 100, 128));
  EXPECT_EQ(memcmp(tidalrt_device_memory(device.get()) + 100, in.data(), 128),
            0);
  ASSERT_STATUS_OK(tidalrt_stream_copy(offload.get(), out.data(), 100, 128));
  EXPECT_EQ(out, in);
}

TEST(DeviceHostTest, EventsCompleteAtOnce) {
  work_list works;
  device_ptr device = make_device(TIDALRT_DEVICE_HOST, 64);
  stream_ptr stream = make_stream(device.get(), TIDALRT_STREAM_COMPUTE);
  event_ptr event = make_event(device.get());
  ASSERT_STATUS_OK(
      works.launch(stream.get(), [] { return tidalrt_status_t(nullptr); }));
  ASSERT_STATUS_OK(tidalrt_event_record(event.get(), stream.get()));
  EXPECT_EQ(tidalrt_event_query(event.get()), 1);
}

// Launch reports only enqueue errors, as on SIM: a failing fn shows at
// synchronisation, even though it has already run.
TEST(DeviceHostTest, FailureShowsAtSynchronisation) {
  work_list works;
  device_ptr device = make_device(TIDALRT_DEVICE_HOST, 64);
  stream_ptr stream = make_stream(device.get(), TIDALRT_STREAM_COMPUTE);
  EXPECT_STATUS_OK(works.launch(stream.get(), [] {
    return tidalrt_status_make(TIDALRT_INVALID_ARGUMENT, "bad shape");
  }));
  status_ptr status(tidalrt_stream_synchronize(stream.get()));
  EXPECT_EQ(message_of(status), "stream 0 (compute), launch #1: bad shape");
}

// The link bandwidth is a SIM setting: HOST ignores the option and the
// environment (but still rejects a malformed option).
TEST(DeviceHostTest, NoThrottle) {
  const char *old = getenv("TIDAL_SIM_LINK_GBPS");
  std::string saved = old ? old : "";
  setenv("TIDAL_SIM_LINK_GBPS", "0.001", 1);
  device_ptr device = make_device(TIDALRT_DEVICE_HOST, 1 << 20, 0.001);
  EXPECT_EQ(tidalrt_device_link_gbps(device.get()), 0.0);
  stream_ptr offload = make_stream(device.get(), TIDALRT_STREAM_COPY_TO_HOST);
  std::vector<uint8_t> out(1 << 20);
  auto start = std::chrono::steady_clock::now();
  ASSERT_STATUS_OK(tidalrt_stream_copy(offload.get(), out.data(), 0, 1 << 20));
  EXPECT_LT(seconds_since(start), 0.5); // 1 s at the ignored 1 MB/s
  if (old)
    setenv("TIDAL_SIM_LINK_GBPS", saved.c_str(), 1);
  else
    unsetenv("TIDAL_SIM_LINK_GBPS");
}

} // namespace
