// random.cpp - random_normal and random_uniform: one tensor (the output,
// float32 or float64), attributes random_normal: mean(0), scale(1),
// seed(2, optional), stream(3, optional); random_uniform: high(0), low(1),
// seed(2), stream(3). Element i is random::normalAt / uniformAt
// (random_draw.h) of the stream key of (seed, step, stream), the key
// dropout uses: the seed attribute, else the context seed; the stream
// attribute (its number among the function's random ops), else the op
// index. So values depend only on (seed, step, stream, element): the same
// for any thread count, on the CUDA kernel, and when a run resumes.
#include "elementwise_checks.h"
#include "kernel.h"
#include "random_draw.h"

#include <cmath>

using namespace tidalrt;
using namespace tidalrt::ew;

RandomCall tidalrt::ew::checkRandom(const OpCall &op, bool normal) {
  expectTensors(op, 1);
  const TensorRef &y = op[0];
  if (!y.present())
    fail(TIDALRT_INVALID_ARGUMENT, "output is absent");
  if (y.type != TIDALRT_ELEMENT_TYPE_F32 && y.type != TIDALRT_ELEMENT_TYPE_F64)
    fail(TIDALRT_UNSUPPORTED,
         "output element type %s is not supported (float32, float64)",
         typeName(y.type));
  RandomCall c;
  c.n = y.numel();
  if (normal) {
    c.a = op.getFloat(0); // mean
    c.b = op.getFloat(1); // scale
    if (!std::isfinite(c.a) || !std::isfinite(c.b) || c.b < 0.0)
      fail(TIDALRT_INVALID_ARGUMENT,
           "mean %g and scale %g must be finite, scale >= 0", c.a, c.b);
  } else {
    c.b = op.getFloat(0); // high
    c.a = op.getFloat(1); // low
    if (!std::isfinite(c.a) || !std::isfinite(c.b) || !(c.a <= c.b))
      fail(TIDALRT_INVALID_ARGUMENT,
           "low %g and high %g must be finite, low <= high", c.a, c.b);
  }
  c.seed = op.has(2) ? (uint64_t)op.getInt(2) : tidalrt::seed(op.context);
  return c;
}

uint64_t tidalrt::ew::randomKey(const OpCall &op, uint64_t seed) {
  const int64_t stream = op.has(3) ? op.getInt(3) : op.index;
  return dropout::streamKey(seed, step(op.context), stream);
}

namespace {

template <typename T>
void fill(T *y, int64_t n, uint64_t key, bool normal, double a, double b) {
  parallelChunks(n, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i)
      y[i] = (T)(normal ? random::normalAt(key, (uint64_t)i, a, b)
                        : random::uniformAt(key, (uint64_t)i, a, b));
  });
}

tidalrt_status_t randomKernel(OpCall &op, bool normal) {
  const RandomCall c = checkRandom(op, normal);
  if (preparing(op.context) || c.n == 0)
    return ok();
  const uint64_t key = randomKey(op, c.seed);
  if (op[0].type == TIDALRT_ELEMENT_TYPE_F32)
    fill(op[0].f32(), c.n, key, normal, c.a, c.b);
  else
    fill(static_cast<double *>(op[0].data), c.n, key, normal, c.a, c.b);
  return ok();
}

} // namespace

extern "C" tidalrt_status_t tidalrt_k_random_normal(tidalrt_context_t *ctx,
                                                    const int64_t *desc,
                                                    void *const *buffers) {
  return runKernel(ctx, desc, buffers, "random_normal",
                   [](OpCall &op) { return randomKernel(op, true); });
}

extern "C" tidalrt_status_t tidalrt_k_random_uniform(tidalrt_context_t *ctx,
                                                     const int64_t *desc,
                                                     void *const *buffers) {
  return runKernel(ctx, desc, buffers, "random_uniform",
                   [](OpCall &op) { return randomKernel(op, false); });
}
