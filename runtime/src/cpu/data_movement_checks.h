// data_movement_checks.h - the operand checks and shape decoding of the
// data movement CPU kernels (namespace tidalrt::other), with their status
// codes and messages, also run by the CUDA kernels
// (cuda/other/data_movement.h) so that both reject the same calls the same
// way. Defined in data_movement.cpp and gather.cpp; host code only, no
// tensor data read.
#ifndef TIDALRT_CPU_DATA_MOVEMENT_CHECKS_H
#define TIDALRT_CPU_DATA_MOVEMENT_CHECKS_H

#include "kernel.h"

#include <cstddef>
#include <cstdint>

namespace tidalrt {
namespace other {

// Dense C-order strides (in elements) of `t`.
inline void denseStrides(const TensorRef &t, int64_t *strides) {
  int64_t s = 1;
  for (int d = t.rank - 1; d >= 0; --d) {
    strides[d] = s;
    s *= t.dims[d];
  }
}

// The element size of `t` (1, 2, 4 or 8 bytes), failing UNSUPPORTED
// otherwise; `name` names it in the message.
size_t elementSize(const TensorRef &t, const char *name);
// Fails INVALID_ARGUMENT unless `a` and `b` have one element type.
void requireSameType(const TensorRef &a, const char *an, const TensorRef &b,
                     const char *bn);

// transpose: input, output of one type of 1, 2, 4 or 8 bytes; perm (0) a
// permutation mapping the input's shape onto the output's. Returns the
// element size and sets `perm`.
size_t checkTranspose(const OpCall &op, const int64_t **perm);

// concat (inputs..., output) and split (input, outputs...): parts of the
// whole's type matching it outside `axis` (attribute 0) and adding up to it
// along it; split's sizes (1) name each output's size. Return the element
// size and set `axis`.
size_t checkConcat(const OpCall &op, int *axis);
size_t checkSplit(const OpCall &op, int *axis);

// A slice of `full` producing `part`: part element idx is full element
// starts + idx * steps.
struct SliceGeometry {
  int rank = 0;
  int64_t base = 0;                  // full's element at part index 0
  int64_t counts[TIDALRT_MAX_RANK];  // part's dims
  int64_t starts[TIDALRT_MAX_RANK];  // ends (0) is implied by the counts
  int64_t steps[TIDALRT_MAX_RANK];   // attribute 2
  int64_t strides[TIDALRT_MAX_RANK]; // steps * full's dense strides
};

// slice (input -> output) and slice_backward (grad -> grad_input); ends
// (0), starts (1), steps (2): one type of 1, 2, 4 or 8 bytes, every sliced
// position inside the full tensor. Return the element size and set `s`.
size_t checkSlice(const OpCall &op, SliceGeometry &s);
size_t checkSliceBackward(const OpCall &op, SliceGeometry &s);

// The gathered tensor seen as outer x n x inner over a full one of outer x
// dim x inner.
struct GatherLayout {
  int64_t outer, dim, inner, n;
};

// gather: data, indices (an integer type), output of data's type (1, 2, 4
// or 8 bytes) and of shape data[:axis] + indices + data[axis+1:]. Returns
// the element size and sets `l`. The indices' values are not checked.
size_t checkGather(const OpCall &op, GatherLayout &l);
// gather_backward: grad, indices, grad_input (float32), shapes as gather's
// output, indices and data.
GatherLayout checkGatherBackward(const OpCall &op);
// scatter_extreme: data, indices, updates, output (float32); updates shaped
// as gather's output, output as data; axis (0), largest (1).
GatherLayout checkScatterExtreme(const OpCall &op);

} // namespace other
} // namespace tidalrt

#endif // TIDALRT_CPU_DATA_MOVEMENT_CHECKS_H
