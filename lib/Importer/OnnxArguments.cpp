//===- OnnxArguments.cpp - graph inputs and initializers as arguments -----===//
//
// The function's arguments: data inputs (static shapes, the batch bound),
// and initializers as parameters, state, optimizer state or frozen
// constants (checked, not decoded: their values are read at run time), or
// compile-time constants.
//
//===----------------------------------------------------------------------===//

#include "ModelImporter.h"

#include <functional>

#include "llvm/Support/Path.h"

using namespace mlir;
using namespace mlir::tidal;
using namespace mlir::tidal::importer;

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
  auto type = RankedTensorType::get(shape, elt);
  std::string why = tensorSizeProblem(type);
  if (!why.empty()) {
    error = "graph input '" + vi.name() + "' of type " + why;
    return failure();
  }
  return type;
}

Value ModelImporter::addArg(Type type, StringRef name, ArgRole role) {
  Value arg = body->addArgument(type, fileLoc);
  argAttrs.push_back(builder->getDictionaryAttr(
      {builder->getNamedAttr(kNameAttr, builder->getStringAttr(name)),
       builder->getNamedAttr(kRoleAttr, ArgRoleAttr::get(&ctx, role))}));
  argRoles[name] = role;
  gi->values[name] = arg;
  return arg;
}

/// Graph inputs that are not initializers are the data inputs.
LogicalResult ModelImporter::addDataInputs(const onnx::GraphProto &g,
                                           std::string &error) {
  llvm::StringSet<> initNames;
  for (const auto &init : g.initializer())
    initNames.insert(init.name());
  for (const auto &in : g.input()) {
    if (initNames.contains(in.name()))
      continue;
    if (gi->values.count(in.name())) {
      error = "graph input '" + in.name() + "' is defined twice";
      return failure();
    }
    auto type = valueInfoType(in, error);
    if (failed(type))
      return failure();
    addArg(*type, in.name(), ArgRole::input);
  }
  return success();
}

/// Floating-point initializers are parameters (or state, or frozen
/// constants) and become arguments now; integer ones are compile-time
/// constants and become arguments only when an op needs them as a tensor.
/// With a training_info, what the algorithm differentiates is a parameter,
/// what it updates otherwise is optimizer state (an argument whatever its
/// type), and what it neither differentiates nor updates in its own graph is
/// a constant.
LogicalResult ModelImporter::addInitializers(std::string &error) {
  const onnx::GraphProto &g = model.graph();
  llvm::SmallVector<const onnx::GraphProto *, 2> graphs{&g};
  if (training)
    graphs.push_back(training.algorithm);
  // The nodes of those graphs and of their subgraphs (If branches, Loop and
  // Scan bodies), which read the initializers by name too.
  std::vector<const onnx::NodeProto *> nodes;
  std::function<void(const onnx::GraphProto &)> collect =
      [&](const onnx::GraphProto &graph) {
        for (const auto &node : graph.node()) {
          nodes.push_back(&node);
          for (const auto &attr : node.attribute()) {
            if (attr.has_g())
              collect(attr.g());
            for (const auto &sub : attr.graphs())
              collect(sub);
          }
        }
      };
  for (const auto *graph : graphs)
    collect(*graph);

  // Initializers: which are BatchNormalization running statistics?
  llvm::StringSet<> initNames, stateNames, frozen;
  for (const auto *graph : graphs)
    for (const auto &init : graph->initializer())
      initNames.insert(init.name());
  for (const onnx::NodeProto *node : nodes)
    if (node->op_type() == "BatchNormalization")
      for (int i : {3, 4})
        if (i < node->input_size() && initNames.contains(node->input(i)))
          stateNames.insert(node->input(i));
  // Initializers read at compile time (a Reshape shape, a Dropout ratio...)
  // are constants whatever their type, never parameters. STFT's window is
  // one: PyTorch and torchaudio keep it in a buffer, never trained.
  static const llvm::StringMap<std::vector<int>> compileTimeOperands = {
      {"Reshape", {1}},
      {"Slice", {1, 2, 3, 4}},
      {"Squeeze", {1}},
      {"Unsqueeze", {1}},
      {"ReduceSum", {1}},
      {"Split", {1}},
      {"Dropout", {1, 2}},
      {"Clip", {1, 2}},
      {"Expand", {1}},
      {"Pad", {1, 2, 3}},
      {"Tile", {1}},
      {"Trilu", {1}},
      {"ReduceL1", {1}},
      {"ReduceL2", {1}},
      {"ReduceSumSquare", {1}},
      {"ReduceMean", {1}},
      {"ReduceMax", {1}},
      {"ReduceMin", {1}},
      {"ReduceProd", {1}},
      {"ReduceLogSum", {1}},
      {"ReduceLogSumExp", {1}},
      {"Resize", {1, 2, 3}},
      {"CumSum", {1}},
      {"TopK", {1}},
      {"OneHot", {1, 2}},
      {"AffineGrid", {1}},
      {"DFT", {1, 2}},
      {"STFT", {1, 2, 3}},
      {"HannWindow", {0}},
      {"HammingWindow", {0}},
      {"BlackmanWindow", {0}},
      {"MelWeightMatrix", {0, 1, 2, 3, 4}},
      {"Col2Im", {1, 2}}};
  // An operand that only moves or converts initializers (PyTorch casts an
  // STFT window buffer to the signal's type and centres it with a Concat)
  // makes them compile-time too. Computation stops the walk: a window
  // computed from a parameter (a learned window) stays trainable.
  llvm::StringMap<const onnx::NodeProto *> producer;
  for (const onnx::NodeProto *node : nodes)
    for (const std::string &out : node->output())
      producer[out] = node;
  llvm::StringSet<> compileTime, visited;
  std::function<void(const std::string &)> markCompileTime =
      [&](const std::string &name) {
        if (name.empty() || !visited.insert(name).second)
          return;
        if (initNames.contains(name)) {
          compileTime.insert(name);
          return;
        }
        auto it = producer.find(name);
        if (it == producer.end())
          return;
        const onnx::NodeProto *node = it->second;
        static const llvm::StringSet<> moves = {
            "Cast",    "CastLike",  "Identity", "Concat",  "Pad",
            "Reshape", "Unsqueeze", "Squeeze",  "Flatten", "Slice"};
        if (!moves.contains(node->op_type()))
          return;
        for (const std::string &input : node->input())
          markCompileTime(input);
      };
  for (const onnx::NodeProto *node : nodes)
    if (auto it = compileTimeOperands.find(node->op_type());
        it != compileTimeOperands.end())
      for (int i : it->second)
        if (i < node->input_size())
          markCompileTime(node->input(i));
  for (const std::string &f : options.freeze) {
    if (!initNames.contains(f)) {
      error = "--freeze names '" + f + "', which is not an initializer";
      return failure();
    }
    if (training.updated.contains(f)) {
      error = "--freeze names '" + f +
              "', which the training_info's update_binding updates";
      return failure();
    }
    frozen.insert(f);
  }

  // Initializers that no node reads and no output names (such as the
  // optimizer state a tidal executable's --save keeps beside the weights)
  // are not part of the computation.
  llvm::StringSet<> used;
  for (const onnx::NodeProto *node : nodes)
    for (const std::string &input : node->input())
      used.insert(input);
  for (const auto *graph : graphs)
    for (const auto &output : graph->output())
      used.insert(output.name());

  std::string baseDir = llvm::sys::path::parent_path(path).str();
  llvm::StringSet<> seen;
  for (const auto *graph : graphs)
    for (const auto &init : graph->initializer()) {
      if (!seen.insert(init.name()).second || gi->values.count(init.name())) {
        error = "initializer '" + init.name() + "' is defined twice";
        return failure();
      }
      if (!used.contains(init.name()) &&
          !training.updated.contains(init.name()))
        continue;
      // Checked, not decoded: only a constant's values are needed here (an
      // argument's are read at run time, and a deep net's weights are
      // gigabytes).
      RankedTensorType type = checkTensor(&ctx, init, baseDir, error);
      if (!type)
        return failure();
      StringRef name = init.name();
      bool isFloat = isa<FloatType>(type.getElementType());
      std::optional<ArgRole> role;
      if (frozen.contains(name))
        role = isFloat && !compileTime.contains(name)
                   ? std::optional(ArgRole::constant)
                   : std::nullopt;
      else if (stateNames.contains(name) &&
               (isFloat || training.updated.contains(name)))
        role = ArgRole::state;
      else if (training.differentiated.contains(name))
        role = ArgRole::param;
      else if (training.updated.contains(name))
        role = ArgRole::optimizer_state;
      else if (isFloat && !compileTime.contains(name))
        // With a training_info, the algorithm says what is trained: a float
        // initializer that no Gradient differentiates is a constant.
        role = training ? ArgRole::constant : ArgRole::param;
      if (role) {
        addArg(type, name, *role);
      } else {
        DenseElementsAttr value = decodeTensor(&ctx, init, baseDir, error);
        if (!value)
          return failure();
        gi->constants[name] = value;
        gi->pendingInitializers[name] = &init;
      }
    }
  gi->materializeInitializer = [this](StringRef name) -> Value {
    auto it = gi->pendingInitializers.find(name);
    if (it == gi->pendingInitializers.end())
      return {};
    gi->pendingInitializers.erase(it);
    return addArg(gi->constants[name].getType(), name, ArgRole::constant);
  };
  return success();
}
