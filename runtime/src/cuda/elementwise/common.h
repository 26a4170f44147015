// common.h - what the bodies of the elementwise CUDA kernels share: index
// maps (broadcasts, reduction nests) and rounding helpers (namespace
// tidalrt::cuda::elementwise). Host and device code; no
// std:: containers and nothing host-only.
#ifndef TIDALRT_CUDA_ELEMENTWISE_COMMON_H
#define TIDALRT_CUDA_ELEMENTWISE_COMMON_H

#include "../../cpu/dropout_hash.h"
#include "../../cpu/reduce_plan.h"
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

// Some segments of a reduction's input iterated as one flat index
// (cpu/reduce_plan.h).
using tidalrt::ew::Nest;

// The input offset of flat index `flat` (< n.size) of a Nest.
TIDAL_HD inline int64_t nestOffset(const Nest &n, int64_t flat) {
  int64_t off = 0;
  for (int d = n.n - 1; d > 0; --d) {
    const int64_t q = flat / n.ext[d];
    off += (flat - q * n.ext[d]) * n.stride[d];
    flat = q;
  }
  return n.n > 0 ? off + flat * n.stride[0] : 0;
}

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

} // namespace elementwise
} // namespace cuda
} // namespace tidalrt

#endif // TIDALRT_CUDA_ELEMENTWISE_COMMON_H
