// host.h - the host-side checks and plans of the elementwise CUDA kernels
// (namespace tidalrt::cuda::elementwise): the CPU kernels' checks, in their
// order and with their status codes and messages, and their shape plans
// turned into what the kernel bodies index with. Defined in host.cpp, part
// of the CPU runtime; kept out of the kernel headers so that nvcc never
// compiles cpu/broadcast.h (whose OpenMP pragmas it would warn about).
#ifndef TIDALRT_CUDA_ELEMENTWISE_HOST_H
#define TIDALRT_CUDA_ELEMENTWISE_HOST_H

#include "common.h"

namespace tidalrt {
namespace cuda {
namespace elementwise {

// add, sub, mul, div (elementwise_binary.cpp): three tensors of one type,
// float32, float64 or an integer type; the operands broadcast to the
// result. Returns the result's element count.
int64_t checkArithmetic(const OpCall &op, Bcast &b);

// pow: a float32, float64, int64 or int32 base and result, an exponent of
// those types or uint32/uint64; broadcasting as above.
int64_t checkPow(const OpCall &op, Bcast &b);

// The unary ops (elementwise_unary.cpp): input and result of one type and
// element count, float32 or float64 (and int64/int32 when `allowInt`).
// Returns the element count.
int64_t checkUnary(const OpCall &op, bool allowInt);

// The activation backward ops (activation_backward.cpp): grad, saved and
// grad_input of one float type and element count.
int64_t checkActivationBackward(const OpCall &op);

// dropout (dropout.cpp): checks the call and computes what the masks need.
struct DropoutParams {
  int64_t n = 0;         // elements
  bool identity = false; // not training, or ratio 0: a copy and ones
  uint64_t key = 0;      // the stream key of (seed, step, stream)
  uint64_t threshold = 0;
  double scale = 1.0; // 1 / (1 - ratio)
};
DropoutParams checkDropout(const OpCall &op);

// dropout_backward: grad, mask (bool) and grad_input; returns the element
// count and sets `scale` to 1 / (1 - ratio).
int64_t checkDropoutBackward(const OpCall &op, double &scale);

// broadcast_to (reduce.cpp): returns the element size (1, 2, 4 or 8) and
// the result's element count in `total`.
size_t checkBroadcastTo(const OpCall &op, Bcast &b, int64_t &total);

// reduce_sum / reduce_mean (reduce.cpp). The plan and the CPU kernel's
// split of the work, which fixes the order of its additions: each output
// is computed in that order, so results match it bit for bit.
struct ReducePlan {
  bool identity = false;     // only size-1 dimensions are reduced: a copy
  bool innerReduced = false; // the innermost segment is reduced
  int64_t inner = 1;         // its extent (contiguous)
  Nest kept;                 // kept segments (innermost excluded if kept)
  Nest reduced;              // reduced ones (innermost excluded if reduced)
  int64_t numOut = 1;        // result elements
  int64_t count = 1;         // reduced elements per result
  // innerReduced: per output, `blocks` partial sums over reduced rows
  // [b * rowsPerBlock, ...) or, when rowsPerBlock is 0, over the columns
  // [b * colsPerBlock, ...) of the inner segment.
  // !innerReduced: per output, `blocks` partial sums over reduced rows
  // [b * rowsPerBlock, ...).
  int64_t blocks = 1;
  int64_t rowsPerBlock = 0;
  int64_t colsPerBlock = 0;
};
// `type` is the checked element type.
void checkReduce(const OpCall &op, ReducePlan &p, int32_t &type);

} // namespace elementwise
} // namespace cuda
} // namespace tidalrt

#endif // TIDALRT_CUDA_ELEMENTWISE_HOST_H
