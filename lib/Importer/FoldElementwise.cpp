//===- FoldElementwise.cpp - element-wise compile-time folds
//----------------===//
//
// Identity, Neg, Sqrt, Abs, Relu, Ceil, Floor, Cast, the arithmetic and
// comparisons, Mod, the mask logic, ConstantOfShape, Range and Where on
// constants (ShapeFolding.cpp decides which nodes reach here).
//
//===----------------------------------------------------------------------===//

#include "FoldSupport.h"

#include "tidal/Dialect/Tidal/IR/ShapeUtils.h"

#include <cmath>

using namespace mlir;
using namespace mlir::tidal;
using namespace mlir::tidal::importer;
using namespace mlir::tidal::importer::fold;

bool fold::foldElementwise(FoldCall &c) {
  const onnx::NodeProto &node = c.node;
  const std::string &op = node.op_type();
  llvm::ArrayRef<DenseElementsAttr> in = c.in;
  llvm::SmallVectorImpl<DenseElementsAttr> &results = c.results;
  std::string &error = c.error;
  MLIRContext *ctx = c.ctx;
  const Vals &x = c.x;
  llvm::ArrayRef<int64_t> shape = x.type.getShape();
  if (op == "Identity") {
    results.push_back(in[0]);
  } else if (op == "Neg" || op == "Sqrt" || op == "Abs" || op == "Relu" ||
             op == "Ceil" || op == "Floor") {
    // Shape arithmetic: ceil-division for padding and trip counts (ONNX's
    // Range function body is Relu(Ceil((limit - start) / delta))).
    auto type = x.type;
    auto apply = [&](double a) {
      if (op == "Neg")
        return -a;
      if (op == "Sqrt")
        return std::sqrt(a);
      if (op == "Abs")
        return std::fabs(a);
      if (op == "Relu")
        return a > 0 ? a : 0.0;
      return op == "Ceil" ? std::ceil(a) : std::floor(a);
    };
    llvm::SmallVector<double> v;
    for (int64_t k = 0; k < type.getNumElements(); ++k)
      v.push_back(apply(x.at(k)));
    results.push_back(makeConstant(type, v));
  } else if (op == "Cast") {
    Type elt = elementTypeFor(ctx, intAttr(node, "to", 0));
    if (!elt) {
      error = "Cast to an unsupported type";
      return true;
    }
    auto type = RankedTensorType::get(shape, elt);
    if (isa<FloatType>(elt)) {
      llvm::SmallVector<double> v;
      for (int64_t k = 0; k < type.getNumElements(); ++k)
        v.push_back(x.at(k));
      results.push_back(makeConstant(type, v));
    } else {
      llvm::SmallVector<int64_t> v;
      for (int64_t k = 0; k < type.getNumElements(); ++k)
        v.push_back(x.iat(k));
      results.push_back(makeConstant(type, v));
    }
  } else if (op == "Add" || op == "Sub" || op == "Mul" || op == "Div" ||
             op == "Equal" || op == "Less" || op == "Greater" || op == "Pow") {
    if (in.size() < 2 || !in[1])
      return false;
    DenseElementsAttr r = binary(x, Vals(in[1]), op, error);
    if (!r)
      return true;
    results.push_back(r);
  } else if (op == "Min" || op == "Max") {
    // Variadic, broadcasting (shape arithmetic: torch.diagonal's lengths).
    DenseElementsAttr acc = in[0];
    for (size_t k = 1; k < in.size(); ++k) {
      if (!in[k])
        return false;
      acc = binary(Vals(acc), Vals(in[k]), op, error);
      if (!acc)
        return true;
    }
    results.push_back(acc);
  } else if (op == "Mod") {
    // Integers: fmod = 0 takes the divisor's sign, as Python's %; fmod = 1
    // the dividend's, as C's. Floats: fmod must be 1 (ONNX), C's fmod.
    if (in.size() < 2 || !in[1])
      return false;
    auto pair = broadcastPair(x, Vals(in[1]), error);
    if (!pair)
      return true;
    const Vals &xv = pair->first, &yv = pair->second;
    const int64_t n = xv.type.getNumElements();
    const bool fmod = intAttr(node, "fmod", 0) != 0;
    if (xv.isFloat || yv.isFloat) {
      if (!fmod) {
        error = "Mod of floating-point values needs fmod = 1 (ONNX)";
        return true;
      }
      llvm::SmallVector<double> v;
      for (int64_t k = 0; k < n; ++k)
        v.push_back(std::fmod(xv.at(k), yv.at(k)));
      results.push_back(makeConstant(
          RankedTensorType::get(xv.type.getShape(), x.type.getElementType()),
          v));
      return true;
    }
    llvm::SmallVector<int64_t> v;
    for (int64_t k = 0; k < n; ++k) {
      int64_t a = xv.iat(k), b = yv.iat(k);
      if (b == 0) {
        error = "integer modulo by zero in a shape computation";
        return true;
      }
      int64_t r = a % b;
      if (!fmod && r != 0 && ((r < 0) != (b < 0)))
        r += b;
      v.push_back(r);
    }
    results.push_back(makeConstant(
        RankedTensorType::get(xv.type.getShape(), x.type.getElementType()), v));
  } else if (op == "Not" || op == "And" || op == "Or") {
    // Booleans by truth (non-zero), broadcast as the binary ops do.
    Vals y = x;
    if (op != "Not") {
      if (in.size() < 2 || !in[1])
        return false;
      y = Vals(in[1]);
    }
    auto pair = broadcastPair(x, y, error);
    if (!pair)
      return true;
    const Vals &xv = pair->first, &yv = pair->second;
    llvm::SmallVector<int64_t> v;
    for (int64_t k = 0, n = xv.type.getNumElements(); k < n; ++k) {
      bool a = xv.iat(k) != 0, b = yv.iat(k) != 0;
      v.push_back(op == "Not" ? !a : op == "And" ? (a && b) : (a || b));
    }
    results.push_back(makeConstant(
        RankedTensorType::get(xv.type.getShape(), IntegerType::get(ctx, 1)),
        v));
  } else if (op == "ConstantOfShape") {
    llvm::SmallVector<int64_t> outShape = intValues(in[0]);
    if (llvm::any_of(outShape, [](int64_t d) { return d < 0; }))
      return false;
    DenseElementsAttr value;
    if (const auto *a = findAttribute(node, "value")) {
      value = decodeTensor(ctx, a->t(), "", error);
      if (!value)
        return true;
    } else {
      value = makeConstant(RankedTensorType::get({1}, Float32Type::get(ctx)),
                           llvm::ArrayRef<double>{0.0});
    }
    if (numElements(outShape) > kMaxFoldElements)
      return false;
    Vals v(value);
    results.push_back(gatherElements(v, outShape, [](int64_t) { return 0; }));
  } else if (op == "Range") {
    if (in.size() < 3 || !in[1] || !in[2])
      return false;
    double start = x.at(0), limit = Vals(in[1]).at(0),
           delta = Vals(in[2]).at(0);
    if (delta == 0) {
      error = "Range delta is zero";
      return true;
    }
    int64_t n =
        std::max<int64_t>(0, int64_t(std::ceil((limit - start) / delta)));
    if (n > kMaxFoldElements)
      return false;
    auto type = RankedTensorType::get({n}, x.type.getElementType());
    llvm::SmallVector<double> v;
    for (int64_t k = 0; k < n; ++k)
      v.push_back(start + k * delta);
    results.push_back(makeConstant(type, v));
  } else if (op == "Where") {
    if (in.size() < 3 || !in[1] || !in[2])
      return false;
    Vals cond(in[0]), a(in[1]), b(in[2]);
    auto s1 = broadcastShapes(cond.type.getShape(), a.type.getShape());
    auto s2 = s1 ? broadcastShapes(*s1, b.type.getShape()) : std::nullopt;
    if (!s2) {
      error = "Where operands do not broadcast";
      return true;
    }
    auto cv = broadcastTo(cond, *s2, error), av = broadcastTo(a, *s2, error),
         bv = broadcastTo(b, *s2, error);
    if (!cv || !av || !bv)
      return true;
    auto type = RankedTensorType::get(*s2, a.type.getElementType());
    llvm::SmallVector<double> v;
    for (int64_t k = 0; k < type.getNumElements(); ++k)
      v.push_back(cv->iat(k) ? av->at(k) : bv->at(k));
    results.push_back(makeConstant(type, v));
  } else {
    return false;
  }
  return true;
}

bool fold::foldEyeLike(MLIRContext *ctx, const onnx::NodeProto &node,
                       RankedTensorType like,
                       llvm::SmallVectorImpl<DenseElementsAttr> &results,
                       std::string &error) {
  if (like.getRank() != 2) {
    error = "input must have rank 2, got " + typeToString(like);
    return true;
  }
  Type elt = like.getElementType();
  if (const auto *dtype = findAttribute(node, "dtype")) {
    elt = elementTypeFor(ctx, dtype->i());
    if (!elt) {
      error = "dtype " + onnxTypeName(dtype->i()) + " is not supported";
      return true;
    }
  }
  if (like.getNumElements() > kMaxEyeElements) {
    error = "the identity matrix " + typeToString(like) + " has more than " +
            std::to_string(kMaxEyeElements) + " elements";
    return true;
  }
  const int64_t rows = like.getDimSize(0), cols = like.getDimSize(1);
  const int64_t k = intAttr(node, "k", 0);
  auto type = RankedTensorType::get({rows, cols}, elt);
  llvm::SmallVector<double> v(rows * cols, 0.0);
  for (int64_t r = 0; r < rows; ++r)
    if (r + k >= 0 && r + k < cols)
      v[r * cols + r + k] = 1.0;
  results.push_back(
      isa<FloatType>(elt)
          ? makeConstant(type, v)
          : makeConstant(type, llvm::SmallVector<int64_t>(v.begin(), v.end())));
  return true;
}
