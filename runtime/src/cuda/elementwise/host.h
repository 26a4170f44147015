// host.h - the host-side checks and plans of the elementwise CUDA kernels
// (namespace tidalrt::cuda::elementwise): the CPU kernels' own checks
// (cpu/elementwise_checks.h, cpu/reduce_plan.h), so the same status codes
// and messages, and their shape plans turned into what the kernel bodies
// index with. Defined in host.cpp, part of the CPU runtime; kept out of the
// kernel headers so that nvcc does not compile cpu/broadcast.h and its
// OpenMP loops.
#ifndef TIDALRT_CUDA_ELEMENTWISE_HOST_H
#define TIDALRT_CUDA_ELEMENTWISE_HOST_H

#include "../../cpu/activation_math.h"
#include "common.h"

namespace tidalrt {
namespace cuda {
namespace elementwise {

// Each function runs the CPU kernel's check of the same name
// (cpu/elementwise_checks.h) and returns what the bodies need: a broadcast
// as a Bcast, element counts.

// add, sub, mul, div; returns the result's element count.
int64_t checkArithmetic(const OpCall &op, Bcast &b);
// pow; returns the result's element count.
int64_t checkPow(const OpCall &op, Bcast &b);
// The unary ops; returns the element count.
int64_t checkUnary(const OpCall &op, bool allowInt);
// The activation backward ops; returns the element count.
int64_t checkActivationBackward(const OpCall &op);
// The parameters of an activation-family call (cpu/activation_checks.h).
act::Params<double> activationParams(act::Kind kind, const OpCall &op);

// dropout: checks the call and computes what the masks need.
struct DropoutParams {
  int64_t n = 0;         // elements
  bool identity = false; // not training, or ratio 0: a copy and ones
  uint64_t key = 0;      // the stream key of (seed, step, stream)
  uint64_t threshold = 0;
  double scale = 1.0; // 1 / (1 - ratio)
};
DropoutParams checkDropout(const OpCall &op);

// random_normal / random_uniform: the element count, a = mean (low),
// b = scale (high), and the stream key (computed only when drawing).
struct RandomParams {
  int64_t n = 0;
  double a = 0.0, b = 1.0;
  uint64_t key = 0;
};
RandomParams checkRandom(const OpCall &op, bool normal);

// dropout_backward: returns the element count and sets `scale` to
// 1 / (1 - ratio).
int64_t checkDropoutBackward(const OpCall &op, double &scale);

// broadcast_to: returns the element size (1, 2, 4 or 8) and the result's
// element count in `total`.
size_t checkBroadcastTo(const OpCall &op, Bcast &b, int64_t &total);

// reduce_sum / reduce_mean (reduce.cpp's checkReduce): the plan and the
// CPU kernel's split of the work (reduce_plan.h), which fixes the order of
// its additions: each output is computed in that order, so results match
// it bit for bit.
struct ReduceSetup {
  tidalrt::ew::ReducePlan plan;
  // innerReduced: per output, `blocks` partial sums over reduced rows
  // [b * rowsPerBlock, ...) or, when rowsPerBlock is 0, over the columns
  // [b * colsPerBlock, ...) of the inner segment.
  // !innerReduced: per output, `blocks` partial sums over reduced rows
  // [b * rowsPerBlock, ...).
  int64_t blocks = 1;
  int64_t rowsPerBlock = 0;
  int64_t colsPerBlock = 0;
};
ReduceSetup checkReduce(const OpCall &op);

// argmax / argmin (reduce.cpp's checkArgReduce): the plan of the reduction
// over the axis; sets `last` to select_last_index.
tidalrt::ew::ReducePlan checkArgReduce(const OpCall &op, bool &last);

} // namespace elementwise
} // namespace cuda
} // namespace tidalrt

#endif // TIDALRT_CUDA_ELEMENTWISE_HOST_H
