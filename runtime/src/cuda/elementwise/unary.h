// unary.h - the unary CUDA kernels (neg, relu, sigmoid, tanh, sqrt, erf,
// exp, log, leaky_relu, gelu) and the activation backward kernels
// (launch.h), one thread per element.
//
// Each element is computed with the formula of the CPU kernel's scalar path
// (cpu/simd_scalar.cpp's scalar functions for float32,
// cpu/elementwise_unary.cpp and cpu/activation_backward.cpp for float64 and
// integers), with the C math library for the transcendental functions, not the
// CPU's AVX2 polynomials: those are a vector code path (a few ulp from libm,
// and whole 8-lane groups fall back to libm), not a portable definition. So the
// host emulation matches the CPU kernel run with TIDAL_CPU_ISA=scalar bit
// for bit, and its AVX2 path within its few ulp; on a GPU expf, logf,
// tanhf, erff, erfc, exp, erf... are CUDA's (within a few ulp, see the
// CUDA Programming Guide's table of maximum ulp errors; glibc's are within
// 1), so transcendental results may differ from the CPU's in the last bits,
// while neg, relu, leaky_relu, sqrt and the relu/leaky_relu/sigmoid/tanh
// backward ops (IEEE operations only) agree exactly.
#ifndef TIDALRT_CUDA_ELEMENTWISE_UNARY_H
#define TIDALRT_CUDA_ELEMENTWISE_UNARY_H

#include "common.h"
#include "host.h"

namespace tidalrt {
namespace cuda {
namespace elementwise {

constexpr double kTwoOverSqrtPi = 1.12837916709551257390;
constexpr double kSqrtHalf = 0.70710678118654752440;
constexpr double kInvSqrt2Pi = 0.39894228040143267794;
constexpr double kPi = 3.14159265358979323846; // M_PI

enum class UnaryOp {
  Neg,
  Relu,
  Sigmoid,
  Tanh,
  Sqrt,
  Erf,
  Exp,
  Log,
  LeakyRelu,
  Gelu
};

template <UnaryOp K> TIDAL_HD inline float unaryF32(float x, float alpha) {
  if constexpr (K == UnaryOp::Neg) {
    return -x;
  } else if constexpr (K == UnaryOp::Relu) {
    return x > 0.0f ? x : 0.0f;
  } else if constexpr (K == UnaryOp::Sigmoid) {
    if (x >= 0.0f)
      return 1.0f / (1.0f + expf(-x));
    const float e = expf(x);
    return e / (1.0f + e);
  } else if constexpr (K == UnaryOp::Tanh) {
    return tanhf(x);
  } else if constexpr (K == UnaryOp::Sqrt) {
    return sqrtf(x);
  } else if constexpr (K == UnaryOp::Erf) {
    return erff(x);
  } else if constexpr (K == UnaryOp::Exp) {
    return expf(x);
  } else if constexpr (K == UnaryOp::Log) {
    return logf(x);
  } else if constexpr (K == UnaryOp::LeakyRelu) {
    return x >= 0.0f ? x : alpha * x;
  } else {
    // x * Phi(x) in double, through erfc (no 1 + erf cancellation for
    // x < 0); -inf * Phi(-inf) is -inf * 0.
    if (isInf(x))
      return x > 0.0f ? x : -0.0f;
    const double xd = x;
    return (float)(0.5 * xd * erfc(-xd * kSqrtHalf));
  }
}

template <UnaryOp K> TIDAL_HD inline double unaryF64(double x, double alpha) {
  if constexpr (K == UnaryOp::Neg) {
    return -x;
  } else if constexpr (K == UnaryOp::Relu) {
    return x > 0.0 ? x : 0.0;
  } else if constexpr (K == UnaryOp::Sigmoid) {
    if (x >= 0.0)
      return 1.0 / (1.0 + exp(-x));
    x = exp(x);
    return x / (1.0 + x);
  } else if constexpr (K == UnaryOp::Tanh) {
    return tanh(x);
  } else if constexpr (K == UnaryOp::Sqrt) {
    return sqrt(x);
  } else if constexpr (K == UnaryOp::Erf) {
    return erf(x);
  } else if constexpr (K == UnaryOp::Exp) {
    return exp(x);
  } else if constexpr (K == UnaryOp::Log) {
    return log(x);
  } else if constexpr (K == UnaryOp::LeakyRelu) {
    return x >= 0.0 ? x : alpha * x;
  } else {
    if (isInf(x)) // -inf * 0
      return x > 0.0 ? x : -0.0;
    return 0.5 * x * (1.0 + erf(x / sqrt(2.0)));
  }
}

// neg wraps, relu is max(x, 0); erf is the CPU's trunc(erf((double)x)),
// which is 0 for |x| <= 5 and +-1 from 6 on (erf(6) rounds to 1.0 in
// double), written out so that no libm's last bit decides it.
template <UnaryOp K, typename T> TIDAL_HD inline T unaryInt(T x) {
  static_assert(K == UnaryOp::Neg || K == UnaryOp::Relu || K == UnaryOp::Erf,
                "neg, relu and erf take integers");
  if constexpr (K == UnaryOp::Neg) {
    using U = std::make_unsigned_t<T>;
    return (T)((U)0 - (U)x);
  } else if constexpr (K == UnaryOp::Relu) {
    return x > 0 ? x : 0;
  } else {
    return x >= 6 ? 1 : x <= -6 ? -1 : 0;
  }
}

template <UnaryOp K, typename T> struct UnaryBody {
  const T *x;
  T *y;
  T alpha;
  TIDAL_HD void operator()(int64_t i) const {
    if constexpr (std::is_same_v<T, float>)
      y[i] = unaryF32<K>(x[i], alpha);
    else if constexpr (std::is_same_v<T, double>)
      y[i] = unaryF64<K>(x[i], alpha);
    else
      y[i] = unaryInt<K, T>(x[i]);
  }
};

template <UnaryOp K, typename T, class L>
void launchUnary(L &l, const OpCall &op, int64_t n, double alpha) {
  UnaryBody<K, T> body;
  body.x = static_cast<const T *>(op[0].data);
  body.y = static_cast<T *>(op[1].data);
  body.alpha = (T)alpha;
  l.forEach(n, body);
}

template <UnaryOp K, class L> void unaryKernel(L &l, const OpCall &op) {
  constexpr bool allowInt =
      K == UnaryOp::Neg || K == UnaryOp::Relu || K == UnaryOp::Erf;
  const int64_t n = checkUnary(op, allowInt);
  const double alpha = K == UnaryOp::LeakyRelu ? op.getFloat(0) : 0.0;
  if (l.preparing() || n == 0)
    return;
  switch (op[0].type) {
  case TIDALRT_ELEMENT_TYPE_F32:
    return launchUnary<K, float>(l, op, n, alpha);
  case TIDALRT_ELEMENT_TYPE_F64:
    return launchUnary<K, double>(l, op, n, alpha);
  }
  if constexpr (allowInt) {
    if (op[0].type == TIDALRT_ELEMENT_TYPE_I64)
      return launchUnary<K, int64_t>(l, op, n, 0.0);
    return launchUnary<K, int32_t>(l, op, n, 0.0);
  }
}

//===----------------------------------------------------------------------===//
// Activation backward: grad_input from (grad, saved)
//===----------------------------------------------------------------------===//

// `saved` is the forward output for Relu, Sigmoid and Tanh, the forward
// input for LeakyRelu, Erf and Gelu (cpu/activation_backward.cpp).
enum class GradOp { Relu, LeakyRelu, Sigmoid, Tanh, Erf, Gelu };

template <GradOp K>
TIDAL_HD inline float gradF32(float g, float s, float alpha) {
  if constexpr (K == GradOp::Relu) {
    return s > 0.0f ? g : 0.0f;
  } else if constexpr (K == GradOp::LeakyRelu) {
    return s > 0.0f ? g : alpha * g;
  } else if constexpr (K == GradOp::Sigmoid) {
    return g * s * (1.0f - s);
  } else if constexpr (K == GradOp::Tanh) {
    return g * (1.0f - mulRn(s, s));
  } else if constexpr (K == GradOp::Erf) {
    const double xd = s;
    return (float)((double)g * kTwoOverSqrtPi * exp(-xd * xd));
  } else {
    // g * (Phi(x) + x * phi(x)) in double; x^2 is exact in double.
    const double xd = s;
    double d;
    if (isInf(xd))
      d = xd > 0.0 ? 1.0 : 0.0;
    else
      d = mulRn(0.5, erfc(-xd * kSqrtHalf)) +
          mulRn(xd * kInvSqrt2Pi, exp(-0.5 * (xd * xd)));
    return (float)((double)g * d);
  }
}

template <GradOp K>
TIDAL_HD inline double gradF64(double g, double s, double alpha) {
  if constexpr (K == GradOp::Relu) {
    return s > 0.0 ? g : 0.0;
  } else if constexpr (K == GradOp::LeakyRelu) {
    return s > 0.0 ? g : alpha * g;
  } else if constexpr (K == GradOp::Sigmoid) {
    return g * s * (1.0 - s);
  } else if constexpr (K == GradOp::Tanh) {
    return g * (1.0 - mulRn(s, s));
  } else if constexpr (K == GradOp::Erf) {
    return g * kTwoOverSqrtPi * exp(-s * s);
  } else {
    if (isInf(s))
      return g * (s > 0.0 ? 1.0 : 0.0);
    const double cdf = 0.5 * (1.0 + erf(s / sqrt(2.0)));
    const double pdf = exp(-0.5 * s * s) / sqrt(2.0 * kPi);
    return g * (cdf + mulRn(s, pdf));
  }
}

template <GradOp K, typename T> struct GradBody {
  const T *g;
  const T *s;
  T *y;
  T alpha;
  TIDAL_HD void operator()(int64_t i) const {
    if constexpr (std::is_same_v<T, float>)
      y[i] = gradF32<K>(g[i], s[i], alpha);
    else
      y[i] = gradF64<K>(g[i], s[i], alpha);
  }
};

template <GradOp K, typename T, class L>
void launchGrad(L &l, const OpCall &op, int64_t n, double alpha) {
  GradBody<K, T> body;
  body.g = static_cast<const T *>(op[0].data);
  body.s = static_cast<const T *>(op[1].data);
  body.y = static_cast<T *>(op[2].data);
  body.alpha = (T)alpha;
  l.forEach(n, body);
}

template <GradOp K, class L> void gradKernel(L &l, const OpCall &op) {
  const int64_t n = checkActivationBackward(op);
  const double alpha = K == GradOp::LeakyRelu ? op.getFloat(0) : 0.0;
  if (l.preparing() || n == 0)
    return;
  if (op[0].type == TIDALRT_ELEMENT_TYPE_F32)
    launchGrad<K, float>(l, op, n, alpha);
  else
    launchGrad<K, double>(l, op, n, alpha);
}

} // namespace elementwise

#define TIDALRT_CUDA_EW_UNARY(name, K)                                         \
  template <class L> void k_##name(L &l, OpCall &op) {                         \
    elementwise::unaryKernel<elementwise::UnaryOp::K>(l, op);                  \
  }
TIDALRT_CUDA_EW_UNARY(neg, Neg)
TIDALRT_CUDA_EW_UNARY(relu, Relu)
TIDALRT_CUDA_EW_UNARY(sigmoid, Sigmoid)
TIDALRT_CUDA_EW_UNARY(tanh, Tanh)
TIDALRT_CUDA_EW_UNARY(sqrt, Sqrt)
TIDALRT_CUDA_EW_UNARY(erf, Erf)
TIDALRT_CUDA_EW_UNARY(exp, Exp)
TIDALRT_CUDA_EW_UNARY(log, Log)
TIDALRT_CUDA_EW_UNARY(leaky_relu, LeakyRelu)
TIDALRT_CUDA_EW_UNARY(gelu, Gelu)
#undef TIDALRT_CUDA_EW_UNARY

#define TIDALRT_CUDA_EW_GRAD(name, K)                                          \
  template <class L> void k_##name(L &l, OpCall &op) {                         \
    elementwise::gradKernel<elementwise::GradOp::K>(l, op);                    \
  }
TIDALRT_CUDA_EW_GRAD(relu_backward, Relu)
TIDALRT_CUDA_EW_GRAD(leaky_relu_backward, LeakyRelu)
TIDALRT_CUDA_EW_GRAD(sigmoid_backward, Sigmoid)
TIDALRT_CUDA_EW_GRAD(tanh_backward, Tanh)
TIDALRT_CUDA_EW_GRAD(erf_backward, Erf)
TIDALRT_CUDA_EW_GRAD(gelu_backward, Gelu)
#undef TIDALRT_CUDA_EW_GRAD

} // namespace cuda
} // namespace tidalrt

#endif // TIDALRT_CUDA_ELEMENTWISE_UNARY_H
