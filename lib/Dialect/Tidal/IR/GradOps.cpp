//===- GradOps.cpp - type rules of the tidal gradient ops -----------------===//
//
// Backward ops whose result is the forward input's type are verified by
// running the forward shape rule on that result type and comparing with the
// incoming gradient's type.
//
//===----------------------------------------------------------------------===//

#include "tidal/Dialect/Tidal/IR/ShapeUtils.h"
#include "tidal/Dialect/Tidal/IR/TidalOps.h"

#include "mlir/IR/TypeUtilities.h"

using namespace mlir;
using namespace mlir::tidal;

static RankedTensorType tensorType(Value v) {
  return cast<RankedTensorType>(v.getType());
}

/// Checks that `grad` has the shape that the forward op produces from
/// `forwardInput`, given that shape rule's result `expected`.
static LogicalResult checkGradShape(Operation *op, Value grad,
                                    ArrayRef<int64_t> expected,
                                    StringRef forward) {
  auto g = tensorType(grad);
  if (g.getShape() != expected)
    return op->emitOpError("gradient of shape ")
           << shapeToString(g.getShape()) << " does not match the " << forward
           << " output shape " << shapeToString(expected);
  return success();
}

static LogicalResult checkSameElementType(Operation *op) {
  Type t = getElementTypeOrSelf(op->getResult(0).getType());
  if (getElementTypeOrSelf(op->getOperand(0).getType()) != t)
    return op->emitOpError("requires the gradient and the result to have the "
                           "same element type");
  return success();
}

//===----------------------------------------------------------------------===//
// GradientOp
//===----------------------------------------------------------------------===//

LogicalResult GradientOp::inferReturnTypes(MLIRContext *,
                                           std::optional<Location>,
                                           GradientOp::Adaptor adaptor,
                                           SmallVectorImpl<Type> &out) {
  for (Value x : adaptor.getXs())
    out.push_back(x.getType());
  return success();
}

LogicalResult GradientOp::verify() {
  if (tensorType(getY()).getRank() != 0)
    return emitOpError("differentiates a scalar, got y of shape ")
           << shapeToString(tensorType(getY()).getShape());
  if (getXs().empty())
    return emitOpError("needs at least one value to differentiate for");
  return success();
}

//===----------------------------------------------------------------------===//
// Element-wise and softmax backward
//===----------------------------------------------------------------------===//

LogicalResult
DropoutBackwardOp::inferReturnTypes(MLIRContext *, std::optional<Location>,
                                    DropoutBackwardOp::Adaptor adaptor,
                                    SmallVectorImpl<Type> &out) {
  out.push_back(adaptor.getGrad().getType());
  return success();
}

LogicalResult DropoutBackwardOp::verify() {
  if (getGrad().getType().getShape() != getMask().getType().getShape())
    return emitOpError("mask and gradient shapes differ");
  float r = getRatio().convertToFloat();
  if (!(r >= 0.0f && r < 1.0f))
    return emitOpError("ratio must lie in [0, 1), got ") << r;
  return success();
}

static LogicalResult verifyAxis(Operation *op, int64_t axis) {
  int64_t rank = tensorType(op->getOperand(0)).getRank();
  if (axis < 0 || axis >= rank)
    return op->emitOpError("axis ")
           << axis << " out of range for rank " << rank;
  return success();
}

LogicalResult SoftmaxBackwardOp::verify() {
  return verifyAxis(*this, getAxis());
}
LogicalResult LogSoftmaxBackwardOp::verify() {
  return verifyAxis(*this, getAxis());
}

//===----------------------------------------------------------------------===//
// BroadcastToOp
//===----------------------------------------------------------------------===//

LogicalResult BroadcastToOp::verify() {
  auto in = tensorType(getInput()), out = tensorType(getOutput());
  if (in.getElementType() != out.getElementType())
    return emitOpError("requires the same element type in and out");
  if (!broadcastsTo(in.getShape(), out.getShape()))
    return emitOpError("input of shape ")
           << shapeToString(in.getShape()) << " does not broadcast to "
           << shapeToString(out.getShape());
  return success();
}

//===----------------------------------------------------------------------===//
// Convolution and pooling backward
//===----------------------------------------------------------------------===//

/// The forward convolution's output shape for input `x` and weight `w`.
static LogicalResult convOutputShape(Operation *op, ArrayRef<int64_t> x,
                                     ArrayRef<int64_t> w,
                                     ArrayRef<int64_t> strides,
                                     ArrayRef<int64_t> pads,
                                     ArrayRef<int64_t> dilations, int64_t group,
                                     SmallVectorImpl<int64_t> &shape) {
  if (x.size() < 3 || w.size() != x.size())
    return op->emitOpError("expects input and weight of the same rank, 3 or "
                           "more; got ")
           << shapeToString(x) << " and " << shapeToString(w);
  if (group <= 0 || x[1] % group || w[0] % group || w[1] * group != x[1])
    return op->emitOpError("group ")
           << group << " does not fit input " << shapeToString(x)
           << " and weight " << shapeToString(w);
  shape.append({x[0], w[0]});
  return inferWindow(op->getLoc(), x, w.drop_front(2), strides, pads, dilations,
                     false, shape);
}

LogicalResult ConvBackwardDataOp::verify() {
  SmallVector<int64_t> shape;
  if (failed(checkSameElementType(*this)) ||
      failed(convOutputShape(*this, getType().getShape(),
                             getWeight().getType().getShape(), getStrides(),
                             getPads(), getDilations(), getGroup(), shape)))
    return failure();
  return checkGradShape(*this, getGrad(), shape, "convolution");
}

LogicalResult ConvBackwardWeightsOp::verify() {
  SmallVector<int64_t> shape;
  if (failed(checkSameElementType(*this)) ||
      failed(convOutputShape(*this, getInput().getType().getShape(),
                             getType().getShape(), getStrides(), getPads(),
                             getDilations(), getGroup(), shape)))
    return failure();
  return checkGradShape(*this, getGrad(), shape, "convolution");
}

static LogicalResult
verifyPoolBackward(Operation *op, Value grad, ArrayRef<int64_t> inShape,
                   ArrayRef<int64_t> kernel, ArrayRef<int64_t> strides,
                   ArrayRef<int64_t> pads, ArrayRef<int64_t> dilations,
                   bool ceilMode) {
  if (failed(checkSameElementType(op)))
    return failure();
  if (inShape.size() < 3)
    return op->emitOpError("expects an input of rank 3 or more");
  SmallVector<int64_t> shape{inShape[0], inShape[1]};
  if (failed(inferWindow(op->getLoc(), inShape, kernel, strides, pads,
                         dilations, ceilMode, shape)))
    return failure();
  return checkGradShape(op, grad, shape, "pooling");
}

LogicalResult MaxPoolBackwardOp::verify() {
  if (getInput().getType() != getType())
    return emitOpError("result type must be the forward input's type");
  return verifyPoolBackward(*this, getGrad(), getType().getShape(),
                            getKernelShape(), getStrides(), getPads(),
                            getDilations(), getCeilMode());
}

LogicalResult AveragePoolBackwardOp::verify() {
  SmallVector<int64_t> ones(getKernelShape().size(), 1);
  return verifyPoolBackward(*this, getGrad(), getType().getShape(),
                            getKernelShape(), getStrides(), getPads(), ones,
                            getCeilMode());
}

//===----------------------------------------------------------------------===//
// Slice and gather backward
//===----------------------------------------------------------------------===//

LogicalResult SliceBackwardOp::verify() {
  SmallVector<int64_t> shape;
  if (failed(checkSameElementType(*this)) ||
      failed(inferSliceShape(getLoc(), getType().getShape(), getStarts(),
                             getEnds(), getSteps(), shape)))
    return failure();
  return checkGradShape(*this, getGrad(), shape, "slice");
}

LogicalResult GatherBackwardOp::verify() {
  if (failed(checkSameElementType(*this)))
    return failure();
  ArrayRef<int64_t> data = getType().getShape();
  int64_t axis = getAxis();
  if (axis < 0 || axis >= (int64_t)data.size())
    return emitOpError("axis ")
           << axis << " out of range for rank " << data.size();
  SmallVector<int64_t> shape(data.take_front(axis));
  llvm::append_range(shape, getIndices().getType().getShape());
  llvm::append_range(shape, data.drop_front(axis + 1));
  return checkGradShape(*this, getGrad(), shape, "gather");
}

//===----------------------------------------------------------------------===//
// Normalization backward
//===----------------------------------------------------------------------===//

LogicalResult
BatchNormBackwardOp::inferReturnTypes(MLIRContext *, std::optional<Location>,
                                      BatchNormBackwardOp::Adaptor adaptor,
                                      SmallVectorImpl<Type> &out) {
  Type scale = adaptor.getScale().getType();
  out.append({adaptor.getInput().getType(), scale, scale});
  return success();
}

LogicalResult BatchNormBackwardOp::verify() {
  auto x = getInput().getType();
  if (getGrad().getType() != x)
    return emitOpError("gradient and input types differ");
  if (x.getRank() < 2)
    return emitOpError("expects an input of rank 2 or more");
  for (Value v : {getScale(), getBatchMean(), getBatchVar()}) {
    auto t = tensorType(v);
    if (t.getRank() != 1 || t.getDimSize(0) != x.getDimSize(1))
      return emitOpError("expects per-channel operands of shape ")
             << x.getDimSize(1) << ", got " << shapeToString(t.getShape());
  }
  return success();
}

LogicalResult
LayerNormBackwardOp::inferReturnTypes(MLIRContext *, std::optional<Location>,
                                      LayerNormBackwardOp::Adaptor adaptor,
                                      SmallVectorImpl<Type> &out) {
  Type scale = adaptor.getScale().getType();
  out.append({adaptor.getInput().getType(), scale, scale});
  return success();
}

LogicalResult LayerNormBackwardOp::verify() {
  auto x = getInput().getType();
  if (getGrad().getType() != x)
    return emitOpError("gradient and input types differ");
  int64_t axis = getAxis();
  if (axis < 0 || axis >= x.getRank())
    return emitOpError("axis ")
           << axis << " out of range for rank " << x.getRank();
  SmallVector<int64_t> stats(x.getShape());
  std::fill(stats.begin() + axis, stats.end(), 1);
  for (Value v : {getMean(), getInvStdDev()})
    if (tensorType(v).getShape() != ArrayRef<int64_t>(stats))
      return emitOpError("statistics must have shape ")
             << shapeToString(stats) << ", got "
             << shapeToString(tensorType(v).getShape());
  if (!broadcastsTo(getScale().getType().getShape(),
                    x.getShape().drop_front(axis)))
    return emitOpError("scale does not broadcast to the normalized shape");
  return success();
}

//===----------------------------------------------------------------------===//
// Loss backward
//===----------------------------------------------------------------------===//

/// `grad_loss` is a scalar for a reduced loss and shaped like the labels
/// otherwise; `labels` is `[N, d...]` for scores `[N, C, d...]`.
static LogicalResult verifyClassLossGrad(Operation *op, Value gradLoss,
                                         ArrayRef<int64_t> scores, Value labels,
                                         Value weights, Reduction reduction) {
  if (scores.size() < 2)
    return op->emitOpError("expects scores of rank 2 or more");
  SmallVector<int64_t> expected{scores[0]};
  llvm::append_range(expected, scores.drop_front(2));
  if (tensorType(labels).getShape() != ArrayRef<int64_t>(expected))
    return op->emitOpError("labels of shape ")
           << shapeToString(tensorType(labels).getShape())
           << " do not match scores of shape " << shapeToString(scores);
  ArrayRef<int64_t> g = tensorType(gradLoss).getShape();
  if (reduction == Reduction::none ? g != ArrayRef<int64_t>(expected)
                                   : !g.empty())
    return op->emitOpError("loss gradient of shape ")
           << shapeToString(g) << " does not fit the reduction";
  if (weights && (tensorType(weights).getRank() != 1 ||
                  tensorType(weights).getDimSize(0) != scores[1]))
    return op->emitOpError("weights must have one entry per class");
  return success();
}

LogicalResult SoftmaxCrossEntropyLossBackwardOp::inferReturnTypes(
    MLIRContext *, std::optional<Location>,
    SoftmaxCrossEntropyLossBackwardOp::Adaptor adaptor,
    SmallVectorImpl<Type> &out) {
  out.push_back(adaptor.getLogProb().getType());
  return success();
}

LogicalResult SoftmaxCrossEntropyLossBackwardOp::verify() {
  return verifyClassLossGrad(*this, getGradLoss(),
                             getLogProb().getType().getShape(), getLabels(),
                             getWeights(), getReduction());
}

LogicalResult NllLossBackwardOp::verify() {
  return verifyClassLossGrad(*this, getGradLoss(), getType().getShape(),
                             getTarget(), getWeight(), getReduction());
}
