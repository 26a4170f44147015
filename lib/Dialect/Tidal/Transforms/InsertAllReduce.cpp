//===- InsertAllReduce.cpp - gradient all-reduce in buckets ---------------===//
//
// Data-parallel training: every rank runs the step on its share of the
// global batch, and the optimizer must see the gradient of the global
// batch's loss. The gradients that the updates read are grouped into
// buckets in the order the backward pass produces them (PyTorch DDP's
// scheme); each bucket is started right after its last gradient and waited
// for right before its first update, so the reduction overlaps the rest of
// the backward pass. The loss rides in the first bucket, so that every rank
// returns the global loss.
//
//===----------------------------------------------------------------------===//

#include "tidal/Dialect/Tidal/IR/TidalOps.h"
#include "tidal/Dialect/Tidal/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseMap.h"

namespace mlir::tidal {
#define GEN_PASS_DEF_TIDALINSERTALLREDUCEPASS
#include "tidal/Dialect/Tidal/Transforms/Passes.h.inc"
} // namespace mlir::tidal

using namespace mlir;
using namespace mlir::tidal;

namespace {

/// At most this many tensors a bucket (the kernels' limit, CommOps.cpp).
constexpr size_t kMaxBucketTensors = 120;

struct InsertAllReducePass
    : tidal::impl::TidalInsertAllReducePassBase<InsertAllReducePass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto func = module.lookupSymbol<func::FuncOp>(funcName);
    if (!func) {
      module.emitError("no function '")
          << funcName << "' to add an all-reduce to (run "
          << "--tidal-insert-optimizer first)";
      return signalPassFailure();
    }
    if (ranks < 1 || bucketBytes < 1) {
      func.emitError("ranks and bucket-bytes must be positive");
      return signalPassFailure();
    }
    if (lossReduction != "auto" && lossReduction != "mean" &&
        lossReduction != "sum") {
      func.emitError("unknown loss-reduction '")
          << lossReduction << "' (expected auto, mean or sum)";
      return signalPassFailure();
    }
    if (network != "mpi" && network != "nccl") {
      module.emitError("unknown network '")
          << network << "' (expected mpi or nccl)";
      return signalPassFailure();
    }
    func->setAttr(kCommNetworkAttr,
                  StringAttr::get(module.getContext(), network));
    if (networkGbps < 0 || networkLatencyUs < 0) {
      module.emitError("network-gbps and network-latency-us must not be "
                       "negative");
      return signalPassFailure();
    }
    if (networkGbps > 0) {
      Builder b(module.getContext());
      func->setAttr(kCommGbpsAttr, b.getF64FloatAttr(networkGbps));
      func->setAttr(kCommLatencyAttr, b.getF64FloatAttr(networkLatencyUs));
    }
    if (failed(insert(func)))
      signalPassFailure();
  }

  /// The loss result of `func`, or null.
  static std::optional<unsigned> lossResult(func::FuncOp func) {
    for (unsigned i = 0; i < func.getNumResults(); ++i)
      if (auto role = func.getResultAttrOfType<ArgRoleAttr>(i, kRoleAttr))
        if (role.getValue() == ArgRole::loss)
          return i;
    return std::nullopt;
  }

  /// 1 for a summed loss, the number of ranks for a mean.
  FailureOr<int64_t> divisor(Value loss) {
    if (lossReduction == "sum")
      return int64_t(1);
    if (lossReduction == "mean" || !loss)
      return int64_t(ranks);
    Operation *def = loss.getDefiningOp();
    while (def && isViewOp(def))
      def = def->getOperand(0).getDefiningOp();
    if (!def)
      return int64_t(ranks);
    if (auto r = def->getAttrOfType<ReductionAttr>("reduction")) {
      if (r.getValue() == Reduction::sum)
        return int64_t(1);
      if (r.getValue() == Reduction::none)
        return def->emitError("the loss has reduction 'none': data-parallel "
                              "training needs a mean or a sum over the batch");
    }
    if (isa<ReduceSumOp>(def))
      return int64_t(1);
    return int64_t(ranks);
  }

  LogicalResult insert(func::FuncOp func) {
    Block &body = func.getBody().front();
    auto ret = cast<func::ReturnOp>(body.getTerminator());
    // Op positions, to order gradients by when they are ready.
    DenseMap<Operation *, unsigned> position;
    for (Operation &op : body)
      position[&op] = position.size();
    auto readyAt = [&](Value v) -> unsigned {
      Operation *def = v.getDefiningOp();
      return def ? position.lookup(def) + 1 : 0; // arguments: at the start
    };

    // The gradients the updates read, each once, and the first update that
    // reads each.
    SmallVector<Value> grads;
    DenseMap<Value, Operation *> firstUpdate;
    for (Operation &op : body)
      if (Value g = optimizerGradient(&op)) {
        auto type = cast<RankedTensorType>(g.getType());
        if (!type.getElementType().isF32())
          return op.emitError("data-parallel training reduces float32 "
                              "gradients only, got ")
                 << g.getType();
        if (firstUpdate.try_emplace(g, &op).second)
          grads.push_back(g);
      }
    if (grads.empty())
      return func.emitError("no optimizer update reads a gradient: nothing "
                            "to all-reduce (run --tidal-insert-optimizer "
                            "first)");
    llvm::stable_sort(
        grads, [&](Value a, Value b) { return readyAt(a) < readyAt(b); });

    std::optional<unsigned> lossIndex = lossResult(func);
    Value loss = lossIndex ? ret.getOperand(*lossIndex) : Value();
    FailureOr<int64_t> div = divisor(loss);
    if (failed(div))
      return failure();
    if (loss &&
        !cast<RankedTensorType>(loss.getType()).getElementType().isF32())
      loss = Value(); // reported as computed by each rank

    // Buckets in order of readiness.
    SmallVector<SmallVector<Value>> buckets;
    int64_t bytes = 0;
    for (Value g : grads) {
      int64_t size = tensorByteSize(cast<ShapedType>(g.getType()));
      if (buckets.empty() || bytes + size > bucketBytes ||
          buckets.back().size() >= kMaxBucketTensors) {
        buckets.emplace_back();
        bytes = 0;
      }
      buckets.back().push_back(g);
      bytes += size;
    }
    if (loss)
      buckets.front().push_back(loss);

    // When only the return reads the updates (as after
    // --tidal-insert-optimizer), they move to the end in bucket order, each
    // bucket's after its wait: the first bucket to arrive is the first
    // updated. Otherwise each wait goes before its bucket's first update.
    bool reorder = llvm::all_of(firstUpdate, [&](auto &entry) {
      return llvm::all_of(entry.second->getUsers(),
                          [&](Operation *user) { return user == ret; });
    });
    SmallVector<Operation *> updates;
    for (Operation &op : body)
      if (optimizerGradient(&op))
        updates.push_back(&op);

    MLIRContext *ctx = &getContext();
    OpBuilder b(ctx);
    for (auto [k, bucket] : llvm::enumerate(buckets)) {
      Location loc =
          NameLoc::get(StringAttr::get(ctx, "all_reduce.bucket" + Twine(k)));
      // Start after the last value of the bucket is ready.
      Value last = *llvm::max_element(
          bucket, [&](Value a, Value c) { return readyAt(a) < readyAt(c); });
      if (Operation *def = last.getDefiningOp())
        b.setInsertionPointAfter(def);
      else
        b.setInsertionPointToStart(&body);
      auto start = b.create<AllReduceStartOp>(
          loc, bucket, b.getI64IntegerAttr(k), b.getI64IntegerAttr(*div),
          b.getI64IntegerAttr(ranks));
      // Wait before the first update that reads the bucket.
      Operation *first = ret;
      if (!reorder)
        for (Value g : bucket)
          if (Operation *u = firstUpdate.lookup(g);
              u && position.lookup(u) < position.lookup(first))
            first = u;
      b.setInsertionPoint(first);
      auto wait = b.create<AllReduceWaitOp>(loc, start.getResults(),
                                            b.getI64IntegerAttr(k));
      for (auto [g, reduced] : llvm::zip(bucket, wait.getResults()))
        g.replaceUsesWithIf(reduced, [&](OpOperand &use) {
          Operation *user = use.getOwner();
          return user != start &&
                 (isOptimizerUpdate(user) || (g == loss && user == ret));
        });
      if (reorder)
        for (Operation *u : updates)
          if (llvm::is_contained(wait->getUsers(), u))
            u->moveBefore(ret);
    }
    return success();
  }
};

} // namespace
