//===- PlanMemory.cpp - give every tensor an arena offset -----------------===//
//
// Strategy `packed`: offsets from the function's liveness (BufferLiveness,
// the block order being the schedule). Buffers live for the whole step sit
// at the bottom of the arena; the others are placed greedily, each in the
// tightest gap between the buffers already placed that overlap it in time,
// once largest first and once longest-lived first; the smaller arena wins.
//
// Strategy `slots`: each tensor its own aligned slot for the whole step, the
// no-reuse baseline.
//
// Both put constants (and views of them) in a module-wide read-only arena
// and give views their operand's offset.
//
//===----------------------------------------------------------------------===//

#include "tidal/Dialect/Tidal/Analysis/BufferLiveness.h"
#include "tidal/Dialect/Tidal/Analysis/OffsetPacking.h"
#include "tidal/Dialect/Tidal/IR/ShapeUtils.h"
#include "tidal/Dialect/Tidal/IR/TidalOps.h"
#include "tidal/Dialect/Tidal/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseMap.h"

#include <algorithm>
#include <numeric>

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

  int64_t align(int64_t n) const { return alignBytes(n, alignment); }

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (strategy != "slots" && strategy != "packed") {
      module.emitError() << "tidal-plan-memory: unknown strategy '" << strategy
                         << "' (expected packed or slots)";
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
      if (failed(checkPlannable(func)))
        return signalPassFailure();
      LogicalResult planned = strategy == "slots"
                                  ? planSlots(func, constantsSize)
                                  : planPacked(func, constantsSize);
      if (failed(planned) || failed(checkArenaSizes(func)))
        return signalPassFailure();
    }
    if (constantsSize > kMaxTensorBytes) {
      module.emitError() << "tidal-plan-memory: the constants need "
                         << constantsSize << " bytes, more than the "
                         << kMaxTensorBytes
                         << " (256 TiB) a 64-bit machine can address";
      return signalPassFailure();
    }
    Builder b(module.getContext());
    module->setAttr(kConstantsSizeAttr, b.getI64IntegerAttr(constantsSize));
  }

  /// Arenas past what a 64-bit machine can address (ShapeUtils.h
  /// kMaxTensorBytes) are an error here, not an allocation that fails at
  /// run time.
  static LogicalResult checkArenaSizes(func::FuncOp func) {
    for (StringRef name : {kArenaSizeAttr, kHostArenaSizeAttr}) {
      auto size = func->getAttrOfType<IntegerAttr>(name);
      if (!size || size.getInt() <= kMaxTensorBytes)
        continue;
      return func.emitError()
             << "tidal-plan-memory: @" << func.getSymName() << " needs "
             << (name == kArenaSizeAttr ? "an" : "a host") << " arena of "
             << size.getInt() << " bytes, more than the " << kMaxTensorBytes
             << " (256 TiB) a 64-bit machine can address";
    }
    return success();
  }

  /// Every tensor must be addressable, and the packers add byte counts in
  /// int64: their total must not overflow.
  static LogicalResult checkTensorSizes(func::FuncOp func) {
    int64_t total = 0;
    auto check = [&](Value v) -> LogicalResult {
      auto type = dyn_cast<RankedTensorType>(v.getType());
      if (!type)
        return success();
      std::optional<int64_t> bytes =
          checkedByteSize(type.getShape(), type.getElementTypeBitWidth());
      if (!bytes) {
        auto diag = (v.getDefiningOp() ? v.getDefiningOp()->emitError()
                                       : func.emitError())
                    << "tidal-plan-memory: " << type
                    << " is too large: its byte count passes 64 bits or the "
                    << kMaxTensorBytes
                    << " (256 TiB) a 64-bit machine can address";
        return diag;
      }
      if (__builtin_add_overflow(total, *bytes + 4096, &total) ||
          total > (int64_t(1) << 62))
        return func.emitError()
               << "tidal-plan-memory: the tensors of @" << func.getSymName()
               << " hold more than 2^62 bytes together; no arena can hold "
                  "them";
      return success();
    };
    for (BlockArgument arg : func.getArguments())
      if (failed(check(arg)))
        return failure();
    WalkResult walk = func.walk([&](Operation *op) {
      for (Value result : op->getResults())
        if (failed(check(result)))
          return WalkResult::interrupt();
      return WalkResult::advance();
    });
    return failure(walk.wasInterrupted());
  }

  LogicalResult checkPlannable(func::FuncOp func) {
    if (failed(checkTensorSizes(func)))
      return failure();
    if (!func.getBody().hasOneBlock())
      return func.emitError("tidal-plan-memory: @")
             << func.getSymName() << " has more than one block";
    for (BlockArgument arg : func.getArguments()) {
      auto type = dyn_cast<RankedTensorType>(arg.getType());
      if (!type || !type.hasStaticShape())
        return emitError(arg.getLoc())
               << "argument " << arg.getArgNumber() << " of @"
               << func.getSymName() << " has no static tensor type";
    }
    WalkResult walk = func.walk([&](Operation *op) -> WalkResult {
      if (isa<func::FuncOp, func::ReturnOp>(op))
        return WalkResult::advance();
      if (isa<GradientOp>(op))
        return op->emitError("tidal.gradient must be expanded by "
                             "tidal-autodiff before memory planning");
      if (op->getNumRegions() != 0)
        return op->emitError("ops with regions cannot be planned");
      for (Value result : op->getResults()) {
        auto type = dyn_cast<RankedTensorType>(result.getType());
        if (!type || !type.hasStaticShape())
          return op->emitError("result has no static tensor type");
      }
      return WalkResult::advance();
    });
    return failure(walk.wasInterrupted());
  }

  /// Constants and views of them: offsets in the constant arena.
  void planConstants(func::FuncOp func, int64_t &constantsSize,
                     DenseMap<Value, int64_t> &constOffsets) {
    Builder b(func.getContext());
    for (Operation &op : func.getBody().front().without_terminator()) {
      if (auto constant = dyn_cast<ConstantOp>(op)) {
        auto type = cast<RankedTensorType>(constant.getType());
        constOffsets[constant.getResult()] = constantsSize;
        constantsSize = align(constantsSize + tensorByteSize(type));
        ++numSlots;
      } else if (isViewOp(&op) && constOffsets.count(op.getOperand(0))) {
        constOffsets[op.getResult(0)] = constOffsets[op.getOperand(0)];
      } else {
        continue;
      }
      op.setAttr(kConstOffsetsAttr,
                 b.getDenseI64ArrayAttr({constOffsets[op.getResult(0)]}));
    }
  }

  LogicalResult planPacked(func::FuncOp func, int64_t &constantsSize) {
    Builder b(func.getContext());
    DenseMap<Value, int64_t> constOffsets;
    planConstants(func, constantsSize, constOffsets);

    BufferLiveness liveness(func, inPlace);
    ArrayRef<Buffer> buffers = liveness.getBuffers();
    // The (device) arena and the host arena of offloaded copies are packed
    // separately; `slot` maps each buffer to its item.
    std::vector<Item> items, hostItems;
    std::vector<unsigned> slot(buffers.size());
    for (const Buffer &buffer : buffers) {
      std::vector<Item> &into = buffer.host ? hostItems : items;
      slot[buffer.id] = into.size();
      into.push_back({align(buffer.bytes), buffer.start, buffer.end});
    }
    // Returned constants are copied into the arena at the return.
    int64_t end = liveness.getEndPosition();
    unsigned firstConstant = items.size();
    for (Value v : liveness.getReturnedConstants())
      items.push_back(
          {align(tensorByteSize(cast<RankedTensorType>(v.getType()))), end,
           end});
    int64_t lowerBound = liveness.lowerBound(alignment);
    int64_t arenaSize = pack(items, end, lowerBound);
    int64_t hostLowerBound = liveness.lowerBound(alignment, /*host=*/true);
    int64_t hostArenaSize = pack(hostItems, end, hostLowerBound);
    numSlots += items.size() + hostItems.size();
    numInPlace += liveness.getInPlaceUses().size();

    auto offsetOf = [&](Value v) {
      const Buffer *buffer = liveness.getBuffer(v);
      return (buffer->host ? hostItems : items)[slot[buffer->id]].offset;
    };
    SmallVector<int64_t> argOffsets;
    for (BlockArgument arg : func.getArguments())
      argOffsets.push_back(offsetOf(arg));
    setArgOffsets(func, argOffsets);
    for (Operation *op : liveness.getOps()) {
      if (op->getNumResults() == 0 || constOffsets.count(op->getResult(0)))
        continue;
      SmallVector<int64_t> offsets;
      for (Value result : op->getResults())
        offsets.push_back(offsetOf(result));
      op->setAttr(kOffsetsAttr, b.getDenseI64ArrayAttr(offsets));
    }
    SmallVector<int64_t> resultOffsets;
    unsigned nextConstant = firstConstant;
    for (Value v : func.getBody().front().getTerminator()->getOperands())
      resultOffsets.push_back(
          liveness.getBuffer(v) ? offsetOf(v) : items[nextConstant++].offset);
    if (!hostItems.empty()) {
      func->setAttr(kHostArenaSizeAttr, b.getI64IntegerAttr(hostArenaSize));
      func->setAttr(kHostLowerBoundAttr, b.getI64IntegerAttr(hostLowerBound));
    }
    func->setAttr(kResultOffsetsAttr, b.getDenseI64ArrayAttr(resultOffsets));
    func->setAttr(kArenaSizeAttr, b.getI64IntegerAttr(arenaSize));
    func->setAttr(kLowerBoundAttr, b.getI64IntegerAttr(lowerBound));
    func->setAttr(kNoReuseSizeAttr,
                  b.getI64IntegerAttr(liveness.noReuseBytes(alignment)));
    return success();
  }

  /// Sets every argument's `tidal.offset` in one update: one setArgAttr
  /// per argument would build (and keep in the context) an array of all
  /// the argument dictionaries each time, quadratic in their number.
  static void setArgOffsets(func::FuncOp func, ArrayRef<int64_t> offsets) {
    Builder b(func.getContext());
    SmallVector<DictionaryAttr> dicts;
    for (auto [i, offset] : llvm::enumerate(offsets)) {
      NamedAttrList attrs(func.getArgAttrDict(i));
      attrs.set(kOffsetAttr, b.getI64IntegerAttr(offset));
      dicts.push_back(attrs.getDictionary(func.getContext()));
    }
    func.setAllArgAttrs(dicts);
  }

  LogicalResult planSlots(func::FuncOp func, int64_t &constantsSize) {
    Builder b(func.getContext());
    for (Operation &op : func.getBody().front())
      if (isCopyOp(&op))
        return op.emitError("tidal-plan-memory: strategy slots does not plan "
                            "swaps (use packed)");
    DenseMap<Value, int64_t> constOffsets;
    planConstants(func, constantsSize, constOffsets);
    DenseMap<Value, int64_t> offsets;
    int64_t arenaSize = 0;
    auto allocate = [&](Value v) {
      auto type = cast<RankedTensorType>(v.getType());
      offsets[v] = arenaSize;
      arenaSize = align(arenaSize + tensorByteSize(type));
      ++numSlots;
      return offsets[v];
    };
    SmallVector<int64_t> argOffsets;
    for (BlockArgument arg : func.getArguments())
      argOffsets.push_back(allocate(arg));
    setArgOffsets(func, argOffsets);
    Block &body = func.getBody().front();
    for (Operation &op : body.without_terminator()) {
      if (op.getNumResults() == 0 || constOffsets.count(op.getResult(0)))
        continue;
      SmallVector<int64_t> resultOffsets;
      if (isViewOp(&op)) {
        offsets[op.getResult(0)] = offsets.lookup(op.getOperand(0));
        resultOffsets.push_back(offsets[op.getResult(0)]);
      } else {
        for (Value result : op.getResults())
          resultOffsets.push_back(allocate(result));
      }
      op.setAttr(kOffsetsAttr, b.getDenseI64ArrayAttr(resultOffsets));
    }
    // Results must live in the arena, where the caller reads them; a
    // returned constant gets a slot that the lowering fills.
    SmallVector<int64_t> resultOffsets;
    for (Value v : body.getTerminator()->getOperands())
      resultOffsets.push_back(offsets.count(v) ? offsets[v] : allocate(v));
    func->setAttr(kResultOffsetsAttr, b.getDenseI64ArrayAttr(resultOffsets));
    func->setAttr(kArenaSizeAttr, b.getI64IntegerAttr(arenaSize));
    return success();
  }
};

} // namespace
