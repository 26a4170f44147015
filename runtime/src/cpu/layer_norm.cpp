// layer_norm.cpp - layer normalization (ONNX LayerNormalization) and its
// backward, float32.
//
// The input is seen as `outer` rows of K = prod(dims[axis:]) elements.
// Forward: per row, mean and biased variance in double (two passes),
// inv_std_dev = 1 / sqrt(var + epsilon), y = (x - mean) * inv_std_dev *
// scale + bias; mean and inv_std_dev have the input's shape with the
// normalized dims set to 1 (only their element count, outer, is checked).
// `scale` and `bias` broadcast to the normalized shape (right-aligned); the
// common case where they have K elements is read directly, otherwise they
// are expanded into scratch first.
//
// Backward (TidalGradOps.td): with xhat = (x - mean) * inv_std_dev and
// g = grad * scale, grad_input = inv_std_dev * (g - mean(g) - xhat *
// mean(g * xhat)) per row; grad_scale = sum over rows of grad * xhat and
// grad_bias = sum over rows of grad, folded onto the scale's shape. The
// column sums run in double over a fixed split of the rows (chunk partial
// sums added in chunk order), so results do not depend on the thread count.
#include "other_util.h"

#include <algorithm>

namespace tidalrt {
namespace other {
namespace {

// How a scale/bias operand maps onto the normalized shape.
struct ParamMap {
  const TensorRef *t = nullptr;
  const int64_t *innerDims = nullptr;
  int innerRank = 0;
  bool direct = true; // element i of the row is element i of the operand

  // The operand's flat index for row element i (broadcasting).
  int64_t index(int64_t i) const {
    int64_t flat = 0, stride = 1;
    for (int d = innerRank - 1, pd = t->rank - 1; d >= 0; --d, --pd) {
      int64_t id = i % innerDims[d];
      i /= innerDims[d];
      if (pd < 0)
        continue;
      if (t->dims[pd] != 1)
        flat += id * stride;
      stride *= t->dims[pd];
    }
    return flat;
  }
};

ParamMap paramMap(const TensorRef &t, const char *name, const int64_t *inner,
                  int innerRank) {
  ParamMap m;
  m.t = &t;
  m.innerDims = inner;
  m.innerRank = innerRank;
  int extra = t.rank - innerRank;
  for (int d = 0; d < t.rank; ++d) {
    int64_t pd = t.dims[d];
    bool okDim = d < extra ? pd == 1 : (pd == 1 || pd == inner[d - extra]);
    if (!okDim)
      fail(TIDALRT_INVALID_ARGUMENT,
           "%s does not broadcast to the normalized dimensions (its dimension "
           "%d is %lld)",
           name, d, (long long)pd);
  }
  m.direct = t.numel() == product(inner, 0, innerRank);
  return m;
}

void expand(const ParamMap &m, float *dst, int64_t k) {
  const float *src = m.t->f32();
  for (int64_t i = 0; i < k; ++i)
    dst[i] = src[m.index(i)];
}

//===----------------------------------------------------------------------===//
// Forward rows
//===----------------------------------------------------------------------===//

void rowForwardScalar(const float *x, const float *s, const float *b, float *y,
                      int64_t k, double eps, float *meanOut, float *invOut) {
  double sum = 0.0;
  for (int64_t i = 0; i < k; ++i)
    sum += x[i];
  double mean = sum / (double)k, var = 0.0;
  for (int64_t i = 0; i < k; ++i) {
    double d = x[i] - mean;
    var += d * d;
  }
  var /= (double)k;
  double inv = 1.0 / std::sqrt(var + eps);
  float mf = (float)mean, invf = (float)inv;
  for (int64_t i = 0; i < k; ++i) {
    float v = (x[i] - mf) * invf * s[i];
    y[i] = b ? v + b[i] : v;
  }
  *meanOut = mf;
  *invOut = invf;
}

#if TIDALRT_OTHER_X86
#define TIDALRT_AVX2 __attribute__((target("avx2,fma")))
TIDALRT_AVX2 inline double hsumPd(__m256d v) {
  __m128d t =
      _mm_add_pd(_mm256_castpd256_pd128(v), _mm256_extractf128_pd(v, 1));
  t = _mm_add_sd(t, _mm_unpackhi_pd(t, t));
  return _mm_cvtsd_f64(t);
}

TIDALRT_AVX2 void rowForwardAvx2(const float *x, const float *s, const float *b,
                                 float *y, int64_t k, double eps,
                                 float *meanOut, float *invOut) {
  int64_t k8 = k & ~(int64_t)7, i;
  __m256d a0 = _mm256_setzero_pd(), a1 = _mm256_setzero_pd();
  for (i = 0; i < k8; i += 8) {
    __m256 v = _mm256_loadu_ps(x + i);
    a0 = _mm256_add_pd(a0, _mm256_cvtps_pd(_mm256_castps256_ps128(v)));
    a1 = _mm256_add_pd(a1, _mm256_cvtps_pd(_mm256_extractf128_ps(v, 1)));
  }
  double sum = hsumPd(_mm256_add_pd(a0, a1));
  for (; i < k; ++i)
    sum += x[i];
  double mean = sum / (double)k;
  __m256d vm = _mm256_set1_pd(mean);
  a0 = _mm256_setzero_pd();
  a1 = _mm256_setzero_pd();
  for (i = 0; i < k8; i += 8) {
    __m256 v = _mm256_loadu_ps(x + i);
    __m256d d0 = _mm256_sub_pd(_mm256_cvtps_pd(_mm256_castps256_ps128(v)), vm);
    __m256d d1 =
        _mm256_sub_pd(_mm256_cvtps_pd(_mm256_extractf128_ps(v, 1)), vm);
    a0 = _mm256_fmadd_pd(d0, d0, a0);
    a1 = _mm256_fmadd_pd(d1, d1, a1);
  }
  double var = hsumPd(_mm256_add_pd(a0, a1));
  for (; i < k; ++i) {
    double d = x[i] - mean;
    var += d * d;
  }
  var /= (double)k;
  double inv = 1.0 / std::sqrt(var + eps);
  float mf = (float)mean, invf = (float)inv;
  __m256 vmf = _mm256_set1_ps(mf), vinv = _mm256_set1_ps(invf);
  for (i = 0; i < k8; i += 8) {
    __m256 v = _mm256_mul_ps(
        _mm256_mul_ps(_mm256_sub_ps(_mm256_loadu_ps(x + i), vmf), vinv),
        _mm256_loadu_ps(s + i));
    if (b)
      v = _mm256_add_ps(v, _mm256_loadu_ps(b + i));
    _mm256_storeu_ps(y + i, v);
  }
  for (; i < k; ++i) {
    float v = (x[i] - mf) * invf * s[i];
    y[i] = b ? v + b[i] : v;
  }
  *meanOut = mf;
  *invOut = invf;
}
#endif

//===----------------------------------------------------------------------===//
// Backward rows: grad_input
//===----------------------------------------------------------------------===//

// Writes one row of grad_input and adds grad * xhat and grad to the column
// sums ps and pb.
void rowBackwardScalar(const float *dy, const float *x, const float *s,
                       float mean, float inv, float *dx, int64_t k, double *ps,
                       double *pb) {
  double sumG = 0.0, sumGX = 0.0;
  for (int64_t i = 0; i < k; ++i) {
    float xh = (x[i] - mean) * inv;
    float g = dy[i] * s[i];
    sumG += g;
    sumGX += (double)g * xh;
  }
  float mg = (float)(sumG / (double)k), mgx = (float)(sumGX / (double)k);
  for (int64_t i = 0; i < k; ++i) {
    float xh = (x[i] - mean) * inv;
    float g = dy[i] * s[i];
    dx[i] = inv * (g - mg - xh * mgx);
    ps[i] += (double)dy[i] * xh;
    pb[i] += dy[i];
  }
}

#if TIDALRT_OTHER_X86
TIDALRT_AVX2 void rowBackwardAvx2(const float *dy, const float *x,
                                  const float *s, float mean, float inv,
                                  float *dx, int64_t k, double *ps,
                                  double *pb) {
  int64_t k8 = k & ~(int64_t)7, i;
  __m256 vm = _mm256_set1_ps(mean), vi = _mm256_set1_ps(inv);
  __m256d g0 = _mm256_setzero_pd(), g1 = _mm256_setzero_pd();
  __m256d h0 = _mm256_setzero_pd(), h1 = _mm256_setzero_pd();
  for (i = 0; i < k8; i += 8) {
    __m256 xh = _mm256_mul_ps(_mm256_sub_ps(_mm256_loadu_ps(x + i), vm), vi);
    __m256 g = _mm256_mul_ps(_mm256_loadu_ps(dy + i), _mm256_loadu_ps(s + i));
    __m256d gl = _mm256_cvtps_pd(_mm256_castps256_ps128(g));
    __m256d gh = _mm256_cvtps_pd(_mm256_extractf128_ps(g, 1));
    g0 = _mm256_add_pd(g0, gl);
    g1 = _mm256_add_pd(g1, gh);
    h0 = _mm256_fmadd_pd(gl, _mm256_cvtps_pd(_mm256_castps256_ps128(xh)), h0);
    h1 = _mm256_fmadd_pd(gh, _mm256_cvtps_pd(_mm256_extractf128_ps(xh, 1)), h1);
  }
  double sumG = hsumPd(_mm256_add_pd(g0, g1));
  double sumGX = hsumPd(_mm256_add_pd(h0, h1));
  for (; i < k; ++i) {
    float xh = (x[i] - mean) * inv;
    float g = dy[i] * s[i];
    sumG += g;
    sumGX += (double)g * xh;
  }
  float mg = (float)(sumG / (double)k), mgx = (float)(sumGX / (double)k);
  __m256 vmg = _mm256_set1_ps(mg), vmgx = _mm256_set1_ps(mgx);
  for (i = 0; i < k8; i += 8) {
    __m256 xh = _mm256_mul_ps(_mm256_sub_ps(_mm256_loadu_ps(x + i), vm), vi);
    __m256 d = _mm256_loadu_ps(dy + i);
    __m256 g = _mm256_mul_ps(d, _mm256_loadu_ps(s + i));
    __m256 t = _mm256_sub_ps(_mm256_sub_ps(g, vmg), _mm256_mul_ps(xh, vmgx));
    _mm256_storeu_ps(dx + i, _mm256_mul_ps(vi, t));
    __m256d dl = _mm256_cvtps_pd(_mm256_castps256_ps128(d));
    __m256d dh = _mm256_cvtps_pd(_mm256_extractf128_ps(d, 1));
    __m256d xl = _mm256_cvtps_pd(_mm256_castps256_ps128(xh));
    __m256d xhh = _mm256_cvtps_pd(_mm256_extractf128_ps(xh, 1));
    _mm256_storeu_pd(ps + i, _mm256_fmadd_pd(dl, xl, _mm256_loadu_pd(ps + i)));
    _mm256_storeu_pd(ps + i + 4,
                     _mm256_fmadd_pd(dh, xhh, _mm256_loadu_pd(ps + i + 4)));
    _mm256_storeu_pd(pb + i, _mm256_add_pd(_mm256_loadu_pd(pb + i), dl));
    _mm256_storeu_pd(pb + i + 4,
                     _mm256_add_pd(_mm256_loadu_pd(pb + i + 4), dh));
  }
  for (; i < k; ++i) {
    float xh = (x[i] - mean) * inv;
    float g = dy[i] * s[i];
    dx[i] = inv * (g - mg - xh * mgx);
    ps[i] += (double)dy[i] * xh;
    pb[i] += dy[i];
  }
}
#undef TIDALRT_AVX2
#endif

//===----------------------------------------------------------------------===//
// Kernels
//===----------------------------------------------------------------------===//

struct RowLayout {
  int axis;
  int64_t outer, k;
};

RowLayout rowLayout(const TensorRef &x, int64_t axisAttr) {
  if (x.rank < 1)
    fail(TIDALRT_INVALID_ARGUMENT, "input must have rank >= 1");
  int axis = normalizeAxis(axisAttr, x.rank);
  return {axis, product(x.dims, 0, axis), product(x.dims, axis, x.rank)};
}

void checkStats(const TensorRef &t, const char *name, int64_t outer) {
  if (t.numel() != outer)
    fail(TIDALRT_INVALID_ARGUMENT, "%s has %lld elements, expected %lld", name,
         (long long)t.numel(), (long long)outer);
}

// layer_norm: input, scale, bias?, output, mean, inv_std_dev; axis (0),
// epsilon (1).
tidalrt_status_t layerNorm(OpCall &op) {
  requireTensors(op, 6);
  const TensorRef &x = requireF32(op, 0, "input");
  RowLayout l = rowLayout(x, op.getInt(0));
  double eps = op.getFloat(1);
  const int64_t *innerDims = x.dims + l.axis;
  int innerRank = x.rank - l.axis;
  ParamMap sm =
      paramMap(requireF32(op, 1, "scale"), "scale", innerDims, innerRank);
  bool hasBias = op[2].present();
  ParamMap bm;
  if (hasBias)
    bm = paramMap(requireF32(op, 2, "bias"), "bias", innerDims, innerRank);
  const TensorRef &y = requireF32(op, 3, "output");
  const TensorRef &mean = requireF32(op, 4, "mean");
  const TensorRef &inv = requireF32(op, 5, "inv_std_dev");
  if (!sameShape(x, y))
    fail(TIDALRT_INVALID_ARGUMENT, "output shape differs from the input's");
  checkStats(mean, "mean", l.outer);
  checkStats(inv, "inv_std_dev", l.outer);
  size_t expanded = (sm.direct ? 0 : 1) + (hasBias && !bm.direct ? 1 : 0);
  size_t scratchBytes = expanded * (size_t)l.k * sizeof(float);
  if (preparing(op.context)) {
    if (scratchBytes)
      scratch(op.context, scratchBytes);
    return ok();
  }
  if (l.outer == 0 || l.k == 0)
    return ok();
  float *buf = scratchBytes
                   ? static_cast<float *>(scratch(op.context, scratchBytes))
                   : nullptr;
  const float *s = sm.t->f32(), *b = hasBias ? bm.t->f32() : nullptr;
  if (!sm.direct) {
    expand(sm, buf, l.k);
    s = buf;
    buf += l.k;
  }
  if (hasBias && !bm.direct) {
    expand(bm, buf, l.k);
    b = buf;
  }
  bool avx2 = useAvx2();
  const float *xp = x.f32();
  float *yp = y.f32(), *mp = mean.f32(), *ip = inv.f32();
  int64_t k = l.k;
#pragma omp parallel for schedule(static) if (l.outer * k >= parallelGrain())
  for (int64_t o = 0; o < l.outer; ++o) {
#if TIDALRT_OTHER_X86
    if (avx2) {
      rowForwardAvx2(xp + o * k, s, b, yp + o * k, k, eps, mp + o, ip + o);
      continue;
    }
#endif
    rowForwardScalar(xp + o * k, s, b, yp + o * k, k, eps, mp + o, ip + o);
  }
  return ok();
}

// The split of the backward rows: `chunks` chunks of `rows` rows each (the
// work items, each with its own column partial sums), depending on the
// sizes only.
struct ColumnSplit {
  int64_t chunks, rows;
};

ColumnSplit columnSplit(int64_t outer, int64_t k) {
  constexpr int64_t kMaxChunks = 64, kMinWork = kParallelMin;
  constexpr int64_t kMaxPartialBytes = (int64_t)16 << 20;
  int64_t chunks = std::min(kMaxChunks, (outer * k) / kMinWork);
  chunks = std::min(chunks, kMaxPartialBytes / std::max<int64_t>(1, 16 * k));
  chunks = std::max<int64_t>(1, std::min(chunks, outer));
  return {chunks, (outer + chunks - 1) / chunks};
}

// layer_norm_backward: grad, input, scale, mean, inv_std_dev, grad_input,
// grad_scale, grad_bias; axis (0).
tidalrt_status_t layerNormBackward(OpCall &op) {
  requireTensors(op, 8);
  const TensorRef &dy = requireF32(op, 0, "grad");
  const TensorRef &x = requireF32(op, 1, "input");
  RowLayout l = rowLayout(x, op.getInt(0));
  const int64_t *innerDims = x.dims + l.axis;
  int innerRank = x.rank - l.axis;
  ParamMap sm =
      paramMap(requireF32(op, 2, "scale"), "scale", innerDims, innerRank);
  const TensorRef &mean = requireF32(op, 3, "mean");
  const TensorRef &inv = requireF32(op, 4, "inv_std_dev");
  const TensorRef &dx = requireF32(op, 5, "grad_input");
  const TensorRef &gs = requireF32(op, 6, "grad_scale");
  const TensorRef &gb = requireF32(op, 7, "grad_bias");
  if (!sameShape(x, dy) || !sameShape(x, dx))
    fail(TIDALRT_INVALID_ARGUMENT,
         "grad, input and grad_input must have the same shape");
  checkStats(mean, "mean", l.outer);
  checkStats(inv, "inv_std_dev", l.outer);
  int64_t sn = sm.t->numel();
  if (gs.numel() != sn || gb.numel() != sn)
    fail(TIDALRT_INVALID_ARGUMENT,
         "grad_scale and grad_bias must have the scale's %lld elements",
         (long long)sn);
  int64_t k = l.k;
  ColumnSplit split = columnSplit(l.outer, k);
  // Scratch: chunk partial sums [chunks][2][k] doubles, then (broadcast
  // scale only) the folded sums [2][sn] doubles and the expanded scale.
  size_t partialBytes = (size_t)split.chunks * 2 * (size_t)k * sizeof(double);
  size_t foldBytes = sm.direct ? 0 : 2 * (size_t)sn * sizeof(double);
  size_t expandBytes = sm.direct ? 0 : (size_t)k * sizeof(float);
  size_t scratchBytes = partialBytes + foldBytes + expandBytes;
  if (preparing(op.context)) {
    scratch(op.context, scratchBytes);
    return ok();
  }
  if (l.outer == 0 || k == 0) {
    memset(gs.data, 0, gs.bytes());
    memset(gb.data, 0, gb.bytes());
    return ok();
  }
  char *base = static_cast<char *>(scratch(op.context, scratchBytes));
  double *partial = reinterpret_cast<double *>(base);
  double *fold = reinterpret_cast<double *>(base + partialBytes);
  const float *s = sm.t->f32();
  if (!sm.direct) {
    float *e = reinterpret_cast<float *>(base + partialBytes + foldBytes);
    expand(sm, e, k);
    s = e;
  }
  const float *dyp = dy.f32(), *xp = x.f32(), *mp = mean.f32(), *ip = inv.f32();
  float *dxp = dx.f32();
  bool avx2 = useAvx2();
  bool parallel = l.outer * k >= parallelGrain();

  // grad_input row by row; the rows of chunk c also add their column sums
  // to partial[c][0] (grad * xhat) and partial[c][1] (grad), in row order.
#pragma omp parallel for schedule(static) if (parallel)
  for (int64_t c = 0; c < split.chunks; ++c) {
    double *ps = partial + (size_t)c * 2 * k, *pb = ps + k;
    for (int64_t i = 0; i < 2 * k; ++i)
      ps[i] = 0.0;
    int64_t r1 = std::min(l.outer, (c + 1) * split.rows);
    for (int64_t o = c * split.rows; o < r1; ++o) {
#if TIDALRT_OTHER_X86
      if (avx2) {
        rowBackwardAvx2(dyp + o * k, xp + o * k, s, mp[o], ip[o], dxp + o * k,
                        k, ps, pb);
        continue;
      }
#endif
      rowBackwardScalar(dyp + o * k, xp + o * k, s, mp[o], ip[o], dxp + o * k,
                        k, ps, pb);
    }
  }
  // Combine the chunks in order into chunk 0's slot.
#pragma omp parallel for schedule(static) if (split.chunks > 1 && parallel)
  for (int64_t i = 0; i < 2 * k; ++i) {
    double t = partial[i];
    for (int64_t c = 1; c < split.chunks; ++c)
      t += partial[(size_t)c * 2 * k + i];
    partial[i] = t;
  }
  float *gsp = gs.f32(), *gbp = gb.f32();
  if (sm.direct) {
    for (int64_t i = 0; i < k; ++i) {
      gsp[i] = (float)partial[i];
      gbp[i] = (float)partial[k + i];
    }
  } else {
    for (int64_t j = 0; j < 2 * sn; ++j)
      fold[j] = 0.0;
    for (int64_t i = 0; i < k; ++i) {
      int64_t j = sm.index(i);
      fold[j] += partial[i];
      fold[sn + j] += partial[k + i];
    }
    for (int64_t j = 0; j < sn; ++j) {
      gsp[j] = (float)fold[j];
      gbp[j] = (float)fold[sn + j];
    }
  }
  return ok();
}

} // namespace
} // namespace other
} // namespace tidalrt

using namespace tidalrt;

extern "C" tidalrt_status_t tidalrt_k_layer_norm(tidalrt_context_t *ctx,
                                                 const int64_t *desc,
                                                 void *const *buffers) {
  return runKernel(ctx, desc, buffers, "layer_norm", other::layerNorm);
}

extern "C" tidalrt_status_t
tidalrt_k_layer_norm_backward(tidalrt_context_t *ctx, const int64_t *desc,
                              void *const *buffers) {
  return runKernel(ctx, desc, buffers, "layer_norm_backward",
                   other::layerNormBackward);
}
