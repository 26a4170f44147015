//===- SyncBatchNorm.cpp - BatchNorm statistics over every rank -----------===//
//
// Data parallel with `--sync-batch-norm`: a training-mode batch norm
// normalizes with the statistics of the global batch, as
// torch.nn.SyncBatchNorm does. Every rank holds the same running
// statistics (they are updated from the global statistics), so with c the
// running mean, each rank takes the mean of (x - c) and of (x - c)^2 over
// its share, one all-reduce averages them over the ranks (equal shares),
// and mean = c + E[x - c], var = E[(x - c)^2] - E[x - c]^2: shifted by a
// value near the mean, the subtraction loses little. The backward pass
// sums grad and grad * xhat over the global batch the same way before it
// forms the input's gradient; the scale's and bias's gradients stay this
// rank's sums, which the gradient all-reduce then averages (as PyTorch
// DDP does with SyncBatchNorm). The all-reduces are waited for at once.
//
//===----------------------------------------------------------------------===//

#include "AutodiffRules.h"

#include "tidal/Dialect/Tidal/IR/TidalOps.h"
#include "tidal/Dialect/Tidal/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseSet.h"

namespace mlir::tidal {
#define GEN_PASS_DEF_TIDALSYNCBATCHNORMPASS
#include "tidal/Dialect/Tidal/Transforms/Passes.h.inc"
} // namespace mlir::tidal

using namespace mlir;
using namespace mlir::tidal;

namespace {

RankedTensorType typeOf(Value v) { return cast<RankedTensorType>(v.getType()); }

/// Builds the element-wise arithmetic of the rewrite.
struct Builder {
  OpBuilder &b;
  Location loc;
  Value add(Value x, Value y) { return b.create<AddOp>(loc, x, y); }
  Value sub(Value x, Value y) { return b.create<SubOp>(loc, x, y); }
  Value mul(Value x, Value y) { return b.create<MulOp>(loc, x, y); }
  Value div(Value x, Value y) { return b.create<DivOp>(loc, x, y); }
  Value scalar(double v) {
    return splatConstant(b, loc, RankedTensorType::get({}, b.getF32Type()), v);
  }
  Value mean(Value x, ArrayRef<int64_t> axes) {
    return b.create<ReduceMeanOp>(loc, x, axes, false);
  }
  Value sum(Value x, ArrayRef<int64_t> axes) {
    return b.create<ReduceSumOp>(loc, x, axes, false);
  }
  Value reshape(Value v, ArrayRef<int64_t> shape) {
    return b.create<ReshapeOp>(loc, v, shape);
  }
};

struct SyncBatchNormPass
    : tidal::impl::TidalSyncBatchNormPassBase<SyncBatchNormPass> {
  using Base::Base;

  int64_t nextBucket = 0;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto func = module.lookupSymbol<func::FuncOp>(funcName);
    if (!func) {
      module.emitError("no function '") << funcName << "' to synchronize";
      return signalPassFailure();
    }
    if (ranks < 1) {
      func.emitError("ranks must be positive");
      return signalPassFailure();
    }
    if (ranks == 1)
      return; // one rank: the local statistics are the global ones
    func.walk([&](AllReduceStartOp op) {
      nextBucket = std::max<int64_t>(nextBucket, op.getBucket() + 1);
    });
    SmallVector<BatchNormTrainingOp> forwards;
    func.walk([&](BatchNormTrainingOp op) { forwards.push_back(op); });
    DenseSet<Value> globalMeans;
    for (BatchNormTrainingOp op : forwards) {
      if (!typeOf(op.getInput()).getElementType().isF32()) {
        op.emitError("--sync-batch-norm supports float32 batch norms only");
        return signalPassFailure();
      }
      globalMeans.insert(rewriteForward(op));
    }
    SmallVector<BatchNormBackwardOp> backwards;
    func.walk([&](BatchNormBackwardOp op) {
      if (globalMeans.contains(op.getBatchMean()))
        backwards.push_back(op);
    });
    for (BatchNormBackwardOp op : backwards)
      rewriteBackward(op);
  }

  /// Dims 0, 2, 3, ... (all but the channels), the [1, C, 1, ...] shape,
  /// and the number of elements per channel on this rank.
  static void channelLayout(Value x, SmallVectorImpl<int64_t> &axes,
                            SmallVectorImpl<int64_t> &chan, int64_t &count) {
    auto type = typeOf(x);
    chan.assign(type.getRank(), 1);
    chan[1] = type.getDimSize(1);
    count = 1;
    for (int64_t i = 0; i < type.getRank(); ++i)
      if (i != 1) {
        axes.push_back(i);
        count *= type.getDimSize(i);
      }
  }

  /// Averages (or, with `mean` false, sums) `values` over the ranks, at
  /// once.
  SmallVector<Value> allReduce(OpBuilder &b, Location loc, ValueRange values,
                               bool mean) {
    auto start = b.create<AllReduceStartOp>(
        loc, values, b.getI64IntegerAttr(nextBucket),
        b.getI64IntegerAttr(mean ? int64_t(ranks) : 1),
        b.getI64IntegerAttr(ranks));
    auto wait = b.create<AllReduceWaitOp>(loc, start.getResults(),
                                          b.getI64IntegerAttr(nextBucket));
    ++nextBucket;
    return SmallVector<Value>(wait.getResults());
  }

  /// Returns the global batch mean that replaces the op's batch_mean.
  Value rewriteForward(BatchNormTrainingOp op) {
    OpBuilder b(op);
    Location loc = op.getLoc();
    Builder r{b, loc};
    SmallVector<int64_t> axes, chan;
    int64_t count;
    channelLayout(op.getInput(), axes, chan, count);
    Value shift = op.getRunningMean();
    Value centered = r.sub(op.getInput(), r.reshape(shift, chan));
    Value m = r.mean(centered, axes);
    Value sq = r.mean(r.mul(centered, centered), axes);
    SmallVector<Value> global = allReduce(b, loc, {m, sq}, /*mean=*/true);
    Value mean = r.add(shift, global[0]);
    Value var = b.create<MaxOp>(
        loc, r.sub(global[1], r.mul(global[0], global[0])), r.scalar(0.0));
    Value out = b.create<BatchNormInferenceOp>(
        loc, op.getInput(), op.getScale(), op.getBias(), mean, var,
        op.getEpsilonAttr(), op.getReluAttr(), op.getClipMinAttr(),
        op.getClipMaxAttr());
    // running * momentum + batch * (1 - momentum), with the unbiased
    // variance of the global batch.
    double momentum = op.getMomentum().convertToDouble();
    double total = double(count) * double(ranks);
    double unbias = total > 1 ? total / (total - 1) : 1.0;
    Value newMean = r.add(r.mul(op.getRunningMean(), r.scalar(momentum)),
                          r.mul(mean, r.scalar(1.0 - momentum)));
    Value newVar =
        r.add(r.mul(op.getRunningVar(), r.scalar(momentum)),
              r.mul(r.mul(var, r.scalar(unbias)), r.scalar(1.0 - momentum)));
    op.getOutput().replaceAllUsesWith(out);
    op.getNewRunningMean().replaceAllUsesWith(newMean);
    op.getNewRunningVar().replaceAllUsesWith(newVar);
    op.getBatchMean().replaceAllUsesWith(mean);
    op.getBatchVar().replaceAllUsesWith(var);
    op.erase();
    return mean;
  }

  void rewriteBackward(BatchNormBackwardOp op) {
    OpBuilder b(op);
    Location loc = op.getLoc();
    Builder r{b, loc};
    SmallVector<int64_t> axes, chan;
    int64_t count;
    channelLayout(op.getInput(), axes, chan, count);
    double total = double(count) * double(ranks);
    Value invStd =
        r.div(r.scalar(1.0),
              b.create<SqrtOp>(
                  loc, r.add(op.getBatchVar(),
                             r.scalar(op.getEpsilon().convertToDouble()))));
    Value invStdC = r.reshape(invStd, chan);
    Value xhat = r.mul(r.sub(op.getInput(), r.reshape(op.getBatchMean(), chan)),
                       invStdC);
    Value g = op.getGrad();
    Value sumG = r.sum(g, axes);
    Value sumGx = r.sum(r.mul(g, xhat), axes);
    SmallVector<Value> global = allReduce(b, loc, {sumG, sumGx},
                                          /*mean=*/false);
    Value meanG = r.reshape(r.div(global[0], r.scalar(total)), chan);
    Value meanGx = r.reshape(r.div(global[1], r.scalar(total)), chan);
    Value k = r.reshape(r.mul(op.getScale(), invStd), chan);
    Value gradInput = r.mul(k, r.sub(r.sub(g, meanG), r.mul(xhat, meanGx)));
    op.getGradInput().replaceAllUsesWith(gradInput);
    op.getGradScale().replaceAllUsesWith(sumGx);
    op.getGradBias().replaceAllUsesWith(sumG);
    op.erase();
  }
};

} // namespace
