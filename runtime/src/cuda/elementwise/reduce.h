// reduce.h - the CUDA kernels reduce_sum, reduce_mean, reduce_max,
// reduce_min, reduce_prod, argmax, argmin and broadcast_to (launch.h).
//
// reduce_max / reduce_min / reduce_prod / argmax / argmin: one thread per
// result combines its elements in row-major order with the CPU kernels'
// formulas (cpu/reduce_math.h), as the CPU does, so every type matches it
// bit for bit.
//
// Reductions add in the CPU kernel's order (cpu/reduce.cpp), so float64
// and integer results match it bit for bit, and float32 results match its
// scalar path (TIDAL_CPU_ISA=scalar) bit for bit: floats accumulate in
// double and round once. (The CPU's AVX2 path adds contiguous rows in
// another order, 16 lanes instead of 4, so float32 sums of a reduced
// innermost axis may differ from it in the last bit, rarely: their double
// sums differ by far less than a float32 ulp.) The CPU's order depends on
// the shape only:
//   - innermost segment reduced: an output sums its reduced rows, each row
//     with four interleaved accumulators; for few, large outputs the rows
//     (or the columns of one row) are cut into blocks whose partial sums
//     are added in order;
//   - innermost segment kept: an output accumulates its reduced rows one by
//     one (float32: four rows at a time, paired); for few columns the rows
//     are cut into at most 16 blocks, added in order.
// One thread computes one output, or one block's partial sum into the
// workspace, which a second pass adds in order; no atomics, so results do
// not depend on the launch geometry.
#ifndef TIDALRT_CUDA_ELEMENTWISE_REDUCE_H
#define TIDALRT_CUDA_ELEMENTWISE_REDUCE_H

#include "../../cpu/reduce_math.h"
#include "common.h"
#include "host.h"

namespace tidalrt {
namespace cuda {
namespace elementwise {

// Floats accumulate in double, integers in int64 (wrapping).
template <typename T>
using AccOf = std::conditional_t<std::is_floating_point_v<T>, double, int64_t>;

template <typename T> TIDAL_HD inline AccOf<T> addAcc(AccOf<T> a, AccOf<T> b) {
  if constexpr (std::is_floating_point_v<T>)
    return a + b;
  else
    return (int64_t)((uint64_t)a + (uint64_t)b);
}

// The CPU's sumRow: four interleaved accumulators for floats.
template <typename T> TIDAL_HD inline AccOf<T> sumRow(const T *x, int64_t n) {
  if constexpr (std::is_floating_point_v<T>) {
    double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0;
    int64_t i = 0;
    for (; i + 4 <= n; i += 4) {
      s0 += x[i];
      s1 += x[i + 1];
      s2 += x[i + 2];
      s3 += x[i + 3];
    }
    double s = (s0 + s1) + (s2 + s3);
    for (; i < n; ++i)
      s += x[i];
    return s;
  } else {
    uint64_t s = 0;
    for (int64_t i = 0; i < n; ++i)
      s += (uint64_t)(int64_t)x[i];
    return (int64_t)s;
  }
}

template <typename T>
TIDAL_HD inline T finish(AccOf<T> s, int64_t count, bool mean) {
  if (mean && count > 0) {
    if constexpr (std::is_floating_point_v<T>)
      return (T)(s / (double)count);
    else
      return (T)(s / count);
  }
  return (T)s;
}

// What the reduction bodies share.
template <typename T> struct ReduceArgs {
  Nest kept;
  Nest reduced;
  int64_t inner; // the innermost segment's extent
  const T *x;
  T *y;
  AccOf<T> *partials; // blocks per output, when split
  int64_t blocks;
  int64_t rowsPerBlock;
  int64_t colsPerBlock;
  int64_t count;
  bool mean;
};

// Innermost segment reduced: output o sums reduced rows [r0, r1), columns
// [c0, c1) of each.
template <typename T>
TIDAL_HD inline AccOf<T> trailingPartial(const ReduceArgs<T> &a, int64_t o,
                                         int64_t r0, int64_t r1, int64_t c0,
                                         int64_t c1) {
  const T *base = a.x + nestOffset(a.kept, o) + c0;
  AccOf<T> s = 0;
  for (int64_t r = r0; r < r1; ++r)
    s = addAcc<T>(s, sumRow(base + nestOffset(a.reduced, r), c1 - c0));
  return s;
}

// Innermost segment kept: output j = (o, k) accumulates reduced rows
// [r0, r1) of column k.
template <typename T>
TIDAL_HD inline AccOf<T> keptPartial(const ReduceArgs<T> &a, int64_t j,
                                     int64_t r0, int64_t r1) {
  const int64_t o = j / a.inner, k = j - o * a.inner;
  const T *base = a.x + nestOffset(a.kept, o) + k;
  AccOf<T> acc = 0;
  int64_t r = r0;
  if constexpr (std::is_same_v<T, float>) {
    for (; r + 4 <= r1; r += 4) {
      const double v0 = base[nestOffset(a.reduced, r)];
      const double v1 = base[nestOffset(a.reduced, r + 1)];
      const double v2 = base[nestOffset(a.reduced, r + 2)];
      const double v3 = base[nestOffset(a.reduced, r + 3)];
      acc += (v0 + v1) + (v2 + v3);
    }
  }
  for (; r < r1; ++r) {
    if constexpr (std::is_floating_point_v<T>)
      acc += base[nestOffset(a.reduced, r)];
    else
      acc = addAcc<T>(acc, (int64_t)base[nestOffset(a.reduced, r)]);
  }
  return acc;
}

// Partial sum `b` of output o, over the CPU's block b.
template <typename T, bool InnerReduced>
TIDAL_HD inline AccOf<T> blockSum(const ReduceArgs<T> &a, int64_t o,
                                  int64_t b) {
  const int64_t rows = a.reduced.size;
  if constexpr (InnerReduced) {
    if (a.colsPerBlock) {
      const int64_t c0 = b * a.colsPerBlock;
      const int64_t c1 =
          c0 + a.colsPerBlock < a.inner ? c0 + a.colsPerBlock : a.inner;
      return trailingPartial(a, o, 0, rows, c0, c1);
    }
    const int64_t r0 = b * a.rowsPerBlock;
    const int64_t r1 = r0 + a.rowsPerBlock < rows ? r0 + a.rowsPerBlock : rows;
    return trailingPartial(a, o, r0, r1, 0, a.inner);
  } else {
    const int64_t r0 = b * a.rowsPerBlock;
    const int64_t r1 = r0 + a.rowsPerBlock < rows ? r0 + a.rowsPerBlock : rows;
    return keptPartial(a, o, r0, r1);
  }
}

// One output, unsplit.
template <typename T, bool InnerReduced> struct ReduceBody {
  ReduceArgs<T> a;
  TIDAL_HD void operator()(int64_t o) const {
    const AccOf<T> s =
        InnerReduced ? trailingPartial(a, o, 0, a.reduced.size, 0, a.inner)
                     : keptPartial(a, o, 0, a.reduced.size);
    a.y[o] = finish<T>(s, a.count, a.mean);
  }
};

// One block of one output, into the workspace.
template <typename T, bool InnerReduced> struct ReduceBlockBody {
  ReduceArgs<T> a;
  TIDAL_HD void operator()(int64_t item) const {
    const int64_t o = item / a.blocks;
    a.partials[item] = blockSum<T, InnerReduced>(a, o, item - o * a.blocks);
  }
};

// The blocks of one output, added in order.
template <typename T> struct ReduceCombineBody {
  const AccOf<T> *partials;
  T *y;
  int64_t blocks;
  int64_t count;
  bool mean;
  TIDAL_HD void operator()(int64_t o) const {
    AccOf<T> s = 0;
    for (int64_t b = 0; b < blocks; ++b)
      s = addAcc<T>(s, partials[o * blocks + b]);
    y[o] = finish<T>(s, count, mean);
  }
};

template <typename T, bool InnerReduced, class L>
void launchReduce(L &l, const ReduceSetup &s, const ReduceArgs<T> &a) {
  const int64_t numOut = s.plan.numOut;
  if (s.blocks == 1) {
    l.forEach(numOut, ReduceBody<T, InnerReduced>{a});
    return;
  }
  l.forEach(numOut * s.blocks, ReduceBlockBody<T, InnerReduced>{a});
  l.forEach(numOut, ReduceCombineBody<T>{a.partials, a.y, s.blocks,
                                         s.plan.count, a.mean});
}

template <typename T, class L>
void runReduce(L &l, const OpCall &op, const ReduceSetup &s, bool mean) {
  const tidalrt::ew::ReducePlan &p = s.plan;
  const size_t bytes =
      s.blocks > 1 ? (size_t)(p.numOut * s.blocks) * sizeof(AccOf<T>) : 0;
  AccOf<T> *partials = static_cast<AccOf<T> *>(l.workspace(bytes));
  if (l.preparing() || p.numOut == 0)
    return;
  const TensorRef &x = op[0], &y = op[1];
  if (p.identity) {
    // Only size-1 dimensions are reduced: a copy (count is 1).
    l.copy(y.data, x.data, (size_t)p.numOut * sizeof(T));
    return;
  }
  if (p.count == 0) {
    l.zero(y.data, (size_t)p.numOut * sizeof(T));
    return;
  }
  ReduceArgs<T> a;
  a.kept = p.kept;
  a.reduced = p.reduced;
  a.inner = p.inner;
  a.x = static_cast<const T *>(x.data);
  a.y = static_cast<T *>(y.data);
  a.partials = partials;
  a.blocks = s.blocks;
  a.rowsPerBlock = s.rowsPerBlock;
  a.colsPerBlock = s.colsPerBlock;
  a.count = p.count;
  a.mean = mean;
  if (p.innerReduced)
    launchReduce<T, true>(l, s, a);
  else
    launchReduce<T, false>(l, s, a);
}

template <class L> void reduceKernel(L &l, const OpCall &op, bool mean) {
  const ReduceSetup s = checkReduce(op);
  switch (op[0].type) {
  case TIDALRT_ELEMENT_TYPE_F32:
    return runReduce<float>(l, op, s, mean);
  case TIDALRT_ELEMENT_TYPE_F64:
    return runReduce<double>(l, op, s, mean);
  case TIDALRT_ELEMENT_TYPE_I64:
    return runReduce<int64_t>(l, op, s, mean);
  case TIDALRT_ELEMENT_TYPE_I32:
    return runReduce<int32_t>(l, op, s, mean);
  }
}

//===----------------------------------------------------------------------===//
// reduce_max, reduce_min, reduce_prod, argmax, argmin
//===----------------------------------------------------------------------===//

// The input offset of reduced element `r` (of `reduced.size * inner`, in
// row-major order) of result `o`.
struct CombineIndex {
  Nest kept;
  Nest reduced;
  int64_t inner; // the innermost segment's extent
  bool innerReduced;

  TIDAL_HD int64_t base(int64_t o) const {
    if (innerReduced)
      return nestOffset(kept, o);
    const int64_t q = o / inner;
    return nestOffset(kept, q) + (o - q * inner);
  }
  TIDAL_HD int64_t count() const {
    return innerReduced ? reduced.size * inner : reduced.size;
  }
  TIDAL_HD int64_t offset(int64_t r) const {
    if (!innerReduced)
      return nestOffset(reduced, r);
    const int64_t q = r / inner;
    return nestOffset(reduced, q) + (r - q * inner);
  }
};

inline CombineIndex combineIndex(const tidalrt::ew::ReducePlan &p) {
  CombineIndex c;
  c.kept = p.kept;
  c.reduced = p.reduced;
  c.inner = p.inner;
  c.innerReduced = p.innerReduced;
  return c;
}

template <reduce::Kind K, typename T> struct CombineBody {
  CombineIndex ix;
  const T *x;
  T *y;
  TIDAL_HD void operator()(int64_t o) const {
    const T *base = x + ix.base(o);
    reduce::AccOf<K, T> acc = reduce::identity<K, T>();
    for (int64_t r = 0, n = ix.count(); r < n; ++r)
      acc = reduce::combine<K, T>(acc, base[ix.offset(r)]);
    y[o] = (T)acc;
  }
};

template <reduce::Kind K, typename T, class L>
void runCombine(L &l, const OpCall &op, const tidalrt::ew::ReducePlan &p) {
  if (l.preparing() || p.numOut == 0)
    return;
  const TensorRef &x = op[0], &y = op[1];
  if (p.identity) {
    // Only size-1 dimensions are reduced: combining one element with the
    // identity gives it back.
    l.copy(y.data, x.data, (size_t)p.numOut * sizeof(T));
    return;
  }
  CombineBody<K, T> body;
  body.ix = combineIndex(p);
  body.x = static_cast<const T *>(x.data);
  body.y = static_cast<T *>(y.data);
  l.forEach(p.numOut, body);
}

template <reduce::Kind K, class L> void combineKernel(L &l, const OpCall &op) {
  const tidalrt::ew::ReducePlan p = checkReduce(op).plan;
  switch (op[0].type) {
  case TIDALRT_ELEMENT_TYPE_F32:
    return runCombine<K, float>(l, op, p);
  case TIDALRT_ELEMENT_TYPE_F64:
    return runCombine<K, double>(l, op, p);
  case TIDALRT_ELEMENT_TYPE_I64:
    return runCombine<K, int64_t>(l, op, p);
  case TIDALRT_ELEMENT_TYPE_I32:
    return runCombine<K, int32_t>(l, op, p);
  }
}

template <typename T> struct ArgBody {
  CombineIndex ix;
  const T *x;
  int64_t *y;
  bool isMax, last;
  TIDAL_HD void operator()(int64_t o) const {
    const T *base = x + ix.base(o);
    T best = base[ix.offset(0)];
    int64_t at = 0;
    for (int64_t r = 1, n = ix.count(); r < n; ++r) {
      const T v = base[ix.offset(r)];
      if (reduce::beats(v, best, isMax, last)) {
        best = v;
        at = r;
      }
    }
    y[o] = at;
  }
};

template <typename T, class L>
void runArg(L &l, const OpCall &op, const tidalrt::ew::ReducePlan &p,
            bool isMax, bool last) {
  if (l.preparing() || p.numOut == 0)
    return;
  const TensorRef &x = op[0], &y = op[1];
  if (p.identity) { // the axis has extent 1
    l.zero(y.data, (size_t)p.numOut * sizeof(int64_t));
    return;
  }
  ArgBody<T> body;
  body.ix = combineIndex(p);
  body.x = static_cast<const T *>(x.data);
  body.y = static_cast<int64_t *>(y.data);
  body.isMax = isMax;
  body.last = last;
  l.forEach(p.numOut, body);
}

template <class L> void argKernel(L &l, const OpCall &op, bool isMax) {
  bool last = false;
  const tidalrt::ew::ReducePlan p = checkArgReduce(op, last);
  switch (op[0].type) {
  case TIDALRT_ELEMENT_TYPE_F32:
    return runArg<float>(l, op, p, isMax, last);
  case TIDALRT_ELEMENT_TYPE_F64:
    return runArg<double>(l, op, p, isMax, last);
  case TIDALRT_ELEMENT_TYPE_I64:
    return runArg<int64_t>(l, op, p, isMax, last);
  case TIDALRT_ELEMENT_TYPE_I32:
    return runArg<int32_t>(l, op, p, isMax, last);
  }
}

//===----------------------------------------------------------------------===//
// broadcast_to
//===----------------------------------------------------------------------===//

// Copies words of the element's size.
template <typename W> struct BroadcastBody {
  Bcast b;
  const W *x;
  W *y;
  TIDAL_HD void operator()(int64_t i) const { y[i] = x[b.offset0(i)]; }
};

template <typename W, class L>
void launchBroadcast(L &l, const OpCall &op, const Bcast &b, int64_t n) {
  BroadcastBody<W> body;
  body.b = b;
  body.x = static_cast<const W *>(op[0].data);
  body.y = static_cast<W *>(op[1].data);
  l.forEach(n, body);
}

template <class L> void broadcastToKernel(L &l, const OpCall &op) {
  Bcast b;
  int64_t n = 0;
  const size_t size = checkBroadcastTo(op, b, n);
  if (l.preparing() || n == 0)
    return;
  switch (size) {
  case 1:
    return launchBroadcast<uint8_t>(l, op, b, n);
  case 2:
    return launchBroadcast<uint16_t>(l, op, b, n);
  case 4:
    return launchBroadcast<uint32_t>(l, op, b, n);
  default:
    return launchBroadcast<uint64_t>(l, op, b, n);
  }
}

} // namespace elementwise

template <class L> void k_reduce_sum(L &l, OpCall &op) {
  elementwise::reduceKernel(l, op, false);
}
template <class L> void k_reduce_mean(L &l, OpCall &op) {
  elementwise::reduceKernel(l, op, true);
}
template <class L> void k_reduce_max(L &l, OpCall &op) {
  elementwise::combineKernel<reduce::Kind::Max>(l, op);
}
template <class L> void k_reduce_min(L &l, OpCall &op) {
  elementwise::combineKernel<reduce::Kind::Min>(l, op);
}
template <class L> void k_reduce_prod(L &l, OpCall &op) {
  elementwise::combineKernel<reduce::Kind::Prod>(l, op);
}
template <class L> void k_argmax(L &l, OpCall &op) {
  elementwise::argKernel(l, op, true);
}
template <class L> void k_argmin(L &l, OpCall &op) {
  elementwise::argKernel(l, op, false);
}
template <class L> void k_broadcast_to(L &l, OpCall &op) {
  elementwise::broadcastToKernel(l, op);
}

} // namespace cuda
} // namespace tidalrt

#endif // TIDALRT_CUDA_ELEMENTWISE_REDUCE_H
