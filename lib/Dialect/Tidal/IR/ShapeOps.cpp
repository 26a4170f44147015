//===- ShapeOps.cpp - constants and data-movement ops ---------------------===//

#include "tidal/Dialect/Tidal/IR/ShapeUtils.h"
#include "tidal/Dialect/Tidal/IR/TidalOps.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/STLExtras.h"

using namespace mlir;
using namespace mlir::tidal;

static RankedTensorType inputType(Value v) {
  return cast<RankedTensorType>(v.getType());
}

//===----------------------------------------------------------------------===//
// Constant
//===----------------------------------------------------------------------===//

LogicalResult ConstantOp::inferReturnTypes(MLIRContext *,
                                           std::optional<Location> loc,
                                           ConstantOp::Adaptor adaptor,
                                           SmallVectorImpl<Type> &out) {
  auto type = dyn_cast<RankedTensorType>(adaptor.getValue().getType());
  if (!type)
    return emitOptionalError(loc, "value must be a ranked tensor");
  out.push_back(type);
  return success();
}

OpFoldResult ConstantOp::fold(FoldAdaptor) { return getValue(); }

//===----------------------------------------------------------------------===//
// Reshape, Flatten, Squeeze, Unsqueeze
//===----------------------------------------------------------------------===//

LogicalResult ReshapeOp::inferReturnTypes(MLIRContext *,
                                          std::optional<Location> loc,
                                          ReshapeOp::Adaptor adaptor,
                                          SmallVectorImpl<Type> &out) {
  auto x = inputType(adaptor.getInput());
  ArrayRef<int64_t> shape = adaptor.getShape();
  if (llvm::any_of(shape, [](int64_t d) { return d < 0; }))
    return emitOptionalError(loc,
                             "shape must be resolved and non-negative, "
                             "got ",
                             shapeToString(shape));
  if (numElements(shape) != x.getNumElements())
    return emitOptionalError(
        loc, "cannot reshape ", shapeToString(x.getShape()), " (",
        x.getNumElements(), " elements) to ", shapeToString(shape));
  out.push_back(RankedTensorType::get(shape, x.getElementType()));
  return success();
}

LogicalResult FlattenOp::inferReturnTypes(MLIRContext *,
                                          std::optional<Location> loc,
                                          FlattenOp::Adaptor adaptor,
                                          SmallVectorImpl<Type> &out) {
  auto x = inputType(adaptor.getInput());
  int64_t axis = adaptor.getAxis();
  if (axis < 0 || axis > x.getRank())
    return emitOptionalError(loc, "axis ", axis, " out of range for rank ",
                             x.getRank());
  int64_t outer = numElements(x.getShape().take_front(axis));
  int64_t inner = numElements(x.getShape().drop_front(axis));
  out.push_back(RankedTensorType::get({outer, inner}, x.getElementType()));
  return success();
}

LogicalResult SqueezeOp::inferReturnTypes(MLIRContext *,
                                          std::optional<Location> loc,
                                          SqueezeOp::Adaptor adaptor,
                                          SmallVectorImpl<Type> &out) {
  auto x = inputType(adaptor.getInput());
  ArrayRef<int64_t> axes = adaptor.getAxes();
  if (failed(checkSortedAxes(loc, axes, x.getRank())))
    return failure();
  SmallVector<int64_t> shape;
  for (int64_t i = 0; i < x.getRank(); ++i) {
    if (!llvm::is_contained(axes, i)) {
      shape.push_back(x.getDimSize(i));
      continue;
    }
    if (x.getDimSize(i) != 1)
      return emitOptionalError(loc, "cannot squeeze dim ", i, " of size ",
                               x.getDimSize(i));
  }
  out.push_back(RankedTensorType::get(shape, x.getElementType()));
  return success();
}

LogicalResult UnsqueezeOp::inferReturnTypes(MLIRContext *,
                                            std::optional<Location> loc,
                                            UnsqueezeOp::Adaptor adaptor,
                                            SmallVectorImpl<Type> &out) {
  auto x = inputType(adaptor.getInput());
  ArrayRef<int64_t> axes = adaptor.getAxes();
  int64_t rank = x.getRank() + axes.size();
  if (failed(checkSortedAxes(loc, axes, rank)))
    return failure();
  SmallVector<int64_t> shape;
  auto dims = x.getShape();
  for (int64_t i = 0, next = 0; i < rank; ++i)
    shape.push_back(llvm::is_contained(axes, i) ? 1 : dims[next++]);
  out.push_back(RankedTensorType::get(shape, x.getElementType()));
  return success();
}

//===----------------------------------------------------------------------===//
// Transpose, Concat, Split, Slice, Gather
//===----------------------------------------------------------------------===//

LogicalResult TransposeOp::inferReturnTypes(MLIRContext *,
                                            std::optional<Location> loc,
                                            TransposeOp::Adaptor adaptor,
                                            SmallVectorImpl<Type> &out) {
  auto x = inputType(adaptor.getInput());
  ArrayRef<int64_t> perm = adaptor.getPerm();
  if ((int64_t)perm.size() != x.getRank())
    return emitOptionalError(loc, "perm has ", perm.size(),
                             " entries for rank ", x.getRank());
  SmallVector<bool> seen(perm.size(), false);
  SmallVector<int64_t> shape;
  for (int64_t p : perm) {
    if (p < 0 || p >= x.getRank() || seen[p])
      return emitOptionalError(loc, "perm is not a permutation");
    seen[p] = true;
    shape.push_back(x.getDimSize(p));
  }
  out.push_back(RankedTensorType::get(shape, x.getElementType()));
  return success();
}

LogicalResult ConcatOp::inferReturnTypes(MLIRContext *,
                                         std::optional<Location> loc,
                                         ConcatOp::Adaptor adaptor,
                                         SmallVectorImpl<Type> &out) {
  ValueRange inputs = adaptor.getInputs();
  if (inputs.empty())
    return emitOptionalError(loc, "expects at least one input");
  auto first = inputType(inputs.front());
  int64_t axis = adaptor.getAxis();
  if (axis < 0 || axis >= first.getRank())
    return emitOptionalError(loc, "axis ", axis, " out of range for rank ",
                             first.getRank());
  SmallVector<int64_t> shape(first.getShape());
  shape[axis] = 0;
  for (Value v : inputs) {
    auto t = inputType(v);
    if (t.getElementType() != first.getElementType() ||
        t.getRank() != first.getRank())
      return emitOptionalError(loc, "inputs differ in rank or element type");
    for (int64_t i = 0; i < t.getRank(); ++i)
      if (i != axis && t.getDimSize(i) != first.getDimSize(i))
        return emitOptionalError(
            loc, "input of shape ", shapeToString(t.getShape()),
            " does not match ", shapeToString(first.getShape()),
            " outside axis ", axis);
    shape[axis] += t.getDimSize(axis);
  }
  out.push_back(RankedTensorType::get(shape, first.getElementType()));
  return success();
}

LogicalResult SplitOp::inferReturnTypes(MLIRContext *,
                                        std::optional<Location> loc,
                                        SplitOp::Adaptor adaptor,
                                        SmallVectorImpl<Type> &out) {
  auto x = inputType(adaptor.getInput());
  int64_t axis = adaptor.getAxis();
  if (axis < 0 || axis >= x.getRank())
    return emitOptionalError(loc, "axis ", axis, " out of range for rank ",
                             x.getRank());
  ArrayRef<int64_t> sizes = adaptor.getSizes();
  int64_t total = 0;
  for (int64_t s : sizes) {
    if (s < 0)
      return emitOptionalError(loc, "split sizes must be non-negative");
    total += s;
    SmallVector<int64_t> shape(x.getShape());
    shape[axis] = s;
    out.push_back(RankedTensorType::get(shape, x.getElementType()));
  }
  if (sizes.empty() || total != x.getDimSize(axis))
    return emitOptionalError(loc, "split sizes sum to ", total, ", dim ", axis,
                             " has ", x.getDimSize(axis));
  return success();
}

LogicalResult SliceOp::inferReturnTypes(MLIRContext *,
                                        std::optional<Location> loc,
                                        SliceOp::Adaptor adaptor,
                                        SmallVectorImpl<Type> &out) {
  auto x = inputType(adaptor.getInput());
  SmallVector<int64_t> shape;
  if (failed(inferSliceShape(loc, x.getShape(), adaptor.getStarts(),
                             adaptor.getEnds(), adaptor.getSteps(), shape)))
    return failure();
  out.push_back(RankedTensorType::get(shape, x.getElementType()));
  return success();
}

LogicalResult
ScatterExtremeOp::inferReturnTypes(MLIRContext *, std::optional<Location>,
                                   ScatterExtremeOp::Adaptor adaptor,
                                   SmallVectorImpl<Type> &out) {
  out.push_back(adaptor.getData().getType());
  return success();
}

LogicalResult ScatterExtremeOp::verify() {
  auto data = getData().getType(), updates = getUpdates().getType();
  if (data.getElementType() != updates.getElementType())
    return emitOpError("updates' element type differs from the data's");
  int64_t axis = getAxis();
  if (axis < 0 || axis >= data.getRank())
    return emitOpError("axis ")
           << axis << " out of range for rank " << data.getRank();
  SmallVector<int64_t> shape(data.getShape().take_front(axis));
  llvm::append_range(shape, getIndices().getType().getShape());
  llvm::append_range(shape, data.getShape().drop_front(axis + 1));
  if (updates.getShape() != ArrayRef<int64_t>(shape))
    return emitOpError("updates must have the gathered shape [")
           << shape << "], got " << updates;
  return success();
}

LogicalResult GatherOp::verify() {
  std::optional<int64_t> padding = getPaddingIndex();
  if (!padding)
    return success();
  if (getAxis() != 0)
    return emitOpError("padding_index needs axis 0 (an embedding lookup), "
                       "not axis ")
           << getAxis();
  int64_t rows = cast<RankedTensorType>(getData().getType()).getDimSize(0);
  if (*padding < 0 || *padding >= rows)
    return emitOpError("padding_index ")
           << *padding << " is not a row of the " << rows << "-row data";
  return success();
}

LogicalResult GatherOp::inferReturnTypes(MLIRContext *,
                                         std::optional<Location> loc,
                                         GatherOp::Adaptor adaptor,
                                         SmallVectorImpl<Type> &out) {
  auto data = inputType(adaptor.getData());
  auto indices = inputType(adaptor.getIndices());
  int64_t axis = adaptor.getAxis();
  if (axis < 0 || axis >= data.getRank())
    return emitOptionalError(loc, "axis ", axis, " out of range for rank ",
                             data.getRank());
  SmallVector<int64_t> shape(data.getShape().take_front(axis));
  llvm::append_range(shape, indices.getShape());
  llvm::append_range(shape, data.getShape().drop_front(axis + 1));
  out.push_back(RankedTensorType::get(shape, data.getElementType()));
  return success();
}
