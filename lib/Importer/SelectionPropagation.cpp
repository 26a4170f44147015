//===- SelectionPropagation.cpp - ops through which x[mask] passes --------===//
//
// The ops a masked selection (MaskedSelection.cpp) goes through, imported
// on the whole tensor, and the reductions and losses over the selected axis
// that end it.
//
//===----------------------------------------------------------------------===//

#include "SelectionImporter.h"

#include "llvm/ADT/StringSet.h"

#include <algorithm>
#include <cmath>
#include <limits>

using namespace mlir;
using namespace mlir::tidal;
using namespace mlir::tidal::importer;

namespace {

/// Ops computed element by element (after broadcasting).
const llvm::StringSet<> &elementwiseOps() {
  static const llvm::StringSet<> ops = {"Abs",
                                        "Acos",
                                        "Acosh",
                                        "Add",
                                        "And",
                                        "Asin",
                                        "Asinh",
                                        "Atan",
                                        "Atanh",
                                        "Cast",
                                        "CastLike",
                                        "Ceil",
                                        "Celu",
                                        "Clip",
                                        "Cos",
                                        "Cosh",
                                        "Div",
                                        "Dropout",
                                        "Elu",
                                        "Equal",
                                        "Erf",
                                        "Exp",
                                        "Floor",
                                        "Gelu",
                                        "Greater",
                                        "GreaterOrEqual",
                                        "HardSigmoid",
                                        "HardSwish",
                                        "Identity",
                                        "IsInf",
                                        "IsNaN",
                                        "LeakyRelu",
                                        "Less",
                                        "LessOrEqual",
                                        "Log",
                                        "Max",
                                        "Mean",
                                        "Min",
                                        "Mish",
                                        "Mod",
                                        "Mul",
                                        "Neg",
                                        "Not",
                                        "Or",
                                        "Pow",
                                        "PRelu",
                                        "Reciprocal",
                                        "Relu",
                                        "Round",
                                        "Selu",
                                        "Shrink",
                                        "Sigmoid",
                                        "Sign",
                                        "Sin",
                                        "Sinh",
                                        "Softplus",
                                        "Softsign",
                                        "Sqrt",
                                        "Sub",
                                        "Sum",
                                        "Tan",
                                        "Tanh",
                                        "ThresholdedRelu",
                                        "Where",
                                        "Xor"};
  return ops;
}

/// The reductions over `axes`, with the value that leaves each unchanged
/// (-2: the element type's lowest, +2: its highest).
std::optional<double> reductionIdentity(llvm::StringRef op) {
  static const llvm::StringMap<double> ops = {
      {"ReduceSum", 0},  {"ReduceMean", 0}, {"ReduceSumSquare", 0},
      {"ReduceL1", 0},   {"ReduceL2", 0},   {"ReduceLogSum", 0},
      {"ReduceProd", 1}, {"ReduceMax", -2}, {"ReduceLogSumExp", -2},
      {"ReduceMin", 2}};
  auto it = ops.find(op);
  if (it == ops.end())
    return std::nullopt;
  return it->second;
}

} // namespace

LogicalResult SelectionImporter::elementwise() {
  const Selection *first = nullptr;
  int64_t fromRight = 0, outRank = 0;
  for (int i = 0; i < node.input_size(); ++i) {
    if (!g.hasInput(node, i) || !type(i))
      continue;
    outRank = std::max(outRank, rank(i));
    const Selection *s = sel(i);
    if (!s)
      continue;
    int64_t fr = rank(i) - s->axis;
    if (!first) {
      first = s;
      fromRight = fr;
    } else if (s->mask != first->mask || fr != fromRight) {
      return fail("inputs '" + node.input(0) + "' and '" + node.input(i) +
                  "' are selected by different masks or along different "
                  "axes; tidal combines two selections only when one mask "
                  "value selects both along the same axis");
    }
  }
  for (int i = 0; i < node.input_size(); ++i)
    if (g.hasInput(node, i) && !sel(i) && failed(apart(i, *first, fromRight)))
      return failure();
  if (failed(asUsual()))
    return failure();
  keepAll(*first, outRank - fromRight);
  return success();
}

LogicalResult SelectionImporter::reduction(double identity) {
  const Selection *s = only(0);
  if (!s)
    return failure();
  auto axes = reduceAxes(n);
  if (failed(axes))
    return failure();
  const bool keepdims = n.i("keepdims", 1);
  if (!llvm::is_contained(*axes, s->axis)) {
    if (failed(asUsual()))
      return failure();
    int64_t before = keepdims ? 0 : llvm::count_if(*axes, [&](int64_t a) {
      return a < s->axis;
    });
    keep(0, *s, s->axis - before);
    return success();
  }
  // Over the selected axis: the dropped slices hold the reduction's
  // identity.
  RankedTensorType t = type(0);
  Type elt = t.getElementType();
  double fill = identity;
  if (std::fabs(identity) == 2) {
    if (isa<FloatType>(elt))
      fill = identity * std::numeric_limits<double>::infinity();
    else if (elt.isInteger(1))
      return fail(op() + " of a bool selection is not supported");
    else {
      unsigned bits = elt.getIntOrFloatBitWidth();
      fill = identity < 0 ? -std::ldexp(1.0, bits - 1)
                          : std::ldexp(1.0, bits - 1) - 1;
    }
  }
  auto x = g.input(node, 0, error);
  if (failed(x))
    return failure();
  Value filled =
      c.op(WhereOp::getOperationName(),
           {maskAlong(*s, t.getRank(), s->axis), *x, c.splat(elt, {}, fill)});
  if (!c.ok)
    return failure();
  onnx::NodeProto copy = node;
  copy.set_input(0, bindSynthetic(filled));
  const bool mean = op() == "ReduceMean";
  if (mean)
    copy.set_op_type("ReduceSum");
  if (failed(asUsual(copy)))
    return failure();
  if (!mean)
    return success();
  if (!isa<FloatType>(elt))
    return fail("ReduceMean of an integer selection is not supported");
  int64_t others = 1;
  for (int64_t a : *axes)
    if (a != s->axis)
      others *= t.getDimSize(a);
  Value count = keptCount(*s, elt);
  if (others != 1)
    count = c.binary(MulOp::getOperationName(), count,
                     c.splat(elt, {}, double(others)));
  Value sum = g.values.lookup(node.output(0));
  return c.bind(c.binary(DivOp::getOperationName(), sum, count));
}

LogicalResult SelectionImporter::loss() {
  const Selection *scores = sel(0), *labels = sel(1);
  if (!scores || !labels || scores->mask != labels->mask || scores->axis != 0 ||
      labels->axis != 0)
    return fail(op() + " takes a masked selection only as its scores and "
                       "labels both, selected by one mask value along "
                       "their first axis (F.cross_entropy(out[mask], "
                       "y[mask]))");
  if (sel(2))
    return fail("the class weights '" + node.input(2) +
                "' cannot be a masked selection");
  std::string reduction = n.s("reduction", "mean");
  if (reduction == "none") {
    if (failed(asUsual()))
      return failure();
    keepAll(*scores, 0);
    return success();
  }
  int64_t ignore = n.i("ignore_index", -1);
  RankedTensorType lt = type(1);
  auto y = g.input(node, 1, error);
  if (failed(y))
    return failure();
  Value filled = c.op(WhereOp::getOperationName(),
                      {maskAlong(*labels, lt.getRank(), 0), *y,
                       c.splat(lt.getElementType(), {}, double(ignore))});
  if (!c.ok)
    return failure();
  onnx::NodeProto copy = node;
  copy.set_input(1, bindSynthetic(filled));
  if (!n.attr("ignore_index")) {
    onnx::AttributeProto *a = copy.add_attribute();
    a->set_name("ignore_index");
    a->set_type(onnx::AttributeProto::INT);
    a->set_i(ignore);
  }
  if (failed(asUsual(copy)))
    return failure();
  keep(1, *scores, 0); // log_prob
  return success();
}

LogicalResult SelectionImporter::matmul() {
  const Selection *a = sel(0), *b = sel(1);
  if (a && b)
    return fail("both operands of " + op() +
                " are masked selections; their product runs across the "
                "selected axis");
  if (op() == "Gemm") {
    const Selection *s = only(0);
    if (!s)
      return failure();
    if (s->axis != (n.i("transA", 0) ? 1 : 0))
      return across(*s, "contracts");
    if (RankedTensorType ct = g.hasInput(node, 2) ? type(2) : nullptr;
        ct && ct.getRank() == 2 && ct.getDimSize(0) != 1)
      return fail("the bias '" + node.input(2) + "' (" + typeToString(ct) +
                  ") spans the rows that " + s->source + " selects");
    if (failed(asUsual()))
      return failure();
    keep(0, *s, 0);
    return success();
  }
  const int64_t ra = rank(0), rb = rank(1);
  if (a) {
    if (ra < 2 || a->axis == ra - 1)
      return across(*a, "contracts");
    int64_t fromRight = ra - a->axis;
    if (rb >= 3 && failed(apart(1, *a, fromRight)))
      return failure();
    if (failed(asUsual()))
      return failure();
    int64_t outRank = std::max(ra, rb);
    keep(0, *a, rb == 1 ? a->axis : outRank - fromRight);
    return success();
  }
  if (rb < 2 || b->axis != rb - 1)
    return across(*b, "contracts");
  if (failed(asUsual()))
    return failure();
  keep(0, *b, std::max(ra, rb) - (ra == 1 ? 1 : 0) - 1);
  return success();
}

/// Reshape and Flatten: the selected axis must stay one axis of its own.
LogicalResult SelectionImporter::reshapeLike() {
  const Selection *s = only(0);
  if (!s)
    return failure();
  RankedTensorType t = type(0);
  llvm::ArrayRef<int64_t> dims = t.getShape();
  auto product = [](llvm::ArrayRef<int64_t> d) {
    int64_t p = 1;
    for (int64_t x : d)
      p *= x;
    return p;
  };
  if (op() == "Flatten") {
    int64_t a = n.i("axis", 1), newAxis;
    if (a < 0)
      a += t.getRank();
    if (a < 0 || a > t.getRank())
      return fail("axis " + llvm::Twine(n.i("axis", 1)) +
                  " is out of range for rank " + llvm::Twine(t.getRank()));
    if (s->axis < a && product(dims.take_front(a)) == dims[s->axis])
      newAxis = 0;
    else if (s->axis >= a && product(dims.drop_front(a)) == dims[s->axis])
      newAxis = 1;
    else
      return across(*s, "merges another axis into");
    if (failed(asUsual()))
      return failure();
    keep(0, *s, newAxis);
    return success();
  }
  auto shape = n.constInts(1, "shape");
  if (failed(shape))
    return failure();
  const bool allowZero = n.i("allowzero", 0);
  // The selection's own count (Shape of it, SelectionCount.cpp) stands for
  // its axis as -1 does; then another entry may be -1 too.
  const int64_t count = countSentinel(g, s->mask, s->source);
  const bool byCount =
      (int64_t)shape->size() > s->axis && (*shape)[s->axis] == count;
  llvm::ArrayRef<int64_t> sh = *shape;
  bool ok = (int64_t)sh.size() > s->axis &&
            (byCount || sh[s->axis] == -1 || (sh[s->axis] == 0 && !allowZero));
  for (int64_t j = 0; ok && j < s->axis; ++j)
    ok = sh[j] == dims[j] || (sh[j] == 0 && !allowZero);
  int64_t rest = 1, inferred = 0;
  for (size_t j = s->axis + 1; ok && j < sh.size(); ++j) {
    int64_t d = sh[j] == 0 && !allowZero && j < dims.size() ? dims[j] : sh[j];
    if (d == -1 && byCount && !inferred++)
      continue;
    ok = d >= 0;
    rest *= d;
  }
  const int64_t want = product(dims.drop_front(s->axis + 1));
  if (!ok || (inferred ? rest == 0 || want % rest != 0 : rest != want))
    return across(*s, "(whose shape must keep the dimensions before it and "
                      "give it -1) does not keep as an axis of its own");
  onnx::NodeProto copy = node;
  if (byCount) {
    // The whole tensor's length along the axis in place of the count.
    llvm::SmallVector<int64_t> padded(sh);
    padded[s->axis] = dims[s->axis];
    std::string name = "\x01selection." + node.output(0) + ".shape";
    g.constants[name] = makeConstant(
        RankedTensorType::get({(int64_t)padded.size()}, n.b().getI64Type()),
        padded);
    copy.set_input(1, name);
  }
  if (failed(asUsual(copy)))
    return failure();
  keep(0, *s, s->axis);
  return success();
}

LogicalResult SelectionImporter::onSelection() {
  const std::string &o = op();
  if (elementwiseOps().contains(o))
    return elementwise();
  if (std::optional<double> identity = reductionIdentity(o))
    return reduction(*identity);
  if (o == "SoftmaxCrossEntropyLoss" || o == "NegativeLogLikelihoodLoss")
    return loss();
  if (o == "MatMul" || o == "Gemm")
    return matmul();
  if (o == "Reshape" || o == "Flatten")
    return reshapeLike();
  if (o == "Concat") {
    const Selection *s = sel(0);
    for (int i = 0; i < node.input_size(); ++i)
      if (!sel(i) || sel(i)->mask != s->mask || sel(i)->axis != s->axis)
        return fail("Concat of a masked selection (" + s->source +
                    ") takes only selections by the same mask value along "
                    "the same axis");
    auto axis = n.axis(n.i("axis", 0), rank(0));
    if (failed(axis))
      return failure();
    if (*axis == s->axis)
      return across(*s, "concatenates along");
    if (failed(asUsual()))
      return failure();
    keep(0, *s, s->axis);
    return success();
  }
  const Selection *s = only(0);
  if (!s)
    return failure();
  const int64_t r = rank(0);
  if (o == "Shape") {
    // The count as a sentinel (SelectionCount.cpp).
    llvm::SmallVector<int64_t> dims(type(0).getShape());
    dims[s->axis] = countSentinel(g, s->mask, s->source);
    return bindShape(dims);
  }
  // The node's `axis` attribute (default 0), which must not be the
  // selected axis (`what` the node does along it, for the error).
  auto otherAxis = [&](const char *what) -> FailureOr<int64_t> {
    auto axis = n.axis(n.i("axis", 0), r);
    if (failed(axis))
      return failure();
    if (*axis == s->axis)
      return across(*s, what);
    return *axis;
  };
  auto keepSame = [&](int64_t axis) {
    if (failed(asUsual()))
      return failure();
    keepAll(*s, axis);
    return success();
  };
  if (o == "Softmax" || o == "LogSoftmax" || o == "Hardmax") {
    // Before opset 13 the input is seen as 2-D, split before `axis`.
    const bool coerced = g.opset < 13;
    auto axis = n.axis(n.i("axis", coerced ? 1 : -1), r);
    if (failed(axis))
      return failure();
    if (coerced ? s->axis >= *axis : s->axis == *axis)
      return across(*s, "normalizes along");
    return keepSame(s->axis);
  }
  if (o == "LayerNormalization") {
    auto axis = n.axis(n.i("axis", -1), r);
    if (failed(axis))
      return failure();
    if (s->axis >= *axis)
      return across(*s, "normalizes along");
    return keepSame(s->axis);
  }
  if (o == "ArgMax" || o == "ArgMin") {
    auto axis = otherAxis("searches along");
    if (failed(axis))
      return failure();
    bool drops = !n.i("keepdims", 1) && *axis < s->axis;
    return keepSame(s->axis - (drops ? 1 : 0));
  }
  if (o == "CumSum") {
    auto axis = n.constInts(1, "axis");
    if (failed(axis))
      return failure();
    auto a = n.axis((*axis)[0], r);
    if (failed(a))
      return failure();
    if (*a == s->axis)
      return across(*s, "accumulates along");
    return keepSame(s->axis);
  }
  if (o == "Split") {
    auto axis = otherAxis("splits");
    if (failed(axis))
      return failure();
    return keepSame(s->axis);
  }
  if (o == "Transpose") {
    llvm::SmallVector<int64_t> perm;
    if (auto p = n.ints("perm"))
      perm = *p;
    else
      for (int64_t d = r - 1; d >= 0; --d)
        perm.push_back(d);
    auto at = llvm::find(perm, s->axis);
    if (at == perm.end())
      return fail("perm does not name every axis");
    return keepSame(at - perm.begin());
  }
  if (o == "Squeeze" || o == "Unsqueeze") {
    llvm::SmallVector<int64_t> raw;
    if (g.hasInput(node, 1)) {
      auto k = n.constInts(1, "axes");
      if (failed(k))
        return failure();
      raw = *k;
    } else if (auto a = n.ints("axes")) {
      raw = *a;
    }
    if (o == "Squeeze") {
      if (raw.empty()) {
        if (type(0).getDimSize(s->axis) == 1)
          return across(*s, "without axes (one element is kept here) squeezes");
        for (int64_t d = 0; d < r; ++d)
          if (type(0).getDimSize(d) == 1)
            raw.push_back(d);
      }
      auto axes = n.axes(raw, r);
      if (failed(axes))
        return failure();
      if (llvm::is_contained(*axes, s->axis))
        return across(*s, "squeezes");
      return keepSame(s->axis - llvm::count_if(*axes, [&](int64_t a) {
                        return a < s->axis;
                      }));
    }
    auto axes = n.axes(raw, r + (int64_t)raw.size());
    if (failed(axes))
      return failure();
    int64_t newAxis = 0;
    for (int64_t pos = 0, seen = 0;; ++pos) {
      if (llvm::is_contained(*axes, pos))
        continue;
      if (seen++ == s->axis) {
        newAxis = pos;
        break;
      }
    }
    return keepSame(newAxis);
  }
  if (o == "Slice") {
    llvm::SmallVector<int64_t> axes;
    if (g.hasInput(node, 3)) {
      auto k = n.constInts(3, "axes");
      if (failed(k))
        return failure();
      auto norm = n.axes(*k, r);
      if (failed(norm))
        return failure();
      axes = *norm;
    } else {
      auto starts = n.constInts(1, "starts");
      if (failed(starts))
        return failure();
      for (int64_t d = 0; d < (int64_t)starts->size(); ++d)
        axes.push_back(d);
    }
    if (llvm::is_contained(axes, s->axis))
      return across(*s, "slices");
    return keepSame(s->axis);
  }
  if (o == "Gather") {
    auto axis = otherAxis("indexes");
    if (failed(axis))
      return failure();
    int64_t idxRank = type(1).getRank();
    return keepSame(*axis > s->axis ? s->axis : s->axis + idxRank - 1);
  }
  return fail("input '" + node.input(0) + "' is the masked selection " +
              s->source +
              " makes, whose length is known only at run "
              "time; tidal takes such a selection into element-wise ops, "
              "ops within each selected slice, and reductions or losses "
              "over the selected axis (x[mask].mean(), "
              "F.cross_entropy(out[mask], y[mask])), and " +
              o + " is none of those");
}
