//===- ShardOptimizer.cpp - optimizer state split over the ranks ----------===//
//
// ZeRO stage 1 (tidalc --shard optimizer): after the gradient all-reduce,
// rank r updates only its chunk of every parameter (elements [r * c, (r +
// 1) * c) of the flattened tensor, c = ceil(n / ranks)), so it holds only
// that chunk of the optimizer state: 1 / ranks of it. The updated chunks
// are then all-gathered into the full parameters, one all-gather per
// gradient bucket, started after the bucket's last update and waited for at
// the end of the step. The step stays the same program on every rank: the
// chunk is taken at run time (`tidal.shard`), and padding elements are
// zeros that every update keeps at zero.
//
//===----------------------------------------------------------------------===//

#include "tidal/Dialect/Tidal/IR/TidalOps.h"
#include "tidal/Dialect/Tidal/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseMap.h"

namespace mlir::tidal {
#define GEN_PASS_DEF_TIDALSHARDOPTIMIZERPASS
#include "tidal/Dialect/Tidal/Transforms/Passes.h.inc"
} // namespace mlir::tidal

using namespace mlir;
using namespace mlir::tidal;

namespace {

struct ShardOptimizerPass
    : tidal::impl::TidalShardOptimizerPassBase<ShardOptimizerPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto func = module.lookupSymbol<func::FuncOp>(funcName);
    if (!func) {
      module.emitError("no function '") << funcName << "' to shard";
      return signalPassFailure();
    }
    if (ranks < 1) {
      func.emitError("ranks must be positive");
      return signalPassFailure();
    }
    if (ranks == 1)
      return;
    if (failed(shard(func)))
      signalPassFailure();
  }

  RankedTensorType chunkType(Type full) {
    auto type = cast<RankedTensorType>(full);
    int64_t n = type.getNumElements();
    return RankedTensorType::get({(n + ranks - 1) / ranks},
                                 type.getElementType());
  }

  /// ZeRO stage 2: each all-reduce bucket's gradients are reduce-scattered
  /// instead (this rank keeps only its chunks; the full gradients die at
  /// the wait); what else the bucket held (the loss) keeps an all-reduce
  /// of its own.
  LogicalResult scatterGradients(func::FuncOp func, int64_t &nextBucket) {
    SmallVector<AllReduceStartOp> starts;
    func.walk([&](AllReduceStartOp op) { starts.push_back(op); });
    MLIRContext *ctx = &getContext();
    OpBuilder b(ctx);
    for (AllReduceStartOp start : starts) {
      auto wait = start->use_empty()
                      ? AllReduceWaitOp()
                      : dyn_cast<AllReduceWaitOp>(*start->getUsers().begin());
      if (!wait || llvm::any_of(start->getUsers(), [&](Operation *user) {
            return user != wait.getOperation();
          }))
        return start.emitError("an all-reduce read other than by its wait");
      SmallVector<unsigned> grads, others;
      for (unsigned i = 0; i < start.getInputs().size(); ++i) {
        bool toUpdates =
            llvm::all_of(wait.getResult(i).getUsers(), [](Operation *user) {
              return isOptimizerUpdate(user);
            });
        (toUpdates && !wait.getResult(i).use_empty() ? grads : others)
            .push_back(i);
      }
      if (grads.empty())
        continue;
      auto pick = [&](ValueRange values, ArrayRef<unsigned> indices) {
        SmallVector<Value> out;
        for (unsigned i : indices)
          out.push_back(values[i]);
        return out;
      };
      SmallVector<Value> gradInputs = pick(start.getInputs(), grads);
      SmallVector<Type> chunkTypes;
      for (Value v : gradInputs)
        chunkTypes.push_back(chunkType(v.getType()));
      b.setInsertionPoint(start);
      auto scatter = b.create<ReduceScatterStartOp>(
          start.getLoc(), chunkTypes, gradInputs, start.getBucketAttr(),
          start.getDivisorAttr(), start.getRanksAttr());
      AllReduceStartOp rest;
      SmallVector<Value> otherInputs = pick(start.getInputs(), others);
      if (!otherInputs.empty())
        rest = b.create<AllReduceStartOp>(
            start.getLoc(), otherInputs, b.getI64IntegerAttr(nextBucket++),
            start.getDivisorAttr(), start.getRanksAttr());
      b.setInsertionPoint(wait);
      auto scattered = b.create<ReduceScatterWaitOp>(
          wait.getLoc(), scatter.getResults(), wait.getBucketAttr());
      for (auto [k, i] : llvm::enumerate(grads))
        wait.getResult(i).replaceAllUsesWith(scattered.getResult(k));
      if (rest) {
        auto restWait = b.create<AllReduceWaitOp>(
            wait.getLoc(), rest.getResults(), rest.getBucketAttr());
        for (auto [k, i] : llvm::enumerate(others))
          wait.getResult(i).replaceAllUsesWith(restWait.getResult(k));
      }
      wait.erase();
      start.erase();
    }
    (void)ctx;
    return success();
  }

  LogicalResult shard(func::FuncOp func) {
    Block &body = func.getBody().front();
    auto ret = cast<func::ReturnOp>(body.getTerminator());
    int64_t nextBucket = 0;
    func.walk([&](Operation *op) {
      if (auto b = op->getAttrOfType<IntegerAttr>("bucket"))
        nextBucket = std::max<int64_t>(nextBucket, b.getInt() + 1);
    });

    if (gradients && failed(scatterGradients(func, nextBucket)))
      return failure();

    // The updates, grouped by the all-reduce bucket whose wait they follow.
    SmallVector<SmallVector<Operation *>> groups;
    for (Operation &op : body) {
      if (isa<AllReduceWaitOp, ReduceScatterWaitOp>(op)) {
        groups.emplace_back();
        continue;
      }
      if (!optimizerGradient(&op))
        continue;
      if (groups.empty())
        groups.emplace_back();
      if (!isa<SgdUpdateOp, SgdMomentumUpdateOp, AdamUpdateOp>(op))
        return op.emitError("--shard optimizer shards the torch.optim "
                            "updates (sgd, adam, adamw), not ")
               << op.getName();
      groups.back().push_back(&op);
    }

    // State arguments become chunks; the manifest learns their full shape.
    MLIRContext *ctx = &getContext();
    auto shardArg = [&](Value v) -> LogicalResult {
      auto arg = dyn_cast<BlockArgument>(v);
      auto role = arg ? func.getArgAttrOfType<ArgRoleAttr>(arg.getArgNumber(),
                                                           kRoleAttr)
                      : ArgRoleAttr();
      if (!role || role.getValue() != ArgRole::optimizer_state)
        return func.emitError("optimizer state that is not an argument of "
                              "role optimizer_state cannot be sharded");
      auto full = cast<RankedTensorType>(arg.getType());
      func.setArgAttr(arg.getArgNumber(), kShardOfAttr,
                      DenseI64ArrayAttr::get(ctx, full.getShape()));
      arg.setType(chunkType(full));
      return success();
    };

    OpBuilder b(ctx);
    SmallVector<Value> gathered; // results of the all-gather waits
    DenseMap<Value, Value> replacement;
    for (auto &group : groups) {
      if (group.empty())
        continue;
      SmallVector<Value> chunks;
      SmallVector<Type> fullTypes;
      SmallVector<Value> oldParams;
      Operation *last = nullptr;
      for (Operation *op : group) {
        b.setInsertionPoint(op);
        Location loc = op->getLoc();
        auto shardOf = [&](Value v) -> Value {
          // A reduce-scattered gradient is this rank's chunk already.
          if (v.getDefiningOp<ReduceScatterWaitOp>())
            return v;
          return b.create<ShardOp>(loc, chunkType(v.getType()), v,
                                   b.getI64IntegerAttr(ranks));
        };
        Operation *updated = nullptr;
        SmallVector<Value> states;
        if (auto u = dyn_cast<SgdUpdateOp>(op)) {
          updated = b.create<SgdUpdateOp>(loc, shardOf(u.getParam()),
                                          shardOf(u.getGrad()), u.getLrAttr(),
                                          u.getWeightDecayAttr());
        } else if (auto u = dyn_cast<SgdMomentumUpdateOp>(op)) {
          states = {u.getMomentumBuffer()};
          if (failed(shardArg(u.getMomentumBuffer())))
            return failure();
          updated = b.create<SgdMomentumUpdateOp>(
              loc, shardOf(u.getParam()), shardOf(u.getGrad()),
              u.getMomentumBuffer(), u.getLrAttr(), u.getMomentumAttr(),
              u.getDampeningAttr(), u.getWeightDecayAttr(),
              u.getNesterovAttr());
        } else {
          auto a = cast<AdamUpdateOp>(op);
          if (failed(shardArg(a.getExpAvg())) ||
              failed(shardArg(a.getExpAvgSq())))
            return failure();
          updated = b.create<AdamUpdateOp>(
              loc, shardOf(a.getParam()), shardOf(a.getGrad()), a.getExpAvg(),
              a.getExpAvgSq(), a.getStep(), a.getLrAttr(), a.getBeta1Attr(),
              a.getBeta2Attr(), a.getEpsAttr(), a.getWeightDecayAttr(),
              a.getDecoupledAttr());
        }
        // Result 0 is the parameter; the others the state, now chunks.
        oldParams.push_back(op->getResult(0));
        fullTypes.push_back(op->getResult(0).getType());
        chunks.push_back(updated->getResult(0));
        for (unsigned i = 1; i < op->getNumResults(); ++i)
          op->getResult(i).replaceAllUsesWith(updated->getResult(i));
        last = updated;
      }
      // Gather the bucket's parameters after its last update; wait at the
      // end of the step.
      b.setInsertionPointAfter(last);
      Location loc = NameLoc::get(
          StringAttr::get(ctx, "all_gather.bucket" + Twine(nextBucket)));
      auto start = b.create<AllGatherStartOp>(loc, fullTypes, chunks,
                                              b.getI64IntegerAttr(nextBucket),
                                              b.getI64IntegerAttr(ranks));
      b.setInsertionPoint(ret);
      auto wait = b.create<AllGatherWaitOp>(loc, start.getResults(),
                                            b.getI64IntegerAttr(nextBucket));
      ++nextBucket;
      for (auto [old, full] : llvm::zip(oldParams, wait.getResults()))
        old.replaceAllUsesWith(full);
      for (Operation *op : group)
        op->erase();
    }

    SmallVector<Type> resultTypes;
    for (Value v : ret.getOperands())
      resultTypes.push_back(v.getType());
    func.setType(FunctionType::get(ctx, body.getArgumentTypes(), resultTypes));
    return success();
  }
};

} // namespace
