//===- LogicOps.cpp - comparisons, logic and selection --------------------===//
//
// Type inference and verification of the comparison, logical and Where ops
// (TidalLogicOps.td); tidal.max and tidal.min are binary arithmetic ops
// (TidalOps.cpp).
//
//===----------------------------------------------------------------------===//

#include "tidal/Dialect/Tidal/IR/ShapeUtils.h"
#include "tidal/Dialect/Tidal/IR/TidalOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/TypeUtilities.h"

using namespace mlir;
using namespace mlir::tidal;

/// The broadcast shape of `values`, or an error naming their shapes.
static FailureOr<SmallVector<int64_t>> broadcastAll(std::optional<Location> loc,
                                                    ValueRange values) {
  SmallVector<int64_t> shape;
  std::string shapes;
  for (Value v : values) {
    ArrayRef<int64_t> s = cast<RankedTensorType>(v.getType()).getShape();
    shapes += (shapes.empty() ? "[" : " and [") + shapeToString(s) + "]";
    auto b = broadcastShapes(shape, s);
    if (!b)
      return emitOptionalError(loc, "operand shapes ", shapes,
                               " do not broadcast");
    shape = *b;
  }
  return shape;
}

static LogicalResult inferMask(MLIRContext *ctx, std::optional<Location> loc,
                               Value lhs, Value rhs,
                               SmallVectorImpl<Type> &out) {
  auto shape = broadcastAll(loc, {lhs, rhs});
  if (failed(shape))
    return failure();
  out.push_back(RankedTensorType::get(*shape, IntegerType::get(ctx, 1)));
  return success();
}

#define TIDAL_MASK_OP(Op)                                                      \
  LogicalResult Op::inferReturnTypes(                                          \
      MLIRContext *ctx, std::optional<Location> loc, Op::Adaptor adaptor,      \
      SmallVectorImpl<Type> &out) {                                            \
    return inferMask(ctx, loc, adaptor.getLhs(), adaptor.getRhs(), out);       \
  }
TIDAL_MASK_OP(EqualOp)
TIDAL_MASK_OP(LessOp)
TIDAL_MASK_OP(LessOrEqualOp)
TIDAL_MASK_OP(GreaterOp)
TIDAL_MASK_OP(GreaterOrEqualOp)
TIDAL_MASK_OP(LogicalAndOp)
TIDAL_MASK_OP(LogicalOrOp)
TIDAL_MASK_OP(LogicalXorOp)
#undef TIDAL_MASK_OP

static LogicalResult verifyCompare(Operation *op) {
  if (getElementTypeOrSelf(op->getOperand(0).getType()) !=
      getElementTypeOrSelf(op->getOperand(1).getType()))
    return op->emitOpError("compares operands of different element types ")
           << getElementTypeOrSelf(op->getOperand(0).getType()) << " and "
           << getElementTypeOrSelf(op->getOperand(1).getType());
  return success();
}

LogicalResult EqualOp::verify() { return verifyCompare(*this); }
LogicalResult LessOp::verify() { return verifyCompare(*this); }
LogicalResult LessOrEqualOp::verify() { return verifyCompare(*this); }
LogicalResult GreaterOp::verify() { return verifyCompare(*this); }
LogicalResult GreaterOrEqualOp::verify() { return verifyCompare(*this); }

LogicalResult WhereOp::inferReturnTypes(MLIRContext *,
                                        std::optional<Location> loc,
                                        WhereOp::Adaptor adaptor,
                                        SmallVectorImpl<Type> &out) {
  auto shape = broadcastAll(
      loc, {adaptor.getCondition(), adaptor.getLhs(), adaptor.getRhs()});
  if (failed(shape))
    return failure();
  out.push_back(RankedTensorType::get(
      *shape, getElementTypeOrSelf(adaptor.getLhs().getType())));
  return success();
}

LogicalResult WhereOp::verify() {
  Type l = getElementTypeOrSelf(getLhs().getType());
  Type r = getElementTypeOrSelf(getRhs().getType());
  if (l != r)
    return emitOpError("selects between element types ")
           << l << " and " << r << "; they must match";
  return success();
}

LogicalResult CastOp::verify() {
  auto in = cast<RankedTensorType>(getInput().getType());
  auto out = cast<RankedTensorType>(getOutput().getType());
  if (in.getShape() != out.getShape())
    return emitOpError("result shape ")
           << shapeToString(out.getShape()) << " differs from the input's "
           << shapeToString(in.getShape());
  return success();
}
