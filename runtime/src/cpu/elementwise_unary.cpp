// elementwise_unary.cpp - unary element-wise math and activations.
//
// Every op maps a tensor to one of the same type and shape. float32 runs the
// AVX2 or scalar loops of simd.h in parallel chunks; float64 runs scalar
// loops in double. neg, relu and erf (Tidal_NumTensor in the ODS) also take
// int64 and int32: neg wraps, relu is max(x, 0), erf is computed in double
// and truncated, as the reference evaluator rounds integer results.
// Formulas follow lib/Evaluator/ElementwiseOps.cpp: relu(x) = x > 0 ? x : 0
// (NaN -> 0), leaky_relu(x) = x >= 0 ? x : alpha * x, gelu(x) = 0.5 * x *
// (1 + erf(x / sqrt(2))) (PyTorch's exact GELU; float64 uses this form, with
// gelu(-inf) = -0 where it would give NaN; float32 computes x * Phi(x)
// without the cancellation of 1 + erf for x < 0, see simd_avx2.cpp).
#include "broadcast.h"
#include "elementwise_checks.h"
#include "kernel.h"
#include "simd.h"

#include <cmath>
#include <type_traits>

using namespace tidalrt;
using namespace tidalrt::ew;
using simd::Unary;

int64_t tidalrt::ew::checkUnary(const OpCall &op, bool allowInt) {
  expectTensors(op, 2);
  const TensorRef &x = op[0], &y = op[1];
  const bool intType =
      x.type == TIDALRT_ELEMENT_TYPE_I64 || x.type == TIDALRT_ELEMENT_TYPE_I32;
  if (x.type != y.type)
    fail(TIDALRT_INVALID_ARGUMENT,
         "input of type %s with a %s result; they must match", typeName(x.type),
         typeName(y.type));
  if (!(x.type == TIDALRT_ELEMENT_TYPE_F32 ||
        x.type == TIDALRT_ELEMENT_TYPE_F64 || (allowInt && intType)))
    fail(TIDALRT_UNSUPPORTED, "element type %s is not supported (%s)",
         typeName(x.type),
         allowInt ? "float32, float64, int64, int32" : "float32, float64");
  if (!x.present())
    fail(TIDALRT_INVALID_ARGUMENT, "input is absent");
  const int64_t n = x.numel();
  expectElements(y, n, "output");
  return n;
}

namespace {

double applyDouble(Unary op, double x, double alpha) {
  switch (op) {
  case Unary::Neg:
    return -x;
  case Unary::Relu:
    return x > 0.0 ? x : 0.0;
  case Unary::Sigmoid:
    if (x >= 0.0)
      return 1.0 / (1.0 + std::exp(-x));
    x = std::exp(x);
    return x / (1.0 + x);
  case Unary::Tanh:
    return std::tanh(x);
  case Unary::Sqrt:
    return std::sqrt(x);
  case Unary::Erf:
    return std::erf(x);
  case Unary::Exp:
    return std::exp(x);
  case Unary::Log:
    return std::log(x);
  case Unary::LeakyRelu:
    return x >= 0.0 ? x : alpha * x;
  case Unary::Gelu:
    if (std::isinf(x)) // -inf * 0
      return x > 0.0 ? x : -0.0;
    return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0)));
  }
  return x;
}

template <typename T> T applyInt(Unary op, T x) {
  using U = std::make_unsigned_t<T>;
  switch (op) {
  case Unary::Neg:
    return (T)((U)0 - (U)x);
  case Unary::Relu:
    return x > 0 ? x : 0;
  default: // Erf: |erf| < 1 except erf(x) == +-1.0 in double for |x| >= 6.
    return (T)std::trunc(std::erf((double)x));
  }
}

template <typename T>
void runInt(Unary op, const TensorRef &x, const TensorRef &y) {
  const T *X = static_cast<const T *>(x.data);
  T *Y = static_cast<T *>(y.data);
  parallelChunks(x.numel(), [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i)
      Y[i] = applyInt(op, X[i]);
  });
}

tidalrt_status_t unaryKernel(OpCall &op, Unary kind, bool allowInt,
                             bool hasAlpha) {
  const TensorRef &x = op[0], &y = op[1];
  const int64_t n = checkUnary(op, allowInt);
  const double alpha = hasAlpha ? op.getFloat(0) : 0.0;
  if (preparing(op.context) || n == 0)
    return ok();
  switch (x.type) {
  case TIDALRT_ELEMENT_TYPE_F32: {
    const simd::Isa isa = simd::activeIsa();
    const float *X = x.f32();
    float *Y = y.f32();
    const float alphaF = (float)alpha;
    parallelChunks(n, [&](int64_t b, int64_t e) {
      simd::unaryF32(isa, kind, X + b, Y + b, e - b, alphaF);
    });
    break;
  }
  case TIDALRT_ELEMENT_TYPE_F64: {
    const double *X = static_cast<const double *>(x.data);
    double *Y = static_cast<double *>(y.data);
    parallelChunks(n, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i)
        Y[i] = applyDouble(kind, X[i], alpha);
    });
    break;
  }
  case TIDALRT_ELEMENT_TYPE_I64:
    runInt<int64_t>(kind, x, y);
    break;
  case TIDALRT_ELEMENT_TYPE_I32:
    runInt<int32_t>(kind, x, y);
    break;
  }
  return ok();
}

} // namespace

#define TIDALRT_UNARY_KERNEL(name, kind, allowInt, hasAlpha)                   \
  extern "C" tidalrt_status_t tidalrt_k_##name(                                \
      tidalrt_context_t *ctx, const int64_t *desc, void *const *buffers) {     \
    return runKernel(ctx, desc, buffers, #name, [](OpCall &op) {               \
      return unaryKernel(op, kind, allowInt, hasAlpha);                        \
    });                                                                        \
  }

TIDALRT_UNARY_KERNEL(neg, Unary::Neg, true, false)
TIDALRT_UNARY_KERNEL(relu, Unary::Relu, true, false)
TIDALRT_UNARY_KERNEL(sigmoid, Unary::Sigmoid, false, false)
TIDALRT_UNARY_KERNEL(tanh, Unary::Tanh, false, false)
TIDALRT_UNARY_KERNEL(sqrt, Unary::Sqrt, false, false)
TIDALRT_UNARY_KERNEL(erf, Unary::Erf, true, false)
TIDALRT_UNARY_KERNEL(exp, Unary::Exp, false, false)
TIDALRT_UNARY_KERNEL(log, Unary::Log, false, false)
TIDALRT_UNARY_KERNEL(leaky_relu, Unary::LeakyRelu, false, true)
TIDALRT_UNARY_KERNEL(gelu, Unary::Gelu, false, false)
