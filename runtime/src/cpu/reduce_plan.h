// reduce_plan.h - the plan of the reductions (namespace tidalrt::ew),
// shared by the CPU kernels (reduce.cpp) and the CUDA kernels
// (cuda/elementwise/reduce.h): the input's dimensions collapsed into kept
// and reduced segments, and for reduce_sum / reduce_mean the split of the
// work into blocks, which depends on the shape only and fixes the order of
// the additions. Plain data without OpenMP, so that nvcc may include it.
#ifndef TIDALRT_CPU_REDUCE_PLAN_H
#define TIDALRT_CPU_REDUCE_PLAN_H

#include "kernel.h"

#include <cstdint>

namespace tidalrt {
namespace ew {

// Some segments of the input, iterated as one flat index: extents and
// element strides, outermost first.
struct Nest {
  int n = 0;
  int64_t ext[TIDALRT_MAX_RANK];
  int64_t stride[TIDALRT_MAX_RANK];
  int64_t size = 1;

  void add(int64_t e, int64_t s) {
    ext[n] = e;
    stride[n] = s;
    ++n;
    size *= e;
  }
};

struct ReducePlan {
  bool innerReduced = false; // the innermost segment is reduced
  int64_t inner = 1;         // its extent (contiguous)
  Nest kept;                 // the kept segments, innermost excluded if kept
  Nest reduced;              // the reduced ones, innermost excluded if reduced
  int64_t numOut = 1;        // result elements
  int64_t count = 1;         // reduced elements per result
  bool identity = false;     // nothing is reduced
};

// Checks a reduce_sum / reduce_mean / reduce_max / reduce_min /
// reduce_prod call (two tensors of one type, float32, float64, int64 or
// int32; axes in range, none twice; a result of the reduced element count)
// and fills `plan`. Defined in reduce.cpp.
void checkReduce(const OpCall &op, ReducePlan &plan);

// Checks an argmax / argmin call (an input of float32, float64, int64 or
// int32 and an int64 result; attributes axis, keepdims, select_last_index;
// the axis in range and, unless the result is empty, not of extent 0),
// fills `plan` for the reduction over the axis and returns
// select_last_index. Defined in reduce.cpp.
bool checkArgReduce(const OpCall &op, ReducePlan &plan);

// Block sizes (elements) of the split reductions.
constexpr int64_t kReduceBlock = 32768;
constexpr int64_t kRowBlock = 1024; // columns of one kept-inner item
constexpr int64_t kMaxRowSplits = 16;

// Innermost segment reduced: out[o] = sum over reduced rows of contiguous
// sums of `inner` elements; for few, large outputs each is cut into
// `blocks` partial sums, added in order.
struct TrailingSplit {
  int64_t blocks = 1;       // blocks per output (1: no partial sums)
  int64_t rowsPerBlock = 0; // outer reduced rows per block, or
  int64_t colsPerBlock = 0; // inner columns per block (one outer row)
};
TrailingSplit trailingSplit(const ReducePlan &p);

// Innermost segment kept: out[o', k] = sum over reduced rows of
// in[o', rows, k]; items are (o', column block[, row block]), the row
// blocks' partial sums added in order.
struct KeptSplit {
  int64_t colBlocks = 1; // column blocks per output row
  int64_t colBlock = 0;  // columns per block
  int64_t rowBlocks = 1; // row blocks (1: no partial sums)
  int64_t rowsPerBlock = 0;
};
KeptSplit keptSplit(const ReducePlan &p);

// An odometer over a Nest: the input offset of its current flat index.
struct Odometer {
  const Nest &nest;
  int64_t idx[TIDALRT_MAX_RANK];
  int64_t off = 0;

  Odometer(const Nest &nest, int64_t flat) : nest(nest) {
    for (int d = nest.n - 1; d >= 0; --d) {
      // An empty extent (a reduction over a 0-length axis) is only ever
      // started at 0: no division by its 0.
      idx[d] = nest.ext[d] ? flat % nest.ext[d] : 0;
      flat = nest.ext[d] ? flat / nest.ext[d] : 0;
      off += idx[d] * nest.stride[d];
    }
  }
  void next() {
    for (int d = nest.n - 1; d >= 0; --d) {
      off += nest.stride[d];
      if (++idx[d] < nest.ext[d])
        return;
      off -= nest.ext[d] * nest.stride[d];
      idx[d] = 0;
    }
  }
};

} // namespace ew
} // namespace tidalrt

#endif // TIDALRT_CPU_REDUCE_PLAN_H
