//===- StepTimeline.cpp - predicted times of a scheduled step -------------===//

#include "tidal/Dialect/Tidal/Analysis/StepTimeline.h"
#include "tidal/Dialect/Tidal/IR/TidalOps.h"

#include "llvm/ADT/DenseMap.h"

#include <algorithm>

using namespace mlir;
using namespace mlir::tidal;

StepTimeline tidal::predictTimeline(ArrayRef<Operation *> ops,
                                    const DeviceProfile &device,
                                    const DeviceProfile &host,
                                    double linkGbps) {
  StepTimeline timeline;
  LinkProfile link = simulatedLinkProfile(linkGbps);
  LinkProfile network = defaultCommProfile();
  double t = 0, toHostFree = 0, toDeviceFree = 0, hostFree = 0, copiesDone = 0;
  double commFree = 0;
  llvm::DenseMap<Value, double> copyDone;
  llvm::DenseMap<int64_t, double> bucketDone;
  for (Operation *op : ops) {
    OpCost cost;
    const char *stream = "compute";
    double start = t;
    if (auto allReduce = dyn_cast<AllReduceStartOp>(op)) {
      // The bucket goes to the communication thread, one at a time.
      int64_t bytes = 0;
      for (Value v : allReduce.getInputs())
        bytes += tensorByteSize(cast<ShapedType>(v.getType()));
      start = std::max(t, commFree);
      cost.bytes = bytes;
      cost.us = allReduceMicroseconds(network, bytes, allReduce.getRanks());
      commFree = start + cost.us;
      bucketDone[allReduce.getBucket()] = commFree;
      stream = "comm";
    } else if (auto gather = dyn_cast<AllGatherStartOp>(op)) {
      // Each rank receives the others' chunks: (N - 1) / N of the tensors,
      // half an all-reduce's traffic.
      int64_t bytes = 0;
      for (Value v : gather.getOutputs())
        bytes += tensorByteSize(cast<ShapedType>(v.getType()));
      start = std::max(t, commFree);
      cost.bytes = bytes;
      cost.us = allReduceMicroseconds(network, bytes, gather.getRanks()) / 2;
      commFree = start + cost.us;
      bucketDone[gather.getBucket()] = commFree;
      stream = "comm";
    } else if (auto scatter = dyn_cast<ReduceScatterStartOp>(op)) {
      // Half an all-reduce's traffic.
      int64_t bytes = 0;
      for (Value v : scatter.getInputs())
        bytes += tensorByteSize(cast<ShapedType>(v.getType()));
      start = std::max(t, commFree);
      cost.bytes = bytes;
      cost.us = allReduceMicroseconds(network, bytes, scatter.getRanks()) / 2;
      commFree = start + cost.us;
      bucketDone[scatter.getBucket()] = commFree;
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
      cost = estimateCost(op, host);
      start = std::max(hostFree, copiesDone);
      hostFree = start + cost.us;
      stream = "host";
    } else {
      cost = estimateCost(op, device);
      t += cost.us;
    }
    timeline.costs.push_back(cost);
    timeline.startUs.push_back(start);
    timeline.streams.push_back(stream);
  }
  timeline.stepUs = std::max({t, hostFree, toHostFree, toDeviceFree, commFree});
  return timeline;
}
