//===- NormalizationConverters.cpp - Lp, mean-variance, hard max ----------===//
//
// ONNX normalizations PyTorch users meet in older exports and in the model
// zoo, as compositions of tidal ops (their gradients and kernels come
// with them):
//   LpNormalization (p 1 or 2)   x / reduce_sum(|x|) or
//                                x / sqrt(reduce_sum(x^2)) along `axis`,
//                                kept (no epsilon, as ONNX)
//   MeanVarianceNormalization    (x - E[x]) / (sqrt(E[x^2] - E[x]^2) + 1e-9)
//                                over `axes` (default 0, 2, 3), as ONNX's
//                                function body
//   Hardmax                      1 where argmax along `axis` (the first
//                                maximum), 0 elsewhere: equal(argmax, range)
//                                cast to x's type; no gradient
//
//===----------------------------------------------------------------------===//

#include "ConverterSupport.h"

using namespace mlir;
using namespace mlir::tidal;
using namespace mlir::tidal::importer;

namespace {

LogicalResult convertLpNormalization(Node &n) {
  auto x = n.floatIn(0);
  if (failed(x))
    return failure();
  RankedTensorType t = n.type(0);
  auto axis = n.axis(n.i("axis", -1), t.getRank());
  if (failed(axis))
    return failure();
  int64_t p = n.i("p", 2);
  if (p != 1 && p != 2)
    return n.fail("p must be 1 or 2, got " + llvm::Twine(p));
  Composer b{n};
  Value v = p == 1 ? b.op(AbsOp::getOperationName(), {*x})
                   : b.binary(MulOp::getOperationName(), *x, *x);
  Value norm = b.op(
      ReduceSumOp::getOperationName(), {v},
      {n.arr("axes", {*axis}), n.named("keepdims", n.b().getBoolAttr(true))});
  if (p == 2)
    norm = b.op(SqrtOp::getOperationName(), {norm});
  return b.bind(b.binary(DivOp::getOperationName(), *x, norm));
}

LogicalResult convertMeanVarianceNormalization(Node &n) {
  auto x = n.floatIn(0);
  if (failed(x))
    return failure();
  RankedTensorType t = n.type(0);
  llvm::SmallVector<int64_t> raw =
      n.ints("axes").value_or(llvm::SmallVector<int64_t>{0, 2, 3});
  auto axes = n.axes(raw, t.getRank());
  if (failed(axes))
    return failure();
  Composer b{n};
  Type elt = t.getElementType();
  auto mean = [&](Value v) {
    return b.op(
        ReduceMeanOp::getOperationName(), {v},
        {n.arr("axes", *axes), n.named("keepdims", n.b().getBoolAttr(true))});
  };
  Value m = mean(*x);
  Value ex2 = mean(b.binary(MulOp::getOperationName(), *x, *x));
  Value var = b.binary(SubOp::getOperationName(), ex2,
                       b.binary(MulOp::getOperationName(), m, m));
  Value std =
      b.binary(AddOp::getOperationName(),
               b.op(SqrtOp::getOperationName(), {var}), b.splat(elt, {}, 1e-9));
  return b.bind(b.binary(DivOp::getOperationName(),
                         b.binary(SubOp::getOperationName(), *x, m), std));
}

LogicalResult convertHardmax(Node &n) {
  auto x = n.in(0);
  if (failed(x))
    return failure();
  RankedTensorType t = n.type(0);
  if (!t || !t.hasStaticShape() || !isa<FloatType>(t.getElementType()))
    return n.fail("input must be a float tensor of static shape");
  auto axis = n.axis(n.i("axis", -1), t.getRank());
  if (failed(axis))
    return failure();
  Composer b{n};
  Value idx = b.op(ArgMaxOp::getOperationName(), {*x},
                   {n.named("axis", n.b().getI64IntegerAttr(*axis)),
                    n.named("keepdims", n.b().getBoolAttr(true)),
                    n.named("select_last_index", n.b().getBoolAttr(false))});
  const int64_t d = t.getDimSize(*axis);
  llvm::SmallVector<int64_t> shape(t.getRank(), 1), range(d);
  shape[*axis] = d;
  for (int64_t k = 0; k < d; ++k)
    range[k] = k;
  auto rangeType = RankedTensorType::get(shape, n.b().getI64Type());
  Value r =
      b.op(ConstantOp::getOperationName(), {},
           {n.named("value",
                    DenseElementsAttr::get(rangeType, llvm::ArrayRef(range)))});
  Value hit = b.binary(EqualOp::getOperationName(), idx, r);
  if (!b.ok)
    return failure();
  auto cast = n.b().create<CastOp>(n.g.loc, t, hit);
  n.g.bindOutputs(n.proto, cast->getResults());
  return success();
}

} // namespace

void importer::addNormalizationConverters(llvm::StringMap<Converter> &map) {
  map["LpNormalization"] = convertLpNormalization;
  map["MeanVarianceNormalization"] = convertMeanVarianceNormalization;
  map["Hardmax"] = convertHardmax;
}
