//===- TrainingOps.cpp - ai.onnx.preview.training nodes to tidal ops ------===//
//
// ONNX's optimizers are variadic over N tensors (R, T, X1..Xn, G1..Gn,
// V1..Vn[, H1..Hn]); tidal has one update op per tensor, so that each update
// is scheduled, placed and planned on its own. Gradient becomes the
// tidal.gradient marker that --tidal-autodiff expands.
//
//===----------------------------------------------------------------------===//

#include "ImporterImpl.h"

#include "llvm/ADT/STLExtras.h"

#include <charconv>
#include <cstdlib>

using namespace mlir;
using namespace mlir::tidal;
using namespace mlir::tidal::importer;

namespace {

/// An ONNX float attribute as the double a Python user wrote: the shortest
/// decimal that round-trips through float32 (0.95f becomes 0.95, not
/// 0.949999988), as the optimizer ops hold Python-float hyper-parameters.
double shortestDouble(float f) {
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof(buf) - 1, f);
  *res.ptr = '\0';
  return std::strtod(buf, nullptr);
}

/// One optimizer node: its float attributes and the per-tensor operands.
struct Optimizer {
  GraphImporter &g;
  const onnx::NodeProto &node;
  std::string &error;

  LogicalResult fail(const llvm::Twine &msg) {
    error = msg.str();
    return failure();
  }

  /// Float attribute `name`; `def` null means the attribute is required.
  FailureOr<NamedAttribute> floatAttr(llvm::StringRef name,
                                      std::optional<float> def) {
    const onnx::AttributeProto *a = findAttribute(node, name);
    if (!a && !def)
      return fail("required attribute '" + name + "' is missing");
    if (a && a->type() != onnx::AttributeProto::FLOAT)
      return fail("attribute '" + name + "' must be a float");
    return g.builder.getNamedAttr(
        name, g.builder.getF64FloatAttr(shortestDouble(a ? a->f() : *def)));
  }

  /// Checks the counts for `perTensor` inputs (X, G and the states) and
  /// `perTensor - 1` outputs per tensor; returns N.
  FailureOr<int> tensorCount(int perTensor, llvm::StringRef layout) {
    int variadic = node.input_size() - 2;
    if (variadic <= 0 || variadic % perTensor != 0)
      return fail("expects inputs R, T, " + layout + " for N tensors (2 + " +
                  llvm::Twine(perTensor) + "N inputs), got " +
                  llvm::Twine(node.input_size()));
    int n = variadic / perTensor;
    if (node.output_size() != (perTensor - 1) * n)
      return fail(llvm::Twine(node.input_size()) + " inputs update " +
                  llvm::Twine(n) + " tensor(s), which needs " +
                  llvm::Twine((perTensor - 1) * n) + " outputs, got " +
                  llvm::Twine(node.output_size()));
    for (int i = 0; i < node.input_size(); ++i)
      if (node.input(i).empty())
        return fail("input " + llvm::Twine(i) + " is required");
    return n;
  }

  FailureOr<Value> in(int i) {
    if (!g.inputType(node, i))
      return fail("input '" + node.input(i) + "' is not defined");
    return g.input(node, i, error);
  }

  /// R must be a float scalar and T an int64 scalar (ONNX's T1 and T2).
  LogicalResult checkRT(Value r, Value t) {
    auto rt = cast<RankedTensorType>(r.getType());
    auto tt = cast<RankedTensorType>(t.getType());
    if (rt.getRank() != 0 || !isa<FloatType>(rt.getElementType()))
      return fail("R ('" + node.input(0) +
                  "') must be a floating-point scalar, got " +
                  typeToString(rt));
    if (tt.getRank() != 0 || !tt.getElementType().isInteger(64))
      return fail("T ('" + node.input(1) + "') must be an int64 scalar, got " +
                  typeToString(tt));
    return success();
  }

  /// Creates one `opName` per tensor on (R, T, X_i, G_i, S1_i, ...) and binds
  /// output k * n + i to its result k.
  LogicalResult emit(llvm::StringRef opName, int n, int perTensor,
                     llvm::ArrayRef<NamedAttribute> attrs) {
    auto r = in(0), t = in(1);
    if (failed(r) || failed(t) || failed(checkRT(*r, *t)))
      return failure();
    for (int i = 0; i < n; ++i) {
      llvm::SmallVector<Value> operands{*r, *t};
      for (int k = 0; k < perTensor; ++k) {
        auto v = in(2 + k * n + i);
        if (failed(v))
          return failure();
        operands.push_back(*v);
      }
      std::string why;
      Operation *op = g.create(opName, operands, attrs, perTensor - 1, why);
      if (!op)
        return fail("tensor " + llvm::Twine(i + 1) + " of " + llvm::Twine(n) +
                    " ('" + node.input(2 + i) + "'): " + why);
      for (int k = 0; k < perTensor - 1; ++k)
        if (!node.output(k * n + i).empty())
          g.values[node.output(k * n + i)] = op->getResult(k);
    }
    return success();
  }
};

LogicalResult convertMomentum(Optimizer &o) {
  auto n = o.tensorCount(3, "X1..Xn, G1..Gn, V1..Vn");
  if (failed(n))
    return failure();
  auto alpha = o.floatAttr("alpha", std::nullopt);
  auto beta = o.floatAttr("beta", std::nullopt);
  auto norm = o.floatAttr("norm_coefficient", std::nullopt);
  if (failed(alpha) || failed(beta) || failed(norm))
    return failure();
  const onnx::AttributeProto *mode = findAttribute(o.node, "mode");
  if (!mode)
    return o.fail("required attribute 'mode' is missing");
  if (mode->s() != "standard" && mode->s() != "nesterov")
    return o.fail("attribute 'mode' must be \"standard\" or \"nesterov\", got "
                  "\"" +
                  mode->s() + "\"");
  NamedAttribute nesterov = o.g.builder.getNamedAttr(
      "nesterov", o.g.builder.getBoolAttr(mode->s() == "nesterov"));
  return o.emit(OnnxMomentumOp::getOperationName(), *n, 3,
                {*alpha, *beta, *norm, nesterov});
}

LogicalResult convertAdagrad(Optimizer &o) {
  auto n = o.tensorCount(3, "X1..Xn, G1..Gn, H1..Hn");
  if (failed(n))
    return failure();
  auto decay = o.floatAttr("decay_factor", 0.0f);
  auto eps = o.floatAttr("epsilon", 1e-6f);
  auto norm = o.floatAttr("norm_coefficient", 0.0f);
  if (failed(decay) || failed(eps) || failed(norm))
    return failure();
  return o.emit(OnnxAdagradOp::getOperationName(), *n, 3,
                {*decay, *eps, *norm});
}

LogicalResult convertAdam(Optimizer &o) {
  auto n = o.tensorCount(4, "X1..Xn, G1..Gn, V1..Vn, H1..Hn");
  if (failed(n))
    return failure();
  auto alpha = o.floatAttr("alpha", 0.9f);
  auto beta = o.floatAttr("beta", 0.999f);
  auto eps = o.floatAttr("epsilon", 1e-6f);
  auto norm = o.floatAttr("norm_coefficient", 0.0f);
  auto post = o.floatAttr("norm_coefficient_post", 0.0f);
  if (failed(alpha) || failed(beta) || failed(eps) || failed(norm) ||
      failed(post))
    return failure();
  return o.emit(OnnxAdamOp::getOperationName(), *n, 4,
                {*alpha, *beta, *eps, *norm, *post});
}

/// Gradient(xs, y) at the current values of xs: its inputs must be the
/// tensors named in xs then zs (analyzeTrainingInfo checked the names).
LogicalResult convertGradient(Optimizer &o) {
  GraphImporter &g = o.g;
  const onnx::AttributeProto *xsAttr = findAttribute(o.node, "xs");
  const onnx::AttributeProto *yAttr = findAttribute(o.node, "y");
  if (!xsAttr || !yAttr)
    return o.fail("required attribute 'xs' or 'y' is missing");
  std::string y = yAttr->s();
  auto yv = g.values.find(y);
  if (yv == g.values.end() || isa<BlockArgument>(yv->second))
    return o.fail("y names '" + y +
                  "', which is not computed by the inference or algorithm "
                  "graph");
  auto yt = cast<RankedTensorType>(yv->second.getType());
  if (yt.getRank() != 0 || !isa<FloatType>(yt.getElementType()))
    return o.fail("y names '" + y + "' of type " + typeToString(yt) +
                  "; the loss must be a floating-point scalar");
  llvm::SmallVector<Value> operands{yv->second};
  for (const std::string &x : xsAttr->strings()) {
    auto xv = g.values.find(x);
    if (xv == g.values.end() || !isa<BlockArgument>(xv->second))
      return o.fail("xs names '" + x +
                    "', which is not a function argument (an initializer "
                    "that tidal reads at compile time cannot be "
                    "differentiated)");
    operands.push_back(xv->second);
  }
  std::string why;
  Operation *op = g.create(GradientOp::getOperationName(), operands, {},
                           xsAttr->strings_size(), why);
  if (!op)
    return o.fail(why);
  g.bindOutputs(o.node, op->getResults());
  return success();
}

} // namespace

LogicalResult importer::convertTrainingNode(GraphImporter &g,
                                            const onnx::NodeProto &node,
                                            bool inAlgorithm,
                                            std::string &error) {
  Optimizer o{g, node, error};
  const std::string &op = node.op_type();
  if (op == "Momentum")
    return convertMomentum(o);
  if (op == "Adagrad")
    return convertAdagrad(o);
  if (op == "Adam")
    return convertAdam(o);
  if (op == "Gradient") {
    if (!inAlgorithm)
      return o.fail("Gradient is supported only in the algorithm graph of a "
                    "training_info");
    return convertGradient(o);
  }
  return o.fail("operator " + op + " (" + kTrainingDomain + " version " +
                llvm::Twine(kTrainingOpset) + ") is not supported by tidal");
}
