//===- PeakIndex.h - the bytes live by position, and their peak -*- C++ -*-===//
//
// The budget fitter's bytes live at each position of a liveness analysis,
// lowered by each step it applies, with the maximum of each block of
// kPeakBlock positions kept up to date: a step finds the peak, and a
// refetch the last position of a gap at the peak's level, from the blocks
// and one or two blocks' positions instead of a scan of every position (a
// deep net's fit takes thousands of steps over tens or hundreds of
// thousands of positions).
//
//===----------------------------------------------------------------------===//

#ifndef TIDAL_LIB_DIALECT_TIDAL_TRANSFORMS_PEAKINDEX_H
#define TIDAL_LIB_DIALECT_TIDAL_TRANSFORMS_PEAKINDEX_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/ErrorHandling.h"

#include <algorithm>
#include <cstdint>
#include <vector>

namespace mlir::tidal::fit {

class PeakIndex {
public:
  /// Indexes `live` (BufferLiveness::liveBytes), which subtract() changes.
  explicit PeakIndex(llvm::SmallVectorImpl<int64_t> &live) : live(live) {
    blockMax.resize((live.size() + kPeakBlock - 1) / kPeakBlock);
    for (size_t b = 0; b < blockMax.size(); ++b)
      refresh(b);
  }
  llvm::ArrayRef<int64_t> bytes() const { return live; }
  /// The first position of the most bytes live (std::max_element's).
  int64_t peak() const {
    size_t best = 0;
    for (size_t b = 1; b < blockMax.size(); ++b)
      if (blockMax[b] > blockMax[best])
        best = b;
    const size_t end = std::min(live.size(), (best + 1) * kPeakBlock);
    for (size_t p = best * kPeakBlock; p < end; ++p)
      if (live[p] == blockMax[best])
        return p;
    llvm_unreachable("a block's maximum is one of its positions");
  }
  /// The last position p in [from, to) with at least `level` bytes live,
  /// -1 if none.
  int64_t lastAtLeast(int64_t from, int64_t to, int64_t level) const {
    for (int64_t p = to - 1; p >= from;) {
      const size_t b = p / kPeakBlock;
      const int64_t start = std::max<int64_t>(from, b * kPeakBlock);
      if (blockMax[b] >= level)
        for (int64_t q = p; q >= start; --q)
          if (live[q] >= level)
            return q;
      p = start - 1;
    }
    return -1;
  }
  /// `bytes` fewer live at positions [from, to).
  void subtract(int64_t from, int64_t to, int64_t bytes) {
    if (from >= to)
      return;
    for (int64_t p = from; p < to; ++p)
      live[p] -= bytes;
    const size_t first = from / kPeakBlock, last = (to - 1) / kPeakBlock;
    for (size_t b = first + 1; b < last; ++b)
      blockMax[b] -= bytes;
    refresh(first);
    if (last != first)
      refresh(last);
  }

private:
  static constexpr size_t kPeakBlock = 256;
  void refresh(size_t b) {
    const size_t end = std::min(live.size(), (b + 1) * kPeakBlock);
    blockMax[b] =
        *std::max_element(live.begin() + b * kPeakBlock, live.begin() + end);
  }
  llvm::SmallVectorImpl<int64_t> &live;
  std::vector<int64_t> blockMax;
};

} // namespace mlir::tidal::fit

#endif // TIDAL_LIB_DIALECT_TIDAL_TRANSFORMS_PEAKINDEX_H
