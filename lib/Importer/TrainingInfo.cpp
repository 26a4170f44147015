//===- TrainingInfo.cpp - checks and results of an ONNX training_info -----===//
//
// onnx 1.12's checker ignores TrainingInfoProto, so everything the proto's
// comments require of it (unique update_binding keys naming initializers,
// values computed by the algorithm) and everything tidal needs (one loss,
// no initialization graph) is checked here, each as one line naming the
// node, key or value at fault.
//
//===----------------------------------------------------------------------===//

#include "ImporterImpl.h"

#include "llvm/ADT/STLExtras.h"

using namespace mlir;
using namespace mlir::tidal;
using namespace mlir::tidal::importer;

namespace {

bool isFloatType(int32_t onnxType) {
  return onnxType == onnx::TensorProto::FLOAT ||
         onnxType == onnx::TensorProto::DOUBLE ||
         onnxType == onnx::TensorProto::FLOAT16 ||
         onnxType == onnx::TensorProto::BFLOAT16;
}

/// Checks one Gradient node against the tensors that the combined graph
/// declares (`tensorTypes`: initializers and graph inputs, with their ONNX
/// element types).
LogicalResult checkGradient(const onnx::NodeProto &node, int index,
                            const llvm::StringMap<int32_t> &tensorTypes,
                            TrainingInfo &info, std::string &error) {
  std::string who = describeNode(node, index, /*inAlgorithm=*/true) + ": ";
  const onnx::AttributeProto *xs = findAttribute(node, "xs");
  const onnx::AttributeProto *y = findAttribute(node, "y");
  const onnx::AttributeProto *zs = findAttribute(node, "zs");
  if (!xs || xs->type() != onnx::AttributeProto::STRINGS ||
      xs->strings_size() == 0) {
    error = who + "required attribute 'xs' (a list of tensor names) is "
                  "missing or empty";
    return failure();
  }
  if (!y || y->type() != onnx::AttributeProto::STRING || y->s().empty()) {
    error = who + "required attribute 'y' (the name of the loss) is missing";
    return failure();
  }
  llvm::StringSet<> seen;
  for (const std::string &x : xs->strings()) {
    auto it = tensorTypes.find(x);
    if (it == tensorTypes.end()) {
      error = who + "xs names '" + x +
              "', which is not an initializer or a graph input (tidal "
              "differentiates with respect to those only)";
      return failure();
    }
    if (!isFloatType(it->second)) {
      error = who + "xs names '" + x + "' of type " + onnxTypeName(it->second) +
              "; only floating-point tensors have gradients";
      return failure();
    }
    if (!seen.insert(x).second) {
      error = who + "xs names '" + x + "' twice";
      return failure();
    }
  }
  // The inputs are the points at which the gradient is taken; tidal takes it
  // at the current values, so they must be the named tensors themselves.
  std::vector<std::string> expected(xs->strings().begin(), xs->strings().end());
  if (zs)
    expected.insert(expected.end(), zs->strings().begin(), zs->strings().end());
  if (!llvm::equal(node.input(), expected)) {
    error = who + "its inputs must be the tensors named in xs then zs, in "
                  "that order (tidal computes the gradient at their current "
                  "values only)";
    return failure();
  }
  if (node.output_size() != xs->strings_size()) {
    error = who + "has " + std::to_string(node.output_size()) +
            " outputs but xs names " + std::to_string(xs->strings_size()) +
            " tensors; it needs one output per tensor";
    return failure();
  }
  if (!info.loss.empty() && info.loss != y->s()) {
    error = who + "differentiates '" + y->s() +
            "' but another Gradient differentiates '" + info.loss +
            "'; tidal trains one loss";
    return failure();
  }
  info.loss = y->s();
  for (const std::string &x : xs->strings())
    info.differentiated.insert(x);
  return success();
}

} // namespace

LogicalResult importer::analyzeTrainingInfo(const onnx::ModelProto &model,
                                            TrainingInfo &info,
                                            std::string &error) {
  if (model.training_info_size() == 0)
    return success();
  if (model.training_info_size() > 1) {
    error = "the model has " + std::to_string(model.training_info_size()) +
            " training_info entries; tidal supports one";
    return failure();
  }
  const onnx::TrainingInfoProto &ti = model.training_info(0);
  const onnx::GraphProto &init = ti.initialization();
  if (init.node_size() || init.output_size() || init.initializer_size() ||
      ti.initialization_binding_size()) {
    error = "training_info: an initialization graph or initialization_binding "
            "is not supported (tidal starts training from the initializers' "
            "values); remove it";
    return failure();
  }
  const onnx::GraphProto &g = model.graph();
  const onnx::GraphProto &alg = ti.algorithm();

  // The combined graph's initializers and inputs, and what the algorithm
  // computes (SPEC section 1 follows the proto: inference graph first).
  llvm::StringMap<int32_t> tensorTypes;
  llvm::StringSet<> initializers, computed;
  for (const onnx::GraphProto *graph : {&g, &alg}) {
    for (const auto &in : graph->input())
      tensorTypes[in.name()] = in.type().tensor_type().elem_type();
    for (const auto &t : graph->initializer()) {
      tensorTypes[t.name()] = t.data_type();
      initializers.insert(t.name());
    }
  }
  for (const auto &n : alg.node())
    for (const std::string &out : n.output())
      if (!out.empty())
        computed.insert(out);
  for (const auto &out : g.output())
    computed.insert(out.name());

  for (int i = 0; i < alg.node_size(); ++i) {
    const onnx::NodeProto &node = alg.node(i);
    if (node.domain() == kTrainingDomain && node.op_type() == "Gradient" &&
        failed(checkGradient(node, i, tensorTypes, info, error)))
      return failure();
  }
  if (info.loss.empty()) {
    error = "training_info: the algorithm graph has no Gradient op (tidal "
            "takes the loss to minimize from Gradient's y)";
    return failure();
  }

  for (const auto &b : ti.update_binding()) {
    if (!initializers.contains(b.key())) {
      error = "training_info: update_binding key '" + b.key() +
              "' is not an initializer of the model or of its algorithm graph";
      return failure();
    }
    if (!info.updated.insert(b.key()).second) {
      error = "training_info: update_binding names '" + b.key() +
              "' twice (each initializer is updated at most once)";
      return failure();
    }
    if (!computed.contains(b.value())) {
      error = "training_info: update_binding '" + b.key() + "' <- '" +
              b.value() + "': '" + b.value() +
              "' is not produced by the algorithm graph";
      return failure();
    }
    info.bindings.emplace_back(b.key(), b.value());
  }
  info.algorithm = &alg;
  return success();
}

LogicalResult importer::buildTrainingResults(
    GraphImporter &g, const TrainingInfo &info,
    const llvm::StringMap<ArgRole> &argRoles, SmallVectorImpl<Value> &results,
    SmallVectorImpl<DictionaryAttr> &resultAttrs, std::string &error) {
  OpBuilder &b = g.builder;
  auto attrs = [&](StringRef name, ArgRole role) {
    return b.getDictionaryAttr(
        {b.getNamedAttr(kNameAttr, b.getStringAttr(name)),
         b.getNamedAttr(kRoleAttr, ArgRoleAttr::get(g.ctx, role))});
  };
  // convertTrainingNode checked that the loss is a computed float scalar.
  results.push_back(g.values.lookup(info.loss));
  resultAttrs.push_back(attrs(info.loss, ArgRole::loss));
  for (const auto &[key, value] : info.bindings) {
    std::string what =
        "training_info: update_binding '" + key + "' <- '" + value + "': ";
    onnx::NodeProto ref;
    ref.add_input(value);
    std::string why;
    FailureOr<Value> v = g.input(ref, 0, why);
    if (failed(v)) {
      error = what + why;
      return failure();
    }
    Value arg = g.values.lookup(key);
    auto role = argRoles.find(key);
    if (!arg || !isa<BlockArgument>(arg) || role == argRoles.end()) {
      error = what + "'" + key + "' is not a function argument";
      return failure();
    }
    if (v->getType() != arg.getType()) {
      error = what + "the value has type " + typeToString(v->getType()) +
              " but the initializer has type " + typeToString(arg.getType());
      return failure();
    }
    results.push_back(*v);
    resultAttrs.push_back(attrs(key, role->second));
  }
  return success();
}
