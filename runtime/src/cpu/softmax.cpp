// softmax.cpp - softmax and log-softmax forward and backward (float32).
//
// The tensor is seen as outer x n x inner around the axis. With inner == 1
// (the last axis, the common case) each row of n contiguous elements is one
// work item; otherwise a work item is one outer index and a block of up to
// 64 inner columns, processed with per-column running statistics so that
// memory is read in contiguous runs. Every row is reduced by one thread in
// a fixed order (sums in double), so results do not depend on the thread
// count. Forward subtracts the row maximum before exponentiating.
#include "other_util.h"
#include "softmax_checks.h"

#include <algorithm>

namespace tidalrt {
namespace other {
namespace {

enum class Op { Softmax, LogSoftmax, SoftmaxBackward, LogSoftmaxBackward };

constexpr int64_t kBlock = 64;

//===----------------------------------------------------------------------===//
// Scalar code
//===----------------------------------------------------------------------===//

// One row of n contiguous elements. For the backward ops `a` is grad and `b`
// the forward output; for forward `a` is the input and `b` unused.
void rowScalar(Op kind, const float *a, const float *b, float *out, int64_t n) {
  switch (kind) {
  case Op::Softmax:
  case Op::LogSoftmax: {
    float mx = -std::numeric_limits<float>::infinity();
    for (int64_t k = 0; k < n; ++k)
      mx = std::max(mx, a[k]);
    double sum = 0.0;
    if (kind == Op::Softmax) {
      for (int64_t k = 0; k < n; ++k) {
        float e = std::exp(a[k] - mx);
        out[k] = e;
        sum += e;
      }
      float inv = (float)(1.0 / sum);
      for (int64_t k = 0; k < n; ++k)
        out[k] *= inv;
    } else {
      for (int64_t k = 0; k < n; ++k)
        sum += std::exp(a[k] - mx);
      float lse = (float)std::log(sum);
      for (int64_t k = 0; k < n; ++k)
        out[k] = (a[k] - mx) - lse;
    }
    break;
  }
  case Op::SoftmaxBackward: {
    double sum = 0.0;
    for (int64_t k = 0; k < n; ++k)
      sum += (double)a[k] * b[k];
    float s = (float)sum;
    for (int64_t k = 0; k < n; ++k)
      out[k] = b[k] * (a[k] - s);
    break;
  }
  case Op::LogSoftmaxBackward: {
    double sum = 0.0;
    for (int64_t k = 0; k < n; ++k)
      sum += a[k];
    float s = (float)sum;
    for (int64_t k = 0; k < n; ++k)
      out[k] = a[k] - std::exp(b[k]) * s;
    break;
  }
  }
}

// Columns [0, w) of one outer slice: element (k, i) is at k * inner + i.
void blockScalar(Op kind, const float *a, const float *b, float *out, int64_t n,
                 int64_t inner, int64_t w) {
  float mx[kBlock];
  double sum[kBlock];
  for (int64_t i = 0; i < w; ++i)
    sum[i] = 0.0;
  switch (kind) {
  case Op::Softmax:
  case Op::LogSoftmax:
    for (int64_t i = 0; i < w; ++i)
      mx[i] = -std::numeric_limits<float>::infinity();
    for (int64_t k = 0; k < n; ++k)
      for (int64_t i = 0; i < w; ++i)
        mx[i] = std::max(mx[i], a[k * inner + i]);
    for (int64_t k = 0; k < n; ++k)
      for (int64_t i = 0; i < w; ++i) {
        float e = std::exp(a[k * inner + i] - mx[i]);
        if (kind == Op::Softmax)
          out[k * inner + i] = e;
        sum[i] += e;
      }
    if (kind == Op::Softmax) {
      float inv[kBlock];
      for (int64_t i = 0; i < w; ++i)
        inv[i] = (float)(1.0 / sum[i]);
      for (int64_t k = 0; k < n; ++k)
        for (int64_t i = 0; i < w; ++i)
          out[k * inner + i] *= inv[i];
    } else {
      float lse[kBlock];
      for (int64_t i = 0; i < w; ++i)
        lse[i] = (float)std::log(sum[i]);
      for (int64_t k = 0; k < n; ++k)
        for (int64_t i = 0; i < w; ++i)
          out[k * inner + i] = (a[k * inner + i] - mx[i]) - lse[i];
    }
    break;
  case Op::SoftmaxBackward:
  case Op::LogSoftmaxBackward: {
    bool log = kind == Op::LogSoftmaxBackward;
    for (int64_t k = 0; k < n; ++k)
      for (int64_t i = 0; i < w; ++i) {
        int64_t j = k * inner + i;
        sum[i] += log ? (double)a[j] : (double)a[j] * b[j];
      }
    float s[kBlock];
    for (int64_t i = 0; i < w; ++i)
      s[i] = (float)sum[i];
    for (int64_t k = 0; k < n; ++k)
      for (int64_t i = 0; i < w; ++i) {
        int64_t j = k * inner + i;
        out[j] = log ? a[j] - std::exp(b[j]) * s[i] : b[j] * (a[j] - s[i]);
      }
    break;
  }
  }
}

//===----------------------------------------------------------------------===//
// AVX2 code (same algorithm, 8 lanes; sums in double lanes)
//===----------------------------------------------------------------------===//

#if TIDALRT_OTHER_X86
#define TIDALRT_AVX2 __attribute__((target("avx2,fma")))

TIDALRT_AVX2 inline void addDouble(__m256d &lo, __m256d &hi, __m256 v) {
  lo = _mm256_add_pd(lo, _mm256_cvtps_pd(_mm256_castps256_ps128(v)));
  hi = _mm256_add_pd(hi, _mm256_cvtps_pd(_mm256_extractf128_ps(v, 1)));
}

TIDALRT_AVX2 inline double hsumDouble(__m256d lo, __m256d hi) {
  __m256d s = _mm256_add_pd(lo, hi);
  __m128d t =
      _mm_add_pd(_mm256_castpd256_pd128(s), _mm256_extractf128_pd(s, 1));
  t = _mm_add_sd(t, _mm_unpackhi_pd(t, t));
  return _mm_cvtsd_f64(t);
}

TIDALRT_AVX2 void rowAvx2(Op kind, const float *a, const float *b, float *out,
                          int64_t n) {
  int64_t n8 = n & ~(int64_t)7;
  __m256d lo = _mm256_setzero_pd(), hi = _mm256_setzero_pd();
  double tail = 0.0;
  switch (kind) {
  case Op::Softmax:
  case Op::LogSoftmax: {
    __m256 vmx = _mm256_set1_ps(-std::numeric_limits<float>::infinity());
    for (int64_t k = 0; k < n8; k += 8)
      vmx = _mm256_max_ps(vmx, _mm256_loadu_ps(a + k));
    float mx = hmax256(vmx);
    for (int64_t k = n8; k < n; ++k)
      mx = std::max(mx, a[k]);
    vmx = _mm256_set1_ps(mx);
    if (kind == Op::Softmax) {
      for (int64_t k = 0; k < n8; k += 8) {
        __m256 e = exp256(_mm256_sub_ps(_mm256_loadu_ps(a + k), vmx));
        _mm256_storeu_ps(out + k, e);
        addDouble(lo, hi, e);
      }
      for (int64_t k = n8; k < n; ++k) {
        float e = std::exp(a[k] - mx);
        out[k] = e;
        tail += e;
      }
      float inv = (float)(1.0 / (hsumDouble(lo, hi) + tail));
      __m256 vinv = _mm256_set1_ps(inv);
      for (int64_t k = 0; k < n8; k += 8)
        _mm256_storeu_ps(out + k,
                         _mm256_mul_ps(_mm256_loadu_ps(out + k), vinv));
      for (int64_t k = n8; k < n; ++k)
        out[k] *= inv;
    } else {
      for (int64_t k = 0; k < n8; k += 8)
        addDouble(lo, hi, exp256(_mm256_sub_ps(_mm256_loadu_ps(a + k), vmx)));
      for (int64_t k = n8; k < n; ++k)
        tail += std::exp(a[k] - mx);
      float lse = (float)std::log(hsumDouble(lo, hi) + tail);
      __m256 vlse = _mm256_set1_ps(lse);
      for (int64_t k = 0; k < n8; k += 8)
        _mm256_storeu_ps(
            out + k,
            _mm256_sub_ps(_mm256_sub_ps(_mm256_loadu_ps(a + k), vmx), vlse));
      for (int64_t k = n8; k < n; ++k)
        out[k] = (a[k] - mx) - lse;
    }
    break;
  }
  case Op::SoftmaxBackward: {
    for (int64_t k = 0; k < n8; k += 8) {
      __m256 g = _mm256_loadu_ps(a + k), y = _mm256_loadu_ps(b + k);
      __m128 g0 = _mm256_castps256_ps128(g), g1 = _mm256_extractf128_ps(g, 1);
      __m128 y0 = _mm256_castps256_ps128(y), y1 = _mm256_extractf128_ps(y, 1);
      lo = _mm256_fmadd_pd(_mm256_cvtps_pd(g0), _mm256_cvtps_pd(y0), lo);
      hi = _mm256_fmadd_pd(_mm256_cvtps_pd(g1), _mm256_cvtps_pd(y1), hi);
    }
    for (int64_t k = n8; k < n; ++k)
      tail += (double)a[k] * b[k];
    float s = (float)(hsumDouble(lo, hi) + tail);
    __m256 vs = _mm256_set1_ps(s);
    for (int64_t k = 0; k < n8; k += 8)
      _mm256_storeu_ps(
          out + k, _mm256_mul_ps(_mm256_loadu_ps(b + k),
                                 _mm256_sub_ps(_mm256_loadu_ps(a + k), vs)));
    for (int64_t k = n8; k < n; ++k)
      out[k] = b[k] * (a[k] - s);
    break;
  }
  case Op::LogSoftmaxBackward: {
    for (int64_t k = 0; k < n8; k += 8)
      addDouble(lo, hi, _mm256_loadu_ps(a + k));
    for (int64_t k = n8; k < n; ++k)
      tail += a[k];
    float s = (float)(hsumDouble(lo, hi) + tail);
    __m256 vs = _mm256_set1_ps(s);
    for (int64_t k = 0; k < n8; k += 8)
      _mm256_storeu_ps(out + k, _mm256_fnmadd_ps(exp256(_mm256_loadu_ps(b + k)),
                                                 vs, _mm256_loadu_ps(a + k)));
    for (int64_t k = n8; k < n; ++k)
      out[k] = a[k] - std::exp(b[k]) * s;
    break;
  }
  }
}

// Columns [0, w) of one outer slice, w a multiple of 8.
TIDALRT_AVX2 void blockAvx2(Op kind, const float *a, const float *b, float *out,
                            int64_t n, int64_t inner, int64_t w) {
  constexpr int kV = kBlock / 8;
  int v = (int)(w / 8);
  __m256 mx[kV], s[kV];
  __m256d lo[kV], hi[kV];
  for (int q = 0; q < v; ++q) {
    lo[q] = _mm256_setzero_pd();
    hi[q] = _mm256_setzero_pd();
  }
  switch (kind) {
  case Op::Softmax:
  case Op::LogSoftmax:
    for (int q = 0; q < v; ++q)
      mx[q] = _mm256_set1_ps(-std::numeric_limits<float>::infinity());
    for (int64_t k = 0; k < n; ++k)
      for (int q = 0; q < v; ++q)
        mx[q] = _mm256_max_ps(mx[q], _mm256_loadu_ps(a + k * inner + 8 * q));
    for (int64_t k = 0; k < n; ++k)
      for (int q = 0; q < v; ++q) {
        int64_t j = k * inner + 8 * q;
        __m256 e = exp256(_mm256_sub_ps(_mm256_loadu_ps(a + j), mx[q]));
        if (kind == Op::Softmax)
          _mm256_storeu_ps(out + j, e);
        addDouble(lo[q], hi[q], e);
      }
    for (int q = 0; q < v; ++q) {
      alignas(32) double sums[8];
      _mm256_store_pd(sums, lo[q]);
      _mm256_store_pd(sums + 4, hi[q]);
      alignas(32) float f[8];
      for (int l = 0; l < 8; ++l)
        f[l] = kind == Op::Softmax ? (float)(1.0 / sums[l])
                                   : (float)std::log(sums[l]);
      s[q] = _mm256_load_ps(f);
    }
    for (int64_t k = 0; k < n; ++k)
      for (int q = 0; q < v; ++q) {
        int64_t j = k * inner + 8 * q;
        if (kind == Op::Softmax)
          _mm256_storeu_ps(out + j,
                           _mm256_mul_ps(_mm256_loadu_ps(out + j), s[q]));
        else
          _mm256_storeu_ps(
              out + j, _mm256_sub_ps(
                           _mm256_sub_ps(_mm256_loadu_ps(a + j), mx[q]), s[q]));
      }
    break;
  case Op::SoftmaxBackward:
  case Op::LogSoftmaxBackward: {
    bool log = kind == Op::LogSoftmaxBackward;
    for (int64_t k = 0; k < n; ++k)
      for (int q = 0; q < v; ++q) {
        int64_t j = k * inner + 8 * q;
        __m256 g = _mm256_loadu_ps(a + j);
        if (log) {
          addDouble(lo[q], hi[q], g);
        } else {
          __m256 y = _mm256_loadu_ps(b + j);
          lo[q] = _mm256_fmadd_pd(_mm256_cvtps_pd(_mm256_castps256_ps128(g)),
                                  _mm256_cvtps_pd(_mm256_castps256_ps128(y)),
                                  lo[q]);
          hi[q] = _mm256_fmadd_pd(_mm256_cvtps_pd(_mm256_extractf128_ps(g, 1)),
                                  _mm256_cvtps_pd(_mm256_extractf128_ps(y, 1)),
                                  hi[q]);
        }
      }
    for (int q = 0; q < v; ++q)
      s[q] = _mm256_set_m128(_mm256_cvtpd_ps(hi[q]), _mm256_cvtpd_ps(lo[q]));
    for (int64_t k = 0; k < n; ++k)
      for (int q = 0; q < v; ++q) {
        int64_t j = k * inner + 8 * q;
        __m256 g = _mm256_loadu_ps(a + j), y = _mm256_loadu_ps(b + j);
        __m256 r = log ? _mm256_fnmadd_ps(exp256(y), s[q], g)
                       : _mm256_mul_ps(y, _mm256_sub_ps(g, s[q]));
        _mm256_storeu_ps(out + j, r);
      }
    break;
  }
  }
}
#undef TIDALRT_AVX2
#endif

//===----------------------------------------------------------------------===//
// Driver
//===----------------------------------------------------------------------===//

void run(Op kind, const float *a, const float *b, float *out, int64_t outer,
         int64_t n, int64_t inner) {
  if (outer == 0 || n == 0 || inner == 0)
    return;
  bool avx2 = useAvx2();
  bool parallel = outer * n * inner >= parallelGrain();
  if (inner == 1) {
#pragma omp parallel for schedule(static) if (parallel)
    for (int64_t o = 0; o < outer; ++o) {
      const float *bo = b ? b + o * n : nullptr;
#if TIDALRT_OTHER_X86
      if (avx2) {
        rowAvx2(kind, a + o * n, bo, out + o * n, n);
        continue;
      }
#endif
      rowScalar(kind, a + o * n, bo, out + o * n, n);
    }
    return;
  }
  int64_t blocks = (inner + kBlock - 1) / kBlock;
#pragma omp parallel for schedule(static) if (parallel)
  for (int64_t item = 0; item < outer * blocks; ++item) {
    int64_t o = item / blocks, c0 = (item % blocks) * kBlock;
    int64_t w = std::min(kBlock, inner - c0);
    int64_t base = o * n * inner + c0;
    const float *bo = b ? b + base : nullptr;
    int64_t vw = 0;
#if TIDALRT_OTHER_X86
    if (avx2) {
      vw = w & ~(int64_t)7;
      if (vw)
        blockAvx2(kind, a + base, bo, out + base, n, inner, vw);
    }
#endif
    if (vw < w)
      blockScalar(kind, a + base + vw, bo ? bo + vw : nullptr, out + base + vw,
                  n, inner, w - vw);
  }
}

tidalrt_status_t forward(OpCall &op, Op kind) {
  SoftmaxLayout l = checkSoftmax(op);
  if (preparing(op.context))
    return ok();
  run(kind, op[0].f32(), nullptr, op[1].f32(), l.outer, l.n, l.inner);
  return ok();
}

tidalrt_status_t backward(OpCall &op, Op kind) {
  SoftmaxLayout l = checkSoftmaxBackward(op);
  if (preparing(op.context))
    return ok();
  run(kind, op[0].f32(), op[1].f32(), op[2].f32(), l.outer, l.n, l.inner);
  return ok();
}

SoftmaxLayout layoutOf(const TensorRef &t, int64_t axisAttr) {
  if (t.rank < 1)
    fail(TIDALRT_INVALID_ARGUMENT, "expects a tensor of rank >= 1, got rank %d",
         t.rank);
  int axis = normalizeAxis(axisAttr, t.rank);
  return {product(t.dims, 0, axis), t.dims[axis],
          product(t.dims, axis + 1, t.rank)};
}

} // namespace

SoftmaxLayout checkSoftmax(const OpCall &op) {
  requireTensors(op, 2);
  const TensorRef &x = requireF32(op, 0, "input");
  const TensorRef &y = requireF32(op, 1, "output");
  if (!sameShape(x, y))
    fail(TIDALRT_INVALID_ARGUMENT, "output shape differs from the input's");
  return layoutOf(x, op.getInt(0));
}

SoftmaxLayout checkSoftmaxBackward(const OpCall &op) {
  requireTensors(op, 3);
  const TensorRef &g = requireF32(op, 0, "grad");
  const TensorRef &y = requireF32(op, 1, "output");
  const TensorRef &gi = requireF32(op, 2, "grad_input");
  if (!sameShape(g, y) || !sameShape(g, gi))
    fail(TIDALRT_INVALID_ARGUMENT,
         "grad, output and grad_input must have the same shape");
  return layoutOf(g, op.getInt(0));
}

void softmaxForward(const float *x, float *y, int64_t outer, int64_t n,
                    int64_t inner, SoftmaxKind kind) {
  run(kind == SoftmaxKind::Softmax ? Op::Softmax : Op::LogSoftmax, x, nullptr,
      y, outer, n, inner);
}

} // namespace other
} // namespace tidalrt

using namespace tidalrt;

extern "C" tidalrt_status_t tidalrt_k_softmax(tidalrt_context_t *ctx,
                                              const int64_t *desc,
                                              void *const *buffers) {
  return runKernel(ctx, desc, buffers, "softmax", [&](OpCall &op) {
    return other::forward(op, other::Op::Softmax);
  });
}

extern "C" tidalrt_status_t tidalrt_k_log_softmax(tidalrt_context_t *ctx,
                                                  const int64_t *desc,
                                                  void *const *buffers) {
  return runKernel(ctx, desc, buffers, "log_softmax", [&](OpCall &op) {
    return other::forward(op, other::Op::LogSoftmax);
  });
}

extern "C" tidalrt_status_t tidalrt_k_softmax_backward(tidalrt_context_t *ctx,
                                                       const int64_t *desc,
                                                       void *const *buffers) {
  return runKernel(ctx, desc, buffers, "softmax_backward", [&](OpCall &op) {
    return other::backward(op, other::Op::SoftmaxBackward);
  });
}

extern "C" tidalrt_status_t
tidalrt_k_log_softmax_backward(tidalrt_context_t *ctx, const int64_t *desc,
                               void *const *buffers) {
  return runKernel(ctx, desc, buffers, "log_softmax_backward", [&](OpCall &op) {
    return other::backward(op, other::Op::LogSoftmaxBackward);
  });
}
