// launch.h - how tidal's own CUDA kernels are written, so that the same code
// runs on a GPU and, for tests, on the host CPU (namespace tidalrt::cuda).
//
// A kernel is a function template over a Launcher,
//
//   template <class L> void k_relu(L &l, tidalrt::OpCall &op);
//
// that checks the call, computes shapes and strides on the host, and then
// starts device work only through the launcher:
//
//   l.forEach(n, body)      runs body(i) for every i in [0, n): one GPU thread
//                           per index (a grid-stride loop); `body` is a
//                           functor with a TIDAL_HD operator()(int64_t) const,
//                           copied by value to the device, holding plain data
//                           and device pointers (never host pointers);
//   l.workspace(bytes)      device scratch shared by all kernels of the
//                           context (one stream runs them in order): while
//                           preparing, reserves and returns nullptr;
//   l.copy(dst, src, bytes) a device-to-device copy, in stream order;
//   l.zero(dst, bytes)      sets device bytes to 0, in stream order;
//   l.preparing()           true while the context prepares (nothing runs:
//                           forEach, copy and zero do nothing);
//   l.ctx                   the context (seed(), step(), the op's state).
//
// Work runs in the order it was started. Bodies compute one output element
// per index (a reduction loops over its axis inside the body), so results
// are deterministic and independent of the launch geometry.
//
// Two launchers exist:
//   GpuLauncher (gpu_launch.cuh, nvcc only): the context's CUDA stream;
//   EmuLauncher (below): runs everything at once on the calling thread,
//     over host memory. Emulated kernels (tidalrt_emu_k_<name>) are compiled
//     by the host compiler into the CPU runtime, with or without nvcc, and
//     the runtime tests compare them with the CPU kernels (tidalrt_k_<name>)
//     on the same descriptors: the index arithmetic of every CUDA kernel is
//     tested on machines without a GPU.
#ifndef TIDALRT_CUDA_LAUNCH_H
#define TIDALRT_CUDA_LAUNCH_H

#include "../cpu/kernel.h"

#include <cstdint>
#include <cstring>

#if defined(__CUDACC__)
#define TIDAL_HD __host__ __device__
#else
#define TIDAL_HD
#endif

namespace tidalrt {
namespace cuda {

// Runs a kernel's work on the calling thread over host memory.
struct EmuLauncher {
  tidalrt_context_t *ctx;
  const char *kernel;

  EmuLauncher(tidalrt_context_t *context, const char *name)
      : ctx(context), kernel(name) {}

  bool preparing() const { return tidalrt::preparing(ctx); }

  template <class Body> void forEach(int64_t n, const Body &body) const {
    if (preparing())
      return;
    for (int64_t i = 0; i < n; ++i)
      body(i);
  }

  void *workspace(size_t bytes) const {
    return bytes ? tidalrt::scratch(ctx, bytes) : nullptr;
  }

  void copy(void *dst, const void *src, size_t bytes) const {
    if (!preparing() && bytes && dst != src)
      std::memmove(dst, src, bytes);
  }

  void zero(void *dst, size_t bytes) const {
    if (!preparing() && bytes)
      std::memset(dst, 0, bytes);
  }
};

} // namespace cuda
} // namespace tidalrt

// Defines `extern "C" tidalrt_status_t <prefix><name>(ctx, desc, buffers)`
// that decodes the call and runs k_<name>(launcher, op) with `Launcher`
// (EmuLauncher in emulated kernels, GpuLauncher in .cu files). Use at file
// scope, after k_<name> is declared in namespace tidalrt::cuda.
#define TIDALRT_CUDA_DEFINE_KERNEL(prefix, name, Launcher)                     \
  extern "C" tidalrt_status_t prefix##name(                                    \
      tidalrt_context_t *ctx, const int64_t *desc, void *const *buffers) {     \
    return tidalrt::runKernel(ctx, desc, buffers, #name,                       \
                              [&](tidalrt::OpCall &op) {                       \
                                Launcher launcher(ctx, #name);                 \
                                tidalrt::cuda::k_##name(launcher, op);         \
                                return tidalrt::ok();                          \
                              });                                              \
  }

#endif // TIDALRT_CUDA_LAUNCH_H
