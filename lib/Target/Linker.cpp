//===- Linker.cpp - link the program object with the runtime --------------===//
//
// The system C++ driver (`c++`, or $TIDAL_CXX) links the object with the
// runtime's static libraries, found next to tidalc (../lib) or in
// $TIDAL_RUNTIME_DIR, and their shared dependencies (oneDNN, OpenMP, ONNX's
// protobuf), whose paths CMake recorded at build time.
//
//===----------------------------------------------------------------------===//

#include "tidal/Target/Program.h"
#include "tidal/Target/RuntimeConfig.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace mlir::tidal;

static std::string runtimeDir(StringRef argv0) {
  if (std::optional<std::string> dir =
          llvm::sys::Process::GetEnv("TIDAL_RUNTIME_DIR"))
    return *dir;
  static int anchor;
  std::string exe =
      llvm::sys::fs::getMainExecutable(argv0.str().c_str(), (void *)&anchor);
  llvm::SmallString<256> dir(llvm::sys::path::parent_path(exe));
  llvm::sys::path::append(dir, "..", "lib");
  return std::string(dir);
}

bool tidal::canLinkCuda() { return StringRef(TIDAL_CUDA_LINK_LIBS) != ""; }
bool tidal::canLinkMpi() { return StringRef(TIDAL_MPI_LINK_LIBS) != ""; }
bool tidal::canLinkNccl() { return TIDAL_HAVE_NCCL != 0; }

LogicalResult tidal::linkExecutable(StringRef objectPath, StringRef outputPath,
                                    StringRef argv0, bool cuda,
                                    std::string &error, bool sharedLibrary,
                                    bool mpi) {
  if (cuda && !canLinkCuda()) {
    error = "this tidalc was built without CUDA (no nvcc at build time), so "
            "it cannot link a --target cuda executable; --emit plan, mlir, "
            "llvm and obj work, or use --target sim";
    return failure();
  }
  std::string cxxName = llvm::sys::Process::GetEnv("TIDAL_CXX").value_or("c++");
  llvm::ErrorOr<std::string> cxx = llvm::sys::findProgramByName(cxxName);
  if (!cxx) {
    error = "cannot find the C++ compiler driver '" + cxxName +
            "' to link the executable (set TIDAL_CXX)";
    return failure();
  }
  std::string dir = runtimeDir(argv0);
  StringRef entryLib = sharedLibrary ? "tidalrt_lib" : "tidalrt_main";
  SmallVector<StringRef> runtimeLibs = {entryLib, "tidalrt_driver", "tidalrt"};
  if (cuda)
    runtimeLibs.push_back("tidalrt_cuda");
  if (mpi && !canLinkMpi()) {
    error = "this tidalc was built without MPI (no libopenmpi-dev at build "
            "time), so it cannot link a --distributed mpi executable";
    return failure();
  }
  if (mpi)
    runtimeLibs.push_back("tidalrt_mpi");
  for (StringRef lib : runtimeLibs) {
    llvm::SmallString<256> path(dir);
    llvm::sys::path::append(path, "lib" + lib + ".a");
    if (!llvm::sys::fs::exists(path)) {
      error = ("the runtime library " + path +
               " is missing (set TIDAL_RUNTIME_DIR to the folder holding "
               "libtidalrt.a)")
                  .str();
      return failure();
    }
  }

  // Link to a temporary name beside the output, then rename: no partial
  // executable is ever visible under the output name.
  llvm::SmallString<256> temp(outputPath);
  temp += ".tmp." + std::to_string(llvm::sys::Process::getProcessId());
  std::vector<std::string> args = {*cxx, "-o", std::string(temp),
                                   std::string(objectPath), "-L" + dir};
  llvm::SmallString<256> versionScript;
  if (sharedLibrary) {
    // Only the trainer ABI (tidalrt/trainer.h) is exported: the runtime
    // inside stays private, so that libraries of several models load
    // side by side.
    int fd;
    if (std::error_code ec = llvm::sys::fs::createTemporaryFile(
            "tidal-exports", "map", fd, versionScript)) {
      error = "cannot create a temporary file: " + ec.message();
      return failure();
    }
    llvm::raw_fd_ostream os(fd, /*shouldClose=*/true);
    os << "{ global: tidalrt_trainer_abi_version; tidalrt_trainer_manifest; "
          "tidalrt_trainer_create; tidalrt_trainer_destroy; "
          "tidalrt_trainer_step; tidalrt_trainer_predict; "
          "tidalrt_trainer_read; tidalrt_trainer_write; tidalrt_trainer_save; "
          "tidalrt_trainer_load; tidalrt_trainer_counters; "
          "tidalrt_status_code; tidalrt_status_message; tidalrt_status_free; "
          "local: *; };\n";
    os.close();
    args.insert(args.end(),
                {"-shared", "-Wl,--version-script=" + versionScript.str().str(),
                 "-Wl,--whole-archive", "-ltidalrt_lib",
                 "-Wl,--no-whole-archive"});
  } else {
    args.push_back("-ltidalrt_main");
  }
  args.push_back("-ltidalrt_driver");
  SmallVector<StringRef> libs;
  // tidalrt_cuda before tidalrt, whose symbols it uses.
  if (cuda) {
    StringRef(TIDAL_CUDA_LINK_LIBS).split(libs, ';', -1, false);
    for (StringRef lib : libs)
      args.push_back(lib.str());
    libs.clear();
  }
  // tidalrt_mpi before tidalrt; tidalrt finds it through a weak reference.
  if (mpi) {
    args.insert(args.end(),
                {"-Wl,-u,tidalrt_mpi_comm_backend", "-ltidalrt_mpi"});
    StringRef(TIDAL_MPI_LINK_LIBS).split(libs, ';', -1, false);
    for (StringRef lib : libs)
      args.push_back(lib.str());
    libs.clear();
  }
  args.push_back("-ltidalrt");
  StringRef(TIDAL_RUNTIME_LINK_LIBS).split(libs, ';', -1, false);
  for (StringRef lib : libs)
    args.push_back(lib.str());
  args.push_back("-fopenmp");
  args.push_back("-lm");
  args.push_back("-lpthread");
  SmallVector<StringRef> argRefs(args.begin(), args.end());

  llvm::SmallString<256> log;
  if (std::error_code ec =
          llvm::sys::fs::createTemporaryFile("tidal-link", "log", log)) {
    error = "cannot create a temporary file: " + ec.message();
    return failure();
  }
  std::optional<StringRef> redirects[] = {std::nullopt, StringRef(log),
                                          StringRef(log)};
  std::string execError;
  int rc = llvm::sys::ExecuteAndWait(*cxx, argRefs, std::nullopt, redirects, 0,
                                     0, &execError);
  if (!versionScript.empty())
    llvm::sys::fs::remove(versionScript);
  if (rc != 0) {
    auto text = llvm::MemoryBuffer::getFile(log);
    error = "linking failed";
    if (!execError.empty())
      error += ": " + execError;
    if (text)
      error += ":\n" + (*text)->getBuffer().rtrim().str();
    llvm::sys::fs::remove(log);
    llvm::sys::fs::remove(temp);
    return failure();
  }
  llvm::sys::fs::remove(log);
  if (std::error_code ec = llvm::sys::fs::rename(temp, outputPath)) {
    llvm::sys::fs::remove(temp);
    error = "cannot write " + outputPath.str() + ": " + ec.message();
    return failure();
  }
  return success();
}
