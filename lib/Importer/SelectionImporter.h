//===- SelectionImporter.h - importing a node that reads x[mask] -*- C++
//-*-===//
//
// Private to lib/Importer: the state of importing one node that reads a
// masked selection or NonZero's indices, shared by MaskedSelection.cpp
// (NonZero, its index forms, the gather that selects) and
// SelectionPropagation.cpp (the ops a selection goes through and the
// reductions and losses that end it).
//
//===----------------------------------------------------------------------===//

#ifndef TIDAL_LIB_IMPORTER_SELECTIONIMPORTER_H
#define TIDAL_LIB_IMPORTER_SELECTIONIMPORTER_H

#include "ConverterSupport.h"

#include <algorithm>
#include <string>

namespace mlir::tidal::importer {

/// One node that reads a selection or NonZero's indices.
struct SelectionImporter {
  GraphImporter &g;
  const onnx::NodeProto &node;
  std::string &error;
  Node n{g, node, error};
  Composer c{n};
  int syntheticCount = 0;

  LogicalResult fail(const llvm::Twine &msg) {
    error = msg.str();
    return failure();
  }
  const Selection *sel(int i) {
    if (!g.hasInput(node, i))
      return nullptr;
    auto it = g.selections.find(node.input(i));
    return it == g.selections.end() ? nullptr : &it->second;
  }
  const MaskIndices *indices(int i) {
    if (!g.hasInput(node, i))
      return nullptr;
    auto it = g.maskIndices.find(node.input(i));
    return it == g.maskIndices.end() ? nullptr : &it->second;
  }
  RankedTensorType type(int i) { return g.inputType(node, i); }
  int64_t rank(int i) { return type(i).getRank(); }
  const std::string &op() const { return node.op_type(); }

  /// Binds output `out` (when named) as a selection by `s` along `axis`.
  void keep(int out, const Selection &s, int64_t axis) {
    if (out < node.output_size() && !node.output(out).empty())
      g.selections[node.output(out)] = Selection{s.mask, axis, s.source};
  }
  void keepAll(const Selection &s, int64_t axis) {
    for (int out = 0; out < node.output_size(); ++out)
      keep(out, s, axis);
  }
  /// Imports `proto` (the node or a copy of it) as if nothing were selected.
  LogicalResult asUsual(const onnx::NodeProto &proto) {
    return convertNode(g, proto, error);
  }
  LogicalResult asUsual() { return asUsual(node); }
  /// Binds the node's output (Shape) to `dims` sliced by its start and end
  /// attributes: a compile-time shape holding a count sentinel.
  LogicalResult bindShape(llvm::ArrayRef<int64_t> dims) {
    int64_t rank = dims.size(), start = n.i("start", 0), end = n.i("end", rank);
    start = std::clamp<int64_t>(start < 0 ? start + rank : start, 0, rank);
    end = std::clamp<int64_t>(end < 0 ? end + rank : end, start, rank);
    llvm::SmallVector<int64_t> kept(dims.begin() + start, dims.begin() + end);
    g.constants[node.output(0)] = makeConstant(
        RankedTensorType::get({(int64_t)kept.size()}, n.b().getI64Type()),
        kept);
    return success();
  }
  /// A name bound to `v` that no ONNX tensor has, for a copy of the node.
  std::string bindSynthetic(Value v) {
    std::string name = "\x01selection." + node.output(0) + "." +
                       std::to_string(syntheticCount++);
    g.values[name] = v;
    return name;
  }

  /// The only selection among the node's inputs, which must be input `i`.
  const Selection *only(int i) {
    for (int k = 0; k < node.input_size(); ++k)
      if (k != i && sel(k)) {
        (void)fail("input '" + node.input(k) + "' is selected by a mask (" +
                   sel(k)->source + "), which " + op() +
                   " takes only as input " + llvm::Twine(i));
        return nullptr;
      }
    const Selection *s = sel(i);
    if (!s)
      (void)fail(op() + " takes a masked selection only as input " +
                 llvm::Twine(i) + ", not as input '" +
                 node.input(i == 0 ? 1 : 0) + "'");
    return s;
  }
  /// Fails when input `i` (not a selection) has a dimension other than 1
  /// where it lines up, counted from the right, with the selected axis
  /// `fromRight`.
  LogicalResult apart(int i, const Selection &s, int64_t fromRight) {
    RankedTensorType t = type(i);
    if (!t)
      return success();
    int64_t pos = t.getRank() - fromRight;
    if (pos >= 0 && t.getDimSize(pos) != 1)
      return fail("input '" + node.input(i) + "' (" + typeToString(t) +
                  ") spans the axis that " + s.source +
                  " selects, whose length is known only at run time; it "
                  "can only broadcast along it");
    return success();
  }
  LogicalResult across(const Selection &s, const llvm::Twine &what) {
    return fail(op() + " " + what + " the axis that " + s.source +
                " selects, whose length is known only at run time; tidal "
                "takes a masked selection only into element-wise ops, ops "
                "within each selected slice, and reductions or losses over "
                "the selected axis");
  }

  /// The mask as a tensor of rank `rank`, its N along `axis`.
  Value maskAlong(const Selection &s, int64_t rank, int64_t axis) {
    int64_t count = cast<RankedTensorType>(s.mask.getType()).getDimSize(0);
    llvm::SmallVector<int64_t> shape(rank, 1);
    shape[axis] = count;
    return rank == 1 ? s.mask : c.reshape(s.mask, shape);
  }
  Value castTo(Value v, Type elt) {
    if (!c.ok)
      return {};
    auto t = cast<RankedTensorType>(v.getType());
    Operation *o = g.create(CastOp::getOperationName(), {v}, {}, 1, error,
                            {RankedTensorType::get(t.getShape(), elt)});
    if (!o)
      c.ok = false;
    return o ? o->getResult(0) : Value();
  }
  /// The number of kept elements as a scalar of `elt`.
  Value keptCount(const Selection &s, Type elt) {
    return c.op(
        ReduceSumOp::getOperationName(), {castTo(s.mask, elt)},
        {n.arr("axes", {0}), n.named("keepdims", n.b().getBoolAttr(0))});
  }

  LogicalResult run();
  LogicalResult nonZero();
  LogicalResult onIndices(const MaskIndices &mi, int at);
  LogicalResult select(Value x, const MaskIndices &mi, int64_t axis);
  LogicalResult onSelection();
  LogicalResult elementwise();
  LogicalResult reduction(double identity);
  LogicalResult loss();
  LogicalResult matmul();
  LogicalResult reshapeLike();
};

} // namespace mlir::tidal::importer

#endif // TIDAL_LIB_IMPORTER_SELECTIONIMPORTER_H
