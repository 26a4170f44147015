// loss.h - softmax cross entropy and negative log likelihood, with
// backwards, on the GPU (twins of runtime/src/cpu/loss.cpp).
//
// Scores are [N, C, d1..dk], labels [N, d1..dk] of any integer type,
// weights optionally [C]; position j (flat in [N, D]) has class label[j].
// Shapes, attributes and types are checked on the host as the CPU kernel
// does. The CPU kernel also fails (INVALID_ARGUMENT) on a label outside
// [0, C) that is not ignore_index; labels live in device memory here, so
// the bodies check each label as they read it and never index with a bad
// one: a bad label makes its position's loss NaN (so a sum or mean loss is
// NaN, and a mean's weight sum too), and its position's gradient row NaN
// (every gradient under reduction mean).
//
// Reductions run over the CPU kernel's chunks (chunkedSum: at most 256,
// bounds from the size only), one thread per chunk summing in order in
// double, then one thread adding the chunks in order: the CPU's order, so
// the sum is the CPU's bits. The mean's weight sum is added in those chunks
// too where the CPU adds it in one sequential loop; sums of float weights in
// double are exact unless the weights span more than 2^29 : 1 (and sums of
// ones always), so it is the same number.
#ifndef TIDALRT_CUDA_OTHER_LOSS_H
#define TIDALRT_CUDA_OTHER_LOSS_H

#include "../../cpu/loss_checks.h"
#include "softmax.h"

namespace tidalrt {
namespace cuda {
namespace other {

// The CPU kernels' checks and attribute decoding (cpu/loss_checks.h).
using tidalrt::other::checkCrossEntropy;
using tidalrt::other::checkCrossEntropyBackward;
using tidalrt::other::checkNll;
using tidalrt::other::checkNllBackward;
using tidalrt::other::kMean;
using tidalrt::other::kNone;
using tidalrt::other::kSum;
using tidalrt::other::LossAttrs;
using tidalrt::other::LossCall;
using tidalrt::other::LossChunks;
using tidalrt::other::lossChunks;
using tidalrt::other::LossLayout;

// The labels as bodies read them.
struct Labels {
  IndexRef labels;
  const float *w; // null: every weight is 1
  bool hasIgnore;
  int64_t ignore, c;

  static constexpr int64_t kIgnored = -1, kBad = -2;

  // The class of position j (kIgnored, kBad: out of range) and its applied
  // weight (0 if ignored, NaN if bad).
  TIDAL_HD int64_t classAt(int64_t j, double *wj) const {
    int64_t v = labels[j];
    if (hasIgnore && v == ignore) {
      *wj = 0.0;
      return kIgnored;
    }
    if (v < 0 || v >= c) {
      *wj = (double)quietNan();
      return kBad;
    }
    *wj = w ? (double)w[v] : 1.0;
    return v;
  }
};

inline Labels labelsOf(const TensorRef &t, const float *w, const LossAttrs &a,
                       const LossLayout &l) {
  return {indexRef(t), w, a.hasIgnore, a.ignore, l.c};
}

// The loss term -w * lp[label] of position j (0 if ignored, NaN if bad).
TIDAL_HD inline double lossTerm(const Labels &lab, const LossLayout &l,
                                const float *lp, int64_t j) {
  double wj;
  int64_t cls = lab.classAt(j, &wj);
  if (cls == Labels::kIgnored)
    return 0.0;
  if (cls == Labels::kBad)
    return wj;
  return -wj * (double)lp[l.at(j, cls)];
}

// Reduction none: one loss per position.
struct LossPerPosition {
  Labels lab;
  LossLayout l;
  const float *lp;
  float *loss;

  TIDAL_HD void operator()(int64_t j) const {
    loss[j] = (float)lossTerm(lab, l, lp, j);
  }
};

// Chunk c's sums of the loss terms (if `loss`) and of the applied weights
// (if `weight`), each in position order.
struct LossChunkSums {
  Labels lab;
  LossLayout l;
  const float *lp;
  int64_t m, size;
  double *loss;
  double *weight;

  TIDAL_HD void operator()(int64_t c) const {
    int64_t end = (c + 1) * size < m ? (c + 1) * size : m;
    double s = 0.0, ws = 0.0;
    for (int64_t j = c * size; j < end; ++j) {
      if (loss)
        s += lossTerm(lab, l, lp, j);
      if (weight) {
        double wj;
        if (lab.classAt(j, &wj) != Labels::kIgnored)
          ws += wj;
      }
    }
    if (loss)
      loss[c] = s;
    if (weight)
      weight[c] = ws;
  }
};

// One thread: adds the chunks' sums in order. Writes the reduced loss (if
// `out`) and the weight sum (if `weightSum`).
struct LossTotal {
  const double *loss;
  const double *weight;
  int64_t chunks;
  int reduction;
  float *out;
  double *weightSum;

  TIDAL_HD void operator()(int64_t) const {
    double ws = 0.0;
    if (weight)
      for (int64_t c = 0; c < chunks; ++c)
        ws += weight[c];
    if (weightSum)
      *weightSum = ws;
    if (out) {
      double total = 0.0;
      for (int64_t c = 0; c < chunks; ++c)
        total += loss[c];
      // mean over no applied weight is 0/0 = NaN, as in PyTorch.
      out[0] = (float)(reduction == kSum ? total : total / ws);
    }
  }
};

// Writes the loss -w * lp[label] (per position or reduced) from the
// log-probabilities `lp`. `ws` is the workspace (2 * chunks doubles unless
// the reduction is none).
template <class L>
void writeLoss(L &l, const Labels &lab, const LossLayout &ll, int reduction,
               const float *lp, float *loss, double *ws) {
  int64_t m = ll.positions();
  if (reduction == kNone) {
    l.forEach(m, LossPerPosition{lab, ll, lp, loss});
    return;
  }
  LossChunks ch = lossChunks(m);
  double *weight = reduction == kMean ? ws + ch.count : nullptr;
  l.forEach(ch.count, LossChunkSums{lab, ll, lp, m, ch.size, ws, weight});
  l.forEach(1, LossTotal{ws, weight, ch.count, reduction, loss, nullptr});
}

inline size_t lossWorkspace(const LossLayout &l, int reduction) {
  return reduction == kNone
             ? 0
             : 2 * (size_t)lossChunks(l.positions()).count * sizeof(double);
}

// For the backwards under reduction mean: the weight sum, computed into
// ws[chunks] (ws holds chunks + 1 doubles). Returns its device pointer, or
// null for other reductions.
template <class L>
const double *weightSum(L &l, const Labels &lab, const LossLayout &ll,
                        int reduction, double *ws) {
  if (reduction != kMean)
    return nullptr;
  int64_t m = ll.positions();
  LossChunks ch = lossChunks(m);
  l.forEach(ch.count, LossChunkSums{lab, ll, nullptr, m, ch.size, nullptr, ws});
  l.forEach(
      1, LossTotal{nullptr, ws, ch.count, reduction, nullptr, ws + ch.count});
  return ws + ch.count;
}

inline size_t weightSumWorkspace(const LossLayout &l, int reduction) {
  return reduction == kMean
             ? ((size_t)lossChunks(l.positions()).count + 1) * sizeof(double)
             : 0;
}

// The incoming gradient of position j spread by the reduction.
TIDAL_HD inline double spread(const float *gradLoss, int reduction,
                              const double *weightSum, int64_t j) {
  if (reduction == kNone)
    return gradLoss[j];
  if (reduction == kSum)
    return gradLoss[0];
  return gradLoss[0] / *weightSum;
}

// One element e of grad_scores ([N, C, D]):
// coef * (exp(lp) - (c == label)), coef = grad spread * weight.
struct CrossEntropyGrad {
  Labels lab;
  LossLayout l;
  int reduction;
  const float *gradLoss;
  const double *weightSum;
  const float *lp;
  float *out;

  TIDAL_HD void operator()(int64_t e) const {
    int64_t cd = l.c * l.d, n = e / cd, rest = e % cd;
    int64_t c = rest / l.d, j = n * l.d + rest % l.d;
    double wj;
    int64_t cls = lab.classAt(j, &wj);
    if (cls == Labels::kIgnored) {
      out[e] = 0.0f;
      return;
    }
    if (cls == Labels::kBad) {
      out[e] = quietNan();
      return;
    }
    float coef = (float)(spread(gradLoss, reduction, weightSum, j) * wj);
    out[e] = coef * (expf(lp[e]) - (c == cls ? 1.0f : 0.0f));
  }
};

// One element e of grad_input ([N, C, D]): -grad spread * weight at the
// label's class, 0 elsewhere.
struct NllGrad {
  Labels lab;
  LossLayout l;
  int reduction;
  const float *gradLoss;
  const double *weightSum;
  float *out;

  TIDAL_HD void operator()(int64_t e) const {
    int64_t cd = l.c * l.d, n = e / cd, rest = e % cd;
    int64_t c = rest / l.d, j = n * l.d + rest % l.d;
    double wj;
    int64_t cls = lab.classAt(j, &wj);
    if (cls == Labels::kBad)
      out[e] = quietNan();
    else if (cls != c)
      out[e] = 0.0f;
    else
      out[e] = (float)(-spread(gradLoss, reduction, weightSum, j) * wj);
  }
};

} // namespace other

// softmax_cross_entropy_loss: scores, labels, weights?, loss, log_prob;
// ignore_index (0), reduction (1).
template <class L> void k_softmax_cross_entropy_loss(L &l, OpCall &op) {
  using namespace other;
  LossCall c = checkCrossEntropy(op);
  const LossAttrs &a = c.attrs;
  const LossLayout &ll = c.layout;
  const float *w = c.weights;
  const TensorRef &scores = op[0], &labels = op[1], &loss = op[3], &lp = op[4];
  double *ws =
      static_cast<double *>(l.workspace(lossWorkspace(ll, a.reduction)));
  if (l.preparing())
    return;
  softmaxRows(l, SoftmaxOp::LogSoftmax, scores.f32(), nullptr, lp.f32(),
              {ll.n, ll.c, ll.d});
  writeLoss(l, labelsOf(labels, w, a, ll), ll, a.reduction, lp.f32(),
            loss.f32(), ws);
}

// softmax_cross_entropy_loss_backward: grad_loss, log_prob, labels,
// weights?, grad_scores; ignore_index (0), reduction (1).
template <class L>
void k_softmax_cross_entropy_loss_backward(L &l, OpCall &op) {
  using namespace other;
  LossCall c = checkCrossEntropyBackward(op);
  const LossAttrs &a = c.attrs;
  const LossLayout &ll = c.layout;
  const float *w = c.weights;
  const TensorRef &gl = op[0], &lp = op[1], &labels = op[2], &out = op[4];
  double *ws =
      static_cast<double *>(l.workspace(weightSumWorkspace(ll, a.reduction)));
  if (l.preparing())
    return;
  Labels lab = labelsOf(labels, w, a, ll);
  const double *sum = weightSum(l, lab, ll, a.reduction, ws);
  l.forEach(out.numel(), CrossEntropyGrad{lab, ll, a.reduction, gl.f32(), sum,
                                          lp.f32(), out.f32()});
}

// nll_loss: input, target, weight?, loss; ignore_index (0), reduction (1).
template <class L> void k_nll_loss(L &l, OpCall &op) {
  using namespace other;
  LossCall c = checkNll(op);
  const LossAttrs &a = c.attrs;
  const LossLayout &ll = c.layout;
  const float *w = c.weights;
  const TensorRef &in = op[0], &target = op[1], &loss = op[3];
  double *ws =
      static_cast<double *>(l.workspace(lossWorkspace(ll, a.reduction)));
  if (l.preparing())
    return;
  writeLoss(l, labelsOf(target, w, a, ll), ll, a.reduction, in.f32(),
            loss.f32(), ws);
}

// nll_loss_backward: grad_loss, target, weight?, grad_input; ignore_index
// (0), reduction (1).
template <class L> void k_nll_loss_backward(L &l, OpCall &op) {
  using namespace other;
  LossCall c = checkNllBackward(op);
  const LossAttrs &a = c.attrs;
  const LossLayout &ll = c.layout;
  const float *w = c.weights;
  const TensorRef &gl = op[0], &target = op[1], &out = op[3];
  double *ws =
      static_cast<double *>(l.workspace(weightSumWorkspace(ll, a.reduction)));
  if (l.preparing())
    return;
  Labels lab = labelsOf(target, w, a, ll);
  const double *sum = weightSum(l, lab, ll, a.reduction, ws);
  l.forEach(out.numel(),
            NllGrad{lab, ll, a.reduction, gl.f32(), sum, out.f32()});
}

} // namespace cuda
} // namespace tidalrt

#endif // TIDALRT_CUDA_OTHER_LOSS_H
