// cuda_device.h - the state behind a CUDA device's handles (backend.cpp)
// and what cuda_context.cpp reads from it.
#ifndef TIDALRT_CUDA_CUDA_DEVICE_H
#define TIDALRT_CUDA_CUDA_DEVICE_H

#include "tidalrt/device.h"

#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <cudnn.h>

#include <atomic>
#include <cstddef>
#include <mutex>
#include <utility>
#include <vector>

namespace tidalrt {
namespace cuda {

struct nccl_state; // comm/nccl_state.h

struct cuda_device {
  int ordinal = 0;
  // The collectives of a data-parallel run (tidalrt_device_join_comm);
  // NULL until the device joins one, and without NCCL.
  nccl_state *nccl = nullptr;
  // Library handles, created on first use by a kernel (while preparing).
  cublasHandle_t cublas = nullptr;
  cudnnHandle_t cudnn = nullptr;
  // cuBLAS's own workspace (cublasSetWorkspace), so that it never
  // allocates during a step; allocated with the handle.
  void *cublas_workspace = nullptr;
  // Kernel workspace: the largest request seen while preparing, and the
  // allocation (made at the first request after preparation).
  size_t workspace_needed = 0;
  void *workspace = nullptr;
  size_t workspace_bytes = 0;
};

struct cuda_stream {
  cuda_device *device = nullptr;
  tidalrt_stream_kind_t kind = TIDALRT_STREAM_COMPUTE;
  cudaStream_t stream = nullptr;
  // Host streams: set by the first failed host function; later ones skip.
  std::atomic<bool> failed{false};
  std::mutex mutex;
  tidalrt_status_t failure = nullptr; // not yet reported
  // Copy streams: a start/stop event pair per copy since the last
  // synchronisation (the pool grows to the copies of one step, then stays).
  std::vector<std::pair<cudaEvent_t, cudaEvent_t>> timing;
  size_t timed = 0;
};

// The stream of the launch running on this thread (set around each compute
// launch and each kernel's preparation); NULL otherwise.
cuda_stream *currentLaunchStream();

// INTERNAL status "<what>: CUDA error <name>: <text>".
tidalrt_status_t cudaStatus(cudaError_t error, const char *what);

} // namespace cuda
} // namespace tidalrt

#endif // TIDALRT_CUDA_CUDA_DEVICE_H
