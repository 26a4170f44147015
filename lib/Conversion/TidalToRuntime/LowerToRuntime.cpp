//===- LowerToRuntime.cpp - planned tidal functions to runtime calls ------===//

#include "tidal/Conversion/TidalToRuntime/Descriptor.h"

#include "tidal/Conversion/Passes.h"
#include "tidal/Conversion/TidalToRuntime/KernelOps.h"
#include "tidal/Dialect/Tidal/Analysis/BufferLiveness.h"
#include "tidal/Dialect/Tidal/IR/TidalOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/DenseMap.h"

#include <cstring>

namespace mlir::tidal {
#define GEN_PASS_DEF_TIDALLOWERTORUNTIMEPASS
#include "tidal/Conversion/Passes.h.inc"
} // namespace mlir::tidal

using namespace mlir;
using namespace mlir::tidal;

static constexpr llvm::StringLiteral kConstantsGlobal = "__tidal_constants";

namespace {

/// Where a value's bytes are: the function's arena, the constant arena, or
/// (tidal-place) the host arena of a device program.
struct Home {
  bool constant = false;
  bool host = false;
  int64_t offset = 0;
};

struct LowerToRuntime
    : tidal::impl::TidalLowerToRuntimePassBase<LowerToRuntime> {
  using TidalLowerToRuntimePassBase::TidalLowerToRuntimePassBase;

  void runOnOperation() override;

private:
  LogicalResult fillConstants(ModuleOp module, std::vector<char> &bytes);
  LLVM::LLVMFuncOp declare(OpBuilder &b, ModuleOp module, StringRef name,
                           Type result, ArrayRef<Type> params);
  FailureOr<LLVM::LLVMFuncOp>
  lowerFunction(ModuleOp module, func::FuncOp func, StringRef symbol,
                llvm::DenseMap<Operation *, int64_t> &indices, bool onDevice);
  void emitEmptyFunction(ModuleOp module, StringRef symbol);
};

} // namespace

LLVM::LLVMFuncOp LowerToRuntime::declare(OpBuilder &b, ModuleOp module,
                                         StringRef name, Type result,
                                         ArrayRef<Type> params) {
  if (auto f = module.lookupSymbol<LLVM::LLVMFuncOp>(name))
    return f;
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(module.getBody());
  return b.create<LLVM::LLVMFuncOp>(
      module.getLoc(), name, LLVM::LLVMFunctionType::get(result, params));
}

LogicalResult LowerToRuntime::fillConstants(ModuleOp module,
                                            std::vector<char> &bytes) {
  auto size = module->getAttrOfType<IntegerAttr>(kConstantsSizeAttr);
  if (!size)
    return module.emitError("tidal-lower-to-runtime needs a memory plan "
                            "(run tidal-plan-memory first)");
  bytes.assign(size.getInt(), 0);
  WalkResult walk = module.walk([&](ConstantOp op) -> WalkResult {
    auto offsets = op->getAttrOfType<DenseI64ArrayAttr>(kConstOffsetsAttr);
    auto value = dyn_cast<DenseElementsAttr>(op.getValue());
    if (!offsets || offsets.size() != 1)
      return op.emitError("constant has no planned offset");
    if (!value)
      return op.emitError("only dense constants can be compiled");
    auto type = cast<ShapedType>(value.getType());
    int64_t offset = offsets[0];
    int64_t n = type.getNumElements();
    int64_t width = (type.getElementTypeBitWidth() + 7) / 8;
    if (offset < 0 || offset + n * width > (int64_t)bytes.size())
      return op.emitError("constant lies outside the constant arena");
    char *dst = bytes.data() + offset;
    Type elementType = type.getElementType();
    if (elementType.isInteger(1)) {
      int64_t i = 0;
      for (bool b : value.getValues<bool>())
        dst[i++] = b ? 1 : 0;
    } else if (!value.isSplat()) {
      ArrayRef<char> raw = value.getRawData();
      if ((int64_t)raw.size() != n * width)
        return op.emitError("unexpected constant storage");
      std::memcpy(dst, raw.data(), raw.size());
    } else {
      ArrayRef<char> raw = value.getRawData();
      for (int64_t i = 0; i < n; ++i)
        std::memcpy(dst + i * width, raw.data(), width);
    }
    return WalkResult::advance();
  });
  return failure(walk.wasInterrupted());
}

void LowerToRuntime::emitEmptyFunction(ModuleOp module, StringRef symbol) {
  OpBuilder b(module.getContext());
  b.setInsertionPointToEnd(module.getBody());
  auto ptr = LLVM::LLVMPointerType::get(module.getContext());
  auto fn = b.create<LLVM::LLVMFuncOp>(
      module.getLoc(), symbol, LLVM::LLVMFunctionType::get(ptr, {ptr, ptr}));
  Block *entry = fn.addEntryBlock(b);
  b.setInsertionPointToStart(entry);
  Value null = b.create<LLVM::ZeroOp>(module.getLoc(), ptr);
  b.create<LLVM::ReturnOp>(module.getLoc(), null);
}

FailureOr<LLVM::LLVMFuncOp> LowerToRuntime::lowerFunction(
    ModuleOp module, func::FuncOp func, StringRef symbol,
    llvm::DenseMap<Operation *, int64_t> &indices, bool onDevice) {
  MLIRContext *ctx = module.getContext();
  OpBuilder b(ctx);
  Location loc = func.getLoc();
  auto ptr = LLVM::LLVMPointerType::get(ctx);
  auto i8 = IntegerType::get(ctx, 8);
  auto i64 = IntegerType::get(ctx, 64);

  // Homes of every value, from the plan.
  llvm::DenseMap<Value, Home> homes;
  for (BlockArgument arg : func.getArguments()) {
    auto offset =
        func.getArgAttrOfType<IntegerAttr>(arg.getArgNumber(), kOffsetAttr);
    if (!offset)
      return func.emitError("argument ")
             << arg.getArgNumber() << " has no planned offset";
    homes[arg] = {false, isHostArgument(func, arg.getArgNumber()),
                  offset.getInt()};
  }
  bool anyHost = llvm::any_of(func.getArguments(), [&](BlockArgument arg) {
    return homes.lookup(arg).host;
  });
  int64_t maxTensors = 1;
  WalkResult walk = func.walk([&](Operation *op) -> WalkResult {
    if (isa<func::ReturnOp>(op) || op == func)
      return WalkResult::advance();
    bool constant = true;
    auto offsets = op->getAttrOfType<DenseI64ArrayAttr>(kConstOffsetsAttr);
    if (!offsets) {
      constant = false;
      offsets = op->getAttrOfType<DenseI64ArrayAttr>(kOffsetsAttr);
    }
    if (!offsets || offsets.size() != (int64_t)op->getNumResults())
      return op->emitError("op has no planned offsets");
    // Host bytes: host-placed ops' results, offloaded copies, and views of
    // (and waits for) host values.
    bool host = isHostPlaced(op) || isa<OffloadOp>(op) ||
                ((isViewOp(op) || isa<WaitOp>(op)) &&
                 homes.lookup(op->getOperand(0)).host);
    anyHost |= host && !isa<OffloadOp>(op);
    for (auto [result, offset] :
         llvm::zip(op->getResults(), offsets.asArrayRef()))
      homes[result] = {constant, host, offset};
    if ((isCopyOp(op) || isHostPlaced(op)) && !onDevice)
      return op->emitError(isCopyOp(op) ? "swaps need a device: lower with "
                                          "device=true"
                                        : "a host-placed op needs a device "
                                          "program: lower with device=true");
    if (isKernelCall(op))
      for (Value operand : op->getOperands())
        if (homes.count(operand) && !homes.lookup(operand).constant &&
            homes.lookup(operand).host != isHostPlaced(op))
          return op->emitError() << "reads a tensor in "
                                 << (isHostPlaced(op) ? "device" : "host")
                                 << " memory but runs on the "
                                 << (isHostPlaced(op) ? "host" : "device")
                                 << " (tidal-place inserts the copies)";
    if (isKernelCall(op)) {
      if (!hasRuntimeKernel(op->getName().stripDialect()))
        return op->emitError()
               << "'" << op->getName() << "' has no kernel in the CPU runtime";
      maxTensors = std::max<int64_t>(maxTensors, kernelTensors(op).size());
    }
    return WalkResult::advance();
  });
  if (walk.wasInterrupted())
    return failure();
  auto resultOffsets =
      func->getAttrOfType<DenseI64ArrayAttr>(kResultOffsetsAttr);
  if (!resultOffsets)
    return func.emitError("function has no planned result offsets");

  auto failAt = declare(b, module, "tidalrt_context_fail_at",
                        LLVM::LLVMVoidType::get(ctx), {ptr, i64});

  b.setInsertionPointToEnd(module.getBody());
  auto fn = b.create<LLVM::LLVMFuncOp>(
      loc, symbol, LLVM::LLVMFunctionType::get(ptr, {ptr, ptr}));
  Block *entry = fn.addEntryBlock(b);
  Value context = entry->getArgument(0);
  Value arena = entry->getArgument(1);

  // A failure that names no op (a copy, the final synchronization, whose
  // failing kernel the runtime has already recorded): return its status.
  Block *returnStatus = new Block();
  fn.getBody().push_back(returnStatus);
  returnStatus->addArgument(ptr, loc);
  b.setInsertionPointToStart(returnStatus);
  b.create<LLVM::ReturnOp>(loc, returnStatus->getArgument(0));

  // One shared failure exit: record the op, return its status.
  Block *failBlock = new Block();
  fn.getBody().push_back(failBlock);
  failBlock->addArgument(ptr, loc);
  failBlock->addArgument(i64, loc);
  b.setInsertionPointToStart(failBlock);
  b.create<LLVM::CallOp>(loc, failAt,
                         ValueRange{context, failBlock->getArgument(1)});
  b.create<LLVM::ReturnOp>(loc, failBlock->getArgument(0));

  b.setInsertionPointToStart(entry);
  Value count = b.create<LLVM::ConstantOp>(loc, i64, maxTensors);
  Value buffers = b.create<LLVM::AllocaOp>(loc, ptr, ptr, count, 8);
  Value null = b.create<LLVM::ZeroOp>(loc, ptr);
  Value constants;
  for (unsigned i = 0; i < func.getNumResults(); ++i)
    anyHost |= isHostResult(func, i);
  // The host arena of a program with host-placed tensors.
  Value hostArena;
  if (anyHost) {
    auto hostArenaFn = declare(b, module, "tidalrt_dev_host_arena", ptr, {ptr});
    hostArena = b.create<LLVM::CallOp>(loc, hostArenaFn, ValueRange{context})
                    .getResult();
  }
  // Offsets are 64-bit: arenas may exceed 2 GiB.
  auto byteOffset = [&](Value base, int64_t offset) -> Value {
    if (offset == 0)
      return base;
    Value index = b.create<LLVM::ConstantOp>(loc, i64, offset);
    return b.create<LLVM::GEPOp>(loc, ptr, i8, base,
                                 ArrayRef<LLVM::GEPArg>{index});
  };
  // The constants as device kernels read them: on CUDA a device copy
  // (tidalrt_dev_constants), made by the first step that needs it.
  Value deviceConstants;
  auto constantsFor = [&](bool hostSide) -> Value {
    if (!constants)
      constants = b.create<LLVM::AddressOfOp>(loc, ptr, kConstantsGlobal);
    if (!onDevice || hostSide)
      return constants;
    if (!deviceConstants) {
      auto global = module.lookupSymbol<LLVM::GlobalOp>(kConstantsGlobal);
      int64_t bytes =
          cast<LLVM::LLVMArrayType>(global.getType()).getNumElements();
      Value slot;
      {
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPointToStart(entry);
        Value one = b.create<LLVM::ConstantOp>(loc, i64, 1);
        slot = b.create<LLVM::AllocaOp>(loc, ptr, ptr, one, 8);
      }
      auto uploadFn = declare(b, module, "tidalrt_dev_constants", ptr,
                              {ptr, ptr, i64, ptr});
      Value size = b.create<LLVM::ConstantOp>(loc, i64, bytes);
      Value status =
          b.create<LLVM::CallOp>(loc, uploadFn,
                                 ValueRange{context, constants, size, slot})
              .getResult();
      Value failed =
          b.create<LLVM::ICmpOp>(loc, LLVM::ICmpPredicate::ne, status, null);
      Block *next = new Block();
      fn.getBody().push_back(next);
      b.create<LLVM::CondBrOp>(loc, failed, returnStatus, ValueRange{status},
                               next, ValueRange{});
      b.setInsertionPointToStart(next);
      deviceConstants = b.create<LLVM::LoadOp>(loc, ptr, slot);
    }
    return deviceConstants;
  };
  // `hostSide`: for a kernel that runs on the host (host-placed, or the
  // copies of results at the end), which reads the constants in place.
  auto address = [&](Value v, bool hostSide = false) -> Value {
    if (!v)
      return null;
    Home home = homes.lookup(v);
    Value base = home.host ? hostArena : arena;
    if (home.constant)
      base = constantsFor(hostSide);
    return byteOffset(base, home.offset);
  };

  // Device mode: the copies, numbered in block order.
  llvm::DenseMap<Operation *, int64_t> copyIds;
  auto checked = [&](Location opLoc, Value status) {
    Value failed =
        b.create<LLVM::ICmpOp>(opLoc, LLVM::ICmpPredicate::ne, status, null);
    Block *next = new Block();
    fn.getBody().push_back(next);
    b.create<LLVM::CondBrOp>(opLoc, failed, returnStatus, ValueRange{status},
                             next, ValueRange{});
    b.setInsertionPointToStart(next);
  };
  auto constant = [&](Location opLoc, int64_t value) -> Value {
    return b.create<LLVM::ConstantOp>(opLoc, i64, value);
  };
  auto bytesOf = [](Value v) {
    return tensorByteSize(cast<ShapedType>(v.getType()));
  };

  SmallVector<Operation *> calls;
  func.walk([&](Operation *op) {
    if (isKernelCall(op) || (onDevice && isCopyOp(op)))
      calls.push_back(op);
  });
  for (Operation *op : calls) {
    Location opLoc = op->getLoc();
    if (isa<OffloadOp, PrefetchOp>(op)) {
      int64_t id = copyIds.size();
      copyIds[op] = id;
      bool toHost = isa<OffloadOp>(op);
      Value device = toHost ? op->getOperand(0) : op->getResult(0);
      Value host = toHost ? op->getResult(0) : op->getOperand(0);
      auto copy = declare(
          b, module, toHost ? "tidalrt_dev_offload" : "tidalrt_dev_prefetch",
          ptr, {ptr, i64, i64, i64, i64});
      Value status =
          b.create<LLVM::CallOp>(
               opLoc, copy,
               ValueRange{context, constant(opLoc, id),
                          constant(opLoc, homes.lookup(host).offset),
                          constant(opLoc, homes.lookup(device).offset),
                          constant(opLoc, bytesOf(device))})
              .getResult();
      checked(opLoc, status);
      continue;
    }
    if (auto wait = dyn_cast<WaitOp>(op)) {
      auto waitFn = declare(b, module, "tidalrt_dev_wait", ptr, {ptr, i64});
      int64_t id = copyIds.lookup(wait.getInput().getDefiningOp());
      Value status =
          b.create<LLVM::CallOp>(opLoc, waitFn,
                                 ValueRange{context, constant(opLoc, id)})
              .getResult();
      checked(opLoc, status);
      continue;
    }
    int64_t index = indices.lookup(op);
    FailureOr<SmallVector<int64_t>> words = encodeDescriptor(op, index);
    if (failed(words))
      return failure();
    std::string descName = ("__tidal_desc_" + Twine(index)).str();
    auto constantArray = [&](StringRef name, ArrayRef<int64_t> values) {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(module.getBody());
      auto type = RankedTensorType::get({(int64_t)values.size()}, i64);
      b.create<LLVM::GlobalOp>(loc,
                               LLVM::LLVMArrayType::get(i64, values.size()),
                               /*isConstant=*/true, LLVM::Linkage::Private,
                               name, DenseElementsAttr::get(type, values));
    };
    constantArray(descName, *words);
    SmallVector<Value> tensors = kernelTensors(op);
    bool hostSide = isHostPlaced(op);
    // Any device copy of the constants first: it may end the block.
    for (Value v : tensors)
      if (v && homes.lookup(v).constant)
        constantsFor(hostSide);
    for (auto [i, v] : llvm::enumerate(tensors)) {
      Value slot = b.create<LLVM::GEPOp>(opLoc, ptr, ptr, buffers,
                                         ArrayRef<LLVM::GEPArg>{(int32_t)i});
      b.create<LLVM::StoreOp>(opLoc, address(v, hostSide), slot);
    }
    Value desc = b.create<LLVM::AddressOfOp>(opLoc, ptr, descName);
    std::string kernelName =
        ("tidalrt_k_" + op->getName().stripDialect()).str();
    auto kernel = declare(b, module, kernelName, ptr, {ptr, ptr, ptr});
    Value status;
    if (onDevice && isHostPlaced(op)) {
      // On the host: ordered after every copy enqueued before it and before
      // every copy enqueued after it (tidalrt/device.h).
      auto launchHost = declare(b, module, "tidalrt_dev_launch_host", ptr,
                                {ptr, ptr, ptr, ptr, i64, i64});
      Value kernelPtr = b.create<LLVM::AddressOfOp>(opLoc, ptr, kernelName);
      status =
          b.create<LLVM::CallOp>(opLoc, launchHost,
                                 ValueRange{context, kernelPtr, desc, buffers,
                                            constant(opLoc, tensors.size()),
                                            constant(opLoc, index)})
              .getResult();
    } else if (onDevice) {
      // The device byte ranges the kernel reads, then writes.
      SmallVector<int64_t> ranges;
      int64_t reads = 0, writes = 0;
      auto addRange = [&](Value v, int64_t &count) {
        Home home = homes.lookup(v);
        if (!v || home.constant)
          return;
        ranges.push_back(home.offset);
        ranges.push_back(bytesOf(v));
        ++count;
      };
      for (Value v : op->getOperands())
        addRange(v, reads);
      for (Value v : op->getResults())
        addRange(v, writes);
      std::string rangesName = ("__tidal_ranges_" + Twine(index)).str();
      if (ranges.empty())
        ranges.push_back(0);
      constantArray(rangesName, ranges);
      auto launch = declare(b, module, "tidalrt_dev_launch", ptr,
                            {ptr, ptr, ptr, ptr, i64, i64, ptr, i64, i64});
      Value kernelPtr = b.create<LLVM::AddressOfOp>(opLoc, ptr, kernelName);
      Value rangesPtr = b.create<LLVM::AddressOfOp>(opLoc, ptr, rangesName);
      status = b.create<LLVM::CallOp>(
                    opLoc, launch,
                    ValueRange{context, kernelPtr, desc, buffers,
                               constant(opLoc, tensors.size()),
                               constant(opLoc, index), rangesPtr,
                               constant(opLoc, reads), constant(opLoc, writes)})
                   .getResult();
    } else {
      status = b.create<LLVM::CallOp>(opLoc, kernel,
                                      ValueRange{context, desc, buffers})
                   .getResult();
    }
    Value failed =
        b.create<LLVM::ICmpOp>(opLoc, LLVM::ICmpPredicate::ne, status, null);
    Block *next = new Block();
    fn.getBody().push_back(next);
    Value indexValue = b.create<LLVM::ConstantOp>(opLoc, i64, index);
    b.create<LLVM::CondBrOp>(opLoc, failed, failBlock,
                             ValueRange{status, indexValue}, next,
                             ValueRange{});
    b.setInsertionPointToStart(next);
    ++numKernelCalls;
  }
  if (onDevice) {
    // Everything the step enqueued has run before the caller reads the
    // arena.
    auto sync = declare(b, module, "tidalrt_dev_synchronize", ptr, {ptr});
    checked(loc,
            b.create<LLVM::CallOp>(loc, sync, ValueRange{context}).getResult());
  }

  // Results the plan put outside the arena (constants) are copied in.
  auto ret = cast<func::ReturnOp>(func.getBody().back().getTerminator());
  for (auto [i, v, offset] :
       llvm::enumerate(ret.getOperands(), resultOffsets.asArrayRef())) {
    Home home = homes.lookup(v);
    bool hostResult = isHostResult(func, i);
    if (!home.constant && home.host == hostResult && home.offset == offset)
      continue;
    Value dst = byteOffset(hostResult ? hostArena : arena, offset);
    Value len = b.create<LLVM::ConstantOp>(
        loc, i64, tensorByteSize(cast<ShapedType>(v.getType())));
    b.create<LLVM::MemcpyOp>(loc, dst, address(v, /*hostSide=*/true), len,
                             /*isVolatile=*/false);
  }
  b.create<LLVM::ReturnOp>(loc, null);
  return fn;
}

void LowerToRuntime::runOnOperation() {
  ModuleOp module = getOperation();
  MLIRContext *ctx = module.getContext();
  // Random draws are keyed by stream, not by op index (tidal-schedule numbers
  // the streams before it reorders; this numbers unscheduled programs).
  for (auto func : module.getOps<func::FuncOp>())
    assignRandomStreams(func);

  std::vector<char> constantBytes;
  if (failed(fillConstants(module, constantBytes)))
    return signalPassFailure();

  llvm::DenseMap<Operation *, int64_t> indices;
  forEachKernelCall(module,
                    [&](Operation *op, int64_t index) { indices[op] = index; });

  SymbolTable symbols(module);
  auto step = symbols.lookup<func::FuncOp>(stepFunc);
  if (!step) {
    module.emitError() << "tidal-lower-to-runtime: no function @" << stepFunc;
    return signalPassFailure();
  }
  auto predict = symbols.lookup<func::FuncOp>(predictFunc);

  // The constant arena, 64-byte aligned like every tensor.
  {
    OpBuilder b(ctx);
    b.setInsertionPointToStart(module.getBody());
    auto i8 = IntegerType::get(ctx, 8);
    int64_t n = std::max<int64_t>(constantBytes.size(), 1);
    constantBytes.resize(n, 0);
    auto global = b.create<LLVM::GlobalOp>(
        module.getLoc(), LLVM::LLVMArrayType::get(i8, n), /*isConstant=*/true,
        LLVM::Linkage::Internal, kConstantsGlobal,
        DenseElementsAttr::getFromRawBuffer(RankedTensorType::get({n}, i8),
                                            constantBytes));
    global.setAlignment(64);
  }

  if (failed(
          lowerFunction(module, step, "tidal_program_step", indices, device)))
    return signalPassFailure();
  if (predict) {
    if (failed(lowerFunction(module, predict, "tidal_program_predict", indices,
                             /*onDevice=*/false)))
      return signalPassFailure();
  } else {
    emitEmptyFunction(module, "tidal_program_predict");
  }

  for (auto func : llvm::make_early_inc_range(module.getOps<func::FuncOp>()))
    func.erase();
  module->removeAttr(kConstantsSizeAttr);
}
