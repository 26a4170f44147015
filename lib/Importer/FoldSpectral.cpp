//===- FoldSpectral.cpp - window functions and the mel matrix as constants ===//
//
// HannWindow, HammingWindow, BlackmanWindow and MelWeightMatrix (opset 17)
// depend only on their scalar inputs, so they fold to constants: the STFT
// that reads a folded window builds its kernels at compile time, and a mel
// matrix is a constant matmul operand. The formulas are ONNX's reference
// implementation's (onnx/reference/ops), computed in double precision.
//
//===----------------------------------------------------------------------===//

#include "FoldSupport.h"

#include <cmath>

using namespace mlir;
using namespace mlir::tidal;
using namespace mlir::tidal::importer;
using namespace mlir::tidal::importer::fold;

namespace {

/// The most elements a folded window or mel matrix may have.
constexpr int64_t kMaxSpectralElements = int64_t(1) << 22;

/// The element type `output_datatype` names (default float), or null with
/// `error` set.
Type outputType(const FoldCall &c) {
  int64_t dtype = intAttr(c.node, "output_datatype", 1);
  Type elt = elementTypeFor(c.ctx, int32_t(dtype));
  if (!elt)
    c.error =
        "output_datatype " + onnxTypeName(int32_t(dtype)) + " is not supported";
  return elt;
}

/// Input `k` as one number (a scalar or a one-element tensor).
bool scalarAt(FoldCall &c, size_t k, const char *what, double &out) {
  if (k >= c.in.size() || !c.in[k]) {
    c.error = std::string("input '") + what + "' is required";
    return false;
  }
  Vals v(c.in[k]);
  if (v.type.getNumElements() != 1) {
    c.error = std::string("input '") + what + "' must be a scalar";
    return false;
  }
  out = v.at(0);
  return true;
}

bool foldWindow(FoldCall &c, llvm::StringRef op) {
  double sizeValue;
  if (!scalarAt(c, 0, "size", sizeValue))
    return true;
  int64_t size = int64_t(sizeValue);
  if (size < 1 || size > kMaxSpectralElements) {
    c.error = "size " + std::to_string(size) + " is not in [1, " +
              std::to_string(kMaxSpectralElements) + "]";
    return true;
  }
  Type elt = outputType(c);
  if (!elt)
    return true;
  // periodic = 1: the window of length size + 1 without its last point.
  double n = intAttr(c.node, "periodic", 1) ? double(size) : double(size - 1);
  llvm::SmallVector<double> w(size);
  for (int64_t i = 0; i < size; ++i) {
    double x = n > 0 ? 2.0 * M_PI * double(i) / n : 0.0;
    if (op == "HannWindow")
      w[i] = 0.5 - 0.5 * std::cos(x);
    else if (op == "HammingWindow")
      w[i] = 25.0 / 46.0 - (21.0 / 46.0) * std::cos(x);
    else
      w[i] = 0.42 - 0.5 * std::cos(x) + 0.08 * std::cos(2.0 * x);
  }
  // makeConstant converts to an integer output_datatype too.
  c.results.push_back(makeConstant(RankedTensorType::get({size}, elt), w));
  return true;
}

// Triangular filters between mel-spaced points, ONNX's definition: the
// num_mel_bins + 2 points split [lower, upper] (in mel) into num_mel_bins +
// 2 steps, then become dft bins floor((dft_length + 1) * hz / sample_rate).
bool foldMelWeightMatrix(FoldCall &c) {
  double mels, dft, rate, lower, upper;
  if (!scalarAt(c, 0, "num_mel_bins", mels) ||
      !scalarAt(c, 1, "dft_length", dft) ||
      !scalarAt(c, 2, "sample_rate", rate) ||
      !scalarAt(c, 3, "lower_edge_hertz", lower) ||
      !scalarAt(c, 4, "upper_edge_hertz", upper))
    return true;
  int64_t numMel = int64_t(mels), dftLength = int64_t(dft);
  int64_t sampleRate = int64_t(rate);
  if (numMel < 1 || dftLength < 1 || sampleRate < 1) {
    c.error = "num_mel_bins, dft_length and sample_rate must be positive";
    return true;
  }
  if (!(lower >= 0 && upper > lower)) {
    c.error = "the edges must satisfy 0 <= lower_edge_hertz < upper_edge_hertz";
    return true;
  }
  int64_t bins = dftLength / 2 + 1;
  if (bins * numMel > kMaxSpectralElements) {
    c.error = "the mel matrix [" + std::to_string(bins) + ", " +
              std::to_string(numMel) + "] is too large to fold";
    return true;
  }
  Type elt = outputType(c);
  if (!elt)
    return true;
  auto toMel = [](double hz) { return 2595.0 * std::log10(1.0 + hz / 700.0); };
  double lowMel = toMel(lower), highMel = toMel(upper);
  double step = (highMel - lowMel) / double(numMel + 2);
  llvm::SmallVector<int64_t> points(numMel + 2);
  for (int64_t i = 0; i < numMel + 2; ++i) {
    double hz = 700.0 * (std::pow(10.0, (i * step + lowMel) / 2595.0) - 1.0);
    points[i] = int64_t(std::floor(double(dftLength + 1) * hz / sampleRate));
  }
  llvm::SmallVector<double> m(bins * numMel, 0.0);
  auto set = [&](int64_t row, int64_t col, double v) {
    if (row >= 0 && row < bins)
      m[row * numMel + col] = v;
  };
  for (int64_t i = 0; i < numMel; ++i) {
    int64_t left = points[i], center = points[i + 1], right = points[i + 2];
    if (center == left)
      set(center, i, 1.0);
    else
      for (int64_t j = left; j <= center; ++j)
        set(j, i, double(j - left) / double(center - left));
    if (right > center)
      for (int64_t j = center; j < right; ++j)
        set(j, i, double(right - j) / double(right - center));
  }
  c.results.push_back(
      makeConstant(RankedTensorType::get({bins, numMel}, elt), m));
  return true;
}

} // namespace

bool fold::foldSpectral(FoldCall &c) {
  llvm::StringRef op = c.node.op_type();
  if (op == "HannWindow" || op == "HammingWindow" || op == "BlackmanWindow")
    return foldWindow(c, op);
  if (op == "MelWeightMatrix")
    return foldMelWeightMatrix(c);
  return false;
}
