// loss_checks.h - the operand checks and attribute decoding of the loss
// CPU kernels (namespace tidalrt::other), with their status codes and
// messages, also run by the CUDA kernels (cuda/other/loss.h) so that both
// reject the same calls the same way. Defined in loss.cpp; host code only,
// no tensor data read (the labels' values are checked by each kernel).
// LossLayout's members are host and device code (nvcc includes it).
#ifndef TIDALRT_CPU_LOSS_CHECKS_H
#define TIDALRT_CPU_LOSS_CHECKS_H

#include "kernel.h"

#include <cstdint>

#if defined(__CUDACC__)
#define TIDALRT_LOSS_HD __host__ __device__
#else
#define TIDALRT_LOSS_HD
#endif

namespace tidalrt {
namespace other {

enum LossReduction { kNone = 0, kSum = 1, kMean = 2 };

// Scores [N, C, D] (D = d1*..*dk) and labels [N, D].
struct LossLayout {
  int64_t n, c, d;
  TIDALRT_LOSS_HD int64_t positions() const { return n * d; }
  // Flat index of class `cls` at position `j` in [N, C, D].
  TIDALRT_LOSS_HD int64_t at(int64_t j, int64_t cls) const {
    return ((j / d) * c + cls) * d + j % d;
  }
};

// Attributes shared by the four ops: ignore_index (0), reduction (1).
struct LossAttrs {
  bool hasIgnore;
  int64_t ignore;
  int reduction; // a LossReduction
};

// What the checks of one loss op decode.
struct LossCall {
  LossAttrs attrs;
  LossLayout layout;
  const float *weights; // the weights operand's data, null without one
};

// softmax_cross_entropy_loss: scores, labels, weights?, loss, log_prob.
LossCall checkCrossEntropy(const OpCall &op);
// softmax_cross_entropy_loss_backward: grad_loss, log_prob, labels,
// weights?, grad_scores.
LossCall checkCrossEntropyBackward(const OpCall &op);
// nll_loss: input, target, weight?, loss.
LossCall checkNll(const OpCall &op);
// nll_loss_backward: grad_loss, target, weight?, grad_input.
LossCall checkNllBackward(const OpCall &op);

// The split of a sum over m positions into at most kMaxLossChunks chunks of
// `size`,
// depending on m only (the CPU kernels add the chunks' partial sums in
// order; so do the CUDA kernels, for the same bits).
constexpr int64_t kMaxLossChunks = 256;
struct LossChunks {
  int64_t count, size;
};
LossChunks lossChunks(int64_t m);

} // namespace other
} // namespace tidalrt

#endif // TIDALRT_CPU_LOSS_CHECKS_H
