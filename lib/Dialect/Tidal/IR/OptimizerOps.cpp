//===- OptimizerOps.cpp - type rules of the tidal optimizer ops -----------===//
//
// Every update returns tensors of its parameter's type; gradients and
// optimizer state must have that type too, and learning rates and iteration
// counts must be scalars.
//
//===----------------------------------------------------------------------===//

#include "tidal/Dialect/Tidal/IR/ShapeUtils.h"
#include "tidal/Dialect/Tidal/IR/TidalOps.h"

using namespace mlir;
using namespace mlir::tidal;

/// Checks that each of `same` has `param`'s type and each of `scalars` is a
/// rank-0 tensor.
static LogicalResult verifyUpdate(Operation *op, Value param, ValueRange same,
                                  ValueRange scalars) {
  for (Value v : same)
    if (v.getType() != param.getType())
      return op->emitOpError("requires gradient and state of the parameter's "
                             "type ")
             << param.getType() << ", got " << v.getType();
  for (Value v : scalars)
    if (cast<RankedTensorType>(v.getType()).getRank() != 0)
      return op->emitOpError("requires scalar learning rate and step "
                             "count, got ")
             << v.getType();
  return success();
}

static LogicalResult requireNonNegative(Operation *op, StringRef name,
                                        double value) {
  if (!(value >= 0.0))
    return op->emitOpError() << name << " must be non-negative, got " << value;
  return success();
}

#define TIDAL_UPDATE_INFER(Op, N)                                              \
  LogicalResult Op::inferReturnTypes(MLIRContext *, std::optional<Location>,   \
                                     Op::Adaptor adaptor,                      \
                                     SmallVectorImpl<Type> &out) {             \
    out.append(N, adaptor.getParam().getType());                               \
    return success();                                                          \
  }
TIDAL_UPDATE_INFER(SgdUpdateOp, 1)
TIDAL_UPDATE_INFER(SgdMomentumUpdateOp, 2)
TIDAL_UPDATE_INFER(AdamUpdateOp, 3)
#undef TIDAL_UPDATE_INFER

// The ONNX ops take (R, T, X, ...): X is operand 2.
#define TIDAL_ONNX_UPDATE_INFER(Op, N)                                         \
  LogicalResult Op::inferReturnTypes(MLIRContext *, std::optional<Location>,   \
                                     Op::Adaptor adaptor,                      \
                                     SmallVectorImpl<Type> &out) {             \
    out.append(N, adaptor.getX().getType());                                   \
    return success();                                                          \
  }
TIDAL_ONNX_UPDATE_INFER(OnnxMomentumOp, 2)
TIDAL_ONNX_UPDATE_INFER(OnnxAdagradOp, 2)
TIDAL_ONNX_UPDATE_INFER(OnnxAdamOp, 3)
#undef TIDAL_ONNX_UPDATE_INFER

LogicalResult SgdUpdateOp::verify() {
  if (failed(requireNonNegative(*this, "lr", getLr().convertToDouble())) ||
      failed(requireNonNegative(*this, "weight_decay",
                                getWeightDecay().convertToDouble())))
    return failure();
  return verifyUpdate(*this, getParam(), {getGrad()}, {});
}

LogicalResult SgdMomentumUpdateOp::verify() {
  if (getNesterov() && (getMomentum().convertToDouble() <= 0.0 ||
                        getDampening().convertToDouble() != 0.0))
    return emitOpError("Nesterov momentum requires a momentum and zero "
                       "dampening");
  if (failed(requireNonNegative(*this, "lr", getLr().convertToDouble())) ||
      failed(requireNonNegative(*this, "momentum",
                                getMomentum().convertToDouble())) ||
      failed(requireNonNegative(*this, "weight_decay",
                                getWeightDecay().convertToDouble())))
    return failure();
  return verifyUpdate(*this, getParam(), {getGrad(), getMomentumBuffer()}, {});
}

LogicalResult AdamUpdateOp::verify() {
  double b1 = getBeta1().convertToDouble(), b2 = getBeta2().convertToDouble();
  if (!(b1 >= 0.0 && b1 < 1.0) || !(b2 >= 0.0 && b2 < 1.0))
    return emitOpError("betas must lie in [0, 1), got ") << b1 << ", " << b2;
  if (failed(requireNonNegative(*this, "lr", getLr().convertToDouble())) ||
      failed(requireNonNegative(*this, "eps", getEps().convertToDouble())) ||
      failed(requireNonNegative(*this, "weight_decay",
                                getWeightDecay().convertToDouble())))
    return failure();
  return verifyUpdate(*this, getParam(),
                      {getGrad(), getExpAvg(), getExpAvgSq()}, {getStep()});
}

LogicalResult OnnxMomentumOp::verify() {
  return verifyUpdate(*this, getX(), {getGrad(), getV()}, {getR(), getT()});
}

LogicalResult OnnxAdagradOp::verify() {
  return verifyUpdate(*this, getX(), {getGrad(), getH()}, {getR(), getT()});
}

LogicalResult OnnxAdamOp::verify() {
  return verifyUpdate(*this, getX(), {getGrad(), getV(), getH()},
                      {getR(), getT()});
}

//===----------------------------------------------------------------------===//
// In place: each new value may take the bytes of the value it replaces.
//===----------------------------------------------------------------------===//

SmallVector<unsigned, 2> SgdUpdateOp::getInPlaceOperands(unsigned result) {
  return {0}; // new_param <- param
}

SmallVector<unsigned, 2>
SgdMomentumUpdateOp::getInPlaceOperands(unsigned result) {
  // new_param <- param, new_momentum_buffer <- momentum_buffer
  return {result == 0 ? 0u : 2u};
}

SmallVector<unsigned, 2> AdamUpdateOp::getInPlaceOperands(unsigned result) {
  // new_param <- param, new_exp_avg <- exp_avg, new_exp_avg_sq <- exp_avg_sq
  static const unsigned operands[] = {0, 2, 3};
  return {operands[result]};
}

SmallVector<unsigned, 2> OnnxMomentumOp::getInPlaceOperands(unsigned result) {
  return {result == 0 ? 2u : 4u}; // new_x <- x, new_v <- v
}

SmallVector<unsigned, 2> OnnxAdagradOp::getInPlaceOperands(unsigned result) {
  return {result == 0 ? 2u : 4u}; // new_x <- x, new_h <- h
}

SmallVector<unsigned, 2> OnnxAdamOp::getInPlaceOperands(unsigned result) {
  // new_x <- x, new_v <- v, new_h <- h
  static const unsigned operands[] = {2, 4, 5};
  return {operands[result]};
}
