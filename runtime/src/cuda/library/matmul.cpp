// matmul.cpp - Gemm and MatMul on cuBLAS (the CUDA twins of
// runtime/src/cpu/dnnl_matmul.cpp), float32.
//
// cuBLAS is column-major: a row-major [M, N] = [M, K] x [K, N] product is
// the column-major [N, M] = [N, K] x [K, M] one, so every call passes the
// operands swapped (C^T = B^T A^T) and no data moves.
//
// gemm: alpha * op(A) * op(B) + beta * C, with beta * C (broadcast to
// [M, N]) written into the output first by a small kernel and added by
// cuBLAS with beta 1, as the CPU kernel's sum post-op does.
// matmul: NumPy semantics (1-D operands promoted, batch dims broadcast). A
// batched lhs times an unbatched rhs is one [B*M, K] x [K, N] product; other
// batches are collapsed to as few dims as the strides allow, the innermost
// run by cublasSgemmStridedBatched (stride 0 for a broadcast operand) and
// the others looped over.
#include "common.h"
#include "kernels.h"

#include <algorithm>
#include <memory>
#include <vector>

using namespace tidalrt;
using namespace tidalrt::cuda;
using namespace tidalrt::cuda::lib;

namespace {

struct GemmState {
  int64_t m = 0, n = 0, k = 0;
  bool ta = false, tb = false;
  bool hasC = false;
  // C's strides over [M, N] (0 along a broadcast dim).
  int64_t cStrideM = 0, cStrideN = 0;
  float alpha = 1.0f, beta = 1.0f;
};

GemmState *gemmState(OpCall &op) {
  if (auto *s = getState<GemmState>(op.context, op.index))
    return s;
  const TensorRef &a = op[0], &b = op[1], &c = op[2], &y = op[3];
  const char *names[] = {"A", "B", "C", "output"};
  for (int i = 0; i < 4; ++i)
    if (i != 2 || c.present())
      requireF32(op, i, names[i]);
  requireRank(op, 0, 2, "A");
  requireRank(op, 1, 2, "B");
  requireRank(op, 3, 2, "output");
  bool ta = op.getBool(2), tb = op.getBool(3);
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
  std::unique_ptr<GemmState> owned(new GemmState());
  GemmState *s = owned.get();
  s->m = m;
  s->n = n;
  s->k = k;
  s->ta = ta;
  s->tb = tb;
  s->beta = (float)op.getFloat(1);
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
    s->hasC = true;
    s->cStrideN = cn == 1 ? 0 : 1;
    s->cStrideM = cm == 1 ? 0 : cn;
  }
  if (m && n && k) {
    s->alpha = (float)op.getFloat(0);
    toInt(m, "M");
    toInt(n, "N");
    toInt(k, "K");
  }
  return setOwnedState(op.context, op.index, owned.release());
}

// Row-major y[m, n] = alpha * op(a)[m, k] * op(b)[k, n] + beta * y, `count`
// times, the operands `strideA`/`strideB` elements apart (0: the same one)
// and the results m * n apart. `lda`/`ldb` are the row lengths of a and b
// as stored.
void rowMajorGemm(tidalrt_context_t *ctx, bool ta, bool tb, int64_t m,
                  int64_t n, int64_t k, float alpha, const float *a,
                  int64_t lda, int64_t strideA, const float *b, int64_t ldb,
                  int64_t strideB, float beta, float *y, int64_t count) {
  cublasHandle_t h = cublas(ctx);
  cublasOperation_t opB = tb ? CUBLAS_OP_T : CUBLAS_OP_N;
  cublasOperation_t opA = ta ? CUBLAS_OP_T : CUBLAS_OP_N;
  if (count == 1) {
    check(cublasSgemm(h, opB, opA, (int)n, (int)m, (int)k, &alpha, b, (int)ldb,
                      a, (int)lda, &beta, y, (int)n),
          "cublasSgemm");
    return;
  }
  check(cublasSgemmStridedBatched(h, opB, opA, (int)n, (int)m, (int)k, &alpha,
                                  b, (int)ldb, (long long)strideB, a, (int)lda,
                                  (long long)strideA, &beta, y, (int)n,
                                  (long long)(m * n), (int)count),
        "cublasSgemmStridedBatched");
}

struct MatMulState {
  bool empty = false; // no output elements, or K == 0 (zeros)
  int64_t m = 0, n = 0, k = 0;
  // The innermost batch run (one strided-batched call) and the element
  // offsets of a, b and y at the start of each run.
  int64_t runLength = 1, runStrideA = 0, runStrideB = 0;
  std::vector<int64_t> offA, offB, offY;
};

MatMulState *matmulState(OpCall &op) {
  if (auto *s = getState<MatMulState>(op.context, op.index))
    return s;
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
  int64_t m = as[as.size() - 2], k = as.back();
  int64_t n = bs.back();
  if (bs[bs.size() - 2] != k)
    fail(TIDALRT_INVALID_ARGUMENT, "inner dimensions differ: %lld vs %lld",
         (long long)k, (long long)bs[bs.size() - 2]);
  size_t batchRank = std::max(as.size(), bs.size()) - 2;
  std::vector<int64_t> aBatch(batchRank, 1), bBatch(batchRank, 1),
      batch(batchRank);
  std::copy(as.begin(), as.end() - 2, aBatch.end() - (as.size() - 2));
  std::copy(bs.begin(), bs.end() - 2, bBatch.end() - (bs.size() - 2));
  int64_t nBatch = 1, aCount = 1, bCount = 1;
  for (size_t i = 0; i < batchRank; ++i) {
    if (aBatch[i] != bBatch[i] && aBatch[i] != 1 && bBatch[i] != 1)
      fail(TIDALRT_INVALID_ARGUMENT, "batch dimensions do not broadcast");
    batch[i] = std::max(aBatch[i], bBatch[i]);
    nBatch *= batch[i];
    aCount *= aBatch[i];
    bCount *= bBatch[i];
  }
  std::vector<int64_t> expected = batch;
  if (a.rank >= 2)
    expected.push_back(m);
  if (b.rank >= 2)
    expected.push_back(n);
  if (y.rank != (int)expected.size() ||
      !std::equal(expected.begin(), expected.end(), y.dims))
    fail(TIDALRT_INVALID_ARGUMENT, "the output shape does not match the "
                                   "operands");
  std::unique_ptr<MatMulState> owned(new MatMulState());
  MatMulState *s = owned.get();
  s->empty = nBatch * m * n == 0 || k == 0;
  if (s->empty)
    return setOwnedState(op.context, op.index, owned.release());
  s->m = m;
  s->n = n;
  s->k = k;
  if (bCount == 1 && aCount == nBatch) {
    // [B..., M, K] x [K, N]: one [B*M, K] x [K, N] product.
    s->m = nBatch * m;
    s->offA = s->offB = s->offY = {0};
  } else {
    // Element strides of each operand's batch dims (0 where broadcast),
    // collapsed where both operands are contiguous across a pair of dims.
    std::vector<int64_t> dims, sa, sb;
    int64_t ea = m * k, eb = k * n;
    for (size_t i = batchRank; i-- > 0;) {
      int64_t da = aBatch[i] == 1 ? 0 : ea, db = bBatch[i] == 1 ? 0 : eb;
      ea *= aBatch[i];
      eb *= bBatch[i];
      if (batch[i] == 1)
        continue;
      if (!dims.empty() && da == sa.back() * dims.back() &&
          db == sb.back() * dims.back()) {
        dims.back() *= batch[i];
        continue;
      }
      dims.push_back(batch[i]);
      sa.push_back(da);
      sb.push_back(db);
    }
    // dims[0] is the innermost: one strided-batched call per value of the
    // others, in row-major order of the output.
    if (!dims.empty()) {
      s->runLength = dims[0];
      s->runStrideA = sa[0];
      s->runStrideB = sb[0];
    }
    int64_t runs = nBatch / s->runLength;
    for (int64_t r = 0; r < runs; ++r) {
      int64_t rem = r, oa = 0, ob = 0;
      for (size_t d = 1; d < dims.size(); ++d) {
        int64_t i = rem % dims[d];
        rem /= dims[d];
        oa += i * sa[d];
        ob += i * sb[d];
      }
      s->offA.push_back(oa);
      s->offB.push_back(ob);
      s->offY.push_back(r * s->runLength * m * n);
    }
  }
  toInt(s->m, "M");
  toInt(n, "N");
  toInt(k, "K");
  toInt(s->runLength, "the batch");
  return setOwnedState(op.context, op.index, owned.release());
}

} // namespace

extern "C" tidalrt_status_t tidalrt_cuda_k_gemm(tidalrt_context_t *ctx,
                                                const int64_t *desc,
                                                void *const *buffers) {
  return runKernel(ctx, desc, buffers, "gemm", [&](OpCall &op) {
    if (op.numTensors != 4 || op.numAttrs != 4)
      fail(TIDALRT_INTERNAL, "expected 4 tensors and 4 attributes");
    GemmState *s = gemmState(op);
    if (preparing(ctx)) {
      cublas(ctx); // created now rather than in a step
      return ok();
    }
    float *y = op[3].f32();
    bool product = s->m && s->n && s->k;
    if (s->hasC) {
      // beta * C, which cuBLAS adds to alpha * A * B (its beta is 1).
      broadcastScaled(ctx, "gemm", y, op[2].f32(), s->m, s->n, s->cStrideM,
                      s->cStrideN, s->beta);
    } else if (!product && s->m * s->n != 0) {
      check(cudaMemsetAsync(y, 0, op[3].bytes(), currentStream(ctx)), "gemm");
    }
    if (product)
      rowMajorGemm(ctx, s->ta, s->tb, s->m, s->n, s->k, s->alpha, op[0].f32(),
                   op[0].dim(1), 0, op[1].f32(), op[1].dim(1), 0,
                   s->hasC ? 1.0f : 0.0f, y, 1);
    return ok();
  });
}

extern "C" tidalrt_status_t tidalrt_cuda_k_matmul(tidalrt_context_t *ctx,
                                                  const int64_t *desc,
                                                  void *const *buffers) {
  return runKernel(ctx, desc, buffers, "matmul", [&](OpCall &op) {
    if (op.numTensors != 3 || op.numAttrs != 0)
      fail(TIDALRT_INTERNAL, "expected 3 tensors and no attributes");
    MatMulState *s = matmulState(op);
    if (preparing(ctx)) {
      cublas(ctx); // created now rather than in a step
      return ok();
    }
    if (s->empty) {
      if (op[2].numel())
        check(cudaMemsetAsync(op[2].data, 0, op[2].bytes(), currentStream(ctx)),
              "matmul");
      return ok();
    }
    const float *a = op[0].f32(), *b = op[1].f32();
    float *y = op[2].f32();
    for (size_t r = 0; r < s->offA.size(); ++r)
      rowMajorGemm(ctx, false, false, s->m, s->n, s->k, 1.0f, a + s->offA[r],
                   s->k, s->runStrideA, b + s->offB[r], s->n, s->runStrideB,
                   0.0f, y + s->offY[r], s->runLength);
    return ok();
  });
}
