// common.h - what the bodies of the elementwise CUDA kernels share: index
// maps (broadcasts, reduction nests), rounding helpers and the dropout hash
// (namespace tidalrt::cuda::elementwise). Host and device code; no
// std:: containers and nothing host-only.
#ifndef TIDALRT_CUDA_ELEMENTWISE_COMMON_H
#define TIDALRT_CUDA_ELEMENTWISE_COMMON_H

#include "../launch.h"

#include <cmath>
#include <cstdint>
#include <type_traits>

namespace tidalrt {
namespace cuda {
namespace elementwise {

// The collapsed broadcast of one or two inputs to a dense result, copied
// from the CPU kernels' BroadcastPlan (cpu/broadcast.h): result element i
// reads input k at offset(k, i).
struct Bcast {
  int rank = 1;
  int64_t dims[TIDALRT_MAX_RANK];
  int64_t strides[2][TIDALRT_MAX_RANK];

  // The element offsets of result element i in the two inputs.
  TIDAL_HD void offsets(int64_t i, int64_t &o0, int64_t &o1) const {
    o0 = o1 = 0;
    for (int d = rank - 1; d > 0; --d) {
      const int64_t q = i / dims[d], r = i - q * dims[d];
      o0 += r * strides[0][d];
      o1 += r * strides[1][d];
      i = q;
    }
    o0 += i * strides[0][0];
    o1 += i * strides[1][0];
  }
  TIDAL_HD int64_t offset0(int64_t i) const {
    int64_t o0, o1;
    offsets(i, o0, o1);
    return o0;
  }
};

// Some segments of a reduction's input iterated as one flat index (the
// CPU's reduce.cpp Nest): extents and element strides, outermost first.
struct Nest {
  int n = 0;
  int64_t ext[TIDALRT_MAX_RANK];
  int64_t stride[TIDALRT_MAX_RANK];
  int64_t size = 1;

  void add(int64_t e, int64_t s) {
    ext[n] = e;
    stride[n] = s;
    ++n;
    size *= e;
  }
  // The input offset of flat index `flat` (< size).
  TIDAL_HD int64_t offset(int64_t flat) const {
    int64_t off = 0;
    for (int d = n - 1; d > 0; --d) {
      const int64_t q = flat / ext[d];
      off += (flat - q * ext[d]) * stride[d];
      flat = q;
    }
    return n > 0 ? off + flat * stride[0] : 0;
  }
};

// a * b rounded before any following addition: nvcc contracts a * b + c
// into an FMA by default, the CPU kernels (baseline x86-64) never do.
TIDAL_HD inline float mulRn(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fmul_rn(a, b);
#else
  return a * b;
#endif
}
TIDAL_HD inline double mulRn(double a, double b) {
#if defined(__CUDA_ARCH__)
  return __dmul_rn(a, b);
#else
  return a * b;
#endif
}

template <typename T> TIDAL_HD inline bool isInf(T x) {
  return x == (T)INFINITY || x == -(T)INFINITY;
}
template <typename T> TIDAL_HD inline bool isNan(T x) { return x != x; }

// The range of an integer type, for saturating conversions.
template <typename T> struct IntRange {
  static_assert(std::is_integral_v<T>, "an integer type");
  using U = std::make_unsigned_t<T>;
  static constexpr T lo =
      std::is_signed_v<T> ? (T)((U)1 << (8 * sizeof(T) - 1)) : (T)0;
  static constexpr T hi = (T)(~(U)lo);
};

// The CPU's dropout stream (cpu/dropout.cpp, cpu/simd.h): SplitMix64 keys
// and Wellons' lowbias32 hash.
constexpr uint64_t kGamma = 0x9e3779b97f4a7c15ull;

TIDAL_HD inline uint64_t mix64(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

TIDAL_HD inline uint32_t lowbias32(uint32_t x) {
  x ^= x >> 16;
  x *= 0x7feb352du;
  x ^= x >> 15;
  x *= 0x846ca68bu;
  x ^= x >> 16;
  return x;
}

} // namespace elementwise
} // namespace cuda
} // namespace tidalrt

#endif // TIDALRT_CUDA_ELEMENTWISE_COMMON_H
