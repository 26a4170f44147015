// dnnl_checks.h - the operand checks and shape/attribute decoding of the
// oneDNN CPU kernels (namespace tidalrt::dnnlutil), with their status codes
// and messages, also run by the cuDNN/cuBLAS kernels (cuda/library/) so
// that both reject the same calls the same way and read the same geometry.
// Plain data without oneDNN types or OpenMP, so that nvcc may include it.
// Each function is defined next to its CPU kernel.
#ifndef TIDALRT_CPU_DNNL_CHECKS_H
#define TIDALRT_CPU_DNNL_CHECKS_H

#include "kernel.h"

#include <cstdint>
#include <vector>

namespace tidalrt {
namespace dnnlutil {

// dnnl_util.cpp: fails with UNSUPPORTED unless tensor `i` of `op` is
// float32; `what` names it in the message.
void requireF32(const OpCall &op, int i, const char *what);
// Fails with INVALID_ARGUMENT unless tensor `i` has rank `rank`.
void requireRank(const OpCall &op, int i, int rank, const char *what);

// oneDNN's padding_r for one spatial dimension: the ONNX end padding when
// it gives `out` outputs, else what does (more with ceil_mode's overhang,
// less when the floor drops a partial window). `dilation` is ONNX's (>= 1).
int64_t padRight(int64_t in, int64_t out, int64_t kernel, int64_t stride,
                 int64_t dilation, int64_t padBegin, int64_t padEnd);

// conv, conv_backward_data and conv_backward_weights (dnnl_conv.cpp).
enum class Conv { Forward, BackwardData, BackwardWeights };

// The tensor and attribute counts of a convolution call, run on every call.
void checkConvCall(const OpCall &op, Conv kind);

// The geometry of a convolution call; `x` is the input-shaped tensor, `y`
// the output-shaped one, `w` the weight.
struct ConvGeometry {
  int k = 0; // spatial dimensions
  int64_t n = 0, c = 0, m = 0, group = 1;
  // Per spatial dimension; dilations as ONNX's (>= 1), padR from padRight.
  std::vector<int64_t> in, out, kernel, strides, dilations, padL, padR;
  bool empty = false; // some tensor has no elements
};
// Checks the element types (float32), ranks (3 to 5), channels, group,
// strides, pads, dilations and (forward) the bias, and returns the
// geometry. Tensors: forward x 0, w 1, bias 2, y 3; backward data y 0,
// w 1, x 2; backward weights y 0, x 1, w 2.
ConvGeometry checkConv(const OpCall &op, Conv kind);

// The pooling ops (dnnl_pool.cpp).
enum class Pool { MaxForward, MaxBackward, AvgForward, AvgBackward };

// The operand checks of max_pool, max_pool_backward, average_pool and
// average_pool_backward (tensor and attribute counts, element types, and
// grad_input shaped as the input), run on every call.
void checkPool(const OpCall &op, Pool kind);
// global_average_pool: an [N, C, ...] float32 input, an [N, C, 1...]
// float32 output.
void checkGlobalAveragePool(const OpCall &op);

// The sliding window of a pooling op over the spatial dims of `[N, C, D...]`.
struct Window {
  int k = 0;
  std::vector<int64_t> in, out, kernel, strides, dilations, padBegin, padEnd;
  int64_t planes = 0, inSp = 1, outSp = 1;
  bool countIncludePad = false; // average pooling's attribute
};
// Reads and checks the window of a pooling call from its attributes (max:
// ceil_mode, dilations, kernel_shape, pads, strides; average: ceil_mode,
// count_include_pad, kernel_shape, pads, strides). Tensor roles: `xi`
// input-shaped (input or grad_input), `yi` output-shaped (output or grad).
Window poolWindow(const OpCall &op, Pool kind, int xi, int yi);

// The batch-norm ops (batch_norm.cpp).
enum class BatchNorm { Inference, Training, Backward };

// The attribute positions of a batch-norm call (alphabetical ODS names):
// inference clip_max, clip_min, epsilon, relu; training clip_max,
// clip_min, epsilon, momentum, relu; backward epsilon. -1: none. clip_min
// and clip_max are absent unless a clip (ReLU6) is fused.
struct BatchNormAttrs {
  int clipMax = -1, clipMin = -1, epsilon = 0, momentum = -1, relu = -1;
  int count = 1;
};
inline BatchNormAttrs batchNormAttrs(BatchNorm kind) {
  switch (kind) {
  case BatchNorm::Inference:
    return {0, 1, 2, -1, 3, 4};
  case BatchNorm::Training:
    return {0, 1, 2, 3, 4, 5};
  case BatchNorm::Backward:
    break;
  }
  return {};
}

// The tensor and attribute counts of a batch-norm call and its float32
// operands, run on every call.
void checkBatchNormCall(const OpCall &op, BatchNorm kind);

// The input `[N, C, spatial...]` of a batch-norm call, per channel.
struct Channels {
  int64_t n = 0, c = 0, s = 1; // s: the spatial dims' product
  int64_t perChannel() const { return n * s; }
};
// Checks the shapes (input rank >= 2, per-channel operands of C elements,
// the others shaped as the input) and returns the channels.
Channels batchNormChannels(const OpCall &op, BatchNorm kind);

// gemm (dnnl_matmul.cpp): float32 A, B, optional C and output; rank-2 A, B
// and output of matching (transposed) shapes; C broadcasting to [M, N].
struct GemmShape {
  int64_t m = 0, n = 0, k = 0;
  bool ta = false, tb = false; // transA, transB
  double beta = 1.0;
  bool hasC = false;
  // C's strides over [M, N] (0 along a broadcast dim).
  int64_t cStrideM = 0, cStrideN = 0;
};
// The tensor and attribute counts of a gemm call, run on every call.
void checkGemmCall(const OpCall &op);
// The operand checks, with the decoded shape.
GemmShape checkGemm(const OpCall &op);

// matmul (dnnl_matmul.cpp): NumPy semantics. 1-D operands promoted, the
// batch dims broadcast, the output shaped as NumPy's.
struct MatMulShape {
  int64_t m = 0, n = 0, k = 0;
  // The batch dims of lhs, rhs (1 where absent) and of the result.
  std::vector<int64_t> aBatch, bBatch, batch;
  int64_t nBatch = 1, aCount = 1, bCount = 1; // their element counts
  // No output elements, or K == 0 (the result is zeros).
  bool empty() const { return nBatch * m * n == 0 || k == 0; }
};
// The tensor and attribute counts of a matmul call, run on every call.
void checkMatMulCall(const OpCall &op);
// The operand checks, with the decoded shape.
MatMulShape checkMatMul(const OpCall &op);

} // namespace dnnlutil
} // namespace tidalrt

#endif // TIDALRT_CPU_DNNL_CHECKS_H
