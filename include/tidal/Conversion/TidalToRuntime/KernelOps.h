//===- KernelOps.h - which ops become runtime kernel calls ------*- C++ -*-===//
//
// Shared by the lowering (which numbers the calls) and the program manifest
// (which names them), so both agree on every op's index.
//
//===----------------------------------------------------------------------===//

#ifndef TIDAL_CONVERSION_TIDALTORUNTIME_KERNELOPS_H
#define TIDAL_CONVERSION_TIDALTORUNTIME_KERNELOPS_H

#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/STLFunctionalExtras.h"

#include <optional>

namespace mlir::tidal {

/// True if the CPU runtime has a kernel `tidalrt_k_<name>` for `tidal.<name>`.
bool hasRuntimeKernel(llvm::StringRef opName);

/// True for ops that become a kernel call (every op of a planned function
/// except views, constants and the terminator).
bool isKernelCall(Operation *op);

/// Visits the kernel calls of every function of `module` in module order,
/// with their program-wide index.
void forEachKernelCall(ModuleOp module,
                       llvm::function_ref<void(Operation *, int64_t)> fn);

/// The ONNX element type code (tidalrt_element_type_t) of `type`, or none.
std::optional<int64_t> runtimeElementType(Type type);

/// The NumPy name of `type` ("float32", "int64", "bool", ...), or "".
llvm::StringRef numpyTypeName(Type type);

/// The op's name for people: the ONNX node name from its location if it has
/// one, else the op name.
std::string opDisplayName(Operation *op);

} // namespace mlir::tidal

#endif // TIDAL_CONVERSION_TIDALTORUNTIME_KERNELOPS_H
