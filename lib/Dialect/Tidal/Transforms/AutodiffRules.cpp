//===- AutodiffRules.cpp - vector-Jacobian products of tidal ops ----------===//
//
// One rule per forward op. Ops with a dedicated backward op in the dialect
// (convolution, pooling, normalization, losses, activations that need a
// saved tensor) use it; the rest are built from forward ops, with
// broadcasting undone by sumToType.
//
//===----------------------------------------------------------------------===//

#include "AutodiffRules.h"

#include "tidal/Dialect/Tidal/IR/ShapeUtils.h"
#include "tidal/Dialect/Tidal/IR/TidalOps.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::tidal;

static RankedTensorType tensorType(Value v) {
  return cast<RankedTensorType>(v.getType());
}

Value tidal::splatConstant(OpBuilder &b, Location loc, Type type,
                           double value) {
  auto t = cast<RankedTensorType>(type);
  auto attr = DenseElementsAttr::get(
      t, b.getFloatAttr(t.getElementType(), value).getValue());
  return b.create<ConstantOp>(loc, cast<ElementsAttr>(attr));
}

/// A scalar constant of `like`'s element type, which broadcasts to anything.
static Value scalarLike(OpBuilder &b, Location loc, Value like, double value) {
  return splatConstant(
      b, loc, RankedTensorType::get({}, tensorType(like).getElementType()),
      value);
}

/// The integer constant `v` as a constant of `like`'s element type, or null
/// when `v` is not a constant.
static Value floatConstantLike(OpBuilder &b, Location loc, Value v,
                               RankedTensorType like) {
  auto cst = v.getDefiningOp<ConstantOp>();
  auto ints = cst ? dyn_cast<DenseIntElementsAttr>(cst.getValue())
                  : DenseIntElementsAttr();
  if (!ints)
    return {};
  SmallVector<APFloat> values;
  auto ft = cast<FloatType>(like.getElementType());
  for (const APInt &i : ints.getValues<APInt>()) {
    APFloat f(ft.getFloatSemantics());
    f.convertFromAPInt(i, /*isSigned=*/true, APFloat::rmNearestTiesToEven);
    values.push_back(f);
  }
  auto type = RankedTensorType::get(tensorType(v).getShape(), ft);
  return b.create<ConstantOp>(
      loc, cast<ElementsAttr>(DenseElementsAttr::get(type, values)));
}

static Value reshapeTo(OpBuilder &b, Location loc, Value v,
                       ArrayRef<int64_t> shape) {
  if (tensorType(v).getShape() == shape)
    return v;
  return b.create<ReshapeOp>(loc, v, shape);
}

/// The gradient of a gather with `padding_index` (nn.Embedding's
/// padding_idx): zero at the positions whose index is that row, so that the
/// row is not trained through this lookup (PyTorch's embedding backward).
static Value paddingMasked(OpBuilder &b, Location loc, GatherOp op, Value g) {
  std::optional<int64_t> padding = op.getPaddingIndex();
  if (!padding)
    return g;
  auto idxType = cast<RankedTensorType>(op.getIndices().getType());
  auto gType = cast<RankedTensorType>(g.getType());
  // The indices shaped to broadcast over the gathered rows' elements.
  SmallVector<int64_t> shape(idxType.getShape());
  shape.resize(gType.getRank(), 1);
  Value idx = op.getIndices();
  if ((int64_t)shape.size() != idxType.getRank())
    idx = b.create<ReshapeOp>(loc, idx, shape);
  auto scalar = RankedTensorType::get({}, idxType.getElementType());
  Value row = b.create<ConstantOp>(
      loc, DenseElementsAttr::get(
               scalar, b.getIntegerAttr(idxType.getElementType(), *padding)));
  Value hit = b.create<EqualOp>(loc, idx, row);
  Value zero = splatConstant(
      b, loc, RankedTensorType::get({}, gType.getElementType()), 0.0);
  return b.create<WhereOp>(loc, hit, zero, g);
}

Value tidal::sumToType(OpBuilder &b, Location loc, Value grad, Type type) {
  auto target = cast<RankedTensorType>(type);
  auto g = tensorType(grad);
  if (g.getShape() == target.getShape())
    return grad;
  int64_t extra = g.getRank() - target.getRank();
  if (extra > 0) {
    auto leading = llvm::to_vector(llvm::seq<int64_t>(0, extra));
    grad = b.create<ReduceSumOp>(loc, grad, leading, false);
  }
  SmallVector<int64_t> axes;
  ArrayRef<int64_t> now = tensorType(grad).getShape();
  for (int64_t i = 0, e = target.getRank(); i < e; ++i)
    if (target.getDimSize(i) == 1 && now[i] != 1)
      axes.push_back(i);
  if (!axes.empty())
    grad = b.create<ReduceSumOp>(loc, grad, axes, true);
  return reshapeTo(b, loc, grad, target.getShape());
}

/// The transpose of the two trailing dimensions.
static Value transposeLast2(OpBuilder &b, Location loc, Value v) {
  int64_t rank = tensorType(v).getRank();
  auto perm = llvm::to_vector(llvm::seq<int64_t>(0, rank));
  std::swap(perm[rank - 1], perm[rank - 2]);
  return b.create<TransposeOp>(loc, v, perm);
}

namespace {
/// The state of one rule application.
struct Rule {
  OpBuilder &b;
  Operation *op;
  ArrayRef<Value> rg;
  ArrayRef<bool> wanted;
  SmallVectorImpl<Value> &out;
  Location loc;

  // Absent optional operands (e.g. loss weights) are never wanted.
  bool want(unsigned i) const { return i < wanted.size() && wanted[i]; }
  Value in(unsigned i) const { return op->getOperand(i); }
  Value res(unsigned i) const { return op->getResult(i); }
  void set(unsigned i, Value g) {
    if (want(i) && g)
      out[i] = g;
  }
  LogicalResult unsupported(const Twine &why) const {
    return op->emitError("cannot differentiate ")
           << op->getName() << ": " << why;
  }
  /// Fails unless only result 0 carries a gradient.
  LogicalResult onlyFirstResult() const {
    for (unsigned i = 1; i < rg.size(); ++i)
      if (rg[i])
        return unsupported("result #" + Twine(i) +
                           " is used in a differentiated computation");
    return success();
  }
  Value add(Value x, Value y) { return b.create<AddOp>(loc, x, y); }
  Value mul(Value x, Value y) { return b.create<MulOp>(loc, x, y); }
  Value div(Value x, Value y) { return b.create<DivOp>(loc, x, y); }
};
} // namespace

//===----------------------------------------------------------------------===//
// Element-wise
//===----------------------------------------------------------------------===//

static LogicalResult binaryRule(Rule &r) {
  Value g = r.rg[0], a = r.in(0), bv = r.in(1), out = r.res(0);
  OpBuilder &b = r.b;
  Location loc = r.loc;
  auto sumA = [&](Value v) { r.set(0, sumToType(b, loc, v, a.getType())); };
  auto sumB = [&](Value v) { r.set(1, sumToType(b, loc, v, bv.getType())); };
  return TypeSwitch<Operation *, LogicalResult>(r.op)
      .Case([&](AddOp) {
        if (r.want(0))
          sumA(g);
        if (r.want(1))
          sumB(g);
        return success();
      })
      .Case([&](SubOp) {
        if (r.want(0))
          sumA(g);
        if (r.want(1))
          sumB(b.create<NegOp>(loc, g));
        return success();
      })
      .Case([&](MulOp) {
        if (r.want(0))
          sumA(r.mul(g, bv));
        if (r.want(1))
          sumB(r.mul(g, a));
        return success();
      })
      .Case([&](DivOp) {
        if (r.want(0))
          sumA(r.div(g, bv));
        if (r.want(1)) // d(a/b)/db = -(a/b)/b
          sumB(b.create<NegOp>(loc, r.div(r.mul(g, out), bv)));
        return success();
      })
      .Case([&](PowOp) -> LogicalResult {
        if (r.want(1)) // d(a^b)/db = a^b * log(a)
          sumB(r.mul(r.mul(g, out), b.create<LogOp>(loc, a)));
        if (!r.want(0))
          return success();
        Value exponent = bv;
        if (!isa<FloatType>(tensorType(bv).getElementType())) {
          // An integer exponent (ONNX allows one) is known at compile time
          // in every exported model: convert it to the base's float type.
          exponent = floatConstantLike(b, loc, bv, tensorType(a));
          if (!exponent)
            return r.unsupported("an integer exponent that is not a constant");
        }
        // d(a^b)/da = b * a^(b-1)
        Value bm1 =
            b.create<SubOp>(loc, exponent, scalarLike(b, loc, exponent, 1.0));
        Value d = r.mul(b.create<PowOp>(loc, a, bm1), exponent);
        sumA(r.mul(g, d));
        return success();
      })
      .Default([&](Operation *) { return r.unsupported("no rule"); });
}

static LogicalResult unaryRule(Rule &r) {
  Value g = r.rg[0], x = r.in(0), y = r.res(0);
  OpBuilder &b = r.b;
  Location loc = r.loc;
  Value d =
      TypeSwitch<Operation *, Value>(r.op)
          .Case([&](NegOp) { return b.create<NegOp>(loc, g); })
          .Case([&](ReluOp) { return b.create<ReluBackwardOp>(loc, g, y); })
          .Case([&](LeakyReluOp op) {
            return b.create<LeakyReluBackwardOp>(loc, g, x, op.getAlphaAttr());
          })
          .Case(
              [&](SigmoidOp) { return b.create<SigmoidBackwardOp>(loc, g, y); })
          .Case([&](TanhOp) { return b.create<TanhBackwardOp>(loc, g, y); })
          .Case([&](ErfOp) { return b.create<ErfBackwardOp>(loc, g, x); })
          .Case([&](GeluOp) { return b.create<GeluBackwardOp>(loc, g, x); })
          .Case([&](ExpOp) { return r.mul(g, y); })
          .Case([&](LogOp) { return r.div(g, x); })
          .Case([&](SqrtOp) { // 0.5 / sqrt(x)
            return r.div(r.mul(g, scalarLike(b, loc, g, 0.5)), y);
          })
          .Case([&](IdentityOp) { return g; })
          .Case([&](SoftmaxOp op) {
            return b.create<SoftmaxBackwardOp>(loc, g, y, op.getAxisAttr());
          })
          .Case([&](LogSoftmaxOp op) {
            return b.create<LogSoftmaxBackwardOp>(loc, g, y, op.getAxisAttr());
          })
          .Default([](Operation *) { return Value(); });
  if (!d)
    return r.unsupported("no rule");
  r.set(0, d);
  return success();
}

//===----------------------------------------------------------------------===//
// Linear algebra
//===----------------------------------------------------------------------===//

static LogicalResult gemmRule(Rule &r, GemmOp op) {
  Value g = r.rg[0];
  OpBuilder &b = r.b;
  bool ta = op.getTransA(), tb = op.getTransB();
  FloatAttr alpha = op.getAlphaAttr();
  FloatAttr one = b.getF32FloatAttr(1.0f);
  auto gemm = [&](Value x, Value y, bool tx, bool ty) -> Value {
    return b.create<GemmOp>(r.loc, x, y, Value(), alpha, one, b.getBoolAttr(tx),
                            b.getBoolAttr(ty));
  };
  // Y = alpha * op(A) op(B) + beta * C.
  if (r.want(0))
    r.set(0,
          ta ? gemm(op.getB(), g, tb, true) : gemm(g, op.getB(), false, !tb));
  if (r.want(1))
    r.set(1,
          tb ? gemm(g, op.getA(), true, ta) : gemm(op.getA(), g, !ta, false));
  if (op.getC() && r.want(2)) {
    Value gc = g;
    double beta = op.getBeta().convertToDouble();
    if (beta != 1.0)
      gc = r.mul(g, scalarLike(b, r.loc, g, beta));
    r.set(2, sumToType(b, r.loc, gc, op.getC().getType()));
  }
  return success();
}

static LogicalResult matmulRule(Rule &r, MatMulOp op) {
  OpBuilder &b = r.b;
  Location loc = r.loc;
  Value a = op.getLhs(), bv = op.getRhs(), g = r.rg[0];
  auto at = tensorType(a), bt = tensorType(bv);
  // A batch of rows times a matrix (PyTorch's Linear on a 3-D input): fold
  // the batch dims into the rows, as PyTorch does, so that the weight's
  // gradient is one gemm over all rows instead of a per-batch product summed
  // afterwards, and no transposed copy is made.
  if (at.getRank() >= 3 && bt.getRank() == 2) {
    int64_t k = at.getDimSize(at.getRank() - 1);
    int64_t m = bt.getDimSize(1);
    int64_t rows = at.getNumElements() / std::max<int64_t>(k, 1);
    Value af = reshapeTo(b, loc, a, {rows, k});
    Value gf = reshapeTo(b, loc, g, {rows, m});
    FloatAttr one = b.getF32FloatAttr(1.0f);
    auto gemm = [&](Value x, Value y, bool tx, bool ty) -> Value {
      return b.create<GemmOp>(loc, x, y, Value(), one, one, b.getBoolAttr(tx),
                              b.getBoolAttr(ty));
    };
    if (r.want(0))
      r.set(0, reshapeTo(b, loc, gemm(gf, bv, false, true), at.getShape()));
    if (r.want(1))
      r.set(1, gemm(af, gf, true, false));
    return success();
  }
  // Promote 1-D operands to matrices and put the removed dims back into g.
  Value a2 =
      at.getRank() == 1 ? reshapeTo(b, loc, a, {1, at.getDimSize(0)}) : a;
  Value b2 =
      bt.getRank() == 1 ? reshapeTo(b, loc, bv, {bt.getDimSize(0), 1}) : bv;
  SmallVector<int64_t> g2Shape(tensorType(g).getShape());
  if (at.getRank() == 1)
    g2Shape.insert(g2Shape.end() - (bt.getRank() == 1 ? 0 : 1), 1);
  if (bt.getRank() == 1)
    g2Shape.push_back(1);
  Value g2 = reshapeTo(b, loc, g, g2Shape);
  if (r.want(0)) {
    Value d = b.create<MatMulOp>(loc, g2, transposeLast2(b, loc, b2));
    d = sumToType(b, loc, d, a2.getType());
    r.set(0, reshapeTo(b, loc, d, at.getShape()));
  }
  if (r.want(1)) {
    Value d = b.create<MatMulOp>(loc, transposeLast2(b, loc, a2), g2);
    d = sumToType(b, loc, d, b2.getType());
    r.set(1, reshapeTo(b, loc, d, bt.getShape()));
  }
  return success();
}

//===----------------------------------------------------------------------===//
// Convolution, pooling, normalization, dropout
//===----------------------------------------------------------------------===//

/// Gradients of batch normalization with fixed statistics:
/// y = (x - mean) * scale / sqrt(var + eps) + bias.
static LogicalResult batchNormInferenceRule(Rule &r, BatchNormInferenceOp op) {
  if (r.want(3) || r.want(4))
    return r.unsupported("the running statistics are not trainable");
  OpBuilder &b = r.b;
  Location loc = r.loc;
  Value g = r.rg[0];
  auto x = tensorType(op.getInput());
  SmallVector<int64_t> chanShape(x.getRank(), 1);
  chanShape[1] = x.getDimSize(1);
  SmallVector<int64_t> axes{0};
  for (int64_t i = 2; i < x.getRank(); ++i)
    axes.push_back(i);
  Value eps =
      scalarLike(b, loc, op.getVar(), op.getEpsilon().convertToDouble());
  Value invStd = r.div(scalarLike(b, loc, op.getVar(), 1.0),
                       b.create<SqrtOp>(loc, r.add(op.getVar(), eps)));
  if (r.want(0)) {
    Value k = reshapeTo(b, loc, r.mul(op.getScale(), invStd), chanShape);
    r.set(0, r.mul(g, k));
  }
  if (r.want(1)) {
    Value centered = b.create<SubOp>(
        loc, op.getInput(), reshapeTo(b, loc, op.getMean(), chanShape));
    Value xhat = r.mul(centered, reshapeTo(b, loc, invStd, chanShape));
    r.set(1, b.create<ReduceSumOp>(loc, r.mul(g, xhat), axes, false));
  }
  if (r.want(2))
    r.set(2, b.create<ReduceSumOp>(loc, g, axes, false));
  return success();
}

static LogicalResult batchNormTrainingRule(Rule &r, BatchNormTrainingOp op) {
  if (failed(r.onlyFirstResult()))
    return failure();
  // The output normalises by the batch's own statistics: the running ones
  // (operands 3, 4) feed only the updated running statistics, which carry
  // no gradient, so they get none. (They can depend on a parameter: BiT's
  // weight standardisation runs F.batch_norm over a convolution's weight
  // without running statistics, which PyTorch exports as ReduceMeans of
  // that weight.)
  if (op.getRelu() || op.getClipMin())
    return r.unsupported("a fused ReLU or clip (tidal-fuse-epilogues runs "
                         "after autodiff)");
  auto bwd = r.b.create<BatchNormBackwardOp>(
      r.loc, r.rg[0], op.getInput(), op.getScale(), op.getBatchMean(),
      op.getBatchVar(), op.getEpsilonAttr());
  r.set(0, bwd.getGradInput());
  r.set(1, bwd.getGradScale());
  r.set(2, bwd.getGradBias());
  return success();
}

static LogicalResult layerNormRule(Rule &r, LayerNormOp op) {
  if (failed(r.onlyFirstResult()))
    return failure();
  auto bwd = r.b.create<LayerNormBackwardOp>(
      r.loc, r.rg[0], op.getInput(), op.getScale(), op.getMean(),
      op.getInvStdDev(), op.getAxisAttr());
  r.set(0, bwd.getGradInput());
  r.set(1, bwd.getGradScale());
  if (op.getBias() && r.want(2))
    r.set(2, sumToType(r.b, r.loc, bwd.getGradBias(), op.getBias().getType()));
  return success();
}

static LogicalResult dropoutRule(Rule &r, DropoutOp op) {
  if (failed(r.onlyFirstResult()))
    return failure();
  if (!op.getTraining() || op.getRatio().isZero()) {
    r.set(0, r.rg[0]);
    return success();
  }
  r.set(0, r.b.create<DropoutBackwardOp>(r.loc, r.rg[0], op.getMask(),
                                         op.getRatioAttr()));
  return success();
}

//===----------------------------------------------------------------------===//
// Losses and reductions
//===----------------------------------------------------------------------===//

static LogicalResult lossRule(Rule &r) {
  OpBuilder &b = r.b;
  Location loc = r.loc;
  if (r.want(2))
    return r.unsupported("class weights are not trainable");
  if (auto op = dyn_cast<SoftmaxCrossEntropyLossOp>(r.op)) {
    Value d;
    if (r.rg[0])
      d = b.create<SoftmaxCrossEntropyLossBackwardOp>(
          loc, r.rg[0], op.getLogProb(), op.getLabels(), op.getWeights(),
          op.getReductionAttr(), op.getIgnoreIndexAttr());
    if (r.rg[1]) { // log_prob = log_softmax(scores, axis 1)
      Value l = b.create<LogSoftmaxBackwardOp>(loc, r.rg[1], op.getLogProb(),
                                               b.getI64IntegerAttr(1));
      d = d ? r.add(d, l) : l;
    }
    r.set(0, d);
    return success();
  }
  auto op = cast<NllLossOp>(r.op);
  r.set(0, b.create<NllLossBackwardOp>(
               loc, op.getInput().getType(), r.rg[0], op.getTarget(),
               op.getWeight(), op.getReductionAttr(), op.getIgnoreIndexAttr()));
  return success();
}

//===----------------------------------------------------------------------===//
// Data movement
//===----------------------------------------------------------------------===//

static LogicalResult concatRule(Rule &r, ConcatOp op) {
  int64_t axis = op.getAxis(), offset = 0;
  auto gt = tensorType(r.rg[0]);
  for (unsigned i = 0; i < op->getNumOperands(); ++i) {
    int64_t size = tensorType(op.getInputs()[i]).getDimSize(axis);
    if (r.want(i)) {
      SmallVector<int64_t> starts(gt.getRank(), 0), ends(gt.getShape()),
          steps(gt.getRank(), 1);
      starts[axis] = offset;
      ends[axis] = offset + size;
      r.set(i, r.b.create<SliceOp>(r.loc, r.rg[0], starts, ends, steps));
    }
    offset += size;
  }
  return success();
}

static LogicalResult splitRule(Rule &r, SplitOp op) {
  SmallVector<Value> parts;
  for (unsigned i = 0; i < op->getNumResults(); ++i)
    parts.push_back(
        r.rg[i] ? r.rg[i]
                : splatConstant(r.b, r.loc, op->getResult(i).getType(), 0.0));
  r.set(0, r.b.create<ConcatOp>(r.loc, parts, op.getAxisAttr()));
  return success();
}

static LogicalResult shapeRule(Rule &r) {
  OpBuilder &b = r.b;
  Location loc = r.loc;
  Value g = r.rg[0], x = r.in(0);
  Value d = TypeSwitch<Operation *, Value>(r.op)
                .Case<ReshapeOp, FlattenOp, SqueezeOp, UnsqueezeOp>([&](auto) {
                  return reshapeTo(b, loc, g, tensorType(x).getShape());
                })
                .Case([&](TransposeOp op) {
                  SmallVector<int64_t> inverse(op.getPerm().size());
                  for (auto [i, p] : llvm::enumerate(op.getPerm()))
                    inverse[p] = i;
                  return b.create<TransposeOp>(loc, g, inverse);
                })
                .Case([&](SliceOp op) {
                  return b.create<SliceBackwardOp>(
                      loc, x.getType(), g, op.getStartsAttr(), op.getEndsAttr(),
                      op.getStepsAttr());
                })
                .Case([&](GatherOp op) {
                  return b.create<GatherBackwardOp>(
                      loc, x.getType(), paddingMasked(b, loc, op, g),
                      op.getIndices(), op.getAxisAttr());
                })
                .Case([&](BroadcastToOp) {
                  return sumToType(b, loc, g, x.getType());
                })
                .Default([](Operation *) { return Value(); });
  if (!d)
    return r.unsupported("no rule");
  r.set(0, d);
  return success();
}

//===----------------------------------------------------------------------===//
// Dispatch
//===----------------------------------------------------------------------===//

LogicalResult tidal::buildOperandGradients(OpBuilder &b, Operation *op,
                                           ArrayRef<Value> resultGrads,
                                           ArrayRef<bool> wanted,
                                           SmallVectorImpl<Value> &out) {
  out.assign(op->getNumOperands(), Value());
  Rule r{b, op, resultGrads, wanted, out, op->getLoc()};
  // Every rule but the multi-result ones reads the first result's gradient.
  bool multi = isa<SplitOp, SoftmaxCrossEntropyLossOp, BatchNormTrainingOp,
                   LayerNormOp, DropoutOp>(op);
  if (!multi && failed(r.onlyFirstResult()))
    return failure();
  if (isLogicOp(op)) {
    buildLogicGradients(b, op, resultGrads[0], wanted, out);
    return success();
  }
  if (isConvOp(op)) {
    buildConvGradients(b, op, resultGrads[0], wanted, out);
    return success();
  }
  if (isIndexingOp(op)) {
    buildIndexingGradients(b, op, resultGrads[0], wanted, out);
    return success();
  }
  if (isReduceFamilyOp(op)) {
    buildReduceGradients(b, op, resultGrads[0], wanted, out);
    return success();
  }
  if (isActivationOp(op)) {
    if (r.want(0))
      r.set(0, buildActivationGradient(b, op, resultGrads[0]));
    return success();
  }
  return TypeSwitch<Operation *, LogicalResult>(op)
      .Case<AddOp, SubOp, MulOp, DivOp, PowOp>(
          [&](auto) { return binaryRule(r); })
      .Case<NegOp, ReluOp, LeakyReluOp, SigmoidOp, TanhOp, ErfOp, GeluOp, ExpOp,
            LogOp, SqrtOp, IdentityOp, SoftmaxOp, LogSoftmaxOp>(
          [&](auto) { return unaryRule(r); })
      .Case([&](GemmOp o) { return gemmRule(r, o); })
      .Case([&](MatMulOp o) { return matmulRule(r, o); })
      .Case([&](MaxPoolOp o) {
        r.set(0,
              b.create<MaxPoolBackwardOp>(
                  r.loc, o.getInput().getType(), resultGrads[0], o.getInput(),
                  o.getKernelShapeAttr(), o.getStridesAttr(), o.getPadsAttr(),
                  o.getDilationsAttr(), o.getCeilModeAttr()));
        return success();
      })
      .Case([&](PadOp o) {
        r.set(0, b.create<PadBackwardOp>(r.loc, o.getInput().getType(),
                                         resultGrads[0], o.getPadsAttr(),
                                         o.getModeAttr()));
        return success();
      })
      .Case([&](AveragePoolOp o) {
        r.set(0,
              b.create<AveragePoolBackwardOp>(
                  r.loc, o.getInput().getType(), resultGrads[0],
                  o.getKernelShapeAttr(), o.getStridesAttr(), o.getPadsAttr(),
                  o.getCeilModeAttr(), o.getCountIncludePadAttr()));
        return success();
      })
      .Case([&](GlobalAveragePoolOp o) {
        auto x = tensorType(o.getInput());
        int64_t count = numElements(x.getShape().drop_front(2));
        Value d = b.create<BroadcastToOp>(r.loc, x, resultGrads[0]);
        r.set(0, r.mul(d, scalarLike(b, r.loc, d, 1.0 / double(count))));
        return success();
      })
      .Case(
          [&](BatchNormInferenceOp o) { return batchNormInferenceRule(r, o); })
      .Case([&](BatchNormTrainingOp o) { return batchNormTrainingRule(r, o); })
      .Case([&](LayerNormOp o) { return layerNormRule(r, o); })
      .Case([&](DropoutOp o) { return dropoutRule(r, o); })
      .Case<SoftmaxCrossEntropyLossOp, NllLossOp>(
          [&](auto) { return lossRule(r); })
      .Case([&](ConcatOp o) { return concatRule(r, o); })
      .Case([&](SplitOp o) { return splitRule(r, o); })
      .Case<ReshapeOp, FlattenOp, SqueezeOp, UnsqueezeOp, TransposeOp, SliceOp,
            GatherOp, BroadcastToOp>([&](auto) { return shapeRule(r); })
      .Default([&](Operation *) {
        return r.unsupported("the op has no gradient rule");
      });
}
