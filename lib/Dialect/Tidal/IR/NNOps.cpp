//===- NNOps.cpp - convolution, pooling, normalization and loss ops -------===//

#include "tidal/Dialect/Tidal/IR/ShapeUtils.h"
#include "tidal/Dialect/Tidal/IR/TidalOps.h"

#include "mlir/IR/Builders.h"

#include <cmath>

using namespace mlir;
using namespace mlir::tidal;

static LogicalResult requireRankAtLeast(std::optional<Location> loc,
                                        RankedTensorType t, int64_t rank,
                                        StringRef what) {
  if (t.getRank() < rank)
    return emitOptionalError(loc, "expects ", what, " of rank ", rank,
                             " or more, got ", shapeToString(t.getShape()));
  return success();
}

//===----------------------------------------------------------------------===//
// Conv
//===----------------------------------------------------------------------===//

LogicalResult ConvOp::inferReturnTypes(MLIRContext *,
                                       std::optional<Location> loc,
                                       ConvOp::Adaptor adaptor,
                                       SmallVectorImpl<Type> &out) {
  auto x = cast<RankedTensorType>(adaptor.getInput().getType());
  auto w = cast<RankedTensorType>(adaptor.getWeight().getType());
  if (failed(requireRankAtLeast(loc, x, 3, "input")))
    return failure();
  if (w.getRank() != x.getRank())
    return emitOptionalError(loc, "weight rank ", w.getRank(),
                             " differs from input rank ", x.getRank());
  int64_t group = adaptor.getGroup();
  if (group <= 0 || x.getDimSize(1) % group || w.getDimSize(0) % group)
    return emitOptionalError(loc, "group ", group,
                             " must divide input and output channels");
  if (w.getDimSize(1) * group != x.getDimSize(1))
    return emitOptionalError(loc, "weight expects ", w.getDimSize(1) * group,
                             " input channels, input has ", x.getDimSize(1));
  SmallVector<int64_t> shape{x.getDimSize(0), w.getDimSize(0)};
  if (failed(inferWindow(loc, x.getShape(), w.getShape().drop_front(2),
                         adaptor.getStrides(), adaptor.getPads(),
                         adaptor.getDilations(), false, shape)))
    return failure();
  out.push_back(RankedTensorType::get(shape, x.getElementType()));
  return success();
}

LogicalResult ConvOp::verify() {
  RankedTensorType x = getInput().getType(), w = getWeight().getType();
  if (w.getElementType() != x.getElementType())
    return emitOpError("requires input and weight of the same element type");
  // Verifiers run before the inferred result types are checked, so the
  // weight's rank is not known to be right yet; inferReturnTypes reports it.
  Value b = getBias();
  if (!b || w.getRank() == 0)
    return success();
  auto bt = cast<RankedTensorType>(b.getType());
  if (bt.getElementType() != x.getElementType())
    return emitOpError("requires a bias of the input's element type");
  if (bt.getRank() != 1 || bt.getDimSize(0) != w.getDimSize(0))
    return emitOpError("bias must be 1-D with one entry per output channel");
  return success();
}

//===----------------------------------------------------------------------===//
// Pooling
//===----------------------------------------------------------------------===//

LogicalResult MaxPoolOp::inferReturnTypes(MLIRContext *,
                                          std::optional<Location> loc,
                                          MaxPoolOp::Adaptor adaptor,
                                          SmallVectorImpl<Type> &out) {
  auto x = cast<RankedTensorType>(adaptor.getInput().getType());
  if (failed(requireRankAtLeast(loc, x, 3, "input")))
    return failure();
  SmallVector<int64_t> shape{x.getDimSize(0), x.getDimSize(1)};
  if (failed(inferWindow(loc, x.getShape(), adaptor.getKernelShape(),
                         adaptor.getStrides(), adaptor.getPads(),
                         adaptor.getDilations(), adaptor.getCeilMode(), shape)))
    return failure();
  out.push_back(RankedTensorType::get(shape, x.getElementType()));
  return success();
}

LogicalResult AveragePoolOp::inferReturnTypes(MLIRContext *,
                                              std::optional<Location> loc,
                                              AveragePoolOp::Adaptor adaptor,
                                              SmallVectorImpl<Type> &out) {
  auto x = cast<RankedTensorType>(adaptor.getInput().getType());
  if (failed(requireRankAtLeast(loc, x, 3, "input")))
    return failure();
  SmallVector<int64_t> shape{x.getDimSize(0), x.getDimSize(1)};
  SmallVector<int64_t> ones(adaptor.getKernelShape().size(), 1);
  if (failed(inferWindow(loc, x.getShape(), adaptor.getKernelShape(),
                         adaptor.getStrides(), adaptor.getPads(), ones,
                         adaptor.getCeilMode(), shape)))
    return failure();
  out.push_back(RankedTensorType::get(shape, x.getElementType()));
  return success();
}

LogicalResult GlobalAveragePoolOp::inferReturnTypes(
    MLIRContext *, std::optional<Location> loc,
    GlobalAveragePoolOp::Adaptor adaptor, SmallVectorImpl<Type> &out) {
  auto x = cast<RankedTensorType>(adaptor.getInput().getType());
  if (failed(requireRankAtLeast(loc, x, 3, "input")))
    return failure();
  SmallVector<int64_t> shape(x.getShape());
  std::fill(shape.begin() + 2, shape.end(), 1);
  out.push_back(RankedTensorType::get(shape, x.getElementType()));
  return success();
}

//===----------------------------------------------------------------------===//
// Normalization
//===----------------------------------------------------------------------===//

/// Checks that every per-channel operand is `[C]` for an `[N, C, ...]` input.
static LogicalResult verifyChannelOperands(Operation *op, ValueRange channels) {
  auto x = cast<RankedTensorType>(op->getOperand(0).getType());
  if (x.getRank() < 2)
    return op->emitOpError("expects an input of rank 2 or more");
  for (Value v : channels) {
    auto t = cast<RankedTensorType>(v.getType());
    if (t.getRank() != 1 || t.getDimSize(0) != x.getDimSize(1))
      return op->emitOpError("expects per-channel operands of shape ")
             << x.getDimSize(1) << ", got " << shapeToString(t.getShape());
  }
  return success();
}

/// The fused epilogue attributes: clip_min and clip_max together or
/// neither, and not with relu.
static LogicalResult verifyEpilogue(Operation *op, bool relu,
                                    std::optional<APFloat> clipMin,
                                    std::optional<APFloat> clipMax) {
  if (clipMin.has_value() != clipMax.has_value())
    return op->emitOpError("expects clip_min and clip_max together");
  if (relu && clipMin)
    return op->emitOpError("expects at most one fused epilogue (relu or "
                           "clip_min/clip_max)");
  return success();
}

LogicalResult
BatchNormInferenceOp::inferReturnTypes(MLIRContext *, std::optional<Location>,
                                       BatchNormInferenceOp::Adaptor adaptor,
                                       SmallVectorImpl<Type> &out) {
  out.push_back(adaptor.getInput().getType());
  return success();
}

LogicalResult BatchNormInferenceOp::verify() {
  if (failed(verifyEpilogue(*this, getRelu(), getClipMin(), getClipMax())))
    return failure();
  return verifyChannelOperands(*this,
                               {getScale(), getBias(), getMean(), getVar()});
}

LogicalResult
BatchNormTrainingOp::inferReturnTypes(MLIRContext *, std::optional<Location>,
                                      BatchNormTrainingOp::Adaptor adaptor,
                                      SmallVectorImpl<Type> &out) {
  Type mean = adaptor.getRunningMean().getType();
  Type var = adaptor.getRunningVar().getType();
  out.append({adaptor.getInput().getType(), mean, var, mean, var});
  return success();
}

SmallVector<unsigned, 2>
BatchNormTrainingOp::getInPlaceOperands(unsigned result) {
  // new_running_mean <- running_mean, new_running_var <- running_var
  if (result == 1 || result == 2)
    return {result + 2};
  return {};
}

LogicalResult BatchNormTrainingOp::verify() {
  float m = getMomentum().convertToFloat();
  if (!(m >= 0.0f && m <= 1.0f))
    return emitOpError("momentum must lie in [0, 1], got ") << m;
  if (failed(verifyEpilogue(*this, getRelu(), getClipMin(), getClipMax())))
    return failure();
  return verifyChannelOperands(
      *this, {getScale(), getBias(), getRunningMean(), getRunningVar()});
}

LogicalResult LayerNormOp::inferReturnTypes(MLIRContext *,
                                            std::optional<Location> loc,
                                            LayerNormOp::Adaptor adaptor,
                                            SmallVectorImpl<Type> &out) {
  auto x = cast<RankedTensorType>(adaptor.getInput().getType());
  int64_t axis = adaptor.getAxis();
  if (axis < 0 || axis >= x.getRank())
    return emitOptionalError(loc, "axis ", axis, " out of range for rank ",
                             x.getRank());
  SmallVector<int64_t> stats(x.getShape());
  std::fill(stats.begin() + axis, stats.end(), 1);
  auto statsType = RankedTensorType::get(stats, x.getElementType());
  out.append({x, statsType, statsType});
  return success();
}

LogicalResult LayerNormOp::verify() {
  RankedTensorType x = getInput().getType();
  int64_t axis = getAxis();
  // Verifiers run before the inferred result types are checked, so the axis
  // is not known to be in range yet; inferReturnTypes reports it.
  if (axis < 0 || axis >= x.getRank())
    return success();
  ArrayRef<int64_t> normalized = x.getShape().drop_front(axis);
  for (Value v : {getScale(), getBias()}) {
    if (!v)
      continue;
    auto t = cast<RankedTensorType>(v.getType());
    if (t.getElementType() != x.getElementType())
      return emitOpError("requires scale and bias of the input's element "
                         "type");
    if (!broadcastsTo(t.getShape(), normalized))
      return emitOpError("scale and bias must broadcast to the normalized "
                         "shape ")
             << shapeToString(normalized) << ", got "
             << shapeToString(t.getShape());
  }
  return success();
}

LogicalResult DropoutOp::inferReturnTypes(MLIRContext *ctx,
                                          std::optional<Location>,
                                          DropoutOp::Adaptor adaptor,
                                          SmallVectorImpl<Type> &out) {
  auto x = cast<RankedTensorType>(adaptor.getInput().getType());
  out.push_back(x);
  out.push_back(RankedTensorType::get(x.getShape(), IntegerType::get(ctx, 1)));
  return success();
}

LogicalResult DropoutOp::verify() {
  float r = getRatio().convertToFloat();
  if (!(r >= 0.0f && r < 1.0f))
    return emitOpError("ratio must lie in [0, 1), got ") << r;
  return success();
}

LogicalResult RandomNormalOp::verify() {
  float mean = getMean().convertToFloat(), scale = getScale().convertToFloat();
  if (!std::isfinite(mean) || !std::isfinite(scale) || scale < 0.0f)
    return emitOpError("mean must be finite and scale finite and >= 0, got "
                       "mean ")
           << mean << ", scale " << scale;
  return success();
}

LogicalResult RandomUniformOp::verify() {
  float low = getLow().convertToFloat(), high = getHigh().convertToFloat();
  if (!std::isfinite(low) || !std::isfinite(high) || !(low <= high))
    return emitOpError("low and high must be finite with low <= high, got [")
           << low << ", " << high << ")";
  return success();
}

//===----------------------------------------------------------------------===//
// Softmax and losses
//===----------------------------------------------------------------------===//

static LogicalResult verifyAxis(Operation *op, int64_t axis) {
  int64_t rank = cast<RankedTensorType>(op->getOperand(0).getType()).getRank();
  if (axis < 0 || axis >= rank)
    return op->emitOpError("axis ")
           << axis << " out of range for rank " << rank;
  return success();
}

LogicalResult SoftmaxOp::verify() { return verifyAxis(*this, getAxis()); }
LogicalResult LogSoftmaxOp::verify() { return verifyAxis(*this, getAxis()); }

/// Shared shape rules of the two class-index losses: `scores` [N, C, d...],
/// `labels` [N, d...], optional `weights` [C].
static LogicalResult inferClassLoss(std::optional<Location> loc, Value scores,
                                    Value labels, Reduction reduction,
                                    SmallVectorImpl<Type> &out) {
  auto s = cast<RankedTensorType>(scores.getType());
  auto l = cast<RankedTensorType>(labels.getType());
  if (s.getRank() < 2)
    return emitOptionalError(loc, "expects scores of rank 2 or more, got ",
                             shapeToString(s.getShape()));
  SmallVector<int64_t> expected{s.getDimSize(0)};
  llvm::append_range(expected, s.getShape().drop_front(2));
  if (l.getShape() != ArrayRef<int64_t>(expected))
    return emitOptionalError(
        loc, "labels of shape ", shapeToString(l.getShape()),
        " do not match scores of shape ", shapeToString(s.getShape()),
        "; expected ", shapeToString(expected));
  if (reduction == Reduction::none)
    out.push_back(RankedTensorType::get(expected, s.getElementType()));
  else
    out.push_back(RankedTensorType::get({}, s.getElementType()));
  return success();
}

static LogicalResult verifyClassWeights(Operation *op, Value scores,
                                        Value weights) {
  auto s = cast<RankedTensorType>(scores.getType());
  // Verifiers run before the inferred result types are checked, so the
  // scores' rank is not known to be right yet; inferReturnTypes reports it.
  if (!weights || s.getRank() < 2)
    return success();
  auto w = cast<RankedTensorType>(weights.getType());
  if (w.getElementType() != s.getElementType())
    return op->emitOpError("requires weights of the scores' element type");
  int64_t c = s.getDimSize(1);
  if (w.getRank() != 1 || w.getDimSize(0) != c)
    return op->emitOpError("weights must have one entry per class (")
           << c << "), got " << shapeToString(w.getShape());
  return success();
}

LogicalResult SoftmaxCrossEntropyLossOp::inferReturnTypes(
    MLIRContext *, std::optional<Location> loc,
    SoftmaxCrossEntropyLossOp::Adaptor adaptor, SmallVectorImpl<Type> &out) {
  if (failed(inferClassLoss(loc, adaptor.getScores(), adaptor.getLabels(),
                            adaptor.getReduction(), out)))
    return failure();
  out.push_back(adaptor.getScores().getType());
  return success();
}

LogicalResult SoftmaxCrossEntropyLossOp::verify() {
  return verifyClassWeights(*this, getScores(), getWeights());
}

LogicalResult NllLossOp::inferReturnTypes(MLIRContext *,
                                          std::optional<Location> loc,
                                          NllLossOp::Adaptor adaptor,
                                          SmallVectorImpl<Type> &out) {
  return inferClassLoss(loc, adaptor.getInput(), adaptor.getTarget(),
                        adaptor.getReduction(), out);
}

LogicalResult NllLossOp::verify() {
  return verifyClassWeights(*this, getInput(), getWeight());
}
