//===- ReduceOps.cpp - reductions over axes, argmax and argmin ------------===//
//
// Type inference and verification of the ops of TidalReduceOps.td.
//
//===----------------------------------------------------------------------===//

#include "tidal/Dialect/Tidal/IR/ShapeUtils.h"
#include "tidal/Dialect/Tidal/IR/TidalOps.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/STLExtras.h"

using namespace mlir;
using namespace mlir::tidal;

/// The shape of `input` with `axes` removed, or kept as 1 with `keepdims`.
static LogicalResult inferReduce(std::optional<Location> loc, Value input,
                                 ArrayRef<int64_t> axes, bool keepdims,
                                 Type elementType, SmallVectorImpl<Type> &out) {
  auto x = cast<RankedTensorType>(input.getType());
  if (failed(checkSortedAxes(loc, axes, x.getRank())))
    return failure();
  SmallVector<int64_t> shape;
  for (int64_t i = 0; i < x.getRank(); ++i) {
    if (!llvm::is_contained(axes, i))
      shape.push_back(x.getDimSize(i));
    else if (keepdims)
      shape.push_back(1);
  }
  out.push_back(RankedTensorType::get(shape, elementType));
  return success();
}

#define TIDAL_REDUCE_OP(Op)                                                    \
  LogicalResult Op::inferReturnTypes(                                          \
      MLIRContext *, std::optional<Location> loc, Op::Adaptor adaptor,         \
      SmallVectorImpl<Type> &out) {                                            \
    return inferReduce(                                                        \
        loc, adaptor.getInput(), adaptor.getAxes(), adaptor.getKeepdims(),     \
        cast<RankedTensorType>(adaptor.getInput().getType()).getElementType(), \
        out);                                                                  \
  }                                                                            \
  LogicalResult Op::verify() {                                                 \
    return checkSortedAxes(getLoc(), getAxes(),                                \
                           getInput().getType().getRank());                    \
  }
TIDAL_REDUCE_OP(ReduceMeanOp)
TIDAL_REDUCE_OP(ReduceSumOp)
TIDAL_REDUCE_OP(ReduceMaxOp)
TIDAL_REDUCE_OP(ReduceMinOp)
TIDAL_REDUCE_OP(ReduceProdOp)
#undef TIDAL_REDUCE_OP

/// The axis is in range and, since an index along an empty axis does not
/// exist, of nonzero extent.
static LogicalResult verifyArgReduce(Operation *op, int64_t axis) {
  auto x = cast<RankedTensorType>(op->getOperand(0).getType());
  if (failed(checkSortedAxes(op->getLoc(), axis, x.getRank())))
    return failure();
  if (x.getDimSize(axis) == 0)
    return op->emitOpError("takes an index along axis ")
           << axis << " of extent 0";
  return success();
}

#define TIDAL_ARG_REDUCE_OP(Op)                                                \
  LogicalResult Op::inferReturnTypes(                                          \
      MLIRContext *ctx, std::optional<Location> loc, Op::Adaptor adaptor,      \
      SmallVectorImpl<Type> &out) {                                            \
    int64_t axis = adaptor.getAxis();                                          \
    return inferReduce(loc, adaptor.getInput(), ArrayRef<int64_t>(axis),       \
                       adaptor.getKeepdims(), IntegerType::get(ctx, 64), out); \
  }                                                                            \
  LogicalResult Op::verify() { return verifyArgReduce(*this, getAxis()); }
TIDAL_ARG_REDUCE_OP(ArgMaxOp)
TIDAL_ARG_REDUCE_OP(ArgMinOp)
#undef TIDAL_ARG_REDUCE_OP
