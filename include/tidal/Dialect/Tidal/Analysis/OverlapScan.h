//===- OverlapScan.h - lifetimes overlapping a range -----------*- C++ -*-===//
//
// The inner loop of the offset packing (OffsetPacking.cpp): of the placed
// buffers, the ones whose lifetimes overlap the buffer being placed. The
// packing runs it once per buffer over every buffer placed before it, so
// it is quadratic in the buffers, and on a deep net's step it is most of
// the packing's time. It has an AVX-512, an AVX2 and a scalar path, chosen
// at run time (the compiler stays baseline x86-64), with the same result.
//
//===----------------------------------------------------------------------===//

#ifndef TIDAL_DIALECT_TIDAL_ANALYSIS_OVERLAPSCAN_H
#define TIDAL_DIALECT_TIDAL_ANALYSIS_OVERLAPSCAN_H

#include <cstddef>
#include <cstdint>

namespace mlir::tidal {

enum class ScanIsa { Scalar, Avx2, Avx512 };

/// The widest path this CPU runs.
ScanIsa bestScanIsa();

/// Whether this CPU runs the `isa` path.
bool scanIsaSupported(ScanIsa isa);

/// Extra entries `out` must have beyond `n`: the vector paths store whole
/// registers.
inline constexpr size_t kScanSlack = 16;

/// Writes to `out`, in increasing order, the indices i < n whose lifetime
/// [starts[i], ends[i]] overlaps [start, end] (inclusive at both ends), and
/// returns how many there are. `out` holds n + kScanSlack entries. `isa`
/// must be supported.
size_t scanOverlapping(ScanIsa isa, const int32_t *starts, const int32_t *ends,
                       size_t n, int32_t start, int32_t end, uint32_t *out);

} // namespace mlir::tidal

#endif // TIDAL_DIALECT_TIDAL_ANALYSIS_OVERLAPSCAN_H
