//===- ShapeOps.cpp - constant, data-movement and shape kernels -----------===//

#include "EvalSupport.h"

#include "tidal/Dialect/Tidal/IR/ShapeUtils.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/ADT/TypeSwitch.h"

#include <cmath>

using namespace mlir;
using namespace mlir::tidal;
using namespace mlir::tidal::eval;

static LogicalResult evalConstant(ConstantOp op, Tensor &out) {
  auto dense = dyn_cast<DenseElementsAttr>(op.getValue());
  if (!dense)
    return op.emitOpError("holds a ")
           << op.getValue() << "; the evaluator reads dense elements only";
  Type et = dense.getElementType();
  size_t i = 0;
  if (isa<FloatType>(et)) {
    for (const APFloat &v : dense.getValues<APFloat>())
      out.data[i++] = toDouble(v);
  } else if (et.isInteger(1)) {
    for (bool v : dense.getValues<bool>())
      out.data[i++] = v ? 1.0 : 0.0;
  } else if (isa<IntegerType>(et)) {
    bool isUnsigned = et.isUnsignedInteger();
    for (const APInt &v : dense.getValues<APInt>())
      out.data[i++] = isUnsigned ? static_cast<double>(v.getZExtValue())
                                 : static_cast<double>(v.getSExtValue());
  } else {
    return op.emitOpError("has unsupported element type ") << et;
  }
  if (static_cast<int64_t>(i) != out.numElements())
    return op.emitOpError("value has ")
           << i << " elements, the result type " << out.numElements();
  return success();
}

/// Reshape, flatten, squeeze, unsqueeze: the same elements in a new shape.
static LogicalResult copyElements(Operation *op, const Tensor &in,
                                  Tensor &out) {
  if (in.numElements() != out.numElements())
    return op->emitOpError("cannot reshape ")
           << shapeToString(in.shape) << " to " << shapeToString(out.shape);
  out.data = in.data;
  return success();
}

static LogicalResult evalTranspose(TransposeOp op, EvalState &st, Tensor &out) {
  const Tensor &in = st.get(op.getInput());
  ArrayRef<int64_t> perm = op.getPerm();
  if (perm.size() != in.shape.size())
    return op.emitOpError("perm has ")
           << perm.size() << " entries for rank " << in.shape.size();
  SmallVector<int64_t> inStrides = stridesOf(in.shape), idx;
  for (int64_t i = 0, e = out.numElements(); i < e; ++i) {
    unravel(i, out.shape, idx);
    int64_t flat = 0;
    for (size_t d = 0; d < perm.size(); ++d)
      flat += idx[d] * inStrides[perm[d]];
    out.data[i] = in.data[flat];
  }
  return success();
}

/// Copies between one part and the whole along `axis`: `toWhole` picks the
/// direction (concat) or its reverse (split).
static void copyPart(Tensor &part, Tensor &whole, int64_t axis, int64_t offset,
                     bool toWhole) {
  int64_t outer = product(ArrayRef(whole.shape).take_front(axis));
  int64_t inner = product(ArrayRef(whole.shape).drop_front(axis + 1));
  int64_t partChunk = part.shape[axis] * inner;
  int64_t wholeChunk = whole.shape[axis] * inner;
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < partChunk; ++i) {
      double &w = whole.data[o * wholeChunk + offset * inner + i];
      double &p = part.data[o * partChunk + i];
      if (toWhole)
        w = p;
      else
        p = w;
    }
}

static LogicalResult evalConcat(ConcatOp op, EvalState &st, Tensor &out) {
  auto axis = static_cast<int64_t>(op.getAxis());
  if (axis < 0 || axis >= static_cast<int64_t>(out.shape.size()))
    return op.emitOpError("axis ") << axis << " is out of range";
  int64_t offset = 0;
  for (Value v : op.getInputs()) {
    Tensor part = st.get(v);
    copyPart(part, out, axis, offset, /*toWhole=*/true);
    offset += part.shape[axis];
  }
  if (offset != out.shape[axis])
    return op.emitOpError("inputs do not fill the result");
  return success();
}

static LogicalResult evalSplit(SplitOp op, EvalState &st,
                               MutableArrayRef<Tensor> results) {
  Tensor in = st.get(op.getInput());
  auto axis = static_cast<int64_t>(op.getAxis());
  if (axis < 0 || axis >= static_cast<int64_t>(in.shape.size()))
    return op.emitOpError("axis ") << axis << " is out of range";
  int64_t offset = 0;
  for (Tensor &part : results) {
    if (offset + part.shape[axis] > in.shape[axis])
      return op.emitOpError("parts exceed the input");
    copyPart(part, in, axis, offset, /*toWhole=*/false);
    offset += part.shape[axis];
  }
  return success();
}

/// Calls f(inFlat, outFlat) for every element of a strided slice of a
/// tensor of shape `in` producing `out`; fails on an index out of range.
template <typename F>
static LogicalResult
forEachSliced(Operation *op, ArrayRef<int64_t> in, ArrayRef<int64_t> out,
              ArrayRef<int64_t> starts, ArrayRef<int64_t> steps, F f) {
  if (starts.size() != in.size() || steps.size() != in.size() ||
      out.size() != in.size())
    return op->emitOpError("slice attributes do not match rank ") << in.size();
  SmallVector<int64_t> inStrides = stridesOf(in), idx;
  for (int64_t i = 0, e = product(out); i < e; ++i) {
    unravel(i, out, idx);
    int64_t flat = 0;
    for (size_t d = 0; d < in.size(); ++d) {
      int64_t pos = starts[d] + idx[d] * steps[d];
      if (pos < 0 || pos >= in[d])
        return op->emitOpError("slice index ")
               << pos << " is out of range [0, " << in[d] << ") in dimension "
               << d;
      flat += pos * inStrides[d];
    }
    f(flat, i);
  }
  return success();
}

namespace {
/// `data` seen as outer x axis x inner, and its flat indices.
struct GatherLayout {
  int64_t outer, dim, inner;
  std::vector<int64_t> index;
};
} // namespace

static FailureOr<GatherLayout> gatherLayout(Operation *op,
                                            ArrayRef<int64_t> data,
                                            const Tensor &indices,
                                            int64_t axis) {
  if (axis < 0 || axis >= static_cast<int64_t>(data.size()))
    return op->emitOpError("axis ") << axis << " is out of range";
  GatherLayout l{product(data.take_front(axis)),
                 data[axis],
                 product(data.drop_front(axis + 1)),
                 {}};
  for (double v : indices.data) {
    auto i = static_cast<int64_t>(v);
    if (i < -l.dim || i >= l.dim)
      return op->emitOpError("index ")
             << i << " is out of range [" << -l.dim << ", " << l.dim << ")";
    l.index.push_back(i < 0 ? i + l.dim : i);
  }
  return l;
}

/// Calls f(dataFlat, gatheredFlat) for every gathered element.
template <typename F> static void forEachGathered(const GatherLayout &l, F f) {
  int64_t n = l.index.size();
  for (int64_t o = 0; o < l.outer; ++o)
    for (int64_t j = 0; j < n; ++j)
      for (int64_t i = 0; i < l.inner; ++i)
        f((o * l.dim + l.index[j]) * l.inner + i, (o * n + j) * l.inner + i);
}

Handled eval::evalShapeOp(Operation *op, EvalState &st,
                          MutableArrayRef<Tensor> results) {
  if (results.empty())
    return false;
  Tensor &out = results.front();
  auto copy = [&](Value in) { return done(copyElements(op, st.get(in), out)); };
  return llvm::TypeSwitch<Operation *, Handled>(op)
      .Case([&](ConstantOp o) { return done(evalConstant(o, out)); })
      .Case([&](ReshapeOp o) { return copy(o.getInput()); })
      .Case([&](FlattenOp o) { return copy(o.getInput()); })
      .Case([&](SqueezeOp o) { return copy(o.getInput()); })
      .Case([&](UnsqueezeOp o) { return copy(o.getInput()); })
      .Case([&](TransposeOp o) { return done(evalTranspose(o, st, out)); })
      .Case([&](ConcatOp o) { return done(evalConcat(o, st, out)); })
      .Case([&](SplitOp o) { return done(evalSplit(o, st, results)); })
      .Case([&](SliceOp o) {
        const Tensor &in = st.get(o.getInput());
        return done(forEachSliced(
            o, in.shape, out.shape, o.getStarts(), o.getSteps(),
            [&](int64_t i, int64_t j) { out.data[j] = in.data[i]; }));
      })
      .Case([&](SliceBackwardOp o) {
        const Tensor &g = st.get(o.getGrad());
        return done(forEachSliced(
            o, out.shape, g.shape, o.getStarts(), o.getSteps(),
            [&](int64_t i, int64_t j) { out.data[i] += g.data[j]; }));
      })
      .Case([&](GatherOp o) -> Handled {
        const Tensor &data = st.get(o.getData());
        FailureOr<GatherLayout> l =
            gatherLayout(o, data.shape, st.get(o.getIndices()),
                         static_cast<int64_t>(o.getAxis()));
        if (failed(l))
          return failure();
        forEachGathered(
            *l, [&](int64_t d, int64_t g) { out.data[g] = data.data[d]; });
        return true;
      })
      .Case([&](GatherBackwardOp o) -> Handled {
        const Tensor &grad = st.get(o.getGrad());
        FailureOr<GatherLayout> l =
            gatherLayout(o, out.shape, st.get(o.getIndices()),
                         static_cast<int64_t>(o.getAxis()));
        if (failed(l))
          return failure();
        if (l->outer * static_cast<int64_t>(l->index.size()) * l->inner !=
            grad.numElements())
          return o.emitOpError("gradient does not match the gathered shape");
        forEachGathered(
            *l, [&](int64_t d, int64_t g) { out.data[d] += grad.data[g]; });
        return true;
      })
      .Case([&](ScatterExtremeOp o) -> Handled {
        const Tensor &data = st.get(o.getData());
        const Tensor &updates = st.get(o.getUpdates());
        FailureOr<GatherLayout> l =
            gatherLayout(o, data.shape, st.get(o.getIndices()),
                         static_cast<int64_t>(o.getAxis()));
        if (failed(l))
          return failure();
        out.data = data.data;
        bool largest = o.getLargest();
        forEachGathered(*l, [&](int64_t d, int64_t g) {
          double v = updates.data[g], &cur = out.data[d];
          if (std::isnan(v) || (largest ? v > cur : v < cur))
            cur = v;
        });
        return true;
      })
      .Default([](Operation *) -> Handled { return false; });
}
