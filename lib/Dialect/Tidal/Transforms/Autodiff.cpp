//===- Autodiff.cpp
//---------------------------------------------------------===//

#include "tidal/Dialect/Tidal/IR/TidalOps.h"
#include "tidal/Dialect/Tidal/Transforms/Passes.h"

namespace mlir::tidal {
#define GEN_PASS_DEF_TIDALAUTODIFFPASS
#include "tidal/Dialect/Tidal/Transforms/Passes.h.inc"
} // namespace mlir::tidal

using namespace mlir;
using namespace mlir::tidal;

namespace {
struct AutodiffPass : tidal::impl::TidalAutodiffPassBase<AutodiffPass> {
  using Base::Base;
  void runOnOperation() override {}
};
} // namespace
