// activation_backward.cpp - backward passes of the activations.
//
// Operands (grad, saved), result grad_input, all of one type and shape
// (TidalGradOps.td). What `saved` is follows AutodiffRules.cpp:
//   relu_backward        saved = forward output y: y > 0 ? grad : 0
//   leaky_relu_backward  saved = forward input x: x > 0 ? grad : alpha*grad
//   sigmoid_backward     saved = forward output y: grad * y * (1 - y)
//   tanh_backward        saved = forward output y: grad * (1 - y^2)
//   erf_backward         saved = forward input x:
//                        grad * 2/sqrt(pi) * exp(-x^2)
//   gelu_backward        saved = forward input x:
//                        grad * (Phi(x) + x * exp(-x^2/2) / sqrt(2 pi)),
//                        Phi(x) = (1 + erf(x / sqrt(2))) / 2; the factor is
//                        1 at x = +inf and 0 at -inf (not NaN)
// float32 (AVX2 or scalar loops of simd.h) and float64 (scalar, in double).
#include "broadcast.h"
#include "elementwise_checks.h"
#include "kernel.h"
#include "simd.h"

#include <cmath>

using namespace tidalrt;
using namespace tidalrt::ew;
using simd::Grad;

int64_t tidalrt::ew::checkActivationBackward(const OpCall &op) {
  expectTensors(op, 3);
  const TensorRef &g = op[0], &s = op[1], &y = op[2];
  if (g.type != s.type || g.type != y.type)
    fail(TIDALRT_INVALID_ARGUMENT,
         "grad, saved and result have types %s, %s and %s; they must match",
         typeName(g.type), typeName(s.type), typeName(y.type));
  if (g.type != TIDALRT_ELEMENT_TYPE_F32 && g.type != TIDALRT_ELEMENT_TYPE_F64)
    fail(TIDALRT_UNSUPPORTED,
         "element type %s is not supported (float32, float64)",
         typeName(g.type));
  if (!g.present())
    fail(TIDALRT_INVALID_ARGUMENT, "grad is absent");
  const int64_t n = g.numel();
  expectElements(s, n, "saved");
  expectElements(y, n, "grad_input");
  return n;
}

namespace {

double applyDouble(Grad op, double g, double s, double alpha) {
  switch (op) {
  case Grad::Relu:
    return s > 0.0 ? g : 0.0;
  case Grad::LeakyRelu:
    return s > 0.0 ? g : alpha * g;
  case Grad::Sigmoid:
    return g * s * (1.0 - s);
  case Grad::Tanh:
    return g * (1.0 - s * s);
  case Grad::Erf:
    return g * 1.12837916709551257390 * std::exp(-s * s);
  case Grad::Gelu: {
    if (std::isinf(s))
      return g * (s > 0.0 ? 1.0 : 0.0);
    double cdf = 0.5 * (1.0 + std::erf(s / std::sqrt(2.0)));
    double pdf = std::exp(-0.5 * s * s) / std::sqrt(2.0 * M_PI);
    return g * (cdf + s * pdf);
  }
  }
  return g;
}

tidalrt_status_t gradKernel(OpCall &op, Grad kind, bool hasAlpha) {
  const TensorRef &g = op[0], &s = op[1], &y = op[2];
  const int64_t n = checkActivationBackward(op);
  const double alpha = hasAlpha ? op.getFloat(0) : 0.0;
  if (preparing(op.context) || n == 0)
    return ok();
  if (g.type == TIDALRT_ELEMENT_TYPE_F32) {
    const simd::Isa isa = simd::activeIsa();
    const float *G = g.f32(), *S = s.f32();
    float *Y = y.f32();
    const float alphaF = (float)alpha;
    parallelChunks(n, [&](int64_t b, int64_t e) {
      simd::gradF32(isa, kind, G + b, S + b, Y + b, e - b, alphaF);
    });
  } else {
    const double *G = static_cast<const double *>(g.data);
    const double *S = static_cast<const double *>(s.data);
    double *Y = static_cast<double *>(y.data);
    parallelChunks(n, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i)
        Y[i] = applyDouble(kind, G[i], S[i], alpha);
    });
  }
  return ok();
}

} // namespace

#define TIDALRT_GRAD_KERNEL(name, kind, hasAlpha)                              \
  extern "C" tidalrt_status_t tidalrt_k_##name(                                \
      tidalrt_context_t *ctx, const int64_t *desc, void *const *buffers) {     \
    return runKernel(ctx, desc, buffers, #name, [](OpCall &op) {               \
      return gradKernel(op, kind, hasAlpha);                                   \
    });                                                                        \
  }

TIDALRT_GRAD_KERNEL(relu_backward, Grad::Relu, false)
TIDALRT_GRAD_KERNEL(leaky_relu_backward, Grad::LeakyRelu, true)
TIDALRT_GRAD_KERNEL(sigmoid_backward, Grad::Sigmoid, false)
TIDALRT_GRAD_KERNEL(tanh_backward, Grad::Tanh, false)
TIDALRT_GRAD_KERNEL(erf_backward, Grad::Erf, false)
TIDALRT_GRAD_KERNEL(gelu_backward, Grad::Gelu, false)
