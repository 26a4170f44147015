//===- OffsetPacking.cpp - offsets for buffers with lifetimes -------------===//

#include "tidal/Dialect/Tidal/Analysis/OffsetPacking.h"
#include "tidal/Dialect/Tidal/Analysis/BufferLiveness.h"
#include "tidal/Dialect/Tidal/IR/TidalOps.h"

#include <algorithm>
#include <climits>

using namespace mlir;
using namespace mlir::tidal;

namespace {

/// Best-fit placement of `items` in the order `order`, above `base`: each
/// item goes into the smallest gap, between the placed items that overlap
/// it in time, that holds it (the lowest of equal gaps), else above them
/// all. Returns the arena size, or as soon as it passes `limit` a size
/// above it.
///
/// The placed items are kept by offset in two contiguous arrays, their
/// lifetimes and their extents, so that the scan for the ones overlapping
/// an item in time (every placed item, once per item) streams through
/// memory: the scan is quadratic in the items, and on a step of thousands
/// of buffers packed once per fitting step it was most of a fit's time when
/// it went through the items by index.
int64_t placeGreedy(std::vector<Item> &items, ArrayRef<unsigned> order,
                    int64_t base, int64_t limit) {
  struct Placed {
    int64_t offset, size;
  };
  std::vector<Placed> placed;
  placed.reserve(order.size());
  // The placed items that overlap the current one in time, in offset
  // order: gathered without a branch (which one overlaps follows no
  // pattern the branch predictor could learn), then scanned for gaps.
  std::vector<unsigned> overlapping(order.size());
  struct Span {
    int64_t start, end;
  };
  std::vector<Span> spans; // the placed items' lifetimes, in the same order
  spans.reserve(order.size());
  int64_t top = base;
  for (unsigned id : order) {
    Item &item = items[id];
    const int64_t start = item.start, end = item.end, size = item.size;
    int64_t best = -1, bestGap = INT64_MAX, cursor = base;
    size_t count = 0;
    for (size_t i = 0, e = spans.size(); i < e; ++i) {
      overlapping[count] = i;
      count += (spans[i].start <= end) & (start <= spans[i].end);
    }
    for (size_t k = 0; k < count; ++k) {
      const Placed &o = placed[overlapping[k]];
      int64_t gap = o.offset - cursor;
      if (gap >= size && gap < bestGap) {
        best = cursor;
        bestGap = gap;
      }
      cursor = std::max(cursor, o.offset + o.size);
    }
    item.offset = best >= 0 ? best : cursor;
    top = std::max(top, item.offset + size);
    if (top > limit)
      return top; // the arena only grows from here
    auto at = std::upper_bound(
        placed.begin(), placed.end(), item.offset,
        [](int64_t offset, const Placed &o) { return offset < o.offset; });
    spans.insert(spans.begin() + (at - placed.begin()), Span{start, end});
    placed.insert(at, Placed{item.offset, size});
  }
  return top;
}

} // namespace

/// Offsets for `items`; returns the arena size. The second ordering is
/// tried only when the first misses `lowerBound`.
int64_t tidal::pack(std::vector<Item> &items, int64_t endPosition,
                    int64_t lowerBound, int64_t limit) {
  std::vector<unsigned> whole, rest;
  for (unsigned i = 0; i < items.size(); ++i)
    (items[i].start == 0 && items[i].end == endPosition ? whole : rest)
        .push_back(i);
  int64_t base = 0;
  for (unsigned i : whole) {
    items[i].offset = base;
    base += items[i].size;
  }
  auto length = [&](unsigned i) { return items[i].end - items[i].start; };
  std::vector<unsigned> bySize = rest, byLength = rest;
  std::stable_sort(bySize.begin(), bySize.end(), [&](unsigned a, unsigned b) {
    if (items[a].size != items[b].size)
      return items[a].size > items[b].size;
    return length(a) > length(b);
  });
  std::stable_sort(byLength.begin(), byLength.end(),
                   [&](unsigned a, unsigned b) {
                     if (length(a) != length(b))
                       return length(a) > length(b);
                     return items[a].size > items[b].size;
                   });
  std::vector<Item> second = items;
  int64_t first = placeGreedy(items, bySize, base, limit);
  if (first <= lowerBound)
    return first;
  int64_t other = placeGreedy(second, byLength, base, limit);
  if (other < first) {
    items = std::move(second);
    return other;
  }
  return first;
}

int64_t tidal::packedArenaSize(const BufferLiveness &liveness,
                               int64_t alignment, bool host, int64_t limit) {
  std::vector<Item> items;
  for (const Buffer &buffer : liveness.getBuffers())
    if (buffer.host == host)
      items.push_back(
          {alignBytes(buffer.bytes, alignment), buffer.start, buffer.end});
  int64_t end = liveness.getEndPosition();
  if (!host)
    for (Value v : liveness.getReturnedConstants())
      items.push_back(
          {alignBytes(tensorByteSize(cast<ShapedType>(v.getType())), alignment),
           end, end});
  return pack(items, end, liveness.lowerBound(alignment, host), limit);
}
