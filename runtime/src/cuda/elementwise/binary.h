// binary.h - the CUDA kernels add, sub, mul, div and pow (launch.h): one
// thread per result element, whose operand offsets come from the CPU
// kernels' broadcast plan (cpu/elementwise_binary.cpp has the semantics).
//
// Results match the CPU kernel bit for bit: float32 and float64 add, sub,
// mul and div are single IEEE operations; integers wrap as there. pow
// follows the CPU's formulas (powf for a float32 base and a float32 or
// small integer exponent, else pow in double; the float32 shortcuts for a
// scalar exponent of 1, 2, 3, 0.5 or -1). On a GPU powf and pow are
// CUDA's (within a few ulp, glibc's within 1), so float pow results may differ
// from the CPU's in the last bits. An integer base with an integer
// exponent is computed exactly, not with pow, whenever the power is a
// double (at most 2^53 in magnitude), as glibc's pow is then exact: such
// integer powers agree on every target.
//
// One difference from the CPU kernels: an integer div by zero fails there
// (INVALID_ARGUMENT), which needs the divisor's values on the host; the
// CUDA kernel cannot read them without synchronising, and gives 0 instead.
#ifndef TIDALRT_CUDA_ELEMENTWISE_BINARY_H
#define TIDALRT_CUDA_ELEMENTWISE_BINARY_H

#include "common.h"
#include "host.h"

namespace tidalrt {
namespace cuda {
namespace elementwise {

enum class Arith { Add, Sub, Mul, Div };

template <typename T, Arith K> TIDAL_HD inline T arith(T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    // Unsigned arithmetic wraps; types narrower than int are widened to
    // unsigned int first (their promotion to int could overflow).
    using U = std::make_unsigned_t<T>;
    using W = std::conditional_t<(sizeof(T) < sizeof(unsigned)), unsigned, U>;
    if constexpr (K == Arith::Add)
      return (T)((W)(U)a + (W)(U)b);
    else if constexpr (K == Arith::Sub)
      return (T)((W)(U)a - (W)(U)b);
    else if constexpr (K == Arith::Mul)
      return (T)((W)(U)a * (W)(U)b);
    else {
      if (b == 0)
        return 0; // see the file comment
      if constexpr (std::is_signed_v<T>)
        if (b == (T)-1) // wraps instead of overflowing
          return (T)((W)0 - (W)(U)a);
      return (T)(a / b);
    }
  } else {
    if constexpr (K == Arith::Add)
      return a + b;
    else if constexpr (K == Arith::Sub)
      return a - b;
    else if constexpr (K == Arith::Mul)
      return a * b;
    else
      return a / b;
  }
}

template <typename T, Arith K> struct ArithBody {
  Bcast b;
  const T *x0;
  const T *x1;
  T *y;
  TIDAL_HD void operator()(int64_t i) const {
    int64_t o0, o1;
    b.offsets(i, o0, o1);
    y[i] = arith<T, K>(x0[o0], x1[o1]);
  }
};

template <Arith K, typename T, class L>
void launchArith(L &l, const OpCall &op, const Bcast &b, int64_t n) {
  ArithBody<T, K> body;
  body.b = b;
  body.x0 = static_cast<const T *>(op[0].data);
  body.x1 = static_cast<const T *>(op[1].data);
  body.y = static_cast<T *>(op[2].data);
  l.forEach(n, body);
}

template <Arith K, class L> void arithKernel(L &l, const OpCall &op) {
  Bcast b;
  const int64_t n = checkArithmetic(op, b);
  if (l.preparing() || n == 0)
    return;
  switch (op[2].type) {
  case TIDALRT_ELEMENT_TYPE_F32:
    return launchArith<K, float>(l, op, b, n);
  case TIDALRT_ELEMENT_TYPE_F64:
    return launchArith<K, double>(l, op, b, n);
  case TIDALRT_ELEMENT_TYPE_I64:
    return launchArith<K, int64_t>(l, op, b, n);
  case TIDALRT_ELEMENT_TYPE_I32:
    return launchArith<K, int32_t>(l, op, b, n);
  case TIDALRT_ELEMENT_TYPE_I16:
    return launchArith<K, int16_t>(l, op, b, n);
  case TIDALRT_ELEMENT_TYPE_I8:
    return launchArith<K, int8_t>(l, op, b, n);
  case TIDALRT_ELEMENT_TYPE_U64:
    return launchArith<K, uint64_t>(l, op, b, n);
  case TIDALRT_ELEMENT_TYPE_U32:
    return launchArith<K, uint32_t>(l, op, b, n);
  case TIDALRT_ELEMENT_TYPE_U16:
    return launchArith<K, uint16_t>(l, op, b, n);
  case TIDALRT_ELEMENT_TYPE_U8:
    return launchArith<K, uint8_t>(l, op, b, n);
  }
}

//===----------------------------------------------------------------------===//
// pow
//===----------------------------------------------------------------------===//

// A double rounded to T as the CPU kernel rounds pow results: integers
// truncate, NaN gives 0 and out-of-range values saturate.
template <typename T> TIDAL_HD inline T fromDouble(double v) {
  if constexpr (std::is_floating_point_v<T>) {
    return (T)v;
  } else {
    if (isNan(v))
      return 0;
    const double t = trunc(v);
    if (t <= (double)IntRange<T>::lo)
      return IntRange<T>::lo;
    if (t >= (double)IntRange<T>::hi)
      return IntRange<T>::hi;
    return (T)t;
  }
}

// The parity of (double)v, which is even beyond 2^53 in magnitude.
template <typename TE> TIDAL_HD inline bool oddAsDouble(TE v) {
  if constexpr (sizeof(TE) < 8) {
    return (v & 1) != 0;
  } else {
    constexpr TE k = (TE)((uint64_t)1 << 53);
    if constexpr (std::is_signed_v<TE>)
      return v >= -k && v <= k && (v & 1) != 0;
    else
      return v <= k && (v & 1) != 0;
  }
}

// fromDouble<TB>(pow((double)u, (double)v)) for an integer base and
// exponent. Where that power is a double (a base in [-1, 1], a negative
// exponent, or a power at most 2^53 in magnitude), glibc's pow returns it
// exactly and so does this, without pow (CUDA's pow need not be exact);
// larger powers go through pow, whose last bit is the library's.
template <typename TB, typename TE> TIDAL_HD inline TB intPow(TB u, TE v) {
  bool negExp = false;
  if constexpr (std::is_signed_v<TE>)
    negExp = v < 0;
  if (v == 0)
    return 1;
  if (u == 0)
    return negExp ? IntRange<TB>::hi : 0; // pow(+0, -n) = +inf
  if (u == 1)
    return 1;
  if (u == -1)
    return oddAsDouble(v) ? -1 : 1;
  if (negExp)
    return 0; // |u^v| <= 1/2, truncated
  const uint64_t m = u < 0 ? (uint64_t)0 - (uint64_t)u : (uint64_t)u;
  constexpr uint64_t kExact = (uint64_t)1 << 53;
  uint64_t r = 1;
  for (uint64_t k = 0; k < (uint64_t)v; ++k) {
    if (r > kExact / m)
      return fromDouble<TB>(pow((double)u, (double)v));
    r *= m;
  }
  // r <= 2^53 and v <= 53 here.
  const int64_t s = u < 0 && (v & 1) ? -(int64_t)r : (int64_t)r;
  return fromDouble<TB>((double)s);
}

template <typename TB, typename TE> TIDAL_HD inline TB powElement(TB u, TE v) {
  if constexpr (std::is_same_v<TB, float> && !std::is_same_v<TE, double>) {
    // As the CPU: powf, except for integer exponents beyond 2^24.
    if (std::is_same_v<TE, float> ||
        ((double)v >= -16777216.0 && (double)v <= 16777216.0))
      return powf(u, (float)v);
    return (float)pow((double)u, (double)v);
  } else if constexpr (std::is_integral_v<TB> && std::is_integral_v<TE>) {
    return intPow<TB, TE>(u, v);
  } else {
    return fromDouble<TB>(pow((double)u, (double)v));
  }
}

// The CPU's float32 shortcuts for a scalar exponent e: false when e has
// none. x * x and 1 / x are pow correctly rounded; x^3 is computed in
// double and rounded once; pow(-0, 0.5) = +0 and pow(-inf, 0.5) = +inf.
TIDAL_HD inline bool powShortcut(float a, double e, float &r) {
  if (e == 1.0)
    r = a;
  else if (e == 2.0)
    r = a * a;
  else if (e == -1.0)
    r = 1.0f / a;
  else if (e == 0.5)
    r = a == -INFINITY ? INFINITY : sqrtf(a) + 0.0f;
  else if (e == 3.0) {
    const double v = a;
    r = (float)(v * v * v);
  } else
    return false;
  return true;
}

template <typename TB, typename TE> struct PowBody {
  Bcast b;
  const TB *x0;
  const TE *x1;
  TB *y;
  bool shortcut; // float32 base, a scalar exponent and a dense base
  TIDAL_HD void operator()(int64_t i) const {
    int64_t o0, o1;
    b.offsets(i, o0, o1);
    if constexpr (std::is_same_v<TB, float>) {
      float r;
      if (shortcut && powShortcut(x0[o0], (double)x1[0], r)) {
        y[i] = r;
        return;
      }
    }
    y[i] = powElement<TB, TE>(x0[o0], x1[o1]);
  }
};

template <typename TB, typename TE, class L>
void launchPow(L &l, const OpCall &op, const Bcast &b, int64_t n) {
  PowBody<TB, TE> body;
  body.b = b;
  body.x0 = static_cast<const TB *>(op[0].data);
  body.x1 = static_cast<const TE *>(op[1].data);
  body.y = static_cast<TB *>(op[2].data);
  body.shortcut = std::is_same_v<TB, float> && op[1].numel() == 1 &&
                  op[0].numel() == op[2].numel();
  l.forEach(n, body);
}

template <typename TB, class L>
void powBase(L &l, const OpCall &op, const Bcast &b, int64_t n) {
  switch (op[1].type) {
  case TIDALRT_ELEMENT_TYPE_F32:
    return launchPow<TB, float>(l, op, b, n);
  case TIDALRT_ELEMENT_TYPE_F64:
    return launchPow<TB, double>(l, op, b, n);
  case TIDALRT_ELEMENT_TYPE_I64:
    return launchPow<TB, int64_t>(l, op, b, n);
  case TIDALRT_ELEMENT_TYPE_I32:
    return launchPow<TB, int32_t>(l, op, b, n);
  case TIDALRT_ELEMENT_TYPE_U32:
    return launchPow<TB, uint32_t>(l, op, b, n);
  case TIDALRT_ELEMENT_TYPE_U64:
    return launchPow<TB, uint64_t>(l, op, b, n);
  }
}

template <class L> void powKernel(L &l, const OpCall &op) {
  Bcast b;
  const int64_t n = checkPow(op, b);
  if (l.preparing() || n == 0)
    return;
  switch (op[0].type) {
  case TIDALRT_ELEMENT_TYPE_F32:
    return powBase<float>(l, op, b, n);
  case TIDALRT_ELEMENT_TYPE_F64:
    return powBase<double>(l, op, b, n);
  case TIDALRT_ELEMENT_TYPE_I64:
    return powBase<int64_t>(l, op, b, n);
  case TIDALRT_ELEMENT_TYPE_I32:
    return powBase<int32_t>(l, op, b, n);
  }
}

} // namespace elementwise

template <class L> void k_add(L &l, OpCall &op) {
  elementwise::arithKernel<elementwise::Arith::Add>(l, op);
}
template <class L> void k_sub(L &l, OpCall &op) {
  elementwise::arithKernel<elementwise::Arith::Sub>(l, op);
}
template <class L> void k_mul(L &l, OpCall &op) {
  elementwise::arithKernel<elementwise::Arith::Mul>(l, op);
}
template <class L> void k_div(L &l, OpCall &op) {
  elementwise::arithKernel<elementwise::Arith::Div>(l, op);
}
template <class L> void k_pow(L &l, OpCall &op) {
  elementwise::powKernel(l, op);
}

} // namespace cuda
} // namespace tidalrt

#endif // TIDALRT_CUDA_ELEMENTWISE_BINARY_H
