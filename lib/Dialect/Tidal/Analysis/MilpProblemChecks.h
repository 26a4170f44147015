//===- MilpProblemChecks.h - a budget MILP problem's checks -----*- C++ -*-===//
//
// What solveBudgetMilp checks before it solves (MilpProblemChecks.cpp,
// with bytesUnder, BudgetMilp.h).
//
//===----------------------------------------------------------------------===//

#ifndef TIDAL_LIB_DIALECT_TIDAL_ANALYSIS_MILPPROBLEMCHECKS_H
#define TIDAL_LIB_DIALECT_TIDAL_ANALYSIS_MILPPROBLEMCHECKS_H

#include "tidal/Dialect/Tidal/Analysis/BudgetMilp.h"

#include <string>

namespace mlir::tidal {

/// Fails, saying why in `error`, for a problem the solver cannot take:
/// negative live bytes, a non-finite cost, an interval outside the
/// positions or with negative bytes, a bad exclusive pair or time limit.
LogicalResult validateMilpProblem(const MilpProblem &problem,
                                  std::string *error);

} // namespace mlir::tidal

#endif // TIDAL_LIB_DIALECT_TIDAL_ANALYSIS_MILPPROBLEMCHECKS_H
