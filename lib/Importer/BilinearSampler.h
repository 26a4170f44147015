//===- BilinearSampler.h - gathers of an image at computed coordinates ----===//
//
// What GridSample (GridSampleConverter.cpp) and DeformConv
// (DeformConvConverter.cpp) share: an image X viewed as a table of [B H W,
// C] rows (B images), pixel coordinates from normalized ones (with border
// and reflection padding), and one corner of a bilinear sample: a gather
// of the rows at integer-valued float coordinates, weighted, zero outside
// the image with zero padding. The gradient is gather's scatter-add for X
// and reaches the coordinates through the weights.
//
//===----------------------------------------------------------------------===//

#ifndef TIDAL_LIB_IMPORTER_BILINEARSAMPLER_H
#define TIDAL_LIB_IMPORTER_BILINEARSAMPLER_H

#include "ConverterSupport.h"

namespace mlir::tidal::importer {

struct Sampler : Composer {
  FloatType ft;
  int64_t batch = 0, c = 0, h = 0, w = 0, ho = 0, wo = 0;
  bool alignCorners = false, zeros = true;
  Value table; // X as [N H W, C]
  Value base;  // n H W, [N, 1, 1] int64

  Value scalar(double v) { return splat(ft, {}, v); }
  Value add(Value a, Value b) {
    return binary(AddOp::getOperationName(), a, b);
  }
  Value sub(Value a, Value b) {
    return binary(SubOp::getOperationName(), a, b);
  }
  Value mul(Value a, Value b) {
    return binary(MulOp::getOperationName(), a, b);
  }
  Value unary(llvm::StringRef name, Value v) { return op(name, {v}); }
  Value clip(Value v, double lo, double hi) {
    return op(ClipOp::getOperationName(), {v},
              {n_.named("min", n_.b().getF32FloatAttr(lo)),
               n_.named("max", n_.b().getF32FloatAttr(hi))});
  }
  Value castTo(Value v, Type elt) {
    if (!ok)
      return {};
    auto t = castType(v, elt);
    return n_.b().create<CastOp>(n_.g.loc, t, v).getResult();
  }
  static RankedTensorType castType(Value v, Type elt) {
    return RankedTensorType::get(cast<RankedTensorType>(v.getType()).getShape(),
                                 elt);
  }
  Node &n_;
  Sampler(Node &node) : Composer{node}, n_(node) {}

  /// The pixel coordinate of normalized `g` on an axis of `size`, padded.
  Value coordinate(Value g, int64_t size, bool border, bool reflection) {
    Value x = alignCorners ? mul(add(g, scalar(1.0)), scalar((size - 1) / 2.0))
                           : sub(mul(add(g, scalar(1.0)), scalar(size / 2.0)),
                                 scalar(0.5));
    if (reflection) {
      // Reflect about [lo, hi] = [0, size - 1] (align_corners) or
      // [-0.5, size - 0.5]: in = |x - lo|, flips = floor(in / span),
      // extra = in - flips span, odd flips mirror extra.
      double lo = alignCorners ? 0.0 : -0.5;
      double span = alignCorners ? size - 1.0 : double(size);
      if (span <= 0.0)
        return splat(ft, cast<RankedTensorType>(x.getType()).getShape(), 0.0);
      Value in = unary(AbsOp::getOperationName(), sub(x, scalar(lo)));
      Value flips =
          unary(FloorOp::getOperationName(), mul(in, scalar(1.0 / span)));
      Value extra = sub(in, mul(flips, scalar(span)));
      Value half = unary(FloorOp::getOperationName(), mul(flips, scalar(0.5)));
      Value odd = sub(flips, mul(half, scalar(2.0))); // 0 or 1
      x = add(add(extra, scalar(lo)),
              mul(odd, sub(scalar(span), mul(extra, scalar(2.0)))));
    }
    if (border || reflection)
      x = clip(x, 0.0, double(size - 1));
    return x;
  }

  /// X at integer-valued float coordinates (x, y) [N, Ho, Wo], as
  /// [N Ho Wo, C], times `weight` (with zero padding, 0 outside).
  Value corner(Value x, Value y, Value weight) {
    if (zeros) {
      auto inside = [&](Value v, int64_t size) {
        Value lo = binary(GreaterOrEqualOp::getOperationName(), v, scalar(0));
        Value hi = binary(LessOrEqualOp::getOperationName(), v,
                          scalar(double(size - 1)));
        return binary(LogicalAndOp::getOperationName(), lo, hi);
      };
      Value in =
          binary(LogicalAndOp::getOperationName(), inside(x, w), inside(y, h));
      Value mask = castTo(in, ft);
      weight = weight ? mul(weight, mask) : mask;
    }
    Value xi = castTo(clip(x, 0.0, double(w - 1)), n_.b().getI64Type());
    Value yi = castTo(clip(y, 0.0, double(h - 1)), n_.b().getI64Type());
    Value wScalar = splat(n_.b().getI64Type(), {}, double(w));
    Value idx = add(add(base, mul(yi, wScalar)), xi);
    Value g = op(GatherOp::getOperationName(),
                 {table, reshape(idx, {batch * ho * wo})},
                 {n_.named("axis", n_.b().getI64IntegerAttr(0))});
    if (!weight)
      return g;
    return mul(g, reshape(weight, {batch * ho * wo, 1}));
  }

  /// The bilinear sample at pixel coordinates (ix, iy) [B, Ho, Wo], as
  /// [B Ho Wo, C]: the four corners weighted by (1 - |ix - x|)(1 - |iy -
  /// y|).
  Value bilinear(Value ix, Value iy) {
    Value x0 = unary(FloorOp::getOperationName(), ix);
    Value y0 = unary(FloorOp::getOperationName(), iy);
    Value x1 = add(x0, scalar(1.0)), y1 = add(y0, scalar(1.0));
    Value wx1 = sub(ix, x0), wy1 = sub(iy, y0);
    Value wx0 = sub(scalar(1.0), wx1), wy0 = sub(scalar(1.0), wy1);
    return add(
        add(corner(x0, y0, mul(wx0, wy0)), corner(x1, y0, mul(wx1, wy0))),
        add(corner(x0, y1, mul(wx0, wy1)), corner(x1, y1, mul(wx1, wy1))));
  }

  /// `base`: the first row of each image, b H W, as a [B, 1, 1] constant.
  void setBase() {
    llvm::SmallVector<int64_t> offsets;
    for (int64_t k = 0; k < batch; ++k)
      offsets.push_back(k * h * w);
    auto type = RankedTensorType::get({batch, 1, 1}, n_.b().getI64Type());
    base =
        op(ConstantOp::getOperationName(), {},
           {n_.named("value",
                     DenseElementsAttr::get(type, llvm::ArrayRef(offsets)))});
  }
};

} // namespace mlir::tidal::importer

#endif // TIDAL_LIB_IMPORTER_BILINEARSAMPLER_H
