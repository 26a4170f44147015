//===- StepTimeline.cpp - predicted times of a scheduled step -------------===//

#include "tidal/Dialect/Tidal/Analysis/StepTimeline.h"
#include "tidal/Dialect/Tidal/IR/TidalOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/DenseMap.h"

#include <algorithm>

using namespace mlir;
using namespace mlir::tidal;

LinkProfile tidal::stepCommProfile(Operation *func) {
  if (!func)
    return defaultCommProfile();
  StringRef transport = "mpi";
  if (auto name = func->getAttrOfType<StringAttr>(kCommNetworkAttr))
    transport = name.getValue();
  LinkProfile p = defaultCommProfile(transport);
  if (auto gbps = func->getAttrOfType<FloatAttr>(kCommGbpsAttr)) {
    p.name = (transport + " (measured)").str();
    p.gbytesPerS = gbps.getValueAsDouble();
    if (auto latency = func->getAttrOfType<FloatAttr>(kCommLatencyAttr))
      p.latencyUs = latency.getValueAsDouble();
    p.calibrated = true;
  }
  return p;
}

StepTimeline tidal::predictTimeline(ArrayRef<Operation *> ops,
                                    const DeviceProfile &device,
                                    const DeviceProfile &host, double linkGbps,
                                    bool sharedCpu, double linkLatencyUs) {
  StepTimeline timeline;
  LinkProfile link = simulatedLinkProfile(linkGbps, linkLatencyUs);
  LinkProfile network =
      ops.empty()
          ? defaultCommProfile()
          : stepCommProfile(ops.front()->getParentOfType<func::FuncOp>());
  double t = 0, toHostFree = 0, toDeviceFree = 0, hostFree = 0, copiesDone = 0;
  double commFree = 0;
  llvm::DenseMap<Value, double> copyDone;
  llvm::DenseMap<int64_t, double> bucketDone;
  // sharedCpu: the host ops' intervals, in order (each starts after the
  // previous ends), and the first that the compute stream has not passed.
  std::vector<std::pair<double, double>> hostRuns;
  size_t nextHostRun = 0;
  for (Operation *op : ops) {
    OpCost cost;
    const char *stream = "compute";
    double start = t;
    if (isa<AllReduceStartOp, AllGatherStartOp, ReduceScatterStartOp>(op)) {
      // The bucket goes to the communication thread, one at a time. An
      // all-gather or a reduce-scatter moves half an all-reduce's traffic
      // of the full tensors (its results, its operands).
      bool gather = isa<AllGatherStartOp>(op);
      int64_t bytes = 0;
      for (Value v : gather ? ValueRange(op->getResults())
                            : ValueRange(op->getOperands()))
        bytes += tensorByteSize(cast<ShapedType>(v.getType()));
      int64_t ranks = op->getAttrOfType<IntegerAttr>("ranks").getInt();
      start = std::max(t, commFree);
      cost.bytes = bytes;
      cost.us = allReduceMicroseconds(network, bytes, ranks) /
                (isa<AllReduceStartOp>(op) ? 1 : 2);
      commFree = start + cost.us;
      bucketDone[op->getAttrOfType<IntegerAttr>("bucket").getInt()] = commFree;
      stream = "comm";
    } else if (isa<AllReduceWaitOp, AllGatherWaitOp, ReduceScatterWaitOp>(op)) {
      double done =
          bucketDone.lookup(op->getAttrOfType<IntegerAttr>("bucket").getInt());
      if (done > t) {
        cost.us = done - t;
        timeline.commStallUs += cost.us;
        t = done;
      }
    } else if (isa<OffloadOp, PrefetchOp>(op)) {
      bool toHost = isa<OffloadOp>(op);
      double &free = toHost ? toHostFree : toDeviceFree;
      int64_t bytes =
          tensorByteSize(cast<ShapedType>(op->getResult(0).getType()));
      start = std::max({t, free, hostFree});
      cost.bytes = bytes;
      cost.us = copyMicroseconds(link, bytes);
      free = start + cost.us;
      copiesDone = std::max(copiesDone, free);
      copyDone[op->getResult(0)] = free;
      stream = toHost ? "copy_to_host" : "copy_to_device";
    } else if (auto wait = dyn_cast<WaitOp>(op)) {
      double done = copyDone.lookup(wait.getInput());
      if (done > t) {
        cost.us = done - t;
        timeline.stallUs += cost.us;
        t = done;
      }
    } else if (isHostPlaced(op)) {
      cost = estimateCost(op, sharedCpu ? device : host);
      start = std::max(hostFree, copiesDone);
      // On a shared CPU it cannot start inside a kernel already placed.
      if (sharedCpu)
        start = std::max(start, t);
      hostFree = start + cost.us;
      if (sharedCpu)
        hostRuns.push_back({start, hostFree});
      stream = "host";
    } else {
      cost = estimateCost(op, device);
      // On a shared CPU a kernel that would overlap a host op runs after it.
      while (sharedCpu && nextHostRun < hostRuns.size() &&
             hostRuns[nextHostRun].first < t + cost.us) {
        t = std::max(t, hostRuns[nextHostRun].second);
        ++nextHostRun;
      }
      start = t;
      t += cost.us;
    }
    timeline.costs.push_back(cost);
    timeline.startUs.push_back(start);
    timeline.streams.push_back(stream);
    timeline.computeDoneUs.push_back(t);
    timeline.toHostReadyUs.push_back(std::max(toHostFree, hostFree));
    timeline.toDeviceReadyUs.push_back(std::max(toDeviceFree, hostFree));
  }
  timeline.stepUs = std::max({t, hostFree, toHostFree, toDeviceFree, commFree});
  return timeline;
}
