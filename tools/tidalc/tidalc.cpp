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
#include "tidal/Pipelines/Pipelines.h"

#include "mlir/IR/AsmState.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OperationSupport.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/StringExtras.h"
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
cl::opt<std::string> loss("loss",
                          cl::desc("cross-entropy, mse, or output (the "
                                   "model's first output is the loss; the "
                                   "default when it is a scalar)"),
                          cl::init("output"), cl::cat(category));
cl::opt<std::string> optimizer("optimizer",
                               cl::desc("sgd, adam or adamw (torch.optim)"),
                               cl::init("sgd"), cl::cat(category));
cl::opt<double> lr("lr",
                   cl::desc("Learning rate (default 0.01 for sgd, 0.001 "
                            "for adam and adamw)"),
                   cl::init(-1.0), cl::cat(category));
cl::opt<double> momentum("momentum", cl::desc("SGD momentum"), cl::init(0.0),
                         cl::cat(category));
cl::opt<double> dampening("dampening", cl::desc("SGD dampening"), cl::init(0.0),
                          cl::cat(category));
cl::opt<bool> nesterov("nesterov", cl::desc("SGD Nesterov momentum"),
                       cl::cat(category));
cl::opt<double> weightDecay("weight-decay",
                            cl::desc("Weight decay (default 0, 0.01 for "
                                     "adamw)"),
                            cl::init(-1.0), cl::cat(category));
cl::opt<double> beta1("beta1", cl::desc("Adam beta1"), cl::init(0.9),
                      cl::cat(category));
cl::opt<double> beta2("beta2", cl::desc("Adam beta2"), cl::init(0.999),
                      cl::cat(category));
cl::opt<double> eps("eps", cl::desc("Adam epsilon"), cl::init(1e-8),
                    cl::cat(category));
cl::opt<bool> verbose("v", cl::desc("Print statistics to stderr"),
                      cl::cat(category));
cl::opt<bool> timings("timings", cl::desc("Print stage timings to stderr"),
                      cl::cat(category));

/// `--stop-after`. LLVM's code generator already registers an option of that
/// name in libLLVM (TargetPassConfig), so tidalc adopts it rather than
/// registering a second one, which would abort at start-up.
cl::opt<std::string> &stopAfterOption() {
  static cl::opt<std::string> *opt = [] {
    auto &registered = cl::getRegisteredOptions();
    auto it = registered.find("stop-after");
    cl::opt<std::string> *o =
        it != registered.end()
            ? static_cast<cl::opt<std::string> *>(it->second)
            : new cl::opt<std::string>("stop-after", cl::init(""));
    o->setDescription("With --emit mlir: print the IR after this stage "
                      "(import, tidal-add-loss, tidal-autodiff, "
                      "tidal-insert-optimizer)");
    o->setValueStr("stage");
    o->addCategory(category);
    o->setHiddenFlag(cl::NotHidden);
    return o;
  }();
  return *opt;
}

/// Reports `msg` the way every tidalc error is reported and returns 1.
int fail(const Twine &msg) {
  errs() << inputPath << ": error: " << msg << "\n";
  return 1;
}

/// The first error diagnostic, as one line that names the ONNX node when the
/// location carries its name.
std::string formatDiagnostic(mlir::Diagnostic &diag) {
  std::string prefix;
  mlir::Location loc = diag.getLocation();
  if (auto fused = dyn_cast<mlir::FusedLoc>(loc);
      fused && !fused.getLocations().empty())
    loc = fused.getLocations().front();
  if (auto name = dyn_cast<mlir::NameLoc>(loc))
    prefix = "node '" + name.getName().str() + "': ";
  return prefix + diag.str();
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
  cl::opt<std::string> &stopAfter = stopAfterOption();
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
  if (loss != "output" && loss != "cross-entropy" && loss != "mse")
    return fail("unknown --loss '" + loss +
                "' (expected cross-entropy, mse or output)");
  ArrayRef<StringRef> stages = mlir::tidal::trainingPipelineStages();
  if (!stopAfter.empty() && stopAfter != "import" &&
      !llvm::is_contained(stages, StringRef(stopAfter)))
    return fail("unknown --stop-after stage '" + stopAfter +
                "' (expected import, " + llvm::join(stages, ", ") + ")");
  if (stopAfter == "tidal-add-loss" && loss == "output")
    return fail("--stop-after tidal-add-loss needs --loss cross-entropy or "
                "--loss mse");

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

  if (stopAfter != "import") {
    mlir::tidal::TrainingPipelineOptions pipeline;
    if (loss != "output")
      pipeline.loss = loss.getValue();
    pipeline.optimizer = optimizer.getValue();
    pipeline.lr = lr.getValue();
    pipeline.momentum = momentum.getValue();
    pipeline.dampening = dampening.getValue();
    pipeline.nesterov = nesterov.getValue();
    pipeline.weightDecay = weightDecay.getValue();
    pipeline.beta1 = beta1.getValue();
    pipeline.beta2 = beta2.getValue();
    pipeline.eps = eps.getValue();
    mlir::PassManager pm(&context);
    mlir::tidal::buildTrainingPipeline(pm, pipeline, stopAfter);
    if (timings || verbose)
      pm.enableTiming();
    std::string firstError;
    mlir::ScopedDiagnosticHandler handler(
        &context, [&](mlir::Diagnostic &diag) {
          if (diag.getSeverity() == mlir::DiagnosticSeverity::Error &&
              firstError.empty())
            firstError = formatDiagnostic(diag);
          return mlir::success();
        });
    if (mlir::failed(pm.run(*module)))
      return fail(firstError.empty() ? "the training pipeline failed"
                                     : firstError);
  }

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
