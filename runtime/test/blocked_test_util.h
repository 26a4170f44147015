// blocked_test_util.h - dense <-> channel-blocked copies of test tensors
// (tidalrt.h, "Tensor layouts").
#ifndef TIDALRT_TEST_BLOCKED_TEST_UTIL_H
#define TIDALRT_TEST_BLOCKED_TEST_UTIL_H

#include "tidalrt/tidalrt.h"

#include <cstdint>
#include <vector>

namespace tidalrt_test {

// Dense [N, C, S...] <-> [N][C / B][S][B] with B = tidalrt_channel_block().
template <bool ToBlocked>
std::vector<float> relayout(const std::vector<float> &x,
                            const std::vector<int64_t> &d) {
  int64_t b = tidalrt_channel_block(), n = d[0], c = d[1];
  int64_t s = n * c != 0 ? (int64_t)x.size() / (n * c) : 0;
  std::vector<float> y(x.size());
  for (int64_t i = 0; i < n; ++i)
    for (int64_t ch = 0; ch < c; ++ch)
      for (int64_t p = 0; p < s; ++p) {
        int64_t blocked = ((i * (c / b) + ch / b) * s + p) * b + ch % b;
        int64_t dense = (i * c + ch) * s + p;
        if (ToBlocked)
          y[blocked] = x[dense];
        else
          y[dense] = x[blocked];
      }
  return y;
}

inline std::vector<float> toBlocked(const std::vector<float> &x,
                                    const std::vector<int64_t> &d) {
  return relayout<true>(x, d);
}

inline std::vector<float> toDense(const std::vector<float> &y,
                                  const std::vector<int64_t> &d) {
  return relayout<false>(y, d);
}

} // namespace tidalrt_test

#endif // TIDALRT_TEST_BLOCKED_TEST_UTIL_H
