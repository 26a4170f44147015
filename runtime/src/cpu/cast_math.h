// cast_math.h - element conversion of tidal.cast, shared by the CPU kernel
// (cast.cpp) and the CUDA kernel (cuda/elementwise/cast.h); host and device
// code (nvcc includes it).
//
// Between the numeric types a conversion is C++'s, except float to integer:
// truncated toward zero (as torch's .to(int)), NaN to 0 and values outside
// the integer's range saturated (C++ leaves both undefined). To bool: x != 0
// (NaN is true); from bool: 0 or 1. float16 and bfloat16 are storage
// formats here: converted through double, rounded to nearest even (as
// PyTorch's .to() and numpy's astype do), out of range to infinity, NaN to a
// quiet NaN of the same sign.
#ifndef TIDALRT_CPU_CAST_MATH_H
#define TIDALRT_CPU_CAST_MATH_H

#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#if defined(__CUDACC__)
#define TIDALRT_CAST_HD __host__ __device__
#else
#define TIDALRT_CAST_HD
#endif

namespace tidalrt {
namespace cast {

// A mask byte (element type bool) as opposed to uint8.
struct Bool {
  uint8_t v;
};

// std::numeric_limits's values as constants: usable in device code, where
// its (host) member functions are not.
template <typename T> struct Limits {
  static constexpr T lowest = std::numeric_limits<T>::min();
  static constexpr T highest = std::numeric_limits<T>::max();
};
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

// A binary16 value (IEEE half) and a bfloat16 value, as their bits.
struct Half {
  uint16_t bits;
};
struct BFloat16 {
  uint16_t bits;
};

// The IEEE-style format with `M` mantissa and `E` exponent bits.
template <int M, int E> struct SmallFloat {
  static constexpr int bias = (1 << (E - 1)) - 1;
  static constexpr uint16_t expMask = ((1u << E) - 1u) << M;

  // Exact: every such value is a double.
  TIDALRT_CAST_HD static double decode(uint16_t b) {
    const double sign = (b >> (M + E)) ? -1.0 : 1.0;
    const int e = (b & expMask) >> M;
    const int m = b & ((1 << M) - 1);
    if (e == (1 << E) - 1)
      return m ? kNaN : sign * kInf;
    if (e == 0)
      return sign * std::ldexp((double)m, 1 - bias - M);
    return sign * std::ldexp((double)(m + (1 << M)), e - bias - M);
  }

  // Rounded to nearest, ties to even, in one step from x.
  TIDALRT_CAST_HD static uint16_t encode(double x) {
    const uint16_t sign = std::signbit(x) ? (uint16_t)(1u << (M + E)) : 0;
    if (std::isnan(x))
      return sign | expMask | (uint16_t)(1u << (M - 1));
    const double a = std::fabs(x);
    if (std::isinf(a))
      return sign | expMask;
    if (a < std::ldexp(1.0, 1 - bias)) // subnormal; 1 << M is the least normal
      return sign | (uint16_t)std::nearbyint(std::ldexp(a, bias - 1 + M));
    int e;
    std::frexp(a, &e); // a = f * 2^e, f in [0.5, 1)
    int exponent = e - 1;
    double m = std::nearbyint(std::ldexp(std::ldexp(a, -exponent) - 1.0, M));
    if (m == (double)(1 << M)) {
      m = 0;
      ++exponent;
    }
    if (exponent > bias)
      return sign | expMask;
    return sign | (uint16_t)((exponent + bias) << M) | (uint16_t)m;
  }
};
using HalfFormat = SmallFloat<10, 5>;
using BFloat16Format = SmallFloat<7, 8>;

template <typename T> struct IsSmallFloat : std::false_type {};
template <> struct IsSmallFloat<Half> : std::true_type {};
template <> struct IsSmallFloat<BFloat16> : std::true_type {};

template <typename To, typename From> TIDALRT_CAST_HD inline To convert(From x);

template <typename From> TIDALRT_CAST_HD inline double toDouble(From x) {
  if constexpr (std::is_same_v<From, Half>)
    return HalfFormat::decode(x.bits);
  else if constexpr (std::is_same_v<From, BFloat16>)
    return BFloat16Format::decode(x.bits);
  else
    return convert<double, From>(x);
}

template <typename To, typename From>
TIDALRT_CAST_HD inline To convert(From x) {
  if constexpr (IsSmallFloat<From>::value) {
    if constexpr (std::is_same_v<To, From>)
      return x;
    else
      return convert<To, double>(toDouble(x));
  } else if constexpr (std::is_same_v<To, Half>) {
    return Half{HalfFormat::encode(toDouble(x))};
  } else if constexpr (std::is_same_v<To, BFloat16>) {
    return BFloat16{BFloat16Format::encode(toDouble(x))};
  } else if constexpr (std::is_same_v<To, Bool>) {
    if constexpr (std::is_same_v<From, Bool>)
      return x;
    else
      return Bool{(uint8_t)(x != From(0))};
  } else if constexpr (std::is_same_v<From, Bool>) {
    return (To)x.v;
  } else if constexpr (std::is_floating_point_v<From> &&
                       std::is_integral_v<To>) {
    if (x != x)
      return 0;
    // The saturation bounds as From: exact for the lower one (a power of
    // two or 0); the upper one rounds up, so compare with >=.
    const From lo = (From)Limits<To>::lowest;
    const From hi = (From)Limits<To>::highest;
    if (x <= lo)
      return Limits<To>::lowest;
    if (x >= hi)
      return Limits<To>::highest;
    return (To)x;
  } else {
    return (To)x;
  }
}

} // namespace cast
} // namespace tidalrt

// The element types tidal.cast converts: X(TIDALRT_ELEMENT_TYPE_ suffix,
// C++ type).
#define TIDALRT_CAST_TYPES(X)                                                  \
  X(F32, float)                                                                \
  X(F64, double)                                                               \
  X(I64, int64_t)                                                              \
  X(I32, int32_t)                                                              \
  X(I16, int16_t)                                                              \
  X(I8, int8_t)                                                                \
  X(U64, uint64_t)                                                             \
  X(U32, uint32_t)                                                             \
  X(U16, uint16_t)                                                             \
  X(U8, uint8_t)                                                               \
  X(BOOL, ::tidalrt::cast::Bool)                                               \
  X(F16, ::tidalrt::cast::Half)                                                \
  X(BF16, ::tidalrt::cast::BFloat16)

#endif // TIDALRT_CPU_CAST_MATH_H
