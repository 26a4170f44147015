//===- PeakIndexTest.cpp - the fitter's peak and level queries ------------===//
//
// PeakIndex answers from block maxima what a scan of every position
// answers: the first position of the most bytes live, and the last
// position of a range at a level. Random profiles, lowered by random
// steps as the fitter lowers them, against the plain scans.
//
//===----------------------------------------------------------------------===//

#include "PeakIndex.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>

using namespace mlir::tidal::fit;

namespace {

int64_t plainLast(const llvm::SmallVector<int64_t> &live, int64_t from,
                  int64_t to, int64_t level) {
  int64_t top = -1;
  for (int64_t p = from; p < to; ++p)
    if (live[p] >= level)
      top = p;
  return top;
}

TEST(PeakIndexTest, AnswersAsTheScans) {
  std::mt19937 rng(7);
  for (int round = 0; round < 60; ++round) {
    const size_t n = 1 + rng() % (round < 20 ? 300 : 3000);
    llvm::SmallVector<int64_t> live(n), plain;
    // Few distinct values, so that ties (the first maximum) are common.
    for (int64_t &v : live)
      v = 64 * (rng() % 8);
    PeakIndex peaks(live);
    for (int step = 0; step < 200; ++step) {
      plain.assign(live.begin(), live.end());
      ASSERT_EQ(peaks.peak(),
                std::max_element(plain.begin(), plain.end()) - plain.begin())
          << "round " << round << ", step " << step;
      int64_t a = rng() % n, b = rng() % (n + 1);
      int64_t level = 64 * (rng() % 9) - 64;
      ASSERT_EQ(peaks.lastAtLeast(a, b, level), plainLast(plain, a, b, level))
          << "round " << round << ", step " << step << ": [" << a << ", " << b
          << ") at " << level;
      int64_t from = rng() % n, to = from + rng() % (n - from + 1);
      int64_t bytes = 64 * (rng() % 3);
      peaks.subtract(from, to, bytes);
      for (int64_t p = from; p < to; ++p)
        plain[p] -= bytes;
      ASSERT_TRUE(std::equal(plain.begin(), plain.end(), live.begin()));
    }
  }
}

} // namespace
