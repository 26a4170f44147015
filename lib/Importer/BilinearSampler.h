//===- BilinearSampler.h - gathers of an image at computed coordinates ----===//
//
// What GridSample (GridSampleConverter.cpp) and DeformConv
// (DeformConvConverter.cpp) share: an image (or volume) X viewed as a table
// of [B (D) H W, C] rows (B images), pixel coordinates from normalized ones
// (with border and reflection padding), and one corner of a bilinear
// (trilinear) sample: a gather of the rows at integer-valued float
// coordinates, weighted, zero outside the image with zero padding. The gradient
// is gather's scatter-add for X and reaches the coordinates through the
// weights.
//
//===----------------------------------------------------------------------===//

#ifndef TIDAL_LIB_IMPORTER_BILINEARSAMPLER_H
#define TIDAL_LIB_IMPORTER_BILINEARSAMPLER_H

#include "ConverterSupport.h"

namespace mlir::tidal::importer {

struct Sampler : Composer {
  FloatType ft;
  // d = 1 for images; a volume's output depth is folded into ho.
  int64_t batch = 0, c = 0, d = 1, h = 0, w = 0, ho = 0, wo = 0;
  bool alignCorners = false, zeros = true;
  Value table; // X as [N D H W, C]
  Value base;  // n D H W, [N, 1, 1] int64

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

  /// X at integer-valued float coordinates (x, y(, z)) [N, Ho, Wo], as
  /// [N Ho Wo, C], times `weight` (with zero padding, 0 outside).
  Value corner(Value x, Value y, Value weight, Value z = Value()) {
    if (zeros) {
      auto inside = [&](Value v, int64_t size) {
        Value lo = binary(GreaterOrEqualOp::getOperationName(), v, scalar(0));
        Value hi = binary(LessOrEqualOp::getOperationName(), v,
                          scalar(double(size - 1)));
        return binary(LogicalAndOp::getOperationName(), lo, hi);
      };
      Value in =
          binary(LogicalAndOp::getOperationName(), inside(x, w), inside(y, h));
      if (z)
        in = binary(LogicalAndOp::getOperationName(), in, inside(z, d));
      Value mask = castTo(in, ft);
      weight = weight ? mul(weight, mask) : mask;
    }
    Type i64 = n_.b().getI64Type();
    Value xi = castTo(clip(x, 0.0, double(w - 1)), i64);
    Value yi = castTo(clip(y, 0.0, double(h - 1)), i64);
    Value row = yi;
    if (z) {
      Value zi = castTo(clip(z, 0.0, double(d - 1)), i64);
      row = add(mul(zi, splat(i64, {}, double(h))), yi);
    }
    Value idx = add(add(base, mul(row, splat(i64, {}, double(w)))), xi);
    Value g = op(GatherOp::getOperationName(),
                 {table, reshape(idx, {batch * ho * wo})},
                 {n_.named("axis", n_.b().getI64IntegerAttr(0))});
    if (!weight)
      return g;
    return mul(g, reshape(weight, {batch * ho * wo, 1}));
  }

  /// The bilinear (with `iz`, trilinear) sample at pixel coordinates (ix,
  /// iy(, iz)) [B, Ho, Wo], as [B Ho Wo, C]: the corners weighted by the
  /// products of (1 - |i - corner|) per axis.
  Value bilinear(Value ix, Value iy, Value iz = Value()) {
    Value x0 = unary(FloorOp::getOperationName(), ix);
    Value y0 = unary(FloorOp::getOperationName(), iy);
    Value x1 = add(x0, scalar(1.0)), y1 = add(y0, scalar(1.0));
    Value wx1 = sub(ix, x0), wy1 = sub(iy, y0);
    Value wx0 = sub(scalar(1.0), wx1), wy0 = sub(scalar(1.0), wy1);
    if (!iz)
      return add(
          add(corner(x0, y0, mul(wx0, wy0)), corner(x1, y0, mul(wx1, wy0))),
          add(corner(x0, y1, mul(wx0, wy1)), corner(x1, y1, mul(wx1, wy1))));
    Value z0 = unary(FloorOp::getOperationName(), iz);
    Value z1 = add(z0, scalar(1.0));
    Value wz1 = sub(iz, z0), wz0 = sub(scalar(1.0), wz1);
    Value sum;
    for (auto [zc, wz] : {std::pair(z0, wz0), std::pair(z1, wz1)})
      for (auto [yc, wy] : {std::pair(y0, wy0), std::pair(y1, wy1)})
        for (auto [xc, wx] : {std::pair(x0, wx0), std::pair(x1, wx1)}) {
          Value v = corner(xc, yc, mul(mul(wx, wy), wz), zc);
          sum = sum ? add(sum, v) : v;
        }
    return sum;
  }

  /// `base`: the first row of each image, b D H W, as a [B, 1, 1]
  /// constant.
  void setBase() {
    llvm::SmallVector<int64_t> offsets;
    for (int64_t k = 0; k < batch; ++k)
      offsets.push_back(k * d * h * w);
    auto type = RankedTensorType::get({batch, 1, 1}, n_.b().getI64Type());
    base =
        op(ConstantOp::getOperationName(), {},
           {n_.named("value",
                     DenseElementsAttr::get(type, llvm::ArrayRef(offsets)))});
  }
};

} // namespace mlir::tidal::importer

#endif // TIDAL_LIB_IMPORTER_BILINEARSAMPLER_H
