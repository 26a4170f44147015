// cuda_library_norm_matmul_test.cpp - the cuDNN/cuBLAS CUDA kernels of batch
// norm, Gemm and MatMul (runtime/src/cuda/library/) against the CPU kernels
// they mirror (cuda_library_case.h says how). Skips, naming the reason, without
// a usable GPU.
#include "cuda_library_case.h"

#include <cmath>
#include <cstring>

using namespace cuda_library_test;

namespace {

// ---- Batch normalization ------------------------------------------------

Shape channelShape(const Shape &x) { return {x[1]}; }

Case batchNormInference(const Shape &x, uint32_t seed) {
  Shape c = channelShape(x);
  Case k;
  k.random(x, seed, -2.0f, 3.0f)
      .random(c, seed + 1)
      .random(c, seed + 2)
      .random(c, seed + 3)
      .random(c, seed + 4, 0.5f, 2.0f)
      .out(x)
      .attrAbsent()
      .attrAbsent()
      .attrFloat(1e-5)
      .attrInt(0);
  return k;
}

Case batchNormTraining(const Shape &x, uint32_t seed, double momentum) {
  Shape c = channelShape(x);
  Case k;
  k.random(x, seed, -2.0f, 3.0f)
      .random(c, seed + 1)
      .random(c, seed + 2)
      .random(c, seed + 3)
      .random(c, seed + 4, 0.5f, 2.0f)
      .out(x)
      .out(c)
      .out(c)
      .out(c)
      .out(c)
      .attrAbsent()
      .attrAbsent()
      .attrFloat(1e-5)
      .attrFloat(momentum)
      .attrInt(0);
  return k;
}

// The batch statistics of `x` (mean, biased variance), as the forward
// results hold them.
Case batchNormBackward(const Shape &x, uint32_t seed) {
  Case input;
  input.random(x, seed + 1, -2.0f, 3.0f);
  const std::vector<unsigned char> &xb = input.tensors[0].bytes;
  std::vector<float> xv(xb.size() / 4);
  std::memcpy(xv.data(), xb.data(), xb.size());
  int64_t n = x[0], ch = x[1], s = numel(x) / (n * ch > 0 ? n * ch : 1);
  int64_t count = n * s;
  std::vector<float> mean((size_t)ch), var((size_t)ch);
  for (int64_t c = 0; c < ch; ++c) {
    double sum = 0.0, sq = 0.0;
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < s; ++j) {
        double v = xv[(size_t)((i * ch + c) * s + j)];
        sum += v;
        sq += v * v;
      }
    double m = count > 0 ? sum / (double)count : 0.0;
    mean[c] = (float)m;
    var[c] = count > 0 ? (float)(sq / (double)count - m * m) : 0.0f;
  }
  Shape c = channelShape(x);
  Case k;
  k.random(x, seed)
      .f32(x, xv)
      .random(c, seed + 2)
      .f32(c, mean)
      .f32(c, var)
      .out(x)
      .out(c)
      .out(c)
      .attrFloat(1e-5);
  return k;
}

std::vector<Shape> batchNormShapes() {
  return {{4, 3, 5, 5}, {16, 6}, {2, 4, 7}, {2, 3, 4, 3, 2}, {8, 32, 6, 6}};
}

TEST(CudaLibrary, BatchNormInference) {
  TIDALRT_REQUIRE_GPU();
  uint32_t seed = 900;
  for (const Shape &x : batchNormShapes()) {
    expectMatch(batchNormInference(x, seed), tidalrt_k_batch_norm_inference,
                tidalrt_cuda_k_batch_norm_inference, kTolerance);
    seed += 5;
  }
}

TEST(CudaLibrary, BatchNormTraining) {
  TIDALRT_REQUIRE_GPU();
  // The batch variance comes back from cuDNN's 1/sqrt(var + eps), a few
  // ulps off; the running statistics follow it.
  uint32_t seed = 1000;
  for (const Shape &x : batchNormShapes()) {
    expectMatch(batchNormTraining(x, seed, 0.9), tidalrt_k_batch_norm_training,
                tidalrt_cuda_k_batch_norm_training, kTolerance);
    seed += 5;
  }
}

TEST(CudaLibrary, BatchNormTrainingEdgeCases) {
  TIDALRT_REQUIRE_GPU();
  // One element per channel (the running variance is not unbiased), an
  // empty batch (zero statistics), momentum 0 and 1.
  // With one element per channel, x - mean is 0 up to cuDNN's rounding of
  // the mean (an ulp of x), which 1/sqrt(eps) = 316 amplifies in y: seen
  // 5.9e-5 relative on an H100 (cuDNN 9.19).
  expectMatch(batchNormTraining({1, 3}, 1, 0.9), tidalrt_k_batch_norm_training,
              tidalrt_cuda_k_batch_norm_training, 1e-3);
  expectMatch(batchNormTraining({0, 3, 4}, 2, 0.9),
              tidalrt_k_batch_norm_training, tidalrt_cuda_k_batch_norm_training,
              0);
  expectMatch(batchNormTraining({4, 3, 5}, 3, 0.0),
              tidalrt_k_batch_norm_training, tidalrt_cuda_k_batch_norm_training,
              kTolerance);
  expectMatch(batchNormTraining({4, 3, 5}, 4, 1.0),
              tidalrt_k_batch_norm_training, tidalrt_cuda_k_batch_norm_training,
              kTolerance);
}

TEST(CudaLibrary, BatchNormBackward) {
  TIDALRT_REQUIRE_GPU();
  uint32_t seed = 1100;
  for (const Shape &x : batchNormShapes()) {
    expectMatch(batchNormBackward(x, seed), tidalrt_k_batch_norm_backward,
                tidalrt_cuda_k_batch_norm_backward, kTolerance);
    seed += 5;
  }
  expectMatch(batchNormBackward({0, 3, 4}, 1), tidalrt_k_batch_norm_backward,
              tidalrt_cuda_k_batch_norm_backward, 0);
}

TEST(CudaLibrary, BatchNormDeterministic) {
  TIDALRT_REQUIRE_GPU();
  expectDeterministic(batchNormTraining({8, 16, 9, 9}, 1, 0.9),
                      tidalrt_cuda_k_batch_norm_training);
  expectDeterministic(batchNormBackward({8, 16, 9, 9}, 2),
                      tidalrt_cuda_k_batch_norm_backward);
}

TEST(CudaLibrary, BatchNormErrors) {
  TIDALRT_REQUIRE_GPU();
  // A per-channel operand of the wrong length.
  Case wrong = batchNormInference({2, 3, 4}, 1);
  wrong.tensors[2].dims = {2};
  wrong.tensors[2].bytes.resize(8);
  expectSameError(wrong, tidalrt_k_batch_norm_inference,
                  tidalrt_cuda_k_batch_norm_inference);
  // An output not shaped as the input.
  Case shape = batchNormTraining({2, 3, 4}, 2, 0.9);
  shape.tensors[5].dims = {2, 3, 2, 2};
  expectSameError(shape, tidalrt_k_batch_norm_training,
                  tidalrt_cuda_k_batch_norm_training);
  // float64 input.
  Case f64 = batchNormBackward({2, 3, 4}, 3);
  f64.tensors[1].type = TIDALRT_ELEMENT_TYPE_F64;
  f64.tensors[1].dims = {2, 3, 2};
  expectSameError(f64, tidalrt_k_batch_norm_backward,
                  tidalrt_cuda_k_batch_norm_backward);
}

// ---- Gemm and MatMul ---------------------------------------------------

struct GemmCase {
  int64_t m, n, k;
  bool ta, tb;
  Shape c; // empty vector and !hasC: no C
  bool hasC;
  double alpha, beta;
};

Case gemm(const GemmCase &g, uint32_t seed) {
  Case c;
  c.random(g.ta ? Shape{g.k, g.m} : Shape{g.m, g.k}, seed)
      .random(g.tb ? Shape{g.n, g.k} : Shape{g.k, g.n}, seed + 1);
  if (g.hasC)
    c.random(g.c, seed + 2);
  else
    c.absent();
  c.out({g.m, g.n})
      .attrFloat(g.alpha)
      .attrFloat(g.beta)
      .attrInt(g.ta)
      .attrInt(g.tb);
  return c;
}

TEST(CudaLibrary, Gemm) {
  TIDALRT_REQUIRE_GPU();
  std::vector<GemmCase> cases = {
      {4, 3, 5, false, false, {3}, true, 0.5, 2.0},
      {4, 3, 5, true, false, {4, 1}, true, 1.0, 1.0},
      {4, 3, 5, false, true, {4, 3}, true, -1.5, 0.25},
      {4, 3, 5, true, true, {}, true, 1.0, 3.0}, // a scalar C
      {7, 9, 11, true, true, {}, false, 2.0, 1.0},
      {33, 17, 65, false, true, {1, 17}, true, 1.0, 1.0},
      {64, 48, 96, false, false, {48}, true, 1.0, 1.0},
      {1, 1, 1, false, false, {}, false, 1.0, 1.0},
  };
  uint32_t seed = 1200;
  for (const GemmCase &g : cases) {
    SCOPED_TRACE("case " + std::to_string(seed));
    expectMatch(gemm(g, seed), tidalrt_k_gemm, tidalrt_cuda_k_gemm, kTolerance);
    seed += 3;
  }
}

TEST(CudaLibrary, GemmEmpty) {
  TIDALRT_REQUIRE_GPU();
  // K = 0: beta * C, or zeros; M = 0: nothing. beta * C is one float
  // multiply on both sides: bitwise.
  std::vector<GemmCase> cases = {
      {4, 3, 0, false, false, {4, 3}, true, 1.0, 2.0},
      {4, 3, 0, true, true, {}, false, 1.0, 1.0},
      {0, 3, 5, false, false, {3}, true, 1.0, 1.0},
  };
  uint32_t seed = 1300;
  for (const GemmCase &g : cases)
    expectMatch(gemm(g, seed++), tidalrt_k_gemm, tidalrt_cuda_k_gemm, 0);
}

TEST(CudaLibrary, GemmErrors) {
  TIDALRT_REQUIRE_GPU();
  Case inner = gemm({4, 3, 5, false, false, {3}, true, 1.0, 1.0}, 1);
  inner.tensors[1].dims = {4, 3};
  inner.tensors[1].bytes.resize(4 * 12);
  expectSameError(inner, tidalrt_k_gemm, tidalrt_cuda_k_gemm);
  Case c = gemm({4, 3, 5, false, false, {2}, true, 1.0, 1.0}, 2);
  expectSameError(c, tidalrt_k_gemm, tidalrt_cuda_k_gemm);
}

Case matmul(const Shape &a, const Shape &b, const Shape &y, uint32_t seed) {
  Case c;
  c.random(a, seed).random(b, seed + 1).out(y);
  return c;
}

TEST(CudaLibrary, MatMul) {
  TIDALRT_REQUIRE_GPU();
  struct Shapes {
    Shape a, b, y;
  };
  std::vector<Shapes> cases = {
      {{3, 4}, {4, 5}, {3, 5}},
      {{4}, {4}, {}},
      {{4}, {4, 5}, {5}},
      {{3, 4}, {4}, {3}},
      {{2, 3, 4}, {4, 5}, {2, 3, 5}},             // one folded product
      {{3, 4}, {2, 4, 5}, {2, 3, 5}},             // lhs stride 0
      {{2, 3, 3, 4}, {2, 3, 4, 5}, {2, 3, 3, 5}}, // one strided batch
      {{2, 1, 3, 4}, {1, 3, 4, 5}, {2, 3, 3, 5}}, // a loop of batches
      {{5, 1, 3, 4}, {2, 4, 5}, {5, 2, 3, 5}},
      {{2, 1, 3, 3, 4}, {3, 1, 4, 2}, {2, 3, 3, 3, 2}},
      {{4}, {2, 3, 4, 5}, {2, 3, 5}},
      {{2, 3, 6, 4}, {4}, {2, 3, 6}},
      {{1, 1, 17, 33}, {3, 1, 33, 9}, {3, 1, 17, 9}},
      {{8, 64, 48}, {8, 48, 40}, {8, 64, 40}},
  };
  uint32_t seed = 1400;
  for (const Shapes &s : cases) {
    SCOPED_TRACE("case " + std::to_string(seed));
    expectMatch(matmul(s.a, s.b, s.y, seed), tidalrt_k_matmul,
                tidalrt_cuda_k_matmul, kTolerance);
    seed += 2;
  }
}

TEST(CudaLibrary, MatMulEmpty) {
  TIDALRT_REQUIRE_GPU();
  expectMatch(matmul({2, 0}, {0, 3}, {2, 3}, 1), tidalrt_k_matmul,
              tidalrt_cuda_k_matmul, 0);
  expectMatch(matmul({0, 2, 4}, {4, 3}, {0, 2, 3}, 2), tidalrt_k_matmul,
              tidalrt_cuda_k_matmul, 0);
}

TEST(CudaLibrary, MatMulErrors) {
  TIDALRT_REQUIRE_GPU();
  expectSameError(matmul({3, 4}, {5, 6}, {3, 6}, 1), tidalrt_k_matmul,
                  tidalrt_cuda_k_matmul);
  expectSameError(matmul({2, 3, 4}, {3, 4, 5}, {3, 3, 5}, 2), tidalrt_k_matmul,
                  tidalrt_cuda_k_matmul);
  expectSameError(matmul({3, 4}, {4, 5}, {3, 4}, 3), tidalrt_k_matmul,
                  tidalrt_cuda_k_matmul);
}

} // namespace
