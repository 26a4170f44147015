//===- RearrangeConverters.cpp - more ONNX ops as tidal compositions ------===//
//
//   DepthToSpace   reshape, transpose, reshape (mode DCR, ONNX's default,
//                  and CRD, PyTorch's nn.PixelShuffle)
//   SpaceToDepth   the inverse (nn.PixelUnshuffle's layout is CRD's)
//   GlobalMaxPool  max_pool with the whole spatial extent as its window
//                  (nn.AdaptiveMaxPool2d(1)); the gradient goes to the first
//                  maximum, as PyTorch's does
//   Shrink         where(x < -lambd, x + bias, where(x > lambd, x - bias, 0))
//                  (nn.Hardshrink: bias 0; nn.Softshrink: bias lambd)
//   ThresholdedRelu where(x > alpha, x, 0)
// Each brings the kernels and gradients of the ops it is built from.
//
//===----------------------------------------------------------------------===//

#include "ConverterSupport.h"

using namespace mlir;
using namespace mlir::tidal;
using namespace mlir::tidal::importer;

namespace {

LogicalResult convertDepthToSpace(Node &n, bool toSpace) {
  auto x = n.in(0);
  if (failed(x))
    return failure();
  auto t = n.type(0);
  const int64_t b = n.i("blocksize", 0);
  if (t.getRank() != 4)
    return n.fail("needs an input [N, C, H, W], got " + typeToString(t));
  if (b <= 0)
    return n.fail("attribute 'blocksize' must be positive");
  const int64_t N = t.getDimSize(0), C = t.getDimSize(1), H = t.getDimSize(2),
                W = t.getDimSize(3);
  Composer c{n};
  auto rearrange = [&](llvm::ArrayRef<int64_t> split,
                       llvm::ArrayRef<int64_t> perm,
                       llvm::ArrayRef<int64_t> out) {
    Value v = c.reshape(*x, split);
    v = c.op(TransposeOp::getOperationName(), {v}, {n.arr("perm", perm)});
    return c.bind(c.reshape(v, out));
  };
  if (toSpace) {
    if (C % (b * b))
      return n.fail(llvm::Twine(C) + " channels do not split into blocks of " +
                    llvm::Twine(b) + "x" + llvm::Twine(b));
    const int64_t c2 = C / (b * b);
    if (n.s("mode", "DCR") == "CRD")
      return rearrange({N, c2, b, b, H, W}, {0, 1, 4, 2, 5, 3},
                       {N, c2, H * b, W * b});
    if (n.s("mode", "DCR") != "DCR")
      return n.fail("mode '" + n.s("mode", "DCR") + "' is not valid");
    return rearrange({N, b, b, c2, H, W}, {0, 3, 4, 1, 5, 2},
                     {N, c2, H * b, W * b});
  }
  if (H % b || W % b)
    return n.fail("spatial size " + llvm::Twine(H) + "x" + llvm::Twine(W) +
                  " is not a multiple of the block size " + llvm::Twine(b));
  return rearrange({N, C, H / b, b, W / b, b}, {0, 3, 5, 1, 2, 4},
                   {N, C * b * b, H / b, W / b});
}

LogicalResult convertGlobalMaxPool(Node &n) {
  auto x = n.in(0);
  if (failed(x))
    return failure();
  auto t = n.type(0);
  if (t.getRank() < 3)
    return n.fail("needs an input [N, C, D1, ...], got " + typeToString(t));
  llvm::SmallVector<int64_t> kernel(t.getShape().drop_front(2));
  llvm::SmallVector<int64_t> ones(kernel.size(), 1), pads(2 * kernel.size(), 0);
  return n.emit(MaxPoolOp::getOperationName(), {*x},
                {n.arr("kernel_shape", kernel), n.arr("strides", ones),
                 n.arr("pads", pads), n.arr("dilations", ones),
                 n.named("ceil_mode", n.b().getBoolAttr(false))},
                1);
}

LogicalResult convertShrink(Node &n) {
  auto x = n.in(0);
  if (failed(x))
    return failure();
  Type elt = n.type(0).getElementType();
  if (!isa<FloatType>(elt))
    return n.fail("needs a float input, got " + typeToString(n.type(0)));
  const double lambd = n.f("lambd", 0.5f), bias = n.f("bias", 0.0f);
  Composer c{n};
  Value low =
      c.binary(LessOp::getOperationName(), *x, c.splat(elt, {}, -lambd));
  Value high =
      c.binary(GreaterOp::getOperationName(), *x, c.splat(elt, {}, lambd));
  Value up = c.binary(AddOp::getOperationName(), *x, c.splat(elt, {}, bias));
  Value down = c.binary(SubOp::getOperationName(), *x, c.splat(elt, {}, bias));
  Value inner =
      c.op(WhereOp::getOperationName(), {high, down, c.splat(elt, {}, 0.0)});
  return c.bind(c.op(WhereOp::getOperationName(), {low, up, inner}));
}

LogicalResult convertThresholdedRelu(Node &n) {
  auto x = n.in(0);
  if (failed(x))
    return failure();
  Type elt = n.type(0).getElementType();
  if (!isa<FloatType>(elt))
    return n.fail("needs a float input, got " + typeToString(n.type(0)));
  Composer c{n};
  Value above = c.binary(GreaterOp::getOperationName(), *x,
                         c.splat(elt, {}, n.f("alpha", 1.0f)));
  return c.bind(
      c.op(WhereOp::getOperationName(), {above, *x, c.splat(elt, {}, 0.0)}));
}

} // namespace

void importer::addRearrangeConverters(llvm::StringMap<Converter> &map) {
  map["DepthToSpace"] = [](Node &n) { return convertDepthToSpace(n, true); };
  map["SpaceToDepth"] = [](Node &n) { return convertDepthToSpace(n, false); };
  map["GlobalMaxPool"] = convertGlobalMaxPool;
  map["Shrink"] = convertShrink;
  map["ThresholdedRelu"] = convertThresholdedRelu;
}
