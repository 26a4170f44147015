// elementwise_checks.h - the operand checks of the element-wise CPU kernels
// (namespace tidalrt::ew), with their status codes and messages, also run
// by the CUDA kernels (cuda/elementwise/host.cpp) so that both reject the
// same calls the same way. Each is defined next to its CPU kernel.
#ifndef TIDALRT_CPU_ELEMENTWISE_CHECKS_H
#define TIDALRT_CPU_ELEMENTWISE_CHECKS_H

#include "broadcast.h"
#include "kernel.h"

#include <cstddef>
#include <cstdint>

namespace tidalrt {
namespace ew {

// add, sub, mul, div (elementwise_binary.cpp): three tensors of one type,
// float32, float64 or an integer type; the operands broadcast to the
// result, as `plan` says.
void checkArithmetic(const OpCall &op, BroadcastPlan &plan);

// pow (elementwise_binary.cpp): a float32, float64, int64 or int32 base and
// result, an exponent of those types or uint32/uint64; broadcasting as
// above.
void checkPow(const OpCall &op, BroadcastPlan &plan);

// The unary ops (elementwise_unary.cpp): input and result of one type and
// element count, float32 or float64 (and int64/int32 when `allowInt`).
// Returns the element count.
int64_t checkUnary(const OpCall &op, bool allowInt);

// The activation backward ops (activation_backward.cpp): grad, saved and
// grad_input of one float type and element count. Returns the count.
int64_t checkActivationBackward(const OpCall &op);

// dropout (dropout.cpp): input, output and mask (bool) of one element
// count, a float input and output type, a ratio in [0, 1).
struct DropoutCall {
  int64_t n = 0;
  double ratio = 0.0;
  bool training = false;
  uint64_t seed = 0; // the seed attribute, else the context's seed
};
DropoutCall checkDropout(const OpCall &op);
// The stream key of a dropout call at the current step (the stream
// attribute, else the op index), read only when masks are drawn.
uint64_t dropoutKey(const OpCall &op, uint64_t seed);

// dropout_backward (dropout.cpp): grad, mask (bool) and grad_input of one
// element count. Returns the count and sets `ratio`.
int64_t checkDropoutBackward(const OpCall &op, double &ratio);

// random_normal / random_uniform (random.cpp): one float32 or float64
// output; a = mean (low), b = scale (high), checked finite with scale >= 0
// (low <= high).
struct RandomCall {
  int64_t n = 0;
  double a = 0.0, b = 1.0;
  uint64_t seed = 0; // the seed attribute, else the context's seed
};
RandomCall checkRandom(const OpCall &op, bool normal);
// The stream key of a random call at the current step (the stream
// attribute, else the op index).
uint64_t randomKey(const OpCall &op, uint64_t seed);

// broadcast_to (reduce.cpp): input and result of one type of 1, 2, 4 or 8
// bytes, the input broadcasting to the result as `plan` says. Returns the
// element size.
size_t checkBroadcastTo(const OpCall &op, BroadcastPlan &plan);

} // namespace ew
} // namespace tidalrt

#endif // TIDALRT_CPU_ELEMENTWISE_CHECKS_H
