// batch_norm.cpp - batch normalization forward and backward on cuDNN (the
// CUDA twins of runtime/src/cpu/batch_norm.cpp).
//
// float32 `[N, C, spatial...]` inputs of any rank >= 2, statistics per
// channel, as cuDNN's spatial mode over `[N, C, S, 1]`. The per-channel
// operands may have any shape with C elements. The results hold what the
// CPU kernel's do: the batch mean and the BIASED batch variance (cuDNN
// saves 1/sqrt(var + eps), which a small kernel turns back), and running
// statistics new = running * momentum + batch * (1 - momentum) with the
// variance unbiased by m / (m - 1), computed by that kernel in the CPU
// kernel's double-precision expressions (cuDNN's own running update would
// round differently and divide by zero when a channel has one element).
#include "../../cpu/dnnl_checks.h"
#include "common.h"
#include "kernels.h"

#include <memory>

using namespace tidalrt;
using namespace tidalrt::cuda;
using namespace tidalrt::cuda::lib;
using tidalrt::dnnlutil::BatchNorm;
using tidalrt::dnnlutil::Channels;

namespace {

struct BatchNormState {
  Channels ch;
  bool empty = false; // no elements per channel (or no channels)
  double eps = 0.0;
  TensorDesc data, perC;
};

// The CPU kernel's shape checks (dnnl_checks.h); the input as cuDNN sees
// it is [N, C, S, 1].
BatchNormState *batchNormState(OpCall &op, BatchNorm kind) {
  if (auto *s = getState<BatchNormState>(op.context, op.index))
    return s;
  Channels ch = dnnlutil::batchNormChannels(op, kind);
  std::unique_ptr<BatchNormState> owned(new BatchNormState());
  BatchNormState *s = owned.get();
  s->ch = ch;
  s->empty = ch.perChannel() == 0 || ch.c == 0;
  dnnlutil::BatchNormAttrs at = dnnlutil::batchNormAttrs(kind);
  s->eps = op.getFloat(at.epsilon);
  // A fused ReLU or clip (tidal-fuse-epilogues) is a cpu-target form:
  // tidalc never fuses for cuda.
  if (kind != BatchNorm::Backward &&
      (op.getBool(at.relu) || op.has(at.clipMin) || op.has(at.clipMax)))
    fail(TIDALRT_UNSUPPORTED, "a batch normalization with a fused ReLU or "
                              "clip (compile it with --fuse-epilogues off)");
  if (!s->empty) {
    if (s->eps < CUDNN_BN_MIN_EPSILON)
      fail(TIDALRT_UNSUPPORTED, "epsilon %g is below cuDNN's minimum %g",
           s->eps, (double)CUDNN_BN_MIN_EPSILON);
    cudnn(op.context); // created while preparing rather than in a step
    s->data.set({ch.n, ch.c, ch.s, 1});
    s->perC.set({1, ch.c, 1, 1});
  }
  return setOwnedState(op.context, op.index, owned.release());
}

} // namespace

extern "C" tidalrt_status_t
tidalrt_cuda_k_batch_norm_inference(tidalrt_context_t *ctx, const int64_t *desc,
                                    void *const *buffers) {
  return runKernel(ctx, desc, buffers, "batch_norm_inference", [&](OpCall &op) {
    // input, scale, bias, mean, var -> output; clip_max, clip_min,
    // epsilon, relu.
    dnnlutil::checkBatchNormCall(op, BatchNorm::Inference);
    BatchNormState *s = batchNormState(op, BatchNorm::Inference);
    if (s->empty || preparing(ctx))
      return ok();
    const float one = 1.0f, zero = 0.0f;
    check(cudnnBatchNormalizationForwardInference(
              cudnn(ctx), CUDNN_BATCHNORM_SPATIAL, &one, &zero, s->data.get(),
              op[0].data, s->data.get(), op[5].data, s->perC.get(), op[1].data,
              op[2].data, op[3].data, op[4].data, s->eps),
          "cudnnBatchNormalizationForwardInference");
    return ok();
  });
}

extern "C" tidalrt_status_t
tidalrt_cuda_k_batch_norm_training(tidalrt_context_t *ctx, const int64_t *desc,
                                   void *const *buffers) {
  return runKernel(ctx, desc, buffers, "batch_norm_training", [&](OpCall &op) {
    // input, scale, bias, running_mean, running_var -> output,
    // new_running_mean, new_running_var, batch_mean, batch_var;
    // clip_max, clip_min, epsilon, momentum, relu.
    dnnlutil::checkBatchNormCall(op, BatchNorm::Training);
    BatchNormState *s = batchNormState(op, BatchNorm::Training);
    double momentum =
        op.getFloat(dnnlutil::batchNormAttrs(BatchNorm::Training).momentum);
    if (preparing(ctx))
      return ok();
    float *mean = op[8].f32(), *var = op[9].f32();
    if (!s->empty) {
      // No running statistics from cuDNN (both null): the finishing
      // kernel writes them.
      const float one = 1.0f, zero = 0.0f;
      check(cudnnBatchNormalizationForwardTraining(
                cudnn(ctx), CUDNN_BATCHNORM_SPATIAL, &one, &zero, s->data.get(),
                op[0].data, s->data.get(), op[5].data, s->perC.get(),
                op[1].data, op[2].data, 1.0, nullptr, nullptr, s->eps, mean,
                var),
            "cudnnBatchNormalizationForwardTraining");
    }
    batchNormFinish(ctx, "batch_norm_training", s->ch.c, s->ch.perChannel(),
                    s->eps, momentum, s->empty, mean, var, op[3].f32(),
                    op[4].f32(), op[6].f32(), op[7].f32());
    return ok();
  });
}

extern "C" tidalrt_status_t
tidalrt_cuda_k_batch_norm_backward(tidalrt_context_t *ctx, const int64_t *desc,
                                   void *const *buffers) {
  return runKernel(ctx, desc, buffers, "batch_norm_backward", [&](OpCall &op) {
    // grad, input, scale, batch_mean, batch_var -> grad_input,
    // grad_scale, grad_bias; epsilon.
    dnnlutil::checkBatchNormCall(op, BatchNorm::Backward);
    BatchNormState *s = batchNormState(op, BatchNorm::Backward);
    const int64_t c = s->ch.c;
    if (s->empty) {
      if (!preparing(ctx) && c) {
        cudaStream_t stream = currentStream(ctx);
        check(cudaMemsetAsync(op[6].data, 0, c * sizeof(float), stream),
              "batch_norm_backward");
        check(cudaMemsetAsync(op[7].data, 0, c * sizeof(float), stream),
              "batch_norm_backward");
      }
      return ok();
    }
    // cuDNN takes the saved inverse standard deviation, not the
    // variance the forward results hold.
    float *inv =
        static_cast<float *>(workspace(ctx, (size_t)c * sizeof(float)));
    if (preparing(ctx))
      return ok();
    inverseStd(ctx, "batch_norm_backward", c, s->eps, op[4].f32(), inv);
    const float one = 1.0f, zero = 0.0f;
    check(cudnnBatchNormalizationBackward(
              cudnn(ctx), CUDNN_BATCHNORM_SPATIAL, &one, &zero, &one, &zero,
              s->data.get(), op[1].data, s->data.get(), op[0].data,
              s->data.get(), op[5].data, s->perC.get(), op[2].data, op[6].data,
              op[7].data, s->eps, op[3].data, inv),
          "cudnnBatchNormalizationBackward");
    return ok();
  });
}
