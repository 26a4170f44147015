// cast.cpp - the CPU kernel of tidal.cast: every pair of float32, float64,
// float16, bfloat16, the integer types and bool, element by element
// (cast_math.h, shared with the CUDA kernel), in parallel chunks.
#include "broadcast.h"
#include "cast_checks.h"
#include "cast_math.h"
#include "kernel.h"

using namespace tidalrt;
using namespace tidalrt::ew;

namespace {

bool castable(int32_t t) {
  switch (t) {
#define TIDALRT_CASTABLE(tag, T) case TIDALRT_ELEMENT_TYPE_##tag:
    TIDALRT_CAST_TYPES(TIDALRT_CASTABLE)
#undef TIDALRT_CASTABLE
    return true;
  default:
    return false;
  }
}

template <typename To, typename From>
void run(const void *x, void *y, int64_t n) {
  const From *X = static_cast<const From *>(x);
  To *Y = static_cast<To *>(y);
  parallelChunks(n, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i)
      Y[i] = cast::convert<To, From>(X[i]);
  });
}

template <typename From>
void castFrom(int32_t to, const void *x, void *y, int64_t n) {
  switch (to) {
#define TIDALRT_CAST_TO(tag, T)                                                \
  case TIDALRT_ELEMENT_TYPE_##tag:                                             \
    return run<T, From>(x, y, n);
    TIDALRT_CAST_TYPES(TIDALRT_CAST_TO)
#undef TIDALRT_CAST_TO
  }
}

tidalrt_status_t castKernel(OpCall &op) {
  const int64_t n = checkCast(op);
  if (preparing(op.context) || n == 0)
    return ok();
  switch (op[0].type) {
#define TIDALRT_CAST_FROM(tag, T)                                              \
  case TIDALRT_ELEMENT_TYPE_##tag:                                             \
    castFrom<T>(op[1].type, op[0].data, op[1].data, n);                        \
    break;
    TIDALRT_CAST_TYPES(TIDALRT_CAST_FROM)
#undef TIDALRT_CAST_FROM
  }
  return ok();
}

} // namespace

int64_t tidalrt::ew::checkCast(const OpCall &op) {
  expectTensors(op, 2);
  const TensorRef &x = op[0], &y = op[1];
  if (!castable(x.type) || !castable(y.type))
    fail(TIDALRT_UNSUPPORTED,
         "a cast from %s to %s (float32, float64, float16, bfloat16, integer "
         "types and bool are supported)",
         typeName(x.type), typeName(y.type));
  const int64_t n = x.numel();
  expectElements(y, n, "output");
  return n;
}

extern "C" tidalrt_status_t tidalrt_k_cast(tidalrt_context_t *ctx,
                                           const int64_t *desc,
                                           void *const *buffers) {
  return runKernel(ctx, desc, buffers, "cast", castKernel);
}
