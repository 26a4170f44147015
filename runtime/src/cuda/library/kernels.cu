// kernels.cu - the small device kernels of the cuDNN/cuBLAS kernels
// (kernels.h), run through the GPU launcher of tidal's own kernels.
#include "../gpu_launch.cuh"
#include "kernels.h"

#include <cmath>
#include <limits>

namespace tidalrt {
namespace cuda {
namespace lib {

namespace {

struct WindowCopyBody {
  WindowCopy g;
  const float *src;
  float *dst;

  __device__ void operator()(int64_t i) const {
    int64_t idx[WindowCopy::kMaxRank];
    int64_t r = i;
    for (int d = g.rank - 1; d >= 0; --d) {
      idx[d] = r % g.dst[d];
      r /= g.dst[d];
    }
    int64_t flat = 0;
    for (int d = 0; d < g.rank; ++d) {
      int64_t s = idx[d] + g.offset[d];
      if (s < 0 || s >= g.src[d]) {
        dst[i] = 0.0f;
        return;
      }
      flat = flat * g.src[d] + s;
    }
    dst[i] = src[flat];
  }
};

struct ChannelBiasBody {
  float *y;
  const float *bias;
  int64_t m, spatial;
  bool accumulate;

  __device__ void operator()(int64_t i) const {
    float b = bias ? bias[(i / spatial) % m] : 0.0f;
    y[i] = accumulate ? y[i] + b : b;
  }
};

struct BroadcastScaledBody {
  float *y;
  const float *c;
  int64_t n, strideM, strideN;
  float beta;

  __device__ void operator()(int64_t i) const {
    int64_t row = i / n, col = i % n;
    y[i] = beta * c[row * strideM + col * strideN];
  }
};

struct BatchNormFinishBody {
  int64_t m;
  double eps, momentum;
  bool zeroStats;
  float *mean, *var;
  const float *runMean, *runVar;
  float *newMean, *newVar;

  __device__ void operator()(int64_t c) const {
    float mu = 0.0f, v = 0.0f;
    if (zeroStats) {
      mean[c] = 0.0f;
    } else {
      mu = mean[c];
      double inv = var[c];
      double vv = __dadd_rn(1.0 / __dmul_rn(inv, inv), -eps);
      v = vv < 0.0 ? 0.0f : (float)vv;
    }
    var[c] = v;
    // The CPU kernel's expressions, rounded the same way (no contraction
    // into fused multiply-adds).
    double unbias = m > 1 ? (double)m / (double)(m - 1) : 1.0;
    double keep = momentum, take = __dadd_rn(1.0, -momentum);
    newMean[c] = (float)__dadd_rn(__dmul_rn((double)runMean[c], keep),
                                  __dmul_rn((double)mu, take));
    newVar[c] = (float)__dadd_rn(__dmul_rn((double)runVar[c], keep),
                                 __dmul_rn(__dmul_rn((double)v, unbias), take));
  }
};

struct InverseStdBody {
  double eps;
  const float *var;
  float *inv;

  __device__ void operator()(int64_t c) const {
    inv[c] = (float)(1.0 / sqrt((double)var[c] + eps));
  }
};

struct PlaneMeanBody {
  int64_t spatial;
  const float *x;
  float *y;

  __device__ void operator()(int64_t p) const {
    const float *xp = x + p * spatial;
    double sum = 0.0;
    for (int64_t i = 0; i < spatial; ++i)
      sum += xp[i];
    y[p] = spatial ? (float)(sum / (double)spatial) : 0.0f;
  }
};

// Window arithmetic shared by the pooling bodies.
struct WindowOps {
  PoolWindow w;

  // The multi-index of flat position `flat` over `dims` (last fastest).
  __device__ void split(int64_t flat, const int64_t *dims, int64_t *idx) const {
    for (int d = w.k - 1; d >= 0; --d) {
      idx[d] = flat % dims[d];
      flat /= dims[d];
    }
  }

  // The flat input position of kernel element `ks` of the window at output
  // `o`, or -1 when it lies in the padding.
  __device__ int64_t position(const int64_t *o, int64_t ks) const {
    int64_t kk[PoolWindow::kMaxDims];
    split(ks, w.kernel, kk);
    int64_t flat = 0;
    for (int d = 0; d < w.k; ++d) {
      int64_t i = o[d] * w.strides[d] - w.padBegin[d] + kk[d] * w.dilations[d];
      if (i < 0 || i >= w.in[d])
        return -1;
      flat = flat * w.in[d] + i;
    }
    return flat;
  }

  // The CPU kernel's divisor of the window at `o`.
  __device__ int64_t divisor(const int64_t *o, bool countIncludePad) const {
    int64_t div = 1;
    for (int d = 0; d < w.k; ++d) {
      int64_t s = o[d] * w.strides[d] - w.padBegin[d];
      if (countIncludePad) {
        int64_t end = s + w.kernel[d] < w.in[d] + w.padEnd[d]
                          ? s + w.kernel[d]
                          : w.in[d] + w.padEnd[d];
        div *= end - s;
      } else {
        int64_t count = 0;
        for (int64_t j = 0; j < w.kernel[d]; ++j) {
          int64_t i = s + j * w.dilations[d];
          count += i >= 0 && i < w.in[d];
        }
        div *= count;
      }
    }
    return div;
  }

  // The first maximum of the window at `o` over the plane `xp` (-1 when the
  // window lies wholly in the padding).
  __device__ int64_t argmax(const float *xp, const int64_t *o) const {
    int64_t arg = -1;
    for (int64_t ks = 0; ks < w.kSp; ++ks) {
      int64_t i = position(o, ks);
      if (i >= 0 && (arg < 0 || xp[i] > xp[arg]))
        arg = i;
    }
    return arg;
  }

  // Calls f(os, o) for every output whose window holds input position `is`
  // (multi-index `idx`), in increasing order of os: the order in which the
  // CPU kernel's backward loops add into that input's gradient.
  template <class F>
  __device__ void forEachOutput(const int64_t *idx, const F &f) const {
    int64_t lo[PoolWindow::kMaxDims], hi[PoolWindow::kMaxDims];
    int64_t o[PoolWindow::kMaxDims];
    for (int d = 0; d < w.k; ++d) {
      int64_t reach = idx[d] + w.padBegin[d];
      int64_t t = reach - (w.kernel[d] - 1) * w.dilations[d];
      lo[d] = t <= 0 ? 0 : (t + w.strides[d] - 1) / w.strides[d];
      hi[d] = reach / w.strides[d];
      if (hi[d] > w.out[d] - 1)
        hi[d] = w.out[d] - 1;
      if (lo[d] > hi[d])
        return;
      o[d] = lo[d];
    }
    for (;;) {
      bool hit = true;
      int64_t os = 0;
      for (int d = 0; d < w.k; ++d) {
        int64_t off = idx[d] + w.padBegin[d] - o[d] * w.strides[d];
        hit = hit && off % w.dilations[d] == 0;
        os = os * w.out[d] + o[d];
      }
      if (hit)
        f(os, o);
      int d = w.k - 1;
      for (; d >= 0; --d) {
        if (++o[d] <= hi[d])
          break;
        o[d] = lo[d];
      }
      if (d < 0)
        return;
    }
  }
};

template <typename T> struct MaxPoolBody {
  WindowOps ops;
  const T *x;
  T *y;
  T lowest;

  __device__ void operator()(int64_t i) const {
    const PoolWindow &w = ops.w;
    int64_t p = i / w.outSp, os = i % w.outSp;
    int64_t o[PoolWindow::kMaxDims];
    ops.split(os, w.out, o);
    const T *xp = x + p * w.inSp;
    T best = lowest;
    for (int64_t ks = 0; ks < w.kSp; ++ks) {
      int64_t j = ops.position(o, ks);
      if (j >= 0 && best < xp[j])
        best = xp[j];
    }
    y[i] = best;
  }
};

struct AveragePoolBody {
  WindowOps ops;
  bool countIncludePad;
  const float *x;
  float *y;

  __device__ void operator()(int64_t i) const {
    const PoolWindow &w = ops.w;
    int64_t p = i / w.outSp, os = i % w.outSp;
    int64_t o[PoolWindow::kMaxDims];
    ops.split(os, w.out, o);
    const float *xp = x + p * w.inSp;
    double sum = 0.0;
    for (int64_t ks = 0; ks < w.kSp; ++ks) {
      int64_t j = ops.position(o, ks);
      if (j >= 0)
        sum += xp[j];
    }
    int64_t div = ops.divisor(o, countIncludePad);
    y[i] = div > 0 ? (float)(sum / (double)div) : 0.0f;
  }
};

struct MaxPoolBackwardBody {
  WindowOps ops;
  const float *grad, *x;
  float *gradInput;

  __device__ void operator()(int64_t i) const {
    const PoolWindow &w = ops.w;
    int64_t p = i / w.inSp, is = i % w.inSp;
    int64_t idx[PoolWindow::kMaxDims];
    ops.split(is, w.in, idx);
    const float *xp = x + p * w.inSp, *gp = grad + p * w.outSp;
    float acc = 0.0f;
    ops.forEachOutput(idx, [&](int64_t os, const int64_t *o) {
      if (ops.argmax(xp, o) == is)
        acc += gp[os];
    });
    gradInput[i] = acc;
  }
};

struct AveragePoolBackwardBody {
  WindowOps ops;
  bool countIncludePad;
  const float *grad;
  float *gradInput;

  __device__ void operator()(int64_t i) const {
    const PoolWindow &w = ops.w;
    int64_t p = i / w.inSp, is = i % w.inSp;
    int64_t idx[PoolWindow::kMaxDims];
    ops.split(is, w.in, idx);
    const float *gp = grad + p * w.outSp;
    float acc = 0.0f;
    ops.forEachOutput(idx, [&](int64_t os, const int64_t *o) {
      int64_t div = ops.divisor(o, countIncludePad);
      if (div > 0)
        acc += (float)((double)gp[os] / (double)div);
    });
    gradInput[i] = acc;
  }
};

template <typename T> T lowestOf() {
  return std::numeric_limits<T>::has_infinity
             ? -std::numeric_limits<T>::infinity()
             : std::numeric_limits<T>::lowest();
}

template <typename T>
void maxPoolTyped(const GpuLauncher &l, const PoolWindow &w, const void *x,
                  void *y) {
  l.forEach(w.planes * w.outSp,
            MaxPoolBody<T>{WindowOps{w}, static_cast<const T *>(x),
                           static_cast<T *>(y), lowestOf<T>()});
}

} // namespace

void windowCopy(tidalrt_context_t *ctx, const char *kernel, const WindowCopy &g,
                const float *src, float *dst) {
  int64_t n = 1;
  for (int d = 0; d < g.rank; ++d)
    n *= g.dst[d];
  GpuLauncher(ctx, kernel).forEach(n, WindowCopyBody{g, src, dst});
}

void channelBias(tidalrt_context_t *ctx, const char *kernel, float *y,
                 const float *bias, int64_t planes, int64_t m, int64_t spatial,
                 bool accumulate) {
  GpuLauncher(ctx, kernel)
      .forEach(planes * spatial,
               ChannelBiasBody{y, bias, m, spatial, accumulate});
}

void broadcastScaled(tidalrt_context_t *ctx, const char *kernel, float *y,
                     const float *c, int64_t m, int64_t n, int64_t strideM,
                     int64_t strideN, float beta) {
  GpuLauncher(ctx, kernel)
      .forEach(m * n, BroadcastScaledBody{y, c, n, strideM, strideN, beta});
}

void batchNormFinish(tidalrt_context_t *ctx, const char *kernel,
                     int64_t channels, int64_t m, double eps, double momentum,
                     bool zeroStats, float *mean, float *var,
                     const float *runMean, const float *runVar, float *newMean,
                     float *newVar) {
  GpuLauncher(ctx, kernel)
      .forEach(channels,
               BatchNormFinishBody{m, eps, momentum, zeroStats, mean, var,
                                   runMean, runVar, newMean, newVar});
}

void inverseStd(tidalrt_context_t *ctx, const char *kernel, int64_t channels,
                double eps, const float *var, float *inv) {
  GpuLauncher(ctx, kernel).forEach(channels, InverseStdBody{eps, var, inv});
}

void planeMean(tidalrt_context_t *ctx, const char *kernel, int64_t planes,
               int64_t spatial, const float *x, float *y) {
  GpuLauncher(ctx, kernel).forEach(planes, PlaneMeanBody{spatial, x, y});
}

void maxPoolDirect(tidalrt_context_t *ctx, const char *kernel,
                   const PoolWindow &w, int type, const void *x, void *y) {
  GpuLauncher l(ctx, kernel);
  switch (type) {
  case TIDALRT_ELEMENT_TYPE_F32:
    return maxPoolTyped<float>(l, w, x, y);
  case TIDALRT_ELEMENT_TYPE_F64:
    return maxPoolTyped<double>(l, w, x, y);
  case TIDALRT_ELEMENT_TYPE_I8:
    return maxPoolTyped<int8_t>(l, w, x, y);
  case TIDALRT_ELEMENT_TYPE_U8:
    return maxPoolTyped<uint8_t>(l, w, x, y);
  case TIDALRT_ELEMENT_TYPE_I16:
    return maxPoolTyped<int16_t>(l, w, x, y);
  case TIDALRT_ELEMENT_TYPE_U16:
    return maxPoolTyped<uint16_t>(l, w, x, y);
  case TIDALRT_ELEMENT_TYPE_I32:
    return maxPoolTyped<int32_t>(l, w, x, y);
  case TIDALRT_ELEMENT_TYPE_I64:
    return maxPoolTyped<int64_t>(l, w, x, y);
  case TIDALRT_ELEMENT_TYPE_U32:
    return maxPoolTyped<uint32_t>(l, w, x, y);
  case TIDALRT_ELEMENT_TYPE_U64:
    return maxPoolTyped<uint64_t>(l, w, x, y);
  default:
    fail(TIDALRT_INTERNAL, "max pooling of element type %d", type);
  }
}

void maxPoolBackwardDirect(tidalrt_context_t *ctx, const char *kernel,
                           const PoolWindow &w, const float *grad,
                           const float *x, float *gradInput) {
  GpuLauncher(ctx, kernel)
      .forEach(w.planes * w.inSp,
               MaxPoolBackwardBody{WindowOps{w}, grad, x, gradInput});
}

void averagePoolDirect(tidalrt_context_t *ctx, const char *kernel,
                       const PoolWindow &w, bool countIncludePad,
                       const float *x, float *y) {
  GpuLauncher(ctx, kernel)
      .forEach(w.planes * w.outSp,
               AveragePoolBody{WindowOps{w}, countIncludePad, x, y});
}

void averagePoolBackwardDirect(tidalrt_context_t *ctx, const char *kernel,
                               const PoolWindow &w, bool countIncludePad,
                               const float *grad, float *gradInput) {
  GpuLauncher(ctx, kernel)
      .forEach(w.planes * w.inSp,
               AveragePoolBackwardBody{WindowOps{w}, countIncludePad, grad,
                                       gradInput});
}

} // namespace lib
} // namespace cuda
} // namespace tidalrt
