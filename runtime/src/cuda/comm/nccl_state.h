// nccl_state.h - a CUDA device's collectives (tidalrt_device_join_comm):
// the NCCL communicator over the ranks of a data-parallel run, the stream
// the collectives run on, and per bucket its events and staging memory.
// Part of tidalrt_cuda when the build found NCCL (TIDALRT_HAVE_NCCL).
//
// The communicator is non-blocking (ncclConfig_t.blocking = 0): every
// NCCL call returns at once and is polled against the run's timeout, so a
// rank that died or never joined makes the others fail with UNAVAILABLE
// (and aborts the communicator) instead of hanging.
#ifndef TIDALRT_CUDA_COMM_NCCL_STATE_H
#define TIDALRT_CUDA_COMM_NCCL_STATE_H

#include "tidalrt/comm.h"

#include <cuda_runtime_api.h>
#include <nccl.h>

#include <cstdint>
#include <map>
#include <utility>
#include <vector>

namespace tidalrt {
namespace cuda {

struct cuda_device;

// One bucket of one kind of collective (all-reduce, all-gather or
// reduce-scatter) of the step: the event its operands are ready at on the
// compute stream, the event its collective ends at on the collective
// stream, and (all-gather, reduce-scatter) a staging buffer outside the
// arena where the collective runs, ranks * chunk floats per tensor.
struct nccl_bucket {
  cudaEvent_t ready = nullptr;
  cudaEvent_t done = nullptr;
  float *staging = nullptr;
  size_t staging_floats = 0;
  size_t staging_needed = 0;    // the largest request while preparing
  std::vector<size_t> offsets;  // per tensor, in staging (floats)
  std::vector<uint64_t> chunks; // per tensor: the chunk's floats
  bool started = false;
};

enum class nccl_kind { ALL_REDUCE = 0, ALL_GATHER = 1, REDUCE_SCATTER = 2 };

struct nccl_state {
  ncclComm_t comm = nullptr;
  int rank = 0;
  int size = 1;
  double timeout = 300.0;
  cudaStream_t stream = nullptr; // the collectives run here
  bool broken = false;           // a collective failed or timed out
  // ncclRedOpCreatePreMulSum ops by divisor (1 / divisor before the sum).
  std::map<int64_t, ncclRedOp_t> scaled_sums;
  std::map<std::pair<int, int64_t>, nccl_bucket> buckets;
};

// Joins (or re-joins) the device to the ranks of `comm`.
tidalrt_status_t nccl_join(cuda_device *device, tidalrt_comm_t *comm,
                           double timeout_seconds);
// Frees the device's NCCL state (after the device synchronised): aborts a
// broken communicator, else finalizes it.
void nccl_free(cuda_device *device);
// Blocks until `stream`'s work is done, polling NCCL's asynchronous errors
// and the timeout; a stuck collective aborts the communicator and returns
// UNAVAILABLE. NULL: done.
tidalrt_status_t nccl_synchronize(nccl_state *state, cudaStream_t stream);

// Waits until NCCL work issued on a non-blocking communicator is enqueued
// (ncclInProgress), within the timeout; fails (KernelError) naming `what`.
void nccl_settle(nccl_state *state, ncclResult_t result, const char *what);

} // namespace cuda
} // namespace tidalrt

#endif // TIDALRT_CUDA_COMM_NCCL_STATE_H
