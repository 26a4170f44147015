//===- AutodiffRules.h - vector-Jacobian products of tidal ops --*- C++ -*-===//

#ifndef TIDAL_LIB_DIALECT_TIDAL_TRANSFORMS_AUTODIFFRULES_H
#define TIDAL_LIB_DIALECT_TIDAL_TRANSFORMS_AUTODIFFRULES_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/Operation.h"

namespace mlir::tidal {

/// Builds, at `b`'s insertion point, the gradients of `op`'s operands given
/// the gradients of its results (`resultGrads[i]` is null when result `i`
/// has none). `operandGrads` gets one entry per operand, null for operands
/// that get no gradient; rules only build gradients for operands with
/// `wanted[i]` set. Fails with an error on `op` when it cannot be
/// differentiated.
LogicalResult buildOperandGradients(OpBuilder &b, Operation *op,
                                    ArrayRef<Value> resultGrads,
                                    ArrayRef<bool> wanted,
                                    SmallVectorImpl<Value> &operandGrads);

/// Whether `op` is one of the activation family or the element-wise math
/// ops (ActivationRules.cpp).
bool isActivationOp(Operation *op);

/// The gradient of such an op's input given its result's gradient `grad`,
/// built at `b`'s insertion point; null for the ops whose gradient is zero
/// (sign, floor, ceil, round).
Value buildActivationGradient(OpBuilder &b, Operation *op, Value grad);

/// Whether `op` is tidal.max, tidal.min or tidal.where (LogicRules.cpp).
bool isLogicOp(Operation *op);

/// Sets `operandGrads[i]` for such an op's wanted operands given its
/// result's gradient `grad`, built at `b`'s insertion point.
void buildLogicGradients(OpBuilder &b, Operation *op, Value grad,
                         ArrayRef<bool> wanted,
                         SmallVectorImpl<Value> &operandGrads);

/// Whether `op` is tidal.conv or tidal.conv_backward_data (ConvTranspose)
/// (ConvRules.cpp).
bool isConvOp(Operation *op);

/// Sets `operandGrads[i]` for such an op's wanted operands given its
/// result's gradient `grad`, built at `b`'s insertion point.
void buildConvGradients(OpBuilder &b, Operation *op, Value grad,
                        ArrayRef<bool> wanted,
                        SmallVectorImpl<Value> &operandGrads);

/// Whether `op` is tidal.gather_backward, the scatter-add ScatterElements
/// and ScatterND import through (IndexingRules.cpp).
bool isIndexingOp(Operation *op);

/// Sets `operandGrads[0]` for such an op given its result's gradient `grad`.
void buildIndexingGradients(OpBuilder &b, Operation *op, Value grad,
                            ArrayRef<bool> wanted,
                            SmallVectorImpl<Value> &operandGrads);

/// Whether `op` is a reduction over axes: tidal.reduce_sum, reduce_mean,
/// reduce_max, reduce_min or reduce_prod (ReduceRules.cpp).
bool isReduceFamilyOp(Operation *op);

/// Sets `operandGrads[0]` for such an op, if wanted, given its result's
/// gradient `grad`, built at `b`'s insertion point.
void buildReduceGradients(OpBuilder &b, Operation *op, Value grad,
                          ArrayRef<bool> wanted,
                          SmallVectorImpl<Value> &operandGrads);

/// Sums `grad` down to `type`'s shape, undoing NumPy broadcasting.
Value sumToType(OpBuilder &b, Location loc, Value grad, Type type);

/// A splat constant of `type` (a float tensor type) holding `value`.
Value splatConstant(OpBuilder &b, Location loc, Type type, double value);

} // namespace mlir::tidal

#endif // TIDAL_LIB_DIALECT_TIDAL_TRANSFORMS_AUTODIFFRULES_H
