//===- PlanMemory.cpp - give every tensor an arena offset -----------------===//
//
// The `slots` strategy: each tensor its own aligned slot for the whole step,
// views aliasing their operand, constants in a module-wide read-only arena.
// It is the no-reuse baseline; a liveness-based packing replaces it later.
//
//===----------------------------------------------------------------------===//

#include "tidal/Dialect/Tidal/IR/TidalOps.h"
#include "tidal/Dialect/Tidal/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseMap.h"

namespace mlir::tidal {
#define GEN_PASS_DEF_TIDALPLANMEMORYPASS
#include "tidal/Dialect/Tidal/Transforms/Passes.h.inc"
} // namespace mlir::tidal

using namespace mlir;
using namespace mlir::tidal;

namespace {

enum class Space { Arena, Constants };
struct Home {
  Space space;
  int64_t offset;
};

struct PlanMemory : tidal::impl::TidalPlanMemoryPassBase<PlanMemory> {
  using TidalPlanMemoryPassBase::TidalPlanMemoryPassBase;

  int64_t align(int64_t n) const {
    return (n + alignment - 1) / alignment * alignment;
  }

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (strategy != "slots") {
      module.emitError() << "tidal-plan-memory: unknown strategy '" << strategy
                         << "' (expected slots)";
      return signalPassFailure();
    }
    if (alignment <= 0 || (alignment & (alignment - 1))) {
      module.emitError() << "tidal-plan-memory: alignment "
                         << static_cast<int64_t>(alignment)
                         << " is not a power of two";
      return signalPassFailure();
    }
    int64_t constantsSize = 0;
    for (auto func : module.getOps<func::FuncOp>()) {
      if (func.isExternal())
        continue;
      if (failed(planFunction(func, constantsSize)))
        return signalPassFailure();
    }
    Builder b(module.getContext());
    module->setAttr(kConstantsSizeAttr, b.getI64IntegerAttr(constantsSize));
  }

  LogicalResult planFunction(func::FuncOp func, int64_t &constantsSize) {
    Builder b(func.getContext());
    llvm::DenseMap<Value, Home> homes;
    int64_t arenaSize = 0;
    auto allocate = [&](Value v, Space space) -> std::optional<int64_t> {
      auto type = dyn_cast<RankedTensorType>(v.getType());
      if (!type || !type.hasStaticShape())
        return std::nullopt;
      int64_t &top = space == Space::Arena ? arenaSize : constantsSize;
      int64_t offset = top;
      top = align(top + std::max<int64_t>(tensorByteSize(type), 1));
      homes[v] = {space, offset};
      ++numSlots;
      return offset;
    };

    for (BlockArgument arg : func.getArguments()) {
      std::optional<int64_t> offset = allocate(arg, Space::Arena);
      if (!offset)
        return emitError(arg.getLoc())
               << "argument " << arg.getArgNumber() << " of @"
               << func.getSymName() << " has no static tensor type";
      func.setArgAttr(arg.getArgNumber(), kOffsetAttr,
                      b.getI64IntegerAttr(*offset));
    }

    WalkResult walk = func.walk([&](Operation *op) -> WalkResult {
      if (isa<func::FuncOp, func::ReturnOp>(op))
        return WalkResult::advance();
      if (isa<GradientOp>(op))
        return op->emitError("tidal.gradient must be expanded by "
                             "tidal-autodiff before memory planning");
      if (op->getNumRegions() != 0)
        return op->emitError("ops with regions cannot be planned");
      SmallVector<int64_t> offsets;
      bool inConstants = isa<ConstantOp>(op);
      if (isViewOp(op)) {
        Home src = homes.lookup(op->getOperand(0));
        homes[op->getResult(0)] = src;
        offsets.push_back(src.offset);
        inConstants = src.space == Space::Constants;
      } else {
        for (Value result : op->getResults()) {
          std::optional<int64_t> offset =
              allocate(result, inConstants ? Space::Constants : Space::Arena);
          if (!offset)
            return op->emitError("result has no static tensor type");
          offsets.push_back(*offset);
        }
      }
      op->setAttr(inConstants ? kConstOffsetsAttr : kOffsetsAttr,
                  b.getDenseI64ArrayAttr(offsets));
      return WalkResult::advance();
    });
    if (walk.wasInterrupted())
      return failure();

    // Results must live in the arena, where the caller reads them; a
    // returned constant gets a slot that the lowering fills.
    SmallVector<int64_t> resultOffsets;
    for (Block &block : func.getBody())
      if (auto ret = dyn_cast<func::ReturnOp>(block.getTerminator()))
        for (Value v : ret.getOperands()) {
          Home home = homes.lookup(v);
          if (home.space == Space::Constants) {
            auto type = cast<RankedTensorType>(v.getType());
            home.offset = arenaSize;
            arenaSize =
                align(arenaSize + std::max<int64_t>(tensorByteSize(type), 1));
          }
          resultOffsets.push_back(home.offset);
        }
    func->setAttr(kResultOffsetsAttr, b.getDenseI64ArrayAttr(resultOffsets));
    func->setAttr(kArenaSizeAttr, b.getI64IntegerAttr(arenaSize));
    return success();
  }
};

} // namespace
