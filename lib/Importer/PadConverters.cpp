//===- PadConverters.cpp - ONNX Pad ---------------------------------------===//
//
// Pad at opsets 13-22 (pads, constant_value and, from 18, axes as inputs
// known at compile time; opset 2's attributes), modes constant, reflect and
// edge (tidal.pad), and wrap (slices and concats). Negative pads crop: they
// become a slice before the padding.
//
//===----------------------------------------------------------------------===//

#include "ConverterSupport.h"

using namespace mlir;
using namespace mlir::tidal;
using namespace mlir::tidal::importer;

namespace {

LogicalResult convertPad(Node &n) {
  auto x = n.in(0);
  if (failed(x))
    return failure();
  auto type = n.type(0);
  int64_t rank = type.getRank();
  llvm::SmallVector<int64_t> raw;
  double value = 0.0;
  if (n.g.opset < 11) {
    auto p = n.ints("pads");
    if (!p)
      return n.fail("attribute 'pads' is required");
    raw = *p;
    value = n.f("value", 0.0f);
  } else {
    auto p = n.constInts(1, "pads");
    if (failed(p))
      return failure();
    raw = *p;
    if (n.has(2)) {
      DenseElementsAttr c = n.g.constInput(n.proto, 2);
      if (!c || c.getNumElements() != 1)
        return n.fail("input 'constant_value' must be a scalar known at "
                      "compile time");
      value = isa<FloatType>(c.getElementType()) ? floatValues(c)[0]
                                                 : double(intValues(c)[0]);
    }
  }
  // Opset 18's axes: pads name only those dimensions.
  llvm::SmallVector<int64_t> axes;
  if (n.has(3)) {
    auto a = n.constInts(3, "axes");
    if (failed(a))
      return failure();
    auto norm = n.axes(*a, rank);
    if (failed(norm))
      return failure();
    // Keep the given order: pads follow it, not the sorted one.
    for (int64_t v : *a)
      axes.push_back(v < 0 ? v + rank : v);
  } else {
    for (int64_t d = 0; d < rank; ++d)
      axes.push_back(d);
  }
  if (raw.size() != 2 * axes.size())
    return n.fail("pads has " + llvm::Twine(raw.size()) + " entries for " +
                  llvm::Twine(axes.size()) + " axes");
  llvm::SmallVector<int64_t> pads(2 * rank, 0);
  for (size_t k = 0; k < axes.size(); ++k) {
    pads[axes[k]] = raw[k];
    pads[rank + axes[k]] = raw[axes.size() + k];
  }
  std::string modeName = n.s("mode", "constant");
  PadMode mode = PadMode::constant;
  const bool wrap = modeName == "wrap";
  if (wrap)
    ; // slices and concats below
  else if (modeName == "constant")
    mode = PadMode::constant;
  else if (modeName == "reflect")
    mode = PadMode::reflect;
  else if (modeName == "edge")
    mode = PadMode::edge;
  else
    return n.fail("mode '" + modeName +
                  "' is not supported (constant, reflect, edge, wrap)");

  // Negative pads crop first.
  Value v = *x;
  if (llvm::any_of(pads, [](int64_t p) { return p < 0; })) {
    llvm::SmallVector<int64_t> starts(rank), ends(rank), steps(rank, 1);
    for (int64_t d = 0; d < rank; ++d) {
      starts[d] = std::max<int64_t>(0, -pads[d]);
      ends[d] = type.getDimSize(d) - std::max<int64_t>(0, -pads[rank + d]);
      if (ends[d] < starts[d])
        return n.fail("negative pads remove more than dimension " +
                      llvm::Twine(d) + " holds");
      pads[d] = std::max<int64_t>(0, pads[d]);
      pads[rank + d] = std::max<int64_t>(0, pads[rank + d]);
    }
    Operation *slice = n.g.create(
        SliceOp::getOperationName(), {v},
        {n.arr("starts", starts), n.arr("ends", ends), n.arr("steps", steps)},
        1, n.error);
    if (!slice)
      return failure();
    v = slice->getResult(0);
  }
  if (llvm::all_of(pads, [](int64_t p) { return p == 0; })) {
    n.g.bindOutputs(n.proto, v);
    return success();
  }
  if (wrap) {
    // Circular (F.pad mode='circular'): per padded axis, the last `before`
    // elements, the input, the first `after` ones.
    Composer b{n};
    for (int64_t d = 0; d < rank && b.ok; ++d) {
      const int64_t before = pads[d], after = pads[rank + d];
      if (before == 0 && after == 0)
        continue;
      auto vt = cast<RankedTensorType>(v.getType());
      const int64_t dim = vt.getDimSize(d);
      if (before > dim || after > dim)
        return n.fail("wrap padding of " +
                      llvm::Twine(std::max(before, after)) + " on dimension " +
                      llvm::Twine(d) + " of size " + llvm::Twine(dim) +
                      " (at most the size)");
      auto piece = [&](int64_t start, int64_t end) {
        llvm::SmallVector<int64_t> starts(rank, 0), ends(vt.getShape()),
            steps(rank, 1);
        starts[d] = start;
        ends[d] = end;
        return b.op(SliceOp::getOperationName(), {v},
                    {n.arr("starts", starts), n.arr("ends", ends),
                     n.arr("steps", steps)});
      };
      llvm::SmallVector<Value> parts;
      if (before)
        parts.push_back(piece(dim - before, dim));
      parts.push_back(v);
      if (after)
        parts.push_back(piece(0, after));
      v = b.op(ConcatOp::getOperationName(), parts,
               {n.named("axis", n.b().getI64IntegerAttr(d))});
    }
    return b.bind(v);
  }
  return n.emit(PadOp::getOperationName(), {v},
                {n.arr("pads", pads),
                 n.named("mode", PadModeAttr::get(n.g.ctx, mode)),
                 n.named("value", n.b().getF64FloatAttr(value))},
                1);
}

} // namespace

void importer::addPadConverters(llvm::StringMap<Converter> &map) {
  map["Pad"] = convertPad;
}
