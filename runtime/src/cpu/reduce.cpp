// reduce.cpp - ReduceSum/ReduceMean, the checks and plan every reduction
// shares (reduce_extreme.cpp has max/min/prod and argmax/argmin), and
// broadcast_to.
//
// reduce_sum / reduce_mean(input) -> output, attributes axes(0) (sorted,
// unique, non-negative: the verifier's invariant, checked again here) and
// keepdims(1) (the flat order of the result is the same either way). Types
// float32, float64, int64, int32; the result has the input's type.
// float32 and float64 accumulate in double (the vector loops of simd.h for
// float32) and round once at the end; mean divides the double sum by the
// reduced count, as the evaluator does. Integers accumulate in int64
// (wrapping) and mean truncates toward zero. An empty reduction gives 0.
//
// The input's dimensions are collapsed into alternating kept/reduced
// segments (size-1 dimensions dropped, neighbours merged). If the innermost
// segment is reduced, each output is a sum of contiguous rows (reduce over
// the last axes, over all axes); if it is kept, rows of the innermost kept
// segment are accumulated (reduce over axis 0 of [N, C]: bias gradients).
// Work is split into items by the shape alone; when there are few outputs
// the reduction itself is cut into fixed blocks whose partial sums are
// combined in order, so results do not depend on the thread count.
//
// broadcast_to(input) -> output: NumPy broadcast of the input to the
// result's shape, any element type of 1, 2, 4 or 8 bytes.
#include "broadcast.h"
#include "elementwise_checks.h"
#include "kernel.h"
#include "reduce_math.h"
#include "reduce_plan.h"
#include "simd.h"

#include <cstring>
#include <type_traits>

using namespace tidalrt;
using namespace tidalrt::ew;

namespace {

//===----------------------------------------------------------------------===//
// Loop nests
//===----------------------------------------------------------------------===//

// Fails unless the call has two tensors, an input and a result of its type.
void expectInputAndResult(const OpCall &op) {
  expectTensors(op, 2);
  const TensorRef &x = op[0], &y = op[1];
  if (x.type != y.type)
    fail(TIDALRT_INVALID_ARGUMENT,
         "input of type %s with a %s result; they must match", typeName(x.type),
         typeName(y.type));
}

void buildReducePlan(const TensorRef &x, const int64_t *axes, int64_t numAxes,
                     ReducePlan &p) {
  bool red[TIDALRT_MAX_RANK] = {};
  for (int64_t i = 0; i < numAxes; ++i) {
    if (axes[i] < 0 || axes[i] >= x.rank)
      fail(TIDALRT_INVALID_ARGUMENT, "axis %lld is out of range for rank %d",
           (long long)axes[i], x.rank);
    if (red[axes[i]])
      fail(TIDALRT_INVALID_ARGUMENT, "axis %lld is listed twice",
           (long long)axes[i]);
    red[axes[i]] = true;
  }
  // Segments, outermost first.
  int nseg = 0;
  int64_t ext[TIDALRT_MAX_RANK];
  bool segRed[TIDALRT_MAX_RANK];
  p.numOut = p.count = 1;
  for (int d = 0; d < x.rank; ++d) {
    int64_t e = x.dims[d];
    if (red[d])
      p.count *= e;
    else
      p.numOut *= e;
    if (e == 1)
      continue;
    if (nseg > 0 && segRed[nseg - 1] == red[d]) {
      ext[nseg - 1] *= e;
    } else {
      ext[nseg] = e;
      segRed[nseg] = red[d];
      ++nseg;
    }
  }
  p.identity = true;
  for (int s = 0; s < nseg; ++s)
    if (segRed[s])
      p.identity = false;
  if (p.identity)
    return;
  int64_t stride[TIDALRT_MAX_RANK];
  int64_t st = 1;
  for (int s = nseg - 1; s >= 0; --s) {
    stride[s] = st;
    st *= ext[s];
  }
  p.innerReduced = segRed[nseg - 1];
  p.inner = ext[nseg - 1];
  for (int s = 0; s < nseg - 1; ++s)
    (segRed[s] ? p.reduced : p.kept).add(ext[s], stride[s]);
}

} // namespace

namespace {

// The element types the reductions compute.
void expectReducibleType(const TensorRef &x) {
  switch (x.type) {
  case TIDALRT_ELEMENT_TYPE_F32:
  case TIDALRT_ELEMENT_TYPE_F64:
  case TIDALRT_ELEMENT_TYPE_I64:
  case TIDALRT_ELEMENT_TYPE_I32:
    break;
  default:
    fail(TIDALRT_UNSUPPORTED,
         "element type %s is not supported (float32, float64, int64, int32)",
         typeName(x.type));
  }
}

} // namespace

void tidalrt::ew::checkReduce(const OpCall &op, ReducePlan &plan) {
  expectInputAndResult(op);
  const TensorRef &x = op[0], &y = op[1];
  if (!x.present())
    fail(TIDALRT_INVALID_ARGUMENT, "input is absent");
  const int64_t *axes = nullptr;
  const int64_t numAxes = op.getInts(0, &axes);
  (void)op.getBool(1); // keepdims: the result's shape already says it
  buildReducePlan(x, axes, numAxes, plan);
  if (y.numel() != plan.numOut) {
    char b1[160], b2[160];
    fail(TIDALRT_INVALID_ARGUMENT,
         "result shape %s does not match reducing %s over %lld axes",
         shapeString(y, b1, sizeof b1), shapeString(x, b2, sizeof b2),
         (long long)numAxes);
  }
  expectReducibleType(x);
}

bool tidalrt::ew::checkArgReduce(const OpCall &op, ReducePlan &plan) {
  expectTensors(op, 2);
  const TensorRef &x = op[0], &y = op[1];
  if (!x.present())
    fail(TIDALRT_INVALID_ARGUMENT, "input is absent");
  if (y.type != TIDALRT_ELEMENT_TYPE_I64)
    fail(TIDALRT_INVALID_ARGUMENT, "result of type %s; it must be int64",
         typeName(y.type));
  const int64_t axis = op.getInt(0);
  (void)op.getBool(1); // keepdims: the result's shape already says it
  const bool last = op.getBool(2);
  buildReducePlan(x, &axis, 1, plan);
  if (y.numel() != plan.numOut) {
    char b1[160], b2[160];
    fail(TIDALRT_INVALID_ARGUMENT,
         "result shape %s does not match reducing %s over axis %lld",
         shapeString(y, b1, sizeof b1), shapeString(x, b2, sizeof b2),
         (long long)axis);
  }
  if (plan.count == 0 && plan.numOut > 0)
    fail(TIDALRT_INVALID_ARGUMENT, "axis %lld has extent 0: no index to take",
         (long long)axis);
  expectReducibleType(x);
  return last;
}

namespace {

//===----------------------------------------------------------------------===//
// Per-type arithmetic
//===----------------------------------------------------------------------===//

template <typename T>
using AccOf = std::conditional_t<std::is_floating_point_v<T>, double, int64_t>;

template <typename T> AccOf<T> sumRow(simd::Isa isa, const T *x, int64_t n) {
  if constexpr (std::is_same_v<T, float>) {
    return simd::sumF32(isa, x, n);
  } else if constexpr (std::is_same_v<T, double>) {
    double s0 = 0, s1 = 0, s2 = 0, s3 = 0;
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
void accumulateRow(simd::Isa isa, const T *x, AccOf<T> *acc, int64_t n) {
  if constexpr (std::is_same_v<T, float>) {
    simd::accumulateF32(isa, x, acc, n);
  } else if constexpr (std::is_same_v<T, double>) {
    for (int64_t i = 0; i < n; ++i)
      acc[i] += x[i];
  } else {
    for (int64_t i = 0; i < n; ++i)
      acc[i] = (int64_t)((uint64_t)acc[i] + (uint64_t)(int64_t)x[i]);
  }
}

template <typename T> inline AccOf<T> addAcc(AccOf<T> a, AccOf<T> b) {
  if constexpr (std::is_floating_point_v<T>)
    return a + b;
  else
    return (int64_t)((uint64_t)a + (uint64_t)b);
}

template <typename T> T finish(AccOf<T> s, int64_t count, bool mean) {
  if (mean && count > 0) {
    if constexpr (std::is_floating_point_v<T>)
      return (T)(s / (double)count);
    else
      return (T)(s / count);
  }
  return (T)s;
}

//===----------------------------------------------------------------------===//
// Reduction loops
//===----------------------------------------------------------------------===//

} // namespace

TrailingSplit tidalrt::ew::trailingSplit(const ReducePlan &p) {
  TrailingSplit s;
  const int64_t perOut = p.reduced.size * p.inner;
  if (p.numOut >= 64 || p.numOut * perOut < kParallelMinElements ||
      perOut < 2 * kReduceBlock)
    return s;
  if (p.reduced.size > 1) {
    s.rowsPerBlock = kReduceBlock / p.inner > 1 ? kReduceBlock / p.inner : 1;
    s.blocks = (p.reduced.size + s.rowsPerBlock - 1) / s.rowsPerBlock;
  } else {
    s.colsPerBlock = kReduceBlock;
    s.blocks = (p.inner + kReduceBlock - 1) / kReduceBlock;
  }
  return s;
}

KeptSplit tidalrt::ew::keptSplit(const ReducePlan &p) {
  KeptSplit s;
  s.colBlock = p.inner < kRowBlock ? p.inner : kRowBlock;
  s.colBlocks = (p.inner + s.colBlock - 1) / s.colBlock;
  s.rowsPerBlock = p.reduced.size;
  const int64_t items = p.kept.size * s.colBlocks;
  const int64_t total = p.kept.size * p.inner * p.reduced.size;
  if (items >= 16 || total < kParallelMinElements)
    return s;
  int64_t minRows = (8192 + s.colBlock - 1) / s.colBlock;
  int64_t blocks = (p.reduced.size + minRows - 1) / minRows;
  if (blocks > kMaxRowSplits)
    blocks = kMaxRowSplits;
  if (blocks <= 1)
    return s;
  s.rowsPerBlock = (p.reduced.size + blocks - 1) / blocks;
  s.rowBlocks = (p.reduced.size + s.rowsPerBlock - 1) / s.rowsPerBlock;
  return s;
}

namespace {

template <typename T>
void reduceTrailing(const ReducePlan &p, const T *X, T *Y, bool mean,
                    AccOf<T> *partials) {
  using Acc = AccOf<T>;
  const simd::Isa isa = simd::activeIsa();
  const TrailingSplit split = trailingSplit(p);
  const bool parallel = p.numOut * p.reduced.size * p.inner >= parallelGrain();
  // Sum of reduced rows [r0, r1), columns [c0, c1) of output o.
  auto partial = [&](int64_t o, int64_t r0, int64_t r1, int64_t c0,
                     int64_t c1) {
    const T *base = X + Odometer(p.kept, o).off + c0;
    Acc s = 0;
    Odometer r(p.reduced, r0);
    for (int64_t i = r0; i < r1; ++i, r.next())
      s = addAcc<T>(s, sumRow(isa, base + r.off, c1 - c0));
    return s;
  };
  if (split.blocks == 1) {
#pragma omp parallel for schedule(static) if (parallel)
    for (int64_t o = 0; o < p.numOut; ++o)
      Y[o] =
          finish<T>(partial(o, 0, p.reduced.size, 0, p.inner), p.count, mean);
    return;
  }
  const int64_t items = p.numOut * split.blocks;
#pragma omp parallel for schedule(static) if (parallel)
  for (int64_t it = 0; it < items; ++it) {
    int64_t o = it / split.blocks, b = it % split.blocks;
    if (split.rowsPerBlock) {
      int64_t r0 = b * split.rowsPerBlock;
      int64_t r1 = r0 + split.rowsPerBlock < p.reduced.size
                       ? r0 + split.rowsPerBlock
                       : p.reduced.size;
      partials[it] = partial(o, r0, r1, 0, p.inner);
    } else {
      int64_t c0 = b * split.colsPerBlock;
      int64_t c1 =
          c0 + split.colsPerBlock < p.inner ? c0 + split.colsPerBlock : p.inner;
      partials[it] = partial(o, 0, p.reduced.size, c0, c1);
    }
  }
  for (int64_t o = 0; o < p.numOut; ++o) {
    Acc s = 0;
    for (int64_t b = 0; b < split.blocks; ++b)
      s = addAcc<T>(s, partials[o * split.blocks + b]);
    Y[o] = finish<T>(s, p.count, mean);
  }
}

template <typename T> size_t keptScratchBytes(const ReducePlan &p) {
  KeptSplit s = keptSplit(p);
  if (s.rowBlocks == 1)
    return 0;
  return (size_t)(p.kept.size * s.colBlocks * s.rowBlocks * s.colBlock) *
         sizeof(AccOf<T>);
}

template <typename T>
void reduceKept(const ReducePlan &p, const T *X, T *Y, bool mean,
                AccOf<T> *partials) {
  using Acc = AccOf<T>;
  const simd::Isa isa = simd::activeIsa();
  const KeptSplit s = keptSplit(p);
  const int64_t K = p.inner;
  const int64_t items = p.kept.size * s.colBlocks * s.rowBlocks;
  const bool parallel = p.kept.size * K * p.reduced.size >= parallelGrain();
#pragma omp parallel for schedule(static) if (parallel)
  for (int64_t it = 0; it < items; ++it) {
    const int64_t rb = it % s.rowBlocks;
    const int64_t cb = (it / s.rowBlocks) % s.colBlocks;
    const int64_t o = it / (s.rowBlocks * s.colBlocks);
    const int64_t c0 = cb * s.colBlock;
    const int64_t n = c0 + s.colBlock < K ? s.colBlock : K - c0;
    const int64_t r0 = rb * s.rowsPerBlock;
    const int64_t r1 = r0 + s.rowsPerBlock < p.reduced.size
                           ? r0 + s.rowsPerBlock
                           : p.reduced.size;
    Acc acc[kRowBlock];
    for (int64_t k = 0; k < n; ++k)
      acc[k] = 0;
    const T *base = X + Odometer(p.kept, o).off + c0;
    Odometer r(p.reduced, r0);
    int64_t i = r0;
    if constexpr (std::is_same_v<T, float>) {
      // Four rows per pass over the accumulators.
      for (; i + 4 <= r1; i += 4) {
        const float *rows[4];
        for (int k = 0; k < 4; ++k, r.next())
          rows[k] = base + r.off;
        simd::accumulate4F32(isa, rows, acc, n);
      }
    }
    for (; i < r1; ++i, r.next())
      accumulateRow(isa, base + r.off, acc, n);
    if (s.rowBlocks == 1) {
      T *y = Y + o * K + c0;
      for (int64_t k = 0; k < n; ++k)
        y[k] = finish<T>(acc[k], p.count, mean);
    } else {
      memcpy(partials + it * s.colBlock, acc, (size_t)n * sizeof(Acc));
    }
  }
  if (s.rowBlocks == 1)
    return;
  for (int64_t g = 0; g < p.kept.size * s.colBlocks; ++g) {
    const int64_t o = g / s.colBlocks, c0 = (g % s.colBlocks) * s.colBlock;
    const int64_t n = c0 + s.colBlock < K ? s.colBlock : K - c0;
    const Acc *part = partials + g * s.rowBlocks * s.colBlock;
    for (int64_t k = 0; k < n; ++k) {
      Acc sum = 0;
      for (int64_t b = 0; b < s.rowBlocks; ++b)
        sum = addAcc<T>(sum, part[b * s.colBlock + k]);
      Y[o * K + c0 + k] = finish<T>(sum, p.count, mean);
    }
  }
}

template <typename T> size_t scratchBytes(const ReducePlan &p) {
  if (p.identity || p.numOut == 0)
    return 0;
  if (p.innerReduced) {
    TrailingSplit s = trailingSplit(p);
    return s.blocks == 1 ? 0 : (size_t)(p.numOut * s.blocks) * sizeof(AccOf<T>);
  }
  return keptScratchBytes<T>(p);
}

template <typename T>
void runReduce(OpCall &op, const ReducePlan &p, bool mean) {
  const TensorRef &x = op[0], &y = op[1];
  const size_t bytes = scratchBytes<T>(p);
  AccOf<T> *partials =
      bytes ? static_cast<AccOf<T> *>(scratch(op.context, bytes)) : nullptr;
  if (preparing(op.context) || p.numOut == 0)
    return;
  const T *X = static_cast<const T *>(x.data);
  T *Y = static_cast<T *>(y.data);
  if (p.identity) {
    // Only size-1 dimensions are reduced: a copy (count is 1).
    if (Y != X)
      memmove(Y, X, (size_t)p.numOut * sizeof(T));
    return;
  }
  if (p.count == 0) {
    for (int64_t i = 0; i < p.numOut; ++i)
      Y[i] = 0;
    return;
  }
  if (p.innerReduced)
    reduceTrailing<T>(p, X, Y, mean, partials);
  else
    reduceKept<T>(p, X, Y, mean, partials);
}

tidalrt_status_t reduceKernel(OpCall &op, bool mean) {
  ReducePlan plan;
  checkReduce(op, plan);
  switch (op[0].type) {
  case TIDALRT_ELEMENT_TYPE_F32:
    runReduce<float>(op, plan, mean);
    break;
  case TIDALRT_ELEMENT_TYPE_F64:
    runReduce<double>(op, plan, mean);
    break;
  case TIDALRT_ELEMENT_TYPE_I64:
    runReduce<int64_t>(op, plan, mean);
    break;
  default:
    runReduce<int32_t>(op, plan, mean);
    break;
  }
  return ok();
}

//===----------------------------------------------------------------------===//
// broadcast_to
//===----------------------------------------------------------------------===//

} // namespace

size_t tidalrt::ew::checkBroadcastTo(const OpCall &op, BroadcastPlan &plan) {
  expectInputAndResult(op);
  const TensorRef &x = op[0], &y = op[1];
  const size_t size = tidalrt_element_type_size((tidalrt_element_type_t)x.type);
  if (size != 1 && size != 2 && size != 4 && size != 8)
    fail(TIDALRT_UNSUPPORTED, "element type %s (code %d) is not supported",
         typeName(x.type), x.type);
  const TensorRef *inputs[1] = {&x};
  if (buildBroadcastPlan(y.rank, y.dims, 1, inputs, plan) >= 0) {
    char b1[160], b2[160];
    fail(TIDALRT_INVALID_ARGUMENT,
         "input of shape %s does not broadcast to the result shape %s",
         shapeString(x, b1, sizeof b1), shapeString(y, b2, sizeof b2));
  }
  return size;
}

namespace {

template <typename W>
void broadcastRows(const BroadcastPlan &plan, const void *in, void *out) {
  const W *X = static_cast<const W *>(in);
  W *Y = static_cast<W *>(out);
  const int64_t xs = plan.innerStride(0);
  forEachRow(plan, [&](int64_t yo, const int64_t *io, int64_t c0, int64_t c1) {
    W *y = Y + yo;
    if (xs == 1) {
      memcpy(y + c0, X + io[0] + c0, (size_t)(c1 - c0) * sizeof(W));
    } else {
      const W v = X[io[0]];
      for (int64_t c = c0; c < c1; ++c)
        y[c] = v;
    }
  });
}

// A channel-blocked result of per-channel values: x is [N, C, 1...] (the
// same bytes in either layout), y [N, C, spatial...] blocked by B.
void broadcastChannelsBlocked(const TensorRef &x, const TensorRef &y) {
  int64_t n = y.dim(0), c = y.dim(1), b = tidalrt_channel_block();
  int64_t sp = n * c ? y.numel() / (n * c) : 0;
  const float *xd = x.f32();
  float *yd = y.f32();
#pragma omp parallel for collapse(2) if (y.numel() > parallelGrain())
  for (int64_t i = 0; i < n; ++i)
    for (int64_t cb = 0; cb < c / b; ++cb) {
      const float *src = xd + i * c + cb * b;
      float *dst = yd + (i * (c / b) + cb) * sp * b;
      for (int64_t s = 0; s < sp; ++s)
        for (int64_t k = 0; k < b; ++k)
          dst[s * b + k] = src[k];
    }
}

tidalrt_status_t broadcastToKernel(OpCall &op) {
  const TensorRef &x = op[0], &y = op[1];
  BroadcastPlan plan;
  const size_t size = checkBroadcastTo(op, plan);
  if (y.blocked() && (x.blocked() || x.rank != y.rank || x.dim(0) != y.dim(0) ||
                      x.dim(1) != y.dim(1) || x.numel() != y.dim(0) * y.dim(1)))
    fail(TIDALRT_INTERNAL, "a channel-blocked result needs an [N, C, 1...] "
                           "operand");
  if (preparing(op.context) || plan.total == 0)
    return ok();
  if (y.blocked()) {
    broadcastChannelsBlocked(x, y);
    return ok();
  }
  switch (size) {
  case 1:
    broadcastRows<uint8_t>(plan, x.data, y.data);
    break;
  case 2:
    broadcastRows<uint16_t>(plan, x.data, y.data);
    break;
  case 4:
    broadcastRows<uint32_t>(plan, x.data, y.data);
    break;
  default:
    broadcastRows<uint64_t>(plan, x.data, y.data);
    break;
  }
  return ok();
}

} // namespace

extern "C" tidalrt_status_t tidalrt_k_broadcast_to(tidalrt_context_t *ctx,
                                                   const int64_t *desc,
                                                   void *const *buffers) {
  return runKernel(ctx, desc, buffers, "broadcast_to", broadcastToKernel);
}

extern "C" tidalrt_status_t tidalrt_k_reduce_mean(tidalrt_context_t *ctx,
                                                  const int64_t *desc,
                                                  void *const *buffers) {
  return runKernel(ctx, desc, buffers, "reduce_mean",
                   [](OpCall &op) { return reduceKernel(op, true); });
}

extern "C" tidalrt_status_t tidalrt_k_reduce_sum(tidalrt_context_t *ctx,
                                                 const int64_t *desc,
                                                 void *const *buffers) {
  return runKernel(ctx, desc, buffers, "reduce_sum",
                   [](OpCall &op) { return reduceKernel(op, false); });
}
