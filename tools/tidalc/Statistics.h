//===- Statistics.h - what tidalc -v reports about a module -----*- C++ -*-===//

#ifndef TIDAL_TOOLS_TIDALC_STATISTICS_H
#define TIDAL_TOOLS_TIDALC_STATISTICS_H

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/raw_ostream.h"

namespace tidalc {

/// Prints op counts, arguments by role with their sizes, and the bytes of
/// every value the step computes.
void printStatistics(mlir::ModuleOp module, llvm::raw_ostream &os);

} // namespace tidalc

#endif // TIDAL_TOOLS_TIDALC_STATISTICS_H
