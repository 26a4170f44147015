//===- TidalOps.cpp - element-wise and linear-algebra tidal ops -----------===//
//
// Type inference and verification of the element-wise and matrix ops; the
// other op families live in NNOps.cpp and ShapeOps.cpp.
//
//===----------------------------------------------------------------------===//

#include "tidal/Dialect/Tidal/IR/TidalOps.h"
#include "tidal/Dialect/Tidal/IR/ShapeUtils.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/TypeUtilities.h"

using namespace mlir;
using namespace mlir::tidal;

#define GET_OP_CLASSES
#include "tidal/Dialect/Tidal/IR/TidalInterfaces.cpp.inc"
#include "tidal/Dialect/Tidal/IR/TidalOps.cpp.inc"

//===----------------------------------------------------------------------===//
// Binary element-wise ops
//===----------------------------------------------------------------------===//

static LogicalResult inferBinary(std::optional<Location> loc, Value lhs,
                                 Value rhs, SmallVectorImpl<Type> &out) {
  auto l = cast<RankedTensorType>(lhs.getType());
  auto r = cast<RankedTensorType>(rhs.getType());
  auto shape = broadcastShapes(l.getShape(), r.getShape());
  if (!shape)
    return emitOptionalError(loc, "operand shapes ",
                             shapeToString(l.getShape()), " and ",
                             shapeToString(r.getShape()), " do not broadcast");
  out.push_back(RankedTensorType::get(*shape, l.getElementType()));
  return success();
}

static LogicalResult verifySameElementTypes(Operation *op) {
  if (getElementTypeOrSelf(op->getOperand(0).getType()) !=
      getElementTypeOrSelf(op->getOperand(1).getType()))
    return op->emitOpError("requires operands of the same element type");
  return success();
}

#define TIDAL_BINARY_OP(Op, SameTypes)                                         \
  LogicalResult Op::inferReturnTypes(                                          \
      MLIRContext *, std::optional<Location> loc, Op::Adaptor adaptor,         \
      SmallVectorImpl<Type> &out) {                                            \
    return inferBinary(loc, adaptor.getLhs(), adaptor.getRhs(), out);          \
  }                                                                            \
  LogicalResult Op::verify() {                                                 \
    return SameTypes ? verifySameElementTypes(*this) : success();              \
  }

TIDAL_BINARY_OP(AddOp, true)
TIDAL_BINARY_OP(SubOp, true)
TIDAL_BINARY_OP(MulOp, true)
TIDAL_BINARY_OP(DivOp, true)
TIDAL_BINARY_OP(PowOp, false)
TIDAL_BINARY_OP(MaxOp, true)
TIDAL_BINARY_OP(MinOp, true)
#undef TIDAL_BINARY_OP

//===----------------------------------------------------------------------===//
// Gemm
//===----------------------------------------------------------------------===//

LogicalResult GemmOp::inferReturnTypes(MLIRContext *,
                                       std::optional<Location> loc,
                                       GemmOp::Adaptor adaptor,
                                       SmallVectorImpl<Type> &out) {
  auto a = cast<RankedTensorType>(adaptor.getA().getType());
  auto b = cast<RankedTensorType>(adaptor.getB().getType());
  if (a.getRank() != 2 || b.getRank() != 2)
    return emitOptionalError(loc, "expects 2-D operands A and B, got ",
                             shapeToString(a.getShape()), " and ",
                             shapeToString(b.getShape()));
  bool ta = adaptor.getTransA(), tb = adaptor.getTransB();
  int64_t m = a.getDimSize(ta ? 1 : 0), ka = a.getDimSize(ta ? 0 : 1);
  int64_t kb = b.getDimSize(tb ? 1 : 0), n = b.getDimSize(tb ? 0 : 1);
  if (ka != kb)
    return emitOptionalError(loc, "inner dimensions differ: A gives ", ka,
                             ", B gives ", kb);
  out.push_back(RankedTensorType::get({m, n}, a.getElementType()));
  return success();
}

LogicalResult GemmOp::verify() {
  if (getA().getType().getElementType() != getB().getType().getElementType())
    return emitOpError("requires A and B of the same element type");
  if (Value c = getC()) {
    auto ct = cast<RankedTensorType>(c.getType());
    if (ct.getElementType() != getA().getType().getElementType())
      return emitOpError("requires C of the same element type as A and B");
    if (!broadcastsTo(ct.getShape(), getType().getShape()))
      return emitOpError("C of shape ")
             << shapeToString(ct.getShape()) << " does not broadcast to "
             << shapeToString(getType().getShape());
  }
  return success();
}

//===----------------------------------------------------------------------===//
// MatMul
//===----------------------------------------------------------------------===//

LogicalResult MatMulOp::inferReturnTypes(MLIRContext *,
                                         std::optional<Location> loc,
                                         MatMulOp::Adaptor adaptor,
                                         SmallVectorImpl<Type> &out) {
  auto l = cast<RankedTensorType>(adaptor.getLhs().getType());
  auto r = cast<RankedTensorType>(adaptor.getRhs().getType());
  if (l.getRank() == 0 || r.getRank() == 0)
    return emitOptionalError(loc, "expects operands of rank 1 or more");
  SmallVector<int64_t> ls(l.getShape()), rs(r.getShape());
  bool lVec = ls.size() == 1, rVec = rs.size() == 1;
  if (lVec)
    ls.insert(ls.begin(), 1);
  if (rVec)
    rs.push_back(1);
  int64_t k1 = ls.back(), k2 = rs[rs.size() - 2];
  if (k1 != k2)
    return emitOptionalError(
        loc, "inner dimensions differ: ", shapeToString(l.getShape()), " x ",
        shapeToString(r.getShape()));
  auto batch = broadcastShapes(ArrayRef<int64_t>(ls).drop_back(2),
                               ArrayRef<int64_t>(rs).drop_back(2));
  if (!batch)
    return emitOptionalError(loc, "batch dimensions of ",
                             shapeToString(l.getShape()), " and ",
                             shapeToString(r.getShape()), " do not broadcast");
  SmallVector<int64_t> shape = *batch;
  if (!lVec)
    shape.push_back(ls[ls.size() - 2]);
  if (!rVec)
    shape.push_back(rs.back());
  out.push_back(RankedTensorType::get(shape, l.getElementType()));
  return success();
}

LogicalResult MatMulOp::verify() { return verifySameElementTypes(*this); }
