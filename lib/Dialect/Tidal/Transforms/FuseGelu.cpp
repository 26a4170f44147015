//===- FuseGelu.cpp - form tidal.gelu from the exported erf chain ---------===//
//
// Matches y = Mul(Mul(x, Add(Erf(Div(x, c)), 1)), 0.5), c = sqrt(2) (or
// Mul(x, 1/sqrt(2))), with the commutative operands in either order and
// the constants splat tidal.constant ops of any shape that broadcasts to
// x's, and replaces it with tidal.gelu(x) when every intermediate value is
// used only by the chain.
//
//===----------------------------------------------------------------------===//

#include "tidal/Dialect/Tidal/IR/TidalOps.h"
#include "tidal/Dialect/Tidal/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/ADT/SetVector.h"

#include <cmath>
#include <optional>

namespace mlir::tidal {
#define GEN_PASS_DEF_TIDALFUSEGELUPASS
#include "tidal/Dialect/Tidal/Transforms/Passes.h.inc"
} // namespace mlir::tidal

using namespace mlir;
using namespace mlir::tidal;

namespace {

/// The value of a splat floating-point tidal.constant.
std::optional<double> splatValue(Value v) {
  auto constant = v.getDefiningOp<ConstantOp>();
  if (!constant)
    return std::nullopt;
  auto dense = dyn_cast<DenseFPElementsAttr>(constant.getValue());
  if (!dense || !dense.isSplat())
    return std::nullopt;
  return dense.getSplatValue<APFloat>().convertToDouble();
}

bool near(std::optional<double> v, double want) {
  return v && std::abs(*v - want) <= 1e-6 * std::abs(want);
}

bool onlyUse(Value v) { return v.hasOneUse(); }

/// For a commutative binary op, the operand that is not `which`, if the
/// other one satisfies `pred`.
template <typename Op, typename Pred> Value otherOperand(Op op, Pred pred) {
  if (pred(op.getLhs()))
    return op.getRhs();
  if (pred(op.getRhs()))
    return op.getLhs();
  return Value();
}

/// x if `root` is the GELU chain of x.
Value matchGelu(MulOp root, SmallVectorImpl<Operation *> &chain) {
  auto type = dyn_cast<RankedTensorType>(root.getType());
  if (!type || !isa<FloatType>(type.getElementType()))
    return Value();
  auto isHalf = [](Value v) { return near(splatValue(v), 0.5); };
  Value inner = otherOperand(root, isHalf);
  auto mul = inner ? inner.getDefiningOp<MulOp>() : MulOp();
  if (!mul || !onlyUse(inner))
    return Value();
  // Mul(x, Add(...)): either operand may be the Add.
  for (int side = 0; side < 2; ++side) {
    Value x = side ? mul.getRhs() : mul.getLhs();
    Value sum = side ? mul.getLhs() : mul.getRhs();
    auto add = sum.getDefiningOp<AddOp>();
    if (!add || !onlyUse(sum) || x.getType() != type)
      continue;
    Value erfValue =
        otherOperand(add, [](Value v) { return near(splatValue(v), 1.0); });
    auto erf = erfValue ? erfValue.getDefiningOp<ErfOp>() : ErfOp();
    if (!erf || !onlyUse(erfValue))
      continue;
    Value scaled = erf.getInput();
    if (!onlyUse(scaled))
      continue;
    Operation *scale = scaled.getDefiningOp();
    bool ok = false;
    if (auto div = dyn_cast_or_null<DivOp>(scale))
      ok = div.getLhs() == x && near(splatValue(div.getRhs()), std::sqrt(2.0));
    else if (auto m = dyn_cast_or_null<MulOp>(scale))
      ok = otherOperand(m, [](Value v) {
             return near(splatValue(v), 1.0 / std::sqrt(2.0));
           }) == x;
    if (!ok)
      continue;
    chain.assign({root, mul, add, erf, scale});
    return x;
  }
  return Value();
}

struct FuseGelu : tidal::impl::TidalFuseGeluPassBase<FuseGelu> {
  using TidalFuseGeluPassBase::TidalFuseGeluPassBase;

  void runOnOperation() override {
    SmallVector<MulOp> roots;
    getOperation().walk([&](MulOp op) { roots.push_back(op); });
    for (MulOp root : roots) {
      SmallVector<Operation *, 5> chain;
      Value x = matchGelu(root, chain);
      if (!x)
        continue;
      SmallVector<Location> locs;
      for (Operation *op : llvm::reverse(chain))
        locs.push_back(op->getLoc());
      OpBuilder b(root);
      auto gelu = b.create<GeluOp>(FusedLoc::get(&getContext(), locs), x);
      root.getResult().replaceAllUsesWith(gelu.getResult());
      llvm::SetVector<Operation *> constants;
      for (Operation *op : chain)
        for (Value operand : op->getOperands())
          if (auto constant = operand.getDefiningOp<ConstantOp>())
            constants.insert(constant);
      for (Operation *op : chain)
        op->erase();
      for (Operation *constant : constants)
        if (constant->use_empty())
          constant->erase();
      ++numFused;
    }
  }
};

} // namespace
