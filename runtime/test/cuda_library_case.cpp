// cuda_library_case.cpp - running and comparing the cases of the
// cuDNN/cuBLAS CUDA kernels' tests (cuda_library_case.h).
#include "cuda_library_case.h"

#include <cmath>
#include <cstring>

namespace cuda_library_test {

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

} // namespace cuda_library_test
