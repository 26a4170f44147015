//===- ModelImporter.h - the importer of one ONNX model file ----*- C++ -*-===//
//
// Private to lib/Importer: the state of one import, shared by
// OnnxImporter.cpp (loading, checks, node conversion, the function) and
// OnnxArguments.cpp (graph inputs and initializers as arguments).
//
//===----------------------------------------------------------------------===//

#ifndef TIDAL_LIB_IMPORTER_MODELIMPORTER_H
#define TIDAL_LIB_IMPORTER_MODELIMPORTER_H

#include "ImporterImpl.h"

#include <memory>
#include <string>

namespace mlir::tidal::importer {

/// The importer of one model file.
class ModelImporter {
public:
  ModelImporter(MLIRContext &ctx, StringRef path, const ImportOptions &options)
      : ctx(ctx), path(path), options(options),
        fileLoc(FileLineColLoc::get(&ctx, path, 0, 0)) {}

  OwningOpRef<ModuleOp> run(std::string &error);

private:
  LogicalResult load(std::string &error);
  LogicalResult checkOpsets(std::string &error);
  LogicalResult checkNodeOpsets(const onnx::GraphProto &g, bool inAlgorithm,
                                int64_t trainingOpset, std::string &error);
  FailureOr<RankedTensorType> valueInfoType(const onnx::ValueInfoProto &vi,
                                            std::string &error);
  Value addArg(Type type, StringRef name, ArgRole role);
  LogicalResult addDataInputs(const onnx::GraphProto &g, std::string &error);
  LogicalResult addInitializers(std::string &error);
  LogicalResult convertNodes(const onnx::GraphProto &g,
                             llvm::ArrayRef<int> order, bool inAlgorithm,
                             std::string &error);
  /// An If whose condition is known at compile time: the branch it takes,
  /// imported in place of the node (IfInlining.cpp).
  LogicalResult inlineIf(const onnx::NodeProto &node, int index,
                         bool inAlgorithm, std::string &why,
                         std::string &error);
  LogicalResult buildGraphOutputs(SmallVectorImpl<Value> &results,
                                  SmallVectorImpl<DictionaryAttr> &resAttrs,
                                  std::string &error);

  MLIRContext &ctx;
  std::string path;
  const ImportOptions &options;
  onnx::ModelProto model;
  int64_t opset = 0;
  /// The ai.onnx.preview.training version the model imports (0: none).
  int64_t trainingOpset = 0;
  /// The symbolic dimension bound to the batch size, once seen.
  std::string batchSymbol;
  /// The model's training_info, when it has one.
  TrainingInfo training;

  // The function being built.
  std::unique_ptr<OpBuilder> builder;
  std::unique_ptr<GraphImporter> gi;
  Block *body = nullptr;
  Location fileLoc;
  SmallVector<DictionaryAttr> argAttrs;
  llvm::StringMap<ArgRole> argRoles;
};

} // namespace mlir::tidal::importer

#endif // TIDAL_LIB_IMPORTER_MODELIMPORTER_H
