// dropout.cpp - Dropout forward and backward.
//
// dropout(input) -> (output, mask), attributes ratio(0), seed(1, optional),
// stream(2, optional), training(3). With training false or ratio 0: output =
// input, mask all ones. Otherwise element i is kept when its 32-bit draw u_i is
// >= ceil(ratio * 2^32), so the drop probability is ratio to within 2^-32; kept
// elements are scaled by 1 / (1 - ratio). The mask is i1, one byte 0/1 per
// element.
//
// The draws come from a counter-based generator (simd.h, DropoutStream):
// u_i = lowbias32(lowbias32(i + k1) ^ k2) with (k1, k2) the two halves of a
// 64-bit key that SplitMix64 mixes from (seed, step, stream), seed being
// the op's `seed` attribute when set, else the context seed, and stream the
// op's `stream` attribute (its number among the function's dropouts, which
// rescheduling keeps) when set, else the op index. So a mask depends only on
// (seed, step, stream, element): the same for any thread count
// and either ISA, and reproduced when a run resumes at a step. (Tensors of
// more than 2^32 elements re-key every 2^32 elements.)
//
// dropout_backward(grad, mask) -> grad_input with attribute ratio(0):
// grad * mask / (1 - ratio).
//
// Element types: float32 (vector apply) and float64.
#include "broadcast.h"
#include "dropout_hash.h"
#include "elementwise_checks.h"
#include "kernel.h"
#include "simd.h"

#include <cmath>
#include <cstring>

using namespace tidalrt;
using namespace tidalrt::ew;

namespace {

void checkRatio(double ratio) {
  if (!(ratio >= 0.0 && ratio < 1.0))
    fail(TIDALRT_INVALID_ARGUMENT, "ratio %g is outside [0, 1)", ratio);
}

void checkFloat(const TensorRef &t, const char *what) {
  if (t.type != TIDALRT_ELEMENT_TYPE_F32 && t.type != TIDALRT_ELEMENT_TYPE_F64)
    fail(TIDALRT_UNSUPPORTED,
         "%s element type %s is not supported (float32, float64)", what,
         typeName(t.type));
}

void checkMask(const TensorRef &t) {
  if (t.type != TIDALRT_ELEMENT_TYPE_BOOL)
    fail(TIDALRT_INVALID_ARGUMENT, "mask has element type %s, expected bool",
         typeName(t.type));
}

} // namespace

DropoutCall tidalrt::ew::checkDropout(const OpCall &op) {
  expectTensors(op, 3);
  const TensorRef &x = op[0], &y = op[1], &m = op[2];
  checkFloat(x, "input");
  if (y.type != x.type)
    fail(TIDALRT_INVALID_ARGUMENT, "output type %s differs from input type %s",
         typeName(y.type), typeName(x.type));
  checkMask(m);
  if (!x.present())
    fail(TIDALRT_INVALID_ARGUMENT, "input is absent");
  DropoutCall c;
  c.n = x.numel();
  expectElements(y, c.n, "output");
  expectElements(m, c.n, "mask");
  c.ratio = op.getFloat(0);
  c.training = op.getBool(3);
  checkRatio(c.ratio);
  c.seed = op.has(1) ? (uint64_t)op.getInt(1) : tidalrt::seed(op.context);
  return c;
}

uint64_t tidalrt::ew::dropoutKey(const OpCall &op, uint64_t seed) {
  const int64_t stream = op.has(2) ? op.getInt(2) : op.index;
  return dropout::streamKey(seed, step(op.context), stream);
}

int64_t tidalrt::ew::checkDropoutBackward(const OpCall &op, double &ratio) {
  expectTensors(op, 3);
  const TensorRef &g = op[0], &m = op[1], &y = op[2];
  checkFloat(g, "grad");
  if (y.type != g.type)
    fail(TIDALRT_INVALID_ARGUMENT,
         "grad_input type %s differs from grad type %s", typeName(y.type),
         typeName(g.type));
  checkMask(m);
  if (!g.present())
    fail(TIDALRT_INVALID_ARGUMENT, "grad is absent");
  const int64_t n = g.numel();
  expectElements(m, n, "mask");
  expectElements(y, n, "grad_input");
  ratio = op.getFloat(0);
  checkRatio(ratio);
  return n;
}

namespace {

template <typename T>
void maskScale(simd::Isa isa, const T *x, const uint8_t *m, double scale, T *y,
               int64_t n) {
  if constexpr (sizeof(T) == sizeof(float)) {
    simd::maskScaleF32(isa, x, m, (float)scale, y, n);
  } else {
    (void)isa;
    for (int64_t i = 0; i < n; ++i)
      y[i] = m[i] ? x[i] * scale : 0.0;
  }
}

// The stream of elements [2^32 * block, 2^32 * (block + 1)).
simd::DropoutStream streamFor(uint64_t key, uint64_t block, double ratio) {
  simd::DropoutStream s;
  key = dropout::blockKey(key, block);
  s.k1 = (uint32_t)key;
  s.k2 = (uint32_t)(key >> 32);
  s.threshold = dropout::threshold(ratio);
  return s;
}

template <typename T>
void dropoutTrain(const TensorRef &x, const TensorRef &y, const TensorRef &m,
                  uint64_t key, double ratio) {
  const simd::Isa isa = simd::activeIsa();
  const T *X = static_cast<const T *>(x.data);
  T *Y = static_cast<T *>(y.data);
  uint8_t *M = m.u8();
  const double scale = 1.0 / (1.0 - ratio);
  // Chunks are multiples of 2^14 elements, so none straddles a 2^32 block.
  parallelChunks(x.numel(), [&](int64_t b, int64_t e) {
    const simd::DropoutStream s = streamFor(key, (uint64_t)b >> 32, ratio);
    const uint32_t first = (uint32_t)b;
    if constexpr (sizeof(T) == sizeof(float)) {
      simd::dropoutF32(isa, s, first, X + b, Y + b, M + b, e - b, (float)scale);
    } else {
      for (int64_t i = b; i < e; ++i)
        M[i] = simd::dropoutKeep(s, first + (uint32_t)(i - b));
      maskScale(isa, X + b, M + b, scale, Y + b, e - b);
    }
  });
}

tidalrt_status_t dropoutKernel(OpCall &op) {
  const TensorRef &x = op[0], &y = op[1], &m = op[2];
  const DropoutCall c = checkDropout(op);
  const int64_t n = c.n;
  if (preparing(op.context) || n == 0)
    return ok();
  if (!c.training || c.ratio == 0.0) {
    if (y.data != x.data)
      memmove(y.data, x.data, x.bytes());
    memset(m.data, 1, (size_t)n);
    return ok();
  }
  const uint64_t key = dropoutKey(op, c.seed);
  if (x.type == TIDALRT_ELEMENT_TYPE_F32)
    dropoutTrain<float>(x, y, m, key, c.ratio);
  else
    dropoutTrain<double>(x, y, m, key, c.ratio);
  return ok();
}

tidalrt_status_t dropoutBackwardKernel(OpCall &op) {
  const TensorRef &g = op[0], &m = op[1], &y = op[2];
  double ratio = 0.0;
  const int64_t n = checkDropoutBackward(op, ratio);
  if (preparing(op.context) || n == 0)
    return ok();
  const simd::Isa isa = simd::activeIsa();
  const double scale = 1.0 / (1.0 - ratio);
  const uint8_t *M = m.u8();
  parallelChunks(n, [&](int64_t b, int64_t e) {
    if (g.type == TIDALRT_ELEMENT_TYPE_F32)
      maskScale(isa, g.f32() + b, M + b, scale, y.f32() + b, e - b);
    else
      maskScale(isa, static_cast<const double *>(g.data) + b, M + b, scale,
                static_cast<double *>(y.data) + b, e - b);
  });
  return ok();
}

} // namespace

extern "C" tidalrt_status_t tidalrt_k_dropout(tidalrt_context_t *ctx,
                                              const int64_t *desc,
                                              void *const *buffers) {
  return runKernel(ctx, desc, buffers, "dropout", dropoutKernel);
}

extern "C" tidalrt_status_t tidalrt_k_dropout_backward(tidalrt_context_t *ctx,
                                                       const int64_t *desc,
                                                       void *const *buffers) {
  return runKernel(ctx, desc, buffers, "dropout_backward",
                   dropoutBackwardKernel);
}
