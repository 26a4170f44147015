//===- IndexingConverters.cpp - element indexing and CumSum as tidal ops --===//
//
// ONNX's element-wise indexing ops, built from gather and gather_backward
// (a scatter-add into zeros) on the data viewed as one flat axis, with the
// flat positions computed by int64 arithmetic on the indices (run-time
// values as much as constants):
//   GatherElements   gather(flat data, base + idx * stride)
//   GatherND         gather(data viewed [prod(indexed dims), rest...],
//                          sum_k idx[..., k] * stride_k (+ batch offsets))
//   ScatterElements, ScatterND
//                    reduction "add": data + scatter_add(updates);
//                    "max", "min": scatter_extreme(data, updates);
//                    "none": where(hit, scatter_add(updates), data), hit =
//                    scatter_add(ones) > 0 (ONNX leaves repeated indices
//                    undefined; here they add up)
//   TopK             k rounds of argmax (argmin), each value a gather of
//                    its index, then that element masked for the next
//   OneHot           where(idx == range(depth) along axis, on, off)
//   CumSum           float: log2(n) steps of y += y shifted by 1, 2, 4...
//                    along the axis (slice + pad; exclusive shifts by one
//                    first, reverse shifts the other way)
// Negative indices count from the end, as ONNX says. The gradients are
// gather's and gather_backward's (IndexingRules.cpp), where's, slice's and
// pad's.
//
//===----------------------------------------------------------------------===//

#include "ConverterSupport.h"

#include <limits>

using namespace mlir;
using namespace mlir::tidal;
using namespace mlir::tidal::importer;

namespace {

llvm::SmallVector<int64_t> stridesOf(llvm::ArrayRef<int64_t> shape) {
  llvm::SmallVector<int64_t> s(shape.size(), 1);
  for (int64_t d = (int64_t)shape.size() - 2; d >= 0; --d)
    s[d] = s[d + 1] * shape[d + 1];
  return s;
}

struct Indexer : Composer {
  Value scalar(int64_t v) { return i64Const({}, {v}); }
  /// idx with negative entries counted from the end of an axis of `dim`.
  Value normalize(Value idx, int64_t dim) {
    Value neg = binary(LessOp::getOperationName(), idx, scalar(0));
    Value wrapped = binary(AddOp::getOperationName(), idx, scalar(dim));
    return op(WhereOp::getOperationName(), {neg, wrapped, idx});
  }
  /// Scatter-adds `updates` (shaped data[:0] + idx + data[1:]) into zeros
  /// shaped `dataShape` along axis 0.
  Value scatterAdd(Value updates, Value idx, llvm::ArrayRef<int64_t> dataShape,
                   Type elt) {
    if (!ok)
      return {};
    auto type = RankedTensorType::get(dataShape, elt);
    Operation *o = n.g.create(
        GatherBackwardOp::getOperationName(), {updates, idx},
        {n.named("axis", n.b().getI64IntegerAttr(0))}, 1, n.error, {type});
    if (!o) {
      ok = false;
      return {};
    }
    return o->getResult(0);
  }
  Value slice(Value v, llvm::ArrayRef<int64_t> shape, int64_t axis,
              int64_t at) {
    llvm::SmallVector<int64_t> starts(shape.size(), 0), ends(shape),
        steps(shape.size(), 1);
    starts[axis] = at;
    ends[axis] = at + 1;
    return op(
        SliceOp::getOperationName(), {v},
        {n.arr("starts", starts), n.arr("ends", ends), n.arr("steps", steps)});
  }
};

/// The flat positions in data (shaped `data`) of ElementsOp indices `idx`
/// (shaped `ishape`) along `axis`; negative ones count from the end unless
/// the indices are known not to be (`nonNegative`).
Value elementsFlatIndex(Indexer &c, Value idx, llvm::ArrayRef<int64_t> data,
                        llvm::ArrayRef<int64_t> ishape, int64_t axis,
                        bool nonNegative = false) {
  llvm::SmallVector<int64_t> ds = stridesOf(data);
  // The flat position of every index with its axis coordinate zeroed.
  llvm::SmallVector<int64_t> base;
  int64_t count = 1;
  for (int64_t s : ishape)
    count *= s;
  llvm::SmallVector<int64_t> is = stridesOf(ishape);
  for (int64_t i = 0; i < count; ++i) {
    int64_t flat = 0;
    for (size_t d = 0; d < ishape.size(); ++d)
      if ((int64_t)d != axis)
        flat += (i / is[d]) % ishape[d] * ds[d];
    base.push_back(flat);
  }
  Value scaled = c.binary(MulOp::getOperationName(),
                          nonNegative ? idx : c.normalize(idx, data[axis]),
                          c.scalar(ds[axis]));
  return c.binary(AddOp::getOperationName(), scaled, c.i64Const(ishape, base));
}

/// Checks `idx` is an int64 tensor of data's rank, no larger on other axes.
LogicalResult checkElementsIndices(Node &n, RankedTensorType data,
                                   RankedTensorType idx, int64_t axis,
                                   llvm::StringRef what) {
  if (!idx.getElementType().isInteger(64) &&
      !idx.getElementType().isInteger(32))
    return n.fail("indices must be int32 or int64, got " + typeToString(idx));
  if (idx.getRank() != data.getRank())
    return n.fail("indices " + typeToString(idx) + " must have the rank of " +
                  what + " " + typeToString(data));
  // The indices' flat positions with the axis coordinate zeroed are a
  // compile-time constant of one int64 per index (elementsFlatIndex).
  const int64_t kMaxIndices = int64_t(1) << 24;
  if (!idx.hasStaticShape() || idx.getNumElements() > kMaxIndices)
    return n.fail("indices " + typeToString(idx) +
                  " must have a static shape of at most 2^24 elements (their "
                  "positions are a compile-time constant)");
  for (int64_t d = 0; d < data.getRank(); ++d)
    if (d != axis && idx.getDimSize(d) > data.getDimSize(d))
      return n.fail("indices " + typeToString(idx) + " are larger than " +
                    what + " " + typeToString(data) + " on axis " +
                    llvm::Twine(d));
  return success();
}

Value asI64(Indexer &c, Value v) {
  auto t = cast<RankedTensorType>(v.getType());
  if (t.getElementType().isInteger(64) || !c.ok)
    return v;
  auto op = c.n.b().create<CastOp>(
      c.n.g.loc, RankedTensorType::get(t.getShape(), c.n.b().getI64Type()), v);
  return op.getResult();
}

LogicalResult convertGatherElements(Node &n) {
  auto ops = inputs(n, 2);
  if (failed(ops))
    return failure();
  auto data = n.type(0), idx = n.type(1);
  auto axis = n.axis(n.i("axis", 0), data.getRank());
  if (failed(axis) || failed(checkElementsIndices(n, data, idx, *axis, "data")))
    return failure();
  Indexer c{{n}};
  Value flat = elementsFlatIndex(c, asI64(c, (*ops)[1]), data.getShape(),
                                 idx.getShape(), *axis);
  Value flatData = c.reshape((*ops)[0], {data.getNumElements()});
  return c.bind(c.gather(flatData, flat, 0));
}

/// data with `updates` scattered to flat positions `flat` of the data
/// viewed as `view` (axis 0 indexed), by `reduction`.
LogicalResult scatter(Node &n, Indexer &c, Value data, Value updates,
                      Value flat, llvm::ArrayRef<int64_t> view,
                      RankedTensorType dataType) {
  std::string reduction = n.s("reduction", "none");
  if (reduction != "none" && reduction != "add" && reduction != "max" &&
      reduction != "min")
    return n.fail("reduction '" + reduction +
                  "' is not supported (none, add, max and min are)");
  if ((reduction == "max" || reduction == "min") && n.g.opset < 18)
    return n.fail("reduction '" + reduction + "' is defined from opset 18 (" +
                  "the model's is " + llvm::Twine(n.g.opset) + ")");
  Type elt = dataType.getElementType();
  Value viewed = c.reshape(data, view);
  auto intType = dyn_cast<IntegerType>(elt);
  if (intType && intType.getWidth() > 1) {
    // Integer data (PyTorch's pack_padded_sequence scatters a permutation's
    // inverse): each position learns which update lands on it (the update's
    // number + 1, scatter-added in float32, exact below 2^24 updates) and
    // gathers that update, so the values themselves are never converted.
    if (reduction != "none")
      return n.fail("reduction '" + reduction +
                    "' of integer data is not supported (none is)");
    auto ut = cast<RankedTensorType>(updates.getType());
    const int64_t count = ut.getNumElements();
    if (count >= (int64_t(1) << 24))
      return n.fail("more than 2^24 integer updates");
    llvm::SmallVector<int64_t> numbers(count);
    for (int64_t i = 0; i < count; ++i)
      numbers[i] = i + 1;
    Type f32 = n.b().getF32Type();
    Value numbered =
        n.b().create<CastOp>(n.g.loc, RankedTensorType::get(ut.getShape(), f32),
                             c.i64Const(ut.getShape(), numbers));
    Value landed = c.scatterAdd(numbered, flat, view, f32);
    Value hit =
        c.binary(GreaterOp::getOperationName(), landed, c.splat(f32, {}, 0.0));
    if (!c.ok)
      return failure();
    Value which = n.b().create<CastOp>(
        n.g.loc, RankedTensorType::get(view, n.b().getI64Type()), landed);
    Value from =
        c.op(WhereOp::getOperationName(),
             {hit, c.binary(SubOp::getOperationName(), which, c.scalar(1)),
              c.scalar(0)});
    Value src = c.gather(c.reshape(updates, {count}), from, 0);
    Value out = c.op(WhereOp::getOperationName(), {hit, src, viewed});
    return c.bind(c.reshape(out, dataType.getShape()));
  }
  if (!isa<FloatType>(elt))
    return n.fail("needs float or integer data, got " + typeToString(dataType));
  if (reduction == "max" || reduction == "min") {
    Value out =
        c.op(ScatterExtremeOp::getOperationName(), {viewed, flat, updates},
             {n.named("axis", n.b().getI64IntegerAttr(0)),
              n.named("largest", n.b().getBoolAttr(reduction == "max"))});
    return c.bind(c.reshape(out, dataType.getShape()));
  }
  Value added = c.scatterAdd(updates, flat, view, elt);
  Value out;
  if (reduction == "add") {
    out = c.binary(AddOp::getOperationName(), viewed, added);
  } else {
    auto ut = cast<RankedTensorType>(updates.getType());
    Value hits =
        c.scatterAdd(c.splat(elt, ut.getShape(), 1.0), flat, view, elt);
    Value hit =
        c.binary(GreaterOp::getOperationName(), hits, c.splat(elt, {}, 0.0));
    out = c.op(WhereOp::getOperationName(), {hit, added, viewed});
  }
  return c.bind(c.reshape(out, dataType.getShape()));
}

LogicalResult convertScatterElements(Node &n) {
  auto ops = inputs(n, 3);
  if (failed(ops))
    return failure();
  auto data = n.type(0), idx = n.type(1), upd = n.type(2);
  auto axis = n.axis(n.i("axis", 0), data.getRank());
  if (failed(axis) || failed(checkElementsIndices(n, data, idx, *axis, "data")))
    return failure();
  if (upd.getShape() != idx.getShape())
    return n.fail("updates " + typeToString(upd) +
                  " must have the indices' shape " + typeToString(idx));
  Indexer c{{n}};
  Value flat = elementsFlatIndex(c, asI64(c, (*ops)[1]), data.getShape(),
                                 idx.getShape(), *axis);
  return scatter(n, c, (*ops)[0], (*ops)[2], flat, {data.getNumElements()},
                 data);
}

/// The flat position over data's first b + K dims of ND indices `idx`
/// ([..., K], the first b dims batch dims); `view` gets data's shape with
/// those dims merged.
FailureOr<Value> ndFlatIndex(Node &n, Indexer &c, Value idx,
                             RankedTensorType data, RankedTensorType it,
                             int64_t b, llvm::SmallVectorImpl<int64_t> &view) {
  if (!it.getElementType().isInteger(64) && !it.getElementType().isInteger(32))
    return n.fail("indices must be int32 or int64, got " + typeToString(it));
  idx = asI64(c, idx);
  const int64_t q = it.getRank(), r = data.getRank();
  if (q < 1 || b < 0 || b >= q || b >= r)
    return n.fail("batch_dims " + llvm::Twine(b) + " does not fit indices " +
                  typeToString(it) + " and data " + typeToString(data));
  const int64_t k = it.getDimSize(q - 1);
  if (k < 1 || b + k > r)
    return n.fail("indices " + typeToString(it) + " index " + llvm::Twine(k) +
                  " dims of data " + typeToString(data) + " after " +
                  llvm::Twine(b) + " batch dims");
  for (int64_t d = 0; d < b; ++d)
    if (it.getDimSize(d) != data.getDimSize(d))
      return n.fail("batch dim " + llvm::Twine(d) + " differs between " +
                    typeToString(it) + " and " + typeToString(data));
  llvm::ArrayRef<int64_t> ds = data.getShape();
  llvm::SmallVector<int64_t> indexed(ds.begin(), ds.begin() + b + k);
  llvm::SmallVector<int64_t> st = stridesOf(indexed);
  llvm::SmallVector<int64_t> outer(it.getShape().drop_back());
  Value flat;
  for (int64_t j = 0; j < k; ++j) {
    Value part = c.reshape(c.slice(idx, it.getShape(), q - 1, j), outer);
    part = c.binary(MulOp::getOperationName(), c.normalize(part, ds[b + j]),
                    c.scalar(st[b + j]));
    flat = flat ? c.binary(AddOp::getOperationName(), flat, part) : part;
  }
  if (b > 0) { // the batch position of every index tuple
    llvm::SmallVector<int64_t> os = stridesOf(outer), base;
    int64_t count = 1;
    for (int64_t s : outer)
      count *= s;
    for (int64_t i = 0; i < count; ++i) {
      int64_t f = 0;
      for (int64_t d = 0; d < b; ++d)
        f += (i / os[d]) % outer[d] * st[d];
      base.push_back(f);
    }
    flat = c.binary(AddOp::getOperationName(), flat, c.i64Const(outer, base));
  }
  int64_t merged = 1;
  for (int64_t s : indexed)
    merged *= s;
  view.assign({merged});
  view.append(ds.begin() + b + k, ds.end());
  return flat;
}

LogicalResult convertGatherND(Node &n) {
  auto ops = inputs(n, 2);
  if (failed(ops))
    return failure();
  Indexer c{{n}};
  llvm::SmallVector<int64_t> view;
  auto flat = ndFlatIndex(n, c, (*ops)[1], n.type(0), n.type(1),
                          n.i("batch_dims", 0), view);
  if (failed(flat))
    return failure();
  return c.bind(c.gather(c.reshape((*ops)[0], view), *flat, 0));
}

LogicalResult convertScatterND(Node &n) {
  auto ops = inputs(n, 3);
  if (failed(ops))
    return failure();
  auto data = n.type(0), it = n.type(1), upd = n.type(2);
  Indexer c{{n}};
  llvm::SmallVector<int64_t> view;
  auto flat = ndFlatIndex(n, c, (*ops)[1], data, it, 0, view);
  if (failed(flat))
    return failure();
  llvm::SmallVector<int64_t> want(it.getShape().drop_back());
  want.append(view.begin() + 1, view.end());
  if (upd.getShape() != llvm::ArrayRef<int64_t>(want))
    return n.fail("updates " + typeToString(upd) + " must be [" +
                  shapeToString(want) + "]");
  return scatter(n, c, (*ops)[0], (*ops)[2], *flat, view, data);
}

LogicalResult convertCumSum(Node &n) {
  auto x = n.in(0);
  if (failed(x))
    return failure();
  auto t = n.type(0);
  // Integers too (HuggingFace's position_ids = mask.long().cumsum(-1)).
  if (t.getElementType().isInteger(1))
    return n.fail("CumSum of " + typeToString(t) + " (bool) is not defined");
  auto axisVals = n.constInts(1, "axis");
  if (failed(axisVals))
    return failure();
  if (axisVals->size() != 1)
    return n.fail("axis must hold one value");
  auto axis = n.axis((*axisVals)[0], t.getRank());
  if (failed(axis))
    return failure();
  const bool exclusive = n.i("exclusive", 0), reverse = n.i("reverse", 0);
  const int64_t len = t.getDimSize(*axis), rank = t.getRank();
  Composer c{n};
  // v shifted by s positions along the axis (toward the end, or toward the
  // start for a reverse sum), zeros shifted in.
  auto shift = [&](Value v, int64_t s) {
    llvm::SmallVector<int64_t> starts(rank, 0), ends(t.getShape()),
        steps(rank, 1), pads(2 * rank, 0);
    if (reverse) {
      starts[*axis] = s;
      pads[rank + *axis] = s;
    } else {
      ends[*axis] = len - s;
      pads[*axis] = s;
    }
    Value kept = c.op(
        SliceOp::getOperationName(), {v},
        {n.arr("starts", starts), n.arr("ends", ends), n.arr("steps", steps)});
    return c.op(PadOp::getOperationName(), {kept},
                {n.arr("pads", pads),
                 n.named("mode", PadModeAttr::get(n.g.ctx, PadMode::constant)),
                 n.named("value", n.b().getF64FloatAttr(0.0))});
  };
  Value y = *x;
  if (exclusive && len > 0)
    y = len > 1 ? shift(y, 1) : c.splat(t.getElementType(), t.getShape(), 0);
  // Hillis-Steele: after the step of s, y[i] sums the 2s positions up to i.
  for (int64_t s = 1; s < len; s *= 2)
    y = c.binary(AddOp::getOperationName(), y, shift(y, s));
  if (y == *x)
    y = c.op(IdentityOp::getOperationName(), {y});
  return c.bind(y);
}

/// The most TopK outputs per slice: the composition below has a handful of
/// ops per output (MoE routers take 1-8; larger k is a sort, not imported).
constexpr int64_t kMaxTopK = 64;

/// TopK as k rounds of argmax (argmin for the smallest): each round's index
/// is the first extreme element (the lower index first among equals, as
/// ONNX asks), its value a gather, and it is then masked with -inf (+inf)
/// for the next round. The values are sorted (ONNX allows any order with
/// sorted = 0). Their gradient is the gathers' scatter-add.
LogicalResult topKOfFloats(Node &n, FailureOr<Value> x, RankedTensorType type);

/// Integer TopK (PyTorch's pack_padded_sequence sorts the lengths with it)
/// runs on the values converted to float64, exact below 2^53; the values
/// come back converted to the input's type.
LogicalResult convertTopK(Node &n) {
  auto x = n.in(0);
  if (failed(x))
    return failure();
  auto type = n.type(0);
  auto intType = dyn_cast<IntegerType>(type.getElementType());
  if (!intType || intType.getWidth() == 1)
    return topKOfFloats(n, x, type);
  auto f64 = RankedTensorType::get(type.getShape(), n.b().getF64Type());
  Value wide = n.b().create<CastOp>(n.g.loc, f64, *x);
  if (failed(topKOfFloats(n, wide, f64)))
    return failure();
  if (n.proto.output_size() > 0 && !n.proto.output(0).empty()) {
    Value values = n.g.values[n.proto.output(0)];
    auto back = RankedTensorType::get(
        cast<RankedTensorType>(values.getType()).getShape(), intType);
    n.g.values[n.proto.output(0)] = n.b().create<CastOp>(n.g.loc, back, values);
  }
  return success();
}

LogicalResult topKOfFloats(Node &n, FailureOr<Value> x, RankedTensorType type) {
  if (!isa<FloatType>(type.getElementType()))
    return n.fail("needs float or integer input, got " + typeToString(type));
  auto axis = n.axis(n.i("axis", -1), type.getRank());
  if (failed(axis))
    return failure();
  auto ks = n.constInts(1, "K");
  if (failed(ks))
    return failure();
  const int64_t dim = type.getDimSize(*axis);
  if (ks->size() != 1 || (*ks)[0] < 1 || (*ks)[0] > dim)
    return n.fail("K must be one value in [1, " + llvm::Twine(dim) +
                  "] (the axis' size)");
  const int64_t k = (*ks)[0];
  const bool largest = n.i("largest", 1) != 0;
  if (k > kMaxTopK) // torch.sort, argsort, a large topk (TopKSort.cpp)
    return topKBySort(n, *x, *axis, k, largest);
  Indexer c{{n}};
  llvm::SmallVector<int64_t> one(type.getShape());
  one[*axis] = 1;
  // The position along the axis of every element, broadcast from 1-D.
  llvm::SmallVector<int64_t> iotaShape(type.getRank(), 1), iota;
  iotaShape[*axis] = dim;
  for (int64_t i = 0; i < dim; ++i)
    iota.push_back(i);
  Value positions = c.i64Const(iotaShape, iota);
  Value flatX = c.reshape(*x, {type.getNumElements()});
  Value masked = *x;
  Value fill = c.splat(type.getElementType(), {},
                       largest ? -std::numeric_limits<double>::infinity()
                               : std::numeric_limits<double>::infinity());
  llvm::SmallVector<Value> values, indices;
  for (int64_t r = 0; r < k; ++r) {
    Value idx = c.op(largest ? ArgMaxOp::getOperationName()
                             : ArgMinOp::getOperationName(),
                     {masked},
                     {n.named("axis", n.b().getI64IntegerAttr(*axis)),
                      n.named("keepdims", n.b().getBoolAttr(true))});
    if (!c.ok)
      return failure();
    indices.push_back(idx);
    values.push_back(
        c.gather(flatX,
                 elementsFlatIndex(c, idx, type.getShape(), one, *axis,
                                   /*nonNegative=*/true),
                 0));
    if (r + 1 < k) {
      Value hit = c.binary(EqualOp::getOperationName(), positions, idx);
      masked = c.op(WhereOp::getOperationName(), {hit, fill, masked});
    }
  }
  auto join = [&](llvm::ArrayRef<Value> parts) {
    if (parts.size() == 1)
      return parts[0];
    return c.op(ConcatOp::getOperationName(), parts,
                {n.named("axis", n.b().getI64IntegerAttr(*axis))});
  };
  Value outValues = join(values), outIndices = join(indices);
  if (!c.ok)
    return failure();
  n.g.bindOutputs(n.proto, {outValues, outIndices});
  return success();
}

/// OneHot(indices, depth, values): where(unsqueeze(idx, axis) == range, on,
/// off), the range [0, depth) laid along `axis` of the result; negative
/// indices count from the end, out-of-range ones give all `off`.
LogicalResult convertOneHot(Node &n) {
  Indexer c{n};
  auto idxIn = n.in(0), valuesIn = n.in(2);
  if (failed(idxIn) || failed(valuesIn))
    return failure();
  RankedTensorType it = n.type(0), vt = n.type(2);
  if (!it || !it.hasStaticShape() || !vt || vt.getNumElements() != 2)
    return n.fail("indices must have a static shape and values two elements "
                  "[off, on]");
  DenseElementsAttr depthAttr = n.g.constInput(n.proto, 1);
  if (!depthAttr || depthAttr.getNumElements() != 1)
    return n.fail("input 'depth' ('" + n.proto.input(1) +
                  "') must be one value known at compile time");
  int64_t depth = isa<FloatType>(depthAttr.getElementType())
                      ? int64_t(floatValues(depthAttr)[0])
                      : intValues(depthAttr)[0];
  if (depth < 1 || depth > (int64_t(1) << 24))
    return n.fail("depth " + llvm::Twine(depth) + " is outside [1, 2^24]");
  const int64_t outRank = it.getRank() + 1;
  auto axis = n.axis(n.i("axis", -1), outRank);
  if (failed(axis))
    return failure();
  // [..., 1 at axis, ...] indices against [1, ..., depth at axis, ..., 1].
  llvm::SmallVector<int64_t> idxShape(it.getShape()), rangeShape(outRank, 1);
  idxShape.insert(idxShape.begin() + *axis, 1);
  rangeShape[*axis] = depth;
  llvm::SmallVector<int64_t> range(depth);
  for (int64_t k = 0; k < depth; ++k)
    range[k] = k;
  Value idx = c.normalize(asI64(c, *idxIn), depth);
  Value hit = c.binary(EqualOp::getOperationName(), c.reshape(idx, idxShape),
                       c.i64Const(rangeShape, range));
  // off and on as scalars: constants when values is one, else slices.
  Value off, on;
  if (DenseElementsAttr values = n.g.constInput(n.proto, 2)) {
    Type elt = vt.getElementType();
    auto scalarOf = [&](int64_t k) {
      auto type = RankedTensorType::get({}, elt);
      Attribute a =
          isa<FloatType>(elt)
              ? Attribute(n.b().getFloatAttr(elt, floatValues(values)[k]))
              : Attribute(n.b().getIntegerAttr(elt, intValues(values)[k]));
      return c.op(ConstantOp::getOperationName(), {},
                  {n.named("value", DenseElementsAttr::get(type, a))});
    };
    off = scalarOf(0);
    on = scalarOf(1);
  } else {
    Value flat = c.reshape(*valuesIn, {2});
    off = c.reshape(c.slice(flat, {2}, 0, 0), {});
    on = c.reshape(c.slice(flat, {2}, 0, 1), {});
  }
  return c.bind(c.op(WhereOp::getOperationName(), {hit, on, off}));
}

} // namespace

void importer::addIndexingConverters(llvm::StringMap<Converter> &map) {
  map["OneHot"] = convertOneHot;
  map["TopK"] = convertTopK;
  map["GatherElements"] = convertGatherElements;
  map["GatherND"] = convertGatherND;
  map["ScatterElements"] = convertScatterElements;
  map["ScatterND"] = convertScatterND;
  map["CumSum"] = convertCumSum;
}
