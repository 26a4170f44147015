//===- KernelOps.cpp - which ops become runtime kernel calls --------------===//

#include "tidal/Conversion/TidalToRuntime/KernelOps.h"
#include "tidal/Dialect/Tidal/IR/TidalOps.h"

#include "tidalrt/kernel_list.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/StringSet.h"

using namespace mlir;
using namespace mlir::tidal;

bool tidal::hasRuntimeKernel(StringRef opName) {
#define TIDAL_KERNEL_NAME(name) #name,
  static const llvm::StringSet<> names = {
      TIDALRT_KERNEL_LIST(TIDAL_KERNEL_NAME)};
#undef TIDAL_KERNEL_NAME
  return names.contains(opName);
}

bool tidal::isKernelCall(Operation *op) {
  return op->getDialect() && isa<TidalDialect>(op->getDialect()) &&
         !isViewOp(op) && !isa<ConstantOp, OffloadOp, PrefetchOp, WaitOp>(op);
}

void tidal::forEachKernelCall(ModuleOp module,
                              function_ref<void(Operation *, int64_t)> fn) {
  int64_t index = 0;
  for (auto func : module.getOps<func::FuncOp>())
    func.walk([&](Operation *op) {
      if (isKernelCall(op))
        fn(op, index++);
    });
}

std::optional<int64_t> tidal::runtimeElementType(Type type) {
  if (type.isF32())
    return 1;
  if (type.isF64())
    return 11;
  if (type.isF16())
    return 10;
  if (type.isBF16())
    return 16;
  if (auto i = dyn_cast<IntegerType>(type)) {
    bool isUnsigned = i.isUnsigned();
    switch (i.getWidth()) {
    case 1:
      return 9;
    case 8:
      return isUnsigned ? 2 : 3;
    case 16:
      return isUnsigned ? 4 : 5;
    case 32:
      return isUnsigned ? 12 : 6;
    case 64:
      return isUnsigned ? 13 : 7;
    default:
      return std::nullopt;
    }
  }
  return std::nullopt;
}

StringRef tidal::numpyTypeName(Type type) {
  std::optional<int64_t> code = runtimeElementType(type);
  if (!code)
    return "";
  switch (*code) {
  case 1:
    return "float32";
  case 2:
    return "uint8";
  case 3:
    return "int8";
  case 4:
    return "uint16";
  case 5:
    return "int16";
  case 6:
    return "int32";
  case 7:
    return "int64";
  case 9:
    return "bool";
  case 10:
    return "float16";
  case 11:
    return "float64";
  case 12:
    return "uint32";
  case 13:
    return "uint64";
  case 16:
    return "bfloat16";
  }
  return "";
}

std::string tidal::opDisplayName(Operation *op) {
  Location loc = op->getLoc();
  if (auto fused = dyn_cast<FusedLoc>(loc))
    for (Location inner : fused.getLocations())
      if (isa<NameLoc>(inner)) {
        loc = inner;
        break;
      }
  if (auto name = dyn_cast<NameLoc>(loc))
    return name.getName().str();
  return op->getName().getStringRef().str();
}
