//===- FoldDataMovement.cpp - data-movement compile-time folds
//--------------===//
//
// ScatterND, Gather, Unsqueeze/Squeeze, Reshape/Flatten, Concat, Slice,
// Expand, Split and Transpose on constants (ShapeFolding.cpp decides which
// nodes reach here).
//
//===----------------------------------------------------------------------===//

#include "FoldSupport.h"

#include "tidal/Dialect/Tidal/IR/ShapeUtils.h"

#include <cmath>

using namespace mlir;
using namespace mlir::tidal;
using namespace mlir::tidal::importer;
using namespace mlir::tidal::importer::fold;

bool fold::foldDataMovement(FoldCall &c) {
  const onnx::NodeProto &node = c.node;
  const std::string &op = node.op_type();
  llvm::ArrayRef<DenseElementsAttr> in = c.in;
  llvm::SmallVectorImpl<DenseElementsAttr> &results = c.results;
  std::string &error = c.error;
  const Vals &x = c.x;
  llvm::ArrayRef<int64_t> shape = x.type.getShape();
  int64_t rank = shape.size();
  auto normAxis = FoldCall::normAxis;
  auto badAxis = [&](int64_t a, int64_t r) { return c.badAxis(a, r); };
  if (op == "ScatterND") {
    // A copy of `data` with the slices that `indices` name replaced by
    // `updates` (reduction "none").
    if (in.size() < 3 || !in[1] || !in[2])
      return false;
    if (const auto *a = findAttribute(node, "reduction"); a && a->s() != "none")
      return false;
    Vals idx(in[1]), upd(in[2]);
    auto idxShape = idx.type.getShape();
    int64_t k = idxShape.empty() ? 0 : idxShape.back();
    if (idxShape.empty() || k > rank) {
      error = "indices' last dimension exceeds the data's rank";
      return true;
    }
    llvm::SmallVector<int64_t> updShape(idxShape.drop_back());
    llvm::append_range(updShape, shape.drop_front(k));
    if (upd.type.getShape() != llvm::ArrayRef<int64_t>(updShape) ||
        upd.isFloat != x.isFloat) {
      error = "updates' shape or type does not match data and indices";
      return true;
    }
    auto strides = stridesOf(shape);
    int64_t slice = numElements(shape.drop_front(k));
    int64_t count = numElements(idxShape.drop_back());
    llvm::SmallVector<double> fv(x.f);
    llvm::SmallVector<int64_t> iv(x.i);
    for (int64_t u = 0; u < count; ++u) {
      int64_t base = 0;
      for (int64_t d = 0; d < k; ++d) {
        int64_t j = idx.iat(u * k + d);
        if (j < -shape[d] || j >= shape[d]) {
          error = "index " + std::to_string(j) + " out of range";
          return true;
        }
        base += (j < 0 ? j + shape[d] : j) * strides[d];
      }
      for (int64_t e = 0; e < slice; ++e) {
        if (x.isFloat)
          fv[base + e] = upd.f[u * slice + e];
        else
          iv[base + e] = upd.i[u * slice + e];
      }
    }
    results.push_back(x.isFloat ? makeConstant(x.type, fv)
                                : makeConstant(x.type, iv));
  } else if (op == "Gather") {
    if (in.size() < 2 || !in[1] || rank == 0)
      return false;
    int64_t axis = normAxis(intAttr(node, "axis", 0), rank);
    if (badAxis(axis, rank))
      return true;
    Vals idx(in[1]);
    llvm::SmallVector<int64_t> outShape(shape.take_front(axis));
    llvm::append_range(outShape, idx.type.getShape());
    llvm::append_range(outShape, shape.drop_front(axis + 1));
    int64_t inner = numElements(shape.drop_front(axis + 1));
    int64_t nIdx = idx.type.getNumElements();
    for (int64_t k = 0; k < nIdx; ++k) {
      int64_t j = idx.iat(k);
      if (j < -shape[axis] || j >= shape[axis]) {
        error = "index " + std::to_string(j) + " out of range";
        return true;
      }
    }
    results.push_back(gatherElements(x, outShape, [&](int64_t k) {
      int64_t in_ = k % inner, rest = k / inner;
      int64_t ik = rest % nIdx, outer = rest / nIdx;
      int64_t j = idx.iat(ik);
      if (j < 0)
        j += shape[axis];
      return (outer * shape[axis] + j) * inner + in_;
    }));
  } else if (op == "Unsqueeze" || op == "Squeeze") {
    llvm::SmallVector<int64_t> axes;
    if (in.size() > 1 && in[1])
      axes = intValues(in[1]);
    else if (const auto *a = findAttribute(node, "axes"))
      axes.assign(a->ints().begin(), a->ints().end());
    llvm::SmallVector<int64_t> outShape;
    if (op == "Unsqueeze") {
      int64_t outRank = rank + axes.size();
      for (int64_t &a : axes)
        if (badAxis(a = normAxis(a, outRank), outRank))
          return true;
      for (int64_t d = 0, next = 0; d < outRank; ++d)
        outShape.push_back(llvm::is_contained(axes, d) ? 1 : shape[next++]);
    } else {
      for (int64_t &a : axes)
        if (badAxis(a = normAxis(a, rank), rank))
          return true;
      for (int64_t d = 0; d < rank; ++d) {
        bool drop = axes.empty() ? shape[d] == 1 : llvm::is_contained(axes, d);
        if (drop && shape[d] != 1) {
          error =
              "cannot squeeze a dimension of size " + std::to_string(shape[d]);
          return true;
        }
        if (!drop)
          outShape.push_back(shape[d]);
      }
    }
    results.push_back(DenseElementsAttr(in[0]).reshape(
        RankedTensorType::get(outShape, x.type.getElementType())));
  } else if (op == "Reshape" || op == "Flatten") {
    llvm::SmallVector<int64_t> outShape;
    if (op == "Flatten") {
      int64_t axis = normAxis(intAttr(node, "axis", 1), rank);
      if (badAxis(axis, rank + 1))
        return true;
      outShape = {numElements(shape.take_front(axis)),
                  numElements(shape.drop_front(axis))};
    } else {
      if (in.size() < 2 || !in[1])
        return false;
      outShape = intValues(in[1]);
      int64_t known = 1, infer = -1;
      for (size_t d = 0; d < outShape.size(); ++d) {
        if (outShape[d] == 0 && !intAttr(node, "allowzero", 0))
          outShape[d] = d < shape.size() ? shape[d] : 0;
        if (outShape[d] == -1)
          infer = d;
        else
          known *= outShape[d];
      }
      if (infer >= 0 && known)
        outShape[infer] = x.type.getNumElements() / known;
    }
    if (llvm::any_of(outShape, [](int64_t d) { return d < 0; }) ||
        numElements(outShape) != x.type.getNumElements()) {
      error = "cannot reshape a constant of " + shapeToString(shape);
      return true;
    }
    results.push_back(DenseElementsAttr(in[0]).reshape(
        RankedTensorType::get(outShape, x.type.getElementType())));
  } else if (op == "Concat") {
    int64_t axis = normAxis(intAttr(node, "axis", 0), rank);
    if (badAxis(axis, rank))
      return true;
    llvm::SmallVector<Vals> parts;
    llvm::SmallVector<int64_t> outShape(shape);
    outShape[axis] = 0;
    for (DenseElementsAttr a : in) {
      if (!a)
        continue;
      parts.emplace_back(a);
      for (int64_t d = 0; d < rank; ++d)
        if (parts.back().type.getRank() != rank ||
            (d != axis && parts.back().type.getDimSize(d) != shape[d])) {
          error = "inputs differ in shape outside the axis";
          return true;
        }
      outShape[axis] += parts.back().type.getDimSize(axis);
    }
    int64_t inner =
        numElements(llvm::ArrayRef<int64_t>(outShape).drop_front(axis + 1));
    auto type = RankedTensorType::get(outShape, x.type.getElementType());
    llvm::SmallVector<double> fv;
    llvm::SmallVector<int64_t> iv;
    int64_t outer = numElements(shape.take_front(axis));
    for (int64_t o = 0; o < outer; ++o)
      for (const Vals &p : parts) {
        int64_t chunk = p.type.getDimSize(axis) * inner;
        for (int64_t k = 0; k < chunk; ++k) {
          fv.push_back(p.at(o * chunk + k));
          iv.push_back(p.iat(o * chunk + k));
        }
      }
    results.push_back(x.isFloat ? makeConstant(type, fv)
                                : makeConstant(type, iv));
  } else if (op == "Slice") {
    if (in.size() < 3 || !in[1] || !in[2])
      return false;
    auto starts = intValues(in[1]), ends = intValues(in[2]);
    llvm::SmallVector<int64_t> axes, steps;
    if (in.size() > 3 && in[3])
      axes = intValues(in[3]);
    else
      for (size_t k = 0; k < starts.size(); ++k)
        axes.push_back(k);
    if (in.size() > 4 && in[4])
      steps = intValues(in[4]);
    else
      steps.assign(starts.size(), 1);
    llvm::SmallVector<int64_t> s(rank, 0), st(rank, 1), outShape(shape);
    if (axes.size() != starts.size() || ends.size() != starts.size() ||
        steps.size() != starts.size()) {
      error = "starts, ends, axes and steps differ in length";
      return true;
    }
    for (size_t k = 0; k < axes.size(); ++k) {
      int64_t a = normAxis(axes[k], rank);
      if (badAxis(a, rank))
        return true;
      int64_t dim = shape[a];
      int64_t b = starts[k], e = ends[k], step = steps[k];
      if (step == 0) {
        error = "slice step is zero";
        return true;
      }
      if (b < 0)
        b += dim;
      if (e < 0)
        e += dim;
      if (step > 0) {
        b = std::clamp<int64_t>(b, 0, dim);
        e = std::clamp<int64_t>(e, 0, dim);
        outShape[a] = std::max<int64_t>(0, (e - b + step - 1) / step);
      } else {
        b = std::clamp<int64_t>(b, -1, dim - 1);
        e = std::clamp<int64_t>(e, -1, dim - 1);
        outShape[a] = std::max<int64_t>(0, (b - e - step - 1) / -step);
      }
      s[a] = b;
      st[a] = step;
    }
    auto inStrides = stridesOf(shape), outStrides = stridesOf(outShape);
    results.push_back(gatherElements(x, outShape, [&](int64_t k) {
      int64_t off = 0;
      for (int64_t d = 0; d < rank; ++d)
        off +=
            (s[d] + ((k / outStrides[d]) % outShape[d]) * st[d]) * inStrides[d];
      return off;
    }));
  } else if (op == "Expand") {
    if (in.size() < 2 || !in[1])
      return false;
    auto target = broadcastShapes(shape, intValues(in[1]));
    if (!target) {
      error = "Expand shape does not broadcast";
      return true;
    }
    auto r = broadcastTo(x, *target, error);
    if (!r)
      return true;
    results.push_back(r->isFloat ? makeConstant(r->type, r->f)
                                 : makeConstant(r->type, r->i));
  } else if (op == "Split") {
    // Sizes from input 1 (13+), the `split` attribute, `num_outputs` (18)
    // or equal parts over the outputs.
    int64_t axis = normAxis(intAttr(node, "axis", 0), rank);
    if (badAxis(axis, rank))
      return true;
    const int64_t dim = shape[axis], parts = node.output_size();
    llvm::SmallVector<int64_t> sizes;
    if (in.size() > 1 && in[1]) {
      sizes = intValues(in[1]);
    } else if (const auto *a = findAttribute(node, "split")) {
      sizes.assign(a->ints().begin(), a->ints().end());
    } else {
      const int64_t chunk = (dim + parts - 1) / std::max<int64_t>(1, parts);
      for (int64_t at = 0; at < dim; at += chunk)
        sizes.push_back(std::min(chunk, dim - at));
    }
    int64_t total = 0;
    for (int64_t v : sizes)
      total += v < 0 ? dim + 1 : v;
    if ((int64_t)sizes.size() != parts || total != dim) {
      error = "the split sizes do not cover the axis' " + std::to_string(dim) +
              " in " + std::to_string(parts) + " outputs";
      return true;
    }
    auto inStrides = stridesOf(shape);
    int64_t start = 0;
    for (int64_t size : sizes) {
      llvm::SmallVector<int64_t> outShape(shape);
      outShape[axis] = size;
      auto outStrides = stridesOf(outShape);
      results.push_back(gatherElements(x, outShape, [&](int64_t k) {
        int64_t off = 0;
        for (int64_t d = 0; d < rank; ++d) {
          int64_t at = (k / outStrides[d]) % outShape[d];
          off += (d == axis ? at + start : at) * inStrides[d];
        }
        return off;
      }));
      start += size;
    }
  } else if (op == "Transpose") {
    llvm::SmallVector<int64_t> perm;
    if (const auto *a = findAttribute(node, "perm"))
      perm.assign(a->ints().begin(), a->ints().end());
    else
      for (int64_t d = rank - 1; d >= 0; --d)
        perm.push_back(d);
    llvm::SmallVector<int64_t> outShape;
    llvm::SmallVector<int64_t> sorted(perm);
    llvm::sort(sorted);
    for (int64_t d = 0; d < (int64_t)sorted.size(); ++d)
      if (sorted[d] != d || (int64_t)perm.size() != rank) {
        error = "perm is not a permutation of the input's dimensions";
        return true;
      }
    for (int64_t p : perm)
      outShape.push_back(shape[p]);
    auto inStrides = stridesOf(shape), outStrides = stridesOf(outShape);
    results.push_back(gatherElements(x, outShape, [&](int64_t k) {
      int64_t off = 0;
      for (int64_t d = 0; d < rank; ++d)
        off += ((k / outStrides[d]) % outShape[d]) * inStrides[perm[d]];
      return off;
    }));
  } else {
    return false;
  }
  return true;
}
