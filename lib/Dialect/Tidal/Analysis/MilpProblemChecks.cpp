//===- MilpProblemChecks.cpp - a budget MILP problem's checks -------------===//

#include "MilpProblemChecks.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/Twine.h"

#include <cassert>
#include <cmath>
#include <vector>

using namespace mlir;
using namespace mlir::tidal;

LogicalResult mlir::tidal::validateMilpProblem(const MilpProblem &problem,
                                               std::string *error) {
  auto fail = [&](const Twine &message) {
    if (error)
      *error = message.str();
    return failure();
  };
  int64_t size = int64_t(problem.live.size());
  if (problem.budget < 0)
    return fail("negative budget " + Twine(problem.budget));
  if (!(problem.timeLimitS > 0) || std::isnan(problem.timeLimitS))
    return fail("time limit must be positive");
  for (auto [p, bytes] : llvm::enumerate(problem.live))
    if (bytes < 0)
      return fail("negative live bytes at position " + Twine(p));
  for (auto [c, cand] : llvm::enumerate(problem.candidates))
    for (auto [o, opt] : llvm::enumerate(cand.options)) {
      std::string where =
          ("candidate " + Twine(c) + " option " + Twine(o)).str();
      if (!std::isfinite(opt.costUs))
        return fail(where + ": cost must be finite");
      for (const auto *list : {&opt.removes, &opt.adds})
        for (const ByteInterval &iv : *list) {
          if (iv.bytes < 0)
            return fail(where + ": negative interval bytes");
          if (iv.begin < 0 || iv.begin > iv.end || iv.end > size)
            return fail(where + ": interval [" + Twine(iv.begin) + ", " +
                        Twine(iv.end) + ") outside [0, " + Twine(size) + "]");
        }
    }
  int numCand = int(problem.candidates.size());
  for (auto [a, b] : problem.exclusive)
    if (a < 0 || b < 0 || a >= numCand || b >= numCand || a == b)
      return fail("exclusive pair (" + Twine(a) + ", " + Twine(b) +
                  ") needs two distinct candidates in [0, " + Twine(numCand) +
                  ")");
  return success();
}

SmallVector<int64_t> mlir::tidal::bytesUnder(const MilpProblem &problem,
                                             ArrayRef<int> choice) {
  assert(choice.size() == problem.candidates.size() && "one entry each");
  size_t size = problem.live.size();
  // Differences per position, summed once at the end.
  std::vector<int64_t> delta(size + 1, 0);
  for (auto [c, o] : llvm::enumerate(choice)) {
    if (o < 0 || c >= problem.candidates.size() ||
        size_t(o) >= problem.candidates[c].options.size())
      continue;
    const MilpOption &opt = problem.candidates[c].options[o];
    auto apply = [&](ArrayRef<ByteInterval> list, int64_t sign) {
      for (const ByteInterval &iv : list) {
        if (iv.begin >= iv.end)
          continue;
        delta[iv.begin] += sign * iv.bytes;
        delta[iv.end] -= sign * iv.bytes;
      }
    };
    apply(opt.adds, 1);
    apply(opt.removes, -1);
  }
  SmallVector<int64_t> bytes(problem.live.begin(), problem.live.end());
  int64_t running = 0;
  for (size_t p = 0; p < size; ++p) {
    running += delta[p];
    bytes[p] += running;
  }
  return bytes;
}
