//===- ResizeConverter.cpp - ONNX Resize as gathers -----------------------===//
//
// Resize (opsets 11-19) with compile-time scales or sizes is separable: on
// each resized axis every output position reads a few input positions
// (taps) with fixed weights. So it imports, axis by axis, as
//   nearest   gather(x, idx, axis)
//   linear    gather(x, i0, axis) * w0 + gather(x, i1, axis) * w1
//   cubic     the same over four taps
// with the indices and weights computed here exactly as ONNX's reference
// (onnx/reference/ops/op_resize.py) computes them: the source coordinate of
// each coordinate_transformation_mode (half_pixel, pytorch_half_pixel,
// align_corners, asymmetric, half_pixel_symmetric), taps clamped to the
// edge, nearest_mode rounding, cubic_coeff_a, exclude_outside. The gradient
// is gather's (a scatter-add) and the kernels are gather, mul and add: no
// new op. Not supported: tf_crop_and_resize (roi), antialias when
// downsampling.
//
//===----------------------------------------------------------------------===//

#include "ConverterSupport.h"

#include <cmath>

using namespace mlir;
using namespace mlir::tidal;
using namespace mlir::tidal::importer;

namespace {

struct Tap {
  llvm::SmallVector<int64_t> index;
  llvm::SmallVector<double> weight;
};

struct AxisPlan {
  std::string mode, coordinates, nearestMode;
  double cubicA = -0.75;
  bool excludeOutside = false;
};

/// The source coordinate of output position `o` (ONNX's x_original).
double sourceCoordinate(const AxisPlan &p, int64_t o, int64_t in, int64_t out,
                        double scale) {
  const double outF = scale * double(in); // the reference's output_width
  const std::string &c = p.coordinates;
  if (c == "align_corners")
    return outF == 1 ? 0.0 : double(o) * double(in - 1) / (outF - 1);
  if (c == "asymmetric")
    return double(o) / scale;
  if (c == "pytorch_half_pixel")
    return outF == 1 ? -0.5 : (double(o) + 0.5) / scale - 0.5;
  if (c == "half_pixel_symmetric") {
    const double adjustment = double(out) / outF;
    const double offset = double(in) / 2 * (1 - adjustment);
    return offset + (double(o) + 0.5) / scale - 0.5;
  }
  return (double(o) + 0.5) / scale - 0.5; // half_pixel
}

llvm::SmallVector<double> coefficients(const AxisPlan &p, double ratio) {
  if (p.mode == "linear")
    return {1 - ratio, ratio};
  if (p.mode == "cubic") {
    const double a = p.cubicA, r1 = ratio + 1, s = 1 - ratio, s1 = s + 1;
    return {((a * r1 - 5 * a) * r1 + 8 * a) * r1 - 4 * a,
            ((a + 2) * ratio - (a + 3)) * ratio * ratio + 1,
            ((a + 2) * s - (a + 3)) * s * s + 1,
            ((a * s1 - 5 * a) * s1 + 8 * a) * s1 - 4 * a};
  }
  // nearest: the left or the right neighbour; ratio 1 is x itself.
  bool right;
  if (ratio == 1)
    right = true;
  else if (p.nearestMode == "round_prefer_ceil")
    right = ratio >= 0.5;
  else if (p.nearestMode == "floor")
    right = false;
  else if (p.nearestMode == "ceil")
    right = true;
  else // round_prefer_floor
    right = ratio > 0.5;
  return {right ? 0.0 : 1.0, right ? 1.0 : 0.0};
}

/// The taps of one axis resized from `in` to `out` positions.
llvm::SmallVector<Tap> axisTaps(const AxisPlan &p, int64_t in, int64_t out,
                                double scale) {
  const int64_t n = p.mode == "cubic" ? 4 : 2;
  llvm::SmallVector<Tap> taps(n);
  for (int64_t o = 0; o < out; ++o) {
    const double x = sourceCoordinate(p, o, in, out, scale);
    // The reference takes the n nearest positions, the left one first on a
    // tie, with the ratio in (0, 1]: an integer x is the right neighbour.
    int64_t left = (int64_t)std::floor(x);
    double ratio = x - double(left);
    if (ratio == 0) {
      --left;
      ratio = 1;
    }
    llvm::SmallVector<double> w = coefficients(p, ratio);
    const int64_t first = left - (n / 2 - 1);
    if (p.excludeOutside) {
      double sum = 0;
      for (int64_t j = 0; j < n; ++j) {
        const int64_t i = first + j;
        if (i < 0 || i >= in)
          w[j] = 0;
        sum += w[j];
      }
      for (double &v : w)
        v = sum != 0 ? v / sum : 0;
    }
    for (int64_t j = 0; j < n; ++j) {
      taps[j].index.push_back(std::clamp<int64_t>(first + j, 0, in - 1));
      taps[j].weight.push_back(w[j]);
    }
  }
  // Nearest keeps the tap each position selected: one gather.
  if (p.mode == "nearest") {
    Tap one;
    for (int64_t o = 0; o < out; ++o) {
      const bool right = taps[1].weight[o] != 0;
      one.index.push_back(taps[right ? 1 : 0].index[o]);
      one.weight.push_back(1);
    }
    return {one};
  }
  return taps;
}

FailureOr<llvm::SmallVector<double>> constFloats(Node &n, int idx,
                                                 llvm::StringRef what) {
  DenseElementsAttr c = n.g.constInput(n.proto, idx);
  if (!c)
    return n.fail("input '" + what + "' ('" + n.proto.input(idx) +
                  "') must be known at compile time");
  if (!isa<FloatType>(c.getElementType()))
    return n.fail("input '" + what + "' must be float");
  return importer::floatValues(c);
}

LogicalResult convertResize(Node &n) {
  auto xv = n.in(0);
  if (failed(xv))
    return failure();
  auto x = n.type(0);
  auto elt = dyn_cast<FloatType>(x.getElementType());
  if (!elt)
    return n.fail("needs a float input, got " + typeToString(x));
  const int64_t rank = x.getRank();
  AxisPlan p;
  p.mode = n.s("mode", "nearest");
  p.coordinates = n.s("coordinate_transformation_mode", "half_pixel");
  p.nearestMode = n.s("nearest_mode", "round_prefer_floor");
  p.cubicA = n.f("cubic_coeff_a", -0.75f);
  p.excludeOutside = n.i("exclude_outside", 0) != 0;
  if (p.mode != "nearest" && p.mode != "linear" && p.mode != "cubic")
    return n.fail("mode '" + p.mode + "' is not valid");
  static const char *const kCoordinates[] = {"half_pixel", "pytorch_half_pixel",
                                             "align_corners", "asymmetric",
                                             "half_pixel_symmetric"};
  if (p.coordinates == "tf_crop_and_resize")
    return n.fail("coordinate_transformation_mode 'tf_crop_and_resize' (a "
                  "region of interest) is not supported");
  if (!llvm::is_contained(kCoordinates, p.coordinates))
    return n.fail("coordinate_transformation_mode '" + p.coordinates +
                  "' is not valid");
  static const char *const kNearest[] = {"round_prefer_floor",
                                         "round_prefer_ceil", "floor", "ceil"};
  if (!llvm::is_contained(kNearest, p.nearestMode))
    return n.fail("nearest_mode '" + p.nearestMode + "' is not valid");

  // The resized axes (opset 18), then scales or sizes for them.
  llvm::SmallVector<int64_t> axes;
  if (auto given = n.ints("axes")) {
    // n.axes validates (range, repeats) but sorts; scales and sizes follow
    // the given order.
    if (failed(n.axes(*given, rank)))
      return failure();
    axes.assign(given->begin(), given->end());
    for (int64_t &a : axes)
      a = a < 0 ? a + rank : a;
  } else {
    for (int64_t d = 0; d < rank; ++d)
      axes.push_back(d);
  }
  llvm::SmallVector<double> scale(rank, 1.0);
  llvm::SmallVector<int64_t> out(x.getShape());
  const bool hasScales =
      n.has(2) && n.g.inputType(n.proto, 2).getNumElements() != 0;
  const bool hasSizes = n.has(3);
  if (hasScales == hasSizes)
    return n.fail("exactly one of 'scales' and 'sizes' must be given");
  if (hasScales) {
    auto s = constFloats(n, 2, "scales");
    if (failed(s))
      return failure();
    if (s->size() != axes.size())
      return n.fail("scales has " + llvm::Twine(s->size()) + " values for " +
                    llvm::Twine(axes.size()) + " axes");
    for (auto [k, a] : llvm::enumerate(axes)) {
      if ((*s)[k] <= 0)
        return n.fail("scales must be positive");
      scale[a] = (*s)[k];
      out[a] = (int64_t)std::floor(double(x.getDimSize(a)) * scale[a]);
    }
  } else {
    auto s = n.constInts(3, "sizes");
    if (failed(s))
      return failure();
    if (s->size() != axes.size())
      return n.fail("sizes has " + llvm::Twine(s->size()) + " values for " +
                    llvm::Twine(axes.size()) + " axes");
    std::string policy = n.s("keep_aspect_ratio_policy", "stretch");
    if (policy != "stretch" && policy != "not_larger" &&
        policy != "not_smaller")
      return n.fail("keep_aspect_ratio_policy '" + policy + "' is not valid");
    double common = policy == "not_larger" ? INFINITY : 0.0;
    for (auto [k, a] : llvm::enumerate(axes)) {
      if ((*s)[k] <= 0)
        return n.fail("sizes must be positive");
      const double r = double((*s)[k]) / double(x.getDimSize(a));
      common =
          policy == "not_larger" ? std::min(common, r) : std::max(common, r);
      scale[a] = r;
      out[a] = (*s)[k];
    }
    if (policy != "stretch")
      for (int64_t a : axes) {
        scale[a] = common;
        out[a] = (int64_t)std::floor(double(x.getDimSize(a)) * common + 0.5);
      }
  }
  if (n.i("antialias", 0) && p.mode != "nearest")
    for (int64_t a : axes)
      if (scale[a] < 1)
        return n.fail("antialias when downsampling is not supported");

  Composer c{n};
  Value y = *xv;
  for (int64_t a = 0; a < rank; ++a) {
    const int64_t in = x.getDimSize(a);
    if (out[a] <= 0)
      return n.fail("axis " + llvm::Twine(a) + " would have no positions");
    if (out[a] == in && scale[a] == 1.0)
      continue;
    Value sum;
    for (const Tap &t : axisTaps(p, in, out[a], scale[a])) {
      auto idxType = RankedTensorType::get({out[a]}, n.b().getI64Type());
      Value idx = c.op(
          ConstantOp::getOperationName(), {},
          {n.named("value",
                   DenseElementsAttr::get(idxType, llvm::ArrayRef(t.index)))});
      Value g = c.op(GatherOp::getOperationName(), {y, idx},
                     {n.named("axis", n.b().getI64IntegerAttr(a))});
      if (p.mode != "nearest") {
        llvm::SmallVector<int64_t> wShape(rank - a, 1);
        wShape[0] = out[a];
        llvm::SmallVector<APFloat> w;
        for (double v : t.weight) {
          APFloat f(v);
          bool lost;
          f.convert(elt.getFloatSemantics(), APFloat::rmNearestTiesToEven,
                    &lost);
          w.push_back(f);
        }
        Value wv = c.op(
            ConstantOp::getOperationName(), {},
            {n.named("value",
                     DenseElementsAttr::get(RankedTensorType::get(wShape, elt),
                                            llvm::ArrayRef(w)))});
        g = c.binary(MulOp::getOperationName(), g, wv);
      }
      sum = sum ? c.binary(AddOp::getOperationName(), sum, g) : g;
    }
    y = sum;
  }
  if (y == *xv) // nothing resized: the input itself
    y = c.op(IdentityOp::getOperationName(), {y});
  return c.bind(y);
}

} // namespace

void importer::addResizeConverters(llvm::StringMap<Converter> &map) {
  map["Resize"] = convertResize;
}
