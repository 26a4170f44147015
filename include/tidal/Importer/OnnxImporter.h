//===- OnnxImporter.h - ONNX model to tidal IR ------------------*- C++ -*-===//

#ifndef TIDAL_IMPORTER_ONNXIMPORTER_H
#define TIDAL_IMPORTER_ONNXIMPORTER_H

#include "tidal/Importer/OpVersions.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/ADT/StringRef.h"
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace mlir::tidal {

struct ImportOptions {
  /// Binds the symbolic batch dimension (dim 0 of the data inputs).
  std::optional<int64_t> batchSize;
  /// Floating-point initializers that are not trained.
  std::vector<std::string> freeze;
  /// Embedding weights (initializer names) and the row that is their
  /// nn.Embedding padding_idx, which ONNX does not keep: Gathers on axis 0
  /// of the weight get `padding_index`, so their gradient leaves that row
  /// out (tidalc --embedding-padding).
  std::vector<std::pair<std::string, int64_t>> embeddingPadding;
};

/// Imports the ONNX model file at `path` as a module holding `func.func
/// @main`, whose arguments are the graph inputs followed by the initializers
/// (marked with `tidal.name` and `tidal.role`) and whose results are the graph
/// outputs. On failure returns null and sets `error` to a one-line reason that
/// names the node and operator (the caller prefixes the file name).
OwningOpRef<ModuleOp> importOnnxFile(MLIRContext &context, llvm::StringRef path,
                                     const ImportOptions &options,
                                     std::string &error);

} // namespace mlir::tidal

#endif // TIDAL_IMPORTER_ONNXIMPORTER_H
