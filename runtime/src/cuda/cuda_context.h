// cuda_context.h - what CUDA kernels get from the CUDA device attached to
// their context: the stream to enqueue on, the cuBLAS and cuDNN handles, the
// device workspace, and error checks (namespace tidalrt::cuda). Compiled by
// nvcc and by the host compiler against the CUDA headers; part of
// tidalrt_cuda, which exists only when the build found nvcc.
#ifndef TIDALRT_CUDA_CUDA_CONTEXT_H
#define TIDALRT_CUDA_CUDA_CONTEXT_H

#include "../cpu/kernel.h"

#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <cudnn.h>

#include <cstddef>

namespace tidalrt {
namespace cuda {

struct cuda_device;

// The CUDA device attached to `ctx`; throws KernelError (INTERNAL) if none.
cuda_device *contextDevice(tidalrt_context_t *ctx);

// The stream that work of the current launch goes to: set by the CUDA
// device around each kernel it runs (tidalrt_stream_launch on a compute
// stream runs the kernel on the calling thread, which enqueues). Throws
// KernelError (INTERNAL) if `ctx` has no CUDA device attached.
cudaStream_t currentStream(tidalrt_context_t *ctx);

// The device's cuBLAS and cuDNN handles, bound to currentStream(ctx)
// (created on first use; float32 maths without TF32).
cublasHandle_t cublas(tidalrt_context_t *ctx);
cudnnHandle_t cudnn(tidalrt_context_t *ctx);

// Device scratch shared by the kernels of the context's device (one compute
// stream runs them in order). While preparing, reserves `bytes` and returns
// nullptr; otherwise returns at least `bytes` bytes, 256-byte aligned
// (allocated after preparation, the only device allocation outside the
// arena).
void *workspace(tidalrt_context_t *ctx, size_t bytes);

// Throw KernelError naming `what` and the library's error on failure.
void check(cudaError_t error, const char *what);
void check(cublasStatus_t status, const char *what);
void check(cudnnStatus_t status, const char *what);

} // namespace cuda
} // namespace tidalrt

#endif // TIDALRT_CUDA_CUDA_CONTEXT_H
