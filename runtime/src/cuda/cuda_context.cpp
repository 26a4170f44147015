// cuda_context.cpp - what CUDA kernels get from their device
// (cuda_context.h).
#include "cuda_context.h"

#include "cuda_device.h"

#include "../device/device_internal.h"

namespace tidalrt {
namespace cuda {

namespace {

// NVIDIA's recommendation for Hopper (32 MiB; 4 MiB suffices before it).
constexpr size_t kCublasWorkspaceBytes = size_t(32) << 20;

} // namespace

cuda_device *contextDevice(tidalrt_context_t *ctx) {
  tidalrt_device_t *device = tidalrt_context_device(ctx);
  if (!device || !device->backend || device->kind != TIDALRT_DEVICE_CUDA)
    fail(TIDALRT_INTERNAL, "the context has no CUDA device attached");
  return static_cast<cuda_device *>(device->native);
}

cudaStream_t currentStream(tidalrt_context_t *ctx) {
  contextDevice(ctx);
  cuda_stream *stream = currentLaunchStream();
  if (!stream)
    fail(TIDALRT_INTERNAL, "a CUDA kernel ran outside a launch on a compute "
                           "stream");
  return stream->stream;
}

cublasHandle_t cublas(tidalrt_context_t *ctx) {
  cuda_device *device = contextDevice(ctx);
  if (!device->cublas) {
    check(cublasCreate(&device->cublas), "cublasCreate");
    // float32 stays float32: no TF32 tensor-core rounding.
    check(cublasSetMathMode(device->cublas, CUBLAS_DEFAULT_MATH),
          "cublasSetMathMode");
    check(cudaMalloc(&device->cublas_workspace, kCublasWorkspaceBytes),
          "cudaMalloc (cuBLAS workspace)");
  }
  // cublasSetStream resets the workspace to cuBLAS's own pool, which it
  // would allocate on first use: ours, every time.
  check(cublasSetStream(device->cublas, currentStream(ctx)), "cublasSetStream");
  check(cublasSetWorkspace(device->cublas, device->cublas_workspace,
                           kCublasWorkspaceBytes),
        "cublasSetWorkspace");
  return device->cublas;
}

cudnnHandle_t cudnn(tidalrt_context_t *ctx) {
  cuda_device *device = contextDevice(ctx);
  if (!device->cudnn)
    check(cudnnCreate(&device->cudnn), "cudnnCreate");
  check(cudnnSetStream(device->cudnn, currentStream(ctx)), "cudnnSetStream");
  return device->cudnn;
}

void *workspace(tidalrt_context_t *ctx, size_t bytes) {
  cuda_device *device = contextDevice(ctx);
  if (tidalrt::preparing(ctx)) {
    if (bytes > device->workspace_needed)
      device->workspace_needed = bytes;
    return nullptr;
  }
  if (bytes > device->workspace_bytes) {
    // Only after preparation, before the first step's kernels (or on
    // demand for a context that was never prepared). cudaFree waits for the
    // device, so no kernel still uses the old allocation.
    size_t size =
        bytes > device->workspace_needed ? bytes : device->workspace_needed;
    check(cudaFree(device->workspace), "cudaFree (workspace)");
    device->workspace = nullptr;
    device->workspace_bytes = 0;
    check(cudaMalloc(&device->workspace, size), "cudaMalloc (workspace)");
    device->workspace_bytes = size;
  }
  return device->workspace;
}

void check(cudaError_t error, const char *what) {
  if (error != cudaSuccess)
    fail(TIDALRT_INTERNAL, "%s: CUDA error %s: %s", what,
         cudaGetErrorName(error), cudaGetErrorString(error));
}

void check(cublasStatus_t status, const char *what) {
  if (status != CUBLAS_STATUS_SUCCESS)
    fail(TIDALRT_INTERNAL, "%s: cuBLAS error %s: %s", what,
         cublasGetStatusName(status), cublasGetStatusString(status));
}

void check(cudnnStatus_t status, const char *what) {
  if (status != CUDNN_STATUS_SUCCESS)
    fail(TIDALRT_INTERNAL, "%s: cuDNN error %s", what,
         cudnnGetErrorString(status));
}

} // namespace cuda
} // namespace tidalrt
