// pad_math.h - the index arithmetic of tidal.pad and pad_backward, shared
// by the CPU kernels (pad.cpp) and the CUDA kernels (cuda/other/pad.h);
// host and device code (nvcc includes it).
//
// Forward: output coordinate o of a dimension of size n with begin padding
// b reads input coordinate i = o - b, or for i outside [0, n): nothing
// (constant: the fill value), the mirror without the edge (reflect: -i, or
// 2 (n - 1) - i), or the nearest edge (edge).
// Backward gathers: each input element sums, in increasing output order,
// the gradients of the output coordinates that read it, per dimension at
// most three ranges (the left border, the element itself, the right
// border), in double, rounded once. No atomics: the bits do not depend on
// the order in which elements are computed.
#ifndef TIDALRT_CPU_PAD_MATH_H
#define TIDALRT_CPU_PAD_MATH_H

#include <cstdint>

#if defined(__CUDACC__)
#define TIDALRT_PAD_HD __host__ __device__
#else
#define TIDALRT_PAD_HD
#endif

namespace tidalrt {
namespace pad {

enum Mode { Constant = 0, Reflect = 1, Edge = 2 };

struct PadMap {
  static constexpr int kMaxRank = 8;
  int rank = 0;
  int mode = Constant;
  int64_t in[kMaxRank] = {};    // input dimensions
  int64_t out[kMaxRank] = {};   // output dimensions
  int64_t begin[kMaxRank] = {}; // begin paddings

  // The input coordinate output coordinate o of dimension d reads; -1 for
  // the constant fill.
  TIDALRT_PAD_HD int64_t source(int d, int64_t o) const {
    const int64_t n = in[d];
    int64_t i = o - begin[d];
    if (i >= 0 && i < n)
      return i;
    if (mode == Constant)
      return -1;
    if (mode == Edge)
      return i < 0 ? 0 : n - 1;
    return i < 0 ? -i : 2 * (n - 1) - i; // reflect
  }

  // The input offset output element `flat` reads, or -1.
  TIDALRT_PAD_HD int64_t sourceOffset(int64_t flat) const {
    int64_t off = 0, stride = 1;
    for (int d = rank - 1; d >= 0; --d) {
      const int64_t o = flat % out[d];
      flat /= out[d];
      const int64_t i = source(d, o);
      if (i < 0)
        return -1;
      off += i * stride;
      stride *= in[d];
    }
    return off;
  }

  // The output coordinate ranges [lo[k], hi[k]] (k < count) of dimension d
  // that read input coordinate i, in increasing order.
  TIDALRT_PAD_HD int readers(int d, int64_t i, int64_t *lo, int64_t *hi) const {
    const int64_t n = in[d], b = begin[d], e = out[d] - n - b;
    int count = 0;
    auto add = [&](int64_t l, int64_t h) {
      if (l <= h) {
        lo[count] = l;
        hi[count] = h;
        ++count;
      }
    };
    if (mode == Edge && i == 0)
      add(0, b - 1);
    if (mode == Reflect && i >= 1 && i <= b)
      add(b - i, b - i);
    add(i + b, i + b);
    if (mode == Reflect && i <= n - 2 && i >= n - 1 - e)
      add(2 * (n - 1) - i + b, 2 * (n - 1) - i + b);
    if (mode == Edge && i == n - 1)
      add(n + b, n + b + e - 1);
    return count;
  }

  // The sum, in double in increasing output order, of the gradients `g`
  // (the output's shape) that read input element `flat`.
  template <typename T>
  TIDALRT_PAD_HD double gatherGrad(const T *g, int64_t flat) const {
    int64_t lo[kMaxRank][3], hi[kMaxRank][3];
    int count[kMaxRank], range[kMaxRank];
    int64_t pos[kMaxRank];
    for (int d = rank - 1; d >= 0; --d) {
      const int64_t i = flat % in[d];
      flat /= in[d];
      count[d] = readers(d, i, lo[d], hi[d]);
      range[d] = 0;
      pos[d] = lo[d][0];
    }
    double sum = 0.0;
    for (;;) {
      int64_t off = 0;
      for (int d = 0; d < rank; ++d)
        off = off * out[d] + pos[d];
      sum += (double)g[off];
      // Next output position: the last dimension fastest.
      int d = rank - 1;
      for (; d >= 0; --d) {
        if (pos[d] < hi[d][range[d]]) {
          ++pos[d];
          break;
        }
        if (range[d] + 1 < count[d]) {
          ++range[d];
          pos[d] = lo[d][range[d]];
          break;
        }
        range[d] = 0;
        pos[d] = lo[d][0];
      }
      if (d < 0)
        return sum;
    }
  }
};

} // namespace pad
} // namespace tidalrt

#endif // TIDALRT_CPU_PAD_MATH_H
