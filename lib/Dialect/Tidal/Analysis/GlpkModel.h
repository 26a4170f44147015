//===- GlpkModel.h - GLPK objects for the budget MILP -----------*- C++ -*-===//
//
// The thin layer between BudgetMilp.cpp and GLPK: a model gathered before
// it is handed over in one go, the problem, terminal and environment
// objects owned by one solve (which is what makes concurrent solves safe),
// and glp_intopt with the options the step problems need.
//
//===----------------------------------------------------------------------===//

#ifndef TIDAL_LIB_DIALECT_TIDAL_ANALYSIS_GLPKMODEL_H
#define TIDAL_LIB_DIALECT_TIDAL_ANALYSIS_GLPKMODEL_H

#include <glpk.h>

#include <vector>

namespace mlir::tidal::glpk {

enum class Outcome { Optimal, Feasible, Infeasible, Unknown };

/// Rows and columns gathered before they are handed to GLPK in one go.
struct ModelBuilder {
  std::vector<double> rowUpper, colCost;
  std::vector<int> rowType;
  std::vector<int> colKind;
  std::vector<double> colLower;
  std::vector<int> ia{0}, ja{0}; // 1-based, as glp_load_matrix wants
  std::vector<double> ar{0};

  int addRow(double upper, int type = GLP_UP) {
    rowUpper.push_back(upper);
    rowType.push_back(type);
    return int(rowUpper.size());
  }
  int addColumn(double cost, int kind = GLP_BV, double lower = 0) {
    colCost.push_back(cost);
    colKind.push_back(kind);
    colLower.push_back(lower);
    return int(colCost.size());
  }
  void set(int row, int col, double value) {
    ia.push_back(row);
    ja.push_back(col);
    ar.push_back(value);
  }
  /// Loads the model into `lp` (minimised, with `objConstant`).
  void load(glp_prob *lp, double objConstant) const;
};

/// A GLPK problem object owned by one call (GLPK objects are never shared
/// between calls, which is what makes concurrent solves safe).
struct GlpkProblem {
  glp_prob *lp = glp_create_prob();
  GlpkProblem() = default;
  GlpkProblem(const GlpkProblem &) = delete;
  GlpkProblem &operator=(const GlpkProblem &) = delete;
  ~GlpkProblem() { glp_delete_prob(lp); }
};

/// GLPK prints to stdout unless told not to; the flag belongs to the
/// calling thread's GLPK environment, so it is put back afterwards.
struct QuietGlpk {
  int previous = glp_term_out(GLP_OFF);
  ~QuietGlpk() { glp_term_out(previous); }
};

/// GLPK creates one environment per thread on first use (its memory pool
/// and flags) and keeps it until glp_free_env. Each solve frees the one it
/// used, so that a thread that solves and exits leaks nothing (the
/// sanitizer run found every concurrent solve's environment leaked). No
/// GLPK object outlives a solve, so nothing else is freed with it.
struct GlpkEnvironment {
  GlpkEnvironment() = default;
  GlpkEnvironment(const GlpkEnvironment &) = delete;
  GlpkEnvironment &operator=(const GlpkEnvironment &) = delete;
  ~GlpkEnvironment() { glp_free_env(); }
};

/// glp_intopt with presolve and a time limit. On Optimal or Feasible the
/// column values are in `lp`'s MIP solution.
Outcome runIntopt(glp_prob *lp, double limitS);

} // namespace mlir::tidal::glpk

#endif // TIDAL_LIB_DIALECT_TIDAL_ANALYSIS_GLPKMODEL_H
