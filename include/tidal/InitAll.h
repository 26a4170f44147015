//===- InitAll.h - register every tidal dialect and pass --------*- C++ -*-===//

#ifndef TIDAL_INITALL_H
#define TIDAL_INITALL_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/DialectRegistry.h"
#include "tidal/Conversion/Passes.h"
#include "tidal/Dialect/Tidal/IR/TidalDialect.h"
#include "tidal/Dialect/Tidal/Transforms/Passes.h"
#include "tidal/Pipelines/Pipelines.h"

namespace mlir::tidal {

/// The dialects that tidal's IR uses at any stage.
inline void registerAllDialects(DialectRegistry &registry) {
  registry.insert<TidalDialect, func::FuncDialect, LLVM::LLVMDialect>();
}

/// Every tidal pass and named pipeline, for tidal-opt.
inline void registerAllPasses() {
  registerTidalPasses();
  registerTidalConversionPasses();
  registerPipelines();
}

} // namespace mlir::tidal

#endif // TIDAL_INITALL_H
