//===- OffsetPacking.h - offsets for buffers with lifetimes -----*- C++ -*-===//
//
// The offset assignment of tidal-plan-memory's packed strategy, shared with
// tidal-schedule-swaps (which must know the packed arena, not only the
// liveness lower bound, to fit a budget).
//
//===----------------------------------------------------------------------===//

#ifndef TIDAL_DIALECT_TIDAL_ANALYSIS_OFFSETPACKING_H
#define TIDAL_DIALECT_TIDAL_ANALYSIS_OFFSETPACKING_H

#include "llvm/ADT/ArrayRef.h"

#include <climits>
#include <cstdint>
#include <vector>

namespace mlir::tidal {

class BufferLiveness;

/// A block of bytes live on [start, end].
struct Item {
  int64_t size, start, end;
  int64_t offset = -1;
};

/// Offsets for `items`; returns the arena size. Items live for the whole
/// step (0..endPosition) go to the bottom; the rest are placed best-fit,
/// largest first, and also longest-lived first when that misses
/// `lowerBound`.
/// With `limit`, an ordering stops once its arena passes the limit: a
/// result above `limit` then says only that no ordering fits under it (and
/// the offsets are partial); at or below it, it is exact.
int64_t pack(std::vector<Item> &items, int64_t endPosition, int64_t lowerBound,
             int64_t limit = INT64_MAX);

/// The packed size of `liveness`'s (device, or with `host` host) arena,
/// returned constants included, every size rounded up to `alignment`;
/// above `limit`, only a bound (pack's `limit`).
int64_t packedArenaSize(const BufferLiveness &liveness, int64_t alignment,
                        bool host = false, int64_t limit = INT64_MAX);

} // namespace mlir::tidal

#endif // TIDAL_DIALECT_TIDAL_ANALYSIS_OFFSETPACKING_H
