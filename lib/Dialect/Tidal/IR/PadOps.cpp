//===- PadOps.cpp - tidal.pad and its backward op -------------------------===//

#include "tidal/Dialect/Tidal/IR/ShapeUtils.h"
#include "tidal/Dialect/Tidal/IR/TidalOps.h"

#include "mlir/IR/Builders.h"

using namespace mlir;
using namespace mlir::tidal;

/// Checks `pads` against a tensor of `shape` padded in `mode`.
static LogicalResult checkPads(std::optional<Location> loc,
                               ArrayRef<int64_t> shape, ArrayRef<int64_t> pads,
                               PadMode mode) {
  size_t rank = shape.size();
  if (pads.size() != 2 * rank)
    return emitOptionalError(loc, "expects ", 2 * rank, " pads for rank ", rank,
                             ", got ", pads.size());
  for (size_t d = 0; d < rank; ++d)
    for (int64_t p : {pads[d], pads[rank + d]}) {
      if (p < 0)
        return emitOptionalError(loc, "pads must not be negative, got ", p,
                                 " for dimension ", d);
      if (p > 0 && mode == PadMode::reflect && p > shape[d] - 1)
        return emitOptionalError(loc, "reflect padding of ", p,
                                 " on dimension ", d, " of size ", shape[d],
                                 " exceeds the size minus one");
      if (p > 0 && mode == PadMode::edge && shape[d] == 0)
        return emitOptionalError(loc, "edge padding of the empty dimension ",
                                 d);
    }
  return success();
}

LogicalResult PadOp::inferReturnTypes(MLIRContext *,
                                      std::optional<Location> loc,
                                      PadOp::Adaptor adaptor,
                                      SmallVectorImpl<Type> &out) {
  auto t = cast<RankedTensorType>(adaptor.getInput().getType());
  ArrayRef<int64_t> pads = adaptor.getPads();
  if (pads.size() != 2 * (size_t)t.getRank())
    return emitOptionalError(loc, "expects ", 2 * t.getRank(),
                             " pads for rank ", t.getRank(), ", got ",
                             pads.size());
  SmallVector<int64_t> shape(t.getShape());
  for (int64_t d = 0; d < t.getRank(); ++d)
    shape[d] += pads[d] + pads[t.getRank() + d];
  out.push_back(RankedTensorType::get(shape, t.getElementType()));
  return success();
}

LogicalResult PadOp::verify() {
  return checkPads(getLoc(), getInput().getType().getShape(), getPads(),
                   getMode());
}

LogicalResult PadBackwardOp::verify() {
  auto g = getGrad().getType(), r = getGradInput().getType();
  if (g.getElementType() != r.getElementType())
    return emitOpError("grad and result element types differ");
  if (failed(checkPads(getLoc(), r.getShape(), getPads(), getMode())))
    return failure();
  size_t rank = r.getRank();
  for (size_t d = 0; d < rank; ++d)
    if (r.getDimSize(d) + getPads()[d] + getPads()[rank + d] !=
        g.getDimSize(d)) {
      InFlightDiagnostic diag = emitOpError("result shape ")
                                << shapeToString(r.getShape())
                                << " padded by [";
      llvm::interleaveComma(getPads(), diag);
      return diag << "] is not the grad's shape "
                  << shapeToString(g.getShape());
    }
  return success();
}
