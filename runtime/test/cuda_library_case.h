// cuda_library_case.h - the cases of the cuDNN/cuBLAS CUDA kernels' tests
// (cuda_library_*_test.cpp): a kernel call with its own tensors, run on the
// CPU kernel and on its CUDA twin (run_on_gpu) on separate copies, the
// results prefilled with the same sentinel and compared: bitwise where both
// compute the same thing exactly, else within a relative L2 tolerance
// stated per test. Invalid calls must fail with the CPU kernel's status
// code. The tests skip, naming the reason, without a usable GPU.
#ifndef TIDALRT_TEST_CUDA_LIBRARY_CASE_H
#define TIDALRT_TEST_CUDA_LIBRARY_CASE_H

#include "cuda_test_util.h"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#define TIDALRT_DECLARE_CUDA_KERNEL(name)                                      \
  extern "C" tidalrt_status_t tidalrt_cuda_k_##name(                           \
      tidalrt_context_t *context, const int64_t *desc, void *const *buffers);
TIDALRT_DNNL_KERNEL_LIST(TIDALRT_DECLARE_CUDA_KERNEL)
#undef TIDALRT_DECLARE_CUDA_KERNEL

namespace cuda_library_test {

using tidalrt_test::KernelCall;
using Shape = std::vector<int64_t>;

// cuDNN's convolution algorithms (implicit GEMM, FFT, Winograd) and oneDNN's
// direct convolution round differently; FFT and Winograd transforms lose a
// few more bits than a direct sum of products.
inline constexpr double kConvTolerance = 1e-4;
// Sums of products in another order (cuBLAS, cuDNN pooling and batch norm
// against oneDNN).
inline constexpr double kTolerance = 1e-5;

inline int64_t numel(const Shape &s) {
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
  enum Kind { Int, Float, Ints, Absent } kind;
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
  Case &attrAbsent() {
    attrs.push_back({Attr::Absent, 0, 0.0, {}});
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
      else if (a.kind == Attr::Ints)
        c.attrInts(a.ints);
      else
        c.attrAbsent();
    }
    return c;
  }

  std::vector<Tensor> tensors;
  std::vector<Attr> attrs;

private:
  float empty_ = 0.0f;
};

std::string codeOf(const std::string &error);

// Compares result `i` of two runs: bitwise when `tolerance` is 0 (or the
// type is not float32), else ||gpu - cpu|| <= tolerance * ||cpu|| with NaNs
// and infinities in the same places.
void expectResultMatch(const Tensor &cpu, const Tensor &gpu, size_t i,
                       double tolerance);
// Runs `c` on the CPU and on the GPU and compares every result.
void expectMatch(const Case &c, tidalrt_kernel_fn_t cpuKernel,
                 tidalrt_kernel_fn_t gpuKernel, double tolerance);
// Both kernels must reject `c` with the same status code.
void expectSameError(const Case &c, tidalrt_kernel_fn_t cpuKernel,
                     tidalrt_kernel_fn_t gpuKernel);
// Two GPU runs give the same bits.
void expectDeterministic(const Case &c, tidalrt_kernel_fn_t gpuKernel);

} // namespace cuda_library_test

#endif // TIDALRT_TEST_CUDA_LIBRARY_CASE_H
