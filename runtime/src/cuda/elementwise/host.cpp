// host.cpp - the host-side checks and plans of the elementwise CUDA kernels
// (host.h), mirroring the CPU kernels line by line.
#include "host.h"

#include "../../cpu/broadcast.h"

#include <cmath>

namespace tidalrt {
namespace cuda {
namespace elementwise {

using tidalrt::ew::BroadcastPlan;
using tidalrt::ew::expectElements;
using tidalrt::ew::expectTensors;
using tidalrt::ew::shapeString;
using tidalrt::ew::typeName;

namespace {

void copyPlan(const BroadcastPlan &plan, Bcast &b) {
  b.rank = plan.rank;
  for (int d = 0; d < plan.rank; ++d) {
    b.dims[d] = plan.dims[d];
    for (int k = 0; k < 2; ++k)
      b.strides[k][d] = k < plan.numInputs ? plan.strides[k][d] : 0;
  }
}

// elementwise_binary.cpp's checkBroadcast.
int64_t binaryBroadcast(const OpCall &op, Bcast &b) {
  const TensorRef *inputs[2] = {&op[0], &op[1]};
  const TensorRef &y = op[2];
  BroadcastPlan plan;
  int bad = tidalrt::ew::buildBroadcastPlan(y.rank, y.dims, 2, inputs, plan);
  if (bad >= 0) {
    char b1[160], b2[160];
    fail(TIDALRT_INVALID_ARGUMENT,
         "%s operand of shape %s does not broadcast to the result shape %s",
         bad == 0 ? "lhs" : "rhs", shapeString(*inputs[bad], b1, sizeof b1),
         shapeString(y, b2, sizeof b2));
  }
  copyPlan(plan, b);
  return plan.total;
}

bool supportedPowType(int32_t t) {
  return t == TIDALRT_ELEMENT_TYPE_F32 || t == TIDALRT_ELEMENT_TYPE_F64 ||
         t == TIDALRT_ELEMENT_TYPE_I64 || t == TIDALRT_ELEMENT_TYPE_I32;
}

void checkRatio(double ratio) {
  if (!(ratio >= 0.0 && ratio < 1.0))
    fail(TIDALRT_INVALID_ARGUMENT, "ratio %g is outside [0, 1)", ratio);
}

void checkFloat(const TensorRef &t, const char *what) {
  if (t.type != TIDALRT_ELEMENT_TYPE_F32 && t.type != TIDALRT_ELEMENT_TYPE_F64)
    fail(TIDALRT_UNSUPPORTED,
         "%s element type %s is not supported (float32, float64)", what,
         typeName(t.type));
}

void checkMask(const TensorRef &t) {
  if (t.type != TIDALRT_ELEMENT_TYPE_BOOL)
    fail(TIDALRT_INVALID_ARGUMENT, "mask has element type %s, expected bool",
         typeName(t.type));
}

uint64_t streamKey(uint64_t seed, uint64_t step, int64_t opIndex) {
  uint64_t k = mix64(seed + kGamma);
  k = mix64((k ^ step) + kGamma);
  return mix64((k ^ (uint64_t)opIndex) + kGamma);
}

// reduce.cpp's buildReducePlan.
void buildReducePlan(const TensorRef &x, const int64_t *axes, int64_t numAxes,
                     ReducePlan &p) {
  bool red[TIDALRT_MAX_RANK] = {};
  for (int64_t i = 0; i < numAxes; ++i) {
    if (axes[i] < 0 || axes[i] >= x.rank)
      fail(TIDALRT_INVALID_ARGUMENT, "axis %lld is out of range for rank %d",
           (long long)axes[i], x.rank);
    if (red[axes[i]])
      fail(TIDALRT_INVALID_ARGUMENT, "axis %lld is listed twice",
           (long long)axes[i]);
    red[axes[i]] = true;
  }
  int nseg = 0;
  int64_t ext[TIDALRT_MAX_RANK];
  bool segRed[TIDALRT_MAX_RANK];
  p.numOut = p.count = 1;
  for (int d = 0; d < x.rank; ++d) {
    int64_t e = x.dims[d];
    if (red[d])
      p.count *= e;
    else
      p.numOut *= e;
    if (e == 1)
      continue;
    if (nseg > 0 && segRed[nseg - 1] == red[d]) {
      ext[nseg - 1] *= e;
    } else {
      ext[nseg] = e;
      segRed[nseg] = red[d];
      ++nseg;
    }
  }
  p.identity = true;
  for (int s = 0; s < nseg; ++s)
    if (segRed[s])
      p.identity = false;
  if (p.identity)
    return;
  // (reduce.cpp keeps these strides in an int, which overflows beyond 2^31
  // elements.)
  int64_t stride[TIDALRT_MAX_RANK];
  int64_t st = 1;
  for (int s = nseg - 1; s >= 0; --s) {
    stride[s] = st;
    st *= ext[s];
  }
  p.innerReduced = segRed[nseg - 1];
  p.inner = ext[nseg - 1];
  for (int s = 0; s < nseg - 1; ++s)
    (segRed[s] ? p.reduced : p.kept).add(ext[s], stride[s]);
}

// reduce.cpp's block sizes and splits (trailingSplit, keptSplit): they fix
// the CPU kernel's order of additions.
constexpr int64_t kReduceBlock = 32768;
constexpr int64_t kRowBlock = 1024;
constexpr int64_t kMaxRowSplits = 16;

void splitTrailing(ReducePlan &p) {
  const int64_t perOut = p.reduced.size * p.inner;
  if (p.numOut >= 64 || p.numOut * perOut < tidalrt::ew::kParallelMinElements ||
      perOut < 2 * kReduceBlock)
    return;
  if (p.reduced.size > 1) {
    p.rowsPerBlock = kReduceBlock / p.inner > 1 ? kReduceBlock / p.inner : 1;
    p.blocks = (p.reduced.size + p.rowsPerBlock - 1) / p.rowsPerBlock;
  } else {
    p.colsPerBlock = kReduceBlock;
    p.blocks = (p.inner + kReduceBlock - 1) / kReduceBlock;
  }
}

void splitKept(ReducePlan &p) {
  const int64_t colBlock = p.inner < kRowBlock ? p.inner : kRowBlock;
  const int64_t colBlocks = (p.inner + colBlock - 1) / colBlock;
  p.rowsPerBlock = p.reduced.size;
  const int64_t items = p.kept.size * colBlocks;
  const int64_t total = p.kept.size * p.inner * p.reduced.size;
  if (items >= 16 || total < tidalrt::ew::kParallelMinElements)
    return;
  int64_t minRows = (8192 + colBlock - 1) / colBlock;
  int64_t blocks = (p.reduced.size + minRows - 1) / minRows;
  if (blocks > kMaxRowSplits)
    blocks = kMaxRowSplits;
  if (blocks <= 1)
    return;
  p.rowsPerBlock = (p.reduced.size + blocks - 1) / blocks;
  p.blocks = (p.reduced.size + p.rowsPerBlock - 1) / p.rowsPerBlock;
}

} // namespace

int64_t checkArithmetic(const OpCall &op, Bcast &b) {
  expectTensors(op, 3);
  const TensorRef &a = op[0], &c = op[1], &y = op[2];
  if (a.type != y.type || c.type != y.type)
    fail(TIDALRT_INVALID_ARGUMENT,
         "operands of types %s and %s with a %s result; all three must match",
         typeName(a.type), typeName(c.type), typeName(y.type));
  switch (y.type) {
  case TIDALRT_ELEMENT_TYPE_F32:
  case TIDALRT_ELEMENT_TYPE_F64:
  case TIDALRT_ELEMENT_TYPE_I64:
  case TIDALRT_ELEMENT_TYPE_I32:
  case TIDALRT_ELEMENT_TYPE_I16:
  case TIDALRT_ELEMENT_TYPE_I8:
  case TIDALRT_ELEMENT_TYPE_U64:
  case TIDALRT_ELEMENT_TYPE_U32:
  case TIDALRT_ELEMENT_TYPE_U16:
  case TIDALRT_ELEMENT_TYPE_U8:
    break;
  default:
    fail(TIDALRT_UNSUPPORTED,
         "element type %s is not supported (float32, float64 or an integer "
         "type)",
         typeName(y.type));
  }
  return binaryBroadcast(op, b);
}

int64_t checkPow(const OpCall &op, Bcast &b) {
  expectTensors(op, 3);
  const TensorRef &a = op[0], &e = op[1], &y = op[2];
  if (a.type != y.type)
    fail(TIDALRT_INVALID_ARGUMENT,
         "base of type %s with a %s result; they must match", typeName(a.type),
         typeName(y.type));
  bool unsignedExponent =
      e.type == TIDALRT_ELEMENT_TYPE_U32 || e.type == TIDALRT_ELEMENT_TYPE_U64;
  if (!supportedPowType(a.type) ||
      (!supportedPowType(e.type) && !unsignedExponent))
    fail(TIDALRT_UNSUPPORTED,
         "base %s, exponent %s: the base must be float32, float64, int64 or "
         "int32, the exponent also uint32 or uint64",
         typeName(a.type), typeName(e.type));
  return binaryBroadcast(op, b);
}

int64_t checkUnary(const OpCall &op, bool allowInt) {
  expectTensors(op, 2);
  const TensorRef &x = op[0], &y = op[1];
  const bool intType =
      x.type == TIDALRT_ELEMENT_TYPE_I64 || x.type == TIDALRT_ELEMENT_TYPE_I32;
  if (x.type != y.type)
    fail(TIDALRT_INVALID_ARGUMENT,
         "input of type %s with a %s result; they must match", typeName(x.type),
         typeName(y.type));
  if (!(x.type == TIDALRT_ELEMENT_TYPE_F32 ||
        x.type == TIDALRT_ELEMENT_TYPE_F64 || (allowInt && intType)))
    fail(TIDALRT_UNSUPPORTED, "element type %s is not supported (%s)",
         typeName(x.type),
         allowInt ? "float32, float64, int64, int32" : "float32, float64");
  if (!x.present())
    fail(TIDALRT_INVALID_ARGUMENT, "input is absent");
  const int64_t n = x.numel();
  expectElements(y, n, "output");
  return n;
}

int64_t checkActivationBackward(const OpCall &op) {
  expectTensors(op, 3);
  const TensorRef &g = op[0], &s = op[1], &y = op[2];
  if (g.type != s.type || g.type != y.type)
    fail(TIDALRT_INVALID_ARGUMENT,
         "grad, saved and result have types %s, %s and %s; they must match",
         typeName(g.type), typeName(s.type), typeName(y.type));
  if (g.type != TIDALRT_ELEMENT_TYPE_F32 && g.type != TIDALRT_ELEMENT_TYPE_F64)
    fail(TIDALRT_UNSUPPORTED,
         "element type %s is not supported (float32, float64)",
         typeName(g.type));
  if (!g.present())
    fail(TIDALRT_INVALID_ARGUMENT, "grad is absent");
  const int64_t n = g.numel();
  expectElements(s, n, "saved");
  expectElements(y, n, "grad_input");
  return n;
}

DropoutParams checkDropout(const OpCall &op) {
  expectTensors(op, 3);
  const TensorRef &x = op[0], &y = op[1], &m = op[2];
  checkFloat(x, "input");
  if (y.type != x.type)
    fail(TIDALRT_INVALID_ARGUMENT, "output type %s differs from input type %s",
         typeName(y.type), typeName(x.type));
  checkMask(m);
  if (!x.present())
    fail(TIDALRT_INVALID_ARGUMENT, "input is absent");
  DropoutParams p;
  p.n = x.numel();
  expectElements(y, p.n, "output");
  expectElements(m, p.n, "mask");
  const double ratio = op.getFloat(0);
  const bool training = op.getBool(3);
  checkRatio(ratio);
  const uint64_t seed =
      op.has(1) ? (uint64_t)op.getInt(1) : tidalrt::seed(op.context);
  p.identity = !training || ratio == 0.0;
  if (preparing(op.context) || p.n == 0 || p.identity)
    return p;
  // As the CPU kernel, the stream attribute is read only when masks are
  // drawn.
  const int64_t stream = op.has(2) ? op.getInt(2) : op.index;
  p.key = streamKey(seed, tidalrt::step(op.context), stream);
  p.threshold = (uint64_t)std::ceil(ratio * 0x1.0p32);
  p.scale = 1.0 / (1.0 - ratio);
  return p;
}

int64_t checkDropoutBackward(const OpCall &op, double &scale) {
  expectTensors(op, 3);
  const TensorRef &g = op[0], &m = op[1], &y = op[2];
  checkFloat(g, "grad");
  if (y.type != g.type)
    fail(TIDALRT_INVALID_ARGUMENT,
         "grad_input type %s differs from grad type %s", typeName(y.type),
         typeName(g.type));
  checkMask(m);
  if (!g.present())
    fail(TIDALRT_INVALID_ARGUMENT, "grad is absent");
  const int64_t n = g.numel();
  expectElements(m, n, "mask");
  expectElements(y, n, "grad_input");
  const double ratio = op.getFloat(0);
  checkRatio(ratio);
  scale = 1.0 / (1.0 - ratio);
  return n;
}

size_t checkBroadcastTo(const OpCall &op, Bcast &b, int64_t &total) {
  expectTensors(op, 2);
  const TensorRef &x = op[0], &y = op[1];
  if (x.type != y.type)
    fail(TIDALRT_INVALID_ARGUMENT,
         "input of type %s with a %s result; they must match", typeName(x.type),
         typeName(y.type));
  const size_t size = tidalrt_element_type_size((tidalrt_element_type_t)x.type);
  if (size != 1 && size != 2 && size != 4 && size != 8)
    fail(TIDALRT_UNSUPPORTED, "element type %s (code %d) is not supported",
         typeName(x.type), x.type);
  BroadcastPlan plan;
  const TensorRef *inputs[1] = {&x};
  if (tidalrt::ew::buildBroadcastPlan(y.rank, y.dims, 1, inputs, plan) >= 0) {
    char b1[160], b2[160];
    fail(TIDALRT_INVALID_ARGUMENT,
         "input of shape %s does not broadcast to the result shape %s",
         shapeString(x, b1, sizeof b1), shapeString(y, b2, sizeof b2));
  }
  copyPlan(plan, b);
  total = plan.total;
  return size;
}

void checkReduce(const OpCall &op, ReducePlan &p, int32_t &type) {
  expectTensors(op, 2);
  const TensorRef &x = op[0], &y = op[1];
  if (x.type != y.type)
    fail(TIDALRT_INVALID_ARGUMENT,
         "input of type %s with a %s result; they must match", typeName(x.type),
         typeName(y.type));
  if (!x.present())
    fail(TIDALRT_INVALID_ARGUMENT, "input is absent");
  const int64_t *axes = nullptr;
  const int64_t numAxes = op.getInts(0, &axes);
  (void)op.getBool(1); // keepdims: the result's shape already says it
  buildReducePlan(x, axes, numAxes, p);
  if (y.numel() != p.numOut) {
    char b1[160], b2[160];
    fail(TIDALRT_INVALID_ARGUMENT,
         "result shape %s does not match reducing %s over %lld axes",
         shapeString(y, b1, sizeof b1), shapeString(x, b2, sizeof b2),
         (long long)numAxes);
  }
  switch (x.type) {
  case TIDALRT_ELEMENT_TYPE_F32:
  case TIDALRT_ELEMENT_TYPE_F64:
  case TIDALRT_ELEMENT_TYPE_I64:
  case TIDALRT_ELEMENT_TYPE_I32:
    break;
  default:
    fail(TIDALRT_UNSUPPORTED,
         "element type %s is not supported (float32, float64, int64, int32)",
         typeName(x.type));
  }
  type = x.type;
  if (p.identity || p.numOut == 0 || p.count == 0)
    return;
  if (p.innerReduced)
    splitTrailing(p);
  else
    splitKept(p);
}

} // namespace elementwise
} // namespace cuda
} // namespace tidalrt
