//===- OptionChecks.h - tidalc's option values, checked ---------*- C++ -*-===//
//
// The checks of tidalc's option values against each other that need no
// model (Options.cpp defines the options; Distributed.cpp checks the
// data-parallel ones). Each returns an error message, or "".
//
//===----------------------------------------------------------------------===//

#ifndef TIDAL_TOOLS_TIDALC_OPTIONCHECKS_H
#define TIDAL_TOOLS_TIDALC_OPTIONCHECKS_H

#include "llvm/ADT/StringRef.h"

#include <string>
#include <utility>
#include <vector>

namespace tidalc {

/// --emit, --target, --swap, --host-layers, --placement, --planner,
/// --recompute: known values, and a cuda executable only from a tidalc
/// that can link one.
std::string checkOptionValues();

/// --loss, --stop-after (`planStage`: it names a planning stage),
/// --schedule, --memory-plan, and what --trace and --explain need.
std::string checkStageOptions(llvm::StringRef stopAfter, bool planStage);

/// --embedding-padding's NAME:ROW entries into `out`.
std::string
parseEmbeddingPadding(std::vector<std::pair<std::string, int64_t>> &out);

} // namespace tidalc

#endif // TIDAL_TOOLS_TIDALC_OPTIONCHECKS_H
