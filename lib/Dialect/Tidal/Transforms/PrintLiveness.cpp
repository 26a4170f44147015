//===- PrintLiveness.cpp - print BufferLiveness ---------------------------===//

#include "tidal/Dialect/Tidal/Analysis/BufferLiveness.h"
#include "tidal/Dialect/Tidal/IR/TidalOps.h"
#include "tidal/Dialect/Tidal/Transforms/Passes.h"

#include "mlir/IR/AsmState.h"
#include "llvm/Support/raw_ostream.h"

namespace mlir::tidal {
#define GEN_PASS_DEF_TIDALPRINTLIVENESSPASS
#include "tidal/Dialect/Tidal/Transforms/Passes.h.inc"
} // namespace mlir::tidal

using namespace mlir;
using namespace mlir::tidal;

namespace {

struct PrintLiveness : tidal::impl::TidalPrintLivenessPassBase<PrintLiveness> {
  using TidalPrintLivenessPassBase::TidalPrintLivenessPassBase;

  void runOnOperation() override {
    if (alignment <= 0 || (alignment & (alignment - 1))) {
      getOperation().emitError()
          << "tidal-print-liveness: alignment "
          << static_cast<int64_t>(alignment) << " is not a power of two";
      return signalPassFailure();
    }
    for (auto func : getOperation().getOps<func::FuncOp>()) {
      if (func.isExternal())
        continue;
      if (!func.getBody().hasOneBlock()) {
        func.emitError("tidal-print-liveness: more than one block");
        return signalPassFailure();
      }
      print(func, llvm::errs());
    }
    markAllAnalysesPreserved();
  }

  void print(func::FuncOp func, raw_ostream &os) {
    BufferLiveness liveness(func, inPlace);
    AsmState state(func);
    auto name = [&](Value v) {
      std::string s;
      llvm::raw_string_ostream vs(s);
      v.printAsOperand(vs, state);
      return s;
    };
    os << "liveness @" << func.getSymName() << ": " << liveness.getOps().size()
       << " ops, " << liveness.getBuffers().size() << " buffers, end "
       << liveness.getEndPosition() << "\n";
    for (auto [i, op] : llvm::enumerate(liveness.getOps())) {
      os << "  op " << i + 1 << ": " << op->getName();
      if (op->getNumResults()) {
        os << " ->";
        for (Value r : op->getResults())
          os << " " << name(r);
      }
      os << "\n";
    }
    for (const Buffer &buffer : liveness.getBuffers()) {
      os << "  buffer " << buffer.id << ": " << buffer.bytes << " bytes ["
         << buffer.start << ", " << buffer.end << "]";
      if (buffer.persistent)
        os << " persistent";
      if (buffer.returned)
        os << " returned";
      os << ":";
      for (Value v : buffer.values)
        os << " " << name(v) << "@" << liveness.getDefinition(v) << ".."
           << liveness.getLastUse(v);
      os << "\n";
    }
    for (const InPlaceUse &use : liveness.getInPlaceUses())
      os << "  in-place " << name(use.result) << " <- " << name(use.operand)
         << " at " << use.position << " ("
         << use.result.getDefiningOp()->getName() << ")\n";
    for (Value v : liveness.getReturnedConstants())
      os << "  returned constant " << name(v) << "\n";
    SmallVector<int64_t> live = liveness.liveBytes(alignment);
    os << "  live:";
    for (int64_t bytes : live)
      os << " " << bytes;
    os << "\n  lower bound " << liveness.lowerBound(alignment)
       << " bytes, no reuse " << liveness.noReuseBytes(alignment) << " bytes\n";
  }
};

} // namespace
