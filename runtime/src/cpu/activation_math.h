// activation_math.h - the formulas of the activation family (clip,
// hard_sigmoid, hard_swish, elu, selu, celu, softplus, softsign, mish) and
// of the element-wise math ops (abs, reciprocal, sin, cos, sign, floor,
// ceil, round), forward and backward, for float32, float64 and (abs, sign)
// integers.
//
// One definition for the CPU kernels' scalar path (activation.cpp) and the
// CUDA kernels (cuda/elementwise/activation.h), so that both compute every
// element with the same expression in the same order: the host emulation of
// the CUDA kernels equals the CPU scalar path bit for bit. Host and device
// code (nvcc includes it). Products go through mul(), which the GPU must not
// fuse with a following addition, and the C library's float functions
// (expf, expm1f, ...) are named explicitly for float32.
//
// The formulas are PyTorch's (aten/src/ATen/native/cpu/Activation.cpp and
// its autograd formulas), which ONNX's definitions equal up to rounding:
//   clip(x)         min(max(x, lo), hi), NaN kept (torch.clamp);
//                   backward g where lo < x < hi, else 0 (hardtanh's rule:
//                   nn.ReLU6 and nn.Hardtanh export as Clip)
//   hard_sigmoid(x) max(0, min(1, alpha * x + beta)) (ONNX; PyTorch exports
//                   hardsigmoid with alpha 1/6, beta 1/2);
//                   backward alpha * g where 0 < alpha * x + beta < 1
//   hard_swish(x)   x * min(max(x + 3, 0), 6) / 6;
//                   backward 0 for x < -3, g * (x / 3 + 1/2) for x <= 3,
//                   else g
//   elu(x)          x > 0 ? x : alpha * expm1(x); backward g * alpha * exp(x)
//   selu(x)         gamma * (x > 0 ? x : alpha * expm1(x));
//                   backward g * gamma * alpha * exp(x) for x <= 0, else
//                   g * gamma
//   celu(x)         x > 0 ? x : alpha * expm1(x / alpha);
//                   backward g * exp(x / alpha) for x <= 0
//   softplus(x)     x > 20 ? x : log1p(exp(x)) (PyTorch's threshold 20);
//                   backward g * z / (z + 1), z = exp(x), for x <= 20
//   softsign(x)     x / (1 + |x|); backward g / (1 + |x|)^2
//   mish(x)         x * tanh(log1p(exp(x)));
//                   backward g * (t + x * s * (1 - t * t)), t = tanh(
//                   log1p(exp(x))), s = 1 / (1 + exp(-x))
//   abs, reciprocal (1 / x), sin, cos: their backward is built from forward
//   ops by the autodiff; sign, floor, ceil and round (half to even) have a
//   zero gradient.
// Every backward takes the forward input x as `saved`.
#ifndef TIDALRT_CPU_ACTIVATION_MATH_H
#define TIDALRT_CPU_ACTIVATION_MATH_H

#include <cmath>
#include <cstdint>
#include <type_traits>

#if defined(__CUDACC__)
#define TIDALRT_ACT_HD __host__ __device__
#else
#define TIDALRT_ACT_HD
#endif

namespace tidalrt {
namespace act {

enum class Kind {
  Clip,
  HardSigmoid,
  HardSwish,
  Elu,
  Selu,
  Celu,
  Softplus,
  Softsign,
  Mish,
  Abs,
  Reciprocal,
  Sin,
  Cos,
  Tan,
  Asin,
  Acos,
  Atan,
  Sinh,
  Cosh,
  Asinh,
  Acosh,
  Atanh,
  Sign,
  Floor,
  Ceil,
  Round
};

// The number of float attributes of a kind's op (its ODS attributes in
// alphabetical order: clip max, min; hard_sigmoid alpha, beta; elu and celu
// alpha; selu alpha, gamma).
constexpr int paramCount(Kind k) {
  return k == Kind::Clip || k == Kind::HardSigmoid || k == Kind::Selu ? 2
         : k == Kind::Elu || k == Kind::Celu                          ? 1
                                                                      : 0;
}

// Kinds whose kernels also take int32 and int64 tensors.
constexpr bool takesIntegers(Kind k) {
  return k == Kind::Abs || k == Kind::Sign;
}

// A kind's parameters: clip a = min, b = max; hard_sigmoid a = alpha,
// b = beta; elu, celu a = alpha; selu a = alpha, b = gamma.
template <typename T> struct Params { T a = 0, b = 0; };

// Parameters read in double (from the attributes), rounded to T.
template <typename T> Params<T> castParams(const Params<double> &p) {
  Params<T> r;
  r.a = (T)p.a;
  r.b = (T)p.b;
  return r;
}

TIDALRT_ACT_HD inline float mul(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fmul_rn(a, b);
#else
  return a * b;
#endif
}
TIDALRT_ACT_HD inline double mul(double a, double b) {
#if defined(__CUDA_ARCH__)
  return __dmul_rn(a, b);
#else
  return a * b;
#endif
}

// The C library's functions, by precision.
TIDALRT_ACT_HD inline float fexp(float x) { return expf(x); }
TIDALRT_ACT_HD inline double fexp(double x) { return exp(x); }
TIDALRT_ACT_HD inline float fexpm1(float x) { return expm1f(x); }
TIDALRT_ACT_HD inline double fexpm1(double x) { return expm1(x); }
TIDALRT_ACT_HD inline float flog1p(float x) { return log1pf(x); }
TIDALRT_ACT_HD inline double flog1p(double x) { return log1p(x); }
TIDALRT_ACT_HD inline float ftanh(float x) { return tanhf(x); }
TIDALRT_ACT_HD inline double ftanh(double x) { return tanh(x); }
TIDALRT_ACT_HD inline float fsin(float x) { return sinf(x); }
TIDALRT_ACT_HD inline double fsin(double x) { return sin(x); }
TIDALRT_ACT_HD inline float fcos(float x) { return cosf(x); }
TIDALRT_ACT_HD inline double fcos(double x) { return cos(x); }
TIDALRT_ACT_HD inline float ftan(float x) { return tanf(x); }
TIDALRT_ACT_HD inline double ftan(double x) { return tan(x); }
TIDALRT_ACT_HD inline float fasin(float x) { return asinf(x); }
TIDALRT_ACT_HD inline double fasin(double x) { return asin(x); }
TIDALRT_ACT_HD inline float facos(float x) { return acosf(x); }
TIDALRT_ACT_HD inline double facos(double x) { return acos(x); }
TIDALRT_ACT_HD inline float fatan(float x) { return atanf(x); }
TIDALRT_ACT_HD inline double fatan(double x) { return atan(x); }
TIDALRT_ACT_HD inline float fsinh(float x) { return sinhf(x); }
TIDALRT_ACT_HD inline double fsinh(double x) { return sinh(x); }
TIDALRT_ACT_HD inline float fcosh(float x) { return coshf(x); }
TIDALRT_ACT_HD inline double fcosh(double x) { return cosh(x); }
TIDALRT_ACT_HD inline float fasinh(float x) { return asinhf(x); }
TIDALRT_ACT_HD inline double fasinh(double x) { return asinh(x); }
TIDALRT_ACT_HD inline float facosh(float x) { return acoshf(x); }
TIDALRT_ACT_HD inline double facosh(double x) { return acosh(x); }
TIDALRT_ACT_HD inline float fatanh(float x) { return atanhf(x); }
TIDALRT_ACT_HD inline double fatanh(double x) { return atanh(x); }
TIDALRT_ACT_HD inline float ffloor(float x) { return floorf(x); }
TIDALRT_ACT_HD inline double ffloor(double x) { return floor(x); }
TIDALRT_ACT_HD inline float fceil(float x) { return ceilf(x); }
TIDALRT_ACT_HD inline double fceil(double x) { return ceil(x); }
// Half to even (the default rounding mode; ONNX Round, torch.round).
TIDALRT_ACT_HD inline float frint(float x) { return rintf(x); }
TIDALRT_ACT_HD inline double frint(double x) { return rint(x); }

template <typename T> TIDALRT_ACT_HD inline T fabsT(T x) {
  return x < T(0) ? -x : (x == T(0) ? T(0) : x); // |-0| = +0; NaN kept
}

// softplus(x) with PyTorch's threshold: x beyond 20 is returned as is.
template <typename T> TIDALRT_ACT_HD inline T softplusOf(T x) {
  return x > T(20) ? x : flog1p(fexp(x));
}

template <Kind K, typename T>
TIDALRT_ACT_HD inline T forward(T x, Params<T> p) {
  if constexpr (std::is_integral_v<T>) {
    static_assert(K == Kind::Abs || K == Kind::Sign, "abs and sign only");
    using U = std::make_unsigned_t<T>;
    if constexpr (K == Kind::Abs) // wraps at the minimum, as negation does
      return x < 0 ? (T)((U)0 - (U)x) : x;
    else
      return (T)((x > 0) - (x < 0));
  } else if constexpr (K == Kind::Clip) {
    const T y = p.a > x ? p.a : x; // max(x, lo), NaN kept
    return p.b < y ? p.b : y;      // min(y, hi)
  } else if constexpr (K == Kind::HardSigmoid) {
    T v = mul(p.a, x) + p.b;
    v = T(1) < v ? T(1) : v;
    return T(0) > v ? T(0) : v;
  } else if constexpr (K == Kind::HardSwish) {
    T v = x + T(3);
    v = T(0) > v ? T(0) : v;
    v = T(6) < v ? T(6) : v;
    return mul(x, v) / T(6);
  } else if constexpr (K == Kind::Elu) {
    return x > T(0) ? x : mul(p.a, fexpm1(x));
  } else if constexpr (K == Kind::Selu) {
    return x > T(0) ? mul(p.b, x) : mul(p.b, mul(p.a, fexpm1(x)));
  } else if constexpr (K == Kind::Celu) {
    return x > T(0) ? x : mul(p.a, fexpm1(x / p.a));
  } else if constexpr (K == Kind::Softplus) {
    return softplusOf(x);
  } else if constexpr (K == Kind::Softsign) {
    return x / (T(1) + fabsT(x));
  } else if constexpr (K == Kind::Mish) {
    return mul(x, ftanh(flog1p(fexp(x))));
  } else if constexpr (K == Kind::Abs) {
    return fabsT(x);
  } else if constexpr (K == Kind::Reciprocal) {
    return T(1) / x;
  } else if constexpr (K == Kind::Sin) {
    return fsin(x);
  } else if constexpr (K == Kind::Cos) {
    return fcos(x);
  } else if constexpr (K == Kind::Tan) {
    return ftan(x);
  } else if constexpr (K == Kind::Asin) {
    return fasin(x);
  } else if constexpr (K == Kind::Acos) {
    return facos(x);
  } else if constexpr (K == Kind::Atan) {
    return fatan(x);
  } else if constexpr (K == Kind::Sinh) {
    return fsinh(x);
  } else if constexpr (K == Kind::Cosh) {
    return fcosh(x);
  } else if constexpr (K == Kind::Asinh) {
    return fasinh(x);
  } else if constexpr (K == Kind::Acosh) {
    return facosh(x);
  } else if constexpr (K == Kind::Atanh) {
    return fatanh(x);
  } else if constexpr (K == Kind::Sign) {
    return x > T(0) ? T(1) : (x < T(0) ? T(-1) : x); // +-0 and NaN kept
  } else if constexpr (K == Kind::Floor) {
    return ffloor(x);
  } else if constexpr (K == Kind::Ceil) {
    return fceil(x);
  } else {
    static_assert(K == Kind::Round, "every kind has a forward formula");
    return frint(x);
  }
}

// Kinds with a backward kernel (the others' gradients are forward ops or
// zero).
constexpr bool hasBackwardKernel(Kind k) {
  return k == Kind::Clip || k == Kind::HardSigmoid || k == Kind::HardSwish ||
         k == Kind::Elu || k == Kind::Selu || k == Kind::Celu ||
         k == Kind::Softplus || k == Kind::Softsign || k == Kind::Mish;
}

// grad_input for upstream gradient g at forward input x.
template <Kind K, typename T>
TIDALRT_ACT_HD inline T backward(T g, T x, Params<T> p) {
  if constexpr (K == Kind::Clip) {
    return p.a < x && x < p.b ? g : T(0);
  } else if constexpr (K == Kind::HardSigmoid) {
    const T v = mul(p.a, x) + p.b;
    return T(0) < v && v < T(1) ? mul(p.a, g) : T(0);
  } else if constexpr (K == Kind::HardSwish) {
    if (x < T(-3))
      return T(0);
    return x <= T(3) ? mul(g, x / T(3) + T(0.5)) : g;
  } else if constexpr (K == Kind::Elu) {
    return x > T(0) ? g : mul(mul(g, p.a), fexp(x));
  } else if constexpr (K == Kind::Selu) {
    return x > T(0) ? mul(g, p.b) : mul(mul(g, mul(p.b, p.a)), fexp(x));
  } else if constexpr (K == Kind::Celu) {
    return x > T(0) ? g : mul(g, fexp(x / p.a));
  } else if constexpr (K == Kind::Softplus) {
    if (x > T(20))
      return g;
    const T z = fexp(x);
    return mul(g, z) / (z + T(1));
  } else if constexpr (K == Kind::Softsign) {
    const T d = T(1) + fabsT(x);
    return g / mul(d, d);
  } else {
    static_assert(K == Kind::Mish, "every backward kernel has a formula");
    const T t = ftanh(flog1p(fexp(x)));
    const T s = T(1) / (T(1) + fexp(-x));
    return mul(g, t + mul(mul(x, s), T(1) - mul(t, t)));
  }
}

} // namespace act
} // namespace tidalrt

#endif // TIDALRT_CPU_ACTIVATION_MATH_H
