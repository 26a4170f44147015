//===- Options.h - tidalc's command-line options ----------------*- C++ -*-===//
//
// The options of `tidalc` (SPEC section 1), defined in Options.cpp and read
// by the driver (tidalc.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef TIDAL_TOOLS_TIDALC_OPTIONS_H
#define TIDAL_TOOLS_TIDALC_OPTIONS_H

#include "llvm/Support/CommandLine.h"

#include <cstdint>
#include <string>

namespace tidalc {

extern llvm::cl::OptionCategory category;
extern llvm::cl::opt<std::string> inputPath;
extern llvm::cl::opt<std::string> outputPath;
extern llvm::cl::opt<std::string> emit;
extern llvm::cl::opt<int64_t> batchSize;
extern llvm::cl::list<std::string> freeze;
extern llvm::cl::list<std::string> embeddingPadding;
extern llvm::cl::opt<std::string> distributed;
extern llvm::cl::opt<int64_t> ranks;
extern llvm::cl::opt<std::string> bucketSize;
extern llvm::cl::opt<bool> syncBatchNorm;
extern llvm::cl::opt<std::string> shard;
extern llvm::cl::opt<std::string> loss;
extern llvm::cl::opt<std::string> optimizer;
extern llvm::cl::opt<double> lr;
extern llvm::cl::opt<double> momentum;
extern llvm::cl::opt<double> dampening;
extern llvm::cl::opt<bool> nesterov;
extern llvm::cl::opt<double> weightDecay;
extern llvm::cl::opt<double> beta1;
extern llvm::cl::opt<double> beta2;
extern llvm::cl::opt<double> eps;
extern llvm::cl::opt<std::string> mode;
extern llvm::cl::opt<std::string> target;
extern llvm::cl::opt<std::string> deviceMemory;
extern llvm::cl::opt<std::string> swapMode;
extern llvm::cl::opt<std::string> placement;
extern llvm::cl::opt<std::string> hostLayers;
extern llvm::cl::opt<std::string> blockChannels;
extern llvm::cl::opt<std::string> fuseEpilogues;
extern llvm::cl::opt<std::string> fuseElementwise;
extern llvm::cl::opt<std::string> recomputeMode;
extern llvm::cl::opt<std::string> planner;
extern llvm::cl::opt<double> linkGbps;
extern llvm::cl::opt<int64_t> linkShare;
extern llvm::cl::list<std::string> embedData;
extern llvm::cl::opt<std::string> tracePath;
extern llvm::cl::opt<bool> explain;
extern llvm::cl::opt<std::string> scheduleStrategy;
extern llvm::cl::opt<std::string> memoryPlan;
extern llvm::cl::opt<bool> inPlace;
extern llvm::cl::opt<std::string> deviceProfile;
extern llvm::cl::opt<bool> verbose;
extern llvm::cl::opt<bool> timings;
extern llvm::cl::opt<bool> listOps;

/// `--stop-after`, shared with LLVM's code generator (Options.cpp).
llvm::cl::opt<std::string> &stopAfterOption();

} // namespace tidalc

#endif // TIDAL_TOOLS_TIDALC_OPTIONS_H
