//===- ShapeFolding.cpp - compile-time evaluation of shape subgraphs ------===//
//
// PyTorch exports a dynamic batch as Shape -> Gather -> Unsqueeze -> Concat
// (-> Slice, Cast, arithmetic) feeding Reshape. Once the batch is bound every
// shape is static, so these nodes evaluate here to constants and never
// become IR.
//
//===----------------------------------------------------------------------===//

#include "ImporterImpl.h"
#include "tidal/Dialect/Tidal/IR/ShapeUtils.h"

#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/STLExtras.h"

#include <cmath>
#include <optional>
#include <utility>

using namespace mlir;
using namespace mlir::tidal;
using namespace mlir::tidal::importer;

namespace {

/// Largest constant the folder materializes (shape tensors are tiny).
constexpr int64_t kMaxFoldElements = 1 << 16;

int64_t intAttr(const onnx::NodeProto &node, llvm::StringRef name,
                int64_t def) {
  const auto *a = findAttribute(node, name);
  return a ? a->i() : def;
}

/// Row-major strides of a shape.
llvm::SmallVector<int64_t> stridesOf(llvm::ArrayRef<int64_t> shape) {
  llvm::SmallVector<int64_t> s(shape.size(), 1);
  for (int i = int(shape.size()) - 2; i >= 0; --i)
    s[i] = s[i + 1] * shape[i + 1];
  return s;
}

/// Values of a constant as doubles or integers, with its shape.
struct Vals {
  RankedTensorType type;
  bool isFloat;
  llvm::SmallVector<double> f;
  llvm::SmallVector<int64_t> i;

  explicit Vals(DenseElementsAttr a)
      : type(cast<RankedTensorType>(a.getType())),
        isFloat(isa<FloatType>(a.getElementType())) {
    if (isFloat)
      f = floatValues(a);
    else
      i = intValues(a);
  }
  double at(int64_t k) const { return isFloat ? f[k] : double(i[k]); }
  int64_t iat(int64_t k) const { return isFloat ? int64_t(f[k]) : i[k]; }
};

/// Builds a result of `shape` by picking source element `pick(k)` of `v`.
DenseElementsAttr gatherElements(const Vals &v, llvm::ArrayRef<int64_t> shape,
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
  return T(std::pow(double(x), double(y)));
}

/// Element-wise binary op with broadcasting over two constants.
DenseElementsAttr binary(const Vals &a, const Vals &b, llvm::StringRef op,
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

/// `a` and `b` broadcast to their common shape (adding zeros), or nothing
/// with `error` set when they do not broadcast.
std::optional<std::pair<Vals, Vals>> broadcastPair(const Vals &a, const Vals &b,
                                                   std::string &error) {
  auto out = broadcastShapes(a.type.getShape(), b.type.getShape());
  if (!out) {
    error = "operand shapes do not broadcast";
    return std::nullopt;
  }
  auto zeros = makeConstant(
      RankedTensorType::get(*out, IntegerType::get(a.type.getContext(), 64)),
      llvm::SmallVector<int64_t>(numElements(*out), 0));
  DenseElementsAttr ab = binary(a, Vals(zeros), "Add", error),
                    bb = binary(b, Vals(zeros), "Add", error);
  if (!ab || !bb)
    return std::nullopt;
  return std::make_pair(Vals(ab), Vals(bb));
}

} // namespace

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

  static const llvm::StringSet<> foldable = {"Gather",   "Unsqueeze",
                                             "Squeeze",  "Concat",
                                             "Slice",    "Cast",
                                             "Reshape",  "Identity",
                                             "Add",      "Sub",
                                             "Mul",      "Div",
                                             "Neg",      "ConstantOfShape",
                                             "Range",    "Equal",
                                             "Where",    "Expand",
                                             "Less",     "Greater",
                                             "Sqrt",     "Pow",
                                             "Flatten",  "Transpose",
                                             "Mod",      "Not",
                                             "And",      "Or",
                                             "ScatterND"};
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
  // (e.g. a Constant weight times a Constant) to the graph.
  bool allInt = llvm::all_of(in, [](DenseElementsAttr a) {
    return !a || !isa<FloatType>(a.getElementType());
  });
  if (!allInt && op != "Cast" && op != "Identity" && op != "Unsqueeze" &&
      op != "Squeeze" && op != "Reshape" && op != "Concat" && op != "Gather" &&
      op != "Slice" && op != "Sqrt" && op != "Div" && op != "Mul" &&
      op != "ScatterND")
    return false;

  Vals x(in[0]);
  auto shape = x.type.getShape();
  int64_t rank = shape.size();
  auto normAxis = [&](int64_t a, int64_t r) { return a < 0 ? a + r : a; };
  auto badAxis = [&](int64_t a, int64_t r) {
    if (a >= 0 && a < r)
      return false;
    error = "axis out of range for a rank-" + std::to_string(r) + " input";
    return true;
  };

  if (op == "Identity") {
    results.push_back(in[0]);
  } else if (op == "Neg" || op == "Sqrt") {
    auto type = x.type;
    llvm::SmallVector<double> v;
    for (int64_t k = 0; k < type.getNumElements(); ++k)
      v.push_back(op == "Neg" ? -x.at(k) : std::sqrt(x.at(k)));
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
  } else if (op == "Mod") {
    // Integers only (the float folds above leave it out): fmod = 0 takes
    // the divisor's sign, as Python's %; fmod = 1 the dividend's, as C's.
    if (in.size() < 2 || !in[1])
      return false;
    auto pair = broadcastPair(x, Vals(in[1]), error);
    if (!pair)
      return true;
    const Vals &xv = pair->first, &yv = pair->second;
    const int64_t n = xv.type.getNumElements();
    const bool fmod = intAttr(node, "fmod", 0) != 0;
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
  } else if (op == "ScatterND") {
    // A copy of `data` with the slices that `indices` name replaced by
    // `updates` (reduction "none").
    if (in.size() < 3 || !in[1] || !in[2])
      return false;
    if (const auto *a = findAttribute(node, "reduction"); a && a->s() != "none")
      return false;
    Vals idx(in[1]), upd(in[2]);
    auto idxShape = idx.type.getShape();
    int64_t k = idxShape.empty() ? 0 : idxShape.back();
    if (idxShape.empty() || k > rank) {
      error = "indices' last dimension exceeds the data's rank";
      return true;
    }
    llvm::SmallVector<int64_t> updShape(idxShape.drop_back());
    llvm::append_range(updShape, shape.drop_front(k));
    if (upd.type.getShape() != llvm::ArrayRef<int64_t>(updShape) ||
        upd.isFloat != x.isFloat) {
      error = "updates' shape or type does not match data and indices";
      return true;
    }
    auto strides = stridesOf(shape);
    int64_t slice = numElements(shape.drop_front(k));
    int64_t count = numElements(idxShape.drop_back());
    llvm::SmallVector<double> fv(x.f);
    llvm::SmallVector<int64_t> iv(x.i);
    for (int64_t u = 0; u < count; ++u) {
      int64_t base = 0;
      for (int64_t d = 0; d < k; ++d) {
        int64_t j = idx.iat(u * k + d);
        if (j < -shape[d] || j >= shape[d]) {
          error = "index " + std::to_string(j) + " out of range";
          return true;
        }
        base += (j < 0 ? j + shape[d] : j) * strides[d];
      }
      for (int64_t e = 0; e < slice; ++e) {
        if (x.isFloat)
          fv[base + e] = upd.f[u * slice + e];
        else
          iv[base + e] = upd.i[u * slice + e];
      }
    }
    results.push_back(x.isFloat ? makeConstant(x.type, fv)
                                : makeConstant(x.type, iv));
  } else if (op == "Gather") {
    if (in.size() < 2 || !in[1] || rank == 0)
      return false;
    int64_t axis = normAxis(intAttr(node, "axis", 0), rank);
    if (badAxis(axis, rank))
      return true;
    Vals idx(in[1]);
    llvm::SmallVector<int64_t> outShape(shape.take_front(axis));
    llvm::append_range(outShape, idx.type.getShape());
    llvm::append_range(outShape, shape.drop_front(axis + 1));
    int64_t inner = numElements(shape.drop_front(axis + 1));
    int64_t nIdx = idx.type.getNumElements();
    for (int64_t k = 0; k < nIdx; ++k) {
      int64_t j = idx.iat(k);
      if (j < -shape[axis] || j >= shape[axis]) {
        error = "index " + std::to_string(j) + " out of range";
        return true;
      }
    }
    results.push_back(gatherElements(x, outShape, [&](int64_t k) {
      int64_t in_ = k % inner, rest = k / inner;
      int64_t ik = rest % nIdx, outer = rest / nIdx;
      int64_t j = idx.iat(ik);
      if (j < 0)
        j += shape[axis];
      return (outer * shape[axis] + j) * inner + in_;
    }));
  } else if (op == "Unsqueeze" || op == "Squeeze") {
    llvm::SmallVector<int64_t> axes;
    if (in.size() > 1 && in[1])
      axes = intValues(in[1]);
    else if (const auto *a = findAttribute(node, "axes"))
      axes.assign(a->ints().begin(), a->ints().end());
    llvm::SmallVector<int64_t> outShape;
    if (op == "Unsqueeze") {
      int64_t outRank = rank + axes.size();
      for (int64_t &a : axes)
        if (badAxis(a = normAxis(a, outRank), outRank))
          return true;
      for (int64_t d = 0, next = 0; d < outRank; ++d)
        outShape.push_back(llvm::is_contained(axes, d) ? 1 : shape[next++]);
    } else {
      for (int64_t &a : axes)
        if (badAxis(a = normAxis(a, rank), rank))
          return true;
      for (int64_t d = 0; d < rank; ++d) {
        bool drop = axes.empty() ? shape[d] == 1 : llvm::is_contained(axes, d);
        if (drop && shape[d] != 1) {
          error =
              "cannot squeeze a dimension of size " + std::to_string(shape[d]);
          return true;
        }
        if (!drop)
          outShape.push_back(shape[d]);
      }
    }
    results.push_back(in[0].reshape(
        RankedTensorType::get(outShape, x.type.getElementType())));
  } else if (op == "Reshape" || op == "Flatten") {
    llvm::SmallVector<int64_t> outShape;
    if (op == "Flatten") {
      int64_t axis = normAxis(intAttr(node, "axis", 1), rank);
      if (badAxis(axis, rank + 1))
        return true;
      outShape = {numElements(shape.take_front(axis)),
                  numElements(shape.drop_front(axis))};
    } else {
      if (in.size() < 2 || !in[1])
        return false;
      outShape = intValues(in[1]);
      int64_t known = 1, infer = -1;
      for (size_t d = 0; d < outShape.size(); ++d) {
        if (outShape[d] == 0 && !intAttr(node, "allowzero", 0))
          outShape[d] = d < shape.size() ? shape[d] : 0;
        if (outShape[d] == -1)
          infer = d;
        else
          known *= outShape[d];
      }
      if (infer >= 0 && known)
        outShape[infer] = x.type.getNumElements() / known;
    }
    if (llvm::any_of(outShape, [](int64_t d) { return d < 0; }) ||
        numElements(outShape) != x.type.getNumElements()) {
      error = "cannot reshape a constant of " + shapeToString(shape);
      return true;
    }
    results.push_back(in[0].reshape(
        RankedTensorType::get(outShape, x.type.getElementType())));
  } else if (op == "Concat") {
    int64_t axis = normAxis(intAttr(node, "axis", 0), rank);
    if (badAxis(axis, rank))
      return true;
    llvm::SmallVector<Vals> parts;
    llvm::SmallVector<int64_t> outShape(shape);
    outShape[axis] = 0;
    for (DenseElementsAttr a : in) {
      if (!a)
        continue;
      parts.emplace_back(a);
      for (int64_t d = 0; d < rank; ++d)
        if (parts.back().type.getRank() != rank ||
            (d != axis && parts.back().type.getDimSize(d) != shape[d])) {
          error = "inputs differ in shape outside the axis";
          return true;
        }
      outShape[axis] += parts.back().type.getDimSize(axis);
    }
    int64_t inner =
        numElements(llvm::ArrayRef<int64_t>(outShape).drop_front(axis + 1));
    auto type = RankedTensorType::get(outShape, x.type.getElementType());
    llvm::SmallVector<double> fv;
    llvm::SmallVector<int64_t> iv;
    int64_t outer = numElements(shape.take_front(axis));
    for (int64_t o = 0; o < outer; ++o)
      for (const Vals &p : parts) {
        int64_t chunk = p.type.getDimSize(axis) * inner;
        for (int64_t k = 0; k < chunk; ++k) {
          fv.push_back(p.at(o * chunk + k));
          iv.push_back(p.iat(o * chunk + k));
        }
      }
    results.push_back(x.isFloat ? makeConstant(type, fv)
                                : makeConstant(type, iv));
  } else if (op == "Slice") {
    if (in.size() < 3 || !in[1] || !in[2])
      return false;
    auto starts = intValues(in[1]), ends = intValues(in[2]);
    llvm::SmallVector<int64_t> axes, steps;
    if (in.size() > 3 && in[3])
      axes = intValues(in[3]);
    else
      for (size_t k = 0; k < starts.size(); ++k)
        axes.push_back(k);
    if (in.size() > 4 && in[4])
      steps = intValues(in[4]);
    else
      steps.assign(starts.size(), 1);
    llvm::SmallVector<int64_t> s(rank, 0), st(rank, 1), outShape(shape);
    if (axes.size() != starts.size() || ends.size() != starts.size() ||
        steps.size() != starts.size()) {
      error = "starts, ends, axes and steps differ in length";
      return true;
    }
    for (size_t k = 0; k < axes.size(); ++k) {
      int64_t a = normAxis(axes[k], rank);
      if (badAxis(a, rank))
        return true;
      int64_t dim = shape[a];
      int64_t b = starts[k], e = ends[k], step = steps[k];
      if (step == 0) {
        error = "slice step is zero";
        return true;
      }
      if (b < 0)
        b += dim;
      if (e < 0)
        e += dim;
      if (step > 0) {
        b = std::clamp<int64_t>(b, 0, dim);
        e = std::clamp<int64_t>(e, 0, dim);
        outShape[a] = std::max<int64_t>(0, (e - b + step - 1) / step);
      } else {
        b = std::clamp<int64_t>(b, -1, dim - 1);
        e = std::clamp<int64_t>(e, -1, dim - 1);
        outShape[a] = std::max<int64_t>(0, (b - e - step - 1) / -step);
      }
      s[a] = b;
      st[a] = step;
    }
    auto inStrides = stridesOf(shape), outStrides = stridesOf(outShape);
    results.push_back(gatherElements(x, outShape, [&](int64_t k) {
      int64_t off = 0;
      for (int64_t d = 0; d < rank; ++d)
        off +=
            (s[d] + ((k / outStrides[d]) % outShape[d]) * st[d]) * inStrides[d];
      return off;
    }));
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
    Vals c(in[0]), a(in[1]), b(in[2]);
    auto s1 = broadcastShapes(c.type.getShape(), a.type.getShape());
    auto s2 = s1 ? broadcastShapes(*s1, b.type.getShape()) : std::nullopt;
    if (!s2) {
      error = "Where operands do not broadcast";
      return true;
    }
    // Broadcast each operand by adding a zero of the full shape.
    auto zeros =
        makeConstant(RankedTensorType::get(*s2, IntegerType::get(ctx, 64)),
                     llvm::SmallVector<int64_t>(numElements(*s2), 0));
    Vals z(zeros);
    DenseElementsAttr cb = binary(c, z, "Add", error),
                      ab = binary(a, z, "Add", error),
                      bb = binary(b, z, "Add", error);
    if (!cb || !ab || !bb)
      return true;
    Vals cv(cb), av(ab), bv(bb);
    auto type = RankedTensorType::get(*s2, a.type.getElementType());
    llvm::SmallVector<double> v;
    for (int64_t k = 0; k < type.getNumElements(); ++k)
      v.push_back(cv.iat(k) ? av.at(k) : bv.at(k));
    results.push_back(makeConstant(type, v));
  } else if (op == "Expand") {
    if (in.size() < 2 || !in[1])
      return false;
    auto target = broadcastShapes(shape, intValues(in[1]));
    if (!target) {
      error = "Expand shape does not broadcast";
      return true;
    }
    auto zeros =
        makeConstant(RankedTensorType::get(*target, x.type.getElementType()),
                     llvm::SmallVector<int64_t>(numElements(*target), 0));
    DenseElementsAttr r = binary(x, Vals(zeros), "Add", error);
    if (!r)
      return true;
    results.push_back(r);
  } else if (op == "Transpose") {
    llvm::SmallVector<int64_t> perm;
    if (const auto *a = findAttribute(node, "perm"))
      perm.assign(a->ints().begin(), a->ints().end());
    else
      for (int64_t d = rank - 1; d >= 0; --d)
        perm.push_back(d);
    llvm::SmallVector<int64_t> outShape;
    llvm::SmallVector<int64_t> sorted(perm);
    llvm::sort(sorted);
    for (int64_t d = 0; d < (int64_t)sorted.size(); ++d)
      if (sorted[d] != d || (int64_t)perm.size() != rank) {
        error = "perm is not a permutation of the input's dimensions";
        return true;
      }
    for (int64_t p : perm)
      outShape.push_back(shape[p]);
    auto inStrides = stridesOf(shape), outStrides = stridesOf(outShape);
    results.push_back(gatherElements(x, outShape, [&](int64_t k) {
      int64_t off = 0;
      for (int64_t d = 0; d < rank; ++d)
        off += ((k / outStrides[d]) % outShape[d]) * inStrides[perm[d]];
      return off;
    }));
  } else {
    return false;
  }
  return true;
}
