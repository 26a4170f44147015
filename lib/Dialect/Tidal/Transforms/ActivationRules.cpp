//===- ActivationRules.cpp - gradients of the activation family -----------===//
//
// The vector-Jacobian products of the activation family (a backward op that
// takes the forward input; clip's takes its output) and of the element-wise
// math ops (built from forward ops: abs, reciprocal, sin, cos), as PyTorch's
// autograd defines them. Sign, floor, ceil and round have a zero gradient:
// nothing flows back.
//
//===----------------------------------------------------------------------===//

#include "AutodiffRules.h"

#include "tidal/Dialect/Tidal/IR/TidalOps.h"

#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::tidal;

bool tidal::isActivationOp(Operation *op) {
  return isa<ClipOp, HardSigmoidOp, HardSwishOp, EluOp, SeluOp, CeluOp,
             SoftplusOp, SoftsignOp, MishOp, AbsOp, ReciprocalOp, SinOp, CosOp,
             SignOp, FloorOp, CeilOp, RoundOp>(op);
}

Value tidal::buildActivationGradient(OpBuilder &b, Operation *op, Value g) {
  Location loc = op->getLoc();
  Value x = op->getOperand(0), y = op->getResult(0);
  auto mul = [&](Value l, Value r) -> Value {
    return b.create<MulOp>(loc, l, r);
  };
  return TypeSwitch<Operation *, Value>(op)
      // The output, not the input: min < y < max exactly where min < x <
      // max (y = x there, a bound or NaN elsewhere), so the mask is the
      // same, and the input (a batch norm's output under ReLU6) need not
      // live until backward. PyTorch's in-place ReLU6 saves the output too.
      .Case([&](ClipOp o) {
        return b.create<ClipBackwardOp>(loc, g, y, o.getMinAttr(),
                                        o.getMaxAttr());
      })
      .Case([&](HardSigmoidOp o) {
        return b.create<HardSigmoidBackwardOp>(loc, g, x, o.getAlphaAttr(),
                                               o.getBetaAttr());
      })
      .Case(
          [&](HardSwishOp) { return b.create<HardSwishBackwardOp>(loc, g, x); })
      .Case([&](EluOp o) {
        return b.create<EluBackwardOp>(loc, g, x, o.getAlphaAttr());
      })
      .Case([&](SeluOp o) {
        return b.create<SeluBackwardOp>(loc, g, x, o.getAlphaAttr(),
                                        o.getGammaAttr());
      })
      .Case([&](CeluOp o) {
        return b.create<CeluBackwardOp>(loc, g, x, o.getAlphaAttr());
      })
      .Case([&](SoftplusOp) { return b.create<SoftplusBackwardOp>(loc, g, x); })
      .Case([&](SoftsignOp) { return b.create<SoftsignBackwardOp>(loc, g, x); })
      .Case([&](MishOp) { return b.create<MishBackwardOp>(loc, g, x); })
      // PyTorch: grad * sgn(x) (0 at 0).
      .Case([&](AbsOp) { return mul(g, b.create<SignOp>(loc, x)); })
      // PyTorch: -grad * y^2.
      .Case(
          [&](ReciprocalOp) { return b.create<NegOp>(loc, mul(g, mul(y, y))); })
      .Case([&](SinOp) { return mul(g, b.create<CosOp>(loc, x)); })
      .Case([&](CosOp) {
        return b.create<NegOp>(loc, mul(g, b.create<SinOp>(loc, x)));
      })
      .Default([](Operation *) { return Value(); });
}
