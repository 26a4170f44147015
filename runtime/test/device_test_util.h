// device_test_util.h - owners and work helpers for the device tests.
#ifndef TIDALRT_TEST_DEVICE_TEST_UTIL_H
#define TIDALRT_TEST_DEVICE_TEST_UTIL_H

#include "test_util.h"

#include "tidalrt/device.h"

#include <chrono>
#include <deque>
#include <functional>
#include <initializer_list>
#include <memory>
#include <string>

namespace tidalrt_test {

struct device_deleter {
  void operator()(tidalrt_device_t *device) const {
    tidalrt_device_free(device);
  }
};
using device_ptr = std::unique_ptr<tidalrt_device_t, device_deleter>;

struct stream_deleter {
  void operator()(tidalrt_stream_t *stream) const {
    tidalrt_stream_free(stream);
  }
};
using stream_ptr = std::unique_ptr<tidalrt_stream_t, stream_deleter>;

struct event_deleter {
  void operator()(tidalrt_event_t *event) const { tidalrt_event_free(event); }
};
using event_ptr = std::unique_ptr<tidalrt_event_t, event_deleter>;

inline const char *device_kind_name(tidalrt_device_kind_t kind) {
  return kind == TIDALRT_DEVICE_SIM ? "Sim" : "Host";
}

// Creates a device or fails the test.
inline device_ptr make_device(tidalrt_device_kind_t kind, uint64_t bytes,
                              double link_gbps = 0) {
  tidalrt_device_options_t options = {kind, bytes, link_gbps};
  tidalrt_device_t *device = nullptr;
  EXPECT_STATUS_OK(tidalrt_device_create(&options, &device));
  return device_ptr(device);
}

inline stream_ptr make_stream(tidalrt_device_t *device,
                              tidalrt_stream_kind_t kind) {
  tidalrt_stream_t *stream = nullptr;
  EXPECT_STATUS_OK(tidalrt_stream_create(device, kind, &stream));
  return stream_ptr(stream);
}

inline event_ptr make_event(tidalrt_device_t *device) {
  tidalrt_event_t *event = nullptr;
  EXPECT_STATUS_OK(tidalrt_event_create(device, &event));
  return event_ptr(event);
}

// Keeps launched std::functions alive (at stable addresses) until the
// holder is destroyed, which must be after the work has run.
class work_list {
public:
  using work = std::function<tidalrt_status_t()>;

  // Launches `fn` on `stream` touching `reads` and `writes`.
  tidalrt_status_t launch(tidalrt_stream_t *stream, work fn,
                          std::initializer_list<tidalrt_range_t> reads = {},
                          std::initializer_list<tidalrt_range_t> writes = {}) {
    works.push_back(std::move(fn));
    return tidalrt_stream_launch(stream, &trampoline, &works.back(),
                                 reads.begin(), reads.size(), writes.begin(),
                                 writes.size());
  }

private:
  static tidalrt_status_t trampoline(void *arg) {
    return (*static_cast<work *>(arg))();
  }
  std::deque<work> works;
};

// Seconds since `start`.
inline double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
      .count();
}

inline std::string message_of(const status_ptr &status) {
  return tidalrt_status_message(status.get());
}

// The message of `status`, which it frees; "" for success (NULL).
inline std::string message_of(tidalrt_status_t status) {
  std::string text = status ? tidalrt_status_message(status) : "";
  tidalrt_status_free(status);
  return text;
}

} // namespace tidalrt_test

#endif // TIDALRT_TEST_DEVICE_TEST_UTIL_H
