//===- LossOps.cpp - softmax and loss kernels, with backwards -------------===//

#include "EvalSupport.h"

#include "llvm/ADT/TypeSwitch.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace mlir::tidal;
using namespace mlir::tidal::eval;

//===----------------------------------------------------------------------===//
// Softmax
//===----------------------------------------------------------------------===//

namespace {
/// A tensor seen as outer x axis x inner around one axis.
struct AxisLayout {
  int64_t outer, n, inner;
  int64_t at(int64_t o, int64_t k, int64_t i) const {
    return (o * n + k) * inner + i;
  }
};
} // namespace

static FailureOr<AxisLayout> axisLayout(Operation *op, ArrayRef<int64_t> shape,
                                        int64_t axis) {
  if (axis < 0 || axis >= static_cast<int64_t>(shape.size()))
    return op->emitOpError("axis ") << axis << " is out of range";
  return AxisLayout{product(shape.take_front(axis)), shape[axis],
                    product(shape.drop_front(axis + 1))};
}

/// log_softmax of `x` along `l`'s axis into `out`.
static void logSoftmax(const std::vector<double> &x, const AxisLayout &l,
                       std::vector<double> &out) {
  for (int64_t o = 0; o < l.outer; ++o)
    for (int64_t i = 0; i < l.inner; ++i) {
      double mx = -std::numeric_limits<double>::infinity();
      for (int64_t k = 0; k < l.n; ++k)
        mx = std::max(mx, x[l.at(o, k, i)]);
      double sum = 0.0;
      for (int64_t k = 0; k < l.n; ++k)
        sum += std::exp(x[l.at(o, k, i)] - mx);
      double lse = mx + std::log(sum);
      for (int64_t k = 0; k < l.n; ++k)
        out[l.at(o, k, i)] = x[l.at(o, k, i)] - lse;
    }
}

template <typename OpT>
static LogicalResult evalSoftmax(OpT op, EvalState &st, Tensor &out, bool log) {
  const Tensor &x = st.get(op.getInput());
  FailureOr<AxisLayout> l =
      axisLayout(op, x.shape, static_cast<int64_t>(op.getAxis()));
  if (failed(l))
    return failure();
  logSoftmax(x.data, *l, out.data);
  if (!log)
    for (double &v : out.data)
      v = std::exp(v);
  return success();
}

/// softmax_backward: y * (g - sum(g * y)); log_softmax_backward:
/// g - exp(y) * sum(g).
template <typename OpT>
static LogicalResult evalSoftmaxBackward(OpT op, EvalState &st, Tensor &out,
                                         bool log) {
  const Tensor &g = st.get(op.getGrad()), &y = st.get(op.getOutput());
  FailureOr<AxisLayout> l =
      axisLayout(op, g.shape, static_cast<int64_t>(op.getAxis()));
  if (failed(l))
    return failure();
  for (int64_t o = 0; o < l->outer; ++o)
    for (int64_t i = 0; i < l->inner; ++i) {
      double sum = 0.0;
      for (int64_t k = 0; k < l->n; ++k) {
        int64_t j = l->at(o, k, i);
        sum += log ? g.data[j] : g.data[j] * y.data[j];
      }
      for (int64_t k = 0; k < l->n; ++k) {
        int64_t j = l->at(o, k, i);
        out.data[j] = log ? g.data[j] - std::exp(y.data[j]) * sum
                          : y.data[j] * (g.data[j] - sum);
      }
    }
  return success();
}

//===----------------------------------------------------------------------===//
// Cross entropy and negative log likelihood
//===----------------------------------------------------------------------===//

namespace {
/// The class of each `[N, d...]` position and its applied weight, for
/// `[N, C, d...]` scores: ONNX's rules for weights and ignore_index.
struct Targets {
  int64_t n, c, d;
  std::vector<int64_t> label; // -1 where ignored
  std::vector<double> weight; // 0 where ignored
  double weightSum = 0.0;
  int64_t at(int64_t j, int64_t cls) const {
    return ((j / d) * c + cls) * d + j % d;
  }
};
} // namespace

static FailureOr<Targets>
makeTargets(Operation *op, ArrayRef<int64_t> scoreShape, const Tensor &labels,
            const Tensor *weights, std::optional<uint64_t> ignoreIndex) {
  if (scoreShape.size() < 2 || labels.shape.size() + 1 != scoreShape.size() ||
      labels.shape[0] != scoreShape[0] ||
      ArrayRef(labels.shape).drop_front() != scoreShape.drop_front(2))
    return op->emitOpError("labels do not match the [N, C, d...] input");
  Targets t{scoreShape[0],
            scoreShape[1],
            product(scoreShape.drop_front(2)),
            {},
            {},
            0.0};
  if (weights && weights->numElements() != t.c)
    return op->emitOpError("weights have ")
           << weights->numElements() << " elements, expected " << t.c;
  for (double v : labels.data) {
    auto cls = static_cast<int64_t>(v);
    if (ignoreIndex && cls == static_cast<int64_t>(*ignoreIndex)) {
      t.label.push_back(-1);
      t.weight.push_back(0.0);
      continue;
    }
    if (cls < 0 || cls >= t.c)
      return op->emitOpError("label ")
             << cls << " is out of range [0, " << t.c << ")";
    double w = weights ? weights->data[cls] : 1.0;
    t.label.push_back(cls);
    t.weight.push_back(w);
    t.weightSum += w;
  }
  return t;
}

/// Writes the per-position losses `-w * lp[label]` reduced as `reduction`.
static void reduceLoss(const Targets &t, const std::vector<double> &lp,
                       Reduction reduction, Tensor &loss) {
  double sum = 0.0;
  for (size_t j = 0; j < t.label.size(); ++j) {
    double l = t.label[j] < 0 ? 0.0 : -t.weight[j] * lp[t.at(j, t.label[j])];
    if (reduction == Reduction::none)
      loss.data[j] = l;
    sum += l;
  }
  if (reduction == Reduction::sum)
    loss.data[0] = sum;
  else if (reduction == Reduction::mean)
    loss.data[0] = sum / t.weightSum;
}

/// The incoming gradient of position `j` spread by the reduction.
static double spreadGrad(const Targets &t, const Tensor &gradLoss,
                         Reduction reduction, size_t j) {
  if (reduction == Reduction::none)
    return gradLoss.data[j];
  if (reduction == Reduction::sum)
    return gradLoss.data[0];
  return gradLoss.data[0] / t.weightSum;
}

static LogicalResult checkLossShape(Operation *op, const Targets &t,
                                    Reduction reduction, const Tensor &loss) {
  int64_t expected =
      reduction == Reduction::none ? static_cast<int64_t>(t.label.size()) : 1;
  if (loss.numElements() != expected)
    return op->emitOpError("loss has ")
           << loss.numElements() << " elements, expected " << expected;
  return success();
}

static LogicalResult evalSoftmaxCrossEntropy(SoftmaxCrossEntropyLossOp op,
                                             EvalState &st,
                                             MutableArrayRef<Tensor> results) {
  const Tensor &scores = st.get(op.getScores());
  const Tensor *w = op.getWeights() ? &st.get(op.getWeights()) : nullptr;
  FailureOr<Targets> t = makeTargets(op, scores.shape, st.get(op.getLabels()),
                                     w, op.getIgnoreIndex());
  if (failed(t) ||
      failed(checkLossShape(op, *t, op.getReduction(), results[0])))
    return failure();
  logSoftmax(scores.data, AxisLayout{t->n, t->c, t->d}, results[1].data);
  reduceLoss(*t, results[1].data, op.getReduction(), results[0]);
  return success();
}

static LogicalResult
evalSoftmaxCrossEntropyBackward(SoftmaxCrossEntropyLossBackwardOp op,
                                EvalState &st, Tensor &out) {
  const Tensor &lp = st.get(op.getLogProb());
  const Tensor *w = op.getWeights() ? &st.get(op.getWeights()) : nullptr;
  FailureOr<Targets> t =
      makeTargets(op, lp.shape, st.get(op.getLabels()), w, op.getIgnoreIndex());
  const Tensor &gl = st.get(op.getGradLoss());
  if (failed(t) || failed(checkLossShape(op, *t, op.getReduction(), gl)))
    return failure();
  for (size_t j = 0; j < t->label.size(); ++j) {
    if (t->label[j] < 0)
      continue;
    double g = spreadGrad(*t, gl, op.getReduction(), j) * t->weight[j];
    for (int64_t c = 0; c < t->c; ++c) {
      int64_t i = t->at(j, c);
      out.data[i] = g * (std::exp(lp.data[i]) - (c == t->label[j] ? 1 : 0));
    }
  }
  return success();
}

static LogicalResult evalNllLoss(NllLossOp op, EvalState &st, Tensor &loss) {
  const Tensor &in = st.get(op.getInput());
  const Tensor *w = op.getWeight() ? &st.get(op.getWeight()) : nullptr;
  FailureOr<Targets> t =
      makeTargets(op, in.shape, st.get(op.getTarget()), w, op.getIgnoreIndex());
  if (failed(t) || failed(checkLossShape(op, *t, op.getReduction(), loss)))
    return failure();
  reduceLoss(*t, in.data, op.getReduction(), loss);
  return success();
}

static LogicalResult evalNllLossBackward(NllLossBackwardOp op, EvalState &st,
                                         Tensor &out) {
  const Tensor *w = op.getWeight() ? &st.get(op.getWeight()) : nullptr;
  FailureOr<Targets> t = makeTargets(op, out.shape, st.get(op.getTarget()), w,
                                     op.getIgnoreIndex());
  const Tensor &gl = st.get(op.getGradLoss());
  if (failed(t) || failed(checkLossShape(op, *t, op.getReduction(), gl)))
    return failure();
  for (size_t j = 0; j < t->label.size(); ++j)
    if (t->label[j] >= 0)
      out.data[t->at(j, t->label[j])] =
          -spreadGrad(*t, gl, op.getReduction(), j) * t->weight[j];
  return success();
}

Handled eval::evalLossOp(Operation *op, EvalState &st,
                         MutableArrayRef<Tensor> results) {
  return llvm::TypeSwitch<Operation *, Handled>(op)
      .Case([&](SoftmaxOp o) {
        return done(evalSoftmax(o, st, results[0], /*log=*/false));
      })
      .Case([&](LogSoftmaxOp o) {
        return done(evalSoftmax(o, st, results[0], /*log=*/true));
      })
      .Case([&](SoftmaxBackwardOp o) {
        return done(evalSoftmaxBackward(o, st, results[0], /*log=*/false));
      })
      .Case([&](LogSoftmaxBackwardOp o) {
        return done(evalSoftmaxBackward(o, st, results[0], /*log=*/true));
      })
      .Case([&](SoftmaxCrossEntropyLossOp o) {
        return done(evalSoftmaxCrossEntropy(o, st, results));
      })
      .Case([&](SoftmaxCrossEntropyLossBackwardOp o) {
        return done(evalSoftmaxCrossEntropyBackward(o, st, results[0]));
      })
      .Case([&](NllLossOp o) { return done(evalNllLoss(o, st, results[0])); })
      .Case([&](NllLossBackwardOp o) {
        return done(evalNllLossBackward(o, st, results[0]));
      })
      .Default([](Operation *) -> Handled { return false; });
}
