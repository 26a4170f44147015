// reduce_math.h - the element formulas of reduce_max, reduce_min,
// reduce_prod, argmax and argmin. One definition for the CPU kernels
// (reduce.cpp) and the CUDA kernels (cuda/elementwise/reduce.h); host and
// device code (nvcc includes it).
//
// Every result combines its reduced elements one at a time in row-major
// order, on the CPU and the GPU alike, so the two agree bit for bit:
//   max, min  NaN once any element is NaN (torch.amax), else the first of
//             the equal extremes; an empty reduction gives the identity,
//             -inf/+inf for floats and the lowest/highest value for
//             integers, as ONNX says;
//   prod      floats multiply in double and round once, integers wrap in
//             int64; an empty product is 1;
//   arg       the index of the first extreme (the last with
//             select_last_index); NaN counts as more extreme than any
//             number, as torch.argmax/argmin have it.
#ifndef TIDALRT_CPU_REDUCE_MATH_H
#define TIDALRT_CPU_REDUCE_MATH_H

#include <cmath>
#include <cstdint>
#include <type_traits>

#if defined(__CUDACC__)
#define TIDALRT_REDUCE_HD __host__ __device__
#else
#define TIDALRT_REDUCE_HD
#endif

namespace tidalrt {
namespace reduce {

enum class Kind { Max, Min, Prod };

// What a result accumulates in: the element type for max and min; double
// (floats) or int64 (integers) for prod.
template <Kind K, typename T>
using AccOf = std::conditional_t<
    K == Kind::Prod,
    std::conditional_t<std::is_floating_point_v<T>, double, int64_t>, T>;

template <Kind K, typename T> TIDALRT_REDUCE_HD inline AccOf<K, T> identity() {
  if constexpr (K == Kind::Prod) {
    return (AccOf<K, T>)1;
  } else if constexpr (std::is_floating_point_v<T>) {
    return K == Kind::Max ? (T)-INFINITY : (T)INFINITY;
  } else {
    static_assert(std::is_signed_v<T>, "int64 and int32 only");
    const T lowest = (T)((uint64_t)1 << (8 * sizeof(T) - 1));
    return K == Kind::Max ? lowest : (T)~lowest;
  }
}

template <Kind K, typename T>
TIDALRT_REDUCE_HD inline AccOf<K, T> combine(AccOf<K, T> acc, T v) {
  if constexpr (K == Kind::Prod) {
    if constexpr (std::is_floating_point_v<T>)
      return acc * (double)v;
    else
      return (int64_t)((uint64_t)acc * (uint64_t)(int64_t)v);
  } else {
    if constexpr (std::is_floating_point_v<T>) {
      if (acc != acc)
        return acc;
      if (v != v)
        return v;
    }
    if constexpr (K == Kind::Max)
      return v > acc ? v : acc;
    else
      return v < acc ? v : acc;
  }
}

// Whether element `v` replaces `best` as the extreme of an arg reduction.
template <typename T>
TIDALRT_REDUCE_HD inline bool beats(T v, T best, bool isMax, bool last) {
  if constexpr (std::is_floating_point_v<T>) {
    if (best != best)
      return last && v != v;
    if (v != v)
      return true;
  }
  if (v == best)
    return last;
  return isMax ? v > best : v < best;
}

} // namespace reduce
} // namespace tidalrt

#endif // TIDALRT_CPU_REDUCE_MATH_H
