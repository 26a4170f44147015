//===- DistributedPasses.td - data-parallel passes ---------*- tablegen -*-===//
//
// The passes of tidalc --distributed: gradient all-reduce buckets,
// synchronized batch norm, and the sharded optimizer (ZeRO stages 1 and 2).
// Included by Passes.td, which generates them with the other passes.
//
//===----------------------------------------------------------------------===//

#ifndef TIDAL_DIALECT_TIDAL_TRANSFORMS_DISTRIBUTEDPASSES_TD
#define TIDAL_DIALECT_TIDAL_TRANSFORMS_DISTRIBUTEDPASSES_TD

include "mlir/Pass/PassBase.td"

def TidalInsertAllReducePass
    : Pass<"tidal-insert-all-reduce", "mlir::ModuleOp"> {
  let summary = "sum gradients over the ranks of a data-parallel run, in buckets";
  let description = [{
    For a step that each of `ranks` processes runs on its share of the
    global batch (`tidalc --distributed`): groups the gradients that the
    optimizer updates of `train_step` read into buckets of at most
    `bucket-bytes` (a gradient larger than that is a bucket of its own; at
    most 120 tensors a bucket), in the order the backward pass computes
    them, as PyTorch DDP does. Each bucket becomes a
    `tidal.all_reduce_start`, placed just after its last gradient is
    computed, and a `tidal.all_reduce_wait`, placed just before the first
    update that reads one of them; the updates read the waited results.
    The loss result joins the first bucket, so that every rank returns the
    global loss. The divisor is the number of ranks for a mean loss (the
    gradient of the global batch's mean loss) and 1 for a sum;
    `loss-reduction=auto` reads it from the loss op's `reduction` (or a
    final `reduce_sum`), mean otherwise. The function gets `tidal.comm_network
    = "mpi"` or `"nccl"` (`network`), which the cost model prices the
    collectives by (MPI between processes, NCCL between GPUs).
  }];
  let options = [
    Option<"ranks", "ranks", "int64_t", "1",
           "the number of processes of the run">,
    Option<"bucketBytes", "bucket-bytes", "int64_t", "26214400",
           "largest bucket in bytes (PyTorch DDP's 25 MiB by default)">,
    Option<"lossReduction", "loss-reduction", "std::string", "\"auto\"",
           "auto, mean or sum: how the loss combines the batch's samples">,
    Option<"funcName", "func-name", "std::string", "\"train_step\"",
           "the training-step function">,
    Option<"network", "network", "std::string", "\"mpi\"",
           "mpi or nccl: the collectives' transport, recorded on the function "
           "as `tidal.comm_network` for the cost model">,
    Option<"networkGbps", "network-gbps", "double", "0.0",
           "a measured all-reduce bus bandwidth (GB/s) instead of the "
           "transport's default, recorded as `tidal.comm_gbps`">,
    Option<"networkLatencyUs", "network-latency-us", "double", "0.0",
           "with network-gbps: the measured per-message latency (us), "
           "recorded as `tidal.comm_latency_us`">,
  ];
  let dependentDialects = ["::mlir::tidal::TidalDialect"];
}

def TidalSyncBatchNormPass
    : Pass<"tidal-sync-batch-norm", "mlir::ModuleOp"> {
  let summary = "batch norm statistics over every rank (torch SyncBatchNorm)";
  let description = [{
    For a data-parallel step of `ranks` processes (`tidalc
    --sync-batch-norm`): every `tidal.batch_norm_training` of `train_step`
    normalizes with the global batch's mean and biased variance, averaged
    over the ranks by one `tidal.all_reduce_start`/`wait` pair (on the
    input shifted by the running mean, which every rank holds alike), and
    updates its running statistics from them (the variance made unbiased
    over the global batch); the output is a `tidal.batch_norm_inference`
    with those statistics. Each `tidal.batch_norm_backward` of such a batch
    norm becomes element-wise ops and reductions whose sums of `grad` and
    `grad * xhat` are summed over the ranks before the input's gradient is
    formed; the scale's and bias's gradients stay this rank's sums (the
    gradient all-reduce averages them). Buckets are numbered after those
    already in the step. With one rank it changes nothing.
  }];
  let options = [
    Option<"ranks", "ranks", "int64_t", "1",
           "the number of processes of the run">,
    Option<"funcName", "func-name", "std::string", "\"train_step\"",
           "the training-step function">,
  ];
  let dependentDialects = ["::mlir::tidal::TidalDialect"];
}

def TidalShardOptimizerPass
    : Pass<"tidal-shard-optimizer", "mlir::ModuleOp"> {
  let summary = "split the optimizer state over the ranks (ZeRO stage 1)";
  let description = [{
    For a data-parallel step of `ranks` processes (`tidalc --shard
    optimizer`, after `--tidal-insert-all-reduce`): every torch.optim
    update of `train_step` updates only this rank's chunk of its parameter
    (`tidal.shard` of the parameter and of the all-reduced gradient: the
    flattened tensor's elements [r * c, (r + 1) * c), c = ceil(n / ranks),
    zero-padded), with optimizer-state arguments of that chunk's size
    (marked `tidal.shard_of` with their full shape). The updated chunks of
    each gradient bucket are all-gathered into the full parameters
    (`tidal.all_gather_start` after the bucket's last update, its wait at
    the end of the step). Optimizer state per rank drops to 1 / ranks.
    With `gradients` (ZeRO stage 2, `--shard gradients`) the gradient
    buckets are reduce-scattered instead of all-reduced
    (`tidal.reduce_scatter_start`/`wait`, half the traffic): each rank
    receives only its chunks, which the updates read directly; anything
    else a bucket held (the loss) keeps an all-reduce of its own.
  }];
  let options = [
    Option<"ranks", "ranks", "int64_t", "1",
           "the number of processes of the run">,
    Option<"gradients", "gradients", "bool", "false",
           "also shard the gradients: reduce-scatter (ZeRO stage 2)">,
    Option<"funcName", "func-name", "std::string", "\"train_step\"",
           "the training-step function">,
  ];
  let dependentDialects = ["::mlir::tidal::TidalDialect"];
}

#endif // TIDAL_DIALECT_TIDAL_TRANSFORMS_DISTRIBUTEDPASSES_TD
