// data_movement.h - transpose, concat, split, slice, gather and the
// backwards of slice and gather on the GPU (twins of
// runtime/src/cpu/data_movement.cpp).
//
// The forward ops move elements of any type by their size (1, 2, 4 or 8
// bytes), one thread per output element, with index arithmetic only: the
// results are the CPU's bits. slice_backward writes every element of
// grad_input once (the grad's element it receives, or 0), and
// gather_backward (float32) gives each grad_input element one thread that
// adds the grad rows whose index names it in index order, as the CPU kernel
// adds them: no atomics, the CPU's bits; scatter_extreme likewise keeps the
// largest (smallest) of them.
//
// The CPU kernels fail (INVALID_ARGUMENT) on an index outside [-dim, dim);
// indices live in device memory here, so the bodies check each index as
// they read it and never follow a bad one: gather writes zeros (all bits 0)
// for it, and gather_backward adds nothing for it.
#ifndef TIDALRT_CUDA_OTHER_DATA_MOVEMENT_H
#define TIDALRT_CUDA_OTHER_DATA_MOVEMENT_H

#include "../../cpu/data_movement_checks.h"
#include "common.h"

namespace tidalrt {
namespace cuda {
namespace other {

// The CPU kernels' checks and shape decoding (cpu/data_movement_checks.h).
using tidalrt::other::checkConcat;
using tidalrt::other::checkGather;
using tidalrt::other::checkGatherBackward;
using tidalrt::other::checkScatterExtreme;
using tidalrt::other::checkSlice;
using tidalrt::other::checkSliceBackward;
using tidalrt::other::checkSplit;
using tidalrt::other::checkTranspose;
using tidalrt::other::denseStrides;
using tidalrt::other::GatherLayout;
using tidalrt::other::SliceGeometry;

//===----------------------------------------------------------------------===//
// Strided reads (transpose, slice)
//===----------------------------------------------------------------------===//

// out[i] = in[sum idx(i)[d] * src[d]] where idx(i) is the multi-index of i
// over `dims` (C order): the output is dense. Source strides may be
// negative.
struct Strided {
  int rank = 0;
  int64_t dims[TIDALRT_MAX_RANK];
  int64_t src[TIDALRT_MAX_RANK];

  int64_t total() const { return product(dims, 0, rank); }

  // Drops size-1 dimensions and merges neighbours that stay contiguous in
  // both tensors (the dense output always is), so that bodies divide less.
  void simplify() {
    int r = 0;
    for (int d = 0; d < rank; ++d) {
      if (dims[d] == 1)
        continue;
      if (r > 0 && src[r - 1] == src[d] * dims[d]) {
        dims[r - 1] *= dims[d];
        src[r - 1] = src[d];
        continue;
      }
      dims[r] = dims[d];
      src[r] = src[d];
      ++r;
    }
    rank = r;
  }
};

template <class T> struct StridedRead {
  Strided g;
  const T *in;
  T *out;

  TIDAL_HD void operator()(int64_t i) const {
    int64_t off = 0, rest = i;
    for (int d = g.rank - 1; d >= 0; --d) {
      off += rest % g.dims[d] * g.src[d];
      rest /= g.dims[d];
    }
    out[i] = in[off];
  }
};

template <class L>
void stridedRead(L &l, Strided g, const void *in, void *out, size_t es) {
  int64_t total = g.total();
  if (total == 0)
    return;
  g.simplify();
  withElementSize(es, [&](auto t) {
    using T = decltype(t);
    l.forEach(total, StridedRead<T>{g, static_cast<const T *>(in),
                                    static_cast<T *>(out)});
  });
}

//===----------------------------------------------------------------------===//
// Concat and split
//===----------------------------------------------------------------------===//

// Part element i = (o, r) of outer x partChunk <-> whole element
// o * wholeChunk + offset + r (chunks: elements along and after the axis).
template <class T> struct PartCopy {
  const T *src;
  T *dst;
  int64_t partChunk, wholeChunk, offset;
  bool toWhole;

  TIDAL_HD void operator()(int64_t i) const {
    int64_t w = i / partChunk * wholeChunk + offset + i % partChunk;
    if (toWhole)
      dst[w] = src[i];
    else
      dst[i] = src[w];
  }
};

// Copies between the parts and the whole along `axis`; `toWhole` is concat.
template <class L>
void copyParts(L &l, const OpCall &op, int firstPart, int numParts, int whole,
               int axis, size_t es, bool toWhole) {
  const TensorRef &w = op[whole];
  int64_t outer = product(w.dims, 0, axis);
  int64_t inner = product(w.dims, axis + 1, w.rank);
  int64_t wholeChunk = w.dims[axis] * inner;
  char *wp = static_cast<char *>(w.data);
  int64_t offset = 0;
  for (int p = firstPart; p < firstPart + numParts; ++p) {
    int64_t partChunk = op[p].dims[axis] * inner;
    char *pp = static_cast<char *>(op[p].data);
    if (outer == 1) {
      size_t bytes = (size_t)partChunk * es;
      if (toWhole)
        l.copy(wp + (size_t)offset * es, pp, bytes);
      else
        l.copy(pp, wp + (size_t)offset * es, bytes);
    } else if (partChunk > 0 && outer > 0) {
      withElementSize(es, [&](auto t) {
        using T = decltype(t);
        void *src = toWhole ? pp : wp, *dst = toWhole ? wp : pp;
        l.forEach(outer * partChunk,
                  PartCopy<T>{static_cast<const T *>(src),
                              static_cast<T *>(dst), partChunk, wholeChunk,
                              offset, toWhole});
      });
    }
    offset += partChunk;
  }
}

//===----------------------------------------------------------------------===//
// Slice
//===----------------------------------------------------------------------===//

// The strided read of a slice (cpu/data_movement_checks.h's SliceGeometry):
// part element i from the full tensor at s.base.
inline Strided sliceRead(const SliceGeometry &s) {
  Strided g;
  g.rank = s.rank;
  for (int d = 0; d < s.rank; ++d) {
    g.dims[d] = s.counts[d];
    g.src[d] = s.strides[d];
  }
  return g;
}

// grad_input element i: the grad element whose slice position it is, or 0.
template <class T> struct SliceBackwardBody {
  int rank;
  int64_t fullDims[TIDALRT_MAX_RANK];
  int64_t starts[TIDALRT_MAX_RANK];
  int64_t steps[TIDALRT_MAX_RANK];
  int64_t counts[TIDALRT_MAX_RANK];
  const T *grad;
  T *out;

  TIDAL_HD void operator()(int64_t i) const {
    int64_t rest = i, src = 0, stride = 1;
    for (int d = rank - 1; d >= 0; --d) {
      int64_t q = rest % fullDims[d] - starts[d];
      rest /= fullDims[d];
      if (q % steps[d] != 0 || (q /= steps[d]) < 0 || q >= counts[d]) {
        out[i] = T(0);
        return;
      }
      src += q * stride;
      stride *= counts[d];
    }
    out[i] = grad[src];
  }
};

//===----------------------------------------------------------------------===//
// Gather
//===----------------------------------------------------------------------===//

// Index j resolved into [0, dim), or -1 if it is outside [-dim, dim).
template <class I>
TIDAL_HD inline int64_t resolveIndex(const I *idx, int64_t j, int64_t dim) {
  int64_t k = toIndex<I>(idx[j]);
  if (k < -dim || k >= dim)
    return -1;
  return k < 0 ? k + dim : k;
}

// Output element i = (o, j, c) of outer x n x inner.
template <class T, class I> struct GatherBody {
  GatherLayout l;
  const T *data;
  const I *idx;
  T *out;

  TIDAL_HD void operator()(int64_t i) const {
    int64_t c = i % l.inner, item = i / l.inner;
    int64_t k = resolveIndex(idx, item % l.n, l.dim);
    out[i] = k < 0 ? T(0) : data[(item / l.n * l.dim + k) * l.inner + c];
  }
};

// grad_input element i = (o, k, c) of outer x dim x inner: the sum, in index
// order, of the grad elements (o, j, c) whose index j names k (0.0f plus
// each, as the CPU adds them onto zeros).
template <class I> struct GatherBackwardBody {
  GatherLayout l;
  const float *grad;
  const I *idx;
  float *out;

  TIDAL_HD void operator()(int64_t i) const {
    int64_t c = i % l.inner, row = i / l.inner;
    int64_t k = row % l.dim, o = row / l.dim;
    const float *g = grad + o * l.n * l.inner + c;
    float sum = 0.0f;
    for (int64_t j = 0; j < l.n; ++j)
      if (resolveIndex(idx, j, l.dim) == k)
        sum += g[j * l.inner];
    out[i] = sum;
  }
};

// scatter_extreme: each output element's thread starts from data and
// keeps the largest (smallest) update whose index names it, in index
// order, as the CPU kernel does; a NaN wins and stays.
template <class I> struct ScatterExtremeBody {
  GatherLayout l;
  const float *data;
  const float *upd;
  const I *idx;
  float *out;
  bool largest;

  TIDAL_HD void operator()(int64_t i) const {
    int64_t c = i % l.inner, row = i / l.inner;
    int64_t k = row % l.dim, o = row / l.dim;
    const float *u = upd + o * l.n * l.inner + c;
    float cur = data[i];
    for (int64_t j = 0; j < l.n; ++j)
      if (resolveIndex(idx, j, l.dim) == k) {
        float v = u[j * l.inner];
        if (v != v || (largest ? v > cur : v < cur))
          cur = v;
      }
    out[i] = cur;
  }
};

} // namespace other

// transpose: input -> output; perm (0).
template <class L> void k_transpose(L &l, OpCall &op) {
  using namespace other;
  const int64_t *perm;
  size_t es = checkTranspose(op, &perm);
  const TensorRef &in = op[0], &out = op[1];
  if (l.preparing())
    return;
  Strided g;
  int64_t inStrides[TIDALRT_MAX_RANK];
  denseStrides(in, inStrides);
  g.rank = out.rank;
  for (int j = 0; j < out.rank; ++j) {
    g.dims[j] = out.dims[j];
    g.src[j] = inStrides[perm[j]];
  }
  stridedRead(l, g, in.data, out.data, es);
}

// concat: inputs... -> output; axis (0).
template <class L> void k_concat(L &l, OpCall &op) {
  using namespace other;
  int axis;
  size_t es = checkConcat(op, &axis);
  int parts = op.numTensors - 1;
  if (l.preparing())
    return;
  copyParts(l, op, 0, parts, parts, axis, es, /*toWhole=*/true);
}

// split: input -> outputs...; axis (0), sizes (1).
template <class L> void k_split(L &l, OpCall &op) {
  using namespace other;
  int axis;
  size_t es = checkSplit(op, &axis);
  int parts = op.numTensors - 1;
  if (l.preparing())
    return;
  copyParts(l, op, 1, parts, 0, axis, es, /*toWhole=*/false);
}

// slice: input -> output; ends (0), starts (1), steps (2).
template <class L> void k_slice(L &l, OpCall &op) {
  using namespace other;
  SliceGeometry s;
  size_t es = checkSlice(op, s);
  const TensorRef &in = op[0], &out = op[1];
  if (l.preparing() || out.numel() == 0)
    return;
  stridedRead(l, sliceRead(s),
              static_cast<const char *>(in.data) + s.base * (int64_t)es,
              out.data, es);
}

// slice_backward: grad -> grad_input; ends (0), starts (1), steps (2).
template <class L> void k_slice_backward(L &l, OpCall &op) {
  using namespace other;
  SliceGeometry s;
  size_t es = checkSliceBackward(op, s);
  const TensorRef &grad = op[0], &out = op[1];
  if (l.preparing())
    return;
  withElementSize(es, [&](auto t) {
    using T = decltype(t);
    SliceBackwardBody<T> b;
    b.rank = out.rank;
    for (int d = 0; d < out.rank; ++d) {
      b.fullDims[d] = out.dims[d];
      b.starts[d] = s.starts[d];
      b.steps[d] = s.steps[d];
      b.counts[d] = grad.dims[d];
    }
    b.grad = static_cast<const T *>(grad.data);
    b.out = static_cast<T *>(out.data);
    l.forEach(out.numel(), b);
  });
}

// gather: data, indices -> output; axis (0).
template <class L> void k_gather(L &l, OpCall &op) {
  using namespace other;
  GatherLayout g;
  size_t es = checkGather(op, g);
  const TensorRef &data = op[0], &indices = op[1], &out = op[2];
  if (l.preparing() || out.numel() == 0)
    return;
  withIndexType(indices.type, [&](auto i) {
    using I = decltype(i);
    withElementSize(es, [&](auto t) {
      using T = decltype(t);
      l.forEach(out.numel(),
                GatherBody<T, I>{g, static_cast<const T *>(data.data),
                                 static_cast<const I *>(indices.data),
                                 static_cast<T *>(out.data)});
    });
  });
}

// gather_backward: grad, indices -> grad_input; axis (0).
template <class L> void k_gather_backward(L &l, OpCall &op) {
  using namespace other;
  GatherLayout g = checkGatherBackward(op);
  const TensorRef &grad = op[0], &indices = op[1], &out = op[2];
  if (l.preparing())
    return;
  withIndexType(indices.type, [&](auto i) {
    using I = decltype(i);
    l.forEach(out.numel(),
              GatherBackwardBody<I>{g, grad.f32(),
                                    static_cast<const I *>(indices.data),
                                    out.f32()});
  });
}

// scatter_extreme: data, indices, updates -> output; axis (0), largest (1).
template <class L> void k_scatter_extreme(L &l, OpCall &op) {
  using namespace other;
  GatherLayout g = checkScatterExtreme(op);
  const TensorRef &data = op[0], &indices = op[1], &updates = op[2],
                  &out = op[3];
  if (l.preparing())
    return;
  bool largest = op.getInt(1) != 0;
  withIndexType(indices.type, [&](auto i) {
    using I = decltype(i);
    l.forEach(out.numel(),
              ScatterExtremeBody<I>{g, data.f32(), updates.f32(),
                                    static_cast<const I *>(indices.data),
                                    out.f32(), largest});
  });
}

} // namespace cuda
} // namespace tidalrt

#endif // TIDALRT_CUDA_OTHER_DATA_MOVEMENT_H
