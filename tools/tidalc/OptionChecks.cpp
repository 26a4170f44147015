//===- OptionChecks.cpp - tidalc's option values, checked -----------------===//

#include "OptionChecks.h"

#include "Options.h"

#include "tidal/Pipelines/Pipelines.h"
#include "tidal/Target/Program.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"

using namespace llvm;

std::string tidalc::checkOptionValues() {
  if (emit != "plan" && emit != "exe" && emit != "obj" && emit != "llvm" &&
      emit != "mlir" && emit != "lib")
    return "unknown --emit stage '" + emit +
           "' (expected exe, lib, obj, llvm, mlir or plan)";
  if (target != "cpu" && target != "sim" && target != "cuda")
    return "unknown --target '" + target + "' (expected cpu, cuda or sim)";
  if (target == "cuda" && (emit == "exe" || emit == "lib") &&
      !mlir::tidal::canLinkCuda())
    return "--target cuda --emit exe: this tidalc was built without "
           "CUDA (no nvcc at build time); --emit plan, mlir, llvm and "
           "obj work, or use --target sim";
  if (swapMode != "auto" && swapMode != "off")
    return "unknown --swap '" + swapMode + "' (expected auto or off)";
  if (blockChannels != "on" && blockChannels != "off")
    return "unknown --block-channels '" + blockChannels +
           "' (expected on or off)";
  if (fuseEpilogues != "on" && fuseEpilogues != "off")
    return "unknown --fuse-epilogues '" + fuseEpilogues +
           "' (expected on or off)";
  if (fuseElementwise != "on" && fuseElementwise != "off")
    return "unknown --fuse-elementwise '" + fuseElementwise +
           "' (expected on or off)";
  if (hostLayers != "on" && hostLayers != "fit" && hostLayers != "off")
    return "unknown --host-layers '" + hostLayers +
           "' (expected on, fit or off)";
  if (placement != "auto" && placement != "device" && placement != "host")
    return "unknown --placement '" + placement +
           "' (expected auto, device or host)";
  if (planner != "greedy" && planner != "milp" && planner != "auto")
    return "unknown --planner '" + planner +
           "' (expected greedy, milp or auto)";
  if (recomputeMode != "auto" && recomputeMode != "off")
    return "unknown --recompute '" + recomputeMode + "' (expected auto or off)";
  return "";
}

std::string tidalc::checkStageOptions(StringRef stopAfter, bool planStage) {
  if (loss != "output" && loss != "cross-entropy" && loss != "mse")
    return "unknown --loss '" + loss +
           "' (expected cross-entropy, mse or output)";
  ArrayRef<StringRef> stages = mlir::tidal::trainingPipelineStages();
  if (!stopAfter.empty() && stopAfter != "import" && !planStage &&
      !llvm::is_contained(stages, StringRef(stopAfter)))
    return ("unknown --stop-after stage '" + stopAfter +
            "' (expected import, " + llvm::join(stages, ", ") +
            ", tidal-fuse-epilogues, tidal-block-channels, "
            "tidal-fuse-elementwise, tidal-schedule, "
            "tidal-place, "
            "tidal-schedule-swaps, "
            "tidal-plan-memory)")
        .str();
  if (scheduleStrategy != "memory" && scheduleStrategy != "program")
    return "unknown --schedule '" + scheduleStrategy +
           "' (expected memory or program)";
  if (memoryPlan != "packed" && memoryPlan != "slots")
    return "unknown --memory-plan '" + memoryPlan +
           "' (expected packed or slots)";
  // LLVM's code generator reads the same option: a stage name it does not
  // know aborts it, so the option must not reach code generation.
  if (!stopAfter.empty() && emit != "mlir")
    return ("--stop-after " + stopAfter + " needs --emit mlir").str();
  if (!tracePath.empty() && emit == "mlir" && !planStage)
    return "--trace needs a planned program: use it with --emit "
           "exe, obj, llvm or plan";
  if (explain && emit == "mlir")
    return "--explain needs a planned program: use it with --emit "
           "exe, obj, llvm or plan";
  if (explain && outputPath == "-")
    return "--explain prints to stdout: give -o a file";
  if (stopAfter == "tidal-add-loss" && loss == "output")
    return "--stop-after tidal-add-loss needs --loss cross-entropy or "
           "--loss mse";

  return "";
}

std::string tidalc::parseEmbeddingPadding(
    std::vector<std::pair<std::string, int64_t>> &out) {
  for (const std::string &entry : embeddingPadding) {
    auto [name, row] = StringRef(entry).rsplit(':');
    int64_t value = 0;
    if (name.empty() || row.empty() || row.getAsInteger(10, value))
      return "--embedding-padding entry '" + entry +
             "' is not NAME:ROW (an initializer and its padding_idx)";
    out.emplace_back(name.str(), value);
  }
  return "";
}
