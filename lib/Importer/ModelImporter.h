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
  /// An If on a data condition: both branches imported, each output a
  /// where(cond, then, else) (IfInlining.cpp).
  LogicalResult selectIf(const onnx::NodeProto &node, int index,
                         bool inAlgorithm, std::string &why,
                         std::string &error);
  /// Loop and Scan whose trip count the bound shapes decide, unrolled: each
  /// iteration imports a renamed copy of the body (LoopUnrolling.cpp).
  LogicalResult unrollLoop(const onnx::NodeProto &node, int index,
                           bool inAlgorithm, std::string &why,
                           std::string &error);
  /// A Loop that is nn.EmbeddingBag's bags between data offsets, imported
  /// as a segment sum/mean (SegmentLoops.cpp): true when it matched and was
  /// imported, false when the Loop has another shape.
  FailureOr<bool> segmentLoop(const onnx::NodeProto &node, std::string &why);
  LogicalResult unrollScan(const onnx::NodeProto &node, int index,
                           bool inAlgorithm, std::string &why,
                           std::string &error);
  /// Imports a copy of `body` whose names carry `prefix`, its inputs bound
  /// to `inputs`; `outputs` receives its outputs.
  LogicalResult importBody(const onnx::GraphProto &body,
                           const std::string &prefix,
                           llvm::ArrayRef<Bound> inputs,
                           llvm::SmallVectorImpl<Bound> &outputs,
                           bool inAlgorithm, std::string &why,
                           std::string &error);
  /// `parts` stacked along a new dimension `axis`.
  FailureOr<Bound> stackTensors(llvm::ArrayRef<Bound> parts, int64_t axis,
                                std::string &why);
  /// Element `index` of `b` along `axis`, that dimension dropped.
  FailureOr<Bound> takeIndex(const Bound &b, int64_t axis, int64_t index,
                             std::string &why);
  void bindTensor(const std::string &name, const Bound &b);
  FailureOr<Bound> boundTensor(const std::string &name, std::string &why);
  /// Sequence operators, and Identity of a sequence: the sequence is a list
  /// of its elements at import (SequenceOps.cpp).
  bool isSequenceOp(const onnx::NodeProto &node) const;
  LogicalResult convertSequenceNode(const onnx::NodeProto &node, int index,
                                    bool inAlgorithm, std::string &why,
                                    std::string &error);
  FailureOr<std::vector<Bound>> sequenceInput(const onnx::NodeProto &node,
                                              int input, std::string &why);
  /// `b` as an SSA value (a constant materialized).
  FailureOr<Value> valueOf(const Bound &b, std::string &why);
  /// [start, end) of `b` along `axis`, that dimension dropped if `squeeze`.
  FailureOr<Bound> sliceAlong(const Bound &b, int64_t axis, int64_t start,
                              int64_t end, bool squeeze, std::string &why);
  /// A failure inside a subgraph imported for `node`: the error names the
  /// node and `where` ("iteration 3"). Always failure().
  LogicalResult failInBody(const onnx::NodeProto &node, int index,
                           bool inAlgorithm, const std::string &where,
                           std::string &why, std::string &error);
  /// A prefix for an unrolled node's values no other loop used.
  std::string unrollPrefix(const onnx::NodeProto &node, int index);
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
  /// The prefixes of the loops unrolled so far.
  llvm::StringSet<> unrolled;
};

} // namespace mlir::tidal::importer

#endif // TIDAL_LIB_IMPORTER_MODELIMPORTER_H
