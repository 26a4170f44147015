//===- ShapeUtils.h - shape arithmetic shared by tidal ops ------*- C++ -*-===//

#ifndef TIDAL_DIALECT_TIDAL_IR_SHAPEUTILS_H
#define TIDAL_DIALECT_TIDAL_IR_SHAPEUTILS_H

#include "mlir/IR/Diagnostics.h"
#include "mlir/Support/LogicalResult.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"
#include <optional>

namespace mlir::tidal {

/// NumPy (ONNX multidirectional) broadcast of two static shapes, or nullopt
/// when they are incompatible.
std::optional<llvm::SmallVector<int64_t>>
broadcastShapes(llvm::ArrayRef<int64_t> lhs, llvm::ArrayRef<int64_t> rhs);

/// True when `from` broadcasts unidirectionally to `to`.
bool broadcastsTo(llvm::ArrayRef<int64_t> from, llvm::ArrayRef<int64_t> to);

/// Output extent of one pooled/convolved dimension, or nullopt when the
/// window does not fit.
std::optional<int64_t> windowOutputSize(int64_t in, int64_t kernel,
                                        int64_t stride, int64_t padBegin,
                                        int64_t padEnd, int64_t dilation,
                                        bool ceilMode);

/// Renders a shape as `2x3x4` for diagnostics.
std::string shapeToString(llvm::ArrayRef<int64_t> shape);

/// Number of elements of a static shape.
int64_t numElements(llvm::ArrayRef<int64_t> shape);

} // namespace mlir::tidal

#endif // TIDAL_DIALECT_TIDAL_IR_SHAPEUTILS_H
