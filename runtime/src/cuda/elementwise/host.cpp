// host.cpp - the host-side checks and plans of the elementwise CUDA kernels
// (host.h): the CPU kernels' checks (cpu/elementwise_checks.h,
// cpu/reduce_plan.h), their plans copied into what the bodies index with.
#include "host.h"

#include "../../cpu/activation_checks.h"
#include "../../cpu/broadcast.h"
#include "../../cpu/dropout_hash.h"
#include "../../cpu/elementwise_checks.h"
#include "../../cpu/reduce_plan.h"

namespace tidalrt {
namespace cuda {
namespace elementwise {

using tidalrt::ew::BroadcastPlan;

namespace {

void copyPlan(const BroadcastPlan &plan, Bcast &b) {
  b.rank = plan.rank;
  for (int d = 0; d < plan.rank; ++d) {
    b.dims[d] = plan.dims[d];
    for (int k = 0; k < 2; ++k)
      b.strides[k][d] = k < plan.numInputs ? plan.strides[k][d] : 0;
  }
}

} // namespace

int64_t checkArithmetic(const OpCall &op, Bcast &b) {
  BroadcastPlan plan;
  tidalrt::ew::checkArithmetic(op, plan);
  copyPlan(plan, b);
  return plan.total;
}

int64_t checkPow(const OpCall &op, Bcast &b) {
  BroadcastPlan plan;
  tidalrt::ew::checkPow(op, plan);
  copyPlan(plan, b);
  return plan.total;
}

int64_t checkUnary(const OpCall &op, bool allowInt) {
  return tidalrt::ew::checkUnary(op, allowInt);
}

int64_t checkActivationBackward(const OpCall &op) {
  return tidalrt::ew::checkActivationBackward(op);
}

act::Params<double> activationParams(act::Kind kind, const OpCall &op) {
  return tidalrt::ew::activationParams(kind, op);
}

DropoutParams checkDropout(const OpCall &op) {
  const tidalrt::ew::DropoutCall c = tidalrt::ew::checkDropout(op);
  DropoutParams p;
  p.n = c.n;
  p.identity = !c.training || c.ratio == 0.0;
  if (preparing(op.context) || p.n == 0 || p.identity)
    return p;
  // As the CPU kernel, the stream attribute is read only when masks are
  // drawn.
  p.key = tidalrt::ew::dropoutKey(op, c.seed);
  p.threshold = tidalrt::dropout::threshold(c.ratio);
  p.scale = 1.0 / (1.0 - c.ratio);
  return p;
}

RandomParams checkRandom(const OpCall &op, bool normal) {
  const tidalrt::ew::RandomCall c = tidalrt::ew::checkRandom(op, normal);
  RandomParams p;
  p.n = c.n;
  p.a = c.a;
  p.b = c.b;
  if (!preparing(op.context) && p.n)
    p.key = tidalrt::ew::randomKey(op, c.seed);
  return p;
}

int64_t checkDropoutBackward(const OpCall &op, double &scale) {
  double ratio = 0.0;
  const int64_t n = tidalrt::ew::checkDropoutBackward(op, ratio);
  scale = 1.0 / (1.0 - ratio);
  return n;
}

size_t checkBroadcastTo(const OpCall &op, Bcast &b, int64_t &total) {
  BroadcastPlan plan;
  const size_t size = tidalrt::ew::checkBroadcastTo(op, plan);
  copyPlan(plan, b);
  total = plan.total;
  return size;
}

ReduceSetup checkReduce(const OpCall &op) {
  ReduceSetup s;
  tidalrt::ew::ReducePlan &p = s.plan;
  tidalrt::ew::checkReduce(op, p);
  if (p.identity || p.numOut == 0 || p.count == 0)
    return s;
  if (p.innerReduced) {
    const tidalrt::ew::TrailingSplit t = tidalrt::ew::trailingSplit(p);
    s.blocks = t.blocks;
    s.rowsPerBlock = t.rowsPerBlock;
    s.colsPerBlock = t.colsPerBlock;
  } else {
    // One thread per output column: the CPU's column blocks do not change
    // any sum, its row blocks do.
    const tidalrt::ew::KeptSplit k = tidalrt::ew::keptSplit(p);
    s.blocks = k.rowBlocks;
    s.rowsPerBlock = k.rowsPerBlock;
  }
  return s;
}

tidalrt::ew::ReducePlan checkArgReduce(const OpCall &op, bool &last) {
  tidalrt::ew::ReducePlan p;
  last = tidalrt::ew::checkArgReduce(op, p);
  return p;
}

} // namespace elementwise
} // namespace cuda
} // namespace tidalrt
