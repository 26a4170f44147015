//===- ActivationRules.cpp - gradients of the activation family -----------===//
//
// The vector-Jacobian products of the activation family (a backward op that
// takes the forward input; clip's takes its output) and of the element-wise
// math ops (built from forward ops: abs, reciprocal, sin, cos, tan, the
// inverse and hyperbolic functions), as PyTorch's
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
             TanOp, AsinOp, AcosOp, AtanOp, SinhOp, CoshOp, AsinhOp, AcoshOp,
             AtanhOp, SignOp, FloorOp, CeilOp, RoundOp>(op);
}

Value tidal::buildActivationGradient(OpBuilder &b, Operation *op, Value g) {
  Location loc = op->getLoc();
  Value x = op->getOperand(0), y = op->getResult(0);
  auto mul = [&](Value l, Value r) -> Value {
    return b.create<MulOp>(loc, l, r);
  };
  auto div = [&](Value l, Value r) -> Value {
    return b.create<DivOp>(loc, l, r);
  };
  auto sqrtOf = [&](Value v) -> Value { return b.create<SqrtOp>(loc, v); };
  // A scalar 1 of x's element type (broadcast by the binary ops).
  auto one = [&]() -> Value {
    auto elt = cast<RankedTensorType>(x.getType()).getElementType();
    return splatConstant(b, loc, RankedTensorType::get({}, elt), 1.0);
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
      // PyTorch: grad * (1 + y^2).
      .Case(
          [&](TanOp) { return mul(g, b.create<AddOp>(loc, one(), mul(y, y))); })
      // PyTorch: grad / sqrt(1 - x^2), -grad / sqrt(1 - x^2).
      .Case([&](AsinOp) {
        return div(g, sqrtOf(b.create<SubOp>(loc, one(), mul(x, x))));
      })
      .Case([&](AcosOp) {
        return b.create<NegOp>(
            loc, div(g, sqrtOf(b.create<SubOp>(loc, one(), mul(x, x)))));
      })
      // PyTorch: grad / (1 + x^2).
      .Case([&](AtanOp) {
        return div(g, b.create<AddOp>(loc, one(), mul(x, x)));
      })
      .Case([&](SinhOp) { return mul(g, b.create<CoshOp>(loc, x)); })
      .Case([&](CoshOp) { return mul(g, b.create<SinhOp>(loc, x)); })
      // PyTorch: grad / sqrt(x^2 + 1), grad / sqrt(x^2 - 1), grad / (1 - x^2).
      .Case([&](AsinhOp) {
        return div(g, sqrtOf(b.create<AddOp>(loc, mul(x, x), one())));
      })
      .Case([&](AcoshOp) {
        return div(g, sqrtOf(b.create<SubOp>(loc, mul(x, x), one())));
      })
      .Case([&](AtanhOp) {
        return div(g, b.create<SubOp>(loc, one(), mul(x, x)));
      })
      .Default([](Operation *) { return Value(); });
}
