// logic_math.h - the element formulas and the broadcast index map of the
// logic family: max, min, the comparisons (equal, less, less_or_equal,
// greater, greater_or_equal), the mask ops (and, or, xor, not) and where.
// One definition for the CPU kernels (logic.cpp) and the CUDA kernels
// (cuda/elementwise/logic.h); host and device code (nvcc includes it).
//
// Masks (i1) are bytes holding 0 or 1. max/min return NaN when either
// operand is NaN (torch.maximum/minimum) and otherwise the larger/smaller
// one (the second on a tie); comparisons with NaN are false except !=.
#ifndef TIDALRT_CPU_LOGIC_MATH_H
#define TIDALRT_CPU_LOGIC_MATH_H

#include <cstdint>
#include <type_traits>

#if defined(__CUDACC__)
#define TIDALRT_LOGIC_HD __host__ __device__
#else
#define TIDALRT_LOGIC_HD
#endif

namespace tidalrt {
namespace logic {

enum class Op {
  Max,
  Min,
  Equal,
  Less,
  LessOrEqual,
  Greater,
  GreaterOrEqual,
  And,
  Or,
  Xor
};

// Ops whose result is a mask.
constexpr bool returnsMask(Op k) { return k != Op::Max && k != Op::Min; }
// Ops whose operands are masks.
constexpr bool takesMasks(Op k) {
  return k == Op::And || k == Op::Or || k == Op::Xor;
}

template <Op K, typename T> TIDALRT_LOGIC_HD inline auto apply(T a, T b) {
  if constexpr (K == Op::Max || K == Op::Min) {
    if constexpr (std::is_floating_point_v<T>) {
      if (a != a)
        return a;
      if (b != b)
        return b;
    }
    if constexpr (K == Op::Max)
      return a > b ? a : b;
    else
      return a < b ? a : b;
  } else if constexpr (K == Op::Equal) {
    return (uint8_t)(a == b);
  } else if constexpr (K == Op::Less) {
    return (uint8_t)(a < b);
  } else if constexpr (K == Op::LessOrEqual) {
    return (uint8_t)(a <= b);
  } else if constexpr (K == Op::Greater) {
    return (uint8_t)(a > b);
  } else if constexpr (K == Op::GreaterOrEqual) {
    return (uint8_t)(a >= b);
  } else if constexpr (K == Op::And) {
    return (uint8_t)((a != 0) & (b != 0));
  } else if constexpr (K == Op::Or) {
    return (uint8_t)((a != 0) | (b != 0));
  } else {
    static_assert(K == Op::Xor, "every op has a formula");
    return (uint8_t)((a != 0) ^ (b != 0));
  }
}

// The element offsets of up to three operands broadcast (NumPy rules) to a
// dense result, with dimensions collapsed where every operand allows it:
// result element i reads operand k at offsets(i)[k].
struct IndexMap {
  static constexpr int kMaxRank = 8;
  static constexpr int kMaxOperands = 3;
  int rank = 0;     // collapsed, 0 for a single element
  int operands = 0; // <= kMaxOperands
  int64_t total = 0;
  int64_t dims[kMaxRank] = {};
  int64_t strides[kMaxOperands][kMaxRank] = {};

  TIDALRT_LOGIC_HD void offsets(int64_t i, int64_t *o) const {
    for (int k = 0; k < operands; ++k)
      o[k] = 0;
    for (int d = rank - 1; d >= 0; --d) {
      const int64_t q = i / dims[d], r = i - q * dims[d];
      for (int k = 0; k < operands; ++k)
        o[k] += r * strides[k][d];
      i = q;
    }
  }
};

} // namespace logic
} // namespace tidalrt

#endif // TIDALRT_CPU_LOGIC_MATH_H
