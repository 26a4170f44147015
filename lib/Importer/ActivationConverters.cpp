//===- ActivationConverters.cpp - activations and element-wise math -------===//
//
// ONNX Clip, HardSigmoid, HardSwish, Elu, Selu, Celu, Softplus, Softsign,
// Mish, Abs, Reciprocal, Sin, Cos, Tan, Asin, Acos, Atan, Sinh, Cosh, Asinh,
// Acosh, Atanh, Sign, Floor, Ceil and Round to their tidal
// ops (TidalActivationOps.td), with ONNX's attribute defaults made explicit.
//
//===----------------------------------------------------------------------===//

#include "ConverterSupport.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace mlir::tidal;
using namespace mlir::tidal::importer;

namespace {

/// A scalar bound of Clip: input `idx` (opset 11+) or attribute `name`
/// (opset 6), `def` when absent.
FailureOr<float> clipBound(Node &n, int idx, llvm::StringRef name, float def) {
  if (n.g.opset < 11)
    return n.f(name, def);
  if (!n.has(idx))
    return def;
  DenseElementsAttr c = n.g.constInput(n.proto, idx);
  if (!c || c.getNumElements() != 1)
    return n.fail("input '" + name + "' ('" + n.proto.input(idx) +
                  "') must be a scalar known at compile time");
  return float(floatValues(c)[0]);
}

LogicalResult convertClip(Node &n) {
  auto x = n.in(0);
  if (failed(x))
    return failure();
  if (auto it = dyn_cast<IntegerType>(n.type(0).getElementType())) {
    // Integers (x.clamp(min=1) on lengths or indices): max with `min`, then
    // min with `max`, the bounds constant or not; no gradient to pass.
    if (it.getWidth() == 1)
      return n.fail("Clip of a bool tensor is not supported");
    Composer b{n};
    Value v = *x;
    for (int idx : {1, 2}) {
      if (!n.has(idx))
        continue;
      auto bound = n.in(idx);
      if (failed(bound))
        return failure();
      v = b.binary(idx == 1 ? MaxOp::getOperationName()
                            : MinOp::getOperationName(),
                   v, *bound);
    }
    if (v == *x)
      v = b.op(IdentityOp::getOperationName(), {v});
    return b.bind(v);
  }
  const float inf = std::numeric_limits<float>::infinity();
  auto lo = clipBound(n, 1, "min", -inf);
  if (failed(lo))
    return failure();
  auto hi = clipBound(n, 2, "max", inf);
  if (failed(hi))
    return failure();
  return n.emit(ClipOp::getOperationName(), {*x},
                {n.named("min", n.b().getF32FloatAttr(*lo)),
                 n.named("max", n.b().getF32FloatAttr(*hi))},
                1);
}

/// A unary op with float attributes (name, ONNX default) in ODS order.
Converter withFloats(llvm::StringRef opName,
                     std::vector<std::pair<llvm::StringRef, float>> attrs) {
  return [opName, attrs](Node &n) -> LogicalResult {
    auto x = n.in(0);
    if (failed(x))
      return failure();
    llvm::SmallVector<NamedAttribute> named;
    for (const auto &[name, def] : attrs)
      named.push_back(n.named(name, n.b().getF32FloatAttr(n.f(name, def))));
    return n.emit(opName, {*x}, named, 1);
  };
}

} // namespace

void importer::addActivationConverters(llvm::StringMap<Converter> &map) {
  auto unary = [](llvm::StringRef name) -> Converter {
    return [name](Node &n) { return simple(n, name, 1); };
  };
  map["Clip"] = convertClip;
  map["HardSigmoid"] = withFloats(HardSigmoidOp::getOperationName(),
                                  {{"alpha", 0.2f}, {"beta", 0.5f}});
  map["HardSwish"] = unary(HardSwishOp::getOperationName());
  map["Elu"] = withFloats(EluOp::getOperationName(), {{"alpha", 1.0f}});
  map["Selu"] = withFloats(SeluOp::getOperationName(),
                           {{"alpha", 1.67326319217681884765625f},
                            {"gamma", 1.05070102214813232421875f}});
  map["Celu"] = withFloats(CeluOp::getOperationName(), {{"alpha", 1.0f}});
  map["Softplus"] = unary(SoftplusOp::getOperationName());
  map["Softsign"] = unary(SoftsignOp::getOperationName());
  map["Mish"] = unary(MishOp::getOperationName());
  map["Abs"] = unary(AbsOp::getOperationName());
  map["Reciprocal"] = unary(ReciprocalOp::getOperationName());
  map["Sin"] = unary(SinOp::getOperationName());
  map["Cos"] = unary(CosOp::getOperationName());
  map["Tan"] = unary(TanOp::getOperationName());
  map["Asin"] = unary(AsinOp::getOperationName());
  map["Acos"] = unary(AcosOp::getOperationName());
  map["Atan"] = unary(AtanOp::getOperationName());
  map["Sinh"] = unary(SinhOp::getOperationName());
  map["Cosh"] = unary(CoshOp::getOperationName());
  map["Asinh"] = unary(AsinhOp::getOperationName());
  map["Acosh"] = unary(AcoshOp::getOperationName());
  map["Atanh"] = unary(AtanhOp::getOperationName());
  map["Sign"] = unary(SignOp::getOperationName());
  map["Floor"] = unary(FloorOp::getOperationName());
  map["Ceil"] = unary(CeilOp::getOperationName());
  map["Round"] = unary(RoundOp::getOperationName());
}
