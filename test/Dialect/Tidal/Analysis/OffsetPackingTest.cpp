//===- OffsetPackingTest.cpp - the packing and its overlap scan -----------===//

#include "tidal/Dialect/Tidal/Analysis/OffsetPacking.h"
#include "tidal/Dialect/Tidal/Analysis/OverlapScan.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>

using namespace mlir::tidal;

namespace {

const ScanIsa kIsas[] = {ScanIsa::Scalar, ScanIsa::Avx2, ScanIsa::Avx512};

const char *isaName(ScanIsa isa) {
  return isa == ScanIsa::Scalar ? "scalar"
         : isa == ScanIsa::Avx2 ? "avx2"
                                : "avx512";
}

// Every path lists the same lifetimes as the plain test, in order, for
// lengths around the vector widths and ranges at and past the ends.
TEST(OverlapScanTest, EveryPathListsTheOverlapsInOrder) {
  std::mt19937 rng(7);
  for (size_t n : {0, 1, 7, 8, 9, 15, 16, 17, 31, 33, 100, 1000}) {
    std::vector<int32_t> starts(n), ends(n);
    for (size_t i = 0; i < n; ++i) {
      starts[i] = static_cast<int32_t>(rng() % 200);
      ends[i] = starts[i] + static_cast<int32_t>(rng() % 50);
    }
    for (auto [start, end] : {std::pair<int32_t, int32_t>{0, 0},
                              {10, 60},
                              {100, 100},
                              {240, 300},
                              {0, 400},
                              {-5, -1}}) {
      std::vector<uint32_t> expected;
      for (size_t i = 0; i < n; ++i)
        if (starts[i] <= end && start <= ends[i])
          expected.push_back(static_cast<uint32_t>(i));
      for (ScanIsa isa : kIsas) {
        if (!scanIsaSupported(isa))
          continue;
        std::vector<uint32_t> out(n + kScanSlack, 0xdeadbeef);
        size_t count = scanOverlapping(isa, starts.data(), ends.data(), n,
                                       start, end, out.data());
        out.resize(count);
        EXPECT_EQ(out, expected) << isaName(isa) << ", n = " << n << ", range ["
                                 << start << ", " << end << "]";
      }
    }
  }
}

TEST(OverlapScanTest, TheBestPathIsSupported) {
  EXPECT_TRUE(scanIsaSupported(ScanIsa::Scalar));
  EXPECT_TRUE(scanIsaSupported(bestScanIsa()));
}

// The packing as specified (OffsetPacking.h), written plainly: each item,
// in order, into the smallest gap between the placed items that overlap it
// in time (the lowest of equal gaps), else above them.
int64_t referencePlace(std::vector<Item> &items,
                       const std::vector<unsigned> &order, int64_t base) {
  std::vector<unsigned> placed;
  int64_t top = base;
  for (unsigned id : order) {
    Item &item = items[id];
    std::vector<unsigned> overlapping;
    for (unsigned p : placed)
      if (items[p].start <= item.end && item.start <= items[p].end)
        overlapping.push_back(p);
    std::stable_sort(overlapping.begin(), overlapping.end(),
                     [&](unsigned a, unsigned b) {
                       return items[a].offset < items[b].offset;
                     });
    int64_t best = -1, bestGap = INT64_MAX, cursor = base;
    for (unsigned p : overlapping) {
      int64_t gap = items[p].offset - cursor;
      if (gap >= item.size && gap < bestGap) {
        best = cursor;
        bestGap = gap;
      }
      cursor = std::max(cursor, items[p].offset + items[p].size);
    }
    item.offset = best >= 0 ? best : cursor;
    top = std::max(top, item.offset + item.size);
    placed.push_back(id);
  }
  return top;
}

// pack() against the plain placement in its first order (largest first,
// then longest-lived; the items live for the whole step at the bottom) on
// random steps, with a lower bound that keeps the first order; and no two
// items live at once share a byte. The last rounds place more items than
// the packing scans at a time (kScanChunk, 512).
TEST(OffsetPackingTest, MatchesThePlainBestFit) {
  std::mt19937 rng(11);
  for (int round = 0; round < 40; ++round) {
    const int64_t endPosition = 1 + rng() % 300;
    const size_t n = round < 36 ? rng() % 400 : 1100 + rng() % 900;
    std::vector<Item> items;
    for (size_t i = 0; i < n; ++i) {
      int64_t start = rng() % (endPosition + 1);
      int64_t end = std::min<int64_t>(endPosition, start + rng() % 80);
      if (rng() % 20 == 0)
        start = 0, end = endPosition;
      // Sizes from a few classes, so that ties in size are common.
      int64_t size = 64 * (1 + rng() % 6) * (rng() % 3 == 0 ? 16 : 1);
      items.push_back({size, start, end});
    }
    std::vector<Item> expected = items;
    std::vector<unsigned> whole, rest;
    for (unsigned i = 0; i < n; ++i)
      (items[i].start == 0 && items[i].end == endPosition ? whole : rest)
          .push_back(i);
    int64_t base = 0;
    for (unsigned i : whole) {
      expected[i].offset = base;
      base += expected[i].size;
    }
    std::stable_sort(rest.begin(), rest.end(), [&](unsigned a, unsigned b) {
      if (items[a].size != items[b].size)
        return items[a].size > items[b].size;
      return items[a].end - items[a].start > items[b].end - items[b].start;
    });
    int64_t expectedTop = referencePlace(expected, rest, base);
    // A lower bound of INT64_MAX: the first order is always kept.
    int64_t top = pack(items, endPosition, INT64_MAX);
    ASSERT_EQ(top, expectedTop) << "round " << round;
    for (size_t i = 0; i < n; ++i) {
      ASSERT_EQ(items[i].offset, expected[i].offset)
          << "round " << round << ", item " << i;
      for (size_t j = 0; j < i; ++j) {
        const Item &a = items[i], &b = items[j];
        bool together = a.start <= b.end && b.start <= a.end;
        bool shared =
            a.offset < b.offset + b.size && b.offset < a.offset + a.size;
        ASSERT_FALSE(together && shared)
            << "round " << round << ": items " << j << " and " << i;
      }
      ASSERT_LE(items[i].offset + items[i].size, top);
    }
  }
}

// Steps of a deep net are packed by several passes; pack() reuses a
// packing of equal inputs. A packing cut short by its limit must not
// answer for a larger limit, and a reused packing has the same offsets.
TEST(OffsetPackingTest, ARepeatedPackingIsTheSame) {
  std::mt19937 rng(5);
  const int64_t endPosition = 3000;
  std::vector<Item> items;
  for (size_t i = 0; i < 2000; ++i) {
    int64_t start = rng() % endPosition;
    int64_t end = std::min<int64_t>(endPosition, start + rng() % 400);
    items.push_back({64 * int64_t(1 + rng() % 8), start, end});
  }
  std::vector<unsigned> order(items.size());
  for (unsigned i = 0; i < order.size(); ++i)
    order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](unsigned a, unsigned b) {
    if (items[a].size != items[b].size)
      return items[a].size > items[b].size;
    return items[a].end - items[a].start > items[b].end - items[b].start;
  });
  std::vector<Item> expected = items;
  const int64_t expectedTop = referencePlace(expected, order, 0);

  std::vector<Item> cut = items;
  EXPECT_GT(pack(cut, endPosition, INT64_MAX, /*limit=*/1000), 1000);
  for (int time = 0; time < 2; ++time) {
    std::vector<Item> whole = items;
    ASSERT_EQ(pack(whole, endPosition, INT64_MAX), expectedTop)
        << "packing " << time;
    for (size_t i = 0; i < items.size(); ++i)
      ASSERT_EQ(whole[i].offset, expected[i].offset)
          << "packing " << time << ", item " << i;
  }
  std::vector<Item> under = items, at = items;
  EXPECT_GT(pack(under, endPosition, INT64_MAX, expectedTop - 1),
            expectedTop - 1);
  EXPECT_EQ(pack(at, endPosition, INT64_MAX, expectedTop), expectedTop);
  EXPECT_EQ(at[7].offset, expected[7].offset);
}

} // namespace
