// comm_async.cpp - collectives that overlap with computation
// (tidalrt_comm_allreduce_f32_start / tidalrt_comm_wait, tidalrt/comm.h).
//
// A communicator of several ranks gets its own thread at the first start:
// started all-reduces queue there and run one at a time, in the order they
// were started (every rank starts the same collectives in the same order, so
// the ranks' queues match). The caller's thread keeps computing and waits
// only for the ticket it needs. A bucket's segments are packed into one
// message, summed in rank order by the backend, and unpacked divided by the
// divisor: every element's value is the same however the tensors were
// bucketed.
#include "comm_backend.h"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <map>
#include <mutex>
#include <new>
#include <thread>
#include <vector>

namespace tidalrt_comm {

namespace {

struct job {
  uint64_t ticket = 0;
  bool gather = false;  // an all-gather
  bool scatter = false; // a reduce-scatter (else an all-reduce)
  // all-reduce: in place; all-gather: the outputs; reduce-scatter: chunks.
  std::vector<float *> segments;
  // all-reduce: lengths; all-gather, reduce-scatter: chunk lengths.
  std::vector<uint64_t> counts;
  float divisor = 1.0f;
  // all-gather: this rank's parts; reduce-scatter: the whole inputs.
  std::vector<const float *> chunks;
  // all-gather: the outputs' lengths; reduce-scatter: the inputs'.
  std::vector<uint64_t> output_counts;
  // all-gather, reduce-scatter: the inputs, copied when the collective is
  // started (`chunks` points into it), so that the caller may reuse them
  // at once: a memory plan ends an operand's life at the op that reads it.
  std::vector<float> copied;
};

// Checks the tensors of an all-gather or reduce-scatter: each whole tensor
// t (`whole[t]`, `whole_counts[t]` elements) is `size` ranks' `noun`s of
// `chunk_counts[t]` elements (`chunks[t]`), the last cut short; NULL only
// when empty.
tidalrt_status_t check_chunked(const char *call, const void *const *whole,
                               const void *const *chunks,
                               const uint64_t *whole_counts,
                               const uint64_t *chunk_counts,
                               uint64_t num_tensors, uint64_t size,
                               const char *noun) {
  for (uint64_t t = 0; t < num_tensors; ++t) {
    if ((!whole[t] && whole_counts[t]) || (!chunks[t] && chunk_counts[t]))
      return tidalrt_status_make(TIDALRT_INVALID_ARGUMENT,
                                 "%s: tensor %llu is NULL", call,
                                 (unsigned long long)t);
    if (whole_counts[t] > chunk_counts[t] * size ||
        (chunk_counts[t] && whole_counts[t] <= (chunk_counts[t] - 1) * size))
      return tidalrt_status_make(
          TIDALRT_INVALID_ARGUMENT,
          "%s: tensor %llu: %llu elements are not %llu ranks' %s of %llu", call,
          (unsigned long long)t, (unsigned long long)whole_counts[t],
          (unsigned long long)size, noun, (unsigned long long)chunk_counts[t]);
  }
  return nullptr;
}

// Copies the inputs that `j.chunks` points to (`lengths[t]` floats each)
// into the job, and points `j.chunks` at the copies.
void copy_inputs(job &j, const uint64_t *lengths) {
  uint64_t total = 0;
  for (size_t t = 0; t < j.chunks.size(); ++t)
    total += lengths[t];
  j.copied.resize(total);
  uint64_t at = 0;
  for (size_t t = 0; t < j.chunks.size(); ++t) {
    if (lengths[t])
      std::memcpy(j.copied.data() + at, j.chunks[t],
                  lengths[t] * sizeof(float));
    j.chunks[t] = j.copied.data() + at;
    at += lengths[t];
  }
}

} // namespace

class async_queue {
public:
  explicit async_queue(tidalrt_comm_t *comm) : comm(comm) {
    worker = std::thread([this] { run(); });
  }
  ~async_queue() {
    {
      std::lock_guard<std::mutex> lock(mutex);
      stopping = true;
    }
    wake.notify_all();
    worker.join();
    for (auto &failure : failures)
      tidalrt_status_free(failure.second);
  }

  uint64_t submit(job &&j) {
    std::lock_guard<std::mutex> lock(mutex);
    j.ticket = next++;
    pending.push_back(std::move(j));
    wake.notify_all();
    return pending.back().ticket;
  }

  // Waits for `ticket`; its failure, if any, passes to the caller.
  tidalrt_status_t wait(uint64_t ticket) {
    std::unique_lock<std::mutex> lock(mutex);
    if (ticket >= next)
      return tidalrt_status_make(TIDALRT_INVALID_ARGUMENT,
                                 "tidalrt_comm_wait: ticket %llu was never "
                                 "issued",
                                 (unsigned long long)ticket);
    if (completed <= ticket) {
      auto start = clock::now();
      finished.wait(lock, [&] { return completed > ticket; });
      stats.wait_seconds +=
          std::chrono::duration<double>(clock::now() - start).count();
    }
    auto it = failures.find(ticket);
    if (it == failures.end())
      return nullptr;
    tidalrt_status_t status = it->second;
    failures.erase(it);
    return status;
  }

  void drain() {
    std::unique_lock<std::mutex> lock(mutex);
    finished.wait(lock, [&] { return completed == next; });
  }

private:
  void run() {
    for (;;) {
      job j;
      {
        std::unique_lock<std::mutex> lock(mutex);
        wake.wait(lock, [&] { return stopping || !pending.empty(); });
        if (pending.empty())
          return; // stopping, nothing left
        j = std::move(pending.front());
        pending.pop_front();
      }
      auto start = clock::now();
      tidalrt_status_t status = j.gather    ? gather(j)
                                : j.scatter ? scatter(j)
                                            : reduce(j);
      auto end = clock::now();
      double seconds = std::chrono::duration<double>(end - start).count();
      const bool record = comm->record_events.load(std::memory_order_relaxed);
      {
        std::lock_guard<std::mutex> lock(mutex);
        if (status)
          failures[j.ticket] = status;
        ++completed;
        ++stats.collectives;
        for (uint64_t c : j.counts)
          stats.bytes += c * sizeof(float);
        stats.busy_seconds += seconds;
        if (record && events.size() < (size_t(1) << 20)) {
          uint64_t bytes = 0;
          for (uint64_t c : j.counts)
            bytes += c * sizeof(float);
          events.push_back({bytes, since_epoch(start), since_epoch(end)});
        }
      }
      finished.notify_all();
    }
  }

  // Rank r's part of output t is elements [r * c_t, (r + 1) * c_t) of it,
  // cut at its length.
  tidalrt_status_t gather(const job &j) {
    const uint64_t size = static_cast<uint64_t>(comm->size);
    uint64_t total = 0;
    for (uint64_t c : j.counts)
      total += c;
    try {
      if (staging.size() < total * (size + 1))
        staging.resize(total * (size + 1));
    } catch (const std::exception &) {
      return tidalrt_status_make(TIDALRT_OUT_OF_MEMORY,
                                 "all-gather: %llu floats of staging",
                                 (unsigned long long)(total * (size + 1)));
    }
    float *mine = staging.data(), *all = staging.data() + total;
    uint64_t at = 0;
    for (size_t t = 0; t < j.chunks.size(); ++t) {
      std::memcpy(mine + at, j.chunks[t], j.counts[t] * sizeof(float));
      at += j.counts[t];
    }
    if (tidalrt_status_t status =
            comm->backend->allgather_f32(comm->native, mine, all, total))
      return status;
    for (uint64_t r = 0; r < size; ++r) {
      const float *part = all + r * total;
      for (size_t t = 0; t < j.chunks.size(); ++t) {
        uint64_t begin = r * j.counts[t];
        if (begin < j.output_counts[t])
          std::memcpy(j.segments[t] + begin, part,
                      std::min(j.counts[t], j.output_counts[t] - begin) *
                          sizeof(float));
        part += j.counts[t];
      }
    }
    return nullptr;
  }

  // Rank r's chunk of input t is elements [r * c_t, (r + 1) * c_t) of it,
  // zero-padded past its length; this rank gets the rank-order sum of its
  // chunks, divided.
  tidalrt_status_t scatter(const job &j) {
    const uint64_t size = static_cast<uint64_t>(comm->size);
    uint64_t total = 0;
    for (uint64_t c : j.counts)
      total += c;
    try {
      if (staging.size() < total * (size + 1))
        staging.resize(total * (size + 1));
    } catch (const std::exception &) {
      return tidalrt_status_make(TIDALRT_OUT_OF_MEMORY,
                                 "reduce-scatter: %llu floats of staging",
                                 (unsigned long long)(total * (size + 1)));
    }
    float *send = staging.data(), *out = staging.data() + total * size;
    for (uint64_t r = 0; r < size; ++r) {
      float *part = send + r * total;
      for (size_t t = 0; t < j.chunks.size(); ++t) {
        uint64_t c = j.counts[t], n = j.output_counts[t], begin = r * c;
        uint64_t len = begin < n ? std::min(c, n - begin) : 0;
        if (len)
          std::memcpy(part, j.chunks[t] + begin, len * sizeof(float));
        std::fill(part + len, part + c, 0.0f);
        part += c;
      }
    }
    if (tidalrt_status_t status =
            comm->backend->reduce_scatter_f32(comm->native, send, out, total))
      return status;
    for (size_t t = 0; t < j.chunks.size(); ++t) {
      for (uint64_t k = 0; k < j.counts[t]; ++k)
        j.segments[t][k] = j.divisor != 1.0f ? out[k] / j.divisor : out[k];
      out += j.counts[t];
    }
    return nullptr;
  }

  tidalrt_status_t reduce(const job &j) {
    float *data = nullptr;
    uint64_t total = 0;
    for (uint64_t c : j.counts)
      total += c;
    if (j.segments.size() == 1) {
      data = j.segments[0];
    } else {
      try {
        if (staging.size() < total)
          staging.resize(total);
      } catch (const std::exception &) {
        return tidalrt_status_make(TIDALRT_OUT_OF_MEMORY,
                                   "all-reduce: %llu floats of staging",
                                   (unsigned long long)total);
      }
      data = staging.data();
      uint64_t at = 0;
      for (size_t i = 0; i < j.segments.size(); ++i) {
        std::memcpy(data + at, j.segments[i], j.counts[i] * sizeof(float));
        at += j.counts[i];
      }
    }
    if (tidalrt_status_t status =
            comm->backend->allreduce_f32(comm->native, data, total))
      return status;
    uint64_t at = 0;
    for (size_t i = 0; i < j.segments.size(); ++i) {
      float *out = j.segments[i];
      const float *sum = data + at;
      if (j.divisor != 1.0f)
        for (uint64_t k = 0; k < j.counts[i]; ++k)
          out[k] = sum[k] / j.divisor;
      else if (out != sum)
        std::memcpy(out, sum, j.counts[i] * sizeof(float));
      at += j.counts[i];
    }
    return nullptr;
  }

public:
  tidalrt_comm_stats_t snapshot() const {
    std::lock_guard<std::mutex> lock(mutex);
    return stats;
  }

  uint64_t take_events(tidalrt_comm_event_t *out, uint64_t max) {
    std::lock_guard<std::mutex> lock(mutex);
    uint64_t n = std::min<uint64_t>(max, events.size());
    std::copy(events.begin(), events.begin() + n, out);
    events.erase(events.begin(), events.begin() + n);
    return n;
  }

private:
  using clock = std::chrono::steady_clock;
  static double since_epoch(clock::time_point t) {
    return std::chrono::duration<double>(t.time_since_epoch()).count();
  }
  tidalrt_comm_t *comm;
  std::thread worker;
  mutable std::mutex mutex;
  tidalrt_comm_stats_t stats = {0, 0, 0.0, 0.0};
  std::deque<tidalrt_comm_event_t> events;
  std::condition_variable wake, finished;
  std::deque<job> pending;
  uint64_t next = 0, completed = 0;
  std::map<uint64_t, tidalrt_status_t> failures;
  bool stopping = false;
  std::vector<float> staging; // the worker's only
};

async_queue *make_queue(tidalrt_comm_t *comm) {
  try {
    return new async_queue(comm);
  } catch (const std::exception &) {
    return nullptr;
  }
}

void free_queue(async_queue *queue) { delete queue; }

void queue_stats(const async_queue *queue, tidalrt_comm_stats_t *out) {
  *out = queue ? queue->snapshot() : tidalrt_comm_stats_t{0, 0, 0.0, 0.0};
}

uint64_t queue_take_events(async_queue *queue, tidalrt_comm_event_t *out,
                           uint64_t max) {
  return queue && out ? queue->take_events(out, max) : 0;
}

// Hands `j` to the communicator's thread (started by the first job).
static tidalrt_status_t enqueue(tidalrt_comm_t *comm, job &&j, const char *call,
                                uint64_t *ticket) {
  if (!comm->queue && !(comm->queue = make_queue(comm)))
    return tidalrt_status_make(
        TIDALRT_INTERNAL, "%s: cannot start the communication thread", call);
  *ticket = comm->queue->submit(std::move(j));
  return nullptr;
}

void drain_queue(async_queue *queue) {
  if (queue)
    queue->drain();
}

} // namespace tidalrt_comm

extern "C" tidalrt_status_t
tidalrt_comm_allreduce_f32_start(tidalrt_comm_t *comm, float *const *segments,
                                 const uint64_t *counts, uint64_t num_segments,
                                 uint64_t divisor, uint64_t *ticket) {
  static const char call[] = "tidalrt_comm_allreduce_f32_start";
  if (!comm || !ticket || (num_segments && (!segments || !counts)))
    return tidalrt_status_make(TIDALRT_INVALID_ARGUMENT, "%s: NULL argument",
                               call);
  *ticket = 0;
  if (divisor == 0)
    return tidalrt_status_make(TIDALRT_INVALID_ARGUMENT, "%s: divisor 0", call);
  for (uint64_t i = 0; i < num_segments; ++i)
    if (!segments[i] && counts[i])
      return tidalrt_status_make(TIDALRT_INVALID_ARGUMENT,
                                 "%s: segment %llu is NULL", call,
                                 (unsigned long long)i);
  const float d = static_cast<float>(divisor);
  if (!comm->backend || comm->size == 1) {
    // One rank: the sum is the data; nothing to wait for.
    if (d != 1.0f)
      for (uint64_t i = 0; i < num_segments; ++i)
        for (uint64_t k = 0; k < counts[i]; ++k)
          segments[i][k] /= d;
    *ticket = UINT64_MAX;
    return nullptr;
  }
  tidalrt_comm::job j;
  try {
    j.segments.assign(segments, segments + num_segments);
    j.counts.assign(counts, counts + num_segments);
  } catch (const std::exception &) {
    return tidalrt_status_make(TIDALRT_OUT_OF_MEMORY, "%s: out of memory",
                               call);
  }
  j.divisor = d;
  return tidalrt_comm::enqueue(comm, std::move(j), call, ticket);
}

extern "C" void tidalrt_comm_stats(const tidalrt_comm_t *comm,
                                   tidalrt_comm_stats_t *out) {
  if (!out)
    return;
  tidalrt_comm::queue_stats(comm ? comm->queue : nullptr, out);
}

extern "C" void tidalrt_comm_record_events(tidalrt_comm_t *comm, int on) {
  if (comm)
    comm->record_events.store(on != 0, std::memory_order_relaxed);
}

extern "C" uint64_t tidalrt_comm_take_events(tidalrt_comm_t *comm,
                                             tidalrt_comm_event_t *out,
                                             uint64_t max) {
  return comm ? tidalrt_comm::queue_take_events(comm->queue, out, max) : 0;
}

extern "C" tidalrt_status_t tidalrt_comm_allgather_f32_start(
    tidalrt_comm_t *comm, const float *const *chunks, float *const *outputs,
    const uint64_t *chunk_counts, const uint64_t *output_counts,
    uint64_t num_tensors, uint64_t *ticket) {
  static const char call[] = "tidalrt_comm_allgather_f32_start";
  if (!comm || !ticket ||
      (num_tensors && (!chunks || !outputs || !chunk_counts || !output_counts)))
    return tidalrt_status_make(TIDALRT_INVALID_ARGUMENT, "%s: NULL argument",
                               call);
  *ticket = 0;
  const uint64_t size = static_cast<uint64_t>(comm->size);
  if (tidalrt_status_t bad = tidalrt_comm::check_chunked(
          call, reinterpret_cast<const void *const *>(outputs),
          reinterpret_cast<const void *const *>(chunks), output_counts,
          chunk_counts, num_tensors, size, "parts"))
    return bad;
  if (!comm->backend || size == 1) {
    for (uint64_t t = 0; t < num_tensors; ++t)
      if (outputs[t] != chunks[t])
        std::memmove(outputs[t], chunks[t], output_counts[t] * sizeof(float));
    *ticket = UINT64_MAX;
    return nullptr;
  }
  tidalrt_comm::job j;
  try {
    j.gather = true;
    j.chunks.assign(chunks, chunks + num_tensors);
    j.segments.assign(outputs, outputs + num_tensors);
    j.counts.assign(chunk_counts, chunk_counts + num_tensors);
    j.output_counts.assign(output_counts, output_counts + num_tensors);
    copy_inputs(j, chunk_counts);
  } catch (const std::exception &) {
    return tidalrt_status_make(TIDALRT_OUT_OF_MEMORY, "%s: out of memory",
                               call);
  }
  return tidalrt_comm::enqueue(comm, std::move(j), call, ticket);
}

extern "C" tidalrt_status_t tidalrt_comm_reduce_scatter_f32_start(
    tidalrt_comm_t *comm, const float *const *inputs, float *const *chunks,
    const uint64_t *input_counts, const uint64_t *chunk_counts,
    uint64_t num_tensors, uint64_t divisor, uint64_t *ticket) {
  static const char call[] = "tidalrt_comm_reduce_scatter_f32_start";
  if (!comm || !ticket ||
      (num_tensors && (!inputs || !chunks || !input_counts || !chunk_counts)))
    return tidalrt_status_make(TIDALRT_INVALID_ARGUMENT, "%s: NULL argument",
                               call);
  *ticket = 0;
  if (divisor == 0)
    return tidalrt_status_make(TIDALRT_INVALID_ARGUMENT, "%s: divisor 0", call);
  const uint64_t size = static_cast<uint64_t>(comm->size);
  if (tidalrt_status_t bad = tidalrt_comm::check_chunked(
          call, reinterpret_cast<const void *const *>(inputs),
          reinterpret_cast<const void *const *>(chunks), input_counts,
          chunk_counts, num_tensors, size, "chunks"))
    return bad;
  const float d = static_cast<float>(divisor);
  if (!comm->backend || size == 1) {
    for (uint64_t t = 0; t < num_tensors; ++t)
      for (uint64_t k = 0; k < chunk_counts[t]; ++k)
        chunks[t][k] = d != 1.0f ? inputs[t][k] / d : inputs[t][k];
    *ticket = UINT64_MAX;
    return nullptr;
  }
  tidalrt_comm::job j;
  try {
    j.scatter = true;
    j.chunks.assign(inputs, inputs + num_tensors);
    j.segments.assign(chunks, chunks + num_tensors);
    j.counts.assign(chunk_counts, chunk_counts + num_tensors);
    j.output_counts.assign(input_counts, input_counts + num_tensors);
    copy_inputs(j, input_counts);
  } catch (const std::exception &) {
    return tidalrt_status_make(TIDALRT_OUT_OF_MEMORY, "%s: out of memory",
                               call);
  }
  j.divisor = d;
  return tidalrt_comm::enqueue(comm, std::move(j), call, ticket);
}

extern "C" tidalrt_status_t tidalrt_comm_wait(tidalrt_comm_t *comm,
                                              uint64_t ticket) {
  if (!comm)
    return tidalrt_status_make(TIDALRT_INVALID_ARGUMENT,
                               "tidalrt_comm_wait: NULL argument");
  if (ticket == UINT64_MAX)
    return nullptr; // completed when it started
  if (!comm->queue)
    return tidalrt_status_make(TIDALRT_INVALID_ARGUMENT,
                               "tidalrt_comm_wait: ticket %llu was never "
                               "issued",
                               (unsigned long long)ticket);
  return comm->queue->wait(ticket);
}
