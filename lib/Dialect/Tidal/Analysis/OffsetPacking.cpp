//===- OffsetPacking.cpp - offsets for buffers with lifetimes -------------===//

#include "tidal/Dialect/Tidal/Analysis/OffsetPacking.h"
#include "tidal/Dialect/Tidal/Analysis/BufferLiveness.h"
#include "tidal/Dialect/Tidal/Analysis/OverlapScan.h"
#include "tidal/Dialect/Tidal/IR/TidalOps.h"

#include <algorithm>
#include <climits>
#include <mutex>
#include <optional>

using namespace mlir;
using namespace mlir::tidal;

namespace {

/// How many placed items placeGreedy scans at a time.
constexpr size_t kScanChunk = 512;

/// Best-fit placement of `items` in the order `order`, above `base`: each
/// item goes into the smallest gap, between the placed items that overlap
/// it in time, that holds it (the lowest of equal gaps), else above them
/// all. Returns the arena size, or as soon as it passes `limit` a size
/// above it.
///
/// The placed items are kept by offset in contiguous arrays, their
/// lifetimes (32-bit positions, start and end apart) and their extents, so
/// that the scan for the ones overlapping an item in time (every placed
/// item, once per item: quadratic in the items, and on a step of thousands
/// of buffers most of a fit's packing time) streams through memory in
/// vector registers (scanOverlapping); the gaps are then walked in offset
/// order.
int64_t placeGreedy(std::vector<Item> &items, ArrayRef<unsigned> order,
                    int64_t base, int64_t limit) {
  struct Placed {
    int64_t offset, size;
  };
  std::vector<Placed> placed;
  placed.reserve(order.size());
  std::vector<int32_t> starts, ends; // the placed items' lifetimes, in order
  starts.reserve(order.size());
  ends.reserve(order.size());
  std::vector<uint32_t> overlapping(kScanChunk + kScanSlack);
  const ScanIsa isa = bestScanIsa();
  int64_t top = base;
  for (unsigned id : order) {
    Item &item = items[id];
    const int64_t size = item.size;
    const int32_t start = static_cast<int32_t>(item.start),
                  end = static_cast<int32_t>(item.end);
    int64_t best = -1, bestGap = INT64_MAX, cursor = base;
    // The placed items are scanned a chunk at a time, and the gaps walked
    // as they come: a gap of exactly the item's size is the best there can
    // be (and the lowest of equal gaps wins), so the rest is not scanned
    // (a fifth of the packing's time on ResNet-5000, whose tensors come in
    // few sizes).
    for (size_t from = 0; from < starts.size() && bestGap != size;
         from += kScanChunk) {
      const size_t n = std::min(kScanChunk, starts.size() - from);
      const size_t count =
          scanOverlapping(isa, starts.data() + from, ends.data() + from, n,
                          start, end, overlapping.data());
      for (size_t k = 0; k < count; ++k) {
        const Placed &o = placed[from + overlapping[k]];
        int64_t gap = o.offset - cursor;
        if (gap >= size && gap < bestGap) {
          best = cursor;
          bestGap = gap;
          if (gap == size)
            break;
        }
        cursor = std::max(cursor, o.offset + o.size);
      }
    }
    item.offset = best >= 0 ? best : cursor;
    top = std::max(top, item.offset + size);
    if (top > limit)
      return top; // the arena only grows from here
    auto at = std::upper_bound(
        placed.begin(), placed.end(), item.offset,
        [](int64_t offset, const Placed &o) { return offset < o.offset; });
    const size_t slot = at - placed.begin();
    starts.insert(starts.begin() + slot, start);
    ends.insert(ends.begin() + slot, end);
    placed.insert(at, Placed{item.offset, size});
  }
  return top;
}

/// The last few packings, by their inputs. The same step is packed by
/// each pass that must know its arena: tidal-place's last fit,
/// tidal-schedule-swaps (which finds it fitted) and tidal-plan-memory (for
/// its offsets); on a deep net one packing is seconds. pack() is a
/// function of its items' sizes and lifetimes, the end position and the
/// lower bound (and of `limit` only above it), so a packing of equal
/// inputs is reused exactly.
class PackMemo {
public:
  /// A stored packing of inputs equal to these that answers for `limit`:
  /// its offsets copied into `items`; its arena size returned.
  std::optional<int64_t> find(std::vector<Item> &items, int64_t endPosition,
                              int64_t lowerBound, int64_t limit) {
    std::lock_guard<std::mutex> lock(mutex);
    for (Entry &e : entries) {
      if (e.endPosition != endPosition || e.lowerBound != lowerBound ||
          e.items.size() != items.size() ||
          !std::equal(items.begin(), items.end(), e.items.begin(),
                      [](const Item &a, const Item &b) {
                        return a.size == b.size && a.start == b.start &&
                               a.end == b.end;
                      }))
        continue;
      // A size at or under the limit it ran with is exact; above it, it
      // says only that the arena is above that limit.
      if (e.size > e.limit && limit > e.limit)
        return std::nullopt;
      for (size_t i = 0; i < items.size(); ++i)
        items[i].offset = e.items[i].offset;
      return e.size;
    }
    return std::nullopt;
  }
  void store(const std::vector<Item> &items, int64_t endPosition,
             int64_t lowerBound, int64_t limit, int64_t size) {
    // Small steps pack in microseconds: only what is worth the copy.
    if (items.size() < kMinItems)
      return;
    std::lock_guard<std::mutex> lock(mutex);
    if (entries.size() == kEntries)
      entries.erase(entries.begin());
    entries.push_back({items, endPosition, lowerBound, limit, size});
  }

private:
  static constexpr size_t kEntries = 4, kMinItems = 1024;
  struct Entry {
    std::vector<Item> items;
    int64_t endPosition, lowerBound, limit, size;
  };
  std::mutex mutex;
  std::vector<Entry> entries;
};

PackMemo &packMemo() {
  static PackMemo memo;
  return memo;
}

/// pack() without the memo.
int64_t packItems(std::vector<Item> &items, int64_t endPosition,
                  int64_t lowerBound, int64_t limit) {
  // Positions are 32-bit in the scan: a step of 2^31 ops would not fit in
  // memory as IR.
  assert(endPosition <= INT32_MAX && "positions past 32 bits");
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

} // namespace

int64_t tidal::pack(std::vector<Item> &items, int64_t endPosition,
                    int64_t lowerBound, int64_t limit) {
  PackMemo &memo = packMemo();
  if (std::optional<int64_t> size =
          memo.find(items, endPosition, lowerBound, limit))
    return *size;
  int64_t size = packItems(items, endPosition, lowerBound, limit);
  memo.store(items, endPosition, lowerBound, limit, size);
  return size;
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
