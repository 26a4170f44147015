//===- ShapeUtils.cpp - shape arithmetic shared by tidal ops --------------===//

#include "tidal/Dialect/Tidal/IR/ShapeUtils.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"

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
  int64_t span = dilation * (kernel - 1) + 1;
  int64_t padded = in + padBegin + padEnd;
  if (stride <= 0 || padded < span)
    return std::nullopt;
  int64_t steps = padded - span;
  int64_t out = (ceilMode ? (steps + stride - 1) / stride : steps / stride) + 1;
  // As PyTorch and ONNX: with ceil mode the last window must start inside
  // the input or the begin padding.
  if (ceilMode && (out - 1) * stride >= in + padBegin)
    --out;
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
