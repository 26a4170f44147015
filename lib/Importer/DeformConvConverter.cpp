//===- DeformConvConverter.cpp - ONNX DeformConv as samples and a matmul --===//
//
// DeformConv (opset 19; torchvision.ops.deform_conv2d, DCNv1/v2) on X [N,
// C, H, W] with W [M, C/group, kH, kW], offsets [N, G * kH * kW * 2, oH,
// oW] (per offset group G and kernel tap, (dy, dx)) and an optional mask
// [N, G * kH * kW, oH, oW]:
//   every tap k = (i, j) of output position (oh, ow) samples X bilinearly
//   (zero outside) at (oh * sh - ph + i * dh + dy, ow * sw - pw + j * dw +
//   dx), with the channels of offset group g using that group's offsets;
//   the samples times the mask are the columns [N, C kH kW, oH oW] of an
//   im2col, which a grouped matmul with W turns into [N, M, oH, oW], plus
//   the bias.
// The sampling is GridSample's (BilinearSampler.h), so no new op: X's
// gradient is gather's scatter-add, the offsets' flows through the
// bilinear weights, the mask's and W's through the products.
//
//===----------------------------------------------------------------------===//

#include "BilinearSampler.h"

using namespace mlir;
using namespace mlir::tidal;
using namespace mlir::tidal::importer;

namespace {

LogicalResult convertDeformConv(Node &node) {
  // B and mask are each optional: a mask without a bias is valid ONNX.
  auto x = node.in(0), wIn = node.in(1), offIn = node.in(2);
  if (failed(x) || failed(wIn) || failed(offIn))
    return failure();
  RankedTensorType xt = node.type(0), wt = node.type(1), ot = node.type(2);
  if (xt.getRank() != 4)
    return node.fail("X must be 4-D [N, C, H, W] (tidal deforms 2-D "
                     "convolutions), got " +
                     typeToString(xt));
  auto ft = dyn_cast<FloatType>(xt.getElementType());
  if (!ft || (!ft.isF32() && !ft.isF64()))
    return node.fail("X must be float32 or float64, got " + typeToString(xt));
  const int64_t n = xt.getDimSize(0), c = xt.getDimSize(1),
                h = xt.getDimSize(2), w = xt.getDimSize(3);
  const int64_t group = node.i("group", 1), og = node.i("offset_group", 1);
  if (wt.getRank() != 4 || group <= 0 || og <= 0 ||
      wt.getDimSize(1) * group != c || wt.getDimSize(0) % group || c % og)
    return node.fail("W " + typeToString(wt) + ", group " + llvm::Twine(group) +
                     " and offset_group " + llvm::Twine(og) + " do not fit X " +
                     typeToString(xt));
  const int64_t m = wt.getDimSize(0), kh = wt.getDimSize(2),
                kw = wt.getDimSize(3), taps = kh * kw;
  if (auto ks = node.ints("kernel_shape");
      ks && *ks != llvm::SmallVector<int64_t>{kh, kw})
    return node.fail("kernel_shape does not match W's spatial shape");
  auto orDefault = [&](llvm::StringRef name, size_t size, int64_t value) {
    return node.ints(name).value_or(llvm::SmallVector<int64_t>(size, value));
  };
  llvm::SmallVector<int64_t> strides = orDefault("strides", 2, 1),
                             dilations = orDefault("dilations", 2, 1),
                             pads = orDefault("pads", 4, 0);
  if (strides.size() != 2 || dilations.size() != 2 || pads.size() != 4)
    return node.fail("strides, dilations and pads must match 2 spatial dims");
  const int64_t oh = (h + pads[0] + pads[2] - dilations[0] * (kh - 1) - 1) /
                         strides[0] +
                     1,
                ow = (w + pads[1] + pads[3] - dilations[1] * (kw - 1) - 1) /
                         strides[1] +
                     1;
  if (oh <= 0 || ow <= 0)
    return node.fail("the kernel does not fit the padded input");
  llvm::SmallVector<int64_t> offsetShape{n, og * taps * 2, oh, ow};
  if (ot.getShape() != llvm::ArrayRef<int64_t>(offsetShape) ||
      ot.getElementType() != ft)
    return node.fail("offset must be [" + shapeToString(offsetShape) +
                     "] of X's type, got " + typeToString(ot));
  Value bias, mask;
  if (node.has(3)) {
    RankedTensorType bt = node.type(3);
    if (bt.getRank() != 1 || bt.getDimSize(0) != m)
      return node.fail("B must be [" + llvm::Twine(m) + "], got " +
                       typeToString(bt));
    auto in = node.in(3);
    if (failed(in))
      return failure();
    bias = *in;
  }
  if (node.has(4)) {
    RankedTensorType mt = node.type(4);
    llvm::SmallVector<int64_t> maskShape{n, og * taps, oh, ow};
    if (mt.getShape() != llvm::ArrayRef<int64_t>(maskShape) ||
        mt.getElementType() != ft)
      return node.fail("mask must be [" + shapeToString(maskShape) +
                       "] of X's type, got " + typeToString(mt));
    auto in = node.in(4);
    if (failed(in))
      return failure();
    mask = *in;
  }

  // Each (image, offset group) is one image of C / G channels to sample.
  Sampler s(node);
  s.ft = ft;
  s.batch = n * og, s.c = c / og, s.h = h, s.w = w;
  s.ho = taps * oh, s.wo = ow;
  s.zeros = true;
  s.table = s.reshape(s.op(TransposeOp::getOperationName(),
                           {s.reshape(*x, {n, og, c / og, h, w})},
                           {node.arr("perm", {0, 1, 3, 4, 2})}),
                      {n * og * h * w, c / og});
  s.setBase();
  // The undeformed positions of every tap, [kH kW, oH, oW] per axis.
  llvm::SmallVector<double> baseY, baseX;
  for (int64_t i = 0; i < kh; ++i)
    for (int64_t j = 0; j < kw; ++j)
      for (int64_t y = 0; y < oh; ++y)
        for (int64_t x = 0; x < ow; ++x) {
          baseY.push_back(double(y * strides[0] - pads[0] + i * dilations[0]));
          baseX.push_back(double(x * strides[1] - pads[1] + j * dilations[1]));
        }
  auto positions = [&](llvm::ArrayRef<double> v) {
    auto type = RankedTensorType::get({1, taps * oh, ow}, ft);
    return s.op(ConstantOp::getOperationName(), {},
                {node.named("value", makeConstant(type, v))});
  };
  // Offsets [N, G, kH kW, 2, oH, oW]: (dy, dx) per tap.
  Value off = s.reshape(*offIn, {n * og, taps, 2, oh, ow});
  auto component = [&](int64_t k) {
    return s.reshape(s.op(SliceOp::getOperationName(), {off},
                          {node.arr("starts", {0, 0, k, 0, 0}),
                           node.arr("ends", {n * og, taps, k + 1, oh, ow}),
                           node.arr("steps", {1, 1, 1, 1, 1})}),
                     {n * og, taps * oh, ow});
  };
  Value iy = s.add(component(0), positions(baseY));
  Value ix = s.add(component(1), positions(baseX));
  // [N G, kH kW, oH, oW, C/G] samples.
  Value samples =
      s.reshape(s.bilinear(ix, iy), {n * og, taps, oh * ow, c / og});
  if (mask)
    samples = s.mul(samples, s.reshape(mask, {n * og, taps, oh * ow, 1}));
  // Columns [N, group, C/group kH kW, oH oW], channel-major as W.
  Value cols =
      s.reshape(s.op(TransposeOp::getOperationName(),
                     {s.reshape(samples, {n, og, taps, oh * ow, c / og})},
                     {node.arr("perm", {0, 1, 4, 2, 3})}),
                {n, group, (c / group) * taps, oh * ow});
  Value weights = s.reshape(*wIn, {group, m / group, (c / group) * taps});
  Value y = s.reshape(s.op(MatMulOp::getOperationName(), {weights, cols}),
                      {n, m, oh, ow});
  if (bias)
    y = s.add(y, s.reshape(bias, {m, 1, 1}));
  return s.bind(y);
}

} // namespace

void importer::addDeformConvConverter(llvm::StringMap<Converter> &map) {
  map["DeformConv"] = convertDeformConv;
}
