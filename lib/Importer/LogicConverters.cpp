//===- LogicConverters.cpp - comparisons, logic, selection, variadics -----===//
//
// ONNX Equal, Less, LessOrEqual, Greater, GreaterOrEqual, And, Or, Xor, Not,
// Where, Expand, Cast and CastLike on run-time values (on compile-time values
// ShapeFolding folds them first), the variadic Max, Min, Sum and Mean as
// chains of binary ops in input order, and IsNaN, IsInf and Mod as
// compositions.
//
//===----------------------------------------------------------------------===//

#include "ConverterSupport.h"

#include <cmath>

using namespace mlir;
using namespace mlir::tidal;
using namespace mlir::tidal::importer;

namespace {

/// Folds the node's inputs left to right with the binary op `opName`;
/// Mean divides the sum by the input count.
LogicalResult convertVariadic(Node &n, llvm::StringRef opName, bool mean) {
  if (n.proto.input_size() == 0)
    return n.fail("needs at least one input");
  for (int i = 0; i < n.proto.input_size(); ++i)
    if (auto t = n.type(i); t && isa<FloatType>(t.getElementType()) &&
                            !t.getElementType().isF32() &&
                            !t.getElementType().isF64())
      return n.fail("element type " +
                    llvm::Twine(typeToString(t.getElementType())) +
                    " is not supported (float32, float64 or an integer type)");
  auto acc = n.in(0);
  if (failed(acc))
    return failure();
  Value v = *acc;
  for (int i = 1; i < n.proto.input_size(); ++i) {
    auto next = n.in(i);
    if (failed(next))
      return failure();
    Operation *op = n.g.create(opName, {v, *next}, {}, 1, n.error);
    if (!op)
      return failure();
    v = op->getResult(0);
  }
  if (mean && n.proto.input_size() > 1) {
    auto type = cast<RankedTensorType>(v.getType());
    auto ft = dyn_cast<FloatType>(type.getElementType());
    if (!ft)
      return n.fail("Mean of a non-float tensor is not supported");
    auto scalar = RankedTensorType::get({}, ft);
    auto count = DenseElementsAttr::get(
        scalar, n.b().getFloatAttr(ft, n.proto.input_size()).getValue());
    Operation *c = n.g.create(ConstantOp::getOperationName(), {},
                              {n.named("value", count)}, 1, n.error);
    if (!c)
      return failure();
    Operation *div = n.g.create(DivOp::getOperationName(), {v, c->getResult(0)},
                                {}, 1, n.error);
    if (!div)
      return failure();
    v = div->getResult(0);
  }
  n.g.bindOutputs(n.proto, v);
  return success();
}

/// Expand: broadcast the input to its shape and the given one.
LogicalResult convertExpand(Node &n) {
  auto x = n.in(0);
  if (failed(x))
    return failure();
  auto shape = n.constInts(1, "shape");
  if (failed(shape))
    return failure();
  auto type = n.type(0);
  auto out = broadcastShapes(type.getShape(), *shape);
  if (!out)
    return n.fail("shape [" + shapeToString(*shape) +
                  "] and the input's shape " + shapeToString(type.getShape()) +
                  " do not broadcast");
  if (*out == type.getShape()) {
    n.g.bindOutputs(n.proto, *x);
    return success();
  }
  auto op = n.b().create<BroadcastToOp>(
      n.g.loc, RankedTensorType::get(*out, type.getElementType()), *x);
  n.g.bindOutputs(n.proto, op->getResults());
  return success();
}

/// Cast (to the `to` type) and CastLike (to input 1's type) of a run-time
/// value.
LogicalResult convertCast(Node &n, bool like) {
  auto x = n.in(0);
  if (failed(x))
    return failure();
  Type elt;
  if (like) {
    auto t = n.type(1);
    if (!t)
      return n.fail("input 1 is required");
    elt = t.getElementType();
  } else {
    const auto *to = n.attr("to");
    if (!to)
      return n.fail("attribute 'to' is required");
    elt = elementTypeFor(n.g.ctx, to->i());
    if (!elt)
      return n.fail("cast to " + onnxTypeName(to->i()) +
                    " is not supported (tidal handles numeric tensors)");
  }
  auto type = n.type(0);
  if (elt == type.getElementType()) {
    n.g.bindOutputs(n.proto, *x);
    return success();
  }
  auto op = n.b().create<CastOp>(
      n.g.loc, RankedTensorType::get(type.getShape(), elt), *x);
  n.g.bindOutputs(n.proto, op->getResults());
  return success();
}

/// Where. torch 1.13 exports `torch.where(c, x, 0.0)` with the Python
/// scalar as a float64 constant beside a float32 x, a model ONNX's checker
/// refuses; a constant branch of another float type is converted to the
/// other branch's (its values rounded as a Cast would), so such models
/// import. Branches of different types otherwise stay an error.
LogicalResult convertWhere(Node &n) {
  for (int idx : {0, 1, 2})
    if (!n.has(idx))
      return n.fail("input " + llvm::Twine(idx) + " is required");
  Type a = n.type(1).getElementType(), b = n.type(2).getElementType();
  int convert = -1; // the constant branch converted to the other's type
  if (a != b && isa<FloatType>(a) && isa<FloatType>(b))
    for (int idx : {1, 2})
      if (n.g.constInput(n.proto, idx)) {
        convert = idx;
        break;
      }
  llvm::SmallVector<Value> ops;
  Composer comp{n};
  for (int idx : {0, 1, 2}) {
    if (idx == convert) {
      auto type =
          RankedTensorType::get(n.type(idx).getShape(), idx == 1 ? b : a);
      ops.push_back(comp.op(
          ConstantOp::getOperationName(), {},
          {n.named("value", makeConstant(type, floatValues(n.g.constInput(
                                                   n.proto, idx))))}));
      if (!comp.ok)
        return failure();
      continue;
    }
    auto v = n.in(idx);
    if (failed(v))
      return failure();
    ops.push_back(*v);
  }
  return n.emit(WhereOp::getOperationName(), ops, {}, 1);
}

/// Mod of run-time values (torch.fmod, `%` of integer tensors); constants
/// fold (FoldElementwise.cpp). Float (fmod 1, C's fmod):
/// x - trunc(x / y) * y, trunc(q) = where(q < 0, ceil(q), floor(q)), so
/// the gradients are 1 and -trunc(x / y) as torch.fmod's. Integers: div
/// truncates, r = x - (x / y) * y is C's remainder (fmod 1); fmod 0
/// (Python's sign rule) adds y where r is nonzero and its sign differs from
/// y's. A zero integer divisor fails at run time, naming the op.
LogicalResult convertMod(Node &n) {
  auto ops = inputs(n, 2);
  if (failed(ops))
    return failure();
  Type elt = n.type(0).getElementType();
  if (elt != n.type(1).getElementType())
    return n.fail("the operands have different element types");
  const bool fmod = n.i("fmod", 0) != 0;
  Value x = (*ops)[0], y = (*ops)[1];
  Composer b{n};
  Value q = b.binary(DivOp::getOperationName(), x, y);
  if (auto ft = dyn_cast<FloatType>(elt)) {
    if (!fmod)
      return n.fail("Mod of floating-point values needs fmod = 1 (ONNX)");
    if (!ft.isF32() && !ft.isF64())
      return n.fail("element type " + llvm::Twine(typeToString(ft)) +
                    " is not supported (float32, float64 or an integer type)");
    Value negative =
        b.binary(LessOp::getOperationName(), q, b.splat(elt, {}, 0.0));
    Value truncated = b.op(WhereOp::getOperationName(),
                           {negative, b.op(CeilOp::getOperationName(), {q}),
                            b.op(FloorOp::getOperationName(), {q})});
    return b.bind(b.binary(SubOp::getOperationName(), x,
                           b.binary(MulOp::getOperationName(), truncated, y)));
  }
  Value r = b.binary(SubOp::getOperationName(), x,
                     b.binary(MulOp::getOperationName(), q, y));
  if (fmod)
    return b.bind(r);
  Value zero = b.splat(elt, {}, 0.0);
  Value nonzero = b.op(LogicalNotOp::getOperationName(),
                       {b.binary(EqualOp::getOperationName(), r, zero)});
  Value signsDiffer = b.binary(LogicalXorOp::getOperationName(),
                               b.binary(LessOp::getOperationName(), r, zero),
                               b.binary(LessOp::getOperationName(), y, zero));
  Value adjust =
      b.binary(LogicalAndOp::getOperationName(), nonzero, signsDiffer);
  return b.bind(b.op(WhereOp::getOperationName(),
                     {adjust, b.binary(AddOp::getOperationName(), r, y), r}));
}

/// IsNaN as x != x (logical_not of equal(x, x): IEEE's NaN is unequal to
/// itself); IsInf as equal(x, +inf), equal(x, -inf) or equal(|x|, inf) by
/// detect_positive / detect_negative. No new kernel.
LogicalResult convertIsNaNOrInf(Node &n, bool nan) {
  auto x = n.floatIn(0);
  if (failed(x))
    return failure();
  RankedTensorType t = n.type(0);
  auto ft = cast<FloatType>(t.getElementType());
  if (!ft.isF32() && !ft.isF64())
    return n.fail("element type " + llvm::Twine(typeToString(ft)) +
                  " is not supported (float32, float64)");
  Composer b{n};
  if (nan)
    return b.bind(b.op(LogicalNotOp::getOperationName(),
                       {b.binary(EqualOp::getOperationName(), *x, *x)}));
  bool positive = n.i("detect_positive", 1),
       negative = n.i("detect_negative", 1);
  if (!positive && !negative) {
    auto type = RankedTensorType::get(t.getShape(), n.b().getI1Type());
    return b.bind(b.op(
        ConstantOp::getOperationName(), {},
        {n.named("value",
                 DenseElementsAttr::get(type, n.b().getBoolAttr(false)))}));
  }
  Value v = positive && negative ? b.op(AbsOp::getOperationName(), {*x}) : *x;
  Value inf = b.splat(ft, {}, negative && !positive ? -INFINITY : INFINITY);
  return b.bind(b.binary(EqualOp::getOperationName(), v, inf));
}

} // namespace

void importer::addLogicConverters(llvm::StringMap<Converter> &map) {
  map["Mod"] = convertMod;
  map["IsNaN"] = [](Node &n) { return convertIsNaNOrInf(n, true); };
  map["IsInf"] = [](Node &n) { return convertIsNaNOrInf(n, false); };
  auto binary = [](llvm::StringRef name) -> Converter {
    return [name](Node &n) { return simple(n, name, 2); };
  };
  auto variadic = [](llvm::StringRef name, bool mean) -> Converter {
    return [name, mean](Node &n) { return convertVariadic(n, name, mean); };
  };
  map["Equal"] = binary(EqualOp::getOperationName());
  map["Less"] = binary(LessOp::getOperationName());
  map["LessOrEqual"] = binary(LessOrEqualOp::getOperationName());
  map["Greater"] = binary(GreaterOp::getOperationName());
  map["GreaterOrEqual"] = binary(GreaterOrEqualOp::getOperationName());
  map["And"] = binary(LogicalAndOp::getOperationName());
  map["Or"] = binary(LogicalOrOp::getOperationName());
  map["Xor"] = binary(LogicalXorOp::getOperationName());
  map["Not"] = [](Node &n) {
    return simple(n, LogicalNotOp::getOperationName(), 1);
  };
  map["Where"] = convertWhere;
  map["Expand"] = convertExpand;
  map["Cast"] = [](Node &n) { return convertCast(n, false); };
  map["CastLike"] = [](Node &n) { return convertCast(n, true); };
  map["Max"] = variadic(MaxOp::getOperationName(), false);
  map["Min"] = variadic(MinOp::getOperationName(), false);
  map["Sum"] = variadic(AddOp::getOperationName(), false);
  map["Mean"] = variadic(AddOp::getOperationName(), true);
}
