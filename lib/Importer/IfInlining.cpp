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

llvm::StringSet<> importer::definedNames(const onnx::GraphProto &g) {
  llvm::StringSet<> local;
  for (const auto &in : g.input())
    local.insert(in.name());
  for (const auto &init : g.initializer())
    local.insert(init.name());
  for (const auto &node : g.node())
    for (const std::string &o : node.output())
      if (!o.empty())
        local.insert(o);
  return local;
}

/// The names `g` reads that none of its inputs, initializers or nodes
/// define, at any depth of its nodes' graph attributes.
static void collectGraphReferences(const onnx::GraphProto &g,
                                   llvm::StringSet<> &refs) {
  llvm::StringSet<> local = definedNames(g), inner;
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
  if (!cond)
    return selectIf(node, index, inAlgorithm, why, error);
  if (cond.getNumElements() != 1) {
    why = "the condition has " + std::to_string(cond.getNumElements()) +
          " elements (an If's condition is one value)";
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

LogicalResult ModelImporter::selectIf(const onnx::NodeProto &node, int index,
                                      bool inAlgorithm, std::string &why,
                                      std::string &error) {
  FailureOr<Bound> cond = boundTensor(node.input(0), why);
  if (failed(cond))
    return failure();
  auto ct = dyn_cast_or_null<RankedTensorType>(cond->type());
  if (!ct || ct.getNumElements() != 1 || !ct.getElementType().isInteger(1)) {
    why = "the condition must be one bool value";
    return failure();
  }
  // Both branches are imported (renamed apart), and each output selects
  // between them: where(cond, then, else). The gradient reaches the branch
  // taken only.
  llvm::SmallVector<Bound> outs[2];
  const char *names[2] = {"then_branch", "else_branch"};
  const std::string prefix = unrollPrefix(node, index);
  const Location ifLoc = gi->loc;
  for (int b = 0; b < 2; ++b) {
    const onnx::AttributeProto *branch = findAttribute(node, names[b]);
    if (!branch || !branch->has_g()) {
      why = std::string("has no ") + names[b] + " graph";
      return failure();
    }
    const onnx::GraphProto &g = branch->g();
    if (g.output_size() != node.output_size() || g.input_size() != 0) {
      why = std::string(names[b]) + " has " + std::to_string(g.input_size()) +
            " inputs and " + std::to_string(g.output_size()) +
            " outputs for the node's " + std::to_string(node.output_size());
      return failure();
    }
    if (failed(importBody(g, prefix + "/" + names[b] + "/", {}, outs[b],
                          inAlgorithm, why, error)))
      return failInBody(node, index, inAlgorithm,
                        std::string(names[b]) +
                            " (the condition is data: both branches are "
                            "computed)",
                        why, error);
  }
  gi->loc = ifLoc;
  FailureOr<Value> c = valueOf(*cond, why);
  if (failed(c))
    return failure();
  for (int i = 0; i < node.output_size(); ++i) {
    const std::string &out = node.output(i);
    if (out.empty())
      continue;
    const Bound &t = outs[0][i], &e = outs[1][i];
    if (t.isSequence() || e.isSequence() || t.type() != e.type()) {
      why = "output '" + out + "': the branches give " +
            (t.isSequence() ? std::string("a sequence")
                            : typeToString(t.type())) +
            " and " +
            (e.isSequence() ? std::string("a sequence")
                            : typeToString(e.type())) +
            "; an If on a data condition is a selection between equal "
            "tensor types";
      return failure();
    }
    FailureOr<Value> tv = valueOf(t, why), ev = valueOf(e, why);
    if (failed(tv) || failed(ev))
      return failure();
    Operation *w =
        gi->create(WhereOp::getOperationName(), {*c, *tv, *ev}, {}, 1, why);
    if (!w)
      return failure();
    gi->values[out] = w->getResult(0);
  }
  return success();
}
