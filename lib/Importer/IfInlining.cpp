//===- IfInlining.cpp - If nodes whose condition is a compile-time value --===//
//
// PyTorch exports shape tests as If: `x.squeeze(1)` on a dimension that may
// be 1 becomes If(Shape(x)[1] == 1, Squeeze, Identity), and so does the
// squeeze inside F.local_response_norm. Once the batch is bound every shape
// is static, the condition folds to a constant, and the branch taken is
// imported in place of the node: its nodes become ops of the function, its
// outputs the If's. A condition computed from data is an error naming the
// node.
//
//===----------------------------------------------------------------------===//

#include "ImporterImpl.h"
#include "ModelImporter.h"

using namespace mlir;
using namespace mlir::tidal;
using namespace mlir::tidal::importer;

/// The names `g` reads that none of its inputs, initializers or nodes
/// define, at any depth of its nodes' graph attributes.
static void collectGraphReferences(const onnx::GraphProto &g,
                                   llvm::StringSet<> &refs) {
  llvm::StringSet<> local, inner;
  for (const auto &in : g.input())
    local.insert(in.name());
  for (const auto &init : g.initializer())
    local.insert(init.name());
  for (const auto &node : g.node())
    for (const std::string &out : node.output())
      local.insert(out);
  for (const auto &node : g.node()) {
    for (const std::string &in : node.input())
      if (!in.empty() && !local.contains(in))
        refs.insert(in);
    inner.clear();
    collectOuterReferences(node, inner);
    for (const auto &ref : inner)
      if (!local.contains(ref.getKey()))
        refs.insert(ref.getKey());
  }
}

void importer::collectOuterReferences(const onnx::NodeProto &node,
                                      llvm::StringSet<> &refs) {
  for (const auto &attr : node.attribute()) {
    if (attr.has_g())
      collectGraphReferences(attr.g(), refs);
    for (const auto &g : attr.graphs())
      collectGraphReferences(g, refs);
  }
}

LogicalResult ModelImporter::inlineIf(const onnx::NodeProto &node, int index,
                                      bool inAlgorithm, std::string &why,
                                      std::string &error) {
  DenseElementsAttr cond = gi->constInput(node, 0);
  if (!cond || cond.getNumElements() != 1) {
    why = "the condition is not known at compile time (tidal imports an If "
          "only when it is a shape test, which the bound batch decides)";
    return failure();
  }
  const bool taken = intValues(cond)[0] != 0;
  const char *name = taken ? "then_branch" : "else_branch";
  const onnx::AttributeProto *branch = findAttribute(node, name);
  if (!branch || !branch->has_g()) {
    why = std::string("has no ") + name + " graph";
    return failure();
  }
  const onnx::GraphProto &g = branch->g();
  if (g.output_size() != node.output_size()) {
    why = std::string(name) + " has " + std::to_string(g.output_size()) +
          " outputs for the node's " + std::to_string(node.output_size());
    return failure();
  }
  if (g.input_size() != 0) {
    why = std::string(name) + " declares inputs (an If branch takes none)";
    return failure();
  }
  // An error in the branch names the If and the branch too.
  auto inBranch = [&] {
    error = describeNode(node, index, inAlgorithm) + ", " + name + ": " + error;
    return failure();
  };
  // The branch's nodes are checked and ordered as a graph's; what it reads
  // from outside was imported before the If (sortNodes ordered the If after
  // its producers), and a name no one defines fails at its node.
  if (failed(checkNodeOpsets(g, inAlgorithm, trainingOpset, error)))
    return inBranch();
  llvm::StringSet<> available;
  collectGraphReferences(g, available);
  std::vector<int> order;
  if (failed(sortNodes(g, std::move(available), inAlgorithm, order, error)) ||
      failed(convertNodes(g, order, inAlgorithm, error)))
    return inBranch();
  // The If's outputs are the branch's: constants stay constants (a shape
  // computation may go on folding), sequences sequences, the rest are the
  // branch's values.
  for (int i = 0; i < node.output_size(); ++i) {
    const std::string &out = node.output(i);
    if (out.empty())
      continue;
    const std::string &from = g.output(i).name();
    FailureOr<Bound> b = boundTensor(from, why);
    if (failed(b)) {
      why = std::string(name) + " output '" + from + "': " + why;
      return failure();
    }
    bindTensor(out, *b);
  }
  return success();
}
