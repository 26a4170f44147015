//===- BudgetMilpTest.cpp - the optimal budget solver against known optima ===//

#include "tidal/Dialect/Tidal/Analysis/BudgetMilp.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <random>
#include <thread>

using namespace mlir;
using namespace mlir::tidal;

namespace {

MilpOption swapOption(int64_t begin, int64_t end, int64_t bytes,
                      double costUs) {
  MilpOption opt;
  opt.removes.push_back({begin, end, bytes});
  opt.costUs = costUs;
  return opt;
}

MilpOption recomputeOption(int64_t begin, int64_t end, int64_t bytes,
                           ByteInterval kept, double costUs) {
  MilpOption opt = swapOption(begin, end, bytes, costUs);
  opt.adds.push_back(kept);
  return opt;
}

MilpCandidate candidate(std::initializer_list<MilpOption> options) {
  MilpCandidate cand;
  cand.options.append(options.begin(), options.end());
  return cand;
}

int64_t peakOf(ArrayRef<int64_t> bytes) {
  return bytes.empty() ? 0 : *std::max_element(bytes.begin(), bytes.end());
}

double costOf(const MilpProblem &problem, ArrayRef<int> choice) {
  double cost = 0;
  for (size_t c = 0; c < choice.size(); ++c)
    if (choice[c] >= 0)
      cost += problem.candidates[c].options[choice[c]].costUs;
  return cost;
}

MilpSolution solve(const MilpProblem &problem) {
  std::string error;
  FailureOr<MilpSolution> sol = solveBudgetMilp(problem, &error);
  EXPECT_TRUE(succeeded(sol)) << error;
  return succeeded(sol) ? *sol : MilpSolution();
}

/// What every answer must satisfy, whatever the problem.
void expectConsistent(const MilpProblem &problem, const MilpSolution &sol) {
  ASSERT_EQ(sol.choice.size(), problem.candidates.size());
  for (size_t c = 0; c < sol.choice.size(); ++c)
    ASSERT_LT(sol.choice[c], int(problem.candidates[c].options.size()));
  for (auto [a, b] : problem.exclusive)
    EXPECT_FALSE(sol.choice[a] >= 0 && sol.choice[b] >= 0);
  if (sol.feasible) {
    EXPECT_EQ(sol.peak, peakOf(bytesUnder(problem, sol.choice)));
    EXPECT_LE(sol.peak, problem.budget);
    EXPECT_NEAR(sol.costUs, costOf(problem, sol.choice), 1e-9);
    EXPECT_EQ(sol.smallestPeak, -1);
  } else {
    EXPECT_GT(sol.smallestPeak, problem.budget);
    ASSERT_EQ(sol.smallestPeakChoice.size(), problem.candidates.size());
    EXPECT_EQ(sol.smallestPeak,
              peakOf(bytesUnder(problem, sol.smallestPeakChoice)));
  }
}

TEST(BudgetMilp, AlreadyFitsNeedsNoSolver) {
  MilpProblem problem;
  problem.live = {10, 40, 20};
  problem.budget = 40;
  problem.candidates.push_back(candidate({swapOption(1, 2, 30, 1)}));
  MilpSolution sol = solve(problem);
  EXPECT_TRUE(sol.feasible);
  EXPECT_TRUE(sol.optimal);
  EXPECT_EQ(sol.choice, SmallVector<int>({-1}));
  EXPECT_EQ(sol.peak, 40);
  EXPECT_EQ(sol.costUs, 0);
  EXPECT_EQ(sol.variables, 0);
  expectConsistent(problem, sol);
}

// An option with a negative cost saves time (an optimizer update moved to
// the host): it is taken even where everything fits, as long as the budget
// allows its bytes, and of two exclusive ones the larger saving.
TEST(BudgetMilp, SavingsAreTakenWhereTheBudgetAllows) {
  MilpProblem problem;
  problem.live = {10, 40, 20};
  problem.budget = 40;
  MilpOption saves = swapOption(0, 3, 5, -7);
  MilpOption grows = swapOption(0, 1, 5, -9);
  grows.adds.push_back({1, 2, 10}); // would put position 1 at 50
  MilpOption smaller = swapOption(0, 3, 5, -3);
  problem.candidates.push_back(candidate({saves}));
  problem.candidates.push_back(candidate({grows}));
  problem.candidates.push_back(candidate({smaller}));
  problem.exclusive.push_back({0, 2});
  MilpSolution sol = solve(problem);
  EXPECT_TRUE(sol.feasible);
  EXPECT_EQ(sol.choice, SmallVector<int>({0, -1, -1}));
  EXPECT_NEAR(sol.costUs, -7, 1e-9);
  expectConsistent(problem, sol);
}

// Largest-first takes the 60-byte swap (cost 50); the two 30-byte ones
// together fit as well for 20.
TEST(BudgetMilp, BeatsGreedyLargestFirst) {
  MilpProblem problem;
  problem.live = {0, 100, 100, 0};
  problem.budget = 40;
  problem.candidates.push_back(candidate({swapOption(1, 3, 60, 50)}));
  problem.candidates.push_back(candidate({swapOption(1, 3, 30, 10)}));
  problem.candidates.push_back(candidate({swapOption(1, 3, 30, 10)}));
  MilpSolution sol = solve(problem);
  EXPECT_TRUE(sol.feasible);
  EXPECT_TRUE(sol.optimal);
  EXPECT_EQ(sol.choice, SmallVector<int>({-1, 0, 0}));
  EXPECT_DOUBLE_EQ(sol.costUs, 20);
  EXPECT_EQ(sol.peak, 40);
  EXPECT_GT(sol.variables, 0);
  expectConsistent(problem, sol);
}

// Recomputing is cheaper but keeps 10 operand bytes live at position 2:
// that overflows there when position 2 is close to the budget.
TEST(BudgetMilp, AddsIntervalsDecideBetweenOptions) {
  MilpProblem problem;
  problem.budget = 95;
  problem.candidates.push_back(candidate(
      {swapOption(1, 2, 20, 30), recomputeOption(1, 2, 20, {2, 3, 10}, 5)}));

  problem.live = {50, 100, 88};
  MilpSolution tight = solve(problem);
  EXPECT_TRUE(tight.feasible);
  EXPECT_TRUE(tight.optimal);
  EXPECT_EQ(tight.choice, SmallVector<int>({0}));
  EXPECT_DOUBLE_EQ(tight.costUs, 30);
  expectConsistent(problem, tight);

  problem.live = {50, 100, 80};
  MilpSolution roomy = solve(problem);
  EXPECT_TRUE(roomy.feasible);
  EXPECT_TRUE(roomy.optimal);
  EXPECT_EQ(roomy.choice, SmallVector<int>({1}));
  EXPECT_DOUBLE_EQ(roomy.costUs, 5);
  EXPECT_EQ(roomy.peak, 90);
  expectConsistent(problem, roomy);
}

// Peaks by hand: none 100, {0} 70, {1} 85, {0, 1} max(45, 55) = 55.
TEST(BudgetMilp, InfeasibleReportsSmallestPeak) {
  MilpProblem problem;
  problem.live = {10, 100, 60, 0};
  problem.budget = 50;
  problem.candidates.push_back(candidate({swapOption(1, 3, 30, 1)}));
  problem.candidates.push_back(
      candidate({recomputeOption(1, 2, 25, {2, 3, 25}, 1)}));
  MilpSolution sol = solve(problem);
  EXPECT_FALSE(sol.feasible);
  EXPECT_TRUE(sol.optimal);
  EXPECT_EQ(sol.smallestPeak, 55);
  EXPECT_TRUE(sol.smallestPeakOptimal);
  EXPECT_EQ(sol.smallestPeakChoice, SmallVector<int>({0, 0}));
  EXPECT_EQ(sol.choice, SmallVector<int>({-1, -1}));
  expectConsistent(problem, sol);
}

// Even removing all 10 removable bytes leaves 90 > 50: proven without GLPK.
TEST(BudgetMilp, HopelessBudgetIsProvenWithoutTheSolver) {
  MilpProblem problem;
  problem.live = {100};
  problem.budget = 50;
  problem.candidates.push_back(
      candidate({swapOption(0, 1, 10, 3), swapOption(0, 1, 4, 1)}));
  MilpSolution sol = solve(problem);
  EXPECT_FALSE(sol.feasible);
  EXPECT_TRUE(sol.optimal);
  EXPECT_EQ(sol.variables, 0);
  EXPECT_EQ(sol.smallestPeak, 90);
  EXPECT_EQ(sol.smallestPeakChoice, SmallVector<int>({0}));
  expectConsistent(problem, sol);
}

TEST(BudgetMilp, ExclusivePairsAreRespected) {
  MilpProblem problem;
  problem.live = {100};
  problem.budget = 60;
  problem.candidates.push_back(candidate({swapOption(0, 1, 20, 1)}));
  problem.candidates.push_back(candidate({swapOption(0, 1, 20, 1)}));
  problem.candidates.push_back(candidate({swapOption(0, 1, 40, 5)}));
  MilpSolution free = solve(problem);
  EXPECT_EQ(free.choice, SmallVector<int>({0, 0, -1}));
  EXPECT_DOUBLE_EQ(free.costUs, 2);

  problem.exclusive.push_back({0, 1});
  MilpSolution paired = solve(problem);
  EXPECT_TRUE(paired.feasible);
  EXPECT_TRUE(paired.optimal);
  EXPECT_EQ(paired.choice, SmallVector<int>({-1, -1, 0}));
  EXPECT_DOUBLE_EQ(paired.costUs, 5);
  expectConsistent(problem, paired);
}

// Zero-cost options (swaps hidden behind compute) tie on cost: the
// tie-break moves the fewest bytes and leaves the rest alone.
TEST(BudgetMilp, TiesMoveFewerBytes) {
  MilpProblem problem;
  problem.live = {100};
  problem.budget = 60;
  problem.candidates.push_back(candidate({swapOption(0, 1, 100, 0)}));
  problem.candidates.push_back(candidate({swapOption(0, 1, 50, 0)}));
  problem.candidates.push_back(candidate({swapOption(0, 1, 10, 0)}));
  MilpSolution sol = solve(problem);
  EXPECT_TRUE(sol.feasible);
  EXPECT_EQ(sol.choice, SmallVector<int>({-1, 0, -1}));
  expectConsistent(problem, sol);
}

// Byte counts beyond 2^32 go into coarser units: aligned ones exactly
// (optimality still proven), unaligned ones conservatively.
TEST(BudgetMilp, LargeBytesAreScaled) {
  const int64_t gib = int64_t(1) << 30;
  MilpProblem problem;
  problem.live = {10 * gib, 80 * gib, 60 * gib};
  problem.budget = 50 * gib;
  problem.candidates.push_back(candidate({swapOption(1, 3, 20 * gib, 9)}));
  problem.candidates.push_back(candidate({swapOption(1, 2, 12 * gib, 3)}));
  problem.candidates.push_back(candidate({swapOption(1, 2, 12 * gib, 4)}));
  MilpSolution aligned = solve(problem);
  EXPECT_TRUE(aligned.feasible);
  EXPECT_TRUE(aligned.optimal);
  EXPECT_GT(aligned.unitBytes, 1);
  EXPECT_EQ(aligned.choice, SmallVector<int>({0, 0, -1}));
  expectConsistent(problem, aligned);

  // Byte counts that are not multiples of the unit: rounded conservatively,
  // so the answer still fits exactly but is no longer claimed optimal.
  problem.live = {10 * gib, 80 * gib + 7, 60 * gib};
  problem.candidates[2].options[0].removes[0].bytes = 12 * gib + 3;
  MilpSolution unaligned = solve(problem);
  EXPECT_GT(unaligned.unitBytes, 1);
  EXPECT_TRUE(unaligned.feasible);
  EXPECT_FALSE(unaligned.optimal);
  EXPECT_EQ(unaligned.choice, SmallVector<int>({0, 0, -1}));
  expectConsistent(problem, unaligned);
}

TEST(BudgetMilp, MalformedProblemsFail) {
  auto errorFor = [](const MilpProblem &problem) {
    std::string error;
    FailureOr<MilpSolution> sol = solveBudgetMilp(problem, &error);
    EXPECT_TRUE(failed(sol));
    EXPECT_FALSE(error.empty());
    return error;
  };
  MilpProblem good;
  good.live = {10, 20};
  good.budget = 15;
  good.candidates.push_back(candidate({swapOption(0, 2, 5, 1)}));
  good.candidates.push_back(candidate({swapOption(1, 2, 5, 1)}));
  std::string error;
  EXPECT_TRUE(succeeded(solveBudgetMilp(good, &error))) << error;

  MilpProblem p = good;
  p.candidates[0].options[0].removes[0].end = 3;
  EXPECT_NE(errorFor(p).find("outside [0, 2]"), std::string::npos);
  p = good;
  p.candidates[0].options[0].removes[0].begin = -1;
  errorFor(p);
  p = good;
  p.candidates[0].options[0].adds.push_back({2, 1, 4}); // begin > end
  errorFor(p);
  p = good;
  p.candidates[1].options[0].removes[0].bytes = -5;
  EXPECT_NE(errorFor(p).find("candidate 1 option 0"), std::string::npos);
  p = good;
  p.candidates[0].options[0].costUs = std::nan("");
  errorFor(p);
  p = good;
  p.candidates[0].options[0].costUs = -INFINITY;
  errorFor(p);
  p = good;
  p.exclusive.push_back({0, 2});
  errorFor(p);
  p = good;
  p.exclusive.push_back({1, 1});
  errorFor(p);
  p = good;
  p.budget = -1;
  errorFor(p);
  p = good;
  p.live[1] = -3;
  errorFor(p);
}

/// A random problem: `numCand` candidates with a swap and a recompute each
/// over `numPos` positions; the budget lies between the least peak some
/// choice reaches and the live peak, so both outcomes occur.
MilpProblem randomProblem(std::mt19937 &rng, int numCand, int numPos,
                          int64_t maxBytes) {
  auto uniform = [&](int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
  };
  MilpProblem problem;
  for (int p = 0; p < numPos; ++p)
    problem.live.push_back(uniform(maxBytes, 4 * maxBytes));
  for (int c = 0; c < numCand; ++c) {
    int64_t begin = uniform(0, numPos - 2);
    int64_t end = uniform(begin + 1, numPos);
    int64_t bytes = uniform(1, maxBytes);
    double swapCost = double(uniform(0, 1000)) / 10;
    int64_t keptBegin = uniform(0, numPos - 1);
    ByteInterval kept{keptBegin, uniform(keptBegin + 1, numPos),
                      uniform(1, maxBytes / 2 + 1)};
    double recomputeCost = double(uniform(0, 1000)) / 10;
    problem.candidates.push_back(
        candidate({swapOption(begin, end, bytes, swapCost),
                   recomputeOption(begin, end, bytes, kept, recomputeCost)}));
    for (int p = int(begin); p < end; ++p)
      problem.live[p] += bytes; // what is removed must have been live
  }
  return problem;
}

struct BruteForce {
  bool feasible = false;
  double cost = INFINITY;
  int64_t smallestPeak = INT64_MAX;
};

BruteForce bruteForce(const MilpProblem &problem) {
  size_t n = problem.candidates.size();
  SmallVector<int> choice(n, -1);
  BruteForce best;
  while (true) {
    bool allowed = true;
    for (auto [a, b] : problem.exclusive)
      allowed &= !(choice[a] >= 0 && choice[b] >= 0);
    if (allowed) {
      int64_t peak = peakOf(bytesUnder(problem, choice));
      best.smallestPeak = std::min(best.smallestPeak, peak);
      if (peak <= problem.budget) {
        best.feasible = true;
        best.cost = std::min(best.cost, costOf(problem, choice));
      }
    }
    size_t c = 0; // next choice, odometer style
    while (c < n && ++choice[c] == int(problem.candidates[c].options.size()))
      choice[c++] = -1;
    if (c == n)
      return best;
  }
}

/// Solves 30 random problems (8 candidates x 2 options) with byte counts
/// scaled by `scale` (plus `jitter` random bytes) and compares with
/// enumerating all 3^8 choices.
void crossCheck(int64_t scale, int64_t jitter) {
  int feasible = 0, infeasible = 0;
  for (unsigned seed = 1; seed <= 30; ++seed) {
    std::mt19937 rng(seed);
    MilpProblem problem = randomProblem(rng, 8, 24, 1000);
    std::uniform_int_distribution<int64_t> noise(0, jitter);
    for (int64_t &bytes : problem.live)
      bytes = bytes * scale + noise(rng);
    for (MilpCandidate &cand : problem.candidates)
      for (MilpOption &opt : cand.options)
        for (auto *list : {&opt.removes, &opt.adds})
          for (ByteInterval &iv : *list)
            iv.bytes = iv.bytes * scale + noise(rng);
    if (seed % 3 == 0) {
      problem.exclusive.push_back({0, 1});
      problem.exclusive.push_back({2, 5});
    }
    // Odd seeds: a budget between the least reachable peak and the live
    // peak; even seeds: just below the least reachable peak.
    BruteForce unconstrained = bruteForce(problem);
    int64_t least = unconstrained.smallestPeak;
    int64_t livePeak = peakOf(problem.live);
    std::uniform_int_distribution<int64_t> above(least, (least + livePeak) / 2);
    std::uniform_int_distribution<int64_t> below(least - 300 * scale,
                                                 least - 1);
    problem.budget = seed % 2 ? above(rng) : below(rng);
    BruteForce truth = bruteForce(problem);

    MilpSolution sol = solve(problem);
    SCOPED_TRACE("seed " + std::to_string(seed));
    expectConsistent(problem, sol);
    bool exact = sol.unitBytes == 1 || jitter == 0;
    if (exact) {
      EXPECT_TRUE(sol.optimal);
    }
    ASSERT_EQ(sol.feasible, truth.feasible);
    if (truth.feasible) {
      ++feasible;
      // The tie-break may add at most 1e-3 us to the cost it optimises.
      EXPECT_NEAR(sol.costUs, truth.cost, 2e-3);
    } else {
      ++infeasible;
      // Rounded to units, the least peak may be missed by a unit a term.
      EXPECT_GE(sol.smallestPeak, truth.smallestPeak);
      EXPECT_LE(sol.smallestPeak,
                truth.smallestPeak + (exact ? 0 : 20 * sol.unitBytes));
      if (exact) {
        EXPECT_TRUE(sol.smallestPeakOptimal);
      }
    }
  }
  // Both outcomes were exercised (odd seeds fit, even ones do not).
  EXPECT_EQ(feasible, 15);
  EXPECT_EQ(infeasible, 15);
}

TEST(BudgetMilp, MatchesBruteForceOnRandomProblems) { crossCheck(1, 0); }

// Up to ~10^9 bytes, not multiples of anything: exact single-byte rows
// near the largest magnitude handed to GLPK unrounded.
TEST(BudgetMilp, MatchesBruteForceWithLargeUnalignedBytes) {
  crossCheck(int64_t(1) << 18, 4095);
}

// Up to ~3 * 10^13 bytes, not multiples of any unit: the rows are rounded
// to coarse units, which exercises the conservative rounding.
TEST(BudgetMilp, MatchesBruteForceWithHugeUnalignedBytes) {
  crossCheck(int64_t(1) << 33, 4095);
}

// Gigabyte-sized but 4 KiB-aligned bytes are scaled without rounding.
TEST(BudgetMilp, MatchesBruteForceWithLargeAlignedBytes) {
  crossCheck(int64_t(1) << 24, 0);
}

/// A training-step shaped problem: activations made in the forward half,
/// used again at the mirrored backward position; each can be swapped out
/// over its gap (cost: transfer time not hidden) or recomputed (cost: the
/// op's time; its input stays live instead over the same gap).
MilpProblem stepProblem(unsigned seed, int numCand, int numPos) {
  std::mt19937 rng(seed);
  auto uniform = [&](int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
  };
  MilpProblem problem;
  problem.live.assign(numPos, int64_t(512) << 20); // weights and optimiser
  int half = numPos / 2;
  for (int c = 0; c < numCand; ++c) {
    int64_t made = uniform(0, half - 12);
    int64_t used = numPos - 1 - made - uniform(0, 8);
    int64_t bytes = uniform(1, 64) << 20;
    for (int64_t p = made; p <= used; ++p)
      problem.live[p] += bytes;
    int64_t begin = made + 1, end = used;
    double transferUs = double(bytes) / 25e3; // 25 GB/s each way
    double hiddenUs = double(end - begin) * 2;
    MilpOption swap =
        swapOption(begin, end, bytes, std::max(0.0, 2 * transferUs - hiddenUs));
    // Allocations are 256-byte aligned.
    int64_t inputBytes = bytes / int64_t(uniform(2, 8)) / 256 * 256;
    MilpOption recompute = recomputeOption(
        begin, end, bytes, {begin + uniform(0, 3), end, inputBytes},
        double(uniform(20, 400)));
    problem.candidates.push_back(candidate({swap, recompute}));
  }
  // Two thirds of the way from the least the swaps alone reach to the live
  // peak: feasible (all swaps fit) and binding.
  SmallVector<int> allSwaps(numCand, 0);
  int64_t swapPeak = peakOf(bytesUnder(problem, allSwaps));
  int64_t livePeak = peakOf(problem.live);
  problem.budget = swapPeak + (livePeak - swapPeak) / 3;
  return problem;
}

TEST(BudgetMilp, ScalesToThreeHundredCandidates) {
  for (unsigned seed : {7u, 11u, 13u}) {
    MilpProblem problem = stepProblem(seed, 300, 2000);
    problem.timeLimitS = 8;
    auto start = std::chrono::steady_clock::now();
    MilpSolution sol = solve(problem);
    double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
            .count();
    std::printf("[ scale    ] seed %u: %lld variables, %lld rows, %.3f s, "
                "optimal %d, cost %.1f us, resolves %d\n",
                seed, (long long)sol.variables, (long long)sol.constraints,
                seconds, int(sol.optimal), sol.costUs, sol.resolves);
    SCOPED_TRACE("seed " + std::to_string(seed));
    EXPECT_LT(seconds, 10);
    EXPECT_TRUE(sol.feasible);
    expectConsistent(problem, sol);
    EXPECT_LE(peakOf(bytesUnder(problem, sol.choice)), problem.budget);
  }
}

// Below the all-swaps peak nothing fits (a recompute removes what a swap
// does but keeps its input): proven without GLPK, and the min-peak solve
// must find exactly that peak.
TEST(BudgetMilp, ScaleInfeasibleFindsSmallestPeak) {
  MilpProblem problem = stepProblem(7, 300, 2000);
  SmallVector<int> allSwaps(problem.candidates.size(), 0);
  int64_t swapPeak = peakOf(bytesUnder(problem, allSwaps));
  problem.budget = swapPeak - 1;
  problem.timeLimitS = 8;
  MilpSolution sol = solve(problem);
  std::printf("[ scale    ] min-peak: %.3f s, optimal %d\n", sol.solveS,
              int(sol.smallestPeakOptimal));
  EXPECT_LT(sol.solveS, 10);
  EXPECT_FALSE(sol.feasible);
  EXPECT_TRUE(sol.optimal);
  EXPECT_EQ(sol.smallestPeak, swapPeak);
  EXPECT_TRUE(sol.smallestPeakOptimal);
  expectConsistent(problem, sol);
}

// A search cut short still answers promptly, with a checked choice.
TEST(BudgetMilp, HonoursTheTimeLimit) {
  MilpProblem problem = stepProblem(5, 300, 2000);
  problem.timeLimitS = 0.2;
  MilpSolution sol = solve(problem);
  EXPECT_LT(sol.solveS, 3);
  expectConsistent(problem, sol);
}

// Separate problems may be solved on separate threads at once.
TEST(BudgetMilp, ConcurrentSolvesAgree) {
  std::vector<MilpProblem> problems;
  for (unsigned seed = 100; seed < 104; ++seed) {
    std::mt19937 rng(seed);
    problems.push_back(randomProblem(rng, 10, 40, 1000));
    problems.back().budget = peakOf(problems.back().live) * 2 / 3;
  }
  std::vector<MilpSolution> alone, together(problems.size());
  for (const MilpProblem &problem : problems)
    alone.push_back(solve(problem));
  std::vector<std::thread> threads;
  for (size_t i = 0; i < problems.size(); ++i)
    threads.emplace_back([&, i] {
      std::string error;
      together[i] = *solveBudgetMilp(problems[i], &error);
    });
  for (std::thread &t : threads)
    t.join();
  for (size_t i = 0; i < problems.size(); ++i) {
    EXPECT_EQ(together[i].feasible, alone[i].feasible);
    EXPECT_NEAR(together[i].costUs, alone[i].costUs, 1e-9);
    EXPECT_EQ(together[i].smallestPeak, alone[i].smallestPeak);
  }
}

} // namespace
