// batch_norm.cpp - batch normalization forward (training and inference) and
// backward, float32: tidal's kernels (the loops: batch_norm_loops.h).
//
// The input is `[N, C, spatial...]` of any rank >= 2, each data tensor of
// a call dense or channel-blocked (converted to the input's layout through
// scratch when they differ); statistics per channel.
//
// Numerics: as PyTorch's CPU kernels, the batch statistics are accumulated
// in double, in an order fixed by the shape (batch_norm_loops.h), so no
// thread count or ISA changes a bit. Training forward makes one pass over
// shifted data: with K the channel's first element, d = x - K, mean = K +
// sum(d) / m and the biased var = sum(d^2) / m - (sum(d) / m)^2 (K lies
// within a few standard deviations of the mean, so the difference is well
// conditioned even for a channel far from zero). The element-wise parts
// run in float32 with per-channel coefficients computed in double:
//   forward   y  = x * alpha + beta, alpha = scale / sqrt(var + eps),
//             beta = bias - mean * alpha; then max(y, 0) with the relu
//             attribute or min(max(y, clip_min), clip_max) with the clip
//             ones (the relu and clip kernels' formulas, bit for bit)
//   backward  dx = (dy - sum(dy) / m - (x - mean) * k) * w, with
//             k = sum((x - mean) * dy) / (var + eps) / m and
//             w = scale / sqrt(var + eps), as PyTorch writes it;
//             grad_scale = sum((x - mean) * dy) / sqrt(var + eps),
//             grad_bias = sum(dy).
// The running statistics: new = running * momentum + batch * (1 -
// momentum), the variance unbiased (PyTorch's rule).
#include "batch_norm_loops.h"
#include "dnnl_checks.h"
#include "dnnl_util.h"
#include "kernel.h"

#include <algorithm>
#include <cmath>
#include <initializer_list>

using namespace tidalrt;
using namespace tidalrt::bn;
using namespace tidalrt::dnnlutil;

namespace {

// A data tensor of the call in the input's layout: a copy converted into
// scratch when its layout differs (`dst` then holds it), else the tensor.
const float *inputLayout(const TensorRef &t, bool blocked, float *dst) {
  if (t.blocked() == blocked)
    return t.f32();
  if (blocked)
    denseToBlocked(t, t.f32(), dst);
  else
    blockedToDense(t, t.f32(), dst);
  return dst;
}

// The scratch of one call: the partial sums, the per-channel double sums
// and float coefficients, and up to two layout conversions.
struct Scratch {
  double *partials = nullptr, *sum1 = nullptr, *sum2 = nullptr, *mean = nullptr;
  float *coef = nullptr; // 4 x C floats
  float *convert[2] = {nullptr, nullptr};
};

size_t alignUp(size_t n) { return (n + 63) & ~(size_t)63; }

// Reserves (while preparing) or lays out the call's scratch: `converts`
// tensors of `elems` floats that need another layout.
bool takeScratch(const OpCall &op, const Runs &r, int64_t c, int converts,
                 int64_t elems, Scratch &s) {
  size_t partials = alignUp(partialDoubles(r) * sizeof(double));
  size_t sums = alignUp((size_t)c * sizeof(double));
  size_t coef = alignUp((size_t)c * 4 * sizeof(float));
  size_t conv = alignUp((size_t)elems * sizeof(float));
  size_t bytes = partials + 3 * sums + coef + converts * conv;
  char *base = static_cast<char *>(scratch(op.context, bytes));
  if (!base)
    return false;
  s.partials = reinterpret_cast<double *>(base);
  s.sum1 = reinterpret_cast<double *>(base + partials);
  s.sum2 = reinterpret_cast<double *>(base + partials + sums);
  s.mean = reinterpret_cast<double *>(base + partials + 2 * sums);
  s.coef = reinterpret_cast<float *>(base + partials + 3 * sums);
  char *at = base + partials + 3 * sums + coef;
  for (int i = 0; i < converts; ++i, at += conv)
    s.convert[i] = reinterpret_cast<float *>(at);
  return true;
}

// y = epilogue(x * alpha + beta) into the output in its own layout; the
// epilogue from the call's relu or clip_min/clip_max attributes.
void writeAffine(const OpCall &op, BatchNorm kind, const Runs &r,
                 const float *x, int yi, const float *alpha, const float *beta,
                 float *convert) {
  const TensorRef &yt = op[yi];
  bool sameLayout = yt.blocked() == (r.block > 1);
  float *y = sameLayout ? yt.f32() : convert;
  Coefficients c;
  c.alpha = alpha;
  c.beta = beta;
  BatchNormAttrs at = batchNormAttrs(kind);
  Epilogue e = Epilogue::None;
  if (op.getBool(at.relu)) {
    e = Epilogue::Relu;
  } else if (op.has(at.clipMin) || op.has(at.clipMax)) {
    if (!op.has(at.clipMin) || !op.has(at.clipMax))
      fail(TIDALRT_INTERNAL, "clip_min and clip_max come together");
    e = Epilogue::Clip;
    c.lo = (float)op.getFloat(at.clipMin);
    c.hi = (float)op.getFloat(at.clipMax);
  }
  bn::affine(r, x, y, c, e);
  if (!sameLayout) {
    if (yt.blocked())
      denseToBlocked(yt, y, yt.f32());
    else
      blockedToDense(yt, y, yt.f32());
  }
}

void fillAffine(const float *scale, const float *bias, const double *mean,
                const double *var, double eps, int64_t c, float *alpha,
                float *beta) {
  for (int64_t ch = 0; ch < c; ++ch) {
    double a = (double)scale[ch] / std::sqrt(var[ch] + eps);
    alpha[ch] = (float)a;
    beta[ch] = (float)((double)bias[ch] - mean[ch] * a);
  }
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

} // namespace

void tidalrt::dnnlutil::checkBatchNormCall(const OpCall &op, BatchNorm kind) {
  switch (kind) {
  case BatchNorm::Inference:
    // input, scale, bias, mean, var -> output; clip_max, clip_min,
    // epsilon, relu.
    checkCall(op, {"input", "scale", "bias", "mean", "var", "output"},
              batchNormAttrs(kind).count);
    return;
  case BatchNorm::Training:
    // input, scale, bias, running_mean, running_var -> output,
    // new_running_mean, new_running_var, batch_mean, batch_var;
    // clip_max, clip_min, epsilon, momentum, relu.
    checkCall(op,
              {"input", "scale", "bias", "running_mean", "running_var",
               "output", "new_running_mean", "new_running_var", "batch_mean",
               "batch_var"},
              batchNormAttrs(kind).count);
    return;
  case BatchNorm::Backward:
    // grad, input, scale, batch_mean, batch_var -> grad_input,
    // grad_scale, grad_bias; epsilon.
    checkCall(op,
              {"grad", "input", "scale", "batch_mean", "batch_var",
               "grad_input", "grad_scale", "grad_bias"},
              batchNormAttrs(kind).count);
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
    // input, scale, bias, mean, var -> output; clip_max, clip_min,
    // epsilon, relu.
    checkBatchNormCall(op, BatchNorm::Inference);
    Channels ch = batchNormChannels(op, BatchNorm::Inference);
    Runs r = runsOf(op[0], ch);
    bool convert = op[5].blocked() != op[0].blocked();
    Scratch s;
    if (!takeScratch(op, r, ch.c, convert ? 1 : 0, op[0].numel(), s))
      return ok();
    const float *mean = op[3].f32(), *var = op[4].f32();
    for (int64_t c = 0; c < ch.c; ++c) {
      s.sum1[c] = mean[c];
      s.sum2[c] = var[c];
    }
    float *alpha = s.coef, *beta = s.coef + ch.c;
    fillAffine(op[1].f32(), op[2].f32(), s.sum1, s.sum2,
               op.getFloat(batchNormAttrs(BatchNorm::Inference).epsilon), ch.c,
               alpha, beta);
    writeAffine(op, BatchNorm::Inference, r, op[0].f32(), 5, alpha, beta,
                s.convert[0]);
    return ok();
  });
}

extern "C" tidalrt_status_t
tidalrt_k_batch_norm_training(tidalrt_context_t *ctx, const int64_t *desc,
                              void *const *buffers) {
  return runKernel(ctx, desc, buffers, "batch_norm_training", [&](OpCall &op) {
    // input, scale, bias, running_mean, running_var -> output,
    // new_running_mean, new_running_var, batch_mean, batch_var;
    // clip_max, clip_min, epsilon, momentum, relu.
    checkBatchNormCall(op, BatchNorm::Training);
    Channels ch = batchNormChannels(op, BatchNorm::Training);
    Runs r = runsOf(op[0], ch);
    bool convert = op[5].blocked() != op[0].blocked();
    Scratch s;
    if (!takeScratch(op, r, ch.c, convert ? 1 : 0, op[0].numel(), s))
      return ok();
    const float *x = op[0].f32();
    int64_t m = ch.perChannel();
    // One pass over shifted data (the file comment).
    double *mean = s.sum1, *var = s.sum2, *shift = s.mean;
    firstElements(r, x, shift);
    momentSums(r, x, shift, s.partials, mean, var);
    for (int64_t c = 0; c < ch.c; ++c) {
      double d = m ? mean[c] / (double)m : 0.0;
      mean[c] = shift[c] + d;
      var[c] = m ? std::max(var[c] / (double)m - d * d, 0.0) : 0.0;
    }
    float *alpha = s.coef, *beta = s.coef + ch.c;
    BatchNormAttrs at = batchNormAttrs(BatchNorm::Training);
    double eps = op.getFloat(at.epsilon);
    fillAffine(op[1].f32(), op[2].f32(), mean, var, eps, ch.c, alpha, beta);
    writeAffine(op, BatchNorm::Training, r, x, 5, alpha, beta, s.convert[0]);

    double momentum = op.getFloat(at.momentum);
    double unbias = m > 1 ? (double)m / (double)(m - 1) : 1.0;
    const float *runMean = op[3].f32(), *runVar = op[4].f32();
    float *newMean = op[6].f32(), *newVar = op[7].f32();
    float *batchMean = op[8].f32(), *batchVar = op[9].f32();
    for (int64_t c = 0; c < ch.c; ++c) {
      batchMean[c] = (float)mean[c];
      batchVar[c] = (float)var[c];
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
    Channels ch = batchNormChannels(op, BatchNorm::Backward);
    // The input's layout decides; the gradient and grad_input are
    // converted to it when theirs differs.
    bool blocked = op[1].blocked();
    Runs r = runsOf(op[1], ch);
    bool convertDy = op[0].blocked() != blocked;
    bool convertDx = op[5].blocked() != blocked;
    Scratch s;
    int converts = (convertDy ? 1 : 0) + (convertDx ? 1 : 0);
    if (!takeScratch(op, r, ch.c, converts, op[1].numel(), s))
      return ok();
    const float *x = op[1].f32();
    const float *dy = inputLayout(op[0], blocked, s.convert[0]);
    float *dxConv = s.convert[convertDy ? 1 : 0];
    const float *bm = op[3].f32(), *bv = op[4].f32(), *scale = op[2].f32();
    int64_t m = ch.perChannel();
    double eps = op.getFloat(batchNormAttrs(BatchNorm::Backward).epsilon);
    double *sumDy = s.sum1, *dot = s.sum2;
    float *gm = s.coef, *k = s.coef + ch.c, *w = s.coef + 2 * ch.c,
          *meanF = s.coef + 3 * ch.c;
    for (int64_t c = 0; c < ch.c; ++c)
      s.mean[c] = bm[c];
    backwardSums(r, x, dy, s.mean, s.partials, sumDy, dot);
    float *gScale = op[6].f32(), *gBias = op[7].f32();
    for (int64_t c = 0; c < ch.c; ++c) {
      double inv = 1.0 / std::sqrt((double)bv[c] + eps);
      gBias[c] = (float)sumDy[c];
      gScale[c] = (float)(dot[c] * inv);
      double md = m ? (double)m : 1.0;
      gm[c] = (float)(sumDy[c] / md);
      k[c] = (float)(dot[c] * inv * inv / md);
      w[c] = (float)(inv * scale[c]);
      meanF[c] = bm[c];
    }
    float *dx = convertDx ? dxConv : op[5].f32();
    Coefficients coef;
    coef.gm = gm;
    coef.mean = meanF;
    coef.k = k;
    coef.w = w;
    bn::backwardData(r, dy, x, dx, coef);
    if (convertDx) {
      if (op[5].blocked())
        denseToBlocked(op[5], dx, op[5].f32());
      else
        blockedToDense(op[5], dx, op[5].f32());
    }
    return ok();
  });
}
