//===- ShapeUtils.cpp - shape arithmetic shared by tidal ops --------------===//

#include "tidal/Dialect/Tidal/IR/ShapeUtils.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/CheckedArithmetic.h"

using namespace mlir;

std::optional<llvm::SmallVector<int64_t>>
tidal::broadcastShapes(llvm::ArrayRef<int64_t> lhs,
                       llvm::ArrayRef<int64_t> rhs) {
  size_t rank = std::max(lhs.size(), rhs.size());
  llvm::SmallVector<int64_t> result(rank);
  for (size_t i = 0; i < rank; ++i) {
    int64_t l = i < rank - lhs.size() ? 1 : lhs[i - (rank - lhs.size())];
    int64_t r = i < rank - rhs.size() ? 1 : rhs[i - (rank - rhs.size())];
    if (l != r && l != 1 && r != 1)
      return std::nullopt;
    result[i] = l == 1 ? r : l;
  }
  return result;
}

bool tidal::broadcastsTo(llvm::ArrayRef<int64_t> from,
                         llvm::ArrayRef<int64_t> to) {
  if (from.size() > to.size())
    return false;
  size_t offset = to.size() - from.size();
  for (size_t i = 0; i < from.size(); ++i)
    if (from[i] != 1 && from[i] != to[offset + i])
      return false;
  return true;
}

std::optional<int64_t> tidal::windowOutputSize(int64_t in, int64_t kernel,
                                               int64_t stride, int64_t padBegin,
                                               int64_t padEnd, int64_t dilation,
                                               bool ceilMode) {
  // Sizes past 64 bits do not fit anything (fuzzing: a dilation of 2^63-1).
  std::optional<int64_t> span = llvm::checkedMul(dilation, kernel - 1);
  if (span)
    span = llvm::checkedAdd(*span, int64_t(1));
  std::optional<int64_t> padded = llvm::checkedAdd(in, padBegin);
  if (padded)
    padded = llvm::checkedAdd(*padded, padEnd);
  if (!span || !padded || stride <= 0 || *padded < *span)
    return std::nullopt;
  int64_t steps = *padded - *span;
  int64_t out = steps / stride + (ceilMode && steps % stride != 0) + 1;
  // As PyTorch and ONNX: with ceil mode the last window must start inside
  // the input or the begin padding.
  if (ceilMode) {
    std::optional<int64_t> lastStart = llvm::checkedMul(out - 1, stride);
    if (!lastStart || *lastStart >= in + padBegin)
      --out;
  }
  return out;
}

std::string tidal::shapeToString(llvm::ArrayRef<int64_t> shape) {
  if (shape.empty())
    return "scalar";
  return llvm::join(
      llvm::map_range(shape, [](int64_t d) { return std::to_string(d); }), "x");
}

int64_t tidal::numElements(llvm::ArrayRef<int64_t> shape) {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

/// Checks window attributes against `spatial` dims and computes the output
/// spatial extents.
LogicalResult
tidal::inferWindow(std::optional<Location> loc, ArrayRef<int64_t> inShape,
                   ArrayRef<int64_t> kernel, ArrayRef<int64_t> strides,
                   ArrayRef<int64_t> pads, ArrayRef<int64_t> dilations,
                   bool ceilMode, SmallVectorImpl<int64_t> &outSpatial) {
  size_t k = inShape.size() - 2;
  if (kernel.size() != k)
    return emitOptionalError(loc, "expects ", k, " kernel dims, got ",
                             kernel.size());
  if (strides.size() != k || dilations.size() != k || pads.size() != 2 * k)
    return emitOptionalError(loc, "expects ", k, " strides and dilations and ",
                             2 * k, " pads for a ", inShape.size(), "-D input");
  for (size_t i = 0; i < k; ++i) {
    if (kernel[i] <= 0 || strides[i] <= 0 || dilations[i] <= 0 || pads[i] < 0 ||
        pads[k + i] < 0)
      return emitOptionalError(loc, "kernel, strides and dilations must be "
                                    "positive and pads non-negative");
    auto o = windowOutputSize(inShape[2 + i], kernel[i], strides[i], pads[i],
                              pads[k + i], dilations[i], ceilMode);
    if (!o)
      return emitOptionalError(loc, "window of size ", kernel[i],
                               " does not fit spatial dim ", i, " of size ",
                               inShape[2 + i], " with its padding");
    outSpatial.push_back(*o);
  }
  return success();
}

LogicalResult tidal::inferSliceShape(std::optional<Location> loc,
                                     ArrayRef<int64_t> inShape,
                                     ArrayRef<int64_t> starts,
                                     ArrayRef<int64_t> ends,
                                     ArrayRef<int64_t> steps,
                                     SmallVectorImpl<int64_t> &shape) {
  int64_t rank = inShape.size();
  if ((int64_t)starts.size() != rank || (int64_t)ends.size() != rank ||
      (int64_t)steps.size() != rank)
    return emitOptionalError(loc,
                             "expects one start, end and step per "
                             "dimension (",
                             rank, ")");
  for (int64_t i = 0; i < rank; ++i) {
    int64_t dim = inShape[i], s = starts[i], e = ends[i], st = steps[i];
    if (st == 0)
      return emitOptionalError(loc, "step of dim ", i, " is zero");
    bool ok = st > 0 ? (s >= 0 && s <= dim && e >= 0 && e <= dim)
                     : (s >= -1 && s < dim && e >= -1 && e < dim);
    if (!ok)
      return emitOptionalError(loc, "slice bounds [", s, ", ", e,
                               ") not clamped to dim ", i, " of size ", dim);
    int64_t n = st > 0 ? (e - s + st - 1) / st : (s - e - st - 1) / -st;
    shape.push_back(std::max<int64_t>(n, 0));
  }
  return success();
}

LogicalResult tidal::checkSortedAxes(std::optional<Location> loc,
                                     llvm::ArrayRef<int64_t> axes,
                                     int64_t rank) {
  for (size_t i = 0; i < axes.size(); ++i) {
    if (axes[i] < 0 || axes[i] >= rank)
      return emitOptionalError(loc, "axis ", axes[i], " out of range for rank ",
                               rank);
    if (i && axes[i] <= axes[i - 1])
      return emitOptionalError(loc, "axes must be sorted and unique");
  }
  return success();
}

std::optional<int64_t> mlir::tidal::checkedByteSize(ArrayRef<int64_t> shape,
                                                    unsigned elementBits) {
  int64_t count = 1, bytes;
  for (int64_t dim : shape)
    if (dim < 0 || __builtin_mul_overflow(count, dim, &count))
      return std::nullopt;
  if (__builtin_mul_overflow(count, int64_t((elementBits + 7) / 8), &bytes) ||
      bytes > kMaxTensorBytes)
    return std::nullopt;
  return bytes;
}
