//===- Pipelines.h - named tidal pass pipelines -----------------*- C++ -*-===//
//
// tidalc builds exactly these pipelines, so that `tidal-opt
// --tidal-training-pipeline="..."` reproduces any stage of a compile.
//
//===----------------------------------------------------------------------===//

#ifndef TIDAL_PIPELINES_PIPELINES_H
#define TIDAL_PIPELINES_PIPELINES_H

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassOptions.h"

namespace mlir::tidal {

/// Options of the pipeline from an imported graph to a training step.
struct TrainingPipelineOptions
    : public PassPipelineOptions<TrainingPipelineOptions> {
  Option<std::string> loss{*this, "loss",
                           llvm::cl::desc("cross-entropy or mse to add a "
                                          "loss; empty if the model's first "
                                          "output is the loss"),
                           llvm::cl::init("")};
  Option<std::string> optimizer{*this, "optimizer",
                                llvm::cl::desc("sgd, adam or adamw"),
                                llvm::cl::init("sgd")};
  Option<double> lr{*this, "lr", llvm::cl::desc("learning rate"),
                    llvm::cl::init(-1.0)};
  Option<double> momentum{*this, "momentum", llvm::cl::desc("SGD momentum"),
                          llvm::cl::init(0.0)};
  Option<double> dampening{*this, "dampening", llvm::cl::desc("SGD dampening"),
                           llvm::cl::init(0.0)};
  Option<bool> nesterov{*this, "nesterov", llvm::cl::desc("SGD Nesterov"),
                        llvm::cl::init(false)};
  Option<double> weightDecay{*this, "weight-decay",
                             llvm::cl::desc("weight decay"),
                             llvm::cl::init(-1.0)};
  Option<double> beta1{*this, "beta1", llvm::cl::desc("Adam beta1"),
                       llvm::cl::init(0.9)};
  Option<double> beta2{*this, "beta2", llvm::cl::desc("Adam beta2"),
                       llvm::cl::init(0.999)};
  Option<double> eps{*this, "eps", llvm::cl::desc("Adam epsilon"),
                     llvm::cl::init(1e-8)};
  Option<bool> predict{*this, "predict",
                       llvm::cl::desc("keep an eval-mode copy of the forward "
                                      "function (tidal-add-predict)"),
                       llvm::cl::init(false)};
  Option<int64_t> ranks{
      *this, "ranks",
      llvm::cl::desc("data-parallel processes (more than 1: gradient "
                     "all-reduce, tidal-insert-all-reduce)"),
      llvm::cl::init(1)};
  Option<std::string> shard{
      *this, "shard",
      llvm::cl::desc("'optimizer': split the optimizer state over the ranks "
                     "(tidal-shard-optimizer, ZeRO stage 1); 'gradients': the "
                     "gradients too (reduce-scatter, stage 2)"),
      llvm::cl::init("")};
  Option<bool> syncBatchNorm{
      *this, "sync-batch-norm",
      llvm::cl::desc("batch norm statistics over every rank "
                     "(tidal-sync-batch-norm)"),
      llvm::cl::init(false)};
  Option<int64_t> bucketBytes{*this, "bucket-bytes",
                              llvm::cl::desc("all-reduce bucket size"),
                              llvm::cl::init(26214400)};
  Option<std::string> network{
      *this, "network",
      llvm::cl::desc("the collectives' transport: mpi or nccl (the cost "
                     "model's network)"),
      llvm::cl::init("mpi")};
  Option<double> networkGbps{
      *this, "network-gbps",
      llvm::cl::desc("a measured network's bus bandwidth (0: the default)"),
      llvm::cl::init(0.0)};
  Option<double> networkLatencyUs{
      *this, "network-latency-us",
      llvm::cl::desc("a measured network's per-message latency"),
      llvm::cl::init(0.0)};
};

/// The pass arguments of the training pipeline, in order.
llvm::ArrayRef<llvm::StringRef> trainingPipelineStages();

/// Adds the training pipeline to `pm`, stopping after the pass whose
/// argument is `stopAfter` when it is not empty.
void buildTrainingPipeline(OpPassManager &pm,
                           const TrainingPipelineOptions &options,
                           llvm::StringRef stopAfter = "");

/// Options of the memory-planning pipeline (schedule, plan, verify).
struct MemoryPipelineOptions
    : public PassPipelineOptions<MemoryPipelineOptions> {
  Option<bool> fuseEpilogues{
      *this, "fuse-epilogues",
      llvm::cl::desc("run tidal-fuse-epilogues first (the cpu target)"),
      llvm::cl::init(false)};
  Option<bool> fuseElementwise{
      *this, "fuse-elementwise",
      llvm::cl::desc("run tidal-fuse-elementwise after tidal-block-channels "
                     "(the cpu target)"),
      llvm::cl::init(false)};
  Option<bool> blockChannels{
      *this, "block-channels",
      llvm::cl::desc("run tidal-block-channels first (the cpu runtime's "
                     "kernels: the cpu and sim targets)"),
      llvm::cl::init(false)};
  Option<std::string> schedule{*this, "schedule",
                               llvm::cl::desc("memory or program"),
                               llvm::cl::init("memory")};
  Option<std::string> strategy{*this, "strategy",
                               llvm::cl::desc("packed or slots"),
                               llvm::cl::init("packed")};
  Option<bool> inPlace{*this, "in-place",
                       llvm::cl::desc("let results take the bytes of "
                                      "operands that die at the op"),
                       llvm::cl::init(true)};
  Option<int64_t> budget{*this, "budget",
                         llvm::cl::desc("device memory budget in bytes, fitted "
                                        "by tidal-schedule-swaps; 0: none"),
                         llvm::cl::init(0)};
  Option<std::string> placement{
      *this, "placement",
      llvm::cl::desc("tidal-place mode: device (nothing moves; the default), "
                     "host, optimizer or auto"),
      llvm::cl::init("device")};
  Option<bool> hostLayers{
      *this, "host-layers",
      llvm::cl::desc("auto placement: move device kernels to the host CPU "
                     "when nothing else fits"),
      llvm::cl::init(true)};
  Option<bool> hostLayersByCost{
      *this, "host-layers-by-cost",
      llvm::cl::desc("auto placement: move device kernels to the host CPU "
                     "where that is predicted faster than the plan's swaps, "
                     "recomputations or copies for host ops"),
      llvm::cl::init(true)};
  Option<bool> sharedCpu{
      *this, "shared-cpu",
      llvm::cl::desc("tidal-place: the device is the host's own CPU, one "
                     "kernel at a time with host ops (the sim target)"),
      llvm::cl::init(false)};
  Option<bool> swap{*this, "swap",
                    llvm::cl::desc("let tidal-schedule-swaps swap tensors"),
                    llvm::cl::init(true)};
  Option<bool> recompute{*this, "recompute",
                         llvm::cl::desc("let it recompute tensors"),
                         llvm::cl::init(false)};
  Option<std::string> planner{
      *this, "planner",
      llvm::cl::desc("greedy, or milp (tidal-schedule-swaps strategy)"),
      llvm::cl::init("greedy")};
  Option<std::string> swapFunction{
      *this, "swap-function",
      llvm::cl::desc("swap only in this function (empty: all)"),
      llvm::cl::init("")};
  Option<double> gflops{*this, "gflops",
                        llvm::cl::desc("compute GFLOP/s for the cost model "
                                       "(0: default)"),
                        llvm::cl::init(0.0)};
  Option<double> gbytesPerS{*this, "gbytes-per-s",
                            llvm::cl::desc("memory GB/s (0: default)"),
                            llvm::cl::init(0.0)};
  Option<double> opOverheadUs{*this, "op-overhead-us",
                              llvm::cl::desc("us per kernel (<0: default)"),
                              llvm::cl::init(-1.0)};
  Option<std::string> profile{
      *this, "profile",
      llvm::cl::desc("a machine profile whose host section (op times "
                     "included) prices the ops for placement and swaps"),
      llvm::cl::init("")};
  Option<double> linkGbps{*this, "link-gbps",
                          llvm::cl::desc("host<->device bandwidth, GB/s"),
                          llvm::cl::init(16.0)};
};

/// Adds tidal-block-channels (if asked), tidal-schedule, tidal-place
/// (unless placement is device),
/// tidal-schedule-swaps (with a budget),
/// tidal-plan-memory and tidal-verify-memory-plan,
/// stopping after the pass whose argument is `stopAfter` when it is one of
/// the first two.
void buildMemoryPipeline(OpPassManager &pm,
                         const MemoryPipelineOptions &options,
                         llvm::StringRef stopAfter = "");

/// Registers `tidal-training-pipeline` and `tidal-memory-pipeline`.
void registerPipelines();

} // namespace mlir::tidal

#endif // TIDAL_PIPELINES_PIPELINES_H
