// softmax_checks.h - the operand checks and shape decoding of the softmax
// CPU kernels (namespace tidalrt::other), with their status codes and
// messages, also run by the CUDA kernels (cuda/other/softmax.h) so that both
// reject the same calls the same way. Defined in softmax.cpp; host code
// only, no tensor data read.
#ifndef TIDALRT_CPU_SOFTMAX_CHECKS_H
#define TIDALRT_CPU_SOFTMAX_CHECKS_H

#include "kernel.h"

#include <cstdint>

namespace tidalrt {
namespace other {

// A tensor seen as outer x n x inner around its axis.
struct SoftmaxLayout {
  int64_t outer, n, inner;
};

// softmax, log_softmax: input and output (float32) of one shape of rank
// >= 1; axis (0).
SoftmaxLayout checkSoftmax(const OpCall &op);
// softmax_backward, log_softmax_backward: grad, output and grad_input
// (float32) of one shape of rank >= 1; axis (0).
SoftmaxLayout checkSoftmaxBackward(const OpCall &op);

} // namespace other
} // namespace tidalrt

#endif // TIDALRT_CPU_SOFTMAX_CHECKS_H
