//===- ShapeUtils.h - shape arithmetic shared by tidal ops ------*- C++ -*-===//

#ifndef TIDAL_DIALECT_TIDAL_IR_SHAPEUTILS_H
#define TIDAL_DIALECT_TIDAL_IR_SHAPEUTILS_H

#include "mlir/IR/Diagnostics.h"
#include "mlir/Support/LogicalResult.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"
#include <optional>

namespace mlir::tidal {

/// The most bytes one tensor may hold: 2^48 (256 TiB), what a 64-bit x86 or
/// Arm machine can address. tidalc rejects larger tensors and arenas.
inline constexpr int64_t kMaxTensorBytes = int64_t(1) << 48;

/// The bytes of a tensor of `shape` with `elementBits`-bit elements (each
/// rounded up to whole bytes), or nullopt when a dim is dynamic or the
/// element or byte count overflows 64 bits or passes kMaxTensorBytes.
std::optional<int64_t> checkedByteSize(llvm::ArrayRef<int64_t> shape,
                                       unsigned elementBits);

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

/// Checks window attributes (kernel, strides, 2k pads, dilations) against
/// the spatial dims of `inShape` ([N, C, D1..Dk]) and appends the output
/// spatial extents to `outSpatial`.
LogicalResult
inferWindow(std::optional<Location> loc, llvm::ArrayRef<int64_t> inShape,
            llvm::ArrayRef<int64_t> kernel, llvm::ArrayRef<int64_t> strides,
            llvm::ArrayRef<int64_t> pads, llvm::ArrayRef<int64_t> dilations,
            bool ceilMode, llvm::SmallVectorImpl<int64_t> &outSpatial);

/// Shape of a clamped strided slice of `inShape` (see tidal.slice).
LogicalResult inferSliceShape(std::optional<Location> loc,
                              llvm::ArrayRef<int64_t> inShape,
                              llvm::ArrayRef<int64_t> starts,
                              llvm::ArrayRef<int64_t> ends,
                              llvm::ArrayRef<int64_t> steps,
                              llvm::SmallVectorImpl<int64_t> &shape);

/// Checks that `axes` are strictly increasing and below `rank`.
LogicalResult checkSortedAxes(std::optional<Location> loc,
                              llvm::ArrayRef<int64_t> axes, int64_t rank);

/// Renders a shape as `2x3x4` for diagnostics.
std::string shapeToString(llvm::ArrayRef<int64_t> shape);

/// Number of elements of a static shape.
int64_t numElements(llvm::ArrayRef<int64_t> shape);

} // namespace mlir::tidal

#endif // TIDAL_DIALECT_TIDAL_IR_SHAPEUTILS_H
