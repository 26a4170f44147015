//===- ObjectEmitter.cpp - program globals, LLVM IR, host object file -----===//

#include "tidal/Target/Program.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/Builders.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/Target/TargetOptions.h"
#include "llvm/TargetParser/Host.h"

using namespace mlir;
using namespace mlir::tidal;

static void addByteGlobal(OpBuilder &b, Location loc, StringRef name,
                          ArrayRef<char> bytes, unsigned alignment) {
  auto i8 = b.getIntegerType(8);
  std::vector<char> data(bytes.begin(), bytes.end());
  if (data.empty())
    data.push_back(0);
  int64_t n = data.size();
  auto global = b.create<LLVM::GlobalOp>(
      loc, LLVM::LLVMArrayType::get(i8, n), /*isConstant=*/true,
      LLVM::Linkage::External, name,
      DenseElementsAttr::getFromRawBuffer(RankedTensorType::get({n}, i8),
                                          data));
  global.setAlignment(alignment);
}

void tidal::addProgramGlobals(ModuleOp lowered, StringRef manifest,
                              const ProgramInfo &info) {
  OpBuilder b(lowered.getContext());
  b.setInsertionPointToEnd(lowered.getBody());
  Location loc = lowered.getLoc();
  std::vector<char> text(manifest.begin(), manifest.end());
  text.push_back('\0');
  addByteGlobal(b, loc, "tidal_program_manifest", text, 1);

  // The blob: the model, then each embedded file, each 64-byte aligned (the
  // offsets buildManifest wrote).
  std::vector<char> blob(info.modelBytes.begin(), info.modelBytes.end());
  for (const EmbeddedData &data : info.embedded) {
    blob.resize((blob.size() + 63) / 64 * 64, 0);
    blob.insert(blob.end(), data.bytes.begin(), data.bytes.end());
  }
  uint64_t blobSize = blob.size();
  addByteGlobal(b, loc, "tidal_program_blob", blob, 64);
  auto i64 = b.getI64Type();
  b.create<LLVM::GlobalOp>(loc, i64, /*isConstant=*/true,
                           LLVM::Linkage::External, "tidal_program_blob_size",
                           b.getI64IntegerAttr(blobSize));
}

static llvm::TargetMachine *hostTargetMachine(std::string &error) {
  static std::once_flag once;
  std::call_once(once, [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
  });
  std::string triple = llvm::sys::getDefaultTargetTriple();
  const llvm::Target *target =
      llvm::TargetRegistry::lookupTarget(triple, error);
  if (!target)
    return nullptr;
  llvm::TargetOptions options;
  // The code is a sequence of calls; generic x86-64 keeps the executable
  // portable and the host CPU's features matter only inside the runtime.
  return target->createTargetMachine(triple, "x86-64", "", options,
                                     llvm::Reloc::PIC_, std::nullopt,
                                     llvm::CodeGenOptLevel::Less);
}

FailureOr<std::unique_ptr<llvm::Module>>
tidal::translateToLLVMIR(ModuleOp lowered, llvm::LLVMContext &llvmContext) {
  DialectRegistry registry;
  registerBuiltinDialectTranslation(registry);
  registerLLVMDialectTranslation(registry);
  lowered.getContext()->appendDialectRegistry(registry);
  std::unique_ptr<llvm::Module> module =
      translateModuleToLLVMIR(lowered, llvmContext, "tidal_program");
  if (!module)
    return failure();
  std::string error;
  std::unique_ptr<llvm::TargetMachine> tm(hostTargetMachine(error));
  if (!tm)
    return lowered.emitError() << "no LLVM target for this host: " << error;
  module->setTargetTriple(tm->getTargetTriple().str());
  module->setDataLayout(tm->createDataLayout());
  return module;
}

FailureOr<llvm::SmallVector<char, 0>> tidal::emitObject(llvm::Module &module,
                                                        std::string &error) {
  std::unique_ptr<llvm::TargetMachine> tm(hostTargetMachine(error));
  if (!tm)
    return failure();
  llvm::SmallVector<char, 0> buffer;
  llvm::raw_svector_ostream os(buffer);
  llvm::legacy::PassManager pm;
  if (tm->addPassesToEmitFile(pm, os, nullptr,
                              llvm::CodeGenFileType::ObjectFile)) {
    error = "the host target cannot emit object files";
    return failure();
  }
  pm.run(module);
  return buffer;
}
