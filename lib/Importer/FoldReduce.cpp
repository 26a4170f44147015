//===- FoldReduce.cpp - reductions of integer constants -------------------===//
//
// ReduceProd, ReduceSum, ReduceMax, ReduceMin and CumSum of known integer
// tensors:
// shape arithmetic such as the element count nn.EmbeddingBag's export
// computes as ReduceProd(Shape(x)). The axes come from the `axes` input
// (ReduceSum from opset 13, the others from 18) or attribute; keepdims and
// noop_with_empty_axes as ONNX defines them.
//
//===----------------------------------------------------------------------===//

#include "FoldSupport.h"

#include <algorithm>

using namespace mlir;
using namespace mlir::tidal;
using namespace mlir::tidal::importer;
using namespace mlir::tidal::importer::fold;

/// CumSum of an integer constant along a known axis (`exclusive`,
/// `reverse`).
static bool foldCumSum(FoldCall &c) {
  const Vals &x = c.x;
  if (c.in.size() < 2 || !c.in[1] || c.in[1].getNumElements() != 1)
    return false;
  const int64_t rank = x.type.getRank();
  int64_t axis = intValues(c.in[1])[0];
  if (c.badAxis(FoldCall::normAxis(axis, rank), rank))
    return true;
  axis = FoldCall::normAxis(axis, rank);
  const bool exclusive = intAttr(c.node, "exclusive", 0) != 0,
             reverse = intAttr(c.node, "reverse", 0) != 0;
  llvm::ArrayRef<int64_t> shape = x.type.getShape();
  const int64_t stride = stridesOf(shape)[axis], len = shape[axis];
  const int64_t n = x.type.getNumElements();
  llvm::SmallVector<int64_t> out(n, 0);
  for (int64_t k = 0; k < n; ++k) {
    if ((k / stride) % len != 0)
      continue; // visit each line once, from its first element
    int64_t sum = 0;
    for (int64_t j = 0; j < len; ++j) {
      int64_t at = k + (reverse ? len - 1 - j : j) * stride;
      if (exclusive) {
        out[at] = sum;
        sum += x.i[at];
      } else {
        sum += x.i[at];
        out[at] = sum;
      }
    }
  }
  c.results.push_back(makeConstant(x.type, out));
  return true;
}

bool fold::foldReduce(FoldCall &c) {
  const std::string &op = c.node.op_type();
  if (op == "CumSum")
    return !c.x.isFloat && foldCumSum(c);
  if (op != "ReduceProd" && op != "ReduceSum" && op != "ReduceMax" &&
      op != "ReduceMin")
    return false;
  const Vals &x = c.x;
  if (x.isFloat)
    return false;
  const int64_t rank = x.type.getRank();
  llvm::SmallVector<int64_t> axes;
  if (c.in.size() > 1 && c.in[1]) {
    axes = intValues(c.in[1]);
  } else if (const onnx::AttributeProto *a = findAttribute(c.node, "axes")) {
    axes.assign(a->ints().begin(), a->ints().end());
  }
  if (axes.empty() && intAttr(c.node, "noop_with_empty_axes", 0)) {
    c.results.push_back(c.in[0]);
    return true;
  }
  std::vector<bool> reduced(rank, axes.empty());
  for (int64_t a : axes) {
    if (c.badAxis(FoldCall::normAxis(a, rank), rank))
      return true;
    reduced[FoldCall::normAxis(a, rank)] = true;
  }
  const bool keep = intAttr(c.node, "keepdims", 1) != 0;
  llvm::ArrayRef<int64_t> shape = x.type.getShape();
  llvm::SmallVector<int64_t> outShape, kept; // kept: the result's shape
  for (int64_t d = 0; d < rank; ++d) {
    kept.push_back(reduced[d] ? 1 : shape[d]);
    if (!reduced[d] || keep)
      outShape.push_back(kept.back());
  }
  int64_t count = 1;
  for (int64_t e : kept)
    count *= e;
  const int64_t n = x.type.getNumElements();
  if (n == 0 && (op == "ReduceMax" || op == "ReduceMin")) {
    c.error = op + " of an empty tensor";
    return true;
  }
  const int64_t init = op == "ReduceProd" ? 1 : 0;
  llvm::SmallVector<int64_t> acc(count, init);
  std::vector<bool> seen(count, false);
  llvm::SmallVector<int64_t> inStrides = stridesOf(shape),
                             outStrides = stridesOf(kept);
  for (int64_t k = 0; k < n; ++k) {
    int64_t at = 0;
    for (int64_t d = 0; d < rank; ++d)
      if (!reduced[d])
        at += (k / inStrides[d]) % shape[d] * outStrides[d];
    const int64_t v = x.i[k];
    if (op == "ReduceProd")
      acc[at] *= v;
    else if (op == "ReduceSum")
      acc[at] += v;
    else if (!seen[at])
      acc[at] = v;
    else
      acc[at] = op == "ReduceMax" ? std::max(acc[at], v) : std::min(acc[at], v);
    seen[at] = true;
  }
  c.results.push_back(makeConstant(
      RankedTensorType::get(outShape, x.type.getElementType()), acc));
  return true;
}
