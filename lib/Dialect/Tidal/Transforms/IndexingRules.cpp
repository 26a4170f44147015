//===- IndexingRules.cpp - gradients of the scatters ----------------------===//
//
// gather_backward(u, idx) scatter-adds u into zeros (ScatterElements and
// ScatterND import through it): linear in u, whose gradient gathers the
// result's gradient back at the same indices. scatter_extreme (reduction
// max and min) passes each result element's gradient to the data and
// update elements equal to it, shared evenly. The indices get none.
//
//===----------------------------------------------------------------------===//

#include "AutodiffRules.h"

#include "tidal/Dialect/Tidal/IR/TidalOps.h"

using namespace mlir;
using namespace mlir::tidal;

bool tidal::isIndexingOp(Operation *op) {
  return isa<GatherBackwardOp, ScatterExtremeOp>(op);
}

/// PyTorch's scatter_reduce amax/amin backward: the gradient of each result
/// element is shared evenly among the data and update elements equal to it.
static void buildScatterExtremeGradients(OpBuilder &b, ScatterExtremeOp s,
                                         Value g, ArrayRef<bool> wanted,
                                         SmallVectorImpl<Value> &out) {
  Location loc = s.getLoc();
  auto dataType = s.getData().getType();
  auto updType = s.getUpdates().getType();
  Value result = s.getOutput();
  IntegerAttr axis = s.getAxisAttr();
  Value atResult =
      b.create<GatherOp>(loc, updType, result, s.getIndices(), axis);
  Value selfHit = b.create<EqualOp>(loc, s.getData(), result);
  Value updHit = b.create<EqualOp>(loc, s.getUpdates(), atResult);
  Type elt = dataType.getElementType();
  auto asFloat = [&](Value mask, RankedTensorType like) -> Value {
    return b.create<CastOp>(loc, like.clone(elt), mask);
  };
  // One statement each: the IR's order does not depend on the compiler's
  // order of evaluating arguments.
  Value selfCount = asFloat(selfHit, dataType);
  Value updCount = b.create<GatherBackwardOp>(
      loc, dataType, asFloat(updHit, updType), s.getIndices(), axis);
  Value count = b.create<AddOp>(loc, selfCount, updCount);
  // Every result element is one of them: count >= 1.
  Value shared = b.create<DivOp>(loc, g, count);
  Value zero = splatConstant(b, loc, RankedTensorType::get({}, elt), 0.0);
  if (!wanted.empty() && wanted[0])
    out[0] = b.create<WhereOp>(loc, selfHit, shared, zero);
  if (wanted.size() > 2 && wanted[2])
    out[2] = b.create<WhereOp>(
        loc, updHit,
        b.create<GatherOp>(loc, updType, shared, s.getIndices(), axis), zero);
}

void tidal::buildIndexingGradients(OpBuilder &b, Operation *op, Value g,
                                   ArrayRef<bool> wanted,
                                   SmallVectorImpl<Value> &out) {
  if (auto s = dyn_cast<ScatterExtremeOp>(op))
    return buildScatterExtremeGradients(b, s, g, wanted, out);
  auto s = cast<GatherBackwardOp>(op);
  if (!wanted.empty() && wanted[0])
    out[0] = b.create<GatherOp>(op->getLoc(), s.getGrad().getType(), g,
                                s.getIndices(), s.getAxisAttr());
}
