//===- StepTimeline.h - predicted times of a scheduled step -----*- C++ -*-===//
//
// The cost model's prediction of when each op of a scheduled function runs:
// kernels back to back on the compute stream; offloads and prefetches on one
// copy stream each, at the link's bandwidth; a wait stalls the compute
// stream until its copy is done; host-placed ops (tidal-place) one after
// another on the host's stream, each once the copies enqueued before it are
// done, and copies enqueued after a host op start once it is done (the
// runtime's protocol, tidalrt/device.h), beside the compute stream or, on
// a CPU shared with the device (the sim target), between its kernels;
// gradient all-reduces one after another on the communication stream at the
// default MPI network's figures (defaultCommProfile), a wait for one stalling
// the compute stream until it is done. The plan file and tidal-place's choice
// both use it.
//
//===----------------------------------------------------------------------===//

#ifndef TIDAL_DIALECT_TIDAL_ANALYSIS_STEPTIMELINE_H
#define TIDAL_DIALECT_TIDAL_ANALYSIS_STEPTIMELINE_H

#include "tidal/Dialect/Tidal/Analysis/CostModel.h"

#include "mlir/IR/Operation.h"
#include "llvm/ADT/ArrayRef.h"

#include <vector>

namespace mlir::tidal {

struct StepTimeline {
  std::vector<OpCost> costs;         ///< by op, in schedule order
  std::vector<double> startUs;       ///< by op
  std::vector<const char *> streams; ///< by op: compute, copy_to_host,
                                     ///< copy_to_device, host or comm
  /// By op, just after it: the compute stream's clock (where a wait put
  /// after the op would stand), and when a copy issued after the op could
  /// start on each direction of the link (behind the copies before it
  /// and the host ops before it; the compute stream's clock aside). What
  /// the optimal budget fitter prices a copy it adds against.
  std::vector<double> computeDoneUs, toHostReadyUs, toDeviceReadyUs;
  double stepUs = 0;      ///< when the last stream is done
  double stallUs = 0;     ///< compute time lost waiting for copies
  double commStallUs = 0; ///< compute time lost waiting for all-reduces
};

/// The network a data-parallel step's collectives are priced at: its
/// transport's default (`tidal.comm_network`, MPI when unmarked), or the
/// measured figures recorded on it (`tidal.comm_gbps`,
/// `tidal.comm_latency_us`).
LinkProfile stepCommProfile(Operation *func);

/// Predicts `ops` (a function's body in schedule order): kernels on
/// `device`, host-placed ops on `host`, copies over a link of `linkGbps`
/// with `linkLatencyUs` per copy (negative: the default link's).
/// With `sharedCpu` (the sim target, whose "device" is the host's own CPU
/// and whose runtime runs one kernel at a time, tidalrt/device.h) host-placed
/// ops are priced with `device` too, and a host op and a device kernel never
/// overlap: the host op runs once
/// it is ready and the compute stream has finished its current kernel, and
/// the compute stream's later kernels wait for it.
StepTimeline predictTimeline(llvm::ArrayRef<Operation *> ops,
                             const DeviceProfile &device,
                             const DeviceProfile &host, double linkGbps,
                             bool sharedCpu = false, double linkLatencyUs = -1);

} // namespace mlir::tidal

#endif // TIDAL_DIALECT_TIDAL_ANALYSIS_STEPTIMELINE_H
