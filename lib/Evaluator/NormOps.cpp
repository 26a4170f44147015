//===- NormOps.cpp - batch and layer normalization kernels, with backwards ===//

#include "EvalSupport.h"

#include "llvm/ADT/TypeSwitch.h"

#include <algorithm>
#include <cmath>

using namespace mlir;
using namespace mlir::tidal;
using namespace mlir::tidal::eval;

namespace {
/// `[N, C, spatial...]` seen as N x C x S with per-channel statistics.
struct ChannelLayout {
  int64_t n, c, s;
  int64_t channel(int64_t flat) const { return (flat / s) % c; }
  int64_t perChannel() const { return n * s; }
};
} // namespace

static FailureOr<ChannelLayout> channelLayout(Operation *op, const Tensor &x,
                                              ArrayRef<const Tensor *> perC) {
  if (x.shape.size() < 2)
    return op->emitOpError("expects an input of rank >= 2");
  ChannelLayout l{x.shape[0], x.shape[1],
                  product(ArrayRef(x.shape).drop_front(2))};
  for (const Tensor *t : perC)
    if (t->numElements() != l.c)
      return op->emitOpError("per-channel operand has ")
             << t->numElements() << " elements, expected " << l.c;
  return l;
}

/// The fused epilogue of a batch normalization's output `y`: relu, or
/// tidal.clip's formula with clip_min/clip_max, or none.
template <typename NormOp> static double epilogue(NormOp op, double y) {
  if (op.getRelu())
    return y > 0.0 ? y : 0.0;
  if (std::optional<APFloat> lo = op.getClipMin()) {
    double hi = op.getClipMax()->convertToDouble();
    return std::isnan(y) ? y : std::min(std::max(y, lo->convertToDouble()), hi);
  }
  return y;
}

static LogicalResult evalBatchNormInference(BatchNormInferenceOp op,
                                            EvalState &st, Tensor &out) {
  const Tensor &x = st.get(op.getInput()), &scale = st.get(op.getScale()),
               &bias = st.get(op.getBias()), &mean = st.get(op.getMean()),
               &var = st.get(op.getVar());
  FailureOr<ChannelLayout> l =
      channelLayout(op, x, {&scale, &bias, &mean, &var});
  if (failed(l))
    return failure();
  double eps = toDouble(op.getEpsilon());
  for (int64_t i = 0, e = x.numElements(); i < e; ++i) {
    int64_t c = l->channel(i);
    double y = scale.data[c] * (x.data[i] - mean.data[c]) /
                   std::sqrt(var.data[c] + eps) +
               bias.data[c];
    out.data[i] = epilogue(op, y);
  }
  return success();
}

/// Per-channel batch mean and biased variance of `x`.
static void batchStats(const Tensor &x, const ChannelLayout &l,
                       std::vector<double> &mean, std::vector<double> &var) {
  mean.assign(l.c, 0.0);
  var.assign(l.c, 0.0);
  int64_t m = l.perChannel();
  for (int64_t i = 0, e = x.numElements(); i < e; ++i)
    mean[l.channel(i)] += x.data[i];
  for (double &v : mean)
    v = m ? v / m : 0.0;
  for (int64_t i = 0, e = x.numElements(); i < e; ++i) {
    double d = x.data[i] - mean[l.channel(i)];
    var[l.channel(i)] += d * d;
  }
  for (double &v : var)
    v = m ? v / m : 0.0;
}

static LogicalResult evalBatchNormTraining(BatchNormTrainingOp op,
                                           EvalState &st,
                                           MutableArrayRef<Tensor> results) {
  const Tensor &x = st.get(op.getInput()), &scale = st.get(op.getScale()),
               &bias = st.get(op.getBias()),
               &runMean = st.get(op.getRunningMean()),
               &runVar = st.get(op.getRunningVar());
  FailureOr<ChannelLayout> l =
      channelLayout(op, x, {&scale, &bias, &runMean, &runVar});
  if (failed(l))
    return failure();
  double eps = toDouble(op.getEpsilon());
  double momentum = toDouble(op.getMomentum());
  std::vector<double> mean, var;
  batchStats(x, *l, mean, var);
  for (int64_t i = 0, e = x.numElements(); i < e; ++i) {
    int64_t c = l->channel(i);
    double y = scale.data[c] * (x.data[i] - mean[c]) / std::sqrt(var[c] + eps) +
               bias.data[c];
    results[0].data[i] = epilogue(op, y);
  }
  // The running variance takes the unbiased batch variance, as PyTorch.
  int64_t m = l->perChannel();
  double unbias = m > 1 ? static_cast<double>(m) / (m - 1) : 1.0;
  for (int64_t c = 0; c < l->c; ++c) {
    results[1].data[c] = runMean.data[c] * momentum + mean[c] * (1 - momentum);
    results[2].data[c] =
        runVar.data[c] * momentum + var[c] * unbias * (1 - momentum);
    results[3].data[c] = mean[c];
    results[4].data[c] = var[c];
  }
  return success();
}

static LogicalResult evalBatchNormBackward(BatchNormBackwardOp op,
                                           EvalState &st,
                                           MutableArrayRef<Tensor> results) {
  const Tensor &dy = st.get(op.getGrad()), &x = st.get(op.getInput()),
               &scale = st.get(op.getScale()),
               &mean = st.get(op.getBatchMean()),
               &var = st.get(op.getBatchVar());
  FailureOr<ChannelLayout> l = channelLayout(op, x, {&scale, &mean, &var});
  if (failed(l))
    return failure();
  double eps = toDouble(op.getEpsilon());
  std::vector<double> inv(l->c), gBias(l->c, 0.0), gScale(l->c, 0.0);
  for (int64_t c = 0; c < l->c; ++c)
    inv[c] = 1.0 / std::sqrt(var.data[c] + eps);
  auto xhat = [&](int64_t i) {
    int64_t c = l->channel(i);
    return (x.data[i] - mean.data[c]) * inv[c];
  };
  for (int64_t i = 0, e = x.numElements(); i < e; ++i) {
    gBias[l->channel(i)] += dy.data[i];
    gScale[l->channel(i)] += dy.data[i] * xhat(i);
  }
  double m = static_cast<double>(l->perChannel());
  for (int64_t i = 0, e = x.numElements(); i < e; ++i) {
    int64_t c = l->channel(i);
    results[0].data[i] = scale.data[c] * inv[c] *
                         (dy.data[i] - gBias[c] / m - xhat(i) * gScale[c] / m);
  }
  for (int64_t c = 0; c < l->c; ++c) {
    results[1].data[c] = gScale[c];
    results[2].data[c] = gBias[c];
  }
  return success();
}

namespace {
/// The input seen as `outer` rows of `inner` normalized elements.
struct RowLayout {
  int64_t outer, inner;
  SmallVector<int64_t> innerShape;
};
} // namespace

static FailureOr<RowLayout> rowLayout(Operation *op, const Tensor &x,
                                      int64_t axis) {
  int64_t rank = x.shape.size();
  if (axis < 0 || axis >= rank)
    return op->emitOpError("axis ") << axis << " is out of range";
  RowLayout r;
  r.outer = product(ArrayRef(x.shape).take_front(axis));
  r.innerShape.assign(x.shape.begin() + axis, x.shape.end());
  r.inner = product(r.innerShape);
  return r;
}

static LogicalResult evalLayerNorm(LayerNormOp op, EvalState &st,
                                   MutableArrayRef<Tensor> results) {
  const Tensor &x = st.get(op.getInput()), &scale = st.get(op.getScale());
  const Tensor *bias = op.getBias() ? &st.get(op.getBias()) : nullptr;
  FailureOr<RowLayout> r = rowLayout(op, x, static_cast<int64_t>(op.getAxis()));
  if (failed(r))
    return failure();
  double eps = toDouble(op.getEpsilon());
  SmallVector<int64_t> idx;
  for (int64_t o = 0; o < r->outer; ++o) {
    const double *row = x.data.data() + o * r->inner;
    double mean = 0.0, var = 0.0;
    for (int64_t i = 0; i < r->inner; ++i)
      mean += row[i];
    mean /= r->inner;
    for (int64_t i = 0; i < r->inner; ++i)
      var += (row[i] - mean) * (row[i] - mean);
    var /= r->inner;
    double inv = 1.0 / std::sqrt(var + eps);
    for (int64_t i = 0; i < r->inner; ++i) {
      unravel(i, r->innerShape, idx);
      double y =
          (row[i] - mean) * inv * scale.data[broadcastFlat(idx, scale.shape)];
      if (bias)
        y += bias->data[broadcastFlat(idx, bias->shape)];
      results[0].data[o * r->inner + i] = y;
    }
    results[1].data[o] = mean;
    results[2].data[o] = inv;
  }
  return success();
}

static LogicalResult evalLayerNormBackward(LayerNormBackwardOp op,
                                           EvalState &st,
                                           MutableArrayRef<Tensor> results) {
  const Tensor &dy = st.get(op.getGrad()), &x = st.get(op.getInput()),
               &scale = st.get(op.getScale()), &mean = st.get(op.getMean()),
               &invStd = st.get(op.getInvStdDev());
  FailureOr<RowLayout> r = rowLayout(op, x, static_cast<int64_t>(op.getAxis()));
  if (failed(r))
    return failure();
  if (mean.numElements() != r->outer || invStd.numElements() != r->outer)
    return op.emitOpError("statistics have the wrong number of elements");
  SmallVector<int64_t> idx;
  std::vector<double> g(r->inner), xhat(r->inner);
  for (int64_t o = 0; o < r->outer; ++o) {
    int64_t base = o * r->inner;
    double inv = invStd.data[o], meanG = 0.0, meanGX = 0.0;
    for (int64_t i = 0; i < r->inner; ++i) {
      unravel(i, r->innerShape, idx);
      int64_t s = broadcastFlat(idx, scale.shape);
      xhat[i] = (x.data[base + i] - mean.data[o]) * inv;
      g[i] = dy.data[base + i] * scale.data[s];
      meanG += g[i];
      meanGX += g[i] * xhat[i];
      results[1].data[s] += dy.data[base + i] * xhat[i];
      results[2].data[s] += dy.data[base + i];
    }
    meanG /= r->inner;
    meanGX /= r->inner;
    for (int64_t i = 0; i < r->inner; ++i)
      results[0].data[base + i] = inv * (g[i] - meanG - xhat[i] * meanGX);
  }
  return success();
}

Handled eval::evalNormOp(Operation *op, EvalState &st,
                         MutableArrayRef<Tensor> results) {
  return llvm::TypeSwitch<Operation *, Handled>(op)
      .Case([&](BatchNormInferenceOp o) {
        return done(evalBatchNormInference(o, st, results[0]));
      })
      .Case([&](BatchNormTrainingOp o) {
        return done(evalBatchNormTraining(o, st, results));
      })
      .Case([&](BatchNormBackwardOp o) {
        return done(evalBatchNormBackward(o, st, results));
      })
      .Case([&](LayerNormOp o) { return done(evalLayerNorm(o, st, results)); })
      .Case([&](LayerNormBackwardOp o) {
        return done(evalLayerNormBackward(o, st, results));
      })
      .Default([](Operation *) -> Handled { return false; });
}
