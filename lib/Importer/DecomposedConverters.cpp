//===- DecomposedConverters.cpp - ONNX ops built from tidal ops -----------===//
//
// ONNX operators that are exactly a short composition of tidal ops, which
// then bring their kernels, gradients and planning for free:
//   InstanceNormalization   reshape [N, C, -1], layer_norm over the last
//                           axis, reshape back, * scale + bias per channel
//   GroupNormalization      the same over [N, G, -1] (opset 18: scale and
//                           bias per group; 21: per channel)
//   Gelu (opset 20)         tidal.gelu; approximate="tanh" as
//                           0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
//   PRelu                   where(x > 0, x, slope * x)
//   Trilu                   where(compile-time band mask, x, 0)
//   Tile                    unsqueeze, broadcast_to, reshape
//   ReduceL1, ReduceL2, ReduceSumSquare, ReduceLogSum
//                           reduce_sum of |x|, sqrt of reduce_sum of x^2,
//                           reduce_sum of x^2, log of reduce_sum of x
//   ReduceLogSumExp         log(reduce_sum(exp(x - m))) + m, m the
//                           reduce_max (keepdims), 0 where infinite
// Each intermediate is a value of the training graph like any other (the
// planner sees and frees it); docs/dialect.md lists the forms.
//
//===----------------------------------------------------------------------===//

#include "ConverterSupport.h"

#include <cmath>

using namespace mlir;
using namespace mlir::tidal;
using namespace mlir::tidal::importer;

namespace {

FloatType floatElement(Node &n, int idx) {
  return dyn_cast<FloatType>(n.type(idx).getElementType());
}

/// x normalized over groups of channels: [N, C, ...] viewed as
/// [N, groups, -1], layer_norm over the last axis, viewed back; then
/// scale * y + bias with scale and bias per channel ([C]) or, with
/// `perGroup`, per group (expanded to channels).
LogicalResult normalizeGroups(Node &n, int64_t groups, bool perGroup) {
  auto ops = inputs(n, 3);
  if (failed(ops))
    return failure();
  auto x = n.type(0);
  FloatType ft = floatElement(n, 0);
  if (!ft || x.getRank() < 3)
    return n.fail("needs a float input of rank 3 or more, got " +
                  typeToString(x));
  int64_t batch = x.getDimSize(0), c = x.getDimSize(1);
  if (groups <= 0 || c % groups)
    return n.fail(llvm::Twine(c) + " channels do not split into " +
                  llvm::Twine(groups) + " groups");
  int64_t perChannel = x.getNumElements() / (batch * c);
  int64_t inner = (c / groups) * perChannel;
  int64_t want = perGroup ? groups : c;
  for (int i : {1, 2})
    if (n.type(i).getRank() != 1 || n.type(i).getDimSize(0) != want)
      return n.fail(llvm::Twine(i == 1 ? "scale" : "bias") + " must be [" +
                    llvm::Twine(want) + "], got " + typeToString(n.type(i)));
  Composer b{n};
  float eps = n.f("epsilon", 1e-5f);
  Value v = b.reshape((*ops)[0], {batch, groups, inner});
  Value ones = b.splat(ft, {inner}, 1.0);
  v = b.op(LayerNormOp::getOperationName(), {v, ones},
           {n.named("axis", n.b().getI64IntegerAttr(2)),
            n.named("epsilon", n.b().getF32FloatAttr(eps))},
           0, 3);
  v = b.reshape(v, x.getShape());
  // scale and bias as [C, 1, ..., 1] (per group: repeated over the group's
  // channels first).
  llvm::SmallVector<int64_t> perC(x.getRank() - 1, 1);
  perC[0] = c;
  auto channels = [&](Value p) -> Value {
    if (perGroup) {
      p = b.reshape(p, {groups, 1});
      p = b.ok ? Value(n.b().create<BroadcastToOp>(
                     n.g.loc, RankedTensorType::get({groups, c / groups}, ft),
                     p))
               : Value();
    }
    return b.reshape(p, perC);
  };
  Value scale = channels((*ops)[1]), bias = channels((*ops)[2]);
  v = b.binary(MulOp::getOperationName(), v, scale);
  v = b.binary(AddOp::getOperationName(), v, bias);
  return b.bind(v);
}

LogicalResult convertInstanceNorm(Node &n) {
  auto x = n.type(0);
  if (!x || x.getRank() < 3)
    return n.fail("needs an input of rank 3 or more");
  return normalizeGroups(n, x.getDimSize(1), /*perGroup=*/false);
}

LogicalResult convertGroupNorm(Node &n) {
  const auto *g = n.attr("num_groups");
  if (!g)
    return n.fail("attribute 'num_groups' is required");
  // Opset 18's scale and bias are per group; opset 21 made them per
  // channel (the opset-18 form is deprecated).
  return normalizeGroups(n, g->i(), /*perGroup=*/n.g.opset < 21);
}

LogicalResult convertGelu(Node &n) {
  auto x = n.in(0);
  if (failed(x))
    return failure();
  std::string approx = n.s("approximate", "none");
  if (approx == "none")
    return n.emit(GeluOp::getOperationName(), {*x}, {}, 1);
  if (approx != "tanh")
    return n.fail("approximate '" + approx + "' is not none or tanh");
  FloatType ft = floatElement(n, 0);
  if (!ft)
    return n.fail("Gelu of a non-float tensor");
  // PyTorch's gelu(approximate='tanh').
  Composer b{n};
  auto cst = [&](double v) { return b.splat(ft, {}, v); };
  Value x3 = b.binary(MulOp::getOperationName(),
                      b.binary(MulOp::getOperationName(), *x, *x), *x);
  Value inner =
      b.binary(AddOp::getOperationName(), *x,
               b.binary(MulOp::getOperationName(), x3, cst(0.044715)));
  inner =
      b.binary(MulOp::getOperationName(), inner, cst(std::sqrt(2.0 / M_PI)));
  Value t = b.op(TanhOp::getOperationName(), {inner});
  Value y = b.binary(AddOp::getOperationName(), t, cst(1.0));
  y = b.binary(MulOp::getOperationName(),
               b.binary(MulOp::getOperationName(), *x, cst(0.5)), y);
  return b.bind(y);
}

LogicalResult convertPRelu(Node &n) {
  auto ops = inputs(n, 2);
  if (failed(ops))
    return failure();
  FloatType ft = floatElement(n, 0);
  if (!ft)
    return n.fail("PRelu of a non-float tensor");
  Composer b{n};
  Value x = (*ops)[0];
  Value positive =
      b.binary(GreaterOp::getOperationName(), x, b.splat(ft, {}, 0.0));
  Value scaled = b.binary(MulOp::getOperationName(), (*ops)[1], x);
  return b.bind(b.op(WhereOp::getOperationName(), {positive, x, scaled}));
}

LogicalResult convertTrilu(Node &n) {
  auto x = n.in(0);
  if (failed(x))
    return failure();
  auto t = n.type(0);
  if (t.getRank() < 2)
    return n.fail("needs an input of rank 2 or more");
  int64_t k = 0;
  if (n.has(1)) {
    auto kv = n.constInts(1, "k");
    if (failed(kv))
      return failure();
    if (kv->size() != 1)
      return n.fail("input 'k' must be a scalar");
    k = (*kv)[0];
  }
  bool upper = n.i("upper", 1) != 0;
  int64_t rows = t.getDimSize(t.getRank() - 2),
          cols = t.getDimSize(t.getRank() - 1);
  // The mask is a compile-time constant of rows x cols: static and bounded
  // (fuzzing found [653751819, 5] taking 90 s and 5.7 GB to import).
  const int64_t kMaxMaskElements = int64_t(1) << 28; // 16384 x 16384
  if (ShapedType::isDynamic(rows) || ShapedType::isDynamic(cols) ||
      (cols && rows > kMaxMaskElements / cols))
    return n.fail("the last two dims must be static with at most 2^28 "
                  "elements (the band mask is a constant), got " +
                  typeToString(t));
  llvm::SmallVector<bool> keep;
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j)
      keep.push_back(upper ? j - i >= k : j - i <= k);
  auto maskType = RankedTensorType::get({rows, cols}, n.b().getI1Type());
  Composer b{n};
  Value mask = b.op(ConstantOp::getOperationName(), {},
                    {n.named("value", DenseElementsAttr::get(maskType, keep))});
  Value zero = b.splat(t.getElementType(), {}, 0.0);
  return b.bind(b.op(WhereOp::getOperationName(), {mask, *x, zero}));
}

LogicalResult convertTile(Node &n) {
  auto x = n.in(0);
  if (failed(x))
    return failure();
  auto reps = n.constInts(1, "repeats");
  if (failed(reps))
    return failure();
  auto t = n.type(0);
  int64_t rank = t.getRank();
  if ((int64_t)reps->size() != rank)
    return n.fail("repeats has " + llvm::Twine(reps->size()) +
                  " entries for rank " + llvm::Twine(rank));
  // [d0, d1, ...] -> [1, d0, 1, d1, ...] -> [r0, d0, r1, d1, ...] ->
  // [r0 d0, r1 d1, ...]: the tiles of each dimension come outermost.
  llvm::SmallVector<int64_t> split, broadcast, out;
  for (int64_t d = 0; d < rank; ++d) {
    int64_t r = (*reps)[d], dim = t.getDimSize(d);
    if (r < 0)
      return n.fail("repeats must not be negative");
    split.append({1, dim});
    broadcast.append({r, dim});
    out.push_back(r * dim);
  }
  if (llvm::all_of(*reps, [](int64_t r) { return r == 1; })) {
    n.g.bindOutputs(n.proto, *x);
    return success();
  }
  Composer b{n};
  Value v = b.reshape(*x, split);
  if (!b.ok)
    return failure();
  v = n.b().create<BroadcastToOp>(
      n.g.loc, RankedTensorType::get(broadcast, t.getElementType()), v);
  return b.bind(b.reshape(v, out));
}

/// ReduceL1, ReduceL2, ReduceSumSquare and ReduceLogSum as ONNX's function
/// bodies define them: reduce_sum of |x| or x^2 (then sqrt), of x (then
/// log); with no axes (`noop_with_empty_axes`) only the element-wise parts.
LogicalResult convertNormReduce(Node &n, llvm::StringRef kind) {
  auto x = n.in(0);
  if (failed(x))
    return failure();
  auto axes = reduceAxes(n);
  if (failed(axes))
    return failure();
  Composer b{n};
  Value v = *x;
  if (kind == "l1")
    v = b.op(AbsOp::getOperationName(), {v});
  else if (kind == "l2" || kind == "sum_square")
    v = b.binary(MulOp::getOperationName(), v, v);
  if (!axes->empty())
    v = b.op(ReduceSumOp::getOperationName(), {v},
             {n.arr("axes", *axes),
              n.named("keepdims", n.b().getBoolAttr(n.i("keepdims", 1)))});
  if (kind == "l2")
    v = b.op(SqrtOp::getOperationName(), {v});
  else if (kind == "log_sum")
    v = b.op(LogOp::getOperationName(), {v});
  return b.bind(v);
}

/// ReduceLogSumExp as PyTorch's torch.logsumexp computes it:
/// log(reduce_sum(exp(x - m))) + m with m = reduce_max(x) (keepdims),
/// replaced by 0 where it is infinite, so that no exp overflows and an
/// all -inf slice gives -inf. With no axes, x itself (log(exp(x))).
LogicalResult convertLogSumExp(Node &n) {
  auto x = n.in(0);
  if (failed(x))
    return failure();
  auto axes = reduceAxes(n);
  if (failed(axes))
    return failure();
  if (axes->empty())
    return n.emit(IdentityOp::getOperationName(), {*x}, {}, 1);
  Composer b{n};
  Type elt = n.type(0).getElementType();
  auto reduce = [&](llvm::StringRef name, Value v, bool keep) {
    return b.op(
        name, {v},
        {n.arr("axes", *axes), n.named("keepdims", n.b().getBoolAttr(keep))});
  };
  Value m = reduce(ReduceMaxOp::getOperationName(), *x, true);
  Value inf = b.splat(elt, {}, INFINITY);
  Value infinite = b.binary(EqualOp::getOperationName(),
                            b.op(AbsOp::getOperationName(), {m}), inf);
  m = b.op(WhereOp::getOperationName(), {infinite, b.splat(elt, {}, 0.0), m});
  Value e = b.op(ExpOp::getOperationName(),
                 {b.binary(SubOp::getOperationName(), *x, m)});
  bool keep = n.i("keepdims", 1);
  Value s = b.op(LogOp::getOperationName(),
                 {reduce(ReduceSumOp::getOperationName(), e, keep)});
  if (!b.ok)
    return failure();
  if (!keep)
    m = b.reshape(m, cast<RankedTensorType>(s.getType()).getShape());
  return b.bind(b.binary(AddOp::getOperationName(), s, m));
}

} // namespace

void importer::addDecomposedConverters(llvm::StringMap<Converter> &map) {
  map["InstanceNormalization"] = convertInstanceNorm;
  map["GroupNormalization"] = convertGroupNorm;
  map["Gelu"] = convertGelu;
  map["PRelu"] = convertPRelu;
  map["Trilu"] = convertTrilu;
  map["Tile"] = convertTile;
  map["ReduceL1"] = [](Node &n) { return convertNormReduce(n, "l1"); };
  map["ReduceL2"] = [](Node &n) { return convertNormReduce(n, "l2"); };
  map["ReduceSumSquare"] = [](Node &n) {
    return convertNormReduce(n, "sum_square");
  };
  map["ReduceLogSum"] = [](Node &n) { return convertNormReduce(n, "log_sum"); };
  map["ReduceLogSumExp"] = convertLogSumExp;
}
