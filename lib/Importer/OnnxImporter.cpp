//===- OnnxImporter.cpp - ONNX model file to a tidal function -------------===//
//
// Reads the protobuf, checks what tidal supports (opsets, domains, types,
// static shapes after binding the batch), orders the nodes, turns
// initializers into marked function arguments, and converts node by node.
// Every failure becomes one line naming the node and operator.
//
//===----------------------------------------------------------------------===//

#include "ImporterImpl.h"

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
// GraphImporter helpers used by the converters
//===----------------------------------------------------------------------===//

RankedTensorType GraphImporter::inputType(const onnx::NodeProto &node, int i) {
  const std::string &name = node.input(i);
  auto c = constants.find(name);
  if (c != constants.end())
    return cast<RankedTensorType>(c->second.getType());
  auto v = values.find(name);
  if (v != values.end())
    return cast<RankedTensorType>(v->second.getType());
  if (materializeInitializer)
    if (Value arg = materializeInitializer(name))
      return cast<RankedTensorType>(arg.getType());
  return {};
}

DenseElementsAttr GraphImporter::constInput(const onnx::NodeProto &node,
                                            int i) {
  if (!hasInput(node, i))
    return {};
  auto it = constants.find(node.input(i));
  return it == constants.end() ? DenseElementsAttr() : it->second;
}

FailureOr<Value> GraphImporter::input(const onnx::NodeProto &node, int i,
                                      std::string &error) {
  const std::string &name = node.input(i);
  if (auto v = values.find(name); v != values.end())
    return v->second;
  if (auto m = materialized.find(name); m != materialized.end())
    return m->second;
  if (materializeInitializer)
    if (Value arg = materializeInitializer(name))
      return arg;
  auto c = constants.find(name);
  if (c == constants.end()) {
    error = "input '" + name + "' is not defined";
    return failure();
  }
  OpBuilder::InsertionGuard guard(builder);
  Operation *op = create(ConstantOp::getOperationName(), {},
                         {builder.getNamedAttr("value", c->second)}, 1, error);
  if (!op)
    return failure();
  materialized[name] = op->getResult(0);
  return op->getResult(0);
}

Operation *GraphImporter::create(StringRef name, ValueRange operands,
                                 ArrayRef<NamedAttribute> attrs,
                                 unsigned numResults, std::string &error) {
  // Collect the first error that inference or verification reports.
  std::string diagText;
  ScopedDiagnosticHandler handler(ctx, [&](Diagnostic &diag) {
    if (diag.getSeverity() == DiagnosticSeverity::Error && diagText.empty())
      diagText = diag.str();
    return success();
  });

  OperationState state(loc, name);
  state.addOperands(operands);
  state.addAttributes(attrs);
  state.addTypes(SmallVector<Type>(numResults, NoneType::get(ctx)));
  Operation *op = builder.create(state);

  SmallVector<Type> types;
  if (auto infer = dyn_cast<InferTypeOpInterface>(op)) {
    if (failed(infer.inferReturnTypes(
            ctx, op->getLoc(), op->getOperands(), op->getAttrDictionary(),
            op->getPropertiesStorage(), op->getRegions(), types)) ||
        types.size() != numResults) {
      if (diagText.empty())
        diagText = "cannot infer the result types";
      op->erase();
      error = diagText;
      return nullptr;
    }
    for (auto [result, type] : llvm::zip(op->getResults(), types))
      result.setType(type);
  }
  if (failed(mlir::verify(op))) {
    op->erase();
    error = diagText.empty() ? "the op does not verify" : diagText;
    return nullptr;
  }
  return op;
}

void GraphImporter::bindOutputs(const onnx::NodeProto &node,
                                ValueRange results) {
  for (int i = 0, e = std::min<int>(node.output_size(), results.size()); i < e;
       ++i)
    if (!node.output(i).empty())
      values[node.output(i)] = results[i];
}

//===----------------------------------------------------------------------===//
// Model-level checks
//===----------------------------------------------------------------------===//

namespace {

/// Formats `node 'name' (Op)` for messages.
std::string describe(const onnx::NodeProto &node, int index) {
  std::string who = node.name().empty() ? "node #" + std::to_string(index)
                                        : "node '" + node.name() + "'";
  return who + " (" + node.op_type() + ")";
}

bool isDefaultDomain(const std::string &d) {
  return d.empty() || d == "ai.onnx";
}

/// The importer of one model file.
class ModelImporter {
public:
  ModelImporter(MLIRContext &ctx, StringRef path, const ImportOptions &options)
      : ctx(ctx), path(path), options(options) {}

  OwningOpRef<ModuleOp> run(std::string &error);

private:
  LogicalResult load(std::string &error);
  LogicalResult checkOpsets(std::string &error);
  LogicalResult sortNodes(std::vector<int> &order, std::string &error);
  FailureOr<RankedTensorType> valueInfoType(const onnx::ValueInfoProto &vi,
                                            std::string &error);

  MLIRContext &ctx;
  std::string path;
  const ImportOptions &options;
  onnx::ModelProto model;
  int64_t opset = 0;
  /// The symbolic dimension bound to the batch size, once seen.
  std::string batchSymbol;
};

} // namespace

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
  for (const auto &o : model.opset_import())
    if (isDefaultDomain(o.domain()))
      opset = o.version();
  // Name the first operator of a foreign domain before anything else.
  const auto &allNodes = model.graph().node();
  for (int i = 0; i < allNodes.size(); ++i)
    if (!isDefaultDomain(allNodes[i].domain())) {
      error = describe(allNodes[i], i) + ": operator domain '" +
              allNodes[i].domain() + "' is not supported";
      return failure();
    }
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
  const auto &nodes = model.graph().node();
  for (int i = 0; i < nodes.size(); ++i) {
    const onnx::NodeProto &node = nodes[i];
    if (opset >= kMinOpset)
      continue;
    // An older model is fine when each operator it uses is still defined as
    // at kMinOpset.
    int64_t have = resolveOpVersion(node.op_type(), opset);
    int64_t want = resolveOpVersion(node.op_type(), kMinOpset);
    if (have != want) {
      error = describe(node, i) + ": opset " + std::to_string(opset) +
              " is outside the supported range " + std::to_string(kMinOpset) +
              "-" + std::to_string(kMaxOpset) + " and " + node.op_type() + "-" +
              std::to_string(have) + " differs from its opset-" +
              std::to_string(kMinOpset) + " definition";
      return failure();
    }
  }
  return success();
}

LogicalResult ModelImporter::sortNodes(std::vector<int> &order,
                                       std::string &error) {
  const onnx::GraphProto &g = model.graph();
  llvm::StringMap<int> producer;
  llvm::StringSet<> available;
  for (const auto &in : g.input())
    available.insert(in.name());
  for (const auto &init : g.initializer())
    available.insert(init.name());
  for (int i = 0; i < g.node_size(); ++i)
    for (const std::string &out : g.node(i).output()) {
      if (out.empty())
        continue;
      if (available.contains(out) || !producer.try_emplace(out, i).second) {
        error = describe(g.node(i), i) + ": output '" + out +
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
        error = describe(node, i) + ": input '" + in +
                "' is not produced by any node, graph input or initializer";
        return failure();
      }
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
        error = describe(g.node(i), i) + ": the graph has a cycle through "
                                         "this node";
        return failure();
      }
  }
  for (const auto &out : g.output())
    if (!available.contains(out.name()) && !producer.count(out.name())) {
      error = "graph output '" + out.name() + "' is not produced by any node";
      return failure();
    }
  return success();
}

FailureOr<RankedTensorType>
ModelImporter::valueInfoType(const onnx::ValueInfoProto &vi,
                             std::string &error) {
  if (!vi.type().has_tensor_type()) {
    error = "graph input '" + vi.name() +
            "' is not a tensor (sequences, maps and optionals are not "
            "supported)";
    return failure();
  }
  const auto &tt = vi.type().tensor_type();
  Type elt = elementTypeFor(&ctx, tt.elem_type());
  if (!elt) {
    error = "graph input '" + vi.name() + "' has unsupported element type " +
            onnxTypeName(tt.elem_type());
    return failure();
  }
  if (!tt.has_shape()) {
    error = "graph input '" + vi.name() +
            "' has no shape; tidal needs static shapes";
    return failure();
  }
  SmallVector<int64_t> shape;
  for (int d = 0; d < tt.shape().dim_size(); ++d) {
    const auto &dim = tt.shape().dim(d);
    if (dim.has_dim_value() && dim.dim_value() >= 0) {
      shape.push_back(dim.dim_value());
      continue;
    }
    std::string sym = dim.has_dim_param() ? dim.dim_param() : "";
    bool isBatch = d == 0 || (!sym.empty() && sym == batchSymbol);
    if (!isBatch) {
      error = "graph input '" + vi.name() + "' has a symbolic dimension " +
              (sym.empty() ? "" : "'" + sym + "' ") + "at position " +
              std::to_string(d) +
              " that cannot be resolved; only the batch dimension (0) may be "
              "symbolic";
      return failure();
    }
    if (!options.batchSize) {
      error = "graph input '" + vi.name() + "' has a symbolic batch dimension" +
              (sym.empty() ? std::string() : " '" + sym + "'") +
              "; bind it with --batch-size N";
      return failure();
    }
    if (d == 0 && batchSymbol.empty())
      batchSymbol = sym.empty() ? "?" : sym;
    shape.push_back(*options.batchSize);
  }
  return RankedTensorType::get(shape, elt);
}

OwningOpRef<ModuleOp> ModelImporter::run(std::string &error) {
  if (failed(load(error)) || failed(checkOpsets(error)))
    return nullptr;
  if (options.batchSize && *options.batchSize <= 0) {
    error = "--batch-size must be positive";
    return nullptr;
  }
  const onnx::GraphProto &g = model.graph();
  std::vector<int> order;
  if (failed(sortNodes(order, error)))
    return nullptr;

  std::string baseDir = llvm::sys::path::parent_path(path).str();
  ctx.loadDialect<TidalDialect, func::FuncDialect>();
  OpBuilder builder(&ctx);
  Location fileLoc = FileLineColLoc::get(&ctx, path, 0, 0);
  OwningOpRef<ModuleOp> module = ModuleOp::create(fileLoc);
  auto func =
      func::FuncOp::create(fileLoc, "main", builder.getFunctionType({}, {}));
  module->push_back(func);
  Block *body = func.addEntryBlock();
  builder.setInsertionPointToStart(body);

  GraphImporter gi(&ctx, builder, opset);
  SmallVector<DictionaryAttr> argAttrs;
  auto addArg = [&](Type type, StringRef name, ArgRole role) {
    Value arg = body->addArgument(type, fileLoc);
    argAttrs.push_back(builder.getDictionaryAttr(
        {builder.getNamedAttr(kNameAttr, builder.getStringAttr(name)),
         builder.getNamedAttr(kRoleAttr, ArgRoleAttr::get(&ctx, role))}));
    return arg;
  };

  // Initializers: which are BatchNormalization running statistics?
  llvm::StringSet<> initNames, stateNames, frozen;
  for (const auto &init : g.initializer())
    initNames.insert(init.name());
  for (const auto &node : g.node())
    if (node.op_type() == "BatchNormalization")
      for (int i : {3, 4})
        if (i < node.input_size() && initNames.contains(node.input(i)))
          stateNames.insert(node.input(i));
  // Initializers read at compile time (a Reshape shape, a Dropout ratio...)
  // are constants whatever their type, never parameters.
  static const llvm::StringMap<std::vector<int>> compileTimeOperands = {
      {"Reshape", {1}},   {"Slice", {1, 2, 3, 4}}, {"Squeeze", {1}},
      {"Unsqueeze", {1}}, {"ReduceSum", {1}},      {"Split", {1}},
      {"Dropout", {1, 2}}};
  llvm::StringSet<> compileTime;
  for (const auto &node : g.node())
    if (auto it = compileTimeOperands.find(node.op_type());
        it != compileTimeOperands.end())
      for (int i : it->second)
        if (i < node.input_size() && initNames.contains(node.input(i)))
          compileTime.insert(node.input(i));
  for (const std::string &f : options.freeze) {
    if (!initNames.contains(f)) {
      error = "--freeze names '" + f + "', which is not an initializer";
      return nullptr;
    }
    frozen.insert(f);
  }

  // Graph inputs that are not initializers are the data inputs.
  for (const auto &in : g.input()) {
    if (initNames.contains(in.name()))
      continue;
    auto type = valueInfoType(in, error);
    if (failed(type))
      return nullptr;
    gi.values[in.name()] = addArg(*type, in.name(), ArgRole::input);
  }

  // A model exported with a static batch cannot be rebound: its Reshape
  // targets and the like were computed for that batch.
  if (options.batchSize && batchSymbol.empty()) {
    for (const auto &in : g.input()) {
      if (initNames.contains(in.name()))
        continue;
      auto t = cast<RankedTensorType>(gi.values[in.name()].getType());
      if (t.getRank() > 0 && t.getDimSize(0) != *options.batchSize) {
        error = "graph input '" + in.name() + "' has a static batch of " +
                std::to_string(t.getDimSize(0)) + "; --batch-size " +
                std::to_string(*options.batchSize) +
                " cannot rebind it (export with a dynamic batch axis)";
        return nullptr;
      }
      break;
    }
  }

  // Floating-point initializers are parameters (or state, or frozen
  // constants) and become arguments now; integer ones are compile-time
  // constants and become arguments only when an op needs them as a tensor.
  llvm::StringMap<const onnx::TensorProto *> initByName;
  for (const auto &init : g.initializer()) {
    if (!initByName.try_emplace(init.name(), &init).second) {
      error = "initializer '" + init.name() + "' is defined twice";
      return nullptr;
    }
    DenseElementsAttr value = decodeTensor(&ctx, init, baseDir, error);
    if (!value)
      return nullptr;
    if (isa<FloatType>(value.getElementType()) &&
        !compileTime.contains(init.name())) {
      ArgRole role = frozen.contains(init.name())       ? ArgRole::constant
                     : stateNames.contains(init.name()) ? ArgRole::state
                                                        : ArgRole::param;
      gi.values[init.name()] = addArg(value.getType(), init.name(), role);
    } else {
      gi.constants[init.name()] = value;
      gi.pendingInitializers[init.name()] = &init;
    }
  }
  gi.materializeInitializer = [&](StringRef name) -> Value {
    auto it = gi.pendingInitializers.find(name);
    if (it == gi.pendingInitializers.end())
      return {};
    Value arg = addArg(gi.constants[name].getType(), name, ArgRole::constant);
    gi.pendingInitializers.erase(it);
    gi.values[name] = arg;
    return arg;
  };

  // Nodes.
  for (int index : order) {
    const onnx::NodeProto &node = g.node(index);
    std::string nodeName = node.name().empty()
                               ? node.op_type() + "_" + std::to_string(index)
                               : node.name();
    gi.loc = NameLoc::get(builder.getStringAttr(nodeName),
                          FileLineColLoc::get(&ctx, path, index + 1, 0));
    std::string why;
    SmallVector<DenseElementsAttr> folded;
    if (tryFoldNode(gi, node, folded, why)) {
      for (auto [i, attr] : llvm::enumerate(folded))
        if (i < (size_t)node.output_size() && !node.output(i).empty())
          gi.constants[node.output(i)] = attr;
      continue;
    }
    if (!why.empty() || failed(convertNode(gi, node, why))) {
      error = describe(node, index) + ": " + why;
      return nullptr;
    }
  }

  // Outputs.
  SmallVector<Value> results;
  SmallVector<DictionaryAttr> resAttrs;
  builder.setInsertionPointToEnd(body);
  gi.loc = fileLoc;
  for (const auto &out : g.output()) {
    onnx::NodeProto ref;
    ref.add_input(out.name());
    std::string why;
    auto v = gi.input(ref, 0, why);
    if (failed(v)) {
      error = "graph output '" + out.name() + "': " + why;
      return nullptr;
    }
    const auto &tt = out.type().tensor_type();
    if (out.type().has_tensor_type() && tt.elem_type() != 0 &&
        elementTypeFor(&ctx, tt.elem_type()) !=
            cast<RankedTensorType>(v->getType()).getElementType()) {
      error = "graph output '" + out.name() + "' is declared " +
              onnxTypeName(tt.elem_type()) + " but computed as another type";
      return nullptr;
    }
    results.push_back(*v);
    resAttrs.push_back(builder.getDictionaryAttr(
        builder.getNamedAttr(kNameAttr, builder.getStringAttr(out.name()))));
  }
  builder.create<func::ReturnOp>(fileLoc, results);
  func.setFunctionType(
      builder.getFunctionType(body->getArgumentTypes(), TypeRange(results)));
  func.setAllArgAttrs(argAttrs);
  func.setAllResultAttrs(resAttrs);

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
