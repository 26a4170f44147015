//===- MemoryOps.cpp - offload, prefetch and wait -------------------------===//

#include "tidal/Dialect/Tidal/IR/TidalOps.h"

using namespace mlir;
using namespace mlir::tidal;

LogicalResult WaitOp::verify() {
  Operation *copy = getInput().getDefiningOp();
  if (!isa_and_nonnull<OffloadOp, PrefetchOp>(copy))
    return emitOpError("waits for a copy: its operand must be the result of "
                       "tidal.offload or tidal.prefetch");
  return success();
}
