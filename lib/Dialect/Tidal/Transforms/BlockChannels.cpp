//===- BlockChannels.cpp - channel-blocked activations --------------------===//
//
// Groups the values that layout-transparent ops (element-wise on one shape,
// copies, concat and split along the channels) connect, and marks a group
// channel-blocked when every value in it can be and every other op touching it
// accepts a blocked tensor at that position (ChannelLayout.h).
//
//===----------------------------------------------------------------------===//

#include "tidal/Dialect/Tidal/IR/ChannelLayout.h"
#include "tidal/Dialect/Tidal/IR/TidalOps.h"
#include "tidal/Dialect/Tidal/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/MapVector.h"

namespace mlir::tidal {
#define GEN_PASS_DEF_TIDALBLOCKCHANNELSPASS
#include "tidal/Dialect/Tidal/Transforms/Passes.h.inc"
} // namespace mlir::tidal

using namespace mlir;
using namespace mlir::tidal;

namespace {

/// Whether `v` could be held channel-blocked: float32, rank 4, static, its
/// channels a multiple of every block, not empty.
bool blockable(Value v) {
  auto type = dyn_cast<RankedTensorType>(v.getType());
  return type && type.hasStaticShape() && type.getRank() == 4 &&
         type.getElementType().isF32() && type.getNumElements() > 0 &&
         type.getDimSize(1) % kChannelBlockMultiple == 0;
}

/// Whether every touch of `v` outside the transparent ops takes a blocked
/// tensor.
bool touchesAccept(Value v) {
  auto result = dyn_cast<OpResult>(v);
  if (!result)
    return false; // arguments are dense
  Operation *def = result.getOwner();
  if (!isLayoutTransparent(def) &&
      !acceptsBlockedResult(def, result.getResultNumber()))
    return false;
  for (OpOperand &use : v.getUses()) {
    Operation *user = use.getOwner();
    if (!isLayoutTransparent(user) &&
        !acceptsBlockedOperand(user, use.getOperandNumber()))
      return false;
  }
  return true;
}

struct BlockChannelsPass
    : mlir::tidal::impl::TidalBlockChannelsPassBase<BlockChannelsPass> {
  void runOnOperation() override {
    getOperation().walk([&](func::FuncOp func) { runOnFunction(func); });
  }

  void runOnFunction(func::FuncOp func) {
    // Values that must share a layout: a union-find over value numbers.
    llvm::DenseMap<Value, unsigned> number;
    SmallVector<Value> values;
    SmallVector<unsigned> parent;
    auto id = [&](Value v) {
      auto [it, inserted] = number.try_emplace(v, values.size());
      if (inserted) {
        values.push_back(v);
        parent.push_back(it->second);
      }
      return it->second;
    };
    auto find = [&](unsigned i) {
      while (parent[i] != i)
        i = parent[i] = parent[parent[i]];
      return i;
    };
    for (BlockArgument arg : func.getArguments())
      id(arg);
    func.walk([&](Operation *op) {
      for (Value r : op->getResults())
        id(r);
      if (!isLayoutTransparent(op))
        return;
      for (Value operand : op->getOperands()) {
        if (isBroadcastScalar(operand.getType()))
          continue;
        for (Value r : op->getResults())
          parent[find(id(operand))] = find(id(r));
      }
    });

    // A group is blocked only if all of its values can be.
    SmallVector<bool> ok(values.size(), true); // by root
    for (auto [i, v] : llvm::enumerate(values))
      if (!blockable(v) || !touchesAccept(v))
        ok[find(i)] = false;

    // Mark the defining ops.
    llvm::MapVector<Operation *, SmallVector<int64_t>> marks;
    for (auto [i, v] : llvm::enumerate(values)) {
      auto result = dyn_cast<OpResult>(v);
      if (!result || !ok[find(i)])
        continue;
      Operation *def = result.getOwner();
      // Copies take their operand's layout; they carry no mark.
      if (isa<OffloadOp, PrefetchOp, WaitOp>(def))
        continue;
      marks[def].push_back(result.getResultNumber());
      ++numBlocked;
    }
    for (auto &[op, indices] : marks) {
      llvm::sort(indices);
      op->setAttr(kBlockedAttrName,
                  DenseI64ArrayAttr::get(op->getContext(), indices));
    }
  }
};

} // namespace
