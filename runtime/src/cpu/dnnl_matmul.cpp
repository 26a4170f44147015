// dnnl_matmul.cpp - Gemm and MatMul (oneDNN matmul), float32.
//
// gemm: alpha * op(A) * op(B) + beta * C, with the transposes given to
// oneDNN as strides, alpha as its output scale and beta * C (broadcast to
// [M, N]) written into the output first and added by a sum post-op.
// matmul: NumPy semantics (1-D operands promoted, batch dims broadcast),
// as one oneDNN matmul over up to 12 dims; a batched lhs times an unbatched
// rhs is folded into one [B*M, K] x [K, N] product.
#include "dnnl_util.h"

#include <algorithm>
#include <memory>

using namespace tidalrt;
using namespace tidalrt::dnnlutil;

namespace {

// A descriptor of `dims` with explicit strides.
memory::desc stridedDesc(const memory::dims &dims,
                         const memory::dims &strides) {
  return memory::desc(dims, memory::data_type::f32, strides);
}

struct GemmState {
  int64_t m = 0, n = 0, k = 0;
  bool hasC = false;
  // C's strides over [M, N] (0 along a broadcast dim).
  int64_t cStrideM = 0, cStrideN = 0;
  double beta = 1.0;
  Plan plan;
};

GemmState *gemmState(OpCall &op) {
  if (auto *s = getState<GemmState>(op.context, op.index))
    return s;
  GemmShape g = checkGemm(op);
  int64_t m = g.m, n = g.n, k = g.k;
  bool ta = g.ta, tb = g.tb;
  // Installed once complete, so that a failed build leaves no state.
  std::unique_ptr<GemmState> owned(new GemmState());
  GemmState *s = owned.get();
  s->m = m;
  s->n = n;
  s->k = k;
  s->beta = g.beta;
  s->hasC = g.hasC;
  s->cStrideM = g.cStrideM;
  s->cStrideN = g.cStrideN;
  if (m == 0 || n == 0 || k == 0)
    return setOwnedState(op.context, op.index, owned.release());
  buildWithDnnl("gemm", [&] {
    memory::desc aMd =
        stridedDesc({m, k}, ta ? memory::dims{1, m} : memory::dims{k, 1});
    memory::desc bMd =
        stridedDesc({k, n}, tb ? memory::dims{1, k} : memory::dims{n, 1});
    memory::desc yMd = plainDesc({m, n});
    dnnl::primitive_attr attr = scratchpadAttr();
    double alpha = op.getFloat(0);
    if (alpha != 1.0)
      attr.set_output_scales(0, {(float)alpha});
    if (s->hasC) {
      dnnl::post_ops po;
      po.append_sum(1.0f);
      attr.set_post_ops(po);
    }
    dnnl::matmul::desc d(aMd, bMd, yMd);
    dnnl::matmul::primitive_desc pd(d, attr, engine());
    Plan &p = s->plan;
    p.add(dnnl::matmul(pd), pd.scratchpad_desc(),
          {{DNNL_ARG_SRC, p.tensor(aMd, 0)},
           {DNNL_ARG_WEIGHTS, p.tensor(bMd, 1)},
           {DNNL_ARG_DST, p.tensor(yMd, 3)}});
    return 0;
  });
  return setOwnedState(op.context, op.index, owned.release());
}

struct MatMulState {
  bool empty = false; // no output elements, or K == 0 (zeros)
  Plan plan;
};

MatMulState *matmulState(OpCall &op) {
  if (auto *s = getState<MatMulState>(op.context, op.index))
    return s;
  MatMulShape shape = checkMatMul(op);
  int64_t m = shape.m, n = shape.n, k = shape.k;
  size_t batchRank = shape.batch.size();
  // Installed once complete, so that a failed build leaves no state.
  std::unique_ptr<MatMulState> owned(new MatMulState());
  MatMulState *s = owned.get();
  s->empty = shape.empty();
  if (s->empty)
    return setOwnedState(op.context, op.index, owned.release());
  if (batchRank + 2 > DNNL_MAX_NDIMS)
    fail(TIDALRT_UNSUPPORTED, "%zu batch dimensions; at most %d are supported",
         batchRank, DNNL_MAX_NDIMS - 2);
  memory::dims aDims, bDims, yDims;
  if (shape.bCount == 1 && shape.aCount == shape.nBatch) {
    // [B..., M, K] x [K, N]: one [B*M, K] x [K, N] product.
    aDims = {shape.nBatch * m, k};
    bDims = {k, n};
    yDims = {shape.nBatch * m, n};
  } else {
    aDims = shape.aBatch;
    bDims = shape.bBatch;
    yDims = shape.batch;
    aDims.insert(aDims.end(), {m, k});
    bDims.insert(bDims.end(), {k, n});
    yDims.insert(yDims.end(), {m, n});
  }
  buildWithDnnl("matmul", [&] {
    memory::desc aMd = plainDesc(aDims), bMd = plainDesc(bDims),
                 yMd = plainDesc(yDims);
    dnnl::matmul::desc d(aMd, bMd, yMd);
    dnnl::matmul::primitive_desc pd(d, scratchpadAttr(), engine());
    Plan &p = s->plan;
    p.add(dnnl::matmul(pd), pd.scratchpad_desc(),
          {{DNNL_ARG_SRC, p.tensor(aMd, 0)},
           {DNNL_ARG_WEIGHTS, p.tensor(bMd, 1)},
           {DNNL_ARG_DST, p.tensor(yMd, 2)}});
    return 0;
  });
  return setOwnedState(op.context, op.index, owned.release());
}

} // namespace

void tidalrt::dnnlutil::checkGemmCall(const OpCall &op) {
  if (op.numTensors != 4 || op.numAttrs != 4)
    fail(TIDALRT_INTERNAL, "expected 4 tensors and 4 attributes");
}

GemmShape tidalrt::dnnlutil::checkGemm(const OpCall &op) {
  const TensorRef &a = op[0], &b = op[1], &c = op[2], &y = op[3];
  const char *names[] = {"A", "B", "C", "output"};
  for (int i = 0; i < 4; ++i)
    if (i != 2 || c.present())
      requireF32(op, i, names[i]);
  requireRank(op, 0, 2, "A");
  requireRank(op, 1, 2, "B");
  requireRank(op, 3, 2, "output");
  GemmShape g;
  g.ta = op.getBool(2);
  g.tb = op.getBool(3);
  bool ta = g.ta, tb = g.tb;
  int64_t m = y.dim(0), n = y.dim(1);
  int64_t k = ta ? a.dim(0) : a.dim(1);
  if ((ta ? a.dim(1) : a.dim(0)) != m || (tb ? b.dim(1) : b.dim(0)) != k ||
      (tb ? b.dim(0) : b.dim(1)) != n)
    fail(TIDALRT_INVALID_ARGUMENT,
         "shapes do not match: A [%lld, %lld]%s, B [%lld, %lld]%s, output "
         "[%lld, %lld]",
         (long long)a.dim(0), (long long)a.dim(1), ta ? "^T" : "",
         (long long)b.dim(0), (long long)b.dim(1), tb ? "^T" : "", (long long)m,
         (long long)n);
  g.m = m;
  g.n = n;
  g.k = k;
  g.beta = op.getFloat(1);
  if (c.present()) {
    // Unidirectional broadcast of C to [M, N].
    if (c.rank > 2)
      fail(TIDALRT_INVALID_ARGUMENT, "C has rank %d", c.rank);
    int64_t cm = c.rank == 2 ? c.dim(0) : 1;
    int64_t cn = c.rank >= 1 ? c.dim(c.rank - 1) : 1;
    if ((cm != m && cm != 1) || (cn != n && cn != 1))
      fail(TIDALRT_INVALID_ARGUMENT,
           "C [%lld, %lld] does not broadcast to [%lld, %lld]", (long long)cm,
           (long long)cn, (long long)m, (long long)n);
    g.hasC = true;
    g.cStrideN = cn == 1 ? 0 : 1;
    g.cStrideM = cm == 1 ? 0 : cn;
  }
  return g;
}

void tidalrt::dnnlutil::checkMatMulCall(const OpCall &op) {
  if (op.numTensors != 3 || op.numAttrs != 0)
    fail(TIDALRT_INTERNAL, "expected 3 tensors and no attributes");
}

MatMulShape tidalrt::dnnlutil::checkMatMul(const OpCall &op) {
  requireF32(op, 0, "lhs");
  requireF32(op, 1, "rhs");
  requireF32(op, 2, "output");
  const TensorRef &a = op[0], &b = op[1], &y = op[2];
  if (a.rank < 1 || b.rank < 1)
    fail(TIDALRT_INVALID_ARGUMENT, "operands must have rank >= 1");
  // Promote 1-D operands as NumPy does.
  std::vector<int64_t> as(a.dims, a.dims + a.rank), bs(b.dims, b.dims + b.rank);
  if (as.size() == 1)
    as.insert(as.begin(), 1);
  if (bs.size() == 1)
    bs.push_back(1);
  MatMulShape r;
  int64_t m = as[as.size() - 2], k = as.back();
  int64_t n = bs.back();
  if (bs[bs.size() - 2] != k)
    fail(TIDALRT_INVALID_ARGUMENT, "inner dimensions differ: %lld vs %lld",
         (long long)k, (long long)bs[bs.size() - 2]);
  r.m = m;
  r.n = n;
  r.k = k;
  size_t batchRank = std::max(as.size(), bs.size()) - 2;
  r.aBatch.assign(batchRank, 1);
  r.bBatch.assign(batchRank, 1);
  r.batch.assign(batchRank, 1);
  std::copy(as.begin(), as.end() - 2, r.aBatch.end() - (as.size() - 2));
  std::copy(bs.begin(), bs.end() - 2, r.bBatch.end() - (bs.size() - 2));
  for (size_t i = 0; i < batchRank; ++i) {
    int64_t da = r.aBatch[i], db = r.bBatch[i];
    if (da != db && da != 1 && db != 1)
      fail(TIDALRT_INVALID_ARGUMENT, "batch dimensions do not broadcast");
    // A dimension of 1 broadcasts, to 0 too (NumPy): not max(da, db).
    r.batch[i] = da == 1 ? db : da;
    r.nBatch *= r.batch[i];
    r.aCount *= da;
    r.bCount *= db;
  }
  std::vector<int64_t> expected = r.batch;
  if (a.rank >= 2)
    expected.push_back(m);
  if (b.rank >= 2)
    expected.push_back(n);
  if (y.rank != (int)expected.size() ||
      !std::equal(expected.begin(), expected.end(), y.dims))
    fail(TIDALRT_INVALID_ARGUMENT, "the output shape does not match the "
                                   "operands");
  return r;
}

extern "C" tidalrt_status_t tidalrt_k_gemm(tidalrt_context_t *ctx,
                                           const int64_t *desc,
                                           void *const *buffers) {
  return runKernel(ctx, desc, buffers, "gemm", [&](OpCall &op) {
    checkGemmCall(op);
    GemmState *s = gemmState(op);
    if (preparing(ctx)) {
      s->plan.bind(ctx, op);
      return ok();
    }
    float *y = op[3].f32();
    if (s->hasC) {
      // beta * C, which the sum post-op adds to alpha * A * B.
      const float *c = op[2].f32();
      float beta = (float)s->beta;
      int64_t m = s->m, n = s->n;
#pragma omp parallel for if (m * n > parallelGrain())
      for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < n; ++j)
          y[i * n + j] = beta * c[i * s->cStrideM + j * s->cStrideN];
    } else if (s->plan.empty() && s->m * s->n != 0) {
      std::fill(y, y + s->m * s->n, 0.0f);
    }
    s->plan.run(ctx, op);
    return ok();
  });
}

extern "C" tidalrt_status_t tidalrt_k_matmul(tidalrt_context_t *ctx,
                                             const int64_t *desc,
                                             void *const *buffers) {
  return runKernel(ctx, desc, buffers, "matmul", [&](OpCall &op) {
    checkMatMulCall(op);
    MatMulState *s = matmulState(op);
    if (s->empty) {
      if (!preparing(ctx) && op[2].numel())
        memset(op[2].data, 0, op[2].bytes());
      return ok();
    }
    s->plan.run(ctx, op);
    return ok();
  });
}
