// kernels.h - the small device kernels that the cuDNN/cuBLAS kernels need
// around the libraries (namespace tidalrt::cuda::lib): layout changes,
// bias fills, batch-norm statistics, and direct pooling for the windows
// cuDNN cannot express. Defined in kernels.cu (nvcc); every function
// enqueues on the current launch's stream and does nothing while preparing.
// Each output element is computed by one thread, in the CPU kernel's order,
// so results do not depend on the launch geometry.
#ifndef TIDALRT_CUDA_LIBRARY_KERNELS_H
#define TIDALRT_CUDA_LIBRARY_KERNELS_H

#include "../../cpu/kernel.h"

#include <cstdint>

namespace tidalrt {
namespace cuda {
namespace lib {

// A dense copy between two tensors of equal rank: dst[i] = src[i + offset]
// per dimension, or 0 where that lies outside src (pads and crops).
struct WindowCopy {
  static constexpr int kMaxRank = 5;
  int rank = 0;
  int64_t dst[kMaxRank] = {};
  int64_t src[kMaxRank] = {};
  int64_t offset[kMaxRank] = {};
};
void windowCopy(tidalrt_context_t *ctx, const char *kernel, const WindowCopy &g,
                const float *src, float *dst);

// y[p, s] (planes [N*M] of `spatial` elements) = bias[p % m], or 0 when
// `bias` is null; with `accumulate`, adds the bias to y instead.
void channelBias(tidalrt_context_t *ctx, const char *kernel, float *y,
                 const float *bias, int64_t planes, int64_t m, int64_t spatial,
                 bool accumulate);

// y[i, j] = beta * c[i * strideM + j * strideN] over [m, n] (gemm's C).
void broadcastScaled(tidalrt_context_t *ctx, const char *kernel, float *y,
                     const float *c, int64_t m, int64_t n, int64_t strideM,
                     int64_t strideN, float beta);

// Batch norm training, per channel: turns cuDNN's saved inverse standard
// deviation in `var` (1/sqrt(var + eps)) into the biased variance, and
// writes the running statistics as the CPU kernel does:
// new = running * momentum + batch * (1 - momentum), the variance
// unbiased by m / (m - 1) (1 when m <= 1). With `zeroStats` (no elements
// per channel) the batch statistics are 0 instead.
void batchNormFinish(tidalrt_context_t *ctx, const char *kernel,
                     int64_t channels, int64_t m, double eps, double momentum,
                     bool zeroStats, float *mean, float *var,
                     const float *runMean, const float *runVar, float *newMean,
                     float *newVar);

// inv[c] = 1 / sqrt(var[c] + eps), what cuDNN's backward takes.
void inverseStd(tidalrt_context_t *ctx, const char *kernel, int64_t channels,
                double eps, const float *var, float *inv);

// y[p] = mean of x[p, 0:spatial] (double sum in order; 0 when empty).
void planeMean(tidalrt_context_t *ctx, const char *kernel, int64_t planes,
               int64_t spatial, const float *x, float *y);

// A pooling window over `[planes, spatial...]`, as the CPU kernel's Window.
struct PoolWindow {
  static constexpr int kMaxDims = 8;
  int k = 0;
  int64_t planes = 0, inSp = 1, outSp = 1, kSp = 1;
  int64_t in[kMaxDims] = {}, out[kMaxDims] = {}, kernel[kMaxDims] = {};
  int64_t strides[kMaxDims] = {}, dilations[kMaxDims] = {};
  int64_t padBegin[kMaxDims] = {}, padEnd[kMaxDims] = {};
};

// The CPU kernel's direct loops (dnnl_pool.cpp), for windows cuDNN cannot
// express: the first maximum wins, NaNs never do; averages sum in double
// and divide by the in-bounds count or, with countIncludePad, by the window
// clipped to the padded input. Max pooling takes any element type the CPU
// kernel does (`type` is a tidalrt_element_type_t).
void maxPoolDirect(tidalrt_context_t *ctx, const char *kernel,
                   const PoolWindow &w, int type, const void *x, void *y);
void maxPoolBackwardDirect(tidalrt_context_t *ctx, const char *kernel,
                           const PoolWindow &w, const float *grad,
                           const float *x, float *gradInput);
void averagePoolDirect(tidalrt_context_t *ctx, const char *kernel,
                       const PoolWindow &w, bool countIncludePad,
                       const float *x, float *y);
void averagePoolBackwardDirect(tidalrt_context_t *ctx, const char *kernel,
                               const PoolWindow &w, bool countIncludePad,
                               const float *grad, float *gradInput);

} // namespace lib
} // namespace cuda
} // namespace tidalrt

#endif // TIDALRT_CUDA_LIBRARY_KERNELS_H
