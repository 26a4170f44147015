//===- tidalc.cpp - the tidal offline compiler ----------------------------===//
//
//   tidalc MODEL.onnx -o OUT [options]     (SPEC section 1)
//
// Errors are one line, `MODEL.onnx: error: ...`, with exit status 1; output
// files are written whole (temp file + rename) or not at all.
//
//===----------------------------------------------------------------------===//

#include "Statistics.h"

#include "tidal/Importer/OnnxImporter.h"
#include "tidal/InitAll.h"

#include "mlir/IR/AsmState.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OperationSupport.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>

using namespace llvm;

namespace {
cl::OptionCategory category("tidalc options");

cl::opt<std::string> inputPath(cl::Positional, cl::desc("<model.onnx>"),
                               cl::Required, cl::cat(category));
cl::opt<std::string> outputPath("o", cl::desc("Output file ('-' for stdout)"),
                                cl::value_desc("file"), cl::init(""),
                                cl::cat(category));
cl::opt<std::string>
    emit("emit",
         cl::desc("Stop after a stage: mlir (exe, obj, llvm and plan "
                  "come with code generation)"),
         cl::init("exe"), cl::cat(category));
cl::opt<int64_t> batchSize("batch-size",
                           cl::desc("Bind the symbolic batch dimension"),
                           cl::init(0), cl::cat(category));
cl::list<std::string> freeze("freeze",
                             cl::desc("Initializers that are not trained"),
                             cl::CommaSeparated, cl::cat(category));
cl::opt<bool> verbose("v", cl::desc("Print statistics to stderr"),
                      cl::cat(category));
cl::opt<bool> timings("timings", cl::desc("Print stage timings to stderr"),
                      cl::cat(category));

/// Reports `msg` the way every tidalc error is reported and returns 1.
int fail(const Twine &msg) {
  errs() << inputPath << ": error: " << msg << "\n";
  return 1;
}

/// Writes `text` to `path` atomically: a temp file in the same directory,
/// then a rename. Returns an error message or "".
std::string writeAtomically(StringRef path, StringRef text) {
  if (path == "-") {
    outs() << text;
    outs().flush();
    return "";
  }
  // Devices and pipes (/dev/null, a FIFO) are written in place: renaming
  // over them would replace the device with a regular file.
  sys::fs::file_status st;
  if (!sys::fs::status(path, st) && sys::fs::exists(st) &&
      !sys::fs::is_regular_file(st)) {
    std::error_code ec;
    raw_fd_ostream os(path, ec);
    if (!ec)
      os << text;
    if (ec || os.has_error()) {
      os.clear_error();
      return "cannot write '" + path.str() + "'";
    }
    return "";
  }
  SmallString<256> dir(path);
  sys::path::remove_filename(dir);
  if (dir.empty())
    dir = ".";
  SmallString<256> model(dir);
  sys::path::append(model, sys::path::filename(path) + ".tmp%%%%%%");
  int fd;
  SmallString<256> tmp;
  if (std::error_code ec = sys::fs::createUniqueFile(model, fd, tmp))
    return "cannot write '" + path.str() + "': " + ec.message();
  {
    raw_fd_ostream os(fd, /*shouldClose=*/true);
    os << text;
    os.close();
    if (os.has_error()) {
      os.clear_error();
      sys::fs::remove(tmp);
      return "cannot write '" + path.str() + "'";
    }
  }
  if (std::error_code ec = sys::fs::rename(tmp, path)) {
    sys::fs::remove(tmp);
    return "cannot write '" + path.str() + "': " + ec.message();
  }
  return "";
}
} // namespace

int main(int argc, char **argv) {
  InitLLVM init(argc, argv);
  // --mlir-print-debuginfo shows each op's ONNX node name as its location.
  mlir::registerAsmPrinterCLOptions();
  cl::HideUnrelatedOptions(category);
  cl::ParseCommandLineOptions(argc, argv,
                              "tidal: an offline compiler for ONNX training "
                              "graphs\n");

  if (emit != "mlir") {
    if (emit == "exe" || emit == "obj" || emit == "llvm" || emit == "plan")
      return fail("--emit " + emit +
                  " is not available in this build: tidalc can only --emit "
                  "mlir so far");
    return fail("unknown --emit stage '" + emit +
                "' (expected exe, obj, llvm, mlir or plan)");
  }
  if (batchSize.getNumOccurrences() && batchSize <= 0)
    return fail("--batch-size must be a positive integer");

  mlir::DialectRegistry registry;
  mlir::tidal::registerAllDialects(registry);
  mlir::MLIRContext context(registry);
  // Diagnostics are collected and reported as one line by the importer.
  context.printOpOnDiagnostic(false);

  mlir::tidal::ImportOptions options;
  if (batchSize.getNumOccurrences())
    options.batchSize = batchSize;
  options.freeze.assign(freeze.begin(), freeze.end());

  auto start = std::chrono::steady_clock::now();
  std::string error;
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::tidal::importOnnxFile(context, inputPath, options, error);
  auto imported = std::chrono::steady_clock::now();
  if (!module)
    return fail(error);

  std::string text;
  raw_string_ostream os(text);
  module->print(os, mlir::OpPrintingFlags());
  os.flush();
  std::string writeError = writeAtomically(
      outputPath.empty() ? std::string("-") : outputPath.getValue(), text);
  if (!writeError.empty())
    return fail(writeError);

  if (verbose)
    tidalc::printStatistics(*module, errs());
  if (timings || verbose)
    errs() << format(
        "import: %.1f ms\n",
        std::chrono::duration<double, std::milli>(imported - start).count());
  return 0;
}
