// stream.cpp - streams: ordered work, run inline (HOST) or by a thread (SIM).
#include "device_internal.h"

#include <chrono>
#include <cstring>
#include <new>
#include <omp.h>
#include <string>

#ifdef __linux__
#include <sys/prctl.h>
#endif

using namespace tidalrt_device;

namespace {

using clock_type = std::chrono::steady_clock;

const char *stream_kind_name(tidalrt_stream_kind_t kind) {
  switch (kind) {
  case TIDALRT_STREAM_COMPUTE:
    return "compute";
  case TIDALRT_STREAM_COPY_TO_HOST:
    return "copy to host";
  case TIDALRT_STREAM_COPY_TO_DEVICE:
    return "copy to device";
  case TIDALRT_STREAM_HOST:
    return "host";
  }
  return "unknown";
}

// Records the stream's first failure; takes ownership of `status`. Called
// only by the thread that runs the stream's items.
void fail(tidalrt_stream_s *stream, tidalrt_status_t status) {
  std::lock_guard<std::mutex> lock(stream->mutex);
  if (stream->failure)
    tidalrt_status_free(status);
  else
    stream->failure = status;
}

void run_launch(tidalrt_stream_s *stream, const work_item &item) {
  tidalrt_status_t status = item.fn(item.arg);
  note_launch(stream->device, item.end);
  if (status)
    fail(stream, tidalrt_status_annotate(status, "%s, launch #%llu",
                                         stream_name(stream).c_str(),
                                         (unsigned long long)item.number));
}

void run_copy(tidalrt_stream_s *stream, const work_item &item) {
  auto start = clock_type::now();
  uint8_t *device_bytes = stream->device->memory + item.offset;
  bool to_host = stream->kind == TIDALRT_STREAM_COPY_TO_HOST;
  if (item.bytes) {
    if (to_host)
      memcpy(item.host, device_bytes, item.bytes);
    else
      memcpy(device_bytes, item.host, item.bytes);
  }
  // The throttle: the copy lasts at least bytes / bandwidth. Each stream
  // runs at the full link rate (concurrent copies do not share it); behind
  // a switch (shared_link.h) it also waits its turn there.
  double gbps = stream->device->link_gbps;
  auto end = start;
  if (gbps > 0 && item.bytes) {
    auto duration =
        std::chrono::duration<double>((double)item.bytes / (gbps * 1e9));
    end = start + std::chrono::ceil<clock_type::duration>(duration);
  }
  if (stream->device->link_switch && item.bytes) {
    int64_t from = std::chrono::duration_cast<std::chrono::nanoseconds>(
                       start.time_since_epoch())
                       .count();
    int64_t done = tidalrt_device::reserve_shared_link(
        stream->device->link_switch, item.bytes, from, to_host);
    end = std::max(end, clock_type::time_point(
                            std::chrono::duration_cast<clock_type::duration>(
                                std::chrono::nanoseconds(done))));
  }
  if (end > start)
    std::this_thread::sleep_until(end);
  auto elapsed = std::chrono::duration_cast<std::chrono::nanoseconds>(
      clock_type::now() - start);
  note_copy(stream->device, to_host, item.end, item.bytes,
            (uint64_t)elapsed.count());
}

// Completes the captured generation, as failed if the stream has failed.
void run_record(tidalrt_stream_s *stream, const work_item &item) {
  event_state &event = *item.event;
  tidalrt_status_t failure =
      stream->failure ? copy_status(stream->failure) : nullptr;
  {
    std::lock_guard<std::mutex> lock(event.mutex);
    event.pending.erase(item.generation);
    if (failure) {
      event.failed.insert(item.generation);
      if (!event.failure) {
        event.failure = failure;
        failure = nullptr;
      }
    }
  }
  tidalrt_status_free(failure);
  event.changed.notify_all();
}

// Blocks this stream's thread until the captured generation completes. On
// HOST the generation is always complete already (every record ran inline).
void run_wait(tidalrt_stream_s *stream, const work_item &item) {
  event_state &event = *item.event;
  tidalrt_status_t failure = nullptr;
  {
    std::unique_lock<std::mutex> lock(event.mutex);
    auto reached = [&] { return event.pending.count(item.generation) == 0; };
    if (!reached()) {
      // A compute stream blocked here is the measured stall (device stats'
      // compute_wait_seconds): its kernels wait for a copy.
      auto start = clock_type::now();
      event.changed.wait(lock, reached);
      if (stream->kind == TIDALRT_STREAM_COMPUTE)
        stream->device->compute_wait_nanoseconds.fetch_add(
            (uint64_t)std::chrono::duration_cast<std::chrono::nanoseconds>(
                clock_type::now() - start)
                .count(),
            std::memory_order_relaxed);
    }
    if (event.failed.count(item.generation))
      failure = tidalrt_status_make(
          tidalrt_status_code(event.failure),
          "%s: waited on an event whose work failed: %s",
          stream_name(stream).c_str(), tidalrt_status_message(event.failure));
  }
  if (failure)
    fail(stream, failure);
}

// Runs one item, or skips it once the stream has failed; a record still
// completes its generation (as failed), so that no waiter hangs.
void run_item(tidalrt_stream_s *stream, const work_item &item) {
  if (item.kind == item_kind::RECORD) {
    run_record(stream, item);
    return;
  }
  if (stream->failure)
    return;
  switch (item.kind) {
  case item_kind::LAUNCH:
    run_launch(stream, item);
    break;
  case item_kind::COPY:
    run_copy(stream, item);
    break;
  case item_kind::WAIT:
    run_wait(stream, item);
    break;
  case item_kind::RECORD:
    break;
  }
}

void worker_main(tidalrt_stream_s *stream) {
#ifdef __linux__
  // The throttle sleeps until a copy's end: with Linux's default timer
  // slack (50 us) every short copy would last at least that long, far
  // longer than the link's rate (a 16 KiB copy at 4 GB/s takes 4 us).
  if (stream->kind == TIDALRT_STREAM_COPY_TO_HOST ||
      stream->kind == TIDALRT_STREAM_COPY_TO_DEVICE)
    prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);
#endif
  // Kernels run from this thread: static OpenMP teams, as on the context's
  // thread (cpu/context.cpp).
  omp_set_dynamic(0);
  // Nor may a team be asked for more threads than OMP_THREAD_LIMIT allows.
  if (omp_get_max_threads() > omp_get_thread_limit())
    omp_set_num_threads(omp_get_thread_limit());
  std::unique_lock<std::mutex> lock(stream->mutex);
  for (;;) {
    stream->work_ready.wait(
        lock, [&] { return stream->stop || !stream->queue.empty(); });
    if (stream->queue.empty())
      return; // stopped and drained
    work_item item = std::move(stream->queue.front());
    stream->queue.pop_front();
    lock.unlock();
    run_item(stream, item);
    item.event.reset();
    lock.lock();
    ++stream->completed;
    if (!stream->sync_targets.empty() &&
        stream->completed >= *stream->sync_targets.begin())
      stream->work_done.notify_all();
  }
}

// Accepts an item: HOST runs it now, SIM hands it to the worker.
void submit(tidalrt_stream_s *stream, work_item &&item) {
  if (!stream->queued) {
    {
      std::lock_guard<std::mutex> lock(stream->mutex);
      ++stream->enqueued;
    }
    run_item(stream, item);
    std::lock_guard<std::mutex> lock(stream->mutex);
    ++stream->completed;
    return;
  }
  {
    std::lock_guard<std::mutex> lock(stream->mutex);
    stream->queue.push_back(std::move(item));
    ++stream->enqueued;
  }
  stream->work_ready.notify_one();
}

tidalrt_status_t check_ranges(const tidalrt_device_s *device, const char *what,
                              const tidalrt_range_t *ranges, size_t count,
                              uint64_t *end) {
  if (count && !ranges)
    return tidalrt_status_make(TIDALRT_INVALID_ARGUMENT,
                               "tidalrt_stream_launch: %zu %s ranges but a "
                               "NULL list",
                               count, what);
  for (size_t i = 0; i < count; ++i) {
    std::string name = std::string(what) + " range " + std::to_string(i);
    if (tidalrt_status_t status =
            check_range(device, "tidalrt_stream_launch", name.c_str(),
                        ranges[i].offset, ranges[i].bytes, end))
      return status;
  }
  return nullptr;
}

} // namespace

namespace tidalrt_device {

std::string stream_name(const tidalrt_stream_s *stream) {
  return "stream " + std::to_string(stream->index) + " (" +
         stream_kind_name(stream->kind) + ")";
}

tidalrt_status_t synchronize_stream(tidalrt_stream_s *stream) {
  if (const backend *b = stream->device->backend) {
    double seconds = 0;
    tidalrt_status_t status = b->stream_synchronize(stream->native, &seconds);
    stream->device->copy_nanoseconds.fetch_add((uint64_t)(seconds * 1e9),
                                               std::memory_order_relaxed);
    if (status)
      fail(stream,
           tidalrt_status_annotate(status, "%s", stream_name(stream).c_str()));
    std::lock_guard<std::mutex> lock(stream->mutex);
    return copy_status(stream->failure);
  }
  std::unique_lock<std::mutex> lock(stream->mutex);
  uint64_t target = stream->enqueued;
  if (stream->completed < target) {
    auto waiting = stream->sync_targets.insert(target);
    stream->work_done.wait(lock, [&] { return stream->completed >= target; });
    stream->sync_targets.erase(waiting);
  }
  return copy_status(stream->failure);
}

void destroy_stream(tidalrt_stream_s *stream) {
  if (stream->device->backend)
    stream->device->backend->stream_destroy(stream->native);
  if (stream->worker.joinable()) {
    {
      std::lock_guard<std::mutex> lock(stream->mutex);
      stream->stop = true;
    }
    stream->work_ready.notify_one();
    stream->worker.join(); // the worker drains the queue first
  }
  tidalrt_status_free(stream->failure);
  delete stream;
}

} // namespace tidalrt_device

extern "C" tidalrt_status_t
tidalrt_stream_create(tidalrt_device_t *device, tidalrt_stream_kind_t kind,
                      tidalrt_stream_t **out_stream) {
  if (out_stream)
    *out_stream = nullptr;
  if (!device || !out_stream)
    return tidalrt_status_make(TIDALRT_INVALID_ARGUMENT,
                               "tidalrt_stream_create: NULL argument");
  int kind_value = enum_value(kind);
  if (kind_value != TIDALRT_STREAM_COMPUTE &&
      kind_value != TIDALRT_STREAM_COPY_TO_HOST &&
      kind_value != TIDALRT_STREAM_COPY_TO_DEVICE &&
      kind_value != TIDALRT_STREAM_HOST)
    return tidalrt_status_make(TIDALRT_INVALID_ARGUMENT,
                               "tidalrt_stream_create: unknown stream kind %d",
                               kind_value);
  auto *stream = new (std::nothrow) tidalrt_stream_s();
  if (!stream)
    return tidalrt_status_make(TIDALRT_OUT_OF_MEMORY,
                               "tidalrt_stream_create: out of memory");
  stream->device = device;
  stream->kind = kind;
  stream->queued = device->kind == TIDALRT_DEVICE_SIM;
  if (device->backend) {
    if (tidalrt_status_t status = device->backend->stream_create(
            device->native, kind, &stream->native)) {
      delete stream;
      return tidalrt_status_annotate(status, "tidalrt_stream_create");
    }
  }
  std::lock_guard<std::mutex> lock(device->mutex);
  stream->index = device->next_stream_index;
  if (stream->queued) {
    try {
      stream->worker = std::thread(worker_main, stream);
    } catch (const std::exception &e) {
      delete stream;
      return tidalrt_status_make(TIDALRT_OUT_OF_MEMORY,
                                 "tidalrt_stream_create: cannot start a "
                                 "thread: %s",
                                 e.what());
    }
  }
  try {
    device->streams.push_back(stream);
  } catch (const std::bad_alloc &) {
    destroy_stream(stream);
    return tidalrt_status_make(TIDALRT_OUT_OF_MEMORY,
                               "tidalrt_stream_create: out of memory");
  }
  ++device->next_stream_index;
  *out_stream = stream;
  return nullptr;
}

extern "C" void tidalrt_stream_free(tidalrt_stream_t *stream) {
  if (!stream)
    return;
  tidalrt_device_s *device = stream->device;
  {
    std::lock_guard<std::mutex> lock(device->mutex);
    auto &streams = device->streams;
    for (auto it = streams.begin(); it != streams.end(); ++it)
      if (*it == stream) {
        streams.erase(it);
        break;
      }
  }
  destroy_stream(stream);
}

extern "C" tidalrt_status_t
tidalrt_stream_launch(tidalrt_stream_t *stream, tidalrt_work_fn_t fn, void *arg,
                      const tidalrt_range_t *reads, size_t num_reads,
                      const tidalrt_range_t *writes, size_t num_writes) {
  if (!stream || !fn)
    return tidalrt_status_make(TIDALRT_INVALID_ARGUMENT,
                               "tidalrt_stream_launch: NULL %s",
                               stream ? "fn" : "stream");
  if (stream->kind != TIDALRT_STREAM_COMPUTE &&
      stream->kind != TIDALRT_STREAM_HOST)
    return tidalrt_status_make(TIDALRT_INVALID_ARGUMENT,
                               "tidalrt_stream_launch: %s is a copy stream; "
                               "launches need a compute or host stream",
                               stream_name(stream).c_str());
  work_item item;
  item.kind = item_kind::LAUNCH;
  if (tidalrt_status_t status =
          check_ranges(stream->device, "read", reads, num_reads, &item.end))
    return status;
  if (tidalrt_status_t status =
          check_ranges(stream->device, "write", writes, num_writes, &item.end))
    return status;
  item.fn = fn;
  item.arg = arg;
  {
    std::lock_guard<std::mutex> lock(stream->mutex);
    item.number = ++stream->launches;
    if (stream->native && stream->failure)
      return nullptr; // a failed backend stream skips later work
  }
  if (const backend *b = stream->device->backend) {
    // Counted at enqueue: the GPU runs it later, out of the runtime's sight.
    note_launch(stream->device, item.end);
    if (tidalrt_status_t status = b->launch(stream->native, fn, arg))
      fail(stream, tidalrt_status_annotate(status, "%s, launch #%llu",
                                           stream_name(stream).c_str(),
                                           (unsigned long long)item.number));
    return nullptr;
  }
  submit(stream, std::move(item));
  return nullptr;
}

extern "C" tidalrt_status_t tidalrt_stream_copy(tidalrt_stream_t *stream,
                                                void *host,
                                                uint64_t device_offset,
                                                uint64_t bytes) {
  if (!stream)
    return tidalrt_status_make(TIDALRT_INVALID_ARGUMENT,
                               "tidalrt_stream_copy: NULL stream");
  if (stream->kind == TIDALRT_STREAM_COMPUTE ||
      stream->kind == TIDALRT_STREAM_HOST)
    return tidalrt_status_make(TIDALRT_INVALID_ARGUMENT,
                               "tidalrt_stream_copy: %s is not a copy stream",
                               stream_name(stream).c_str());
  if (!host && bytes)
    return tidalrt_status_make(TIDALRT_INVALID_ARGUMENT,
                               "tidalrt_stream_copy: NULL host pointer for "
                               "%llu bytes",
                               (unsigned long long)bytes);
  work_item item;
  item.kind = item_kind::COPY;
  const char *what = stream->kind == TIDALRT_STREAM_COPY_TO_HOST
                         ? "source range"
                         : "destination range";
  if (tidalrt_status_t status =
          check_range(stream->device, "tidalrt_stream_copy", what,
                      device_offset, bytes, &item.end))
    return status;
  item.host = host;
  item.offset = device_offset;
  item.bytes = bytes;
  {
    std::lock_guard<std::mutex> lock(stream->mutex);
    item.number = ++stream->copies;
    if (stream->native && stream->failure)
      return nullptr; // a failed backend stream skips later work
  }
  if (const backend *b = stream->device->backend) {
    bool to_host = stream->kind == TIDALRT_STREAM_COPY_TO_HOST;
    note_copy(stream->device, to_host, item.end, bytes, 0);
    if (tidalrt_status_t status =
            b->copy(stream->native, host,
                    stream->device->memory + device_offset, bytes, to_host))
      fail(stream, tidalrt_status_annotate(status, "%s, copy #%llu",
                                           stream_name(stream).c_str(),
                                           (unsigned long long)item.number));
    return nullptr;
  }
  submit(stream, std::move(item));
  return nullptr;
}

extern "C" tidalrt_status_t
tidalrt_stream_synchronize(tidalrt_stream_t *stream) {
  if (!stream)
    return tidalrt_status_make(TIDALRT_INVALID_ARGUMENT,
                               "tidalrt_stream_synchronize: NULL stream");
  return synchronize_stream(stream);
}

/// NULL, or why `what` cannot pair `event` with `stream`.
static tidalrt_status_t check_pair(const char *what, tidalrt_event_t *event,
                                   tidalrt_stream_t *stream) {
  if (!event || !stream)
    return tidalrt_status_make(TIDALRT_INVALID_ARGUMENT, "%s: NULL argument",
                               what);
  if (event->device != stream->device)
    return tidalrt_status_make(TIDALRT_INVALID_ARGUMENT,
                               "%s: the event and %s belong to different "
                               "devices",
                               what, stream_name(stream).c_str());
  return nullptr;
}

extern "C" tidalrt_status_t tidalrt_event_record(tidalrt_event_t *event,
                                                 tidalrt_stream_t *stream) {
  if (tidalrt_status_t status =
          check_pair("tidalrt_event_record", event, stream))
    return status;
  if (const backend *b = stream->device->backend)
    return tidalrt_status_annotate(
        b->event_record(event->native, stream->native), "tidalrt_event_record");
  work_item item;
  item.kind = item_kind::RECORD;
  item.event = event->state;
  {
    std::lock_guard<std::mutex> lock(event->state->mutex);
    item.generation = ++event->state->last_generation;
    event->state->pending.insert(item.generation);
  }
  submit(stream, std::move(item));
  return nullptr;
}

extern "C" tidalrt_status_t tidalrt_stream_wait_event(tidalrt_stream_t *stream,
                                                      tidalrt_event_t *event) {
  if (tidalrt_status_t status =
          check_pair("tidalrt_stream_wait_event", event, stream))
    return status;
  if (const backend *b = stream->device->backend)
    return tidalrt_status_annotate(
        b->stream_wait_event(stream->native, event->native),
        "tidalrt_stream_wait_event");
  work_item item;
  item.kind = item_kind::WAIT;
  item.event = event->state;
  {
    std::lock_guard<std::mutex> lock(event->state->mutex);
    item.generation = event->state->last_generation;
  }
  if (item.generation == 0)
    return nullptr; // never recorded: nothing to wait for
  submit(stream, std::move(item));
  return nullptr;
}
