// cuda_library_test.cpp - the cuDNN/cuBLAS CUDA kernels
// (runtime/src/cuda/library/) against the CPU kernels they mirror.
//
// Every case runs the CPU kernel on one copy of its tensors and the CUDA
// kernel (run_on_gpu) on another, the results prefilled with the same
// sentinel, and compares every result: bitwise where both compute the same
// thing exactly (max pooling, integer types, the direct kernels that follow
// the CPU loops), else within a relative L2 tolerance stated per test.
// Invalid calls must fail with the CPU kernel's status code. Skips, naming
// the reason, without a usable GPU.
#include "cuda_test_util.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#define TIDALRT_DECLARE_CUDA_KERNEL(name)                                      \
  extern "C" tidalrt_status_t tidalrt_cuda_k_##name(                           \
      tidalrt_context_t *context, const int64_t *desc, void *const *buffers);
TIDALRT_DNNL_KERNEL_LIST(TIDALRT_DECLARE_CUDA_KERNEL)
#undef TIDALRT_DECLARE_CUDA_KERNEL

using tidalrt_test::KernelCall;

namespace {

using Shape = std::vector<int64_t>;

// cuDNN's convolution algorithms (implicit GEMM, FFT, Winograd) and oneDNN's
// direct convolution round differently; FFT and Winograd transforms lose a
// few more bits than a direct sum of products.
constexpr double kConvTolerance = 1e-4;
// Sums of products in another order (cuBLAS, cuDNN pooling and batch norm
// against oneDNN).
constexpr double kTolerance = 1e-5;

int64_t numel(const Shape &s) {
  int64_t n = 1;
  for (int64_t d : s)
    n *= d;
  return n;
}

// One tensor of a case.
struct Tensor {
  tidalrt_element_type_t type = TIDALRT_ELEMENT_TYPE_F32;
  Shape dims;
  std::vector<unsigned char> bytes;
  bool absent = false;
  bool result = false;
};

struct Attr {
  enum Kind { Int, Float, Ints } kind;
  int64_t i = 0;
  double f = 0.0;
  Shape ints;
};

// A kernel call with its own tensors; copies are independent.
class Case {
public:
  Case &f32(const Shape &dims, const std::vector<float> &v) {
    return raw(TIDALRT_ELEMENT_TYPE_F32, dims, v.data(), v.size() * 4);
  }
  Case &random(const Shape &dims, uint32_t seed, float lo = -1.0f,
               float hi = 1.0f) {
    std::mt19937 gen(seed);
    std::uniform_real_distribution<float> dist(lo, hi);
    std::vector<float> v((size_t)numel(dims));
    for (float &x : v)
      x = dist(gen);
    return f32(dims, v);
  }
  // Few distinct values, so that pooling windows hold ties.
  Case &tied(const Shape &dims, uint32_t seed) {
    std::mt19937 gen(seed);
    std::uniform_int_distribution<int> dist(-2, 1);
    std::vector<float> v((size_t)numel(dims));
    for (float &x : v)
      x = (float)dist(gen);
    return f32(dims, v);
  }
  Case &raw(tidalrt_element_type_t type, const Shape &dims, const void *data,
            size_t bytes) {
    Tensor t;
    t.type = type;
    t.dims = dims;
    t.bytes.assign((const unsigned char *)data,
                   (const unsigned char *)data + bytes);
    tensors.push_back(std::move(t));
    return *this;
  }
  Case &absent() {
    Tensor t;
    t.absent = true;
    tensors.push_back(std::move(t));
    return *this;
  }
  // A result, prefilled with a sentinel that no kernel writes.
  Case &out(const Shape &dims,
            tidalrt_element_type_t type = TIDALRT_ELEMENT_TYPE_F32) {
    Tensor t;
    t.type = type;
    t.dims = dims;
    t.bytes.assign((size_t)numel(dims) * tidalrt_element_type_size(type), 0x7b);
    t.result = true;
    tensors.push_back(std::move(t));
    return *this;
  }
  Case &attrInt(int64_t v) {
    attrs.push_back({Attr::Int, v, 0.0, {}});
    return *this;
  }
  Case &attrFloat(double v) {
    attrs.push_back({Attr::Float, 0, v, {}});
    return *this;
  }
  Case &attrInts(const Shape &v) {
    attrs.push_back({Attr::Ints, 0, 0.0, v});
    return *this;
  }

  // A call over this case's buffers (valid while the case lives).
  KernelCall call() {
    KernelCall c;
    for (Tensor &t : tensors) {
      if (t.absent)
        c.absent();
      else
        c.tensor(t.type, t.dims,
                 t.bytes.empty() ? (void *)&empty_ : t.bytes.data());
    }
    for (const Attr &a : attrs) {
      if (a.kind == Attr::Int)
        c.attrInt(a.i);
      else if (a.kind == Attr::Float)
        c.attrFloat(a.f);
      else
        c.attrInts(a.ints);
    }
    return c;
  }

  std::vector<Tensor> tensors;
  std::vector<Attr> attrs;

private:
  float empty_ = 0.0f;
};

std::string codeOf(const std::string &error) {
  return error.substr(0, error.find(':'));
}

// Compares result `i` of two runs: bitwise when `tolerance` is 0 (or the
// type is not float32), else ||gpu - cpu|| <= tolerance * ||cpu|| with NaNs
// and infinities in the same places.
void expectResultMatch(const Tensor &cpu, const Tensor &gpu, size_t i,
                       double tolerance) {
  SCOPED_TRACE("result tensor " + std::to_string(i));
  ASSERT_EQ(cpu.bytes.size(), gpu.bytes.size());
  if (tolerance == 0.0 || cpu.type != TIDALRT_ELEMENT_TYPE_F32) {
    EXPECT_TRUE(cpu.bytes == gpu.bytes) << "results differ bitwise";
    return;
  }
  size_t n = cpu.bytes.size() / 4;
  std::vector<float> a(n), b(n);
  std::memcpy(a.data(), cpu.bytes.data(), n * 4);
  std::memcpy(b.data(), gpu.bytes.data(), n * 4);
  double diff = 0.0, norm = 0.0;
  int shown = 0;
  for (size_t j = 0; j < n; ++j) {
    if (!std::isfinite(a[j]) || !std::isfinite(b[j])) {
      bool same = std::isnan(a[j]) ? std::isnan(b[j]) : a[j] == b[j];
      if (!same && shown++ < 5)
        ADD_FAILURE() << "[" << j << "]: cpu " << a[j] << ", gpu " << b[j];
      continue;
    }
    diff += ((double)b[j] - a[j]) * ((double)b[j] - a[j]);
    norm += (double)a[j] * a[j];
  }
  double rel = norm > 0.0 ? std::sqrt(diff / norm) : std::sqrt(diff);
  EXPECT_LE(rel, tolerance) << "relative L2 error over " << n << " elements";
  if (rel > tolerance)
    for (size_t j = 0; j < n && shown < 5; ++j)
      if (std::fabs(b[j] - a[j]) > tolerance * (std::fabs(a[j]) + 1e-3f))
        ADD_FAILURE() << "[" << j << "]: cpu " << a[j] << ", gpu " << b[j]
                      << " (" << shown++ << ")";
}

// Runs `c` on the CPU and on the GPU and compares every result.
void expectMatch(const Case &c, tidalrt_kernel_fn_t cpuKernel,
                 tidalrt_kernel_fn_t gpuKernel, double tolerance) {
  Case cpu = c, gpu = c;
  ASSERT_EQ(cpu.call().run(cpuKernel), "") << "the CPU kernel failed";
  ASSERT_EQ(tidalrt_test::run_on_gpu(gpu.call(), gpuKernel), "");
  for (size_t i = 0; i < c.tensors.size(); ++i)
    if (c.tensors[i].result)
      expectResultMatch(cpu.tensors[i], gpu.tensors[i], i, tolerance);
}

// Both kernels must reject `c` with the same status code.
void expectSameError(const Case &c, tidalrt_kernel_fn_t cpuKernel,
                     tidalrt_kernel_fn_t gpuKernel) {
  Case cpu = c, gpu = c;
  std::string e1 = cpu.call().run(cpuKernel);
  std::string e2 = tidalrt_test::run_on_gpu(gpu.call(), gpuKernel);
  ASSERT_NE(e1, "") << "the CPU kernel accepts the call";
  ASSERT_NE(e2, "") << "the CUDA kernel accepts the call";
  EXPECT_EQ(codeOf(e1), codeOf(e2)) << e1 << "\nvs\n" << e2;
}

// Two GPU runs give the same bits.
void expectDeterministic(const Case &c, tidalrt_kernel_fn_t gpuKernel) {
  Case a = c, b = c;
  ASSERT_EQ(tidalrt_test::run_on_gpu(a.call(), gpuKernel), "");
  ASSERT_EQ(tidalrt_test::run_on_gpu(b.call(), gpuKernel), "");
  for (size_t i = 0; i < c.tensors.size(); ++i) {
    if (c.tensors[i].result) {
      EXPECT_TRUE(a.tensors[i].bytes == b.tensors[i].bytes)
          << "result " << i << " differs between two runs";
    }
  }
}

// ---- Convolution -------------------------------------------------------

struct ConvCase {
  Shape x, w; // [N, C, D...], [M, C/group, K...]
  Shape pads, strides, dilations;
  int64_t group = 1;
  bool bias = false;

  int k() const { return (int)x.size() - 2; }
  Shape y() const {
    Shape o = {x[0], w[0]};
    for (int i = 0; i < k(); ++i) {
      int64_t d = dilations.empty() ? 1 : dilations[i];
      int64_t s = strides.empty() ? 1 : strides[i];
      int64_t p = pads.empty() ? 0 : pads[i] + pads[k() + i];
      int64_t span = x[2 + i] + p - ((w[2 + i] - 1) * d + 1);
      o.push_back(span < 0 ? 0 : span / s + 1);
    }
    return o;
  }
  Case &attrs(Case &c) const {
    return c.attrInts(dilations).attrInt(group).attrInts(pads).attrInts(
        strides);
  }
};

std::vector<ConvCase> convCases() {
  return {
      // 2-D, symmetric pads, bias.
      {{2, 3, 7, 6}, {4, 3, 3, 3}, {1, 1, 1, 1}, {1, 1}, {1, 1}, 1, true},
      // Strided, no pads or bias, a non-square kernel.
      {{1, 2, 9, 8}, {5, 2, 3, 2}, {}, {2, 2}, {}, 1, false},
      // Groups, dilation, mixed strides.
      {{2, 4, 10, 9}, {6, 2, 3, 3}, {2, 1, 2, 1}, {1, 2}, {2, 1}, 2, true},
      // Depthwise.
      {{1, 6, 8, 8}, {6, 1, 3, 3}, {1, 1, 1, 1}, {1, 1}, {1, 1}, 6, false},
      // Depthwise, strided, at MobileNet-mini's sizes (its block 1), the
      // one zoo model that differs from PyTorch on an H100 (docs/cuda.md).
      {{4, 48, 16, 16}, {48, 1, 3, 3}, {1, 1, 1, 1}, {2, 2}, {1, 1}, 48, false},
      {{4, 32, 16, 16}, {32, 1, 3, 3}, {1, 1, 1, 1}, {1, 1}, {1, 1}, 32, false},
      // Asymmetric pads (an explicitly padded copy).
      {{1, 3, 6, 7}, {2, 3, 3, 3}, {0, 1, 2, 0}, {1, 1}, {1, 1}, 1, true},
      {{2, 2, 8, 8}, {3, 2, 3, 3}, {0, 0, 1, 1}, {2, 2}, {1, 1}, 1, false},
      // 1-D (as 2-D of height 1), asymmetric.
      {{2, 3, 11}, {4, 3, 3}, {1, 2}, {2}, {1}, 1, true},
      {{3, 4, 16}, {4, 2, 5}, {2, 2}, {1}, {2}, 2, false},
      // 3-D.
      {{1, 2, 5, 6, 4},
       {3, 2, 3, 3, 2},
       {1, 1, 1, 1, 1, 1},
       {1, 1, 1},
       {1, 1, 1},
       1,
       true},
      {{2, 4, 6, 5, 7},
       {4, 2, 2, 3, 3},
       {0, 1, 1, 1, 1, 0},
       {2, 1, 2},
       {1, 1, 1},
       2,
       false},
      // Larger channel counts.
      {{4, 16, 12, 12}, {32, 16, 3, 3}, {1, 1, 1, 1}, {1, 1}, {1, 1}, 1, true},
      {{2, 32, 9, 9}, {8, 32, 1, 1}, {}, {2, 2}, {}, 1, false},
  };
}

Case convForward(const ConvCase &cc, uint32_t seed) {
  Case c;
  c.random(cc.x, seed).random(cc.w, seed + 1);
  if (cc.bias)
    c.random({cc.w[0]}, seed + 2);
  else
    c.absent();
  c.out(cc.y());
  return cc.attrs(c);
}

Case convBackwardData(const ConvCase &cc, uint32_t seed) {
  Case c;
  c.random(cc.y(), seed).random(cc.w, seed + 1).out(cc.x);
  return cc.attrs(c);
}

Case convBackwardWeights(const ConvCase &cc, uint32_t seed) {
  Case c;
  c.random(cc.y(), seed).random(cc.x, seed + 1).out(cc.w);
  return cc.attrs(c);
}

TEST(CudaLibrary, Conv) {
  TIDALRT_REQUIRE_GPU();
  uint32_t seed = 1;
  for (const ConvCase &cc : convCases()) {
    SCOPED_TRACE("case " + std::to_string(seed));
    expectMatch(convForward(cc, seed), tidalrt_k_conv, tidalrt_cuda_k_conv,
                kConvTolerance);
    seed += 3;
  }
}

TEST(CudaLibrary, ConvBackwardData) {
  TIDALRT_REQUIRE_GPU();
  uint32_t seed = 100;
  for (const ConvCase &cc : convCases()) {
    SCOPED_TRACE("case " + std::to_string(seed));
    expectMatch(convBackwardData(cc, seed), tidalrt_k_conv_backward_data,
                tidalrt_cuda_k_conv_backward_data, kConvTolerance);
    seed += 3;
  }
}

TEST(CudaLibrary, ConvBackwardWeights) {
  TIDALRT_REQUIRE_GPU();
  uint32_t seed = 200;
  for (const ConvCase &cc : convCases()) {
    SCOPED_TRACE("case " + std::to_string(seed));
    expectMatch(convBackwardWeights(cc, seed), tidalrt_k_conv_backward_weights,
                tidalrt_cuda_k_conv_backward_weights, kConvTolerance);
    seed += 3;
  }
}

TEST(CudaLibrary, ConvEmpty) {
  TIDALRT_REQUIRE_GPU();
  // No batch: nothing to write. No input channels: the output is the bias
  // (or zero), and the gradients are zero.
  for (bool bias : {false, true}) {
    ConvCase noBatch{{0, 3, 5, 5}, {4, 3, 3, 3}, {}, {}, {}, 1, bias};
    ConvCase noChannels{{2, 0, 5, 5}, {4, 0, 3, 3}, {}, {}, {}, 1, bias};
    for (const ConvCase &cc : {noBatch, noChannels}) {
      expectMatch(convForward(cc, 7), tidalrt_k_conv, tidalrt_cuda_k_conv, 0);
      expectMatch(convBackwardData(cc, 8), tidalrt_k_conv_backward_data,
                  tidalrt_cuda_k_conv_backward_data, 0);
      expectMatch(convBackwardWeights(cc, 9), tidalrt_k_conv_backward_weights,
                  tidalrt_cuda_k_conv_backward_weights, 0);
    }
  }
}

TEST(CudaLibrary, ConvDeterministic) {
  TIDALRT_REQUIRE_GPU();
  ConvCase cc{
      {4, 8, 14, 14}, {16, 8, 3, 3}, {1, 1, 1, 1}, {2, 2}, {1, 1}, 1, true};
  expectDeterministic(convForward(cc, 11), tidalrt_cuda_k_conv);
  expectDeterministic(convBackwardData(cc, 12),
                      tidalrt_cuda_k_conv_backward_data);
  expectDeterministic(convBackwardWeights(cc, 13),
                      tidalrt_cuda_k_conv_backward_weights);
}

TEST(CudaLibrary, ConvErrors) {
  TIDALRT_REQUIRE_GPU();
  // Channels do not match the group.
  ConvCase channels{{1, 4, 5, 5}, {2, 3, 3, 3}, {}, {}, {}, 1, false};
  expectSameError(convForward(channels, 1), tidalrt_k_conv,
                  tidalrt_cuda_k_conv);
  expectSameError(convBackwardData(channels, 1), tidalrt_k_conv_backward_data,
                  tidalrt_cuda_k_conv_backward_data);
  // A bias of the wrong length.
  Case bias;
  bias.random({1, 2, 5, 5}, 1)
      .random({3, 2, 3, 3}, 2)
      .random({4}, 3)
      .out({1, 3, 3, 3})
      .attrInts({})
      .attrInt(1)
      .attrInts({})
      .attrInts({});
  expectSameError(bias, tidalrt_k_conv, tidalrt_cuda_k_conv);
  // Four spatial dimensions.
  ConvCase rank6{{1, 1, 3, 3, 3, 3}, {1, 1, 2, 2, 2, 2}, {}, {}, {}, 1, false};
  expectSameError(convForward(rank6, 1), tidalrt_k_conv, tidalrt_cuda_k_conv);
  // A negative pad.
  ConvCase pad{{1, 1, 5, 5}, {1, 1, 3, 3}, {-1, 0, 0, 0}, {}, {}, 1, false};
  expectSameError(convBackwardWeights(pad, 1), tidalrt_k_conv_backward_weights,
                  tidalrt_cuda_k_conv_backward_weights);
}

// ---- Pooling -----------------------------------------------------------

struct PoolCase {
  Shape x, kernel, strides, pads, dilations;
  bool ceil = false;
  bool includePad = false;

  int k() const { return (int)x.size() - 2; }
  Shape dil() const { return dilations.empty() ? Shape(k(), 1) : dilations; }
  Shape str() const { return strides.empty() ? Shape(k(), 1) : strides; }
  Shape pad() const { return pads.empty() ? Shape(2 * k(), 0) : pads; }
  // The compiler's output size (tidal::windowOutputSize).
  Shape y() const {
    Shape o = {x[0], x[1]}, d = dil(), s = str(), p = pad();
    for (int i = 0; i < k(); ++i) {
      int64_t span = d[i] * (kernel[i] - 1) + 1;
      int64_t steps = x[2 + i] + p[i] + p[k() + i] - span;
      int64_t n = (ceil ? (steps + s[i] - 1) / s[i] : steps / s[i]) + 1;
      if (ceil && (n - 1) * s[i] >= x[2 + i] + p[i])
        --n;
      o.push_back(n);
    }
    return o;
  }
  Case &maxAttrs(Case &c) const {
    return c.attrInt(ceil)
        .attrInts(dil())
        .attrInts(kernel)
        .attrInts(pad())
        .attrInts(str());
  }
  Case &avgAttrs(Case &c) const {
    return c.attrInt(ceil)
        .attrInt(includePad)
        .attrInts(kernel)
        .attrInts(pad())
        .attrInts(str());
  }
};

std::vector<PoolCase> poolCases() {
  return {
      // cuDNN windows: plain, symmetric pads, overlapping, 1-D, 3-D.
      {{2, 3, 8, 8}, {2, 2}, {2, 2}, {}, {}},
      {{1, 2, 9, 9}, {3, 3}, {2, 2}, {1, 1, 1, 1}, {}},
      {{2, 2, 7, 6}, {3, 2}, {1, 1}, {1, 0, 1, 0}, {}},
      {{2, 3, 10}, {3}, {2}, {1, 1}, {}},
      {{1, 2, 6, 6, 6}, {2, 2, 2}, {2, 2, 2}, {}, {}},
      {{2, 3, 7, 5, 6}, {3, 2, 3}, {2, 1, 2}, {1, 0, 1, 1, 0, 1}, {}},
      // Direct kernels: ceil_mode, asymmetric pads, dilations, a pad as
      // large as the window, no spatial dims, four spatial dims.
      {{1, 2, 8, 8}, {3, 3}, {2, 2}, {}, {}, true},
      {{2, 2, 7, 7}, {3, 3}, {2, 2}, {1, 1, 1, 1}, {}, true},
      {{1, 1, 7, 7}, {2, 2}, {2, 2}, {0, 0, 1, 1}, {}},
      {{1, 2, 9, 9}, {2, 3}, {1, 2}, {}, {2, 2}},
      {{1, 2, 5}, {2}, {1}, {2, 2}, {}},
      {{3, 4}, {}, {}, {}, {}},
      {{1, 2, 3, 4, 3, 4}, {2, 2, 2, 2}, {1, 2, 1, 2}, {}, {}},
  };
}

Case maxPool(const PoolCase &pc, uint32_t seed, bool ties) {
  Case c;
  if (ties)
    c.tied(pc.x, seed);
  else
    c.random(pc.x, seed);
  c.out(pc.y());
  return pc.maxAttrs(c);
}

Case maxPoolBackward(const PoolCase &pc, uint32_t seed, bool ties) {
  Case c;
  c.random(pc.y(), seed);
  if (ties)
    c.tied(pc.x, seed + 1);
  else
    c.random(pc.x, seed + 1);
  c.out(pc.x);
  return pc.maxAttrs(c);
}

Case averagePool(const PoolCase &pc, uint32_t seed) {
  Case c;
  c.random(pc.x, seed).out(pc.y());
  return pc.avgAttrs(c);
}

Case averagePoolBackward(const PoolCase &pc, uint32_t seed) {
  Case c;
  c.random(pc.y(), seed).out(pc.x);
  return pc.avgAttrs(c);
}

TEST(CudaLibrary, MaxPool) {
  TIDALRT_REQUIRE_GPU();
  uint32_t seed = 300;
  for (const PoolCase &pc : poolCases())
    for (bool ties : {false, true}) {
      SCOPED_TRACE("case " + std::to_string(seed));
      // A maximum is exact.
      expectMatch(maxPool(pc, seed++, ties), tidalrt_k_max_pool,
                  tidalrt_cuda_k_max_pool, 0);
    }
}

TEST(CudaLibrary, MaxPoolElementTypes) {
  TIDALRT_REQUIRE_GPU();
  PoolCase pcs[] = {{{2, 3, 7, 7}, {3, 3}, {2, 2}, {1, 1, 1, 1}, {}},
                    {{2, 3, 8, 8}, {3, 3}, {2, 2}, {}, {}, true}};
  std::mt19937 gen(5);
  std::uniform_int_distribution<int> dist(-100, 100);
  for (const PoolCase &pc : pcs) {
    int64_t n = numel(pc.x);
    auto run = [&](tidalrt_element_type_t type, auto sample) {
      using T = decltype(sample);
      std::vector<T> v((size_t)n);
      for (T &e : v)
        e = (T)dist(gen);
      Case c;
      c.raw(type, pc.x, v.data(), v.size() * sizeof(T)).out(pc.y(), type);
      pc.maxAttrs(c);
      SCOPED_TRACE(tidalrt_element_type_name(type));
      expectMatch(c, tidalrt_k_max_pool, tidalrt_cuda_k_max_pool, 0);
    };
    run(TIDALRT_ELEMENT_TYPE_F64, double());
    run(TIDALRT_ELEMENT_TYPE_I8, int8_t());
    run(TIDALRT_ELEMENT_TYPE_U8, uint8_t());
    run(TIDALRT_ELEMENT_TYPE_I16, int16_t());
    run(TIDALRT_ELEMENT_TYPE_U16, uint16_t());
    run(TIDALRT_ELEMENT_TYPE_I32, int32_t());
    run(TIDALRT_ELEMENT_TYPE_I64, int64_t());
    run(TIDALRT_ELEMENT_TYPE_U32, uint32_t());
    run(TIDALRT_ELEMENT_TYPE_U64, uint64_t());
  }
}

TEST(CudaLibrary, MaxPoolBackward) {
  TIDALRT_REQUIRE_GPU();
  uint32_t seed = 400;
  for (const PoolCase &pc : poolCases()) {
    SCOPED_TRACE("case " + std::to_string(seed));
    // Overlapping windows add gradients in another order.
    expectMatch(maxPoolBackward(pc, seed, false), tidalrt_k_max_pool_backward,
                tidalrt_cuda_k_max_pool_backward, kTolerance);
    seed += 2;
  }
}

// The gradient of a window goes to its FIRST maximum, as on the CPU (cuDNN
// does not document which maximum it picks; see kCudnnMaxPoolBackward in
// src/cuda/library/pool.cpp).
TEST(CudaLibrary, MaxPoolBackwardTies) {
  TIDALRT_REQUIRE_GPU();
  uint32_t seed = 500;
  for (const PoolCase &pc : poolCases()) {
    SCOPED_TRACE("case " + std::to_string(seed));
    expectMatch(maxPoolBackward(pc, seed, true), tidalrt_k_max_pool_backward,
                tidalrt_cuda_k_max_pool_backward, kTolerance);
    seed += 2;
  }
}

TEST(CudaLibrary, AveragePool) {
  TIDALRT_REQUIRE_GPU();
  uint32_t seed = 600;
  for (PoolCase pc : poolCases())
    for (bool include : {false, true}) {
      pc.includePad = include;
      SCOPED_TRACE("case " + std::to_string(seed));
      expectMatch(averagePool(pc, seed++), tidalrt_k_average_pool,
                  tidalrt_cuda_k_average_pool, kTolerance);
    }
}

TEST(CudaLibrary, AveragePoolBackward) {
  TIDALRT_REQUIRE_GPU();
  uint32_t seed = 700;
  for (PoolCase pc : poolCases())
    for (bool include : {false, true}) {
      pc.includePad = include;
      SCOPED_TRACE("case " + std::to_string(seed));
      expectMatch(averagePoolBackward(pc, seed++),
                  tidalrt_k_average_pool_backward,
                  tidalrt_cuda_k_average_pool_backward, kTolerance);
    }
}

TEST(CudaLibrary, PoolDeterministic) {
  TIDALRT_REQUIRE_GPU();
  PoolCase cudnn{{4, 8, 15, 15}, {3, 3}, {2, 2}, {1, 1, 1, 1}, {}};
  PoolCase direct{{4, 8, 15, 15}, {3, 3}, {2, 2}, {0, 0, 1, 1}, {}, true};
  for (const PoolCase &pc : {cudnn, direct}) {
    expectDeterministic(maxPoolBackward(pc, 1, true),
                        tidalrt_cuda_k_max_pool_backward);
    expectDeterministic(averagePoolBackward(pc, 2),
                        tidalrt_cuda_k_average_pool_backward);
  }
}

TEST(CudaLibrary, GlobalAveragePool) {
  TIDALRT_REQUIRE_GPU();
  // The same double sum in the same order: bitwise.
  std::vector<std::pair<Shape, Shape>> shapes = {
      {{2, 3, 5, 7}, {2, 3, 1, 1}},
      {{1, 4, 3, 3, 3}, {1, 4, 1, 1, 1}},
      {{2, 3}, {2, 3}},
      {{2, 5, 0}, {2, 5, 1}},
      {{3, 2, 200}, {3, 2, 1}},
  };
  uint32_t seed = 800;
  for (const auto &s : shapes) {
    Case c;
    c.random(s.first, seed++).out(s.second);
    expectMatch(c, tidalrt_k_global_average_pool,
                tidalrt_cuda_k_global_average_pool, 0);
  }
}

TEST(CudaLibrary, PoolErrors) {
  TIDALRT_REQUIRE_GPU();
  PoolCase pc{{1, 2, 6, 6}, {2, 2}, {2, 2}, {}, {}};
  // An element type max pooling does not take.
  std::vector<unsigned char> flags((size_t)numel(pc.x), 1);
  Case boolean;
  boolean.raw(TIDALRT_ELEMENT_TYPE_BOOL, pc.x, flags.data(), flags.size())
      .out(pc.y(), TIDALRT_ELEMENT_TYPE_BOOL);
  pc.maxAttrs(boolean);
  expectSameError(boolean, tidalrt_k_max_pool, tidalrt_cuda_k_max_pool);
  // grad_input not shaped as the input.
  Case shape;
  shape.random(pc.y(), 1).random(pc.x, 2).out({1, 2, 6, 5});
  pc.maxAttrs(shape);
  expectSameError(shape, tidalrt_k_max_pool_backward,
                  tidalrt_cuda_k_max_pool_backward);
  // A kernel_shape of the wrong length.
  PoolCase wrong{{1, 2, 6, 6}, {2}, {2, 2}, {}, {}};
  Case avg;
  avg.random(pc.x, 3).out(pc.y());
  wrong.avgAttrs(avg);
  expectSameError(avg, tidalrt_k_average_pool, tidalrt_cuda_k_average_pool);
  // A global average pool output of the wrong size.
  Case global;
  global.random({2, 3, 4, 4}, 4).out({2, 3, 2, 1});
  expectSameError(global, tidalrt_k_global_average_pool,
                  tidalrt_cuda_k_global_average_pool);
}

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
