//===- LogicRules.cpp - gradients of max, min and where -------------------===//
//
// PyTorch's rules, built from forward ops: torch.maximum/minimum send the
// gradient to the selected operand and half of it to each on a tie; Where
// sends it to the selected side. Each is summed back over the dimensions
// its operand was broadcast along; a float-to-float Cast casts it back.
// Comparisons and mask logic have i1 results and so no gradient.
//
//===----------------------------------------------------------------------===//

#include "AutodiffRules.h"

#include "tidal/Dialect/Tidal/IR/TidalOps.h"

#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::tidal;

bool tidal::isLogicOp(Operation *op) {
  return isa<MaxOp, MinOp, WhereOp, CastOp>(op);
}

void tidal::buildLogicGradients(OpBuilder &b, Operation *op, Value g,
                                ArrayRef<bool> wanted,
                                SmallVectorImpl<Value> &out) {
  Location loc = op->getLoc();
  auto elt = cast<RankedTensorType>(g.getType()).getElementType();
  Value zero = splatConstant(b, loc, RankedTensorType::get({}, elt), 0.0);
  auto want = [&](unsigned i) { return i < wanted.size() && wanted[i]; };
  auto select = [&](Value cond, Value t, Value f) -> Value {
    return b.create<WhereOp>(loc, cond, t, f);
  };
  auto set = [&](unsigned i, Value grad) {
    out[i] = sumToType(b, loc, grad, op->getOperand(i).getType());
  };
  if (auto cast = dyn_cast<CastOp>(op)) {
    // Float to float: the gradient cast back; from integers or masks, none.
    auto in = cast.getInput().getType();
    if (want(0) && isa<FloatType>(in.getElementType()))
      out[0] = b.create<CastOp>(loc, in, g);
    return;
  }
  if (auto where = dyn_cast<WhereOp>(op)) {
    if (want(1))
      set(1, select(where.getCondition(), g, zero));
    if (want(2))
      set(2, select(where.getCondition(), zero, g));
    return;
  }
  // max / min: g where the operand wins, g / 2 on a tie, else 0.
  Value lhs = op->getOperand(0), rhs = op->getOperand(1);
  bool isMax = isa<MaxOp>(op);
  Value half = b.create<MulOp>(
      loc, g, splatConstant(b, loc, RankedTensorType::get({}, elt), 0.5));
  Value tie = b.create<EqualOp>(loc, lhs, rhs);
  Value tied = select(tie, half, zero);
  auto wins = [&](Value x, Value y) -> Value {
    return isMax ? Value(b.create<GreaterOp>(loc, x, y))
                 : Value(b.create<LessOp>(loc, x, y));
  };
  if (want(0))
    set(0, select(wins(lhs, rhs), g, tied));
  if (want(1))
    set(1, select(wins(rhs, lhs), g, tied));
}
