// loss.cpp - softmax cross entropy and negative log likelihood, with
// backwards (ONNX SoftmaxCrossEntropyLoss / NegativeLogLikelihoodLoss).
//
// Scores are [N, C, d1..dk] (float32), labels [N, d1..dk] of any integer
// type, weights optionally [C]. Position j of the labels (flat index into
// [N, D], D = d1*..*dk) has class label[j] and applied weight w[label[j]]
// (1 without weights; 0 and no loss where the label is ignore_index). Loss
// reductions: none (per position), sum, mean (divided by the sum of the
// applied weights, as ONNX and PyTorch). A label outside [0, C) that is not
// ignore_index is an INVALID_ARGUMENT error naming it and its position; no
// out-of-range element is ever read. Sums run in double over a split that
// depends only on the sizes, so results do not depend on the thread count.
#include "loss_checks.h"
#include "other_util.h"

#include <algorithm>

namespace tidalrt {
namespace other {
namespace {

// Validates every label and returns the sum of the applied weights.
double checkLabels(const TensorRef &labels, const char *name,
                   const LossLayout &l, const float *w, const LossAttrs &a) {
  double sum = 0.0;
  int64_t m = l.positions();
  for (int64_t j = 0; j < m; ++j) {
    int64_t v = readIndex(labels, j);
    if (a.hasIgnore && v == a.ignore)
      continue;
    if (v < 0 || v >= l.c) {
      char where[512];
      fail(TIDALRT_INVALID_ARGUMENT,
           "%s value %lld at %s%s is out of range [0, %lld)", name,
           (long long)v, name,
           formatIndex(where, sizeof where, j, labels.rank, labels.dims),
           (long long)l.c);
    }
    sum += w ? (double)w[v] : 1.0;
  }
  return sum;
}

// The applied weight of position j, 0 if it is ignored; sets *cls (-1 if
// ignored). Labels must have been checked.
inline double weightAt(const TensorRef &labels, int64_t j, const float *w,
                       const LossAttrs &a, int64_t *cls) {
  int64_t v = readIndex(labels, j);
  if (a.hasIgnore && v == a.ignore) {
    *cls = -1;
    return 0.0;
  }
  *cls = v;
  return w ? (double)w[v] : 1.0;
}

// sum_j f(j) for j in [0, m) in double, over the chunks of lossChunks(m);
// partial sums are added in chunk order.
template <typename F> double chunkedSum(int64_t m, F f) {
  LossChunks split = lossChunks(m);
  int64_t chunks = split.count, size = split.size;
  double partial[kMaxLossChunks];
#pragma omp parallel for schedule(static) if (m >= parallelGrain())
  for (int64_t c = 0; c < chunks; ++c) {
    double s = 0.0;
    for (int64_t j = c * size, e = std::min(m, (c + 1) * size); j < e; ++j)
      s += f(j);
    partial[c] = s;
  }
  double total = 0.0;
  for (int64_t c = 0; c < chunks; ++c)
    total += partial[c];
  return total;
}

// Writes the loss -w * lp[label] (per position or reduced) from the
// log-probabilities `lp` ([N, C, D]).
void writeLoss(const TensorRef &labels, const LossLayout &l, const float *w,
               const LossAttrs &a, double weightSum, const float *lp,
               float *loss) {
  int64_t m = l.positions();
  auto term = [&](int64_t j) {
    int64_t cls;
    double wj = weightAt(labels, j, w, a, &cls);
    return cls < 0 ? 0.0 : -wj * (double)lp[l.at(j, cls)];
  };
  if (a.reduction == kNone) {
#pragma omp parallel for schedule(static) if (m >= parallelGrain())
    for (int64_t j = 0; j < m; ++j)
      loss[j] = (float)term(j);
    return;
  }
  double sum = chunkedSum(m, term);
  // mean over no applied weight is 0/0 = NaN, as in PyTorch.
  loss[0] = (float)(a.reduction == kSum ? sum : sum / weightSum);
}

// The incoming gradient of position j spread by the reduction.
inline double spread(const float *gradLoss, int reduction, double weightSum,
                     int64_t j) {
  if (reduction == kNone)
    return gradLoss[j];
  if (reduction == kSum)
    return gradLoss[0];
  return gradLoss[0] / weightSum;
}

//===----------------------------------------------------------------------===//
// Cross-entropy backward: out = coef * (exp(lp) - (c == label))
//===----------------------------------------------------------------------===//

constexpr int64_t kBlock = 64;

#if TIDALRT_OTHER_X86
#define TIDALRT_AVX2 __attribute__((target("avx2,fma")))
// out[i] = coef * exp(lp[i]) for a row of n.
TIDALRT_AVX2 void scaledExpAvx2(const float *lp, float coef, float *out,
                                int64_t n) {
  __m256 vc = _mm256_set1_ps(coef);
  int64_t k = 0;
  for (; k + 8 <= n; k += 8)
    _mm256_storeu_ps(out + k,
                     _mm256_mul_ps(vc, exp256(_mm256_loadu_ps(lp + k))));
  for (; k < n; ++k)
    out[k] = coef * std::exp(lp[k]);
}

// One class c over a block of w (multiple of 8) positions.
TIDALRT_AVX2 void blockGradAvx2(const float *lp, const float *coef,
                                const int32_t *cls, int32_t c, float *out,
                                int64_t w) {
  __m256i vcls = _mm256_set1_epi32(c);
  __m256 one = _mm256_set1_ps(1.0f);
  for (int64_t i = 0; i < w; i += 8) {
    __m256i eq = _mm256_cmpeq_epi32(
        _mm256_loadu_si256(reinterpret_cast<const __m256i *>(cls + i)), vcls);
    __m256 ind = _mm256_and_ps(_mm256_castsi256_ps(eq), one);
    __m256 e = exp256(_mm256_loadu_ps(lp + i));
    _mm256_storeu_ps(out + i, _mm256_mul_ps(_mm256_loadu_ps(coef + i),
                                            _mm256_sub_ps(e, ind)));
  }
}
#undef TIDALRT_AVX2
#endif

void crossEntropyGrad(const TensorRef &labels, const LossLayout &l,
                      const float *w, const LossAttrs &a, double weightSum,
                      const float *gradLoss, const float *lp, float *out) {
  bool avx2 = useAvx2();
  bool parallel = l.n * l.c * l.d >= parallelGrain();
  if (l.d == 1) {
#pragma omp parallel for schedule(static) if (parallel)
    for (int64_t r = 0; r < l.n; ++r) {
      int64_t cls;
      double wj = weightAt(labels, r, w, a, &cls);
      const float *row = lp + r * l.c;
      float *o = out + r * l.c;
      if (cls < 0) {
        memset(o, 0, sizeof(float) * l.c);
        continue;
      }
      float coef = (float)(spread(gradLoss, a.reduction, weightSum, r) * wj);
#if TIDALRT_OTHER_X86
      if (avx2)
        scaledExpAvx2(row, coef, o, l.c);
      else
#endif
        for (int64_t k = 0; k < l.c; ++k)
          o[k] = coef * std::exp(row[k]);
      o[cls] = coef * (std::exp(row[cls]) - 1.0f);
    }
    return;
  }
  int64_t blocks = (l.d + kBlock - 1) / kBlock;
#pragma omp parallel for schedule(static) if (parallel)
  for (int64_t item = 0; item < l.n * blocks; ++item) {
    int64_t nIdx = item / blocks, d0 = (item % blocks) * kBlock;
    int64_t bw = std::min(kBlock, l.d - d0);
    alignas(32) float coef[kBlock];
    alignas(32) int32_t cls[kBlock];
    for (int64_t i = 0; i < bw; ++i) {
      int64_t j = nIdx * l.d + d0 + i, c;
      double wj = weightAt(labels, j, w, a, &c);
      cls[i] = (int32_t)c;
      coef[i] = c < 0
                    ? 0.0f
                    : (float)(spread(gradLoss, a.reduction, weightSum, j) * wj);
    }
    for (int64_t c = 0; c < l.c; ++c) {
      int64_t base = (nIdx * l.c + c) * l.d + d0;
      int64_t vw = 0;
#if TIDALRT_OTHER_X86
      if (avx2) {
        vw = bw & ~(int64_t)7;
        if (vw)
          blockGradAvx2(lp + base, coef, cls, (int32_t)c, out + base, vw);
      }
#endif
      for (int64_t i = vw; i < bw; ++i)
        out[base + i] = cls[i] < 0 ? 0.0f
                                   : coef[i] * (std::exp(lp[base + i]) -
                                                (cls[i] == c ? 1.0f : 0.0f));
    }
  }
}

//===----------------------------------------------------------------------===//
// Kernels
//===----------------------------------------------------------------------===//

// softmax_cross_entropy_loss: scores, labels, weights?, loss, log_prob.
tidalrt_status_t crossEntropy(OpCall &op) {
  LossCall c = checkCrossEntropy(op);
  const LossAttrs &a = c.attrs;
  const LossLayout &l = c.layout;
  const float *w = c.weights;
  const TensorRef &scores = op[0], &labels = op[1], &loss = op[3], &lp = op[4];
  if (preparing(op.context))
    return ok();
  double weightSum = checkLabels(labels, "labels", l, w, a);
  softmaxForward(scores.f32(), lp.f32(), l.n, l.c, l.d,
                 SoftmaxKind::LogSoftmax);
  writeLoss(labels, l, w, a, weightSum, lp.f32(), loss.f32());
  return ok();
}

// softmax_cross_entropy_loss_backward: grad_loss, log_prob, labels,
// weights?, grad_scores.
tidalrt_status_t crossEntropyBackward(OpCall &op) {
  LossCall c = checkCrossEntropyBackward(op);
  const LossAttrs &a = c.attrs;
  const LossLayout &l = c.layout;
  const float *w = c.weights;
  const TensorRef &gl = op[0], &lp = op[1], &labels = op[2], &out = op[4];
  if (preparing(op.context))
    return ok();
  double weightSum = checkLabels(labels, "labels", l, w, a);
  crossEntropyGrad(labels, l, w, a, weightSum, gl.f32(), lp.f32(), out.f32());
  return ok();
}

// nll_loss: input, target, weight?, loss.
tidalrt_status_t nll(OpCall &op) {
  LossCall c = checkNll(op);
  const LossAttrs &a = c.attrs;
  const LossLayout &l = c.layout;
  const float *w = c.weights;
  const TensorRef &in = op[0], &target = op[1], &loss = op[3];
  if (preparing(op.context))
    return ok();
  double weightSum = checkLabels(target, "target", l, w, a);
  writeLoss(target, l, w, a, weightSum, in.f32(), loss.f32());
  return ok();
}

// nll_loss_backward: grad_loss, target, weight?, grad_input.
tidalrt_status_t nllBackward(OpCall &op) {
  LossCall c = checkNllBackward(op);
  const LossAttrs &a = c.attrs;
  const LossLayout &l = c.layout;
  const float *w = c.weights;
  const TensorRef &gl = op[0], &target = op[1], &out = op[3];
  if (preparing(op.context))
    return ok();
  double weightSum = checkLabels(target, "target", l, w, a);
  float *o = out.f32();
  parallelZero(o, out.bytes());
  const float *g = gl.f32();
  int64_t m = l.positions();
#pragma omp parallel for schedule(static) if (m >= parallelGrain())
  for (int64_t j = 0; j < m; ++j) {
    int64_t cls;
    double wj = weightAt(target, j, w, a, &cls);
    if (cls >= 0)
      o[l.at(j, cls)] = (float)(-spread(g, a.reduction, weightSum, j) * wj);
  }
  return ok();
}

} // namespace

//===----------------------------------------------------------------------===//
// Checks (loss_checks.h), shared with the CUDA kernels
//===----------------------------------------------------------------------===//

namespace {

LossAttrs lossAttrs(const OpCall &op) {
  LossAttrs a;
  a.hasIgnore = op.has(0);
  a.ignore = a.hasIgnore ? op.getInt(0) : 0;
  int64_t r = op.getInt(1);
  if (r < kNone || r > kMean)
    fail(TIDALRT_INVALID_ARGUMENT,
         "reduction %lld is not one of none (0), sum (1), mean (2)",
         (long long)r);
  a.reduction = (int)r;
  return a;
}

// Checks that `labels` ([N, d...]) matches `scores` ([N, C, d...]).
LossLayout lossLayout(const TensorRef &scores, const TensorRef &labels,
                      const char *scoresName, const char *labelsName) {
  if (scores.rank < 2)
    fail(TIDALRT_INVALID_ARGUMENT,
         "%s must have rank >= 2 ([N, C, d...]), got %d", scoresName,
         scores.rank);
  bool match =
      labels.rank == scores.rank - 1 && labels.dims[0] == scores.dims[0];
  for (int i = 1; match && i < labels.rank; ++i)
    match = labels.dims[i] == scores.dims[i + 1];
  if (!match)
    fail(TIDALRT_INVALID_ARGUMENT,
         "%s shape does not match %s [N, C, d...] without C", labelsName,
         scoresName);
  return {scores.dims[0], scores.dims[1], product(scores.dims, 2, scores.rank)};
}

const float *weightsOf(const OpCall &op, int i, const LossLayout &l,
                       const char *name) {
  if (!op[i].present())
    return nullptr;
  const TensorRef &w = requireF32(op, i, name);
  if (w.numel() != l.c)
    fail(TIDALRT_INVALID_ARGUMENT, "%s has %lld elements, expected C = %lld",
         name, (long long)w.numel(), (long long)l.c);
  return w.f32();
}

void checkLossShape(const TensorRef &t, const char *name, const LossLayout &l,
                    int reduction) {
  int64_t expected = reduction == kNone ? l.positions() : 1;
  if (t.numel() != expected)
    fail(TIDALRT_INVALID_ARGUMENT, "%s has %lld elements, expected %lld", name,
         (long long)t.numel(), (long long)expected);
}

} // namespace

LossCall checkCrossEntropy(const OpCall &op) {
  requireTensors(op, 5);
  LossAttrs a = lossAttrs(op);
  const TensorRef &scores = requireF32(op, 0, "scores");
  const TensorRef &labels = requireIndex(op, 1, "labels");
  LossLayout l = lossLayout(scores, labels, "scores", "labels");
  const float *w = weightsOf(op, 2, l, "weights");
  const TensorRef &loss = requireF32(op, 3, "loss");
  const TensorRef &lp = requireF32(op, 4, "log_prob");
  checkLossShape(loss, "loss", l, a.reduction);
  if (!sameShape(scores, lp))
    fail(TIDALRT_INVALID_ARGUMENT, "log_prob shape differs from the scores'");
  return {a, l, w};
}

LossCall checkCrossEntropyBackward(const OpCall &op) {
  requireTensors(op, 5);
  LossAttrs a = lossAttrs(op);
  const TensorRef &gl = requireF32(op, 0, "grad_loss");
  const TensorRef &lp = requireF32(op, 1, "log_prob");
  const TensorRef &labels = requireIndex(op, 2, "labels");
  LossLayout l = lossLayout(lp, labels, "log_prob", "labels");
  const float *w = weightsOf(op, 3, l, "weights");
  const TensorRef &out = requireF32(op, 4, "grad_scores");
  checkLossShape(gl, "grad_loss", l, a.reduction);
  if (!sameShape(lp, out))
    fail(TIDALRT_INVALID_ARGUMENT,
         "grad_scores shape differs from the log_prob's");
  return {a, l, w};
}

LossCall checkNll(const OpCall &op) {
  requireTensors(op, 4);
  LossAttrs a = lossAttrs(op);
  const TensorRef &in = requireF32(op, 0, "input");
  const TensorRef &target = requireIndex(op, 1, "target");
  LossLayout l = lossLayout(in, target, "input", "target");
  const float *w = weightsOf(op, 2, l, "weight");
  const TensorRef &loss = requireF32(op, 3, "loss");
  checkLossShape(loss, "loss", l, a.reduction);
  return {a, l, w};
}

LossCall checkNllBackward(const OpCall &op) {
  requireTensors(op, 4);
  LossAttrs a = lossAttrs(op);
  const TensorRef &gl = requireF32(op, 0, "grad_loss");
  const TensorRef &target = requireIndex(op, 1, "target");
  const TensorRef &out = requireF32(op, 3, "grad_input");
  LossLayout l = lossLayout(out, target, "grad_input", "target");
  const float *w = weightsOf(op, 2, l, "weight");
  checkLossShape(gl, "grad_loss", l, a.reduction);
  return {a, l, w};
}

LossChunks lossChunks(int64_t m) {
  constexpr int64_t kMinChunk = 4096;
  int64_t chunks =
      std::min(kMaxLossChunks, std::max<int64_t>(1, m / kMinChunk));
  return {chunks, (m + chunks - 1) / chunks};
}

} // namespace other
} // namespace tidalrt

using namespace tidalrt;

extern "C" tidalrt_status_t tidalrt_k_softmax_cross_entropy_loss(
    tidalrt_context_t *ctx, const int64_t *desc, void *const *buffers) {
  return runKernel(ctx, desc, buffers, "softmax_cross_entropy_loss",
                   other::crossEntropy);
}

extern "C" tidalrt_status_t tidalrt_k_softmax_cross_entropy_loss_backward(
    tidalrt_context_t *ctx, const int64_t *desc, void *const *buffers) {
  return runKernel(ctx, desc, buffers, "softmax_cross_entropy_loss_backward",
                   other::crossEntropyBackward);
}

extern "C" tidalrt_status_t tidalrt_k_nll_loss(tidalrt_context_t *ctx,
                                               const int64_t *desc,
                                               void *const *buffers) {
  return runKernel(ctx, desc, buffers, "nll_loss", other::nll);
}

extern "C" tidalrt_status_t tidalrt_k_nll_loss_backward(tidalrt_context_t *ctx,
                                                        const int64_t *desc,
                                                        void *const *buffers) {
  return runKernel(ctx, desc, buffers, "nll_loss_backward", other::nllBackward);
}
