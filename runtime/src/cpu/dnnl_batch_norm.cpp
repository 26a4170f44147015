// dnnl_batch_norm.cpp - batch normalization forward and backward (oneDNN).
//
// float32 `[N, C, spatial...]` inputs of any rank >= 2, statistics per
// channel (dimension 1), dense or channel-blocked (each data tensor's
// layout from the call; the primitive runs on the input's, where oneDNN
// has vectorized kernels for the blocked one and only a generic loop for
// dense NCHW). The per-channel operands may have any shape with C
// elements. oneDNN writes the batch mean and the biased batch variance
// straight into the results; the running statistics are updated here, the
// running variance with the unbiased batch variance (PyTorch's rule):
// new = running * momentum + batch * (1 - momentum).
#include "dnnl_util.h"

#include <algorithm>
#include <memory>

using namespace tidalrt;
using namespace tidalrt::dnnlutil;

namespace {

// The input as oneDNN sees it: [N, C, S, 1] (or [N, C] for rank 2).
// oneDNN's fast plain-layout implementation takes 2-D, 4-D and 5-D tensors
// but not 3-D ones, and per-channel statistics do not care how the spatial
// dims are split.
memory::dims dataDims(const OpCall &op, int x, const Channels &ch) {
  if (op[x].rank == 2)
    return {ch.n, ch.c};
  return {ch.n, ch.c, ch.s, 1};
}

// Checks the shapes: `x` is the input, `perC` the per-channel operands,
// `sameAsX` the ones shaped as the input.
Channels channels(const OpCall &op, int x, std::initializer_list<int> perC,
                  std::initializer_list<int> sameAsX) {
  const TensorRef &t = op[x];
  if (t.rank < 2)
    fail(TIDALRT_INVALID_ARGUMENT, "input has rank %d, expected >= 2", t.rank);
  Channels ch;
  ch.n = t.dim(0);
  ch.c = t.dim(1);
  for (int i = 2; i < t.rank; ++i)
    ch.s *= t.dim(i);
  for (int i : perC)
    if (op[i].numel() != ch.c)
      fail(TIDALRT_INVALID_ARGUMENT,
           "per-channel tensor %d has %lld elements, expected %lld", i,
           (long long)op[i].numel(), (long long)ch.c);
  for (int i : sameAsX)
    if (op[i].rank != t.rank ||
        !std::equal(t.dims, t.dims + t.rank, op[i].dims))
      fail(TIDALRT_INVALID_ARGUMENT, "tensor %d is not shaped as the input", i);
  return ch;
}

// Checks the tensor and attribute counts and that every tensor (named by
// `names`, in order) is float32.
void checkCall(const OpCall &op, std::initializer_list<const char *> names,
               int attrs) {
  int tensors = (int)names.size();
  if (op.numTensors != tensors || op.numAttrs != attrs)
    fail(TIDALRT_INTERNAL, "expected %d tensors and %d attributes", tensors,
         attrs);
  int i = 0;
  for (const char *name : names)
    requireF32(op, i++, name);
}

const dnnl::normalization_flags kScaleShift =
    dnnl::normalization_flags::use_scale | dnnl::normalization_flags::use_shift;

struct BatchNormState {
  Channels ch;
  memory::dims dims;  // the input as oneDNN sees it
  memory::desc data;  // the layout the primitive runs on
  bool empty = false; // no elements per channel (or no channels)
  Plan plan;
};

// The layout the primitive runs on: channel-blocked (oneDNN's vectorized
// kernels) when the input is, else dense. The spatial dims are collapsed
// into one in both ([N, C, S, 1]), which keeps each layout's bytes.
memory::desc dataDesc(const OpCall &op, int x, const memory::dims &dims) {
  return op[x].blocked() ? blockedDesc(dims) : plainDesc(dims);
}

// A data tensor of the call as the primitive reads it.
int dataIn(Plan &p, const OpCall &op, const BatchNormState &s, int i) {
  return p.input(s.data, userDesc(op[i], s.dims), i);
}
int dataOut(Plan &p, const OpCall &op, const BatchNormState &s, int i) {
  return p.output(s.data, userDesc(op[i], s.dims), i);
}

// fuse_norm_relu when the call's boolean attribute `attr` (relu) is set:
// the output is max(y, 0), written by the normalization itself.
dnnl::normalization_flags reluFlag(const OpCall &op, int attr) {
  return op.getBool(attr) ? dnnl::normalization_flags::fuse_norm_relu
                          : dnnl::normalization_flags::none;
}

} // namespace

void tidalrt::dnnlutil::checkBatchNormCall(const OpCall &op, BatchNorm kind) {
  switch (kind) {
  case BatchNorm::Inference:
    // input, scale, bias, mean, var -> output; epsilon, relu.
    checkCall(op, {"input", "scale", "bias", "mean", "var", "output"}, 2);
    return;
  case BatchNorm::Training:
    // input, scale, bias, running_mean, running_var -> output,
    // new_running_mean, new_running_var, batch_mean, batch_var;
    // epsilon, momentum, relu.
    checkCall(op,
              {"input", "scale", "bias", "running_mean", "running_var",
               "output", "new_running_mean", "new_running_var", "batch_mean",
               "batch_var"},
              3);
    return;
  case BatchNorm::Backward:
    // grad, input, scale, batch_mean, batch_var -> grad_input,
    // grad_scale, grad_bias; epsilon.
    checkCall(op,
              {"grad", "input", "scale", "batch_mean", "batch_var",
               "grad_input", "grad_scale", "grad_bias"},
              1);
    return;
  }
}

Channels tidalrt::dnnlutil::batchNormChannels(const OpCall &op,
                                              BatchNorm kind) {
  switch (kind) {
  case BatchNorm::Inference:
    return channels(op, 0, {1, 2, 3, 4}, {5});
  case BatchNorm::Training:
    return channels(op, 0, {1, 2, 3, 4, 6, 7, 8, 9}, {5});
  case BatchNorm::Backward:
    break;
  }
  return channels(op, 1, {2, 3, 4, 6, 7}, {0, 5});
}

extern "C" tidalrt_status_t
tidalrt_k_batch_norm_inference(tidalrt_context_t *ctx, const int64_t *desc,
                               void *const *buffers) {
  return runKernel(ctx, desc, buffers, "batch_norm_inference", [&](OpCall &op) {
    // input, scale, bias, mean, var -> output; epsilon, relu.
    checkBatchNormCall(op, BatchNorm::Inference);
    auto *s = getState<BatchNormState>(ctx, op.index);
    if (!s) {
      Channels ch = batchNormChannels(op, BatchNorm::Inference);
      std::unique_ptr<BatchNormState> owned(new BatchNormState());
      s = owned.get();
      s->ch = ch;
      s->dims = dataDims(op, 0, ch);
      s->empty = ch.perChannel() == 0 || ch.c == 0;
      if (!s->empty)
        buildWithDnnl("batch normalization", [&] {
          s->data = dataDesc(op, 0, s->dims);
          memory::desc perC = plainDesc({ch.c});
          dnnl::batch_normalization_forward::desc d(
              dnnl::prop_kind::forward_inference, s->data,
              (float)op.getFloat(0),
              kScaleShift | dnnl::normalization_flags::use_global_stats |
                  reluFlag(op, 1));
          dnnl::batch_normalization_forward::primitive_desc pd(
              d, scratchpadAttr(), engine());
          Plan &p = s->plan;
          p.add(dnnl::batch_normalization_forward(pd), pd.scratchpad_desc(),
                {{DNNL_ARG_SRC, dataIn(p, op, *s, 0)},
                 {DNNL_ARG_SCALE, p.tensor(perC, 1)},
                 {DNNL_ARG_SHIFT, p.tensor(perC, 2)},
                 {DNNL_ARG_MEAN, p.tensor(perC, 3)},
                 {DNNL_ARG_VARIANCE, p.tensor(perC, 4)},
                 {DNNL_ARG_DST, dataOut(p, op, *s, 5)}});
          p.flush();
          return 0;
        });
      setOwnedState(ctx, op.index, owned.release());
    }
    if (!s->empty)
      s->plan.run(ctx, op);
    return ok();
  });
}

extern "C" tidalrt_status_t
tidalrt_k_batch_norm_training(tidalrt_context_t *ctx, const int64_t *desc,
                              void *const *buffers) {
  return runKernel(ctx, desc, buffers, "batch_norm_training", [&](OpCall &op) {
    // input, scale, bias, running_mean, running_var -> output,
    // new_running_mean, new_running_var, batch_mean, batch_var;
    // epsilon, momentum, relu.
    checkBatchNormCall(op, BatchNorm::Training);
    auto *s = getState<BatchNormState>(ctx, op.index);
    if (!s) {
      Channels ch = batchNormChannels(op, BatchNorm::Training);
      std::unique_ptr<BatchNormState> owned(new BatchNormState());
      s = owned.get();
      s->ch = ch;
      s->dims = dataDims(op, 0, ch);
      s->empty = ch.perChannel() == 0 || ch.c == 0;
      if (!s->empty)
        buildWithDnnl("batch normalization", [&] {
          s->data = dataDesc(op, 0, s->dims);
          memory::desc perC = plainDesc({ch.c});
          dnnl::normalization_flags relu = reluFlag(op, 2);
          dnnl::batch_normalization_forward::desc d(
              dnnl::prop_kind::forward_training, s->data, (float)op.getFloat(0),
              kScaleShift | relu);
          dnnl::batch_normalization_forward::primitive_desc pd(
              d, scratchpadAttr(), engine());
          Plan &p = s->plan;
          // The fused ReLU also writes its mask for a fused backward, which
          // tidal does not use (relu_backward reads the output): scratch.
          int workspace = relu == dnnl::normalization_flags::none
                              ? Plan::kAbsent
                              : p.temp(pd.workspace_desc());
          p.add(dnnl::batch_normalization_forward(pd), pd.scratchpad_desc(),
                {{DNNL_ARG_SRC, dataIn(p, op, *s, 0)},
                 {DNNL_ARG_SCALE, p.tensor(perC, 1)},
                 {DNNL_ARG_SHIFT, p.tensor(perC, 2)},
                 {DNNL_ARG_DST, dataOut(p, op, *s, 5)},
                 {DNNL_ARG_MEAN, p.tensor(perC, 8)},
                 {DNNL_ARG_VARIANCE, p.tensor(perC, 9)},
                 {DNNL_ARG_WORKSPACE, workspace}});
          p.flush();
          return 0;
        });
      setOwnedState(ctx, op.index, owned.release());
    }
    if (preparing(ctx)) {
      s->plan.bind(ctx, op);
      return ok();
    }
    const Channels &ch = s->ch;
    float *mean = op[8].f32(), *var = op[9].f32();
    if (s->empty) {
      std::fill(mean, mean + ch.c, 0.0f);
      std::fill(var, var + ch.c, 0.0f);
    } else {
      s->plan.run(ctx, op);
    }
    double momentum = op.getFloat(1);
    int64_t m = ch.perChannel();
    double unbias = m > 1 ? (double)m / (double)(m - 1) : 1.0;
    const float *runMean = op[3].f32(), *runVar = op[4].f32();
    float *newMean = op[6].f32(), *newVar = op[7].f32();
    for (int64_t c = 0; c < ch.c; ++c) {
      double rm = runMean[c], rv = runVar[c];
      newMean[c] = (float)(rm * momentum + mean[c] * (1.0 - momentum));
      newVar[c] = (float)(rv * momentum + var[c] * unbias * (1.0 - momentum));
    }
    return ok();
  });
}

extern "C" tidalrt_status_t
tidalrt_k_batch_norm_backward(tidalrt_context_t *ctx, const int64_t *desc,
                              void *const *buffers) {
  return runKernel(ctx, desc, buffers, "batch_norm_backward", [&](OpCall &op) {
    // grad, input, scale, batch_mean, batch_var -> grad_input,
    // grad_scale, grad_bias; epsilon.
    checkBatchNormCall(op, BatchNorm::Backward);
    auto *s = getState<BatchNormState>(ctx, op.index);
    if (!s) {
      Channels ch = batchNormChannels(op, BatchNorm::Backward);
      std::unique_ptr<BatchNormState> owned(new BatchNormState());
      s = owned.get();
      s->ch = ch;
      s->dims = dataDims(op, 1, ch);
      s->empty = ch.perChannel() == 0 || ch.c == 0;
      if (!s->empty)
        buildWithDnnl("batch normalization backward", [&] {
          // The input's layout decides (the gradient's usually matches).
          s->data = dataDesc(op, 1, s->dims);
          const memory::desc &data = s->data;
          memory::desc perC = plainDesc({ch.c});
          float eps = (float)op.getFloat(0);
          dnnl::batch_normalization_forward::desc fd(
              dnnl::prop_kind::forward_training, data, eps, kScaleShift);
          dnnl::batch_normalization_forward::primitive_desc hint(
              fd, scratchpadAttr(), engine());
          dnnl::batch_normalization_backward::desc d(
              dnnl::prop_kind::backward, data, data, eps, kScaleShift);
          dnnl::batch_normalization_backward::primitive_desc pd(
              d, scratchpadAttr(), engine(), hint);
          Plan &p = s->plan;
          p.add(dnnl::batch_normalization_backward(pd), pd.scratchpad_desc(),
                {{DNNL_ARG_DIFF_DST, dataIn(p, op, *s, 0)},
                 {DNNL_ARG_SRC, dataIn(p, op, *s, 1)},
                 {DNNL_ARG_SCALE, p.tensor(perC, 2)},
                 // oneDNN wants a shift with use_shift but reads none
                 // on backward: the scale stands in.
                 {DNNL_ARG_SHIFT, p.tensor(perC, 2)},
                 {DNNL_ARG_MEAN, p.tensor(perC, 3)},
                 {DNNL_ARG_VARIANCE, p.tensor(perC, 4)},
                 {DNNL_ARG_DIFF_SRC, dataOut(p, op, *s, 5)},
                 {DNNL_ARG_DIFF_SCALE, p.tensor(perC, 6)},
                 {DNNL_ARG_DIFF_SHIFT, p.tensor(perC, 7)}});
          p.flush();
          return 0;
        });
      setOwnedState(ctx, op.index, owned.release());
    }
    if (!s->empty) {
      s->plan.run(ctx, op);
    } else if (!preparing(ctx)) {
      std::fill(op[6].f32(), op[6].f32() + s->ch.c, 0.0f);
      std::fill(op[7].f32(), op[7].f32() + s->ch.c, 0.0f);
    }
    return ok();
  });
}
