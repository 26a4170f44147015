//===- PlanFile.cpp - the plan JSON and its trace -------------------------===//

#include "tidal/Target/PlanFile.h"
#include "tidal/Conversion/TidalToRuntime/KernelOps.h"
#include "tidal/Dialect/Tidal/Analysis/BufferLiveness.h"
#include "tidal/Dialect/Tidal/Analysis/CostModel.h"
#include "tidal/Dialect/Tidal/Analysis/StepTimeline.h"
#include "tidal/Dialect/Tidal/IR/TidalOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/AsmState.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace mlir::tidal;

namespace {

/// Everything both outputs need about the planned step.
struct PlannedStep {
  func::FuncOp func;
  std::unique_ptr<BufferLiveness> liveness;
  DeviceProfile device = defaultHostProfile();
  std::vector<OpCost> costs;         // by op position - 1
  std::vector<double> startUs;       // by op position - 1
  std::vector<const char *> streams; // by op position - 1
  double stepUs = 0, stallUs = 0, commStallUs = 0;
  int64_t arenaBytes = 0, constantsBytes = 0, lowerBound = 0, noReuse = 0;
  int64_t hostArenaBytes = 0, hostLowerBound = 0;
  bool onDevice = false; ///< the arena is device memory (sim, cuda)
  SmallVector<int64_t> live, hostLive;
  /// Tensor ids: arguments, then each op's results in schedule order.
  DenseMap<Value, int64_t> ids;
  std::vector<Value> tensors;
};

FailureOr<PlannedStep> analyse(ModuleOp module, const PlanFileInfo &info) {
  PlannedStep step;
  step.func = module.lookupSymbol<func::FuncOp>(info.stepFunc);
  if (!step.func || step.func.isExternal())
    return module.emitError("plan: the module has no @") << info.stepFunc,
           failure();
  auto arena = step.func->getAttrOfType<IntegerAttr>(kArenaSizeAttr);
  if (!arena)
    return step.func.emitError("plan: @")
               << info.stepFunc << " has no memory plan",
           failure();
  step.arenaBytes = arena.getInt();
  if (auto c = module->getAttrOfType<IntegerAttr>(kConstantsSizeAttr))
    step.constantsBytes = c.getInt();
  step.liveness = std::make_unique<BufferLiveness>(step.func, info.inPlace);
  step.lowerBound = step.liveness->lowerBound(info.alignment);
  step.noReuse = step.liveness->noReuseBytes(info.alignment);
  step.live = step.liveness->liveBytes(info.alignment);
  step.onDevice = info.target != "cpu";
  if (!info.compute.name.empty())
    step.device = info.compute;
  if (auto host = step.func->getAttrOfType<IntegerAttr>(kHostArenaSizeAttr)) {
    step.hostArenaBytes = host.getInt();
    step.hostLowerBound = step.liveness->lowerBound(info.alignment, true);
    step.hostLive = step.liveness->liveBytes(info.alignment, true);
  }
  // Host-placed ops are priced with the host default on the cuda target;
  // on the sim target the device is this CPU, so they are priced alike and
  // take turns with its kernels.
  StepTimeline timeline = predictTimeline(
      step.liveness->getOps(), step.device, defaultHostProfile(), info.linkGbps,
      /*sharedCpu=*/info.target == "sim", info.linkLatencyUs);
  step.costs = std::move(timeline.costs);
  step.startUs = std::move(timeline.startUs);
  step.streams = std::move(timeline.streams);
  step.stepUs = timeline.stepUs;
  step.stallUs = timeline.stallUs;
  step.commStallUs = timeline.commStallUs;
  for (BlockArgument arg : step.func.getArguments()) {
    step.ids[arg] = step.tensors.size();
    step.tensors.push_back(arg);
  }
  for (Operation *op : step.liveness->getOps())
    for (Value result : op->getResults()) {
      step.ids[result] = step.tensors.size();
      step.tensors.push_back(result);
    }
  return step;
}

/// Where a value lives: (arena name, offset).
std::pair<StringRef, int64_t> homeOf(PlannedStep &step, Value v) {
  if (const Buffer *buffer = step.liveness->getBuffer(v);
      buffer && buffer->host) {
    if (auto arg = dyn_cast<BlockArgument>(v)) {
      auto offset = step.func.getArgAttrOfType<IntegerAttr>(arg.getArgNumber(),
                                                            kOffsetAttr);
      return {"host", offset ? offset.getInt() : -1};
    }
    auto offsets =
        v.getDefiningOp()->getAttrOfType<DenseI64ArrayAttr>(kOffsetsAttr);
    return {"host",
            offsets ? offsets[cast<OpResult>(v).getResultNumber()] : -1};
  }
  if (auto arg = dyn_cast<BlockArgument>(v)) {
    auto offset = step.func.getArgAttrOfType<IntegerAttr>(arg.getArgNumber(),
                                                          kOffsetAttr);
    return {"step", offset ? offset.getInt() : -1};
  }
  auto result = cast<OpResult>(v);
  Operation *op = result.getOwner();
  if (auto offsets = op->getAttrOfType<DenseI64ArrayAttr>(kOffsetsAttr))
    return {"step", offsets[result.getResultNumber()]};
  if (auto offsets = op->getAttrOfType<DenseI64ArrayAttr>(kConstOffsetsAttr))
    return {"constants", offsets[result.getResultNumber()]};
  return {"none", -1};
}

std::string valueName(PlannedStep &step, AsmState &state, Value v) {
  if (auto arg = dyn_cast<BlockArgument>(v))
    if (auto name = step.func.getArgAttrOfType<StringAttr>(arg.getArgNumber(),
                                                           kNameAttr))
      return name.getValue().str();
  std::string s;
  llvm::raw_string_ostream os(s);
  v.printAsOperand(os, state);
  return s;
}

int64_t bytesOf(Value v) {
  return tensorByteSize(cast<ShapedType>(v.getType()));
}

/// The copies of one swap: positions of the offload, the wait for it, each
/// prefetch of the host copy and the wait for that.
void describeSwap(llvm::json::OStream &j, PlannedStep &step,
                  OffloadOp offload) {
  BufferLiveness &liveness = *step.liveness;
  j.attribute("bytes", bytesOf(offload.getResult()));
  j.attribute("offload", liveness.getPosition(offload));
  j.attribute("host_tensor", step.ids.lookup(offload.getResult()));
  for (Operation *user : offload->getUsers())
    if (auto wait = dyn_cast<WaitOp>(user)) {
      j.attribute("offload_wait", liveness.getPosition(wait));
      j.attributeArray("prefetches", [&] {
        for (Operation *p : wait->getUsers())
          if (auto prefetch = dyn_cast<PrefetchOp>(p))
            j.object([&] {
              j.attribute("prefetch", liveness.getPosition(prefetch));
              for (Operation *w : prefetch->getUsers())
                if (auto back = dyn_cast<WaitOp>(w)) {
                  j.attribute("prefetch_wait", liveness.getPosition(back));
                  j.attribute("device_tensor", step.ids.lookup(back));
                }
            });
      });
    }
}

} // namespace

FailureOr<std::string> tidal::buildPlanJson(ModuleOp module,
                                            const PlanFileInfo &info) {
  FailureOr<PlannedStep> analysed = analyse(module, info);
  if (failed(analysed))
    return failure();
  PlannedStep &step = *analysed;
  BufferLiveness &liveness = *step.liveness;
  AsmState state(step.func);
  const int64_t end = liveness.getEndPosition();
  // Recomputation: the op each clone recomputes, and each op's clones.
  DenseMap<int64_t, Operation *> recomputed;
  DenseMap<Operation *, SmallVector<Operation *, 1>> clonesOf;
  for (Operation *op : liveness.getOps())
    if (auto id = op->getAttrOfType<IntegerAttr>(kRecomputeIdAttr))
      recomputed[id.getInt()] = op;
  for (Operation *op : liveness.getOps())
    if (auto id = op->getAttrOfType<IntegerAttr>(kRecomputeOfAttr))
      if (Operation *original = recomputed.lookup(id.getInt()))
        clonesOf[original].push_back(op);
  DenseMap<Value, Value> inPlaceOf;
  for (const InPlaceUse &use : liveness.getInPlaceUses())
    inPlaceOf[use.result] = use.operand;

  std::string text;
  llvm::raw_string_ostream os(text);
  llvm::json::OStream j(os, 1);
  j.object([&] {
    j.attribute("format", "tidal-plan");
    j.attribute("version", 1);
    j.attribute("model", info.model);
    j.attribute("mode", info.mode);
    j.attribute("target", info.target);
    if (info.budgetBytes)
      j.attribute("budget_bytes", *info.budgetBytes);
    else
      j.attribute("budget_bytes", nullptr);
    j.attribute("function", info.stepFunc);
    j.attribute("schedule_strategy", info.schedule);
    j.attribute("strategy", info.strategy);
    j.attribute("in_place", info.inPlace);
    j.attribute("alignment", info.alignment);
    j.attribute("plan_seconds", info.planSeconds);
    j.attributeObject("positions", [&] {
      j.attribute("entry", 0);
      j.attribute("first_op", 1);
      j.attribute("exit", end);
    });
    j.attributeObject("cost_model", [&] {
      j.attribute("device", step.device.name);
      j.attribute("gflops", step.device.gflops);
      j.attribute("gbytes_per_s", step.device.gbytesPerS);
      j.attribute("op_overhead_us", step.device.opOverheadUs);
      j.attribute("calibrated", step.device.calibrated);
      // The host link of a device target, and how many devices share it.
      if (step.onDevice)
        j.attributeObject("link", [&] {
          j.attribute("gbytes_per_s", info.linkGbps);
          j.attribute("shared_by", info.linkShare);
          j.attribute("latency_us",
                      simulatedLinkProfile(info.linkGbps, info.linkLatencyUs)
                          .latencyUs);
        });
      // A data-parallel step: the network its collectives are priced at.
      if (step.func->getAttrOfType<StringAttr>(kCommNetworkAttr)) {
        LinkProfile comm = stepCommProfile(step.func);
        j.attributeObject("network", [&] {
          j.attribute("name", comm.name);
          j.attribute("gbytes_per_s", comm.gbytesPerS);
          j.attribute("latency_us", comm.latencyUs);
        });
      }
    });
    const char *mainSpace = step.onDevice ? "device" : "host";
    j.attributeArray("arenas", [&] {
      j.object([&] {
        j.attribute("name", "step");
        j.attribute("space", mainSpace);
        j.attribute("bytes", step.arenaBytes);
        j.attribute("lower_bound_bytes", step.lowerBound);
        j.attribute("no_reuse_bytes", step.noReuse);
      });
      if (step.hostArenaBytes)
        j.object([&] {
          j.attribute("name", "host");
          j.attribute("space", "host");
          j.attribute("bytes", step.hostArenaBytes);
          j.attribute("lower_bound_bytes", step.hostLowerBound);
          j.attribute("note", "offloaded copies of swapped tensors and "
                              "the tensors placed on the host");
        });
      j.object([&] {
        j.attribute("name", "constants");
        j.attribute("space", "host");
        j.attribute("bytes", step.constantsBytes);
        j.attribute("read_only", true);
      });
      for (auto func : module.getOps<func::FuncOp>()) {
        if (func == step.func || func.isExternal())
          continue;
        auto size = func->getAttrOfType<IntegerAttr>(kArenaSizeAttr);
        if (!size)
          continue;
        j.object([&] {
          j.attribute("name", func.getSymName());
          j.attribute("space", "host");
          j.attribute("bytes", size.getInt());
          j.attribute("note", "allocated only by runs that evaluate "
                              "(--eval-input)");
        });
      }
    });
    // On the cpu target the arena is host memory; on a device the arena is
    // device memory and the host holds the offloaded copies and constants.
    int64_t hostPeak = step.onDevice ? step.hostArenaBytes + step.constantsBytes
                                     : step.arenaBytes + step.constantsBytes;
    int64_t devicePeak = step.onDevice ? step.arenaBytes : 0;
    int64_t peak = step.onDevice ? devicePeak : hostPeak;
    int64_t baseline =
        step.onDevice ? step.noReuse : step.noReuse + step.constantsBytes;
    j.attributeObject("predicted", [&] {
      j.attribute("peak_host_bytes", hostPeak);
      j.attribute("peak_device_bytes", devicePeak);
      j.attribute("step_time_us", step.stepUs);
      j.attribute("copy_stall_us", step.stallUs);
      j.attribute("all_reduce_stall_us", step.commStallUs);
    });
    // Kernels auto moved to the host because the cost model predicted the
    // step faster than with the swaps or recomputations they replace.
    if (auto byCost =
            step.func->getAttrOfType<DictionaryAttr>(kHostLayersByCostAttr))
      j.attributeObject("host_layers_by_cost", [&] {
        if (auto layers = byCost.getAs<IntegerAttr>("layers"))
          j.attribute("layers", layers.getInt());
        for (StringRef key : {"before_us", "after_us"})
          if (auto us = byCost.getAs<FloatAttr>(key))
            j.attribute(key, us.getValueAsDouble());
      });
    // The optimal planner (--planner milp or auto): its solve's summary
    // and, from tidal-place auto, which plan was kept against the greedy
    // planner's.
    auto planner = step.func->getAttrOfType<DictionaryAttr>(kPlacePlannerAttr);
    auto milp = step.func->getAttrOfType<DictionaryAttr>(kMilpAttr);
    if (planner || milp)
      j.attributeObject("planner", [&] {
        auto entries = [&](DictionaryAttr dict) {
          for (NamedAttribute entry : dict) {
            if (auto s = dyn_cast<StringAttr>(entry.getValue()))
              j.attribute(entry.getName().strref(), s.getValue());
            else if (auto b = dyn_cast<BoolAttr>(entry.getValue()))
              j.attribute(entry.getName().strref(), b.getValue());
            else if (auto i = dyn_cast<IntegerAttr>(entry.getValue()))
              j.attribute(entry.getName().strref(), i.getInt());
            else if (auto f = dyn_cast<FloatAttr>(entry.getValue()))
              j.attribute(entry.getName().strref(), f.getValueAsDouble());
          }
        };
        if (planner)
          entries(planner);
        if (milp)
          j.attributeObject("milp", [&] { entries(milp); });
      });
    j.attribute("lower_bound_bytes",
                step.lowerBound + (step.onDevice ? 0 : step.constantsBytes));
    j.attributeObject("baseline", [&] {
      j.attribute("strategy", "no-reuse");
      j.attribute("description", "every tensor kept for the whole step, "
                                 "no sharing except views, no swaps");
      j.attribute("peak_host_bytes",
                  step.onDevice ? step.constantsBytes : baseline);
      j.attribute("peak_device_bytes", step.onDevice ? baseline : 0);
      j.attribute("step_time_us", step.stepUs - step.stallUs);
    });
    j.attributeObject("saving", [&] {
      j.attribute("bytes", baseline - peak);
      j.attribute("fraction",
                  baseline ? double(baseline - peak) / baseline : 0.0);
    });
    j.attributeArray("live_bytes", [&] {
      for (int64_t bytes : step.live)
        j.value(bytes);
    });
    if (!step.hostLive.empty())
      j.attributeArray("host_live_bytes", [&] {
        for (int64_t bytes : step.hostLive)
          j.value(bytes);
      });
    j.attributeArray("schedule", [&] {
      for (auto [i, op] : llvm::enumerate(liveness.getOps())) {
        const OpCost &cost = step.costs[i];
        j.object([&] {
          j.attribute("position", (int64_t)i + 1);
          j.attribute("op", op->getName().getStringRef());
          j.attribute("name", opDisplayName(op));
          // A view of a host tensor is on the host too.
          const Buffer *viewed =
              isViewOp(op) ? liveness.getBuffer(op->getResult(0)) : nullptr;
          j.attribute("device", isHostPlaced(op) || (viewed && viewed->host)
                                    ? "host"
                                    : mainSpace);
          j.attribute("stream", step.streams[i]);
          j.attribute("kernel", cost.kernel);
          j.attribute("start_us", step.startUs[i]);
          j.attribute("duration_us", cost.us);
          j.attribute("flops", cost.flops);
          if (auto id = op->getAttrOfType<IntegerAttr>(kRecomputeOfAttr))
            if (Operation *original = recomputed.lookup(id.getInt()))
              j.attribute("recompute_of", liveness.getPosition(original));
          j.attributeArray("reads", [&] {
            for (Value v : op->getOperands())
              j.value(step.ids.lookup(v));
          });
          j.attributeArray("writes", [&] {
            for (Value v : op->getResults())
              j.value(step.ids.lookup(v));
          });
        });
      }
    });
    j.attributeArray("tensors", [&] {
      for (auto [id, v] : llvm::enumerate(step.tensors)) {
        auto [arena, offset] = homeOf(step, v);
        const Buffer *buffer = liveness.getBuffer(v);
        j.object([&] {
          j.attribute("id", (int64_t)id);
          j.attribute("name", valueName(step, state, v));
          if (auto arg = dyn_cast<BlockArgument>(v)) {
            if (auto role = step.func.getArgAttrOfType<ArgRoleAttr>(
                    arg.getArgNumber(), kRoleAttr))
              j.attribute("role", stringifyArgRole(role.getValue()));
          } else {
            j.attribute("producer", liveness.getPosition(v.getDefiningOp()));
          }
          j.attribute("bytes", bytesOf(v));
          j.attribute("first_use", liveness.getDefinition(v));
          j.attribute("last_use", liveness.getLastUse(v));
          j.attributeObject("home", [&] {
            j.attribute("space", arena == "step" ? mainSpace : "host");
            j.attribute("arena", arena);
            j.attribute("offset", offset);
          });
          if (buffer) {
            j.attribute("buffer", (int64_t)buffer->id);
            j.attribute("buffer_live",
                        llvm::json::Array{buffer->start, buffer->end});
          }
          if (Operation *def = v.getDefiningOp(); def && isViewOp(def))
            j.attribute("view_of", step.ids.lookup(def->getOperand(0)));
          if (Value operand = inPlaceOf.lookup(v))
            j.attribute("in_place_of", step.ids.lookup(operand));
          if (Operation *def = v.getDefiningOp(); def && isCopyOp(def))
            j.attribute("copy_of", step.ids.lookup(def->getOperand(0)));
          j.attributeArray("swaps", [&] {
            for (Operation *user : v.getUsers()) {
              auto offload = dyn_cast<OffloadOp>(user);
              if (!offload)
                continue;
              j.object([&] { describeSwap(j, step, offload); });
            }
          });
          j.attributeArray("recomputations", [&] {
            auto result = dyn_cast<OpResult>(v);
            if (!result)
              return;
            for (Operation *clone : clonesOf.lookup(result.getOwner()))
              j.object([&] {
                j.attribute("position", liveness.getPosition(clone));
                j.attribute("tensor", step.ids.lookup(clone->getResult(
                                          result.getResultNumber())));
              });
          });
        });
      }
    });
  });
  os << "\n";
  return text;
}

FailureOr<std::string> tidal::buildPlanTrace(ModuleOp module,
                                             const PlanFileInfo &info) {
  FailureOr<PlannedStep> analysed = analyse(module, info);
  if (failed(analysed))
    return failure();
  PlannedStep &step = *analysed;
  BufferLiveness &liveness = *step.liveness;
  std::string text;
  llvm::raw_string_ostream os(text);
  llvm::json::OStream j(os);
  auto counter = [&](double ts, int64_t bytes) {
    j.object([&] {
      j.attribute("name", "arena bytes live");
      j.attribute("ph", "C");
      j.attribute("pid", 1);
      j.attribute("ts", ts);
      j.attributeObject("args", [&] { j.attribute("bytes", bytes); });
    });
  };
  j.object([&] {
    j.attribute("displayTimeUnit", "ms");
    j.attributeObject("otherData", [&] {
      j.attribute("tidal", "planned schedule (predicted times)");
      j.attribute("model", info.model);
      j.attribute("function", info.stepFunc);
      j.attribute("arena_bytes", step.arenaBytes);
      j.attribute("lower_bound_bytes", step.lowerBound);
      j.attribute("no_reuse_bytes", step.noReuse);
      j.attribute("cost_model", step.device.name);
    });
    j.attributeArray("traceEvents", [&] {
      j.object([&] {
        j.attribute("name", "process_name");
        j.attribute("ph", "M");
        j.attribute("pid", 1);
        j.attributeObject("args", [&] {
          j.attribute("name",
                      "tidal plan: " + info.model + " (" + info.target + ")");
        });
      });
      // One track per stream: compute, copies to the host, to the device,
      // the host-placed ops' stream, and the gradient all-reduces.
      const char *tracks[] = {step.onDevice ? "device compute" : "host compute",
                              "copy to host", "copy to device",
                              "host (placed ops)", "all-reduce (ranks)"};
      for (int tid = 1; tid <= 5; ++tid)
        j.object([&] {
          j.attribute("name", "thread_name");
          j.attribute("ph", "M");
          j.attribute("pid", 1);
          j.attribute("tid", tid);
          j.attributeObject("args",
                            [&] { j.attribute("name", tracks[tid - 1]); });
        });
      counter(0, step.live[0]);
      for (auto [i, op] : llvm::enumerate(liveness.getOps())) {
        const OpCost &cost = step.costs[i];
        double start = step.startUs[i];
        StringRef stream = step.streams[i];
        int tid = stream == "copy_to_host"     ? 2
                  : stream == "copy_to_device" ? 3
                  : stream == "host"           ? 4
                  : stream == "comm"           ? 5
                                               : 1;
        // Kernels, copies, and waits that stall the compute stream.
        if (cost.kernel ||
            ((isCopyOp(op) ||
              isa<AllReduceStartOp, AllGatherStartOp, ReduceScatterStartOp>(
                  op)) &&
             cost.us > 0))
          j.object([&] {
            j.attribute("name", isCopyOp(op) ? op->getName().stripDialect()
                                             : StringRef(opDisplayName(op)));
            j.attribute("cat", op->getName().getStringRef());
            j.attribute("ph", "X");
            j.attribute("pid", 1);
            j.attribute("tid", tid);
            j.attribute("ts", start);
            j.attribute("dur", cost.us);
            j.attributeObject("args", [&] {
              j.attribute("position", (int64_t)i + 1);
              j.attribute("op", op->getName().getStringRef());
              j.attribute("flops", cost.flops);
              j.attribute("live_bytes", step.live[i + 1]);
            });
          });
        counter(start, step.live[i + 1]);
      }
      counter(step.stepUs, step.live.back());
    });
  });
  os << "\n";
  return text;
}
