//===- RandomConverters.cpp - ONNX random ops -----------------------------===//
//
// RandomNormal[Like] and RandomUniform[Like] become tidal.random_normal and
// tidal.random_uniform of the static result shape (a Like node's input only
// gives the shape, and the element type when `dtype` is absent); Bernoulli
// is a uniform draw compared with its probabilities (u < p, then cast to
// the output type), as PyTorch itself exports torch.bernoulli. Draws are
// float32 or float64. ONNX's float `seed` attribute becomes the op's int64
// `seed` (its bit pattern, so that distinct seeds stay distinct); without
// one the run's --seed applies.
//
//===----------------------------------------------------------------------===//

#include "ConverterSupport.h"

#include <cstring>

using namespace mlir;
using namespace mlir::tidal;
using namespace mlir::tidal::importer;

namespace {

/// The float type of a random node's result: `dtype` when given, else the
/// Like input's element type (`like` null: float32, ONNX's default).
FailureOr<FloatType> drawType(Node &n, RankedTensorType like) {
  auto isDraw = [](Type t) { return t && (t.isF32() || t.isF64()); };
  if (const auto *dtype = n.attr("dtype")) {
    Type elt = elementTypeFor(n.g.ctx, dtype->i());
    if (!isDraw(elt))
      return n.fail("dtype " + onnxTypeName(dtype->i()) +
                    " is not supported: tidal draws float32 and float64");
    return cast<FloatType>(elt);
  }
  if (!like)
    return FloatType(Float32Type::get(n.g.ctx));
  if (!isDraw(like.getElementType()))
    return n.fail("input 0 is " + typeToString(like) +
                  " and no dtype is given: tidal draws float32 and float64 "
                  "(set dtype)");
  return cast<FloatType>(like.getElementType());
}

/// The op's seed attribute, when the node has one.
void addSeed(Node &n, llvm::SmallVectorImpl<NamedAttribute> &attrs) {
  const auto *seed = n.attr("seed");
  if (!seed)
    return;
  float f = seed->f();
  uint32_t bits;
  std::memcpy(&bits, &f, sizeof bits);
  attrs.push_back(n.named("seed", n.b().getI64IntegerAttr(bits)));
}

/// The result shape: the `shape` attribute, or the Like input's shape.
FailureOr<llvm::SmallVector<int64_t>> drawShape(Node &n, bool like) {
  if (like) {
    RankedTensorType t = n.type(0);
    if (!t || !t.hasStaticShape())
      return n.fail("input 0 must have a static shape");
    return llvm::SmallVector<int64_t>(t.getShape());
  }
  auto shape = n.ints("shape");
  if (!shape)
    return n.fail("attribute 'shape' is required");
  for (int64_t d : *shape)
    if (d < 0)
      return n.fail("attribute 'shape' has a negative dimension " +
                    llvm::Twine(d));
  return *shape;
}

LogicalResult convertRandom(Node &n, bool normal, bool like) {
  if (like && !n.has(0))
    return n.fail("input 0 is required");
  auto shape = drawShape(n, like);
  if (failed(shape))
    return failure();
  auto elt = drawType(n, like ? n.type(0) : RankedTensorType());
  if (failed(elt))
    return failure();
  llvm::SmallVector<NamedAttribute> attrs;
  OpBuilder &b = n.b();
  if (normal) {
    attrs.push_back(n.named("mean", b.getF32FloatAttr(n.f("mean", 0.0f))));
    attrs.push_back(n.named("scale", b.getF32FloatAttr(n.f("scale", 1.0f))));
  } else {
    attrs.push_back(n.named("low", b.getF32FloatAttr(n.f("low", 0.0f))));
    attrs.push_back(n.named("high", b.getF32FloatAttr(n.f("high", 1.0f))));
  }
  addSeed(n, attrs);
  auto type = RankedTensorType::get(*shape, *elt);
  Operation *op = n.g.create(normal ? RandomNormalOp::getOperationName()
                                    : RandomUniformOp::getOperationName(),
                             {}, attrs, 1, n.error, {type});
  if (!op)
    return failure();
  n.g.bindOutputs(n.proto, op->getResults());
  return success();
}

LogicalResult convertBernoulli(Node &n) {
  auto p = n.in(0);
  if (failed(p))
    return failure();
  RankedTensorType pt = n.type(0);
  if (!pt || !pt.hasStaticShape() ||
      !(pt.getElementType().isF32() || pt.getElementType().isF64()))
    return n.fail("input 0 (the probabilities) must be a float32 or float64 "
                  "tensor of static shape");
  Type out = pt.getElementType();
  if (const auto *dtype = n.attr("dtype")) {
    out = elementTypeFor(n.g.ctx, dtype->i());
    if (!out)
      return n.fail("dtype " + onnxTypeName(dtype->i()) + " is not supported");
  }
  llvm::SmallVector<NamedAttribute> attrs;
  addSeed(n, attrs);
  Operation *u = n.g.create(RandomUniformOp::getOperationName(), {}, attrs, 1,
                            n.error, {pt});
  if (!u)
    return failure();
  Composer c{n};
  Value hit = c.binary(LessOp::getOperationName(), u->getResult(0), *p);
  if (!c.ok)
    return failure();
  if (out.isInteger(1))
    return c.bind(hit);
  auto cast = n.b().create<CastOp>(
      n.g.loc, RankedTensorType::get(pt.getShape(), out), hit);
  n.g.bindOutputs(n.proto, cast->getResults());
  return success();
}

} // namespace

void importer::addRandomConverters(llvm::StringMap<Converter> &map) {
  map["RandomNormal"] = [](Node &n) { return convertRandom(n, true, false); };
  map["RandomNormalLike"] = [](Node &n) {
    return convertRandom(n, true, true);
  };
  map["RandomUniform"] = [](Node &n) { return convertRandom(n, false, false); };
  map["RandomUniformLike"] = [](Node &n) {
    return convertRandom(n, false, true);
  };
  map["Bernoulli"] = convertBernoulli;
}
