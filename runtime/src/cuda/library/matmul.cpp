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
#include "../../cpu/dnnl_checks.h"
#include "common.h"
#include "kernels.h"

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

// The CPU kernel's checks (dnnl_checks.h) and cuBLAS's int limits.
GemmState *gemmState(OpCall &op) {
  if (auto *s = getState<GemmState>(op.context, op.index))
    return s;
  dnnlutil::GemmShape g = dnnlutil::checkGemm(op);
  int64_t m = g.m, n = g.n, k = g.k;
  std::unique_ptr<GemmState> owned(new GemmState());
  GemmState *s = owned.get();
  s->m = m;
  s->n = n;
  s->k = k;
  s->ta = g.ta;
  s->tb = g.tb;
  s->beta = (float)g.beta;
  s->hasC = g.hasC;
  s->cStrideM = g.cStrideM;
  s->cStrideN = g.cStrideN;
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

// The CPU kernel's checks (dnnl_checks.h), the batches collapsed for
// cuBLAS and its int limits.
MatMulState *matmulState(OpCall &op) {
  if (auto *s = getState<MatMulState>(op.context, op.index))
    return s;
  dnnlutil::MatMulShape shape = dnnlutil::checkMatMul(op);
  int64_t m = shape.m, n = shape.n, k = shape.k, nBatch = shape.nBatch;
  const std::vector<int64_t> &aBatch = shape.aBatch, &bBatch = shape.bBatch,
                             &batch = shape.batch;
  size_t batchRank = batch.size();
  std::unique_ptr<MatMulState> owned(new MatMulState());
  MatMulState *s = owned.get();
  s->empty = shape.empty();
  if (s->empty)
    return setOwnedState(op.context, op.index, owned.release());
  s->m = m;
  s->n = n;
  s->k = k;
  if (shape.bCount == 1 && shape.aCount == nBatch) {
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
    dnnlutil::checkGemmCall(op);
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
    dnnlutil::checkMatMulCall(op);
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
