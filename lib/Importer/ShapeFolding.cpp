//===- ShapeFolding.cpp - compile-time evaluation of shape subgraphs ------===//
//
// PyTorch exports a dynamic batch as Shape -> Gather -> Unsqueeze -> Concat
// (-> Slice, Cast, arithmetic) feeding Reshape. Once the batch is bound every
// shape is static, so these nodes evaluate here to constants and never
// become IR.
//
//===----------------------------------------------------------------------===//

#include "FoldSupport.h"
#include "tidal/Dialect/Tidal/IR/ShapeUtils.h"

#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/STLExtras.h"

#include <cmath>
#include <optional>
#include <utility>

using namespace mlir;
using namespace mlir::tidal;
using namespace mlir::tidal::importer;

using namespace mlir::tidal::importer::fold;

bool importer::tryFoldNode(GraphImporter &g, const onnx::NodeProto &node,
                           llvm::SmallVectorImpl<DenseElementsAttr> &results,
                           std::string &error) {
  const std::string &op = node.op_type();
  MLIRContext *ctx = g.ctx;

  // Constant nodes are always compile-time values.
  if (op == "Constant") {
    for (const auto &a : node.attribute()) {
      RankedTensorType scalarF =
          RankedTensorType::get({}, Float32Type::get(ctx));
      RankedTensorType scalarI =
          RankedTensorType::get({}, IntegerType::get(ctx, 64));
      auto vec = [&](Type elt, int64_t n) {
        return RankedTensorType::get({n}, elt);
      };
      if (a.name() == "value") {
        DenseElementsAttr v = decodeTensor(ctx, a.t(), "", error);
        if (!v)
          return true;
        results.push_back(v);
      } else if (a.name() == "value_float") {
        results.push_back(
            makeConstant(scalarF, llvm::ArrayRef<double>{double(a.f())}));
      } else if (a.name() == "value_floats") {
        llvm::SmallVector<double> v(a.floats().begin(), a.floats().end());
        results.push_back(
            makeConstant(vec(Float32Type::get(ctx), v.size()), v));
      } else if (a.name() == "value_int") {
        results.push_back(
            makeConstant(scalarI, llvm::ArrayRef<int64_t>{int64_t(a.i())}));
      } else if (a.name() == "value_ints") {
        llvm::SmallVector<int64_t> v(a.ints().begin(), a.ints().end());
        results.push_back(
            makeConstant(vec(IntegerType::get(ctx, 64), v.size()), v));
      } else {
        error = "attribute '" + a.name() + "' is not supported";
        return true;
      }
      return true;
    }
    error = "has no value attribute";
    return true;
  }

  // NonZero's count may only move (SelectionCount.cpp).
  if (std::string why = countProblem(g, node, /*folding=*/true); !why.empty()) {
    error = why;
    return true;
  }

  // Shape needs only the input's static type.
  if (op == "Shape") {
    RankedTensorType t = g.hasInput(node, 0) ? g.inputType(node, 0) : nullptr;
    if (!t) {
      error = "input is not defined";
      return true;
    }
    int64_t rank = t.getRank();
    int64_t start = intAttr(node, "start", 0), end = intAttr(node, "end", rank);
    if (start < 0)
      start += rank;
    if (end < 0)
      end += rank;
    start = std::clamp<int64_t>(start, 0, rank);
    end = std::clamp<int64_t>(end, start, rank);
    llvm::SmallVector<int64_t> dims(t.getShape().slice(start, end - start));
    auto type = RankedTensorType::get({int64_t(dims.size())},
                                      IntegerType::get(ctx, 64));
    results.push_back(makeConstant(type, dims));
    return true;
  }

  // Size and EyeLike need only the input's static type, too.
  if (op == "Size" || op == "EyeLike") {
    RankedTensorType t = g.hasInput(node, 0) ? g.inputType(node, 0) : nullptr;
    if (!t || !t.hasStaticShape()) {
      error = "input must have a static shape";
      return true;
    }
    if (op == "Size") {
      results.push_back(
          makeConstant(RankedTensorType::get({}, IntegerType::get(ctx, 64)),
                       llvm::ArrayRef<int64_t>{t.getNumElements()}));
      return true;
    }
    return foldEyeLike(ctx, node, t, results, error);
  }

  // Window functions and the mel matrix: constants of their scalar inputs.
  if (op == "HannWindow" || op == "HammingWindow" || op == "BlackmanWindow" ||
      op == "MelWeightMatrix") {
    llvm::SmallVector<DenseElementsAttr> in;
    for (int i = 0; i < node.input_size(); ++i) {
      DenseElementsAttr c =
          node.input(i).empty() ? DenseElementsAttr() : g.constInput(node, i);
      if (!c && !node.input(i).empty()) {
        error = "input '" + node.input(i) +
                "' must be known at compile time: an initializer, a Constant "
                "or a computation on shapes";
        return true;
      }
      in.push_back(c);
    }
    if (in.empty() || !in[0]) {
      error = "input 0 is required";
      return true;
    }
    FoldCall c{ctx, node, in, results, error, Vals(in[0])};
    return foldSpectral(c);
  }

  static const llvm::StringSet<> foldable = {"Gather",    "Unsqueeze",
                                             "Squeeze",   "Concat",
                                             "Slice",     "Cast",
                                             "Reshape",   "Identity",
                                             "Add",       "Sub",
                                             "Mul",       "Div",
                                             "Neg",       "ConstantOfShape",
                                             "Range",     "Equal",
                                             "Where",     "Expand",
                                             "Less",      "Greater",
                                             "Sqrt",      "Pow",
                                             "Flatten",   "Transpose",
                                             "Mod",       "Not",
                                             "And",       "Or",
                                             "ScatterND", "Abs",
                                             "Relu",      "Ceil",
                                             "Floor",     "ReduceProd",
                                             "ReduceSum", "ReduceMax",
                                             "ReduceMin", "Min",
                                             "CumSum",    "Split",
                                             "Max"};
  if (!foldable.contains(op))
    return false;
  // Fold only when every given input is known; optional empty inputs are
  // fine.
  llvm::SmallVector<DenseElementsAttr> in;
  for (int i = 0; i < node.input_size(); ++i) {
    if (node.input(i).empty()) {
      in.push_back({});
      continue;
    }
    DenseElementsAttr c = g.constInput(node, i);
    if (!c)
      return false;
    if (c.getNumElements() > kMaxFoldElements)
      return false;
    in.push_back(c);
  }
  if (in.empty() || !in[0])
    return false;
  // Only shape-like float math is folded: leave float compute on real data
  // (e.g. a Constant weight times a Constant) to the graph. A float Range
  // of known bounds (XLNet's relative positions, torch.arange(float)) is a
  // constant, and so is arithmetic on such positions (Funnel's pooled
  // positions); the inputs stay below kMaxFoldElements.
  bool allInt = llvm::all_of(in, [](DenseElementsAttr a) {
    return !a || !isa<FloatType>(a.getElementType());
  });
  if (!allInt && op != "Cast" && op != "Identity" && op != "Unsqueeze" &&
      op != "Squeeze" && op != "Reshape" && op != "Concat" && op != "Gather" &&
      op != "Slice" && op != "Sqrt" && op != "Div" && op != "Mul" &&
      op != "ScatterND" && op != "Mod" && op != "Abs" && op != "Relu" &&
      op != "Ceil" && op != "Floor" && op != "Range" && op != "Neg" &&
      op != "Add" && op != "Sub")
    return false;

  FoldCall c{ctx, node, in, results, error, Vals(in[0])};
  return foldElementwise(c) || foldDataMovement(c) || foldReduce(c);
}
