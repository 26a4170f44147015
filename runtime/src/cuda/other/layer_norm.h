// layer_norm.h - layer normalization and its backward on the GPU (twins of
// runtime/src/cpu/layer_norm.cpp).
//
// The input is `outer` rows of K = prod(dims[axis:]) elements. Forward: one
// thread per row, mean and biased variance in double (two passes, in
// order), as the CPU kernel's scalar path (rowForwardScalar). Backward:
// grad_input one thread per row (rowBackwardScalar's arithmetic); grad_scale
// and grad_bias one thread per column, which adds its rows over the CPU
// kernel's row chunks (columnSplit) in the CPU's order, then folds onto a
// broadcast scale's shape in the CPU's order. All of it is IEEE arithmetic
// without contraction, so the emulation and the GPU give the scalar path's
// bits; the CPU's AVX2 path sums in lanes (and fuses the variance's
// multiply-adds), which can differ in the last bit after rounding.
#ifndef TIDALRT_CUDA_OTHER_LAYER_NORM_H
#define TIDALRT_CUDA_OTHER_LAYER_NORM_H

#include "common.h"

namespace tidalrt {
namespace cuda {
namespace other {

// How a scale/bias operand maps onto the normalized shape (right-aligned
// broadcasting): ParamMap::index in layer_norm.cpp, as bodies compute it.
struct ParamIndex {
  int innerRank = 0;
  int paramRank = 0;
  int64_t innerDims[TIDALRT_MAX_RANK];
  int64_t paramDims[TIDALRT_MAX_RANK];

  // The operand's flat index for row element i.
  TIDAL_HD int64_t operator()(int64_t i) const {
    int64_t flat = 0, stride = 1;
    for (int d = innerRank - 1, pd = paramRank - 1; d >= 0; --d, --pd) {
      int64_t id = i % innerDims[d];
      i /= innerDims[d];
      if (pd < 0)
        continue;
      if (paramDims[pd] != 1)
        flat += id * stride;
      stride *= paramDims[pd];
    }
    return flat;
  }
};

struct ParamMap {
  const TensorRef *t = nullptr;
  bool direct = true; // element i of the row is element i of the operand
  ParamIndex index;
};

inline ParamMap paramMap(const TensorRef &t, const char *name,
                         const int64_t *inner, int innerRank) {
  ParamMap m;
  m.t = &t;
  m.index.innerRank = innerRank;
  m.index.paramRank = t.rank;
  int extra = t.rank - innerRank;
  for (int d = 0; d < t.rank; ++d) {
    int64_t pd = t.dims[d];
    bool okDim = d < extra ? pd == 1 : (pd == 1 || pd == inner[d - extra]);
    if (!okDim)
      fail(TIDALRT_INVALID_ARGUMENT,
           "%s does not broadcast to the normalized dimensions (its dimension "
           "%d is %lld)",
           name, d, (long long)pd);
    m.index.paramDims[d] = pd;
  }
  for (int d = 0; d < innerRank; ++d)
    m.index.innerDims[d] = inner[d];
  m.direct = t.numel() == product(inner, 0, innerRank);
  return m;
}

// dst[i] = the operand's element for row element i.
struct ExpandParam {
  ParamIndex index;
  const float *src;
  float *dst;

  TIDAL_HD void operator()(int64_t i) const { dst[i] = src[index(i)]; }
};

// One row of the forward.
struct LayerNormRows {
  const float *x, *s, *b; // b may be null
  float *y, *mean, *invStd;
  int64_t k;
  double eps;

  TIDAL_HD void operator()(int64_t o) const {
    const float *xr = x + o * k;
    float *yr = y + o * k;
    double sum = 0.0;
    for (int64_t i = 0; i < k; ++i)
      sum += xr[i];
    double mu = sum / (double)k, var = 0.0;
    for (int64_t i = 0; i < k; ++i) {
      double d = xr[i] - mu;
      var += d * d;
    }
    var /= (double)k;
    double inv = 1.0 / sqrt(var + eps);
    float mf = (float)mu, invf = (float)inv;
    for (int64_t i = 0; i < k; ++i) {
      float v = (xr[i] - mf) * invf * s[i];
      yr[i] = b ? v + b[i] : v;
    }
    mean[o] = mf;
    invStd[o] = invf;
  }
};

// One row of grad_input.
struct LayerNormGradRows {
  const float *dy, *x, *s, *mean, *invStd;
  float *dx;
  int64_t k;

  TIDAL_HD void operator()(int64_t o) const {
    const float *dyr = dy + o * k, *xr = x + o * k;
    float *dxr = dx + o * k;
    const float mu = mean[o], inv = invStd[o];
    double sumG = 0.0, sumGX = 0.0;
    for (int64_t i = 0; i < k; ++i) {
      float xh = (xr[i] - mu) * inv;
      float g = dyr[i] * s[i];
      sumG += g;
      sumGX += (double)g * xh;
    }
    float mg = (float)(sumG / (double)k), mgx = (float)(sumGX / (double)k);
    for (int64_t i = 0; i < k; ++i) {
      float xh = (xr[i] - mu) * inv;
      float g = dyr[i] * s[i];
      dxr[i] = inv * (g - mg - xh * mgx);
    }
  }
};

// Column i's sums over the rows of grad * xhat and of grad: per chunk of
// `rows` rows in row order, then the chunks in order (as layer_norm.cpp).
// Writes them as float to gs[i], gb[i], or (if `totals`) as double to
// totals[i], totals[k + i].
struct LayerNormGradColumns {
  const float *dy, *x, *mean, *invStd;
  int64_t outer, k, chunks, rows;
  float *gs, *gb;
  double *totals;

  TIDAL_HD void operator()(int64_t i) const {
    double ps = 0.0, pb = 0.0;
    for (int64_t c = 0; c < chunks; ++c) {
      int64_t end = (c + 1) * rows < outer ? (c + 1) * rows : outer;
      double cs = 0.0, cb = 0.0;
      for (int64_t o = c * rows; o < end; ++o) {
        float xh = (x[o * k + i] - mean[o]) * invStd[o];
        float d = dy[o * k + i];
        cs += (double)d * xh;
        cb += d;
      }
      if (c == 0) {
        ps = cs;
        pb = cb;
      } else {
        ps += cs;
        pb += cb;
      }
    }
    if (totals) {
      totals[i] = ps;
      totals[k + i] = pb;
    } else {
      gs[i] = (float)ps;
      gb[i] = (float)pb;
    }
  }
};

// Scale element j of a broadcast scale: adds the column totals of the row
// elements that map to j, in increasing order (layer_norm.cpp's fold).
// Dimension d of the normalized shape is `fixed` (the scale has it) or free
// (broadcast); the elements mapping to j hold the fixed coordinates that j
// has and run over the free ones in row-major order.
struct LayerNormFold {
  int rank;
  int64_t dims[TIDALRT_MAX_RANK];        // normalized dims
  int64_t strides[TIDALRT_MAX_RANK];     // their dense strides
  int64_t paramStride[TIDALRT_MAX_RANK]; // fixed: the scale's stride; else 0
  int64_t freeCount;                     // K / scale elements
  const double *totals;
  int64_t k;
  float *gs, *gb;

  TIDAL_HD void operator()(int64_t j) const {
    int64_t base = 0;
    for (int d = 0; d < rank; ++d)
      if (paramStride[d])
        base += (j / paramStride[d]) % dims[d] * strides[d];
    double fs = 0.0, fb = 0.0;
    for (int64_t t = 0; t < freeCount; ++t) {
      int64_t i = base, rest = t;
      for (int d = rank - 1; d >= 0; --d)
        if (!paramStride[d]) {
          i += rest % dims[d] * strides[d];
          rest /= dims[d];
        }
      fs += totals[i];
      fb += totals[k + i];
    }
    gs[j] = (float)fs;
    gb[j] = (float)fb;
  }
};

inline LayerNormFold layerNormFold(const ParamIndex &m) {
  LayerNormFold f;
  f.rank = m.innerRank;
  int64_t s = 1, ps = 1, fixed = 1;
  for (int d = m.innerRank - 1; d >= 0; --d) {
    f.dims[d] = m.innerDims[d];
    f.strides[d] = s;
    s *= m.innerDims[d];
    int pd = d - (m.innerRank - m.paramRank);
    bool isFixed = pd >= 0 && m.paramDims[pd] != 1;
    f.paramStride[d] = isFixed ? ps : 0;
    if (isFixed) {
      ps *= m.paramDims[pd];
      fixed *= m.paramDims[pd];
    }
  }
  f.freeCount = fixed ? s / fixed : 0;
  return f;
}

struct RowLayout {
  int axis;
  int64_t outer, k;
};

inline RowLayout rowLayout(const TensorRef &x, int64_t axisAttr) {
  if (x.rank < 1)
    fail(TIDALRT_INVALID_ARGUMENT, "input must have rank >= 1");
  int axis = normalizeAxis(axisAttr, x.rank);
  return {axis, product(x.dims, 0, axis), product(x.dims, axis, x.rank)};
}

inline void checkStats(const TensorRef &t, const char *name, int64_t outer) {
  if (t.numel() != outer)
    fail(TIDALRT_INVALID_ARGUMENT, "%s has %lld elements, expected %lld", name,
         (long long)t.numel(), (long long)outer);
}

// The row split of layer_norm.cpp's columnSplit.
inline void columnSplit(int64_t outer, int64_t k, int64_t *chunks,
                        int64_t *rows) {
  constexpr int64_t kMaxChunks = 64, kMinWork = 32768;
  constexpr int64_t kMaxPartialBytes = (int64_t)16 << 20;
  int64_t c = (outer * k) / kMinWork;
  c = c < kMaxChunks ? c : kMaxChunks;
  int64_t byBytes = kMaxPartialBytes / (16 * k > 1 ? 16 * k : 1);
  c = c < byBytes ? c : byBytes;
  c = c < outer ? c : outer;
  c = c > 1 ? c : 1;
  *chunks = c;
  *rows = (outer + c - 1) / c;
}

} // namespace other

// layer_norm: input, scale, bias?, output, mean, inv_std_dev; axis (0),
// epsilon (1).
template <class L> void k_layer_norm(L &l, OpCall &op) {
  using namespace other;
  requireTensors(op, 6);
  const TensorRef &x = requireF32(op, 0, "input");
  RowLayout rl = rowLayout(x, op.getInt(0));
  double eps = op.getFloat(1);
  const int64_t *innerDims = x.dims + rl.axis;
  int innerRank = x.rank - rl.axis;
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
  checkStats(mean, "mean", rl.outer);
  checkStats(inv, "inv_std_dev", rl.outer);
  int64_t k = rl.k;
  size_t expanded = (sm.direct ? 0 : 1) + (hasBias && !bm.direct ? 1 : 0);
  float *buf =
      static_cast<float *>(l.workspace(expanded * (size_t)k * sizeof(float)));
  if (l.preparing() || rl.outer == 0 || k == 0)
    return;
  const float *s = sm.t->f32(), *b = hasBias ? bm.t->f32() : nullptr;
  if (!sm.direct) {
    l.forEach(k, ExpandParam{sm.index, s, buf});
    s = buf;
    buf += k;
  }
  if (hasBias && !bm.direct) {
    l.forEach(k, ExpandParam{bm.index, b, buf});
    b = buf;
  }
  l.forEach(rl.outer, LayerNormRows{x.f32(), s, b, y.f32(), mean.f32(),
                                    inv.f32(), k, eps});
}

// layer_norm_backward: grad, input, scale, mean, inv_std_dev, grad_input,
// grad_scale, grad_bias; axis (0).
template <class L> void k_layer_norm_backward(L &l, OpCall &op) {
  using namespace other;
  requireTensors(op, 8);
  const TensorRef &dy = requireF32(op, 0, "grad");
  const TensorRef &x = requireF32(op, 1, "input");
  RowLayout rl = rowLayout(x, op.getInt(0));
  const int64_t *innerDims = x.dims + rl.axis;
  int innerRank = x.rank - rl.axis;
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
  checkStats(mean, "mean", rl.outer);
  checkStats(inv, "inv_std_dev", rl.outer);
  int64_t sn = sm.t->numel();
  if (gs.numel() != sn || gb.numel() != sn)
    fail(TIDALRT_INVALID_ARGUMENT,
         "grad_scale and grad_bias must have the scale's %lld elements",
         (long long)sn);
  int64_t k = rl.k, chunks, rows;
  columnSplit(rl.outer, k, &chunks, &rows);
  // Workspace (broadcast scale only): the column totals [2][k] doubles,
  // then the expanded scale.
  size_t totalBytes = sm.direct ? 0 : 2 * (size_t)k * sizeof(double);
  size_t expandBytes = sm.direct ? 0 : (size_t)k * sizeof(float);
  char *ws = static_cast<char *>(l.workspace(totalBytes + expandBytes));
  if (l.preparing())
    return;
  if (rl.outer == 0 || k == 0) {
    l.zero(gs.data, gs.bytes());
    l.zero(gb.data, gb.bytes());
    return;
  }
  double *totals = sm.direct ? nullptr : reinterpret_cast<double *>(ws);
  const float *s = sm.t->f32();
  if (!sm.direct) {
    float *e = reinterpret_cast<float *>(ws + totalBytes);
    l.forEach(k, ExpandParam{sm.index, s, e});
    s = e;
  }
  l.forEach(rl.outer, LayerNormGradRows{dy.f32(), x.f32(), s, mean.f32(),
                                        inv.f32(), dx.f32(), k});
  l.forEach(k, LayerNormGradColumns{dy.f32(), x.f32(), mean.f32(), inv.f32(),
                                    rl.outer, k, chunks, rows, gs.f32(),
                                    gb.f32(), totals});
  if (!sm.direct) {
    LayerNormFold f = layerNormFold(sm.index);
    f.totals = totals;
    f.k = k;
    f.gs = gs.f32();
    f.gb = gb.f32();
    l.forEach(sn, f);
  }
}

} // namespace cuda
} // namespace tidalrt

#endif // TIDALRT_CUDA_OTHER_LAYER_NORM_H
