//===- Program.h - from a planned module to an object and executable -*- C++
//-*-===//
//
// The last stages of tidalc: the program manifest (the JSON the executable's
// driver reads), the program globals, LLVM IR, the object file (an LLVM
// TargetMachine for the host) and the link with the runtime.
//
//===----------------------------------------------------------------------===//

#ifndef TIDAL_TARGET_PROGRAM_H
#define TIDAL_TARGET_PROGRAM_H

#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"

#include <memory>
#include <string>
#include <vector>

namespace mlir::tidal {

/// A .npy file compiled into the executable (tidalc --embed-data).
struct EmbeddedData {
  std::string name;
  std::vector<char> bytes;
};

/// What the manifest says beyond what the planned IR holds.
struct ProgramInfo {
  std::string modelName;      // the ONNX file's base name
  std::string mode = "train"; // train or forward
  std::string target = "cpu"; // cpu, or sim: the step runs on the device
  std::string loss;           // cross-entropy, mse or output
  int64_t batchSize = 0;
  std::string stepFunc = "train_step";
  std::string predictFunc = "predict";
  std::string optimizerJson = "{}"; // a JSON object, informational
  /// Data parallel (tidalc --distributed): the backend ("" for one
  /// process), the number of ranks; batchSize is then each rank's share.
  std::string distributed;
  int64_t ranks = 1;
  /// The host's parallel grain from the --device-profile (0: none; the
  /// manifest then has no "parallel_grain" and the runtime keeps its
  /// default).
  int64_t parallelGrain = 0;
  std::vector<char> modelBytes;
  std::vector<EmbeddedData> embedded;
};

/// The manifest JSON of a planned (not yet lowered) module.
FailureOr<std::string> buildManifest(ModuleOp planned, const ProgramInfo &info);

/// Adds tidal_program_manifest, tidal_program_blob and
/// tidal_program_blob_size to a lowered (LLVM dialect) module.
void addProgramGlobals(ModuleOp lowered, llvm::StringRef manifest,
                       const ProgramInfo &info);

/// LLVM IR for a lowered module, with the host's triple and data layout.
FailureOr<std::unique_ptr<llvm::Module>>
translateToLLVMIR(ModuleOp lowered, llvm::LLVMContext &llvmContext);

/// An object file for the host CPU, in memory.
FailureOr<llvm::SmallVector<char, 0>> emitObject(llvm::Module &module,
                                                 std::string &error);

/// Links `objectPath` with the runtime and the driver into `outputPath`
/// (written atomically). `error` says what failed.
/// `cuda`: a --target cuda program, which also links the CUDA runtime
/// (fails, saying so, when tidal was built without nvcc).
/// `sharedLibrary`: a shared library exporting the trainer ABI
/// (tidalrt/trainer.h, `tidalc --emit lib`) instead of an executable.
/// `mpi`: a --distributed mpi program, which also links tidalrt_mpi and MPI.
LogicalResult linkExecutable(llvm::StringRef objectPath,
                             llvm::StringRef outputPath, llvm::StringRef argv0,
                             bool cuda, std::string &error,
                             bool sharedLibrary = false, bool mpi = false);
/// Whether this tidalc can link --target cuda executables.
bool canLinkCuda();
/// Whether this tidalc can link --distributed mpi executables.
bool canLinkMpi();
/// Whether the CUDA runtime has the NCCL collectives (--distributed nccl).
bool canLinkNccl();

} // namespace mlir::tidal

#endif // TIDAL_TARGET_PROGRAM_H
