//===- Passes.h - tidal conversion passes -----------------------*- C++ -*-===//

#ifndef TIDAL_CONVERSION_PASSES_H
#define TIDAL_CONVERSION_PASSES_H

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace mlir::tidal {

#define GEN_PASS_DECL
#include "tidal/Conversion/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "tidal/Conversion/Passes.h.inc"

} // namespace mlir::tidal

#endif // TIDAL_CONVERSION_PASSES_H
