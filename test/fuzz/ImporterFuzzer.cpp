//===- ImporterFuzzer.cpp - fuzz the ONNX importer ------------------------===//
//
// Bytes -> importOnnxFile, the entry point tidalc imports a model file
// with, in a context holding the dialects tidalc registers. The importer
// reads a path, so the bytes go to model.onnx in a private temporary
// directory (external data is resolved below it, so only that file can be
// referenced). The import must end in a module that verifies or in an
// error, never a crash, abort or hang. (Errors quote the model's names
// as they are, so a name holding a newline makes a multi-line error; that
// is not checked.) Each model is imported
// twice, as tidalc does without and with --batch-size 2 (which binds a
// symbolic batch or checks a static one).
//
//===----------------------------------------------------------------------===//

#include "tidal/Importer/OnnxImporter.h"
#include "tidal/InitAll.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fcntl.h>
#include <string>
#include <unistd.h>

namespace {

std::string modelDir, modelPath;

void removeModelDir() {
  unlink(modelPath.c_str());
  rmdir(modelDir.c_str());
}

void writeModel(const uint8_t *data, size_t size) {
  int fd = open(modelPath.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  size_t done = 0;
  while (fd >= 0 && done < size) {
    ssize_t n = write(fd, data + done, size - done);
    if (n <= 0)
      break;
    done += static_cast<size_t>(n);
  }
  if (fd < 0 || done != size || close(fd) != 0) {
    std::perror("importer fuzzer: cannot write the model");
    std::abort();
  }
}

void import(const mlir::tidal::ImportOptions &options) {
  mlir::DialectRegistry registry;
  mlir::tidal::registerAllDialects(registry);
  // One thread: the fuzzer's process runs one input at a time.
  mlir::MLIRContext context(registry, mlir::MLIRContext::Threading::DISABLED);
  context.printOpOnDiagnostic(false);
  std::string error;
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::tidal::importOnnxFile(context, modelPath, options, error);
  // TIDAL_FUZZ_VERBOSE=1 shows each outcome (for triage and corpus work).
  static const bool verbose = std::getenv("TIDAL_FUZZ_VERBOSE");
  if (verbose)
    std::fprintf(stderr, "%s\n", module ? "imported" : error.c_str());
  const char *problem = nullptr;
  if (module && !error.empty())
    problem = "a module and an error";
  else if (!module && error.empty())
    problem = "no module and no error";
  else if (module && mlir::failed(mlir::verify(*module)))
    problem = "a module that does not verify";
  if (!problem)
    return;
  std::fprintf(stderr, "importer fuzzer: %s: %s\n", problem, error.c_str());
  std::abort();
}

} // namespace

extern "C" int LLVMFuzzerInitialize(int *, char ***) {
  const char *tmp = std::getenv("TMPDIR");
  std::string pattern =
      std::string(tmp && *tmp ? tmp : "/tmp") + "/tidal-fuzz-importer.XXXXXX";
  if (!mkdtemp(pattern.data())) {
    std::perror("importer fuzzer: mkdtemp");
    std::abort();
  }
  modelDir = pattern;
  modelPath = modelDir + "/model.onnx";
  std::atexit(removeModelDir);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  writeModel(data, size);
  import(mlir::tidal::ImportOptions());
  mlir::tidal::ImportOptions batch;
  batch.batchSize = 2;
  import(batch);
  return 0;
}
