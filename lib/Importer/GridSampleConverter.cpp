//===- GridSampleConverter.cpp - ONNX GridSample and AffineGrid -----------===//
//
// GridSample (opsets 16 and 20; F.grid_sample: spatial transformers,
// optical flow, deformable attention, volumetric registration) on a 4-D
// input X [N, C, H, W] and a grid [N, Ho, Wo, 2] of (x, y) in [-1, 1] (at
// opset 20 also a 5-D X [N, C, D, H, W] and a grid [N, Do, Ho, Wo, 3] of
// (x, y, z): trilinear, eight corners):
//   ix = unnormalize(x) (align_corners: (x + 1) (W - 1) / 2, else
//        ((x + 1) W - 1) / 2), iy likewise;
//   padding border: ix, iy clipped to the image; reflection: reflected
//        about its edges (PyTorch's reflect_coordinates), then clipped;
//   bilinear: the four corners floor(ix) + {0, 1} x floor(iy) + {0, 1},
//        each a gather of X viewed [N H W, C] at n H W + y W + x, weighted
//        by (1 - |ix - x|)(1 - |iy - y|) and, with zero padding, by whether
//        the corner lies inside; nearest: the corner round(ix), round(iy)
//        (half to even, as PyTorch's nearbyint).
// No new op: the gradient is gather's scatter-add for X and flows to the
// grid through the weights (floor and round pass none), as PyTorch's
// grid_sampler_2d_backward computes it. Not supported: bicubic.
// AffineGrid (opset 20) is a constant grid of coordinates times theta^T.
//
//===----------------------------------------------------------------------===//

#include "BilinearSampler.h"

using namespace mlir;
using namespace mlir::tidal;
using namespace mlir::tidal::importer;

namespace {

LogicalResult convertGridSample(Node &node) {
  Sampler s(node);
  auto xIn = node.in(0), gridIn = node.in(1);
  if (failed(xIn) || failed(gridIn))
    return failure();
  RankedTensorType xt = node.type(0), gt = node.type(1);
  if (!xt || (xt.getRank() != 4 && xt.getRank() != 5) || !xt.hasStaticShape())
    return node.fail("X must be a 4-D [N, C, H, W] or 5-D [N, C, D, H, W] "
                     "tensor of static shape, got " +
                     (xt ? typeToString(xt) : std::string("?")));
  const bool volume = xt.getRank() == 5;
  if (volume && node.g.opset < 20)
    return node.fail("a 5-D X needs GridSample-20 (the model's opset is " +
                     llvm::Twine(node.g.opset) + ")");
  auto ft = dyn_cast<FloatType>(xt.getElementType());
  if (!ft || (!ft.isF32() && !ft.isF64()))
    return node.fail("X must be float32 or float64, got " + typeToString(xt));
  const int64_t k = volume ? 3 : 2; // spatial dims
  s.ft = ft;
  s.batch = xt.getDimSize(0), s.c = xt.getDimSize(1);
  s.d = volume ? xt.getDimSize(2) : 1;
  s.h = xt.getDimSize(k), s.w = xt.getDimSize(k + 1);
  if (!gt || gt.getRank() != xt.getRank() || !gt.hasStaticShape() ||
      gt.getDimSize(0) != s.batch || gt.getDimSize(k + 1) != k ||
      gt.getElementType() != ft)
    return node.fail("grid must be [" + llvm::Twine(s.batch) +
                     (volume ? ", Do, Ho, Wo, 3]" : ", Ho, Wo, 2]") +
                     " of X's element type, got " +
                     (gt ? typeToString(gt) : std::string("?")));
  // A volume's output depth folds into the rows of the output grid.
  s.ho = volume ? gt.getDimSize(1) * gt.getDimSize(2) : gt.getDimSize(1);
  s.wo = gt.getDimSize(k);
  std::string mode = node.s("mode", "bilinear");
  if (mode == "linear")
    mode = "bilinear";
  if (mode != "bilinear" && mode != "nearest")
    return node.fail("mode '" + mode +
                     "' is not supported (bilinear/linear and nearest)");
  std::string padding = node.s("padding_mode", "zeros");
  if (padding != "zeros" && padding != "border" && padding != "reflection")
    return node.fail("padding_mode '" + padding + "' is not valid");
  s.alignCorners = node.i("align_corners", 0) != 0;
  s.zeros = padding == "zeros";

  // X as a table of [N (D) H W, C] rows; row ((n D + z) H + y) W + x.
  llvm::SmallVector<int64_t> toRows =
      volume ? llvm::SmallVector<int64_t>{0, 2, 3, 4, 1}
             : llvm::SmallVector<int64_t>{0, 2, 3, 1};
  s.table = s.reshape(
      s.op(TransposeOp::getOperationName(), {*xIn}, {node.arr("perm", toRows)}),
      {s.batch * s.d * s.h * s.w, s.c});
  s.setBase();
  llvm::SmallVector<int64_t> gridShape(gt.getShape());
  auto component = [&](int64_t axis) {
    llvm::SmallVector<int64_t> starts(gridShape.size(), 0), ends(gridShape),
        steps(gridShape.size(), 1);
    starts.back() = axis;
    ends.back() = axis + 1;
    return s.reshape(s.op(SliceOp::getOperationName(), {*gridIn},
                          {node.arr("starts", starts), node.arr("ends", ends),
                           node.arr("steps", steps)}),
                     {s.batch, s.ho, s.wo});
  };
  bool border = padding == "border", reflection = padding == "reflection";
  Value ix = s.coordinate(component(0), s.w, border, reflection);
  Value iy = s.coordinate(component(1), s.h, border, reflection);
  Value iz =
      volume ? s.coordinate(component(2), s.d, border, reflection) : Value();

  Value out;
  if (mode == "nearest") {
    auto round = [&](Value v) {
      return v ? s.unary(RoundOp::getOperationName(), v) : Value();
    };
    out = s.corner(round(ix), round(iy), Value(), round(iz));
  } else {
    out = s.bilinear(ix, iy, iz);
  }
  llvm::SmallVector<int64_t> outShape(gridShape.begin(), gridShape.end() - 1);
  outShape.push_back(s.c);
  llvm::SmallVector<int64_t> toChannels =
      volume ? llvm::SmallVector<int64_t>{0, 4, 1, 2, 3}
             : llvm::SmallVector<int64_t>{0, 3, 1, 2};
  Value y = s.op(TransposeOp::getOperationName(), {s.reshape(out, outShape)},
                 {node.arr("perm", toChannels)});
  return s.bind(y);
}

/// AffineGrid (opset 20; F.affine_grid): the normalized coordinates of
/// every output position, (x, y, 1) (or (x, y, z, 1)), a constant [P, k+1],
/// times theta^T [N, k+1, k]: one batched matmul, [N, P, k] reshaped to
/// [N, (D,) H, W, k]. The gradient reaches theta through the matmul.
LogicalResult convertAffineGrid(Node &node) {
  Composer c{node};
  auto theta = node.in(0);
  if (failed(theta))
    return failure();
  RankedTensorType tt = node.type(0);
  auto size = node.constInts(1, "size");
  if (failed(size))
    return failure();
  const int64_t k = int64_t(size->size()) - 2; // 2 or 3 spatial dims
  if ((k != 2 && k != 3) || !tt || !tt.hasStaticShape() || tt.getRank() != 3 ||
      tt.getDimSize(0) != (*size)[0] || tt.getDimSize(1) != k ||
      tt.getDimSize(2) != k + 1)
    return node.fail("theta must be [N, 2, 3] (or [N, 3, 4]) for a size of "
                     "[N, C, H, W] (or [N, C, D, H, W]), got theta " +
                     (tt ? typeToString(tt) : std::string("?")) +
                     " and a size of " + llvm::Twine(size->size()) + " values");
  auto ft = dyn_cast<FloatType>(tt.getElementType());
  if (!ft)
    return node.fail("theta must be a float tensor");
  const bool align = node.i("align_corners", 0) != 0;
  // Spatial sizes innermost first: W, H (, D).
  llvm::SmallVector<int64_t> spatial(size->begin() + 2, size->end());
  int64_t points = 1;
  for (int64_t d : spatial) {
    if (d <= 0 || d > (int64_t(1) << 24))
      return node.fail("size " + llvm::Twine(d) + " is outside [1, 2^24]");
    points *= d;
  }
  if (points > (int64_t(1) << 24))
    return node.fail("the grid has more than 2^24 points");
  auto coord = [&](int64_t i, int64_t n) {
    if (n == 1)
      return 0.0;
    return align ? -1.0 + 2.0 * double(i) / double(n - 1)
                 : (2.0 * double(i) + 1.0) / double(n) - 1.0;
  };
  llvm::SmallVector<double> base;
  base.reserve(points * (k + 1));
  for (int64_t p = 0; p < points; ++p) {
    int64_t rest = p;
    llvm::SmallVector<double> xyz(k);
    for (int64_t d = k - 1; d >= 0; --d) { // spatial[d], row-major
      int64_t n = spatial[d];
      xyz[k - 1 - d] = coord(rest % n, n);
      rest /= n;
    }
    base.append(xyz.begin(), xyz.end());
    base.push_back(1.0);
  }
  auto baseType = RankedTensorType::get({points, k + 1}, ft);
  llvm::SmallVector<APFloat> values;
  for (double v : base) {
    APFloat f(v);
    bool lost;
    f.convert(ft.getFloatSemantics(), APFloat::rmNearestTiesToEven, &lost);
    values.push_back(f);
  }
  Value b =
      c.op(ConstantOp::getOperationName(), {},
           {node.named("value", DenseElementsAttr::get(baseType, values))});
  Value thetaT = c.op(TransposeOp::getOperationName(), {*theta},
                      {node.arr("perm", {0, 2, 1})});
  Value grid = c.op(MatMulOp::getOperationName(), {b, thetaT});
  llvm::SmallVector<int64_t> shape{(*size)[0]};
  shape.append(spatial.begin(), spatial.end());
  shape.push_back(k);
  return c.bind(c.reshape(grid, shape));
}

} // namespace

void importer::addGridSampleConverter(llvm::StringMap<Converter> &map) {
  map["GridSample"] = convertGridSample;
  map["AffineGrid"] = convertAffineGrid;
}
