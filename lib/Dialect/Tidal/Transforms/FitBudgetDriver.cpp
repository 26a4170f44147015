//===- FitBudgetDriver.cpp - fitBudget's runs and cost-model options ------===//
//
// The entry point of the engine (FitBudget.h): a greedy run without the
// smallest-budget bookkeeping, redone with it only when it fails; the
// optimal mode with its fallback to the greedy loop; and the device
// profile a pass's options describe.
//
//===----------------------------------------------------------------------===//

#include "Fitter.h"

#include "tidal/Dialect/Tidal/Analysis/BufferLiveness.h"
#include "tidal/Dialect/Tidal/IR/TidalOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/OwningOpRef.h"

using namespace mlir;
using namespace mlir::tidal;
using namespace mlir::tidal::fit;

DeviceProfile tidal::profileFromOptions(double gflops, double gbytesPerS,
                                        double opOverheadUs) {
  DeviceProfile device = defaultHostProfile();
  if (gflops > 0)
    device.gflops = gflops;
  if (gbytesPerS > 0)
    device.gbytesPerS = gbytesPerS;
  if (opOverheadUs >= 0)
    device.opOverheadUs = opOverheadUs;
  return device;
}

LogicalResult tidal::profileFromOptions(Operation *op, StringRef passName,
                                        StringRef profilePath, double gflops,
                                        double gbytesPerS, double opOverheadUs,
                                        DeviceProfile &device,
                                        double *linkLatencyUs) {
  device = profileFromOptions(gflops, gbytesPerS, opOverheadUs);
  if (profilePath.empty())
    return success();
  std::string error;
  FailureOr<MachineProfile> machine = loadMachineProfile(profilePath, error);
  if (failed(machine))
    return op->emitError(passName) << ": " << error;
  // The options, where given, override the profile's figures.
  DeviceProfile given = device;
  device = machine->host;
  if (linkLatencyUs)
    *linkLatencyUs = machine->link.latencyUs;
  if (gflops > 0)
    device.gflops = given.gflops;
  if (gbytesPerS > 0)
    device.gbytesPerS = given.gbytesPerS;
  if (opOverheadUs >= 0)
    device.opOverheadUs = given.opOverheadUs;
  return success();
}

bool tidal::plannerUsesMilp(StringRef planner, func::FuncOp func) {
  if (planner != "auto")
    return planner == "milp";
  return !func.getBody().empty() &&
         int64_t(func.getBody().front().getOperations().size()) <=
             kAutoMilpMaxOps;
}

/// A bound under every state the fitter can reach from `func`: the device
/// bytes of its persistent arguments (never swapped, recomputed or
/// dropped) and, at the device kernel that touches the most, the other
/// device buffers it reads or writes (each swapped or recomputed value is
/// on the device again at its uses, in bytes of its own). A result that
/// may be written over one of its operands is left out: a later state can
/// end that operand's life at the kernel (its later uses recomputed or
/// refetched), and the result then takes its bytes. The packed arena holds
/// at least what is live at any position.
static int64_t reachableFloor(func::FuncOp func, int64_t alignment) {
  BufferLiveness liveness(func);
  int64_t persistent = 0, workingSet = 0;
  for (const Buffer &buffer : liveness.getBuffers())
    if (buffer.persistent && !buffer.host)
      persistent += alignBytes(buffer.bytes, alignment);
  SmallVector<std::pair<unsigned, int64_t>, 8> touched;
  for (Operation *op : liveness.getOps()) {
    if (isViewOp(op) || isCopyOp(op) || isa<ConstantOp>(op) || isHostPlaced(op))
      continue;
    touched.clear();
    auto touch = [&](Value v) {
      const Buffer *buffer = liveness.getBuffer(v);
      auto type = dyn_cast<RankedTensorType>(v.getType());
      if (!buffer || buffer->host || buffer->persistent || !type ||
          !type.hasStaticShape())
        return;
      int64_t bytes = alignBytes(tensorByteSize(type), alignment);
      for (auto &[id, most] : touched)
        if (id == buffer->id) {
          most = std::max(most, bytes);
          return;
        }
      touched.push_back({buffer->id, bytes});
    };
    for (Value v : op->getOperands())
      touch(v);
    for (OpResult v : op->getResults())
      if (inPlaceOperands(op, v.getResultNumber()).empty())
        touch(v);
    int64_t sum = 0;
    for (auto &[id, bytes] : touched)
      sum += bytes;
    workingSet = std::max(workingSet, sum);
  }
  return persistent + workingSet;
}

LogicalResult tidal::fitBudgetGreedy(func::FuncOp func,
                                     const FitBudgetOptions &options) {
  FitBudgetOptions greedy = options;
  greedy.milp = greedy.milpAuto = false;
  FitBudgetStats stats;
  Fitter fitter(func, greedy, stats);
  fitter.trackSmallest = false;
  return fitter.run();
}

LogicalResult tidal::fitBudget(func::FuncOp func,
                               const FitBudgetOptions &options,
                               FitBudgetStats &stats) {
  if (options.milpAuto) {
    FitBudgetOptions decided = options;
    decided.milpAuto = false;
    decided.milp = plannerUsesMilp("auto", func);
    return fitBudget(func, decided, stats);
  }
  if (!func.getBody().hasOneBlock())
    return func.emitError(options.passName) << ": more than one block";
  func->setAttr(kDeviceBudgetAttr,
                Builder(func.getContext()).getI64IntegerAttr(options.budget));
  if (!options.milp) {
    // Asked only whether it fits: not if no state can.
    if (!options.exactSmallest &&
        reachableFloor(func, options.alignment) > options.budget) {
      stats.unreachable = true;
      return failure();
    }
    // First without packing every state (most of the time on a large
    // graph); only a run that fails is redone from the start with it, for
    // the error's exact smallest budget (if asked for). The steps are the
    // same either way.
    if (options.exactSmallest && !options.fastFirst)
      return Fitter(func, options, stats).run();
    OwningOpRef<func::FuncOp> original(func.clone());
    FitBudgetStats fastStats;
    Fitter fast(func, options, fastStats);
    fast.trackSmallest = false;
    if (succeeded(fast.run())) {
      stats = fastStats;
      return success();
    }
    func.getBody().takeBody(original->getBody());
    func->setAttrs((*original)->getAttrDictionary());
    if (!options.exactSmallest)
      return failure();
    return Fitter(func, options, stats).run();
  }
  // The optimal mode falls back to the greedy loop alone where the MILP's
  // choice (it models one idle gap per tensor, for this budget) leaves the
  // greedy loop short of a budget that the greedy loop alone meets; and if
  // neither fits, the error is the greedy loop's, whose smallest budget is
  // exact (at it, the MILP run may fail, and this fallback then fits).
  OwningOpRef<func::FuncOp> original(func.clone());
  LogicalResult fitted = success();
  {
    ScopedDiagnosticHandler quiet(func.getContext(),
                                  [](Diagnostic &) { return success(); });
    fitted = Fitter(func, options, stats).run();
  }
  if (succeeded(fitted))
    return success();
  FitBudgetOptions greedy = options;
  greedy.milp = false;
  FitBudgetStats greedyStats;
  greedyStats.milpCandidates = stats.milpCandidates;
  auto milp = func->getAttrOfType<DictionaryAttr>(kMilpAttr);
  func.getBody().takeBody(original->getBody());
  func->setAttrs((*original)->getAttrDictionary());
  fitted = Fitter(func, greedy, greedyStats).run();
  stats = greedyStats;
  if (milp) {
    // Visible in the IR: the MILP's figures, and that they were not used.
    NamedAttrList attrs(milp);
    attrs.set("greedy_fallback", BoolAttr::get(func.getContext(), true));
    func->setAttr(kMilpAttr, attrs.getDictionary(func.getContext()));
  }
  return fitted;
}
