// nccl_comm.cpp - joining a CUDA device to a data-parallel run over NCCL,
// and waiting for its collectives with a timeout (nccl_state.h).
#include "nccl_state.h"

#include "../cuda_context.h"
#include "../cuda_device.h"

#include <chrono>
#include <cstring>
#include <new>
#include <thread>

namespace tidalrt {
namespace cuda {

namespace {

using clock_type = std::chrono::steady_clock;

tidalrt_status_t ncclStatus(ncclComm_t comm, ncclResult_t result,
                            const char *what) {
  const char *last = comm ? ncclGetLastError(comm) : "";
  return tidalrt_status_make(TIDALRT_INTERNAL, "%s: NCCL error %s%s%s", what,
                             ncclGetErrorString(result),
                             last && *last ? ": " : "", last ? last : "");
}

// Polls a non-blocking communicator until its last call is no longer in
// progress; ncclInProgress past the deadline means a stuck peer.
ncclResult_t pollAsync(ncclComm_t comm, clock_type::time_point deadline) {
  for (;;) {
    ncclResult_t state = ncclSuccess;
    ncclResult_t result = ncclCommGetAsyncError(comm, &state);
    if (result != ncclSuccess)
      return result;
    if (state != ncclInProgress)
      return state;
    if (clock_type::now() >= deadline)
      return ncclInProgress;
    std::this_thread::sleep_for(std::chrono::microseconds(100));
  }
}

clock_type::time_point deadlineAfter(double seconds) {
  return clock_type::now() + std::chrono::duration_cast<clock_type::duration>(
                                 std::chrono::duration<double>(seconds));
}

// What rank 0 broadcasts: whether it made an id, and the id.
struct bootstrap {
  int32_t ok;
  char message[256];
  ncclUniqueId id;
};

} // namespace

tidalrt_status_t nccl_join(cuda_device *device, tidalrt_comm_t *comm,
                           double timeout_seconds) {
  nccl_free(device);
  auto *state = new (std::nothrow) nccl_state();
  if (!state)
    return tidalrt_status_make(TIDALRT_OUT_OF_MEMORY, "out of memory");
  state->rank = static_cast<int>(tidalrt_comm_rank(comm));
  state->size = static_cast<int>(tidalrt_comm_size(comm));
  state->timeout = timeout_seconds > 0 ? timeout_seconds : 300.0;

  bootstrap boot;
  std::memset(&boot, 0, sizeof boot);
  if (state->rank == 0) {
    ncclResult_t result = ncclGetUniqueId(&boot.id);
    boot.ok = result == ncclSuccess;
    if (!boot.ok)
      std::snprintf(boot.message, sizeof boot.message, "%s",
                    ncclGetErrorString(result));
  }
  if (tidalrt_status_t status =
          tidalrt_comm_broadcast(comm, &boot, sizeof boot, 0)) {
    delete state;
    return tidalrt_status_annotate(status, "NCCL bootstrap");
  }
  if (!boot.ok) {
    delete state;
    return tidalrt_status_make(
        TIDALRT_INTERNAL, "rank 0 could not make an NCCL id: %s", boot.message);
  }
  cudaError_t error = cudaSetDevice(device->ordinal);
  if (error == cudaSuccess)
    error = cudaStreamCreateWithFlags(&state->stream, cudaStreamNonBlocking);
  if (error != cudaSuccess) {
    delete state;
    return cudaStatus(error, "joining NCCL");
  }
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.blocking = 0;
  ncclResult_t result = ncclCommInitRankConfig(&state->comm, state->size,
                                               boot.id, state->rank, &config);
  if (result == ncclInProgress || result == ncclSuccess)
    result = pollAsync(state->comm, deadlineAfter(state->timeout));
  if (result != ncclSuccess) {
    tidalrt_status_t status =
        result == ncclInProgress
            ? tidalrt_status_make(
                  TIDALRT_UNAVAILABLE,
                  "rank %d of %d waited %.0f s for the other ranks to join "
                  "NCCL (one of them failed or is stuck)",
                  state->rank, state->size, state->timeout)
            : tidalrt_status_annotate(
                  ncclStatus(state->comm, result, "ncclCommInitRankConfig"),
                  "every rank needs a GPU of its own: TIDAL_CUDA_DEVICE, or "
                  "the launcher's local rank, picks it");
    if (state->comm)
      ncclCommAbort(state->comm);
    cudaStreamDestroy(state->stream);
    delete state;
    return status;
  }
  device->nccl = state;
  return nullptr;
}

void nccl_free(cuda_device *device) {
  nccl_state *state = device->nccl;
  if (!state)
    return;
  device->nccl = nullptr;
  for (auto &entry : state->buckets) {
    nccl_bucket &b = entry.second;
    if (b.ready)
      cudaEventDestroy(b.ready);
    if (b.done)
      cudaEventDestroy(b.done);
    cudaFree(b.staging);
  }
  if (state->comm) {
    if (!state->broken) {
      for (auto &op : state->scaled_sums)
        ncclRedOpDestroy(op.second, state->comm);
      ncclResult_t result = ncclCommFinalize(state->comm);
      if (result == ncclInProgress || result == ncclSuccess)
        result = pollAsync(state->comm, deadlineAfter(state->timeout));
      if (result == ncclSuccess)
        ncclCommDestroy(state->comm);
      else
        ncclCommAbort(state->comm);
    } else {
      ncclCommAbort(state->comm);
    }
  }
  if (state->stream)
    cudaStreamDestroy(state->stream);
  delete state;
}

tidalrt_status_t nccl_synchronize(nccl_state *state, cudaStream_t stream) {
  // A collective that failed while being enqueued left the ranks out of
  // step: abort, so that nothing waits for the others.
  if (state->broken && state->comm) {
    ncclCommAbort(state->comm);
    state->comm = nullptr;
  }
  auto start = clock_type::now();
  auto deadline = deadlineAfter(state->timeout);
  for (;;) {
    cudaError_t error = cudaStreamQuery(stream);
    if (error == cudaSuccess)
      return nullptr;
    if (error != cudaErrorNotReady)
      return tidalrt_status_annotate(
          cudaStatus(error, "the stream's work failed"),
          "kernels run asynchronously: set TIDAL_CUDA_SYNC=1 to name the "
          "failing op");
    ncclResult_t async = ncclSuccess;
    if (state->comm &&
        ncclCommGetAsyncError(state->comm, &async) == ncclSuccess &&
        async != ncclSuccess && async != ncclInProgress) {
      state->broken = true;
      tidalrt_status_t status = ncclStatus(state->comm, async, "a collective");
      ncclCommAbort(state->comm);
      state->comm = nullptr;
      return status;
    }
    auto now = clock_type::now();
    if (now >= deadline) {
      state->broken = true;
      if (state->comm) {
        ncclCommAbort(state->comm);
        state->comm = nullptr;
      }
      return tidalrt_status_make(
          TIDALRT_UNAVAILABLE,
          "rank %d of %d waited %.0f s for the other ranks (one of them "
          "failed or is stuck)",
          state->rank, state->size, state->timeout);
    }
    // Spin for the first millisecond (the usual end of a step), then
    // sleep between queries.
    if (now - start < std::chrono::milliseconds(1))
      std::this_thread::yield();
    else
      std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
}

void nccl_settle(nccl_state *state, ncclResult_t result, const char *what) {
  if (!state->comm)
    fail(TIDALRT_UNAVAILABLE,
         "%s: rank %d of %d: an earlier collective failed or timed out, so "
         "the ranks are out of step",
         what, state->rank, state->size);
  if (result == ncclInProgress)
    result = pollAsync(state->comm, deadlineAfter(state->timeout));
  if (result == ncclSuccess)
    return;
  state->broken = true;
  if (result == ncclInProgress)
    fail(TIDALRT_UNAVAILABLE,
         "%s: rank %d of %d waited %.0f s for NCCL to take the collective",
         what, state->rank, state->size, state->timeout);
  const char *last = ncclGetLastError(state->comm);
  fail(TIDALRT_INTERNAL, "%s: NCCL error %s%s%s", what,
       ncclGetErrorString(result), last && *last ? ": " : "", last ? last : "");
}

} // namespace cuda
} // namespace tidalrt
