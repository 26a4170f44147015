//===- ReduceRules.cpp - gradients of the reductions over axes ------------===//
//
// PyTorch's rules, built from forward ops in the input's rank (the result
// and its gradient reshaped with the reduced axes kept as 1, then
// broadcast):
//   sum, mean   the gradient broadcast back (divided by the count);
//   max, min    torch.amax/amin: split evenly among the elements equal to
//               the result, mask * (g / count of ties); a NaN result has no
//               ties, so its slice gets NaN as in PyTorch;
//   prod        the product of the other elements: with z the zero mask and
//               p the product of the nonzero elements, p / x where no zero
//               is among the others (z counted over the slice equals z at
//               the element), p at a lone zero, 0 elsewhere (torch.prod's
//               rule, exact with zeros; without them p / x is torch's
//               result / x).
//
//===----------------------------------------------------------------------===//

#include "AutodiffRules.h"

#include "tidal/Dialect/Tidal/IR/TidalOps.h"

#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::tidal;

bool tidal::isReduceFamilyOp(Operation *op) {
  return isa<ReduceSumOp, ReduceMeanOp, ReduceMaxOp, ReduceMinOp, ReduceProdOp>(
      op);
}

namespace {
/// What each rule reads from the op.
struct ReduceRule {
  OpBuilder &b;
  Location loc;
  Value x;                // the input
  RankedTensorType xType; // its type
  SmallVector<int64_t> axes;
  SmallVector<int64_t> kept; // the input's shape, reduced axes as 1

  /// `v` (the result or its gradient) in the kept shape.
  Value keep(Value v) {
    if (cast<RankedTensorType>(v.getType()).getShape() == ArrayRef(kept))
      return v;
    return b.create<ReshapeOp>(loc, v, kept);
  }
  Value scalar(double value) {
    return splatConstant(
        b, loc, RankedTensorType::get({}, xType.getElementType()), value);
  }
  /// An i1 mask of the input's shape as 0/1 of its element type.
  Value asFloat(Value mask) {
    auto type =
        RankedTensorType::get(cast<RankedTensorType>(mask.getType()).getShape(),
                              xType.getElementType());
    return b.create<CastOp>(loc, type, mask);
  }
  Value sumKept(Value v) {
    return b.create<ReduceSumOp>(loc, v, axes, /*keepdims=*/true);
  }
};
} // namespace

void tidal::buildReduceGradients(OpBuilder &b, Operation *op, Value g,
                                 ArrayRef<bool> wanted,
                                 SmallVectorImpl<Value> &out) {
  if (wanted.empty() || !wanted[0])
    return;
  Value x = op->getOperand(0);
  auto xType = cast<RankedTensorType>(x.getType());
  auto axes = cast<DenseI64ArrayAttr>(op->getAttr("axes")).asArrayRef();
  ReduceRule r{b,
               op->getLoc(),
               x,
               xType,
               SmallVector<int64_t>(axes),
               SmallVector<int64_t>(xType.getShape())};
  for (int64_t a : axes)
    r.kept[a] = 1;
  Value gk = r.keep(g);
  Location loc = r.loc;
  out[0] =
      TypeSwitch<Operation *, Value>(op)
          .Case<ReduceSumOp, ReduceMeanOp>([&](auto) -> Value {
            Value d = b.create<BroadcastToOp>(loc, xType, gk);
            if (isa<ReduceSumOp>(op))
              return d;
            int64_t count = 1;
            for (int64_t a : axes)
              count *= xType.getDimSize(a);
            return b.create<MulOp>(loc, d, r.scalar(1.0 / double(count)));
          })
          .Case<ReduceMaxOp, ReduceMinOp>([&](auto) -> Value {
            Value y = r.keep(op->getResult(0));
            Value ties = r.asFloat(b.create<EqualOp>(loc, x, y));
            Value share = b.create<DivOp>(loc, gk, r.sumKept(ties));
            return b.create<MulOp>(loc, ties, share);
          })
          .Case<ReduceProdOp>([&](auto) -> Value {
            Value isZero = b.create<EqualOp>(loc, x, r.scalar(0.0));
            Value zeroAt = r.asFloat(isZero);
            Value nonzero = b.create<WhereOp>(loc, isZero, r.scalar(1.0), x);
            Value p = b.create<ReduceProdOp>(loc, nonzero, r.axes,
                                             /*keepdims=*/true);
            Value others = b.create<WhereOp>(loc, isZero, p,
                                             b.create<DivOp>(loc, p, nonzero));
            Value alone = b.create<EqualOp>(loc, r.sumKept(zeroAt), zeroAt);
            return b.create<WhereOp>(
                loc, alone, b.create<MulOp>(loc, others, gk), r.scalar(0.0));
          });
}
