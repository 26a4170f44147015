//===- Distributed.cpp - tidalc's data-parallel options -------------------===//

#include "Distributed.h"

#include "Files.h"
#include "Options.h"

#include "tidal/Target/Program.h"

using namespace llvm;

std::string tidalc::parseDataParallel(DataParallel &out) {
  out = DataParallel();
  if (distributed.empty()) {
    if (ranks.getNumOccurrences())
      return "--ranks needs --distributed mpi|nccl";
    if (bucketSize.getNumOccurrences())
      return "--bucket-size needs --distributed mpi|nccl";
    if (syncBatchNorm)
      return "--sync-batch-norm needs --distributed mpi|nccl";
    if (!shard.empty())
      return "--shard needs --distributed mpi|nccl";
    return "";
  }
  if (distributed != "mpi" && distributed != "nccl")
    return "unknown --distributed '" + distributed.getValue() +
           "' (expected mpi or nccl)";
  if (distributed == "nccl" && target != "cuda")
    return "--distributed nccl runs the cuda target's collectives; use "
           "--distributed mpi with --target " +
           target.getValue();
  if (distributed == "mpi" && target == "cuda")
    return "the cuda target's collectives are NCCL's: use --distributed "
           "nccl (launched by mpirun all the same)";
  if (mode != "train")
    return "--distributed applies to training (--mode train)";
  if (!ranks.getNumOccurrences() || ranks < 1)
    return "--distributed needs --ranks N, the number of processes that "
           "mpirun will start (N >= 1)";
  if (ranks > 65536)
    return "--ranks " + std::to_string(ranks) + " is more than 65536";
  if (!batchSize.getNumOccurrences())
    return "--distributed needs --batch-size, the global batch that the "
           "ranks share";
  if (batchSize % ranks != 0)
    return "--batch-size " + std::to_string(batchSize) +
           " does not divide among " + std::to_string(ranks) +
           " ranks: each rank takes an equal contiguous share of every "
           "global batch";
  std::optional<int64_t> bucket = parseSize(bucketSize);
  if (!bucket || *bucket <= 0)
    return "--bucket-size '" + bucketSize.getValue() +
           "' is not a positive size (bytes, or e.g. 25MiB)";
  bool linking = emit != "mlir" && emit != "plan";
  if (!mlir::tidal::canLinkMpi() && linking)
    return "this tidalc was built without MPI (no libopenmpi-dev at build "
           "time), so it cannot build a --distributed " +
           distributed.getValue() +
           " program (NCCL's ranks also meet through MPI)";
  if (distributed == "nccl" && mlir::tidal::canLinkCuda() &&
      !mlir::tidal::canLinkNccl() && linking)
    return "this tidalc's CUDA runtime was built without NCCL (no nccl.h and "
           "libnccl at build time), so it cannot build a --distributed nccl "
           "program; --emit plan and mlir work";
  out.backend = distributed;
  out.ranks = ranks;
  out.rankBatch = batchSize / ranks;
  out.bucketBytes = *bucket;
  out.syncBatchNorm = syncBatchNorm;
  if (!shard.empty() && shard != "optimizer" && shard != "gradients")
    return "unknown --shard '" + shard.getValue() +
           "' (expected optimizer or gradients)";
  out.shard = shard;
  return "";
}
