//===- OnnxImporter.cpp - ONNX model file to a tidal function -------------===//
//
// Reads the protobuf, checks what tidal supports (opsets, domains, types,
// static shapes after binding the batch), orders the nodes, turns graph
// inputs and initializers into marked function arguments (OnnxArguments.cpp),
// and converts node by node. Every failure becomes one line naming the node
// and operator.
//
//===----------------------------------------------------------------------===//

#include "ImporterImpl.h"
#include "ModelImporter.h"
#include "tidal/Importer/OnnxSchemas.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <deque>

using namespace mlir;
using namespace mlir::tidal;
using namespace mlir::tidal::importer;

//===----------------------------------------------------------------------===//
// Model-level checks
//===----------------------------------------------------------------------===//

std::string importer::describeNode(const onnx::NodeProto &node, int index,
                                   bool inAlgorithm) {
  std::string who = node.name().empty()
                        ? (inAlgorithm ? "algorithm node #" : "node #") +
                              std::to_string(index)
                        : "node '" + node.name() + "'";
  return who + " (" + node.op_type() + ")";
}

static bool isDefaultDomain(const std::string &d) {
  return d.empty() || d == "ai.onnx";
}

LogicalResult ModelImporter::load(std::string &error) {
  auto buf = llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                         /*RequiresNullTerminator=*/false);
  if (!buf) {
    error = "cannot read the file: " + buf.getError().message();
    return failure();
  }
  if ((*buf)->getBufferSize() == 0) {
    error = "the file is empty, not an ONNX model";
    return failure();
  }
  if ((*buf)->getBufferSize() > size_t(INT32_MAX)) {
    error = "the file is larger than 2 GiB; store the weights as ONNX "
            "external data";
    return failure();
  }
  if (!model.ParseFromArray((*buf)->getBufferStart(),
                            int((*buf)->getBufferSize()))) {
    error = "not a valid ONNX model (the protobuf does not parse; is the file "
            "truncated?)";
    return failure();
  }
  if (!model.has_graph() || model.graph().output_size() == 0) {
    error = model.has_graph() ? "the graph has no outputs"
                              : "the model has no graph (not an ONNX model, "
                                "or a truncated one)";
    return failure();
  }
  return success();
}

LogicalResult ModelImporter::checkOpsets(std::string &error) {
  for (const auto &o : model.opset_import()) {
    if (isDefaultDomain(o.domain()))
      opset = o.version();
    else if (o.domain() == kTrainingDomain)
      trainingOpset = o.version();
  }
  if (failed(checkNodeOpsets(model.graph(), false, trainingOpset, error)))
    return failure();
  for (const auto &ti : model.training_info())
    if (failed(checkNodeOpsets(ti.algorithm(), true, trainingOpset, error)))
      return failure();
  return success();
}

/// Checks `node` against the ONNX schema of `version` of its operator
/// (OnnxSchemas.h), so that converters never read an input, output or
/// attribute that is not there or not of the type they expect.
static LogicalResult checkSchema(const onnx::NodeProto &node, int index,
                                 bool inAlgorithm, int64_t version,
                                 std::string &error) {
  const OnnxSchema *schema =
      findOnnxSchema(node.domain(), node.op_type(), version);
  std::string why =
      schema ? checkNodeSchema(node, *schema)
             : "tidal has no schema for " + node.op_type() + "-" +
                   std::to_string(version) +
                   " (an internal error: scripts/gen_onnx_schemas.py "
                   "regenerates the table)";
  if (why.empty())
    return success();
  error = describeNode(node, index, inAlgorithm) + ": " + why;
  return failure();
}

LogicalResult ModelImporter::checkNodeOpsets(const onnx::GraphProto &g,
                                             bool inAlgorithm,
                                             int64_t trainingOpset,
                                             std::string &error) {
  const auto &nodes = g.node();
  // Name the first operator of a foreign domain before anything else.
  bool usesDefault = false;
  for (int i = 0; i < nodes.size(); ++i) {
    const std::string &domain = nodes[i].domain();
    if (isDefaultDomain(domain)) {
      usesDefault = true;
      continue;
    }
    std::string who = describeNode(nodes[i], i, inAlgorithm);
    if (domain != kTrainingDomain) {
      error = who + ": operator domain '" + domain + "' is not supported";
      return failure();
    }
    if (trainingOpset != kTrainingOpset) {
      error =
          who + ": " +
          (trainingOpset == 0 ? "the model does not import the " +
                                    kTrainingDomain.str() + " opset"
                              : kTrainingDomain.str() + " version " +
                                    std::to_string(trainingOpset) +
                                    " is not supported (tidal reads version " +
                                    std::to_string(kTrainingOpset) + ")");
      return failure();
    }
    if (findOp(domain, nodes[i].op_type()) &&
        failed(checkSchema(nodes[i], i, inAlgorithm, kTrainingOpset, error)))
      return failure();
  }
  if (!usesDefault && opset == 0)
    return success(); // only ai.onnx.preview.training ops (ONNX node tests)
  if (opset == 0) {
    error = "the model imports no default-domain (ai.onnx) opset";
    return failure();
  }
  if (opset > kMaxOpset) {
    error = "opset " + std::to_string(opset) +
            " is outside the supported range " + std::to_string(kMinOpset) +
            "-" + std::to_string(kMaxOpset) +
            "; export with opset_version=" + std::to_string(kMaxOpset) +
            " or lower";
    return failure();
  }
  // tidal's own table (OpVersions.cpp) resolves each operator's version, so
  // that opsets newer than the installed ONNX library still import.
  for (int i = 0; i < nodes.size(); ++i) {
    const onnx::NodeProto &node = nodes[i];
    if (!isDefaultDomain(node.domain()))
      continue;
    const OpVersionInfo *info = findOp("", node.op_type());
    if (!info) {
      error = describeNode(node, i, inAlgorithm) + ": operator " +
              node.op_type() + " (opset " + std::to_string(opset) +
              ") is not supported by tidal (tidalc --list-ops lists the "
              "operators it imports)";
      return failure();
    }
    std::string why = unsupportedVersionReason(*info, opset);
    if (!why.empty()) {
      error = describeNode(node, i, inAlgorithm) + ": " + why;
      return failure();
    }
    if (failed(checkSchema(node, i, inAlgorithm, resolveOpVersion(*info, opset),
                           error)))
      return failure();
  }
  return success();
}

/// Orders the nodes of `g` so that each follows its producers, keeping the
/// file order among ready ones. `available` holds the tensors defined outside
/// the nodes (for an algorithm graph, everything the inference graph
/// defines); a Gradient also waits for the node computing its `y`.
LogicalResult importer::sortNodes(const onnx::GraphProto &g,
                                  llvm::StringSet<> available, bool inAlgorithm,
                                  std::vector<int> &order, std::string &error) {
  auto describe = [&](int i) {
    return describeNode(g.node(i), i, inAlgorithm);
  };
  llvm::StringMap<int> producer;
  for (const auto &in : g.input())
    available.insert(in.name());
  for (const auto &init : g.initializer())
    available.insert(init.name());
  for (int i = 0; i < g.node_size(); ++i)
    for (const std::string &out : g.node(i).output()) {
      if (out.empty())
        continue;
      if (available.contains(out) || !producer.try_emplace(out, i).second) {
        error = describe(i) + ": output '" + out +
                "' is already defined elsewhere in the graph";
        return failure();
      }
    }
  // Kahn's algorithm, keeping the file order among ready nodes.
  std::vector<int> pending(g.node_size(), 0);
  std::vector<std::vector<int>> users(g.node_size());
  for (int i = 0; i < g.node_size(); ++i) {
    const onnx::NodeProto &node = g.node(i);
    for (const std::string &in : node.input()) {
      if (in.empty() || available.contains(in))
        continue;
      auto p = producer.find(in);
      if (p == producer.end()) {
        error = describe(i) + ": input '" + in +
                "' is not produced by any node, graph input or initializer";
        return failure();
      }
      ++pending[i];
      users[p->second].push_back(i);
    }
    // An If's branches read tensors of this graph by name.
    llvm::StringSet<> outer;
    collectOuterReferences(node, outer);
    for (const auto &ref : outer)
      if (auto p = producer.find(ref.getKey());
          p != producer.end() && p->second != i) {
        ++pending[i];
        users[p->second].push_back(i);
      }
    // Gradient reads its y by name, not as an input.
    if (node.domain() == kTrainingDomain && node.op_type() == "Gradient")
      if (const auto *y = findAttribute(node, "y"))
        if (auto p = producer.find(y->s()); p != producer.end()) {
          ++pending[i];
          users[p->second].push_back(i);
        }
  }
  std::deque<int> ready;
  for (int i = 0; i < g.node_size(); ++i)
    if (!pending[i])
      ready.push_back(i);
  while (!ready.empty()) {
    int n = ready.front();
    ready.pop_front();
    order.push_back(n);
    for (int u : users[n])
      if (--pending[u] == 0)
        ready.push_back(u);
  }
  if ((int)order.size() != g.node_size()) {
    for (int i = 0; i < g.node_size(); ++i)
      if (pending[i]) {
        error = describe(i) + ": the graph has a cycle through this node";
        return failure();
      }
  }
  for (const auto &out : g.output())
    if (!available.contains(out.name()) && !producer.count(out.name())) {
      error = std::string(inAlgorithm ? "algorithm graph" : "graph") +
              " output '" + out.name() + "' is not produced by any node";
      return failure();
    }
  return success();
}

LogicalResult ModelImporter::convertNodes(const onnx::GraphProto &g,
                                          llvm::ArrayRef<int> order,
                                          bool inAlgorithm,
                                          std::string &error) {
  for (int index : order) {
    const onnx::NodeProto &node = g.node(index);
    std::string nodeName =
        node.name().empty() ? (inAlgorithm ? "algorithm_" : "") +
                                  node.op_type() + "_" + std::to_string(index)
                            : node.name();
    // Algorithm nodes are numbered after the inference graph's.
    int line = index + 1 + (inAlgorithm ? model.graph().node_size() : 0);
    gi->loc = NameLoc::get(builder->getStringAttr(nodeName),
                           FileLineColLoc::get(&ctx, path, line, 0));
    std::string why;
    SmallVector<DenseElementsAttr> folded;
    bool isTrainingOp = node.domain() == kTrainingDomain;
    if (!isTrainingOp && node.op_type() == "If") {
      if (succeeded(inlineIf(node, index, inAlgorithm, why, error)))
        continue;
      if (!why.empty())
        error = describeNode(node, index, inAlgorithm) + ": " + why;
      return failure();
    }
    if (!isTrainingOp &&
        (node.op_type() == "Loop" || node.op_type() == "Scan")) {
      LogicalResult done =
          node.op_type() == "Loop"
              ? unrollLoop(node, index, inAlgorithm, why, error)
              : unrollScan(node, index, inAlgorithm, why, error);
      if (succeeded(done))
        continue;
      if (!why.empty())
        error = describeNode(node, index, inAlgorithm) + ": " + why;
      return failure();
    }
    if (!isTrainingOp && readsSelection(*gi, node)) {
      if (failed(convertSelectionNode(*gi, node, why))) {
        error = describeNode(node, index, inAlgorithm) + ": " + why;
        return failure();
      }
      continue;
    }
    if (!isTrainingOp && isSequenceOp(node)) {
      if (succeeded(convertSequenceNode(node, index, inAlgorithm, why, error)))
        continue;
      if (!why.empty())
        error = describeNode(node, index, inAlgorithm) + ": " + why;
      return failure();
    }
    if (!isTrainingOp && tryFoldNode(*gi, node, folded, why)) {
      if (!why.empty()) { // a fold that fails names its node
        error = describeNode(node, index, inAlgorithm) + ": " + why;
        return failure();
      }
      for (auto [i, attr] : llvm::enumerate(folded))
        if (i < (size_t)node.output_size() && !node.output(i).empty())
          gi->constants[node.output(i)] = attr;
      continue;
    }
    if (!why.empty() ||
        failed(isTrainingOp ? convertTrainingNode(*gi, node, inAlgorithm, why)
                            : convertNode(*gi, node, why))) {
      error = describeNode(node, index, inAlgorithm) + ": " + why;
      return failure();
    }
  }
  return success();
}

LogicalResult
ModelImporter::buildGraphOutputs(SmallVectorImpl<Value> &results,
                                 SmallVectorImpl<DictionaryAttr> &resAttrs,
                                 std::string &error) {
  for (const auto &out : model.graph().output()) {
    if (gi->sequences.count(out.name())) {
      error = "graph output '" + out.name() +
              "' is a sequence; a tidal step's outputs are tensors "
              "(ConcatFromSequence or SequenceAt make one)";
      return failure();
    }
    if (std::string why = selectionOutputProblem(*gi, out.name());
        !why.empty()) {
      error = "graph output '" + out.name() + "' " + why;
      return failure();
    }
    onnx::NodeProto ref;
    ref.add_input(out.name());
    std::string why;
    auto v = gi->input(ref, 0, why);
    if (failed(v)) {
      error = "graph output '" + out.name() + "': " + why;
      return failure();
    }
    const auto &tt = out.type().tensor_type();
    if (out.type().has_tensor_type() && tt.elem_type() != 0 &&
        elementTypeFor(&ctx, tt.elem_type()) !=
            cast<RankedTensorType>(v->getType()).getElementType()) {
      error = "graph output '" + out.name() + "' is declared " +
              onnxTypeName(tt.elem_type()) + " but computed as another type";
      return failure();
    }
    results.push_back(*v);
    resAttrs.push_back(builder->getDictionaryAttr(
        builder->getNamedAttr(kNameAttr, builder->getStringAttr(out.name()))));
  }
  return success();
}

OwningOpRef<ModuleOp> ModelImporter::run(std::string &error) {
  if (failed(load(error)) || failed(inlineModelFunctions(model, error)) ||
      failed(checkOpsets(error)) ||
      failed(analyzeTrainingInfo(model, training, error)))
    return nullptr;
  if (options.batchSize && *options.batchSize <= 0) {
    error = "--batch-size must be positive";
    return nullptr;
  }
  const onnx::GraphProto &g = model.graph();
  std::vector<int> order, algorithmOrder;
  if (failed(sortNodes(g, {}, /*inAlgorithm=*/false, order, error)))
    return nullptr;
  if (training) {
    // The algorithm sees everything the inference graph defines.
    llvm::StringSet<> defined;
    for (const auto &in : g.input())
      defined.insert(in.name());
    for (const auto &init : g.initializer())
      defined.insert(init.name());
    for (const auto &node : g.node())
      for (const std::string &out : node.output())
        if (!out.empty())
          defined.insert(out);
    if (failed(sortNodes(*training.algorithm, std::move(defined),
                         /*inAlgorithm=*/true, algorithmOrder, error)))
      return nullptr;
  }

  ctx.loadDialect<TidalDialect, func::FuncDialect>();
  builder = std::make_unique<OpBuilder>(&ctx);
  OwningOpRef<ModuleOp> module = ModuleOp::create(fileLoc);
  auto func =
      func::FuncOp::create(fileLoc, "main", builder->getFunctionType({}, {}));
  module->push_back(func);
  body = func.addEntryBlock();
  builder->setInsertionPointToStart(body);
  gi = std::make_unique<GraphImporter>(&ctx, *builder, opset);
  for (const auto &[name, row] : options.embeddingPadding)
    gi->paddingRows[name] = row;

  if (failed(addDataInputs(g, error)))
    return nullptr;
  // A model exported with a static batch cannot be rebound: its Reshape
  // targets and the like were computed for that batch.
  if (options.batchSize && batchSymbol.empty()) {
    for (unsigned i = 0; i < body->getNumArguments(); ++i) {
      auto t = cast<RankedTensorType>(body->getArgument(i).getType());
      if (t.getRank() > 0 && t.getDimSize(0) != *options.batchSize) {
        StringRef name = cast<StringAttr>(argAttrs[i].get(kNameAttr));
        error = "graph input '" + name.str() + "' has a static batch of " +
                std::to_string(t.getDimSize(0)) + "; --batch-size " +
                std::to_string(*options.batchSize) +
                " cannot rebind it (export with a dynamic batch axis)";
        return nullptr;
      }
      break;
    }
  }
  if ((training && failed(addDataInputs(*training.algorithm, error))) ||
      failed(addInitializers(error)) ||
      failed(convertNodes(g, order, /*inAlgorithm=*/false, error)) ||
      (training && failed(convertNodes(*training.algorithm, algorithmOrder,
                                       /*inAlgorithm=*/true, error))))
    return nullptr;
  for (const auto &[name, row] : options.embeddingPadding)
    if (!gi->paddingRead.contains(name)) {
      error = "--embedding-padding names '" + name +
              "', which no Gather on axis 0 reads (give the initializer "
              "of an nn.Embedding's weight)";
      return nullptr;
    }

  // Outputs: the graph's, or with a training_info the loss and the updated
  // initializers.
  SmallVector<Value> results;
  SmallVector<DictionaryAttr> resAttrs;
  builder->setInsertionPointToEnd(body);
  gi->loc = fileLoc;
  if (failed(training ? buildTrainingResults(*gi, training, argRoles, results,
                                             resAttrs, error)
                      : buildGraphOutputs(results, resAttrs, error)))
    return nullptr;
  builder->create<func::ReturnOp>(fileLoc, results);
  func.setFunctionType(
      builder->getFunctionType(body->getArgumentTypes(), TypeRange(results)));
  func.setAllArgAttrs(argAttrs);
  func.setAllResultAttrs(resAttrs);
  if (training)
    func->setAttr(kTrainingInfoAttr, builder->getUnitAttr());

  std::string verifyText;
  ScopedDiagnosticHandler handler(&ctx, [&](Diagnostic &diag) {
    if (verifyText.empty())
      verifyText = diag.str();
    return success();
  });
  if (failed(mlir::verify(*module))) {
    error = "the imported IR does not verify: " + verifyText;
    return nullptr;
  }
  return module;
}

OwningOpRef<ModuleOp> mlir::tidal::importOnnxFile(MLIRContext &context,
                                                  StringRef path,
                                                  const ImportOptions &options,
                                                  std::string &error) {
  ModelImporter importer(context, path, options);
  return importer.run(error);
}
