//===- SpectralConverters.cpp - DFT and STFT as products with constants ---===//
//
// A DFT of length N is a linear map: the signal times a constant matrix of
// cosines and sines. DFT becomes one matmul over the transformed axis (the
// real and imaginary parts interleaved on both sides, as ONNX lays them
// out), STFT one strided 1-D convolution whose kernels are the window times
// those rows (each output channel one frequency's real or imaginary part).
// Both differentiate through ops tidal already has, and N x N products are
// cheap at the lengths models use (audio frames of 400-2048 samples, a
// transformer's width in FNet).
//
//===----------------------------------------------------------------------===//

#include "ConverterSupport.h"

#include <cmath>

using namespace mlir;
using namespace mlir::tidal;
using namespace mlir::tidal::importer;

namespace {

/// The rows of a length-`dft` transform of `rows` samples of `parts` (1:
/// real, 2: real and imaginary interleaved) into `bins` frequencies, each an
/// interleaved (real, imaginary) pair: `rows * parts` x `2 * bins`, row
/// major, scaled by `window[j]` (when given) and 1/dft for the inverse.
/// Samples past `dft` are dropped (ONNX truncates the signal to
/// dft_length); fewer samples than `dft` are the zero padding.
llvm::SmallVector<double> dftMatrix(int64_t rows, int64_t parts, int64_t dft,
                                    int64_t bins, bool inverse,
                                    llvm::ArrayRef<double> window) {
  int64_t cols = 2 * bins;
  llvm::SmallVector<double> m(rows * parts * cols, 0.0);
  double sign = inverse ? 1.0 : -1.0, scale = inverse ? 1.0 / dft : 1.0;
  for (int64_t j = 0; j < std::min(rows, dft); ++j) {
    double w = (window.empty() ? 1.0 : window[j]) * scale;
    for (int64_t k = 0; k < bins; ++k) {
      // The angle from (j * k) mod dft keeps it exact for long transforms.
      double theta = 2.0 * M_PI * double((j * k) % dft) / double(dft);
      double c = std::cos(theta) * w, s = sign * std::sin(theta) * w;
      // (xr + i xi)(c + i s) = (xr c - xi s) + i (xr s + xi c).
      double *re = &m[(j * parts) * cols + 2 * k];
      re[0] = c;
      re[1] = s;
      if (parts == 2) {
        double *im = &m[(j * parts + 1) * cols + 2 * k];
        im[0] = -s;
        im[1] = c;
      }
    }
  }
  return m;
}

/// A scalar integer input, known at compile time, or `def` when absent.
FailureOr<int64_t> scalarInput(Node &n, int idx, llvm::StringRef what,
                               std::optional<int64_t> def) {
  if (!n.has(idx)) {
    if (def)
      return *def;
    return n.fail("input '" + what + "' is required");
  }
  auto v = n.constInts(idx, what);
  if (failed(v))
    return failure();
  if (v->size() != 1)
    return n.fail("input '" + what + "' must be a scalar");
  return (*v)[0];
}

/// The last dimension of a signal: 1 (real) or 2 (complex).
FailureOr<int64_t> signalParts(Node &n, RankedTensorType t) {
  int64_t parts = t.getShape().back();
  if (t.getRank() < 2 || (parts != 1 && parts != 2))
    return n.fail("input must end in a dimension of 1 (real) or 2 (complex), "
                  "got [" +
                  shapeToString(t.getShape()) + "]");
  return parts;
}

// DFT (17: axis attribute, default 1; 20: axis input, default -2): the
// transformed axis moved next to the last, the two flattened, one matmul
// with the transform's matrix, the result moved back.
LogicalResult convertDFT(Node &n) {
  auto x = n.floatIn(0);
  if (failed(x))
    return failure();
  RankedTensorType t = n.type(0);
  auto parts = signalParts(n, t);
  if (failed(parts))
    return failure();
  int64_t r = t.getRank();
  FailureOr<int64_t> rawAxis =
      n.g.opset >= 20 ? scalarInput(n, 2, "axis", -2) : n.i("axis", 1);
  if (failed(rawAxis))
    return failure();
  int64_t a = *rawAxis < 0 ? *rawAxis + r : *rawAxis;
  if (a < 0 || a > r - 2)
    return n.fail("axis " + llvm::Twine(*rawAxis) +
                  " is out of range for a rank-" + llvm::Twine(r) +
                  " input (the last dimension holds the complex parts)");
  int64_t len = t.getDimSize(a);
  auto dft = scalarInput(n, 1, "dft_length", len);
  if (failed(dft))
    return failure();
  if (*dft < 1)
    return n.fail("dft_length " + llvm::Twine(*dft) + " is not positive");
  bool inverse = n.i("inverse", 0) != 0, onesided = n.i("onesided", 0) != 0;
  int64_t bins = onesided ? *dft / 2 + 1 : *dft;

  // The matrix is a constant of the model: keep it to 64 MiB of float32.
  if (len * *parts * 2 * bins > (int64_t(1) << 24))
    return n.fail("a DFT of " + llvm::Twine(len) + " samples into " +
                  llvm::Twine(bins) +
                  " frequencies needs a matrix of more than 2^24 elements");

  Composer c{n};
  Type elt = t.getElementType();
  // [..., len, parts] with the axis moved before the parts.
  llvm::SmallVector<int64_t> perm, moved;
  for (int64_t d = 0; d < r - 1; ++d)
    if (d != a)
      perm.push_back(d);
  perm.push_back(a);
  perm.push_back(r - 1);
  Value v = *x;
  bool identity = a == r - 2;
  if (!identity)
    v = c.op(TransposeOp::getOperationName(), {v}, {n.arr("perm", perm)});
  for (int64_t d : perm)
    moved.push_back(t.getDimSize(d));
  llvm::SmallVector<int64_t> flat(moved.begin(), moved.end() - 2);
  flat.push_back(len * *parts);
  auto mType = RankedTensorType::get({len * *parts, 2 * bins}, elt);
  Value m = c.op(
      ConstantOp::getOperationName(), {},
      {n.named("value", makeConstant(mType, dftMatrix(len, *parts, *dft, bins,
                                                      inverse, {})))});
  Value y = c.op(MatMulOp::getOperationName(), {c.reshape(v, flat), m});
  llvm::SmallVector<int64_t> out(moved.begin(), moved.end() - 2);
  out.push_back(bins);
  out.push_back(2);
  y = c.reshape(y, out);
  if (!identity) {
    llvm::SmallVector<int64_t> back(r);
    for (int64_t d = 0; d < r; ++d)
      back[perm[d]] = d;
    y = c.op(TransposeOp::getOperationName(), {y}, {n.arr("perm", back)});
  }
  return c.bind(y);
}

// STFT (17): frames of `frame_step` apart, each times the window and
// transformed over frame_length samples: a 1-D convolution of the signal
// (one input channel per complex part) with `2 * bins` kernels, transposed
// to ONNX's [batch, frames, bins, 2].
LogicalResult convertSTFT(Node &n) {
  auto x = n.floatIn(0);
  if (failed(x))
    return failure();
  RankedTensorType t = n.type(0);
  // PyTorch's exporter passes a [batch, length] signal (ONNX Runtime reads
  // it as real).
  int64_t parts = 1;
  if (t.getRank() == 3) {
    auto p = signalParts(n, t);
    if (failed(p))
      return failure();
    parts = *p;
  } else if (t.getRank() != 2) {
    return n.fail("signal must be [batch, length] or [batch, length, 1 or "
                  "2], got [" +
                  shapeToString(t.getShape()) + "]");
  }
  int64_t batch = t.getDimSize(0), len = t.getDimSize(1);
  auto step = scalarInput(n, 1, "frame_step", std::nullopt);
  if (failed(step))
    return failure();
  if (*step < 1)
    return n.fail("frame_step " + llvm::Twine(*step) + " is not positive");
  bool hasWindow = n.has(2);
  int64_t windowLen = -1;
  if (hasWindow) {
    RankedTensorType w = n.type(2);
    if (w.getRank() != 1)
      return n.fail("window must have rank 1, got [" +
                    shapeToString(w.getShape()) + "]");
    if (w.getElementType() != t.getElementType())
      return n.fail("window's element type differs from the signal's");
    windowLen = w.getDimSize(0);
  }
  auto frame = scalarInput(n, 3, "frame_length",
                           hasWindow ? std::optional<int64_t>(windowLen)
                                     : std::optional<int64_t>(len));
  if (failed(frame))
    return failure();
  if (*frame < 1)
    return n.fail("frame_length " + llvm::Twine(*frame) + " is not positive");
  int64_t kernel = hasWindow ? windowLen : *frame;
  if (kernel > *frame)
    return n.fail("a window of " + llvm::Twine(kernel) +
                  " samples is longer than frame_length " +
                  llvm::Twine(*frame));
  if (*frame > len)
    return n.fail("frame_length " + llvm::Twine(*frame) +
                  " is longer than the signal (" + llvm::Twine(len) +
                  " samples)");
  bool onesided = n.i("onesided", 1) != 0;
  if (onesided && parts == 2)
    return n.fail("onesided = 1 needs a real signal");
  int64_t bins = onesided ? *frame / 2 + 1 : *frame;
  int64_t frames = 1 + (len - *frame) / *step;

  if (kernel * parts * 2 * bins > (int64_t(1) << 24))
    return n.fail("frames of " + llvm::Twine(*frame) +
                  " samples need kernels of more than 2^24 elements");

  Composer c{n};
  Type elt = t.getElementType();
  llvm::SmallVector<double> window;
  Value runtimeWindow;
  if (hasWindow) {
    if (DenseElementsAttr w = n.g.constInput(n.proto, 2))
      window = floatValues(w);
    else if (auto w = n.in(2); succeeded(w))
      runtimeWindow = *w;
    else
      return failure();
  }
  // Kernels [2 * bins, parts, kernel]: the transform's matrix transposed.
  llvm::SmallVector<double> m =
      dftMatrix(kernel, parts, *frame, bins, /*inverse=*/false, window);
  llvm::SmallVector<double> k(m.size());
  for (int64_t j = 0; j < kernel; ++j)
    for (int64_t p = 0; p < parts; ++p)
      for (int64_t o = 0; o < 2 * bins; ++o)
        k[(o * parts + p) * kernel + j] = m[(j * parts + p) * 2 * bins + o];
  auto kType = RankedTensorType::get({2 * bins, parts, kernel}, elt);
  Value weight = c.op(ConstantOp::getOperationName(), {},
                      {n.named("value", makeConstant(kType, k))});
  if (runtimeWindow)
    weight = c.binary(MulOp::getOperationName(), weight, runtimeWindow);
  // The signal as [batch, parts, length].
  Value s = *x;
  if (parts == 2)
    s = c.op(TransposeOp::getOperationName(), {s}, {n.arr("perm", {0, 2, 1})});
  else
    s = c.reshape(s, {batch, 1, len});
  Value y = c.op(ConvOp::getOperationName(), {s, weight},
                 {n.arr("strides", {*step}), n.arr("pads", {0, 0}),
                  n.arr("dilations", {1}),
                  n.named("group", n.b().getI64IntegerAttr(1))});
  // A window shorter than the frame gives more positions than frames.
  int64_t positions = 1 + (len - kernel) / *step;
  if (positions != frames)
    y = c.op(SliceOp::getOperationName(), {y},
             {n.arr("starts", {0, 0, 0}),
              n.arr("ends", {batch, 2 * bins, frames}),
              n.arr("steps", {1, 1, 1})});
  y = c.op(TransposeOp::getOperationName(), {y}, {n.arr("perm", {0, 2, 1})});
  return c.bind(c.reshape(y, {batch, frames, bins, 2}));
}

} // namespace

void importer::addSpectralConverters(llvm::StringMap<Converter> &map) {
  map["DFT"] = convertDFT;
  map["STFT"] = convertSTFT;
}
