//===- tidalc.cpp - the tidal offline compiler ----------------------------===//
//
//   tidalc MODEL.onnx -o OUT [options]     (SPEC section 1)
//
// Errors are one line, `MODEL.onnx: error: ...`, with exit status 1; output
// files are written whole (temp file + rename) or not at all.
//
//===----------------------------------------------------------------------===//

#include "Distributed.h"
#include "Files.h"
#include "OptionChecks.h"
#include "Options.h"
#include "Statistics.h"

#include "tidal/Conversion/Passes.h"
#include "tidal/Dialect/Tidal/IR/TidalOps.h"
#include "tidal/Dialect/Tidal/Transforms/Passes.h"
#include "tidal/Importer/EmbedModel.h"
#include "tidal/Importer/OnnxImporter.h"
#include "tidal/InitAll.h"
#include "tidal/Pipelines/Pipelines.h"
#include "tidal/Target/PlanExplain.h"
#include "tidal/Target/PlanFile.h"
#include "tidal/Target/Program.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/AsmState.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OperationSupport.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>

using namespace llvm;

using namespace tidalc;

namespace {

/// --distributed, --ranks, --bucket-size (Distributed.cpp).
DataParallel dataParallel;

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

const char *argv0 = "tidalc";

/// The first error diagnostic of the passes, as one line.
std::string firstError;

using RunPasses =
    function_ref<bool(function_ref<void(mlir::PassManager &)>, StringRef)>;

/// The resolved optimizer settings, for the manifest (informational).
std::string optimizerJson(bool training) {
  if (!training)
    return "{}";
  bool adam = optimizer == "adam" || optimizer == "adamw";
  double rate = lr >= 0 ? lr.getValue() : (adam ? 1e-3 : 1e-2);
  double decay = weightDecay >= 0 ? weightDecay.getValue()
                                  : (optimizer == "adamw" ? 1e-2 : 0.0);
  json::Object o{
      {"name", optimizer.getValue()}, {"lr", rate}, {"weight_decay", decay}};
  if (adam) {
    o["beta1"] = beta1.getValue();
    o["beta2"] = beta2.getValue();
    o["eps"] = eps.getValue();
  } else {
    o["momentum"] = momentum.getValue();
    o["dampening"] = dampening.getValue();
    o["nesterov"] = nesterov.getValue();
  }
  std::string text;
  raw_string_ostream os(text);
  os << json::Value(std::move(o));
  return text;
}

/// The default output name: the model's file name without .onnx (plus
/// `suffix`).
std::string defaultOutput(StringRef suffix) {
  return (sys::path::stem(inputPath) + suffix).str();
}

/// The parsed --device-memory (0: none).
int64_t budgetBytes = 0;
/// The profile of the device that runs the kernels (--device-profile): the
/// host CPU on the cpu and sim targets. Empty name: the defaults.
mlir::tidal::DeviceProfile computeProfile;
/// The link's per-copy latency from --device-profile (negative: the
/// default link's).
double linkLatencyUs = -1;
/// The --device-profile's measured network between ranks (transport empty:
/// none), which a --distributed step of the same transport is priced at.
mlir::tidal::NetworkProfile profileNetwork;
/// The --device-profile's host.parallel_grain (0: none): the program sets
/// it when it starts (every target runs host kernels).
int64_t hostParallelGrain = 0;

/// The memory pipeline's options from the command line.
void setMemoryPipelineOptions(mlir::tidal::MemoryPipelineOptions &options) {
  options.schedule = scheduleStrategy.getValue();
  options.strategy = memoryPlan.getValue();
  options.inPlace = inPlace.getValue();
  options.budget = budgetBytes;
  options.placement = target == "cpu" ? "device" : placement.getValue();
  options.hostLayers = hostLayers != "off";
  options.hostLayersByCost = hostLayers == "on";
  // The sim device is this CPU: its kernels and host ops take turns.
  options.sharedCpu = target == "sim";
  // The cpu runtime's kernels take channel-blocked activations; the cuda
  // target's take dense ones.
  options.blockChannels = blockChannels == "on" && target != "cuda";
  options.fuseEpilogues = fuseEpilogues == "on" && target == "cpu";
  options.fuseElementwise = fuseElementwise == "on" && target == "cpu";
  options.swap = swapMode == "auto";
  options.recompute = recomputeMode == "auto";
  options.planner = planner.getValue();
  options.linkGbps = linkGbps.getValue() / double(linkShare.getValue());
  options.swapFunction = mode == "train" ? "train_step" : "main";
  if (!computeProfile.name.empty()) {
    options.gflops = computeProfile.gflops;
    options.gbytesPerS = computeProfile.gbytesPerS;
    options.opOverheadUs = computeProfile.opOverheadUs;
  }
  // The cpu and sim targets' kernels are the host's: the passes also read
  // its measured op times (tidal-calibrate --ops).
  if (target != "cuda")
    options.profile = deviceProfile.getValue();
}

/// Schedule and memory plan (verified), up to `stopAfter` if that names one
/// of the passes.
bool planMemory(RunPasses runPasses, StringRef stopAfter) {
  return runPasses(
      [&](mlir::PassManager &pm) {
        mlir::tidal::MemoryPipelineOptions options;
        setMemoryPipelineOptions(options);
        mlir::tidal::buildMemoryPipeline(pm, options, stopAfter);
      },
      "memory planning");
}

/// What the plan file states about the command line.
mlir::tidal::PlanFileInfo planFileInfo(bool training, double planSeconds) {
  mlir::tidal::PlanFileInfo info;
  info.model = sys::path::filename(inputPath).str();
  info.target = target;
  if (budgetBytes)
    info.budgetBytes = budgetBytes;
  info.linkGbps = linkGbps / double(linkShare.getValue());
  info.linkLatencyUs = linkLatencyUs;
  info.linkShare = linkShare;
  info.compute = computeProfile;
  info.mode = training ? "train" : "forward";
  info.stepFunc = training ? "train_step" : "main";
  info.schedule = scheduleStrategy;
  info.strategy = memoryPlan;
  info.inPlace = inPlace && memoryPlan == "packed";
  info.planSeconds = planSeconds;
  return info;
}

/// --explain's reference: the plan of the all-device step without a budget
/// (empty on the cpu target, where that is the plan itself).
std::string allDevicePlan;

/// Plans a copy of `module` with everything on the device and no budget,
/// for --explain. Returns an exit status.
int planAllDevice(mlir::ModuleOp module, bool training) {
  if (target == "cpu")
    return 0;
  mlir::OwningOpRef<mlir::ModuleOp> copy(module.clone());
  mlir::PassManager pm(module.getContext());
  mlir::tidal::MemoryPipelineOptions options;
  setMemoryPipelineOptions(options);
  options.budget = 0;
  options.placement = "device";
  mlir::tidal::buildMemoryPipeline(pm, options, "");
  if (failed(pm.run(*copy)))
    return fail(firstError.empty() ? "cannot plan the all-device step"
                                   : firstError);
  mlir::tidal::PlanFileInfo info = planFileInfo(training, 0);
  info.budgetBytes.reset();
  auto plan = mlir::tidal::buildPlanJson(*copy, info);
  if (failed(plan))
    return fail(firstError.empty() ? "cannot describe the plan" : firstError);
  allDevicePlan = std::move(*plan);
  return 0;
}

/// The plan file (--emit plan), the trace (--trace) and the explanation
/// (--explain, on stdout).
int writePlanOutputs(mlir::ModuleOp module, bool training, double planSeconds) {
  mlir::tidal::PlanFileInfo info = planFileInfo(training, planSeconds);
  if (!tracePath.empty()) {
    auto trace = mlir::tidal::buildPlanTrace(module, info);
    if (failed(trace))
      return fail(firstError.empty() ? "cannot describe the plan" : firstError);
    std::string writeError = writeAtomically(tracePath, *trace);
    if (!writeError.empty())
      return fail(writeError);
  }
  if (emit != "plan" && !explain)
    return 0;
  auto plan = mlir::tidal::buildPlanJson(module, info);
  if (failed(plan))
    return fail(firstError.empty() ? "cannot describe the plan" : firstError);
  if (explain) {
    std::string text, error;
    if (!mlir::tidal::explainPlan(*plan, allDevicePlan, text, error))
      return fail(error);
    outs() << text;
    outs().flush();
  }
  if (emit != "plan")
    return 0;
  std::string writeError = writeAtomically(
      outputPath.empty() ? defaultOutput(".plan.json") : outputPath.getValue(),
      *plan);
  return writeError.empty() ? 0 : fail(writeError);
}

/// Memory plan, manifest, lowering, LLVM IR, object and link.
int generateCode(mlir::ModuleOp module, RunPasses runPasses, bool training,
                 std::chrono::steady_clock::time_point start) {
  if (explain)
    if (int status = planAllDevice(module, training))
      return status;
  if (!planMemory(runPasses, ""))
    return 1;
  double planSeconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  if (int status = writePlanOutputs(module, training, planSeconds))
    return status;
  if (emit == "plan")
    return 0;

  mlir::tidal::ProgramInfo info;
  info.modelName = sys::path::filename(inputPath).str();
  info.mode = training ? "train" : "forward";
  info.target = target;
  info.parallelGrain = hostParallelGrain;
  info.loss = training ? loss.getValue() : "";
  info.stepFunc = training ? "train_step" : "main";
  info.optimizerJson = optimizerJson(training);
  std::string error;
  mlir::tidal::EmbeddedData external;
  if (!mlir::tidal::readModelForEmbedding(inputPath, info.modelBytes,
                                          external.bytes, error))
    return fail(error);
  if (!external.bytes.empty()) {
    external.name = mlir::tidal::kExternalDataBlob;
    info.embedded.push_back(std::move(external));
  }
  auto step = module.lookupSymbol<mlir::func::FuncOp>(info.stepFunc);
  if (!step)
    return fail("the compiled module has no @" + info.stepFunc);
  StringSet<> dataInputs;
  for (unsigned i = 0; i < step.getNumArguments(); ++i) {
    auto role = step.getArgAttrOfType<mlir::tidal::ArgRoleAttr>(
        i, mlir::tidal::kRoleAttr);
    auto name =
        step.getArgAttrOfType<mlir::StringAttr>(i, mlir::tidal::kNameAttr);
    if (!role || role.getValue() != mlir::tidal::ArgRole::input || !name)
      continue;
    dataInputs.insert(name.getValue());
    auto type = cast<mlir::RankedTensorType>(step.getArgument(i).getType());
    if (!info.batchSize && type.getRank() > 0)
      info.batchSize = type.getDimSize(0);
  }
  if (batchSize.getNumOccurrences())
    info.batchSize =
        dataParallel.rankBatch ? dataParallel.rankBatch : batchSize;
  info.distributed = dataParallel.backend;
  info.ranks = dataParallel.ranks;
  // A forward program without data inputs, or whose inputs are empty along
  // dim 0, runs once on exactly-shaped files.
  if (info.batchSize <= 0)
    info.batchSize = 1;
  for (StringRef spec : embedData) {
    auto [name, file] = spec.split('=');
    if (name.empty() || file.empty())
      return fail("--embed-data expects NAME=FILE.npy, got '" + spec + "'");
    if (!dataInputs.contains(name))
      return fail("--embed-data " + name + ": the model has no data input '" +
                  name + "'");
    mlir::tidal::EmbeddedData data;
    data.name = name.str();
    if (!readFile(file, data.bytes, error))
      return fail(error);
    info.embedded.push_back(std::move(data));
  }

  mlir::FailureOr<std::string> manifest =
      mlir::tidal::buildManifest(module, info);
  if (failed(manifest))
    return fail(firstError.empty() ? "cannot describe the program"
                                   : firstError);

  if (!runPasses(
          [&](mlir::PassManager &pm) {
            mlir::tidal::TidalLowerToRuntimePassOptions o;
            o.stepFunc = info.stepFunc;
            o.predictFunc = info.predictFunc;
            o.device = target != "cpu";
            pm.addPass(mlir::tidal::createTidalLowerToRuntimePass(o));
          },
          "lowering to the runtime"))
    return 1;
  mlir::tidal::addProgramGlobals(module, *manifest, info);

  LLVMContext llvmContext;
  auto llvmModule = mlir::tidal::translateToLLVMIR(module, llvmContext);
  if (failed(llvmModule))
    return fail(firstError.empty() ? "translation to LLVM IR failed"
                                   : firstError);
  if (emit == "llvm") {
    std::string text;
    raw_string_ostream os(text);
    (*llvmModule)->print(os, nullptr);
    std::string writeError = writeAtomically(
        outputPath.empty() ? std::string("-") : outputPath.getValue(), text);
    return writeError.empty() ? 0 : fail(writeError);
  }

  auto object = mlir::tidal::emitObject(**llvmModule, error);
  if (failed(object))
    return fail("object emission failed: " + error);
  StringRef objectBytes(object->data(), object->size());
  if (emit == "obj") {
    std::string writeError = writeAtomically(
        outputPath.empty() ? defaultOutput(".o") : outputPath.getValue(),
        objectBytes);
    return writeError.empty() ? 0 : fail(writeError);
  }

  SmallString<256> objectPath;
  int fd;
  if (std::error_code ec =
          sys::fs::createTemporaryFile("tidal-program", "o", fd, objectPath))
    return fail("cannot create a temporary object file: " + ec.message());
  {
    raw_fd_ostream os(fd, /*shouldClose=*/true);
    os << objectBytes;
    os.close();
    if (os.has_error()) {
      os.clear_error();
      sys::fs::remove(objectPath);
      return fail("cannot write the temporary object file");
    }
  }
  std::string output = outputPath.empty()
                           ? defaultOutput(emit == "lib" ? ".so" : "")
                           : outputPath.getValue();
  bool linked = succeeded(mlir::tidal::linkExecutable(
      objectPath, output, argv0, target == "cuda", error, emit == "lib",
      !dataParallel.backend.empty()));
  sys::fs::remove(objectPath);
  if (!linked)
    return fail(error);
  return 0;
}
} // namespace

int main(int argc, char **argv) {
  InitLLVM init(argc, argv);
  argv0 = argv[0];
  // --mlir-print-debuginfo shows each op's ONNX node name as its location.
  mlir::registerAsmPrinterCLOptions();
  cl::opt<std::string> &stopAfter = stopAfterOption();
  cl::HideUnrelatedOptions(category);
  cl::ParseCommandLineOptions(argc, argv,
                              "tidal: an offline compiler for ONNX training "
                              "graphs\n");
  if (listOps) {
    std::string text;
    raw_string_ostream os(text);
    mlir::tidal::printSupportedOps(os);
    std::string error = writeAtomically(
        outputPath.empty() ? StringRef("-") : StringRef(outputPath), os.str());
    if (!error.empty()) {
      errs() << "tidalc: error: " << error << "\n";
      return 1;
    }
    return 0;
  }
  if (inputPath.empty()) {
    errs() << "tidalc: error: no input model (tidalc MODEL.onnx -o OUT "
              "[options]; --help lists the options)\n";
    return 1;
  }

  if (std::string e = checkOptionValues(); !e.empty())
    return fail(e);
  if (!(linkGbps > 0))
    return fail("--link-gbps must be positive");
  if (linkShare < 1 || linkShare > 65536)
    return fail("--link-share must be a number of devices from 1 to 65536");
  if (linkShare.getNumOccurrences() && target == "cpu")
    return fail("--link-share needs a device: use --target sim or cuda");
  if (!deviceProfile.empty()) {
    std::string profileError;
    auto profile = mlir::tidal::loadMachineProfile(deviceProfile, profileError);
    if (failed(profile))
      return fail(profileError);
    // The cpu and sim targets run every kernel on the host CPU, the cuda
    // target on the GPU.
    computeProfile = target == "cuda" ? profile->device : profile->host;
    hostParallelGrain = profile->host.parallelGrain;
    if (computeProfile.name.empty())
      computeProfile.name =
          (target == "cuda" ? "device (" : "host (") + deviceProfile + ")";
    if (!linkGbps.getNumOccurrences() && profile->link.gbytesPerS > 0)
      linkGbps = profile->link.gbytesPerS;
    // Its per-copy cost too (the sim's, measured by tidal-calibrate
    // --link-gbps), whatever the rate.
    linkLatencyUs = profile->link.latencyUs;
    profileNetwork = profile->network;
  }
  if (target == "cuda" && deviceProfile.empty()) {
    // Uncalibrated: the documented H100 SXM and PCIe 5.0 defaults
    // (docs/cost-model.md).
    computeProfile = mlir::tidal::defaultDeviceProfile();
    if (!linkGbps.getNumOccurrences())
      linkGbps = mlir::tidal::defaultLinkProfile().gbytesPerS;
  }
  if (!deviceMemory.empty()) {
    if (target == "cpu")
      return fail("--device-memory needs a device: use --target cuda or "
                  "sim");
    std::optional<int64_t> size = parseSize(deviceMemory);
    if (!size)
      return fail("--device-memory '" + deviceMemory +
                  "' is not a size (bytes, or e.g. 512MiB, 12GiB, 1.5GB)");
    budgetBytes = *size;
  }
  if (mode != "train" && mode != "forward")
    return fail("unknown --mode '" + mode + "' (expected train or forward)");
  bool codegen = emit != "mlir";
  if (batchSize.getNumOccurrences() && batchSize <= 0)
    return fail("--batch-size must be a positive integer");
  if (std::string e = parseDataParallel(dataParallel); !e.empty())
    return fail(e);
  if (!dataParallel.backend.empty() && emit == "lib")
    return fail("--distributed builds an executable that mpirun starts, not "
                "a library (--emit lib)");
  bool planStage =
      stopAfter == "tidal-fuse-epilogues" ||
      stopAfter == "tidal-block-channels" ||
      stopAfter == "tidal-fuse-elementwise" || stopAfter == "tidal-schedule" ||
      stopAfter == "tidal-place" || stopAfter == "tidal-schedule-swaps" ||
      stopAfter == "tidal-plan-memory";
  if (std::string e = checkStageOptions(stopAfter, planStage); !e.empty())
    return fail(e);

  mlir::DialectRegistry registry;
  mlir::tidal::registerAllDialects(registry);
  mlir::MLIRContext context(registry);
  // Diagnostics are collected and reported as one line by the importer.
  context.printOpOnDiagnostic(false);

  mlir::tidal::ImportOptions options;
  // Each rank's step takes its share of the global batch.
  if (batchSize.getNumOccurrences())
    options.batchSize =
        dataParallel.rankBatch ? dataParallel.rankBatch : batchSize;
  options.freeze.assign(freeze.begin(), freeze.end());
  if (std::string e = parseEmbeddingPadding(options.embeddingPadding);
      !e.empty())
    return fail(e);

  auto start = std::chrono::steady_clock::now();
  std::string error;
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::tidal::importOnnxFile(context, inputPath, options, error);
  auto imported = std::chrono::steady_clock::now();
  if (!module)
    return fail(error);

  mlir::ScopedDiagnosticHandler handler(&context, [&](mlir::Diagnostic &diag) {
    if (diag.getSeverity() == mlir::DiagnosticSeverity::Error &&
        firstError.empty())
      firstError = formatDiagnostic(diag);
    return mlir::success();
  });
  auto runPasses = [&](llvm::function_ref<void(mlir::PassManager &)> build,
                       StringRef what) -> bool {
    mlir::PassManager pm(&context);
    build(pm);
    if (timings || verbose)
      pm.enableTiming();
    if (mlir::succeeded(pm.run(*module)))
      return true;
    fail(firstError.empty() ? (what + " failed").str() : firstError);
    return false;
  };

  bool training = mode == "train";
  if (training && stopAfter != "import") {
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
    pipeline.predict = codegen;
    pipeline.ranks = dataParallel.ranks;
    pipeline.network = dataParallel.backend;
    if (!profileNetwork.transport.empty() &&
        profileNetwork.transport == dataParallel.backend) {
      pipeline.networkGbps = profileNetwork.link.gbytesPerS;
      pipeline.networkLatencyUs = profileNetwork.link.latencyUs;
    }
    pipeline.syncBatchNorm = dataParallel.syncBatchNorm;
    pipeline.shard = dataParallel.shard;
    if (dataParallel.bucketBytes)
      pipeline.bucketBytes = dataParallel.bucketBytes;
    if (!runPasses(
            [&](mlir::PassManager &pm) {
              mlir::tidal::buildTrainingPipeline(pm, pipeline, stopAfter);
            },
            "the training pipeline"))
      return 1;
  }

  if (codegen)
    return generateCode(*module, runPasses, training, start);
  if (planStage) {
    if (!planMemory(runPasses, stopAfter))
      return 1;
    if (stopAfter == "tidal-plan-memory" && !tracePath.empty())
      if (int status = writePlanOutputs(*module, training, 0))
        return status;
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
