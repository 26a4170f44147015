//===- Distributed.h - tidalc's data-parallel options -----------*- C++ -*-===//
//
// `--distributed`, `--ranks` and `--bucket-size` (SPEC section 6,
// docs/distributed.md): checked against the rest of the command line.
//
//===----------------------------------------------------------------------===//

#ifndef TIDAL_TOOLS_TIDALC_DISTRIBUTED_H
#define TIDAL_TOOLS_TIDALC_DISTRIBUTED_H

#include <cstdint>
#include <string>

namespace tidalc {

/// The data-parallel settings of one compile.
struct DataParallel {
  /// The backend ("" when the step runs on one process).
  std::string backend;
  int64_t ranks = 1;
  /// Each rank's share of the global batch (0: no --batch-size).
  int64_t rankBatch = 0;
  int64_t bucketBytes = 0;
  /// --sync-batch-norm: BatchNorm statistics over every rank.
  bool syncBatchNorm = false;
  /// --shard: "optimizer" (ZeRO stage 1), "gradients" (stage 2) or "".
  std::string shard;
};

/// Reads the options; an error message, or "" with `out` filled.
std::string parseDataParallel(DataParallel &out);

} // namespace tidalc

#endif // TIDAL_TOOLS_TIDALC_DISTRIBUTED_H
