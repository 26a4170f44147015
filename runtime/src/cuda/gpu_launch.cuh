// gpu_launch.cuh - the GPU launcher of tidal's own CUDA kernels (launch.h):
// their work goes to the CUDA stream of the calling thread's launch
// (cuda_context.h). nvcc only.
#ifndef TIDALRT_CUDA_GPU_LAUNCH_CUH
#define TIDALRT_CUDA_GPU_LAUNCH_CUH

#include "cuda_context.h"
#include "launch.h"

namespace tidalrt {
namespace cuda {

template <class Body> __global__ void forEachKernel(int64_t n, Body body) {
  const int64_t stride = (int64_t)gridDim.x * blockDim.x;
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += stride)
    body(i);
}

struct GpuLauncher {
  static constexpr int kThreads = 256;
  // Enough blocks to fill an H100/H200 several times over; larger ranges
  // loop inside the kernel.
  static constexpr int64_t kMaxBlocks = 132 * 32;

  tidalrt_context_t *ctx;
  const char *kernel;
  cudaStream_t stream;

  GpuLauncher(tidalrt_context_t *context, const char *name)
      : ctx(context), kernel(name), stream(currentStream(context)) {}

  bool preparing() const { return tidalrt::preparing(ctx); }

  template <class Body> void forEach(int64_t n, const Body &body) const {
    if (preparing() || n <= 0)
      return;
    int64_t blocks = (n + kThreads - 1) / kThreads;
    if (blocks > kMaxBlocks)
      blocks = kMaxBlocks;
    forEachKernel<Body><<<(unsigned)blocks, kThreads, 0, stream>>>(n, body);
    check(cudaGetLastError(), kernel);
  }

  void *workspace(size_t bytes) const {
    return bytes ? tidalrt::cuda::workspace(ctx, bytes) : nullptr;
  }

  void copy(void *dst, const void *src, size_t bytes) const {
    if (!preparing() && bytes && dst != src)
      check(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, stream),
            kernel);
  }

  void zero(void *dst, size_t bytes) const {
    if (!preparing() && bytes)
      check(cudaMemsetAsync(dst, 0, bytes, stream), kernel);
  }
};

} // namespace cuda
} // namespace tidalrt

#endif // TIDALRT_CUDA_GPU_LAUNCH_CUH
