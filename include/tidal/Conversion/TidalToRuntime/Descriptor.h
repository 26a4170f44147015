//===- Descriptor.h - kernel call descriptors -------------------*- C++ -*-===//
//
// Encodes an op's tensors and attributes as the int64 words that its runtime
// kernel decodes (runtime/include/tidalrt/tidalrt.h, "Kernel call ABI").
//
//===----------------------------------------------------------------------===//

#ifndef TIDAL_CONVERSION_TIDALTORUNTIME_DESCRIPTOR_H
#define TIDAL_CONVERSION_TIDALTORUNTIME_DESCRIPTOR_H

#include "mlir/IR/Operation.h"
#include "llvm/ADT/SmallVector.h"

namespace mlir::tidal {

/// The op's tensors in kernel order: operands (with a null Value where an
/// optional operand is absent), then results.
llvm::SmallVector<Value> kernelTensors(Operation *op);

/// The descriptor words for `op` with program-wide index `index`; fails
/// (with a diagnostic on the op) for element types or attributes the ABI
/// cannot express.
FailureOr<llvm::SmallVector<int64_t>> encodeDescriptor(Operation *op,
                                                       int64_t index);

} // namespace mlir::tidal

#endif // TIDAL_CONVERSION_TIDALTORUNTIME_DESCRIPTOR_H
