// broadcast.h - shape helpers and parallel loops of the element-wise kernels
// (namespace tidalrt::ew).
//
// A BroadcastPlan describes writing a dense result from inputs that
// broadcast to its shape (NumPy rules: shapes aligned at the right, each
// input dimension 1 or equal). Size-1 result dimensions are dropped and
// adjacent dimensions merged whenever every input is contiguous (or
// broadcast) across both, so the common cases collapse to one or two
// dimensions: same shape -> [n]; bias [C] on [N, C] -> [N, C] with the bias
// row stride 0; [C, 1, 1] on [N, C, H, W] -> [N, C, H*W] with the inner
// stride 0. The innermost dimension ("row") has input strides 0 or 1.
//
// forEachRow runs the rows (split into blocks when long) in parallel with
// OpenMP once the result is large; the split depends on the shape only, so
// results never depend on the thread count.
#ifndef TIDALRT_CPU_BROADCAST_H
#define TIDALRT_CPU_BROADCAST_H

#include "kernel.h"

#include <cstdint>

namespace tidalrt {
namespace ew {

// The work below which a reduction is not split into partial sums
// (trailingSplit, keptSplit). Fixed: the split decides the summation order.
// Whether a loop runs in parallel is parallelGrain()'s (kernel.h).
constexpr int64_t kParallelMinElements = 32768;
// The fixed chunk of the flat and row loops (a multiple of 64).
constexpr int64_t kChunkElements = 16384;

// Formats "[2, 3, 4]" into `buf`; returns buf.
const char *shapeString(int rank, const int64_t *dims, char *buf, size_t size);
inline const char *shapeString(const TensorRef &t, char *buf, size_t size) {
  return shapeString(t.rank, t.dims, buf, size);
}

// The NumPy name of an element type code.
const char *typeName(int32_t type);

// Fails (INTERNAL) unless the call has exactly `n` tensors.
void expectTensors(const OpCall &op, int n);
// Fails (INVALID_ARGUMENT) unless `t` is present with `n` elements;
// `what` names it in the message.
void expectElements(const TensorRef &t, int64_t n, const char *what);

// Runs f(begin, end) over [0, n) in chunks of kChunkElements, in parallel
// when n >= parallelGrain() (elementwise f only: the chunks run serially
// below it as one call).
template <typename F> void parallelChunks(int64_t n, F &&f) {
  if (n <= 0)
    return;
  if (n < parallelGrain()) {
    f((int64_t)0, n);
    return;
  }
  int64_t chunks = (n + kChunkElements - 1) / kChunkElements;
#pragma omp parallel for schedule(static)
  for (int64_t c = 0; c < chunks; ++c) {
    int64_t b = c * kChunkElements;
    int64_t e = b + kChunkElements < n ? b + kChunkElements : n;
    f(b, e);
  }
}

struct BroadcastPlan {
  static constexpr int kMaxInputs = 2;
  int rank = 0; // collapsed rank, >= 1
  int numInputs = 0;
  int64_t total = 0; // result elements
  int64_t dims[TIDALRT_MAX_RANK];
  // Element strides of each input along the collapsed dimensions (0 where
  // it broadcasts).
  int64_t strides[kMaxInputs][TIDALRT_MAX_RANK];

  int64_t inner() const { return dims[rank - 1]; }
  int64_t rows() const { return inner() ? total / inner() : 0; }
  int64_t innerStride(int k) const { return strides[k][rank - 1]; }
};

// Fills `plan` for a result of shape (outRank, outDims) and `numInputs`
// inputs. Returns -1, or the index of the first input that does not
// broadcast to the result shape.
int buildBroadcastPlan(int outRank, const int64_t *outDims, int numInputs,
                       const TensorRef *const *inputs, BroadcastPlan &plan);

// Calls f(outOffset, inOffsets, colBegin, colEnd) for every row of the plan
// (or a block of one), in parallel for large results: the row's elements
// are out[outOffset + c] and in_k[inOffsets[k] + c * innerStride(k)] for c
// in [colBegin, colEnd).
template <typename F> void forEachRow(const BroadcastPlan &p, F &&f) {
  if (p.total <= 0)
    return;
  const int64_t inner = p.inner(), rows = p.rows();
  const int outer = p.rank - 1;
  // Work items: row groups of at least kChunkElements elements, or blocks
  // of kChunkElements of one long row.
  int64_t blocksPerRow = 1, rowsPerItem = 1;
  if (inner >= 2 * kChunkElements)
    blocksPerRow = (inner + kChunkElements - 1) / kChunkElements;
  else
    rowsPerItem = inner >= kChunkElements ? 1 : kChunkElements / inner;
  const int64_t items = blocksPerRow > 1
                            ? rows * blocksPerRow
                            : (rows + rowsPerItem - 1) / rowsPerItem;
  auto runItem = [&](int64_t item) {
    int64_t row0, row1, c0 = 0, c1 = inner;
    if (blocksPerRow > 1) {
      row0 = item / blocksPerRow;
      row1 = row0 + 1;
      c0 = (item % blocksPerRow) * kChunkElements;
      c1 = c0 + kChunkElements < inner ? c0 + kChunkElements : inner;
    } else {
      row0 = item * rowsPerItem;
      row1 = row0 + rowsPerItem < rows ? row0 + rowsPerItem : rows;
    }
    // The multi-index of row0 over the outer dimensions, and the offsets.
    int64_t idx[TIDALRT_MAX_RANK];
    int64_t off[BroadcastPlan::kMaxInputs] = {0, 0};
    int64_t rem = row0;
    for (int d = outer - 1; d >= 0; --d) {
      idx[d] = rem % p.dims[d];
      rem /= p.dims[d];
      for (int k = 0; k < p.numInputs; ++k)
        off[k] += idx[d] * p.strides[k][d];
    }
    for (int64_t r = row0; r < row1; ++r) {
      f(r * inner, (const int64_t *)off, c0, c1);
      // Advance the odometer.
      for (int d = outer - 1; d >= 0; --d) {
        for (int k = 0; k < p.numInputs; ++k)
          off[k] += p.strides[k][d];
        if (++idx[d] < p.dims[d])
          break;
        for (int k = 0; k < p.numInputs; ++k)
          off[k] -= p.dims[d] * p.strides[k][d];
        idx[d] = 0;
      }
    }
  };
  if (p.total < parallelGrain() || items == 1) {
    for (int64_t it = 0; it < items; ++it)
      runItem(it);
    return;
  }
#pragma omp parallel for schedule(static)
  for (int64_t it = 0; it < items; ++it)
    runItem(it);
}

} // namespace ew
} // namespace tidalrt

#endif // TIDALRT_CPU_BROADCAST_H
