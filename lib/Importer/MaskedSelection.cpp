//===- MaskedSelection.cpp - x[mask] reduced to a loss --------------------===//
//
// NonZero gives as many indices as its input has true elements: a count
// known only at run time, which a static memory plan cannot hold. What
// users do with it is boolean-mask indexing that a reduction or a loss then
// sums away: `x[mask].mean()`, `F.cross_entropy(out[mask], y[mask])` (a
// graph network's loss over its training nodes, a token loss over the
// unpadded positions), `torch.masked_select(x, m).sum()`. Those need no
// data-dependent shape, and are imported without one:
//
// - NonZero(m) -> Transpose -> GatherND(x, .) (x[m], m covering x's
//   leading dims), and a 1-D m's indices squeezed or reshaped to a list ->
//   Gather(x, ., axis) (x[:, m]) or GatherElements on a 1-D x, make a
//   Selection: x itself, the masked dims flattened to one axis of N (m's
//   element count), with the flattened mask beside it. The dropped slices
//   are overwritten with the first kept one (where(mask, x, gather(x,
//   argmax(mask)))), so that later ops see only values the selection holds:
//   log(p[p > 0]) takes no log(0), and no infinite derivative meets the
//   dropped slices' zero gradient.
// - Element-wise ops, and ops that work within each selected slice (softmax
//   and reductions over other axes, MatMul/Gemm on the selected rows,
//   LayerNormalization, Transpose, (Un)Squeeze, Reshape, Flatten, Slice,
//   Gather, Concat, Split, CumSum away from the selected axis), are imported
//   as usual on the whole tensor and keep the selection. Their other
//   operands must not span the selected axis (they would have to match the
//   count).
// - A reduction over the selected axis reduces where(mask, x, identity) (0
//   for sums, -inf for max, ...); ReduceMean divides by the count times the
//   other reduced dims. SoftmaxCrossEntropyLoss and NegativeLogLikelihoodLoss
//   with reduction mean or sum give the dropped rows the ignore_index (the
//   node's, else -1): PyTorch's mean over the kept, non-ignored rows.
// - Anything else that reads a selection or NonZero's indices (Shape, a
//   graph output, an op across the selected axis) is an error naming the
//   node and the NonZero.
//
// Values equal PyTorch's up to the order of summation. Gradients flow
// through where and gather as usual; the dropped slices' is exactly zero.
//
//===----------------------------------------------------------------------===//

#include "SelectionImporter.h"

#include <algorithm>

using namespace mlir;
using namespace mlir::tidal;
using namespace mlir::tidal::importer;

namespace {

bool isNonZero(const onnx::NodeProto &node) {
  return node.op_type() == "NonZero" &&
         (node.domain().empty() || node.domain() == "ai.onnx");
}

std::string describeSource(const onnx::NodeProto &node) {
  return node.name().empty() ? "the NonZero computing '" + node.output(0) + "'"
                             : "NonZero '" + node.name() + "'";
}

} // namespace

LogicalResult SelectionImporter::nonZero() {
  RankedTensorType t = type(0);
  if (!t)
    return fail("input 0 is required");
  if (t.getRank() == 0 || !t.hasStaticShape())
    return fail("NonZero of " + typeToString(t) +
                " is not supported (a tensor of rank 1 or more)");
  const int64_t count = t.getNumElements();
  if (DenseElementsAttr k = g.constInput(node, 0)) {
    // Known at compile time: the indices are a constant.
    llvm::SmallVector<double> vals = floatValues(k);
    llvm::SmallVector<int64_t> kept;
    for (int64_t i = 0; i < count; ++i)
      if (vals[i] != 0)
        kept.push_back(i);
    const int64_t r = t.getRank(), kc = kept.size();
    llvm::SmallVector<int64_t> out(r * kc);
    for (int64_t j = 0; j < kc; ++j)
      for (int64_t d = r - 1, rest = kept[j]; d >= 0; --d) {
        out[d * kc + j] = rest % t.getDimSize(d);
        rest /= t.getDimSize(d);
      }
    g.constants[node.output(0)] =
        makeConstant(RankedTensorType::get({r, kc}, n.b().getI64Type()), out);
    return success();
  }
  auto x = g.input(node, 0, error);
  if (failed(x))
    return failure();
  Value mask = g.flatMasks.lookup(*x);
  if (!mask) {
    mask = *x;
    if (!t.getElementType().isInteger(1))
      mask = castTo(mask, n.b().getI1Type());
    if (t.getRank() != 1)
      mask = c.reshape(mask, {count});
    if (!c.ok)
      return failure();
    g.flatMasks[*x] = mask;
  }
  g.maskIndices[node.output(0)] =
      MaskIndices{mask, llvm::SmallVector<int64_t>(t.getShape()),
                  MaskIndices::Rows, describeSource(node)};
  return success();
}

LogicalResult SelectionImporter::select(Value x, const MaskIndices &mi,
                                        int64_t axis) {
  Value first = g.firstKept.lookup(mi.mask);
  if (!first) {
    // The first kept index (0 when none is kept: then nothing reads it).
    first = c.op(ArgMaxOp::getOperationName(),
                 {castTo(mi.mask, n.b().getF32Type())},
                 {n.named("axis", n.b().getI64IntegerAttr(0)),
                  n.named("keepdims", n.b().getBoolAttr(true)),
                  n.named("select_last_index", n.b().getBoolAttr(false))});
    if (!c.ok)
      return failure();
    g.firstKept[mi.mask] = first;
  }
  Selection s{mi.mask, axis, mi.source};
  const int64_t r = cast<RankedTensorType>(x.getType()).getRank();
  Value kept = c.gather(x, first, axis);
  Value y = c.op(WhereOp::getOperationName(), {maskAlong(s, r, axis), x, kept});
  if (failed(c.bind(y)))
    return failure();
  keep(0, s, axis);
  return success();
}

LogicalResult SelectionImporter::onIndices(const MaskIndices &mi, int at) {
  const int64_t r = mi.shape.size();
  const int64_t count = cast<RankedTensorType>(mi.mask.getType()).getDimSize(0);
  auto refuse = [&] {
    return fail("input '" + node.input(at) + "' holds the indices " +
                mi.source +
                " computes, whose number depends on the data; tidal reads "
                "them only to select with a mask (x[mask]: Transpose then "
                "GatherND, or a 1-D mask's indices in Gather) and reduce "
                "the selection (a sum, mean or loss over it)");
  };
  auto derived = [&](MaskIndices::Form form) {
    MaskIndices out = mi;
    out.form = form;
    g.maskIndices[node.output(0)] = out;
    return success();
  };
  const std::string &o = op();
  const bool gathers =
      o == "GatherND" || o == "Gather" || o == "GatherElements";
  if (!gathers && o != "Transpose" && o != "Squeeze" && o != "Reshape" &&
      o != "Shape" && o != "Expand")
    return refuse();
  if (at != (gathers ? 1 : 0))
    return refuse();
  const int64_t k = countSentinel(g, mi.mask, mi.source);
  if (o == "Shape") {
    // The count as a sentinel (SelectionCount.cpp).
    llvm::SmallVector<int64_t> dims =
        mi.form == MaskIndices::Rows ? llvm::SmallVector<int64_t>{r, k}
        : mi.form == MaskIndices::Columns
            ? llvm::SmallVector<int64_t>{k, mi.width}
            : llvm::SmallVector<int64_t>{k};
    return bindShape(dims);
  }
  if (o == "Expand") {
    // A 1-D mask's indices [K, 1] expanded to [K, n] by their own count.
    auto shape = n.constInts(1, "shape");
    if (failed(shape))
      return failure();
    if (mi.form != MaskIndices::Columns || r != 1 || mi.width != 1 ||
        shape->size() != 2 || ((*shape)[0] != k && (*shape)[0] != 1) ||
        (*shape)[1] < 1)
      return refuse();
    MaskIndices out = mi;
    out.width = (*shape)[1];
    g.maskIndices[node.output(0)] = out;
    return success();
  }
  if (o == "Transpose" && mi.form != MaskIndices::List) {
    auto perm = n.ints("perm");
    if (perm && *perm != llvm::SmallVector<int64_t>{1, 0})
      return refuse();
    return derived(mi.form == MaskIndices::Rows ? MaskIndices::Columns
                                                : MaskIndices::Rows);
  }
  if ((o == "Squeeze" || o == "Reshape") && r == 1 &&
      mi.form != MaskIndices::List) {
    const char *what = o == "Squeeze" ? "axes" : "shape";
    llvm::SmallVector<int64_t> v;
    if (g.hasInput(node, 1)) {
      auto k = n.constInts(1, what);
      if (failed(k))
        return failure();
      v = *k;
    } else if (auto a = n.ints(what)) {
      v = *a;
    }
    bool list = o == "Reshape"
                    ? v == llvm::SmallVector<int64_t>{-1}
                    : v.size() == 1 &&
                          (v[0] == (mi.form == MaskIndices::Rows ? 0 : 1) ||
                           v[0] == (mi.form == MaskIndices::Rows ? -2 : -1));
    if (!list || mi.width != 1)
      return refuse();
    return derived(MaskIndices::List);
  }
  if (!gathers)
    return refuse();
  if (sel(0))
    return fail("input '" + node.input(0) + "' is already a selection (" +
                sel(0)->source + "); selecting from it again is not supported");
  RankedTensorType xt = type(0);
  if (!xt)
    return fail("input 0 is required");
  auto x = g.input(node, 0, error);
  if (failed(x))
    return failure();
  if (o == "GatherElements" && mi.form == MaskIndices::Columns && r == 1) {
    // x[idx[:, 0], :] with idx [K, n] (DeBERTa's gather of the labelled
    // rows): rows of x.
    if (n.i("axis", 0) != 0 && n.i("axis", 0) != -2)
      return refuse();
    if (xt.getRank() != 2 || xt.getDimSize(0) != count ||
        xt.getDimSize(1) != mi.width)
      return fail("GatherElements of " + typeToString(xt) +
                  " by the indices of " + mi.source + " expanded to [count, " +
                  llvm::Twine(mi.width) + "] must gather rows of a [" +
                  llvm::Twine(count) + ", " + llvm::Twine(mi.width) +
                  "] tensor");
    return select(*x, mi, 0);
  }
  if (o == "GatherND" && mi.form == MaskIndices::Columns && mi.width == 1) {
    if (n.i("batch_dims", 0) != 0)
      return refuse();
    if (xt.getRank() < r ||
        xt.getShape().take_front(r) != llvm::ArrayRef<int64_t>(mi.shape))
      return fail("the mask of " + mi.source + " is [" +
                  shapeToString(mi.shape) +
                  "], which must be the leading "
                  "dimensions of the data " +
                  typeToString(xt));
    Value flat = *x;
    if (r != 1) {
      llvm::SmallVector<int64_t> shape{count};
      shape.append(xt.getShape().begin() + r, xt.getShape().end());
      flat = c.reshape(flat, shape);
      if (!c.ok)
        return failure();
    }
    return select(flat, mi, 0);
  }
  if ((o == "Gather" || o == "GatherElements") &&
      mi.form == MaskIndices::List) {
    if (o == "GatherElements" && xt.getRank() != 1)
      return refuse();
    auto axis = n.axis(n.i("axis", 0), xt.getRank());
    if (failed(axis))
      return failure();
    if (xt.getDimSize(*axis) != count)
      return fail("the mask of " + mi.source + " has " + llvm::Twine(count) +
                  " elements, but axis " + llvm::Twine(*axis) + " of " +
                  typeToString(xt) + " is not that long");
    return select(*x, mi, *axis);
  }
  return refuse();
}

LogicalResult SelectionImporter::run() {
  if (isNonZero(node))
    return nonZero();
  for (int i = 0; i < node.input_size(); ++i)
    if (const MaskIndices *mi = indices(i))
      return onIndices(*mi, i);
  return onSelection();
}

bool importer::readsSelection(GraphImporter &g, const onnx::NodeProto &node) {
  if (isNonZero(node))
    return true;
  for (const std::string &in : node.input())
    if (!in.empty() && (g.selections.count(in) || g.maskIndices.count(in)))
      return true;
  return false;
}

LogicalResult importer::convertSelectionNode(GraphImporter &g,
                                             const onnx::NodeProto &node,
                                             std::string &error) {
  SelectionImporter s{g, node, error};
  return s.run();
}

std::string importer::selectionOutputProblem(GraphImporter &g,
                                             llvm::StringRef name) {
  if (auto it = g.constants.find(name);
      it != g.constants.end() && isa<IntegerType>(it->second.getElementType()))
    for (int64_t v : intValues(it->second))
      if (isCountSentinel(v))
        return "holds the number of elements a NonZero keeps, known only at "
               "run time; a tidal step's outputs are static";
  if (auto it = g.selections.find(name); it != g.selections.end())
    return "is the masked selection " + it->second.source +
           " makes, whose length is known only at run time; a tidal step's "
           "outputs have static shapes (reduce it, e.g. x[mask].mean())";
  if (auto it = g.maskIndices.find(name); it != g.maskIndices.end())
    return "holds the indices " + it->second.source +
           " computes, whose number is known only at run time; a tidal "
           "step's outputs have static shapes";
  return "";
}
