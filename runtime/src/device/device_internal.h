// device_internal.h - the state behind device, stream and event handles.
//
// One implementation serves HOST and SIM: every piece of work becomes a
// work_item that a stream runs with run_item(). A SIM stream queues items
// for its worker thread; a HOST stream runs each item on the calling thread
// before the enqueueing call returns. So failures, event captures and stats
// behave identically on both, and only the timing differs.
//
// Locks: a worker thread takes its stream's mutex and an event's mutex, one
// at a time. tidalrt_device_synchronize() waits on each stream while holding
// the device's list mutex, which no worker ever takes, so no thread waits in
// a cycle.
#ifndef TIDALRT_DEVICE_DEVICE_INTERNAL_H
#define TIDALRT_DEVICE_DEVICE_INTERNAL_H

#include "backend.h"
#include "shared_link.h"
#include "tidalrt/device.h"

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <cstring>
#include <deque>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

namespace tidalrt_device {

// The completion state of an event. Shared (std::shared_ptr) by the handle
// and by queued work that records or waits on the event, so that
// tidalrt_event_free() may run while such work is pending.
//
// Each tidalrt_event_record() starts a new generation; the record item
// completes it when the stream reaches it. Generations are tracked one by
// one (not as a high-water mark) because an event may be re-recorded on
// another stream, whose work can finish first.
struct event_state {
  std::mutex mutex;
  std::condition_variable changed;
  uint64_t last_generation = 0; // 0: never recorded
  std::set<uint64_t> pending;   // recorded, not reached yet
  std::set<uint64_t> failed;    // reached on a failed stream
  // The failure of the stream that first completed a generation as failed;
  // owned here (the message source for waiters).
  tidalrt_status_t failure = nullptr;

  ~event_state();
};

enum class item_kind { LAUNCH, COPY, RECORD, WAIT };

struct work_item {
  item_kind kind = item_kind::LAUNCH;
  // launch
  tidalrt_work_fn_t fn = nullptr;
  void *arg = nullptr;
  uint64_t number = 0; // the launch's or copy's number on its stream, from 1
  uint64_t end = 0;    // highest end of the item's device ranges
  // copy
  void *host = nullptr;
  uint64_t offset = 0;
  uint64_t bytes = 0;
  // record, wait
  std::shared_ptr<event_state> event;
  uint64_t generation = 0;
};

} // namespace tidalrt_device

struct tidalrt_stream_s {
  tidalrt_device_s *device = nullptr;
  tidalrt_stream_kind_t kind = TIDALRT_STREAM_COMPUTE;
  uint64_t index = 0;     // creation order on the device, names it
  bool queued = false;    // SIM: a worker thread runs the items
  void *native = nullptr; // a backend's stream (CUDA), else NULL

  std::mutex mutex;
  std::condition_variable work_ready; // worker: an item or stop arrived
  std::condition_variable work_done;  // synchronize: `completed` grew
  std::deque<tidalrt_device::work_item> queue;
  uint64_t enqueued = 0;  // items accepted
  uint64_t completed = 0; // items run or skipped
  // The targets (values of `completed`) that synchronising threads wait
  // for: the worker wakes them only once the lowest is reached, not after
  // every item (a wake-up per kernel costs a context switch on a CPU that
  // the kernels' own threads are using).
  std::multiset<uint64_t> sync_targets;
  uint64_t launches = 0; // numbers launches in messages
  uint64_t copies = 0;   // numbers copies in messages
  bool stop = false;
  // The first failure, owned here. Written only by the thread that runs
  // items (under `mutex`), so that thread may read it without the lock.
  tidalrt_status_t failure = nullptr;
  std::thread worker;
};

struct tidalrt_event_s {
  tidalrt_device_s *device = nullptr;
  std::shared_ptr<tidalrt_device::event_state> state; // HOST and SIM
  void *native = nullptr; // a backend's event (CUDA), else NULL
};

struct tidalrt_device_s {
  tidalrt_device_kind_t kind = TIDALRT_DEVICE_HOST;
  uint8_t *memory = nullptr;
  uint64_t memory_bytes = 0;
  double link_gbps = 0;
  // SIM: the switch its link shares with other devices (shared_link.h), or
  // NULL.
  tidalrt_device::shared_link *link_switch = nullptr;
  // Devices of a kind implemented outside the core (CUDA): its functions
  // and its state; NULL for HOST and SIM.
  const tidalrt_device::backend *backend = nullptr;
  void *native = nullptr;

  // The open streams and events (freed with the device), and the next
  // stream number.
  std::mutex mutex;
  std::vector<tidalrt_stream_s *> streams;
  std::vector<tidalrt_event_s *> events;
  uint64_t next_stream_index = 0;

  // Relaxed atomics, not a mutex: stats must not create happens-before
  // edges between streams, which would hide a missing wait from
  // ThreadSanitizer.
  std::atomic<uint64_t> peak_device_bytes{0};
  std::atomic<uint64_t> bytes_to_host{0};
  std::atomic<uint64_t> bytes_to_device{0};
  std::atomic<uint64_t> launches{0};
  std::atomic<uint64_t> copies{0};
  std::atomic<uint64_t> copy_nanoseconds{0};
  std::atomic<uint64_t> compute_wait_nanoseconds{0};
};

namespace tidalrt_device {

// The value of an enum that a C caller filled in. C allows any int there,
// but in C++ loading a value outside the enumerators' range is undefined
// (UBSan's -fsanitize=enum flags it), so the bytes are read as an int.
template <typename Enum> int enum_value(const Enum &value) {
  static_assert(sizeof(Enum) == sizeof(int), "an int-sized C enum");
  int result;
  memcpy(&result, &value, sizeof result);
  return result;
}

// "stream 2 (copy to host)", for messages.
std::string stream_name(const tidalrt_stream_s *stream);

// A new status with the code and message of `status` (NULL for NULL).
tidalrt_status_t copy_status(tidalrt_status_t status);

// INVALID_ARGUMENT naming `what` (e.g. "write range 1") if `range` does not
// lie in the arena; otherwise NULL, and `*end` is raised to its end if the
// range is not empty.
tidalrt_status_t check_range(const tidalrt_device_s *device, const char *call,
                             const char *what, uint64_t offset, uint64_t bytes,
                             uint64_t *end);

// Stats updates from running work.
void note_launch(tidalrt_device_s *device, uint64_t end);
void note_copy(tidalrt_device_s *device, bool to_host, uint64_t end,
               uint64_t bytes, uint64_t nanoseconds);

// Waits for every item enqueued so far, then returns a copy of the stream's
// failure (NULL if none).
tidalrt_status_t synchronize_stream(tidalrt_stream_s *stream);

// Drains the stream, stops its worker and deletes it; the caller has removed
// it from the device's list.
void destroy_stream(tidalrt_stream_s *stream);

} // namespace tidalrt_device

#endif // TIDALRT_DEVICE_DEVICE_INTERNAL_H
