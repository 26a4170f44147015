//===- Pipelines.cpp - named tidal pass pipelines -------------------------===//

#include "tidal/Pipelines/Pipelines.h"
#include "tidal/Dialect/Tidal/Transforms/Passes.h"

#include "mlir/Pass/PassRegistry.h"

using namespace mlir;
using namespace mlir::tidal;

ArrayRef<StringRef> tidal::trainingPipelineStages() {
  static const StringRef stages[] = {"tidal-add-loss", "tidal-autodiff",
                                     "tidal-insert-optimizer",
                                     "tidal-insert-all-reduce"};
  return stages;
}

void tidal::buildTrainingPipeline(OpPassManager &pm,
                                  const TrainingPipelineOptions &options,
                                  StringRef stopAfter) {
  pm.addPass(createTidalFuseGeluPass());
  if (options.predict)
    pm.addPass(createTidalAddPredictPass());
  if (!options.loss.empty()) {
    TidalAddLossPassOptions o;
    o.loss = options.loss;
    pm.addPass(createTidalAddLossPass(o));
  }
  if (stopAfter == "tidal-add-loss")
    return;
  pm.addPass(createTidalAutodiffPass());
  if (stopAfter == "tidal-autodiff")
    return;
  TidalInsertOptimizerPassOptions o;
  o.optimizer = options.optimizer;
  o.lr = options.lr;
  o.momentum = options.momentum;
  o.dampening = options.dampening;
  o.nesterov = options.nesterov;
  o.weightDecay = options.weightDecay;
  o.beta1 = options.beta1;
  o.beta2 = options.beta2;
  o.eps = options.eps;
  pm.addPass(createTidalInsertOptimizerPass(o));
  if (stopAfter == "tidal-insert-optimizer")
    return;
  if (options.ranks > 1) {
    TidalInsertAllReducePassOptions a;
    a.ranks = options.ranks;
    a.bucketBytes = options.bucketBytes;
    a.network = options.network;
    a.networkGbps = options.networkGbps;
    a.networkLatencyUs = options.networkLatencyUs;
    pm.addPass(createTidalInsertAllReducePass(a));
    if (options.syncBatchNorm) {
      TidalSyncBatchNormPassOptions s;
      s.ranks = options.ranks;
      pm.addPass(createTidalSyncBatchNormPass(s));
    }
    if (options.shard == "optimizer" || options.shard == "gradients") {
      TidalShardOptimizerPassOptions s;
      s.ranks = options.ranks;
      s.gradients = options.shard == "gradients";
      pm.addPass(createTidalShardOptimizerPass(s));
    }
  }
}

void tidal::buildMemoryPipeline(OpPassManager &pm,
                                const MemoryPipelineOptions &options,
                                StringRef stopAfter) {
  if (options.fuseEpilogues)
    pm.addPass(createTidalFuseEpiloguesPass());
  if (stopAfter == "tidal-fuse-epilogues")
    return;
  if (options.blockChannels)
    pm.addPass(createTidalBlockChannelsPass());
  if (stopAfter == "tidal-block-channels")
    return;
  if (options.fuseElementwise)
    pm.addPass(createTidalFuseElementwisePass());
  if (stopAfter == "tidal-fuse-elementwise")
    return;
  TidalSchedulePassOptions schedule;
  schedule.strategy = options.schedule;
  pm.addPass(createTidalSchedulePass(schedule));
  if (stopAfter == "tidal-schedule")
    return;
  if (options.placement != "device") {
    TidalPlacePassOptions place;
    place.mode = options.placement;
    place.budget = options.budget;
    place.hostLayers = options.hostLayers;
    place.hostLayersByCost = options.hostLayersByCost;
    place.sharedCpu = options.sharedCpu;
    place.swap = options.swap;
    place.recompute = options.recompute;
    place.planner = options.planner;
    place.linkGbps = options.linkGbps;
    place.function = options.swapFunction;
    place.gflops = options.gflops;
    place.gbytesPerS = options.gbytesPerS;
    place.opOverheadUs = options.opOverheadUs;
    place.profile = options.profile;
    pm.addPass(createTidalPlacePass(place));
  }
  if (stopAfter == "tidal-place")
    return;
  if (options.budget > 0) {
    TidalScheduleSwapsPassOptions swaps;
    swaps.budget = options.budget;
    swaps.linkGbps = options.linkGbps;
    swaps.swap = options.swap;
    swaps.recompute = options.recompute;
    swaps.strategy = options.planner;
    swaps.function = options.swapFunction;
    swaps.gflops = options.gflops;
    swaps.gbytesPerS = options.gbytesPerS;
    swaps.opOverheadUs = options.opOverheadUs;
    swaps.profile = options.profile;
    pm.addPass(createTidalScheduleSwapsPass(swaps));
  }
  if (stopAfter == "tidal-schedule-swaps")
    return;
  TidalPlanMemoryPassOptions plan;
  plan.strategy = options.strategy;
  plan.inPlace = options.inPlace;
  pm.addPass(createTidalPlanMemoryPass(plan));
  if (stopAfter == "tidal-plan-memory")
    return;
  pm.addPass(createTidalVerifyMemoryPlanPass());
}

void tidal::registerPipelines() {
  PassPipelineRegistration<TrainingPipelineOptions>(
      "tidal-training-pipeline",
      "From an imported graph to the training step: loss, autodiff, "
      "optimizer",
      [](OpPassManager &pm, const TrainingPipelineOptions &options) {
        buildTrainingPipeline(pm, options);
      });
  PassPipelineRegistration<MemoryPipelineOptions>(
      "tidal-memory-pipeline",
      "Memory planning of a training step: schedule, packed offsets, "
      "verification",
      [](OpPassManager &pm, const MemoryPipelineOptions &options) {
        buildMemoryPipeline(pm, options);
      });
}
