//===- IndexingRules.cpp - gradients of gather_backward -------------------===//
//
// gather_backward(u, idx) scatter-adds u into zeros (ScatterElements and
// ScatterND import through it): linear in u, whose gradient gathers the
// result's gradient back at the same indices. The indices get none.
//
//===----------------------------------------------------------------------===//

#include "AutodiffRules.h"

#include "tidal/Dialect/Tidal/IR/TidalOps.h"

using namespace mlir;
using namespace mlir::tidal;

bool tidal::isIndexingOp(Operation *op) { return isa<GatherBackwardOp>(op); }

void tidal::buildIndexingGradients(OpBuilder &b, Operation *op, Value g,
                                   ArrayRef<bool> wanted,
                                   SmallVectorImpl<Value> &out) {
  auto s = cast<GatherBackwardOp>(op);
  if (!wanted.empty() && wanted[0])
    out[0] = b.create<GatherOp>(op->getLoc(), s.getGrad().getType(), g,
                                s.getIndices(), s.getAxisAttr());
}
