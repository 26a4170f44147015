//===- TopKSort.cpp - TopK with a large K as a bitonic sorting network ----===//
//
// torch.sort, torch.argsort and torch.topk with a large k export TopK with
// K up to the axis' size, where IndexingConverters.cpp's k rounds of argmax
// would cost k passes. Here the axis is moved last and padded to a power of
// two N, and a bitonic network of log2(N) (log2(N) + 1) / 2 stages sorts
// (key, index) pairs ascending: key = -x for the largest first, x for the
// smallest, the padding +inf, equal keys by index (ONNX: the lower index
// first). Each stage is two gathers of the partner elements (a constant
// permutation), the pair comparison and two wheres selected by a constant
// mask. The first K indices then gather the values from the input, so the
// gradient reaches x through that gather's scatter-add only (the network
// moves indices, which carry none).
//
//===----------------------------------------------------------------------===//

#include "ConverterSupport.h"

#include <limits>

using namespace mlir;
using namespace mlir::tidal;
using namespace mlir::tidal::importer;

LogicalResult importer::topKBySort(Node &n, Value x, int64_t axis, int64_t k,
                                   bool largest) {
  auto type = cast<RankedTensorType>(x.getType());
  const int64_t rank = type.getRank(), dim = type.getDimSize(axis);
  Composer c{n};
  // [rest..., dim] with the axis last, viewed as [rows, dim].
  llvm::SmallVector<int64_t> perm, moved;
  for (int64_t d = 0; d < rank; ++d)
    if (d != axis)
      perm.push_back(d);
  perm.push_back(axis);
  for (int64_t d : perm)
    moved.push_back(type.getDimSize(d));
  Value last = x;
  if (axis != rank - 1)
    last = c.op(TransposeOp::getOperationName(), {x}, {n.arr("perm", perm)});
  const int64_t rows = type.getNumElements() / dim;
  Value rowsView =
      rank == 2 ? last : c.reshape(last, {rows, dim}); // [rows, dim] already
  int64_t width = 1;
  while (width < dim)
    width *= 2;
  // Keys ascending: -x for the largest first; the padding sorts last.
  Value keys = largest ? c.op(NegOp::getOperationName(), {rowsView}) : rowsView;
  if (width > dim)
    keys =
        c.op(PadOp::getOperationName(), {keys},
             {n.arr("pads", {0, 0, 0, width - dim}),
              n.named("mode", PadModeAttr::get(n.g.ctx, PadMode::constant)),
              n.named("value", n.b().getF64FloatAttr(
                                   std::numeric_limits<double>::infinity()))});
  llvm::SmallVector<int64_t> iota(width);
  for (int64_t i = 0; i < width; ++i)
    iota[i] = i;
  Value iotaRow = c.i64Const({1, width}, iota);
  if (!c.ok)
    return failure();
  Value index = n.b().create<BroadcastToOp>(
      n.g.loc, RankedTensorType::get({rows, width}, n.b().getI64Type()),
      iotaRow);
  for (int64_t size = 2; size <= width && c.ok; size *= 2) {
    for (int64_t stride = size / 2; stride >= 1 && c.ok; stride /= 2) {
      llvm::SmallVector<int64_t> partner(width);
      llvm::SmallVector<bool> giveUp(width);
      for (int64_t p = 0; p < width; ++p) {
        partner[p] = p ^ stride;
        // p keeps the smaller of its pair where it is the lower position of
        // an ascending block or the upper one of a descending block.
        const bool lower = (p & stride) == 0, ascending = (p & size) == 0;
        giveUp[p] = lower != ascending;
      }
      Value partnerIdx = c.i64Const({width}, partner);
      Value otherKey = c.gather(keys, partnerIdx, 1);
      Value otherIndex = c.gather(index, partnerIdx, 1);
      // other < mine, ties by index.
      Value otherLess = c.binary(
          LogicalOrOp::getOperationName(),
          c.binary(LessOp::getOperationName(), otherKey, keys),
          c.binary(LogicalAndOp::getOperationName(),
                   c.binary(EqualOp::getOperationName(), otherKey, keys),
                   c.binary(LessOp::getOperationName(), otherIndex, index)));
      Value take = c.binary(LogicalXorOp::getOperationName(), otherLess,
                            c.boolConst({1, width}, giveUp));
      keys = c.op(WhereOp::getOperationName(), {take, otherKey, keys});
      index = c.op(WhereOp::getOperationName(), {take, otherIndex, index});
    }
  }
  // The first k indices; the values gathered from x by flat position.
  Value top = c.op(SliceOp::getOperationName(), {index},
                   {n.arr("starts", {0, 0}), n.arr("ends", {rows, k}),
                    n.arr("steps", {1, 1})});
  llvm::SmallVector<int64_t> rowStart(rows);
  for (int64_t r = 0; r < rows; ++r)
    rowStart[r] = r * dim;
  Value flatIndex =
      c.binary(AddOp::getOperationName(), top, c.i64Const({rows, 1}, rowStart));
  Value values = c.gather(c.reshape(rowsView, {rows * dim}), flatIndex, 0);
  // Back to the input's layout with k along the axis.
  llvm::SmallVector<int64_t> outMoved(moved);
  outMoved.back() = k;
  Value outValues = c.reshape(values, outMoved);
  Value outIndices = c.reshape(top, outMoved);
  if (axis != rank - 1) {
    llvm::SmallVector<int64_t> inverse(rank);
    for (int64_t d = 0; d < rank; ++d)
      inverse[perm[d]] = d;
    outValues = c.op(TransposeOp::getOperationName(), {outValues},
                     {n.arr("perm", inverse)});
    outIndices = c.op(TransposeOp::getOperationName(), {outIndices},
                      {n.arr("perm", inverse)});
  }
  if (!c.ok)
    return failure();
  n.g.bindOutputs(n.proto, {outValues, outIndices});
  return success();
}
