//===- SimLinkTimes.cpp - what a copy costs the simulated device ----------===//
#include "SimLinkTimes.h"
#include "KernelCall.h"
#include "Support.h"

#include "tidalrt/device.h"
#include "tidalrt/tidalrt.h"

#include <algorithm>
#include <cstdint>
#include <memory>
#include <vector>

using namespace calibrate;

namespace {

struct DeviceDeleter {
  void operator()(tidalrt_device_t *d) const { tidalrt_device_free(d); }
};
struct StreamDeleter {
  void operator()(tidalrt_stream_t *s) const { tidalrt_stream_free(s); }
};
struct EventDeleter {
  void operator()(tidalrt_event_t *e) const { tidalrt_event_free(e); }
};

/// Takes a status: its message (KernelCall.h's consume), or "" for success.
std::string message(tidalrt_status_t status) {
  return status ? consume(status) : std::string();
}

} // namespace

double calibrate::measureSimCopyLatencyUs(double gbps, double seconds,
                                          std::string &error) {
  const uint64_t bytes = 4096;
  tidalrt_device_options_t options = {TIDALRT_DEVICE_SIM, bytes, gbps};
  tidalrt_device_t *rawDevice = nullptr;
  if ((error = message(tidalrt_device_create(&options, &rawDevice))) != "")
    return -1;
  std::unique_ptr<tidalrt_device_t, DeviceDeleter> device(rawDevice);
  tidalrt_stream_t *rawCompute = nullptr, *rawCopy = nullptr;
  tidalrt_event_t *rawReached = nullptr, *rawDone = nullptr;
  error = message(
      tidalrt_stream_create(device.get(), TIDALRT_STREAM_COMPUTE, &rawCompute));
  std::unique_ptr<tidalrt_stream_t, StreamDeleter> compute(rawCompute);
  if (error.empty())
    error = message(tidalrt_stream_create(
        device.get(), TIDALRT_STREAM_COPY_TO_HOST, &rawCopy));
  std::unique_ptr<tidalrt_stream_t, StreamDeleter> copy(rawCopy);
  if (error.empty())
    error = message(tidalrt_event_create(device.get(), &rawReached));
  std::unique_ptr<tidalrt_event_t, EventDeleter> reached(rawReached);
  if (error.empty())
    error = message(tidalrt_event_create(device.get(), &rawDone));
  std::unique_ptr<tidalrt_event_t, EventDeleter> done(rawDone);
  if (!error.empty())
    return -1;
  std::vector<uint8_t> host(bytes);
  // One round trip: the copy starts once the compute stream reaches it, and
  // the compute stream waits for it, as a generated step's offload and wait.
  auto roundTrip = [&]() -> std::string {
    std::string e = message(tidalrt_event_record(reached.get(), compute.get()));
    if (e.empty())
      e = message(tidalrt_stream_wait_event(copy.get(), reached.get()));
    if (e.empty())
      e = message(tidalrt_stream_copy(copy.get(), host.data(), 0, bytes));
    if (e.empty())
      e = message(tidalrt_event_record(done.get(), copy.get()));
    if (e.empty())
      e = message(tidalrt_stream_wait_event(compute.get(), done.get()));
    return e;
  };
  const double copyUs = double(bytes) / (gbps * 1e3);
  // Round trips per batch: about seconds / 5 at an estimated 50 us each.
  const int perBatch = std::max(20, int(seconds / 5 / 50e-6));
  std::vector<double> perTrip;
  for (int batch = 0; batch < 6; ++batch) {
    Clock::time_point start = Clock::now();
    for (int i = 0; i < perBatch; ++i)
      if ((error = roundTrip()) != "")
        return -1;
    if ((error = message(tidalrt_device_synchronize(device.get()))) != "")
      return -1;
    if (batch > 0) // the first warms the threads up
      perTrip.push_back(secondsSince(start) * 1e6 / perBatch);
  }
  std::sort(perTrip.begin(), perTrip.end());
  return std::max(perTrip[perTrip.size() / 2] - copyUs, 0.0);
}
