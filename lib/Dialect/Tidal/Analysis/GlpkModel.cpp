//===- GlpkModel.cpp - GLPK objects for the budget MILP -------------------===//

#include "GlpkModel.h"

#include "llvm/ADT/STLExtras.h"

#include <algorithm>
#include <climits>

using namespace mlir::tidal::glpk;

void ModelBuilder::load(glp_prob *lp, double objConstant) const {
  glp_set_obj_dir(lp, GLP_MIN);
  glp_set_obj_coef(lp, 0, objConstant);
  if (!rowUpper.empty())
    glp_add_rows(lp, int(rowUpper.size()));
  for (auto [i, upper] : llvm::enumerate(rowUpper))
    glp_set_row_bnds(lp, int(i) + 1, rowType[i], upper, upper);
  if (!colCost.empty())
    glp_add_cols(lp, int(colCost.size()));
  for (size_t j = 0; j < colCost.size(); ++j) {
    int col = int(j) + 1;
    glp_set_col_kind(lp, col, colKind[j]);
    if (colKind[j] != GLP_BV)
      glp_set_col_bnds(lp, col, GLP_LO, colLower[j], 0.0);
    glp_set_obj_coef(lp, col, colCost[j]);
  }
  glp_load_matrix(lp, int(ar.size()) - 1, ia.data(), ja.data(), ar.data());
}

/// glp_intopt with presolve and a time limit. On Optimal or Feasible the
/// column values are in `lp`'s MIP solution.
Outcome mlir::tidal::glpk::runIntopt(glp_prob *lp, double limitS) {
  glp_iocp parm;
  glp_init_iocp(&parm);
  parm.msg_lev = GLP_MSG_OFF;
  parm.presolve = GLP_ON;
  // Measured on 300-candidate step problems (BudgetMilpTest): pseudo-cost
  // branching halves the time to a proven optimum. Left off: MIR and
  // clique cuts, which on rows with byte-sized coefficients cut off
  // feasible choices (seen at 10^9 units and above), and the feasibility
  // pump and proximity search, which ignore tm_lim (the pump's inner
  // simplex looped for minutes on a min-peak model).
  parm.br_tech = GLP_BR_PCH;
  double ms = std::clamp(limitS * 1000.0, 1.0, double(INT_MAX));
  parm.tm_lim = int(ms);
  int ret = glp_intopt(lp, &parm);
  int status = glp_mip_status(lp);
  if (ret == GLP_ENOPFS || ret == GLP_ENODFS)
    return Outcome::Infeasible; // no LP relaxation solution (or unbounded)
  if (ret == 0 && status == GLP_OPT)
    return Outcome::Optimal;
  if (ret == 0 && status == GLP_NOFEAS)
    return Outcome::Infeasible;
  // GLP_ETMLIM and the failures: an incumbent is still a valid choice.
  if (status == GLP_OPT || status == GLP_FEAS)
    return Outcome::Feasible;
  return Outcome::Unknown;
}
