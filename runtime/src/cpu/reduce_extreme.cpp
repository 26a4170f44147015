// reduce_extreme.cpp - reduce_max / reduce_min / reduce_prod and argmax /
// argmin (reduce.cpp has the calls' checks and plan, reduce_math.h the
// formulas).
//
// reduce_max / reduce_min / reduce_prod take reduce_sum's calls and plan;
// argmax / argmin(input) -> int64 output, attributes axis(0), keepdims(1),
// select_last_index(2), reduce one axis. Each result combines its elements
// in row-major order, never split, so that the CUDA kernels reproduce them
// bit for bit; work is split over results (and column blocks of a kept
// innermost segment) only.
#include "broadcast.h"
#include "elementwise_checks.h"
#include "kernel.h"
#include "reduce_math.h"
#include "reduce_plan.h"

#include <type_traits>

using namespace tidalrt;
using namespace tidalrt::ew;

namespace {

//===----------------------------------------------------------------------===//
// reduce_max, reduce_min, reduce_prod
//===----------------------------------------------------------------------===//

using reduce::Kind;

template <Kind K, typename T> void runCombine(OpCall &op, const ReducePlan &p) {
  using Acc = reduce::AccOf<K, T>;
  if (preparing(op.context) || p.numOut == 0)
    return;
  const T *X = static_cast<const T *>(op[0].data);
  T *Y = static_cast<T *>(op[1].data);
  if (p.identity) {
    // Only size-1 dimensions are reduced: each result combines one element
    // with the identity, which gives the element back.
    if (Y != X)
      memmove(Y, X, (size_t)p.numOut * sizeof(T));
    return;
  }
  const bool parallel = p.numOut * p.reduced.size * p.inner >= parallelGrain();
  if (p.innerReduced) {
#pragma omp parallel for schedule(static) if (parallel)
    for (int64_t o = 0; o < p.numOut; ++o) {
      const T *base = X + Odometer(p.kept, o).off;
      Acc acc = reduce::identity<K, T>();
      Odometer r(p.reduced, 0);
      for (int64_t i = 0; i < p.reduced.size; ++i, r.next()) {
        const T *row = base + r.off;
        for (int64_t c = 0; c < p.inner; ++c)
          acc = reduce::combine<K, T>(acc, row[c]);
      }
      Y[o] = (T)acc;
    }
    return;
  }
  // Innermost segment kept: column blocks of each kept row accumulate the
  // reduced rows in order.
  const int64_t cols = p.inner;
  const int64_t colBlock = cols < kRowBlock ? cols : kRowBlock;
  const int64_t colBlocks = (cols + colBlock - 1) / colBlock;
#pragma omp parallel for schedule(static) if (parallel)
  for (int64_t it = 0; it < p.kept.size * colBlocks; ++it) {
    const int64_t o = it / colBlocks, c0 = (it % colBlocks) * colBlock;
    const int64_t n = c0 + colBlock < cols ? colBlock : cols - c0;
    Acc acc[kRowBlock];
    for (int64_t k = 0; k < n; ++k)
      acc[k] = reduce::identity<K, T>();
    const T *base = X + Odometer(p.kept, o).off + c0;
    Odometer r(p.reduced, 0);
    for (int64_t i = 0; i < p.reduced.size; ++i, r.next()) {
      const T *row = base + r.off;
      for (int64_t k = 0; k < n; ++k)
        acc[k] = reduce::combine<K, T>(acc[k], row[k]);
    }
    T *y = Y + o * cols + c0;
    for (int64_t k = 0; k < n; ++k)
      y[k] = (T)acc[k];
  }
}

template <Kind K> tidalrt_status_t combineKernel(OpCall &op) {
  ReducePlan plan;
  checkReduce(op, plan);
  switch (op[0].type) {
  case TIDALRT_ELEMENT_TYPE_F32:
    runCombine<K, float>(op, plan);
    break;
  case TIDALRT_ELEMENT_TYPE_F64:
    runCombine<K, double>(op, plan);
    break;
  case TIDALRT_ELEMENT_TYPE_I64:
    runCombine<K, int64_t>(op, plan);
    break;
  default:
    runCombine<K, int32_t>(op, plan);
    break;
  }
  return ok();
}

//===----------------------------------------------------------------------===//
// argmax, argmin
//===----------------------------------------------------------------------===//

template <typename T>
void runArg(OpCall &op, const ReducePlan &p, bool isMax, bool last) {
  if (preparing(op.context) || p.numOut == 0)
    return;
  const T *X = static_cast<const T *>(op[0].data);
  int64_t *Y = static_cast<int64_t *>(op[1].data);
  if (p.identity) { // the axis has extent 1
    for (int64_t o = 0; o < p.numOut; ++o)
      Y[o] = 0;
    return;
  }
  const bool parallel = p.numOut * p.count >= parallelGrain();
  if (p.innerReduced) {
    // The axis is the innermost segment: one contiguous row per result.
#pragma omp parallel for schedule(static) if (parallel)
    for (int64_t o = 0; o < p.numOut; ++o) {
      const T *row = X + Odometer(p.kept, o).off;
      T best = row[0];
      int64_t at = 0;
      for (int64_t c = 1; c < p.inner; ++c)
        if (reduce::beats(row[c], best, isMax, last)) {
          best = row[c];
          at = c;
        }
      Y[o] = at;
    }
    return;
  }
  // The axis is a reduced segment above a kept innermost one: rows along
  // it update column blocks of each kept row.
  const int64_t cols = p.inner;
  const int64_t colBlock = cols < kRowBlock ? cols : kRowBlock;
  const int64_t colBlocks = (cols + colBlock - 1) / colBlock;
#pragma omp parallel for schedule(static) if (parallel)
  for (int64_t it = 0; it < p.kept.size * colBlocks; ++it) {
    const int64_t o = it / colBlocks, c0 = (it % colBlocks) * colBlock;
    const int64_t n = c0 + colBlock < cols ? colBlock : cols - c0;
    T best[kRowBlock];
    int64_t *y = Y + o * cols + c0;
    const T *base = X + Odometer(p.kept, o).off + c0;
    Odometer r(p.reduced, 0);
    for (int64_t k = 0; k < n; ++k) {
      best[k] = base[r.off + k];
      y[k] = 0;
    }
    r.next();
    for (int64_t i = 1; i < p.reduced.size; ++i, r.next()) {
      const T *row = base + r.off;
      for (int64_t k = 0; k < n; ++k)
        if (reduce::beats(row[k], best[k], isMax, last)) {
          best[k] = row[k];
          y[k] = i;
        }
    }
  }
}

tidalrt_status_t argKernel(OpCall &op, bool isMax) {
  ReducePlan plan;
  const bool last = checkArgReduce(op, plan);
  switch (op[0].type) {
  case TIDALRT_ELEMENT_TYPE_F32:
    runArg<float>(op, plan, isMax, last);
    break;
  case TIDALRT_ELEMENT_TYPE_F64:
    runArg<double>(op, plan, isMax, last);
    break;
  case TIDALRT_ELEMENT_TYPE_I64:
    runArg<int64_t>(op, plan, isMax, last);
    break;
  default:
    runArg<int32_t>(op, plan, isMax, last);
    break;
  }
  return ok();
}

} // namespace

extern "C" tidalrt_status_t tidalrt_k_reduce_max(tidalrt_context_t *ctx,
                                                 const int64_t *desc,
                                                 void *const *buffers) {
  return runKernel(ctx, desc, buffers, "reduce_max", combineKernel<Kind::Max>);
}

extern "C" tidalrt_status_t tidalrt_k_reduce_min(tidalrt_context_t *ctx,
                                                 const int64_t *desc,
                                                 void *const *buffers) {
  return runKernel(ctx, desc, buffers, "reduce_min", combineKernel<Kind::Min>);
}

extern "C" tidalrt_status_t tidalrt_k_reduce_prod(tidalrt_context_t *ctx,
                                                  const int64_t *desc,
                                                  void *const *buffers) {
  return runKernel(ctx, desc, buffers, "reduce_prod",
                   combineKernel<Kind::Prod>);
}

extern "C" tidalrt_status_t tidalrt_k_argmax(tidalrt_context_t *ctx,
                                             const int64_t *desc,
                                             void *const *buffers) {
  return runKernel(ctx, desc, buffers, "argmax",
                   [](OpCall &op) { return argKernel(op, true); });
}

extern "C" tidalrt_status_t tidalrt_k_argmin(tidalrt_context_t *ctx,
                                             const int64_t *desc,
                                             void *const *buffers) {
  return runKernel(ctx, desc, buffers, "argmin",
                   [](OpCall &op) { return argKernel(op, false); });
}
