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
// adds them: no atomics, the CPU's bits.
//
// The CPU kernels fail (INVALID_ARGUMENT) on an index outside [-dim, dim);
// indices live in device memory here, so the bodies check each index as
// they read it and never follow a bad one: gather writes zeros (all bits 0)
// for it, and gather_backward adds nothing for it.
#ifndef TIDALRT_CUDA_OTHER_DATA_MOVEMENT_H
#define TIDALRT_CUDA_OTHER_DATA_MOVEMENT_H

#include "common.h"

namespace tidalrt {
namespace cuda {
namespace other {

inline size_t elementSize(const TensorRef &t, const char *name) {
  size_t es = tidalrt_element_type_size((tidalrt_element_type_t)t.type);
  if (es != 1 && es != 2 && es != 4 && es != 8)
    fail(TIDALRT_UNSUPPORTED, "%s has unsupported element type %s (code %d)",
         name, typeName(t.type), (int)t.type);
  return es;
}

inline void requireSameType(const TensorRef &a, const char *an,
                            const TensorRef &b, const char *bn) {
  if (a.type != b.type)
    fail(TIDALRT_INVALID_ARGUMENT, "%s has element type %s but %s has %s", an,
         typeName(a.type), bn, typeName(b.type));
}

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

// Checks parts [first, first + n) against the whole along `axis`.
inline void checkParts(const OpCall &op, int first, int n, int whole, int axis,
                       const char *partName) {
  const TensorRef &w = op[whole];
  int64_t sum = 0;
  for (int p = first; p < first + n; ++p) {
    const TensorRef &t = op[p];
    requireSameType(t, partName, w, "the whole");
    bool match = t.rank == w.rank;
    for (int d = 0; match && d < w.rank; ++d)
      match = d == axis || t.dims[d] == w.dims[d];
    if (!match)
      fail(TIDALRT_INVALID_ARGUMENT,
           "%s %d does not match the whole outside axis %d", partName,
           p - first, axis);
    sum += t.dims[axis];
  }
  if (sum != w.dims[axis])
    fail(TIDALRT_INVALID_ARGUMENT,
         "%ss add up to %lld along axis %d, the whole has %lld", partName,
         (long long)sum, axis, (long long)w.dims[axis]);
}

//===----------------------------------------------------------------------===//
// Slice
//===----------------------------------------------------------------------===//

struct SliceGeometry {
  Strided read; // part element i from the full tensor at `base`
  int64_t base; // elements
  int64_t starts[TIDALRT_MAX_RANK];
  int64_t steps[TIDALRT_MAX_RANK];
};

// The geometry of a slice of `full` producing `part`: part element idx is
// full element starts + idx * steps. Fails on a position out of range (as
// sliceGeometry in data_movement.cpp).
inline SliceGeometry sliceGeometry(const OpCall &op, const TensorRef &full,
                                   const TensorRef &part) {
  const int64_t *ends, *starts, *steps;
  int64_t ne = op.getInts(0, &ends), ns = op.getInts(1, &starts),
          nt = op.getInts(2, &steps);
  (void)ends; // the part's shape already holds the counts
  if (ne != full.rank || ns != full.rank || nt != full.rank ||
      part.rank != full.rank)
    fail(TIDALRT_INVALID_ARGUMENT,
         "slice attributes (%lld, %lld, %lld entries) and ranks (%d, %d) do "
         "not match",
         (long long)ne, (long long)ns, (long long)nt, full.rank, part.rank);
  SliceGeometry s;
  int64_t fullStrides[TIDALRT_MAX_RANK];
  denseStrides(full, fullStrides);
  s.read.rank = full.rank;
  s.base = 0;
  for (int d = 0; d < full.rank; ++d) {
    int64_t cnt = part.dims[d];
    if (steps[d] == 0)
      fail(TIDALRT_INVALID_ARGUMENT, "step of dimension %d is 0", d);
    if (cnt > 0) {
      int64_t first = starts[d], last = starts[d] + (cnt - 1) * steps[d];
      bool badFirst = first < 0 || first >= full.dims[d];
      bool badLast = last < 0 || last >= full.dims[d];
      if (badFirst || badLast)
        fail(TIDALRT_INVALID_ARGUMENT,
             "slice index %lld is out of range [0, %lld) in dimension %d",
             (long long)(badFirst ? first : last), (long long)full.dims[d], d);
    }
    s.read.dims[d] = cnt;
    s.read.src[d] = steps[d] * fullStrides[d];
    s.base += starts[d] * fullStrides[d];
    s.starts[d] = starts[d];
    s.steps[d] = steps[d];
  }
  return s;
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

struct GatherLayout {
  int64_t outer, dim, inner, n;
};

// Checks `full` (data) and `gathered` (output) shapes around `indices`.
inline GatherLayout gatherLayout(const OpCall &op, const TensorRef &full,
                                 const TensorRef &indices,
                                 const TensorRef &gathered,
                                 const char *gatheredName) {
  if (full.rank < 1)
    fail(TIDALRT_INVALID_ARGUMENT, "data must have rank >= 1");
  int axis = normalizeAxis(op.getInt(0), full.rank);
  bool match = gathered.rank == full.rank - 1 + indices.rank;
  for (int d = 0; match && d < axis; ++d)
    match = gathered.dims[d] == full.dims[d];
  for (int d = 0; match && d < indices.rank; ++d)
    match = gathered.dims[axis + d] == indices.dims[d];
  for (int d = axis + 1; match && d < full.rank; ++d)
    match = gathered.dims[indices.rank + d - 1] == full.dims[d];
  if (!match)
    fail(TIDALRT_INVALID_ARGUMENT,
         "%s shape is not data[:axis] + indices + data[axis+1:] (axis %d)",
         gatheredName, axis);
  return {product(full.dims, 0, axis), full.dims[axis],
          product(full.dims, axis + 1, full.rank), indices.numel()};
}

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

} // namespace other

// transpose: input -> output; perm (0).
template <class L> void k_transpose(L &l, OpCall &op) {
  using namespace other;
  requireTensors(op, 2);
  const TensorRef &in = op[0], &out = op[1];
  size_t es = elementSize(in, "input");
  requireSameType(in, "input", out, "output");
  const int64_t *perm;
  int64_t np = op.getInts(0, &perm);
  if (np != in.rank || out.rank != in.rank)
    fail(TIDALRT_INVALID_ARGUMENT,
         "perm has %lld entries for an input of rank %d and output of rank %d",
         (long long)np, in.rank, out.rank);
  bool seen[TIDALRT_MAX_RANK] = {};
  for (int j = 0; j < in.rank; ++j) {
    if (perm[j] < 0 || perm[j] >= in.rank || seen[perm[j]])
      fail(TIDALRT_INVALID_ARGUMENT, "perm is not a permutation of [0, %d)",
           in.rank);
    seen[perm[j]] = true;
  }
  for (int j = 0; j < in.rank; ++j) {
    if (out.dims[j] != in.dims[perm[j]])
      fail(TIDALRT_INVALID_ARGUMENT,
           "output dimension %d is %lld, expected input dimension %lld (%lld)",
           j, (long long)out.dims[j], (long long)perm[j],
           (long long)in.dims[perm[j]]);
  }
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
  if (op.numTensors < 2)
    fail(TIDALRT_INVALID_ARGUMENT, "expects at least one input");
  int parts = op.numTensors - 1;
  const TensorRef &out = op[parts];
  size_t es = elementSize(out, "output");
  if (out.rank < 1)
    fail(TIDALRT_INVALID_ARGUMENT, "output must have rank >= 1");
  int axis = normalizeAxis(op.getInt(0), out.rank);
  checkParts(op, 0, parts, parts, axis, "input");
  if (l.preparing())
    return;
  copyParts(l, op, 0, parts, parts, axis, es, /*toWhole=*/true);
}

// split: input -> outputs...; axis (0), sizes (1).
template <class L> void k_split(L &l, OpCall &op) {
  using namespace other;
  if (op.numTensors < 2)
    fail(TIDALRT_INVALID_ARGUMENT, "expects at least one output");
  int parts = op.numTensors - 1;
  const TensorRef &in = op[0];
  size_t es = elementSize(in, "input");
  if (in.rank < 1)
    fail(TIDALRT_INVALID_ARGUMENT, "input must have rank >= 1");
  int axis = normalizeAxis(op.getInt(0), in.rank);
  const int64_t *sizes;
  int64_t ns = op.getInts(1, &sizes);
  if (ns != parts)
    fail(TIDALRT_INVALID_ARGUMENT, "sizes has %lld entries for %d outputs",
         (long long)ns, parts);
  for (int p = 0; p < parts; ++p)
    if (op[1 + p].rank != in.rank || op[1 + p].dims[axis] != sizes[p])
      fail(TIDALRT_INVALID_ARGUMENT,
           "output %d does not have size %lld along axis %d", p,
           (long long)sizes[p], axis);
  checkParts(op, 1, parts, 0, axis, "output");
  if (l.preparing())
    return;
  copyParts(l, op, 1, parts, 0, axis, es, /*toWhole=*/false);
}

// slice: input -> output; ends (0), starts (1), steps (2).
template <class L> void k_slice(L &l, OpCall &op) {
  using namespace other;
  requireTensors(op, 2);
  const TensorRef &in = op[0], &out = op[1];
  size_t es = elementSize(in, "input");
  requireSameType(in, "input", out, "output");
  SliceGeometry s = sliceGeometry(op, in, out);
  if (l.preparing() || out.numel() == 0)
    return;
  stridedRead(l, s.read,
              static_cast<const char *>(in.data) + s.base * (int64_t)es,
              out.data, es);
}

// slice_backward: grad -> grad_input; ends (0), starts (1), steps (2).
template <class L> void k_slice_backward(L &l, OpCall &op) {
  using namespace other;
  requireTensors(op, 2);
  const TensorRef &grad = op[0], &out = op[1];
  size_t es = elementSize(grad, "grad");
  requireSameType(grad, "grad", out, "grad_input");
  SliceGeometry s = sliceGeometry(op, out, grad);
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
  requireTensors(op, 3);
  const TensorRef &data = op[0], &out = op[2];
  const TensorRef &indices = requireIndex(op, 1, "indices");
  size_t es = elementSize(data, "data");
  requireSameType(data, "data", out, "output");
  GatherLayout g = gatherLayout(op, data, indices, out, "output");
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
  requireTensors(op, 3);
  const TensorRef &grad = requireF32(op, 0, "grad");
  const TensorRef &indices = requireIndex(op, 1, "indices");
  const TensorRef &out = requireF32(op, 2, "grad_input");
  GatherLayout g = gatherLayout(op, out, indices, grad, "grad");
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

} // namespace cuda
} // namespace tidalrt

#endif // TIDALRT_CUDA_OTHER_DATA_MOVEMENT_H
