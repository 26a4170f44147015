// comm_backend.h - what a communication backend provides to comm.cpp
// (tidalrt/comm.h). The MPI backend lives in the separate library
// tidalrt_mpi and is found through a weak reference, as the CUDA device is.
#ifndef TIDALRT_COMM_COMM_BACKEND_H
#define TIDALRT_COMM_COMM_BACKEND_H

#include "tidalrt/comm.h"

#include <atomic>

namespace tidalrt_comm {

struct backend {
  const char *name; // "mpi"
  // Joins the run; sets the rank, the size and the backend's state.
  tidalrt_status_t (*create)(double timeout_seconds, void **native,
                             int64_t *rank, int64_t *size);
  void (*destroy)(void *native);
  // The collectives of tidalrt/comm.h, after comm.cpp's argument checks.
  tidalrt_status_t (*allreduce_f32)(void *native, float *data, uint64_t count);
  tidalrt_status_t (*broadcast)(void *native, void *data, uint64_t bytes,
                                int64_t root);
  tidalrt_status_t (*barrier)(void *native);
  void (*abort)(void *native, int code); // does not return
  // Every rank's `count` floats of `mine`, in rank order, into `all`
  // (size * count floats).
  tidalrt_status_t (*allgather_f32)(void *native, const float *mine, float *all,
                                    uint64_t count);
  // `send` holds size parts of `count` floats, part r for rank r; `out`
  // (count floats) receives the rank-order sum of every rank's part for
  // this rank.
  tidalrt_status_t (*reduce_scatter_f32)(void *native, const float *send,
                                         float *out, uint64_t count);
};

// The MPI backend, or NULL when tidalrt_mpi is not linked in.
const backend *mpi_backend();

class async_queue; // comm_async.cpp

// Runs queued collectives (tidalrt_comm_allreduce_f32_start) on their own
// thread, in order.
async_queue *make_queue(tidalrt_comm_t *comm);
void free_queue(async_queue *queue); // waits for what is queued
// Waits until every collective queued so far has run; their failures stay
// for tidalrt_comm_wait.
void drain_queue(async_queue *queue);
// The queue's statistics (zeros for NULL).
void queue_stats(const async_queue *queue, tidalrt_comm_stats_t *out);
// Recorded events (tidalrt_comm_take_events); 0 for NULL.
uint64_t queue_take_events(async_queue *queue, tidalrt_comm_event_t *out,
                           uint64_t max);

} // namespace tidalrt_comm

struct tidalrt_comm_s {
  const tidalrt_comm::backend *backend = nullptr; // NULL: single process
  void *native = nullptr;
  int64_t rank = 0;
  int64_t size = 1;
  tidalrt_comm::async_queue *queue = nullptr; // made by the first start
  std::atomic<bool> record_events{false};     // tidalrt_comm_record_events
};

#endif // TIDALRT_COMM_COMM_BACKEND_H
