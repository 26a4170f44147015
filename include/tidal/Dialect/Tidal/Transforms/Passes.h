//===- Passes.h - tidal dialect passes --------------------------*- C++ -*-===//

#ifndef TIDAL_DIALECT_TIDAL_TRANSFORMS_PASSES_H
#define TIDAL_DIALECT_TIDAL_TRANSFORMS_PASSES_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"
#include "tidal/Dialect/Tidal/IR/TidalDialect.h"

namespace mlir::tidal {

#define GEN_PASS_DECL
#include "tidal/Dialect/Tidal/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "tidal/Dialect/Tidal/Transforms/Passes.h.inc"

} // namespace mlir::tidal

#endif // TIDAL_DIALECT_TIDAL_TRANSFORMS_PASSES_H
