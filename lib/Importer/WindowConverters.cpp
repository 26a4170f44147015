//===- WindowConverters.cpp - window sums through average_pool ------------===//
//
// ONNX operators that sum a power of the input over a window, built from
// tidal ops (kernels and gradients come with them):
//   LpPool        (sum over the window of |x|^p)^(1/p): |x|^p (x*x for
//                 p = 2), average_pool counting the zero padding, times
//                 the window size, then ^(1/p) (sqrt for p = 2)
//   GlobalLpPool  the same over all spatial dims: reduce_sum, ^(1/p)
//   LRN           x / (bias + alpha / size * sum of x^2 over `size`
//                 neighbouring channels)^beta; the channel window is an
//                 average_pool over x^2 viewed as [N, 1, C, rest] with a
//                 [size, 1] kernel and ONNX's floor/ceil((size-1)/2) pads
//                 (ONNX model-zoo CNNs: AlexNet, GoogLeNet, CaffeNet)
// PyTorch decomposes nn.LPPool and nn.LocalResponseNorm itself; these come
// from other exporters.
//
//===----------------------------------------------------------------------===//

#include "ConverterSupport.h"

using namespace mlir;
using namespace mlir::tidal;
using namespace mlir::tidal::importer;

namespace {

/// |x|^p, as x * x for p = 2 and |x| for p = 1.
Value powerOfAbs(Composer &b, Value x, Type elt, int64_t p) {
  if (p == 2)
    return b.binary(MulOp::getOperationName(), x, x);
  Value a = b.op(AbsOp::getOperationName(), {x});
  if (p == 1)
    return a;
  return b.binary(PowOp::getOperationName(), a, b.splat(elt, {}, double(p)));
}

/// s^(1/p), as sqrt for p = 2 and s for p = 1.
Value rootOf(Composer &b, Value s, Type elt, int64_t p) {
  if (p == 1)
    return s;
  if (p == 2)
    return b.op(SqrtOp::getOperationName(), {s});
  return b.binary(PowOp::getOperationName(), s, b.splat(elt, {}, 1.0 / p));
}

/// Input 0, a float tensor [N, C, spatial...].
FailureOr<Value> spatialInput(Node &n) {
  auto x = n.in(0);
  if (failed(x))
    return failure();
  auto type = n.type(0);
  if (!isa<FloatType>(type.getElementType()) || type.getRank() < 3)
    return n.fail("needs a float input of rank 3 or more, got " +
                  typeToString(type));
  return x;
}

FailureOr<int64_t> exponent(Node &n) {
  int64_t p = n.i("p", 2);
  if (p < 1)
    return n.fail("p = " + llvm::Twine(p) + " is not a positive integer");
  return p;
}

LogicalResult convertLpPool(Node &n) {
  auto x = n.in(0);
  if (failed(x))
    return failure();
  auto type = n.type(0);
  Type elt = type.getElementType();
  if (!isa<FloatType>(elt))
    return n.fail("needs a float input, got " + typeToString(type));
  auto p = exponent(n);
  if (failed(p))
    return failure();
  auto kernel = n.ints("kernel_shape");
  if (!kernel)
    return n.fail("attribute 'kernel_shape' is required");
  llvm::SmallVector<int64_t> strides, dilations, pads;
  if (failed(windowAttrs(n, type, *kernel, strides, dilations, pads)))
    return failure();
  if (llvm::any_of(dilations, [](int64_t d) { return d != 1; }))
    return n.fail("dilations are not supported for LpPool");
  if (n.i("ceil_mode", 0))
    return n.fail("ceil_mode = 1 is not supported for LpPool");
  int64_t window = 1;
  for (int64_t k : *kernel)
    window *= k;
  Composer b{n};
  Value powered = powerOfAbs(b, *x, elt, *p);
  Value mean = b.op(AveragePoolOp::getOperationName(), {powered},
                    {n.arr("kernel_shape", *kernel), n.arr("strides", strides),
                     n.arr("pads", pads),
                     n.named("count_include_pad", n.b().getBoolAttr(1))});
  Value sum = b.binary(MulOp::getOperationName(), mean,
                       b.splat(elt, {}, double(window)));
  return b.bind(rootOf(b, sum, elt, *p));
}

LogicalResult convertGlobalLpPool(Node &n) {
  auto x = spatialInput(n);
  if (failed(x))
    return failure();
  auto type = n.type(0);
  Type elt = type.getElementType();
  auto p = exponent(n);
  if (failed(p))
    return failure();
  llvm::SmallVector<int64_t> axes;
  for (int64_t d = 2; d < type.getRank(); ++d)
    axes.push_back(d);
  Composer b{n};
  Value sum =
      b.op(ReduceSumOp::getOperationName(), {powerOfAbs(b, *x, elt, *p)},
           {n.arr("axes", axes), n.named("keepdims", n.b().getBoolAttr(true))});
  return b.bind(rootOf(b, sum, elt, *p));
}

LogicalResult convertLRN(Node &n) {
  auto x = spatialInput(n);
  if (failed(x))
    return failure();
  auto type = n.type(0);
  Type elt = type.getElementType();
  if (!n.attr("size"))
    return n.fail("attribute 'size' is required");
  const int64_t size = n.i("size", 1);
  if (size < 1)
    return n.fail("size = " + llvm::Twine(size) + " is not positive");
  const double alpha = n.f("alpha", 1e-4f), beta = n.f("beta", 0.75f),
               bias = n.f("bias", 1.0f);
  const int64_t batch = type.getDimSize(0), channels = type.getDimSize(1);
  const int64_t rest = type.getNumElements() / (batch * channels);
  Composer b{n};
  Value squared = b.binary(MulOp::getOperationName(), *x, *x);
  Value view = b.reshape(squared, {batch, 1, channels, rest});
  // Channels c - floor((size-1)/2) .. c + ceil((size-1)/2), zeros outside.
  const int64_t before = (size - 1) / 2, after = size - 1 - before;
  Value mean = b.op(AveragePoolOp::getOperationName(), {view},
                    {n.arr("kernel_shape", {size, 1}), n.arr("strides", {1, 1}),
                     n.arr("pads", {before, 0, after, 0}),
                     n.named("count_include_pad", n.b().getBoolAttr(1))});
  // bias + alpha / size * sum = bias + alpha * mean.
  Value scaled =
      b.binary(MulOp::getOperationName(), b.reshape(mean, type.getShape()),
               b.splat(elt, {}, alpha));
  Value base =
      b.binary(AddOp::getOperationName(), scaled, b.splat(elt, {}, bias));
  Value denom =
      b.binary(PowOp::getOperationName(), base, b.splat(elt, {}, beta));
  return b.bind(b.binary(DivOp::getOperationName(), *x, denom));
}

} // namespace

void importer::addWindowConverters(llvm::StringMap<Converter> &map) {
  map["LpPool"] = convertLpPool;
  map["GlobalLpPool"] = convertGlobalLpPool;
  map["LRN"] = convertLRN;
}
