//===- ChannelLayout.cpp - channel-blocked tensors ------------------------===//

#include "tidal/Dialect/Tidal/IR/ChannelLayout.h"

#include "tidal/Dialect/Tidal/IR/TidalOps.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"

using namespace mlir;
using namespace mlir::tidal;

bool tidal::isChannelBlocked(Value v) {
  while (Operation *def = v.getDefiningOp()) {
    if (isa<OffloadOp, PrefetchOp, WaitOp>(def)) {
      v = def->getOperand(0);
      continue;
    }
    auto marked = def->getAttrOfType<DenseI64ArrayAttr>(kBlockedAttrName);
    if (!marked)
      return false;
    int64_t index = cast<OpResult>(v).getResultNumber();
    return llvm::is_contained(marked.asArrayRef(), index);
  }
  return false; // function arguments are dense
}

bool tidal::acceptsBlockedOperand(Operation *op, unsigned i) {
  // The input (or the output's gradient); global average pooling's
  // [N, C, 1, 1] result has the same bytes in either layout.
  if (isa<ConvOp, ConvBackwardDataOp, BatchNormTrainingOp, BatchNormInferenceOp,
          MaxPoolOp, AveragePoolOp, AveragePoolBackwardOp, GlobalAveragePoolOp>(
          op))
    return i == 0;
  if (isa<ConvBackwardWeightsOp, BatchNormBackwardOp, MaxPoolBackwardOp>(op))
    return i == 0 || i == 1; // the output's gradient and the input
  return false;
}

bool tidal::acceptsBlockedResult(Operation *op, unsigned i) {
  if (isa<ConvOp, ConvBackwardDataOp, BatchNormTrainingOp, BatchNormInferenceOp,
          BatchNormBackwardOp, MaxPoolOp, MaxPoolBackwardOp, AveragePoolOp,
          AveragePoolBackwardOp>(op))
    return i == 0; // the output (or the input's gradient)
  // Per-channel values spread over the spatial dims (global average
  // pooling's gradient): [N, C, 1...] -> [N, C, spatial...].
  if (auto b = dyn_cast<BroadcastToOp>(op)) {
    auto in = cast<RankedTensorType>(b->getOperand(0).getType());
    auto out = cast<RankedTensorType>(b->getResult(0).getType());
    return i == 0 && in.getRank() == out.getRank() && in.getRank() >= 2 &&
           in.getDimSize(0) == out.getDimSize(0) &&
           in.getDimSize(1) == out.getDimSize(1) &&
           in.getNumElements() == in.getDimSize(0) * in.getDimSize(1);
  }
  return false;
}

bool tidal::isBroadcastScalar(Type t) {
  auto ranked = dyn_cast<RankedTensorType>(t);
  return ranked && ranked.hasStaticShape() && ranked.getNumElements() == 1;
}

bool tidal::isLayoutTransparent(Operation *op) {
  if (!isa<TidalDialect>(op->getDialect()))
    return false;
  // Same-shaped but not element by element: the axis (softmax) or the
  // element index (dropout's mask) matters.
  if (isa<SoftmaxOp, LogSoftmaxOp, SoftmaxBackwardOp, LogSoftmaxBackwardOp,
          DropoutOp, DropoutBackwardOp>(op))
    return false;
  // Joining or cutting along the channels moves, per sample, whole runs of
  // channels: with every part's channels a multiple of the block, the same
  // byte runs in either layout.
  auto channelAxis = [&](int64_t axis) {
    auto type = cast<RankedTensorType>(op->getResult(0).getType());
    return axis == 1 || axis == 1 - type.getRank();
  };
  if (auto concat = dyn_cast<ConcatOp>(op))
    return channelAxis(concat.getAxis());
  if (auto split = dyn_cast<SplitOp>(op))
    return channelAxis(split.getAxis());
  if (!op->hasTrait<OpTrait::Elementwise>() &&
      !isa<AddOp, SubOp, MulOp, DivOp, PowOp, OffloadOp, PrefetchOp, WaitOp>(
          op))
    return false;
  Type shape;
  auto same = [&](Type t) {
    auto ranked = dyn_cast<RankedTensorType>(t);
    if (!ranked)
      return false;
    if (isBroadcastScalar(ranked))
      return true; // reads the same on any layout
    if (!shape) {
      shape = t;
      return true;
    }
    return cast<RankedTensorType>(shape).getShape() == ranked.getShape();
  };
  return op->getNumResults() > 0 && llvm::all_of(op->getOperandTypes(), same) &&
         llvm::all_of(op->getResultTypes(), same);
}
