//===- FoldSupport.cpp - what the compile-time folds share ----------------===//

#include "FoldSupport.h"

#include "tidal/Dialect/Tidal/IR/ShapeUtils.h"

#include <algorithm>
#include <cmath>

using namespace mlir;
using namespace mlir::tidal;
using namespace mlir::tidal::importer;
using namespace mlir::tidal::importer::fold;

namespace {

/// One element of a folded binary op, in integer or floating-point
/// arithmetic.
template <typename T> T apply(llvm::StringRef op, T x, T y) {
  if (op == "Add")
    return x + y;
  if (op == "Sub")
    return x - y;
  if (op == "Mul")
    return x * y;
  if (op == "Div")
    return x / y;
  if (op == "Equal")
    return T(x == y);
  if (op == "Less")
    return T(x < y);
  if (op == "Greater")
    return T(x > y);
  if (op == "Min")
    return std::min(x, y);
  if (op == "Max")
    return std::max(x, y);
  return T(std::pow(double(x), double(y)));
}

} // namespace

int64_t fold::intAttr(const onnx::NodeProto &node, llvm::StringRef name,
                      int64_t def) {
  const auto *a = findAttribute(node, name);
  return a ? a->i() : def;
}

llvm::SmallVector<int64_t> fold::stridesOf(llvm::ArrayRef<int64_t> shape) {
  llvm::SmallVector<int64_t> s(shape.size(), 1);
  for (int i = int(shape.size()) - 2; i >= 0; --i)
    s[i] = s[i + 1] * shape[i + 1];
  return s;
}

DenseElementsAttr
fold::gatherElements(const Vals &v, llvm::ArrayRef<int64_t> shape,
                     llvm::function_ref<int64_t(int64_t)> pick) {
  auto type = RankedTensorType::get(shape, v.type.getElementType());
  int64_t n = type.getNumElements();
  if (v.isFloat) {
    llvm::SmallVector<double> out(n);
    for (int64_t k = 0; k < n; ++k)
      out[k] = v.f[pick(k)];
    return makeConstant(type, out);
  }
  llvm::SmallVector<int64_t> out(n);
  for (int64_t k = 0; k < n; ++k)
    out[k] = v.i[pick(k)];
  return makeConstant(type, out);
}

DenseElementsAttr fold::binary(const Vals &a, const Vals &b, llvm::StringRef op,
                               std::string &error) {
  auto shape = broadcastShapes(a.type.getShape(), b.type.getShape());
  if (!shape) {
    error = "operand shapes do not broadcast";
    return {};
  }
  bool cmp = op == "Equal" || op == "Less" || op == "Greater";
  Type elt =
      cmp ? IntegerType::get(a.type.getContext(), 1) : a.type.getElementType();
  auto type = RankedTensorType::get(*shape, elt);
  int64_t n = type.getNumElements();
  auto st = stridesOf(*shape);
  auto index = [&](const Vals &v, int64_t k) {
    auto vs = v.type.getShape();
    auto vst = stridesOf(vs);
    int64_t off = 0, lead = shape->size() - vs.size();
    for (size_t d = lead; d < shape->size(); ++d) {
      int64_t c = (k / st[d]) % (*shape)[d];
      if (vs[d - lead] != 1)
        off += c * vst[d - lead];
    }
    return off;
  };
  bool useFloat = a.isFloat || b.isFloat;
  llvm::SmallVector<double> fo(n);
  llvm::SmallVector<int64_t> io(n);
  for (int64_t k = 0; k < n; ++k) {
    int64_t ia = index(a, k), ib = index(b, k);
    if (useFloat) {
      fo[k] = apply(op, a.at(ia), b.at(ib));
      io[k] = int64_t(fo[k]);
      continue;
    }
    if (op == "Div" && b.iat(ib) == 0) {
      error = "integer division by zero in a shape computation";
      return {};
    }
    io[k] = apply(op, a.iat(ia), b.iat(ib));
    fo[k] = double(io[k]);
  }
  return isa<FloatType>(elt) ? makeConstant(type, fo) : makeConstant(type, io);
}

std::optional<Vals> fold::broadcastTo(const Vals &v,
                                      llvm::ArrayRef<int64_t> shape,
                                      std::string &error) {
  auto zeros = makeConstant(
      RankedTensorType::get(shape, IntegerType::get(v.type.getContext(), 64)),
      llvm::SmallVector<int64_t>(numElements(shape), 0));
  auto out = broadcastShapes(v.type.getShape(), shape);
  if (!out || llvm::ArrayRef<int64_t>(*out) != shape) {
    error = "a shape " + shapeToString(v.type.getShape()) +
            " does not broadcast to " + shapeToString(shape);
    return std::nullopt;
  }
  DenseElementsAttr r = binary(v, Vals(zeros), "Add", error);
  if (!r)
    return std::nullopt;
  return Vals(r);
}

std::optional<std::pair<Vals, Vals>>
fold::broadcastPair(const Vals &a, const Vals &b, std::string &error) {
  auto out = broadcastShapes(a.type.getShape(), b.type.getShape());
  if (!out) {
    error = "operand shapes do not broadcast";
    return std::nullopt;
  }
  auto ab = broadcastTo(a, *out, error), bb = broadcastTo(b, *out, error);
  if (!ab || !bb)
    return std::nullopt;
  return std::make_pair(std::move(*ab), std::move(*bb));
}
