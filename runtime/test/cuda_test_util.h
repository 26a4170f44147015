// cuda_test_util.h - helpers of the CUDA device's tests (tidalrt-cuda-tests).
#ifndef TIDALRT_TEST_CUDA_TEST_UTIL_H
#define TIDALRT_TEST_CUDA_TEST_UTIL_H

#include "kernel_test_util.h"

#include <gtest/gtest.h>

#include <string>

namespace tidalrt_test {

// Why no CUDA device can be used here ("" when one can): no GPU, no
// driver, or a driver older than the runtime.
std::string cuda_unavailable_reason();

// Runs `call` (built over host buffers) with `cuda_kernel` on a CUDA
// device: copies every present tensor into one device arena, runs the
// kernel prepared (as the driver does) on a context attached to the
// device, synchronises and copies every tensor back into its host buffer.
// Returns "" on success, else the status's code name and message.
std::string run_on_gpu(const KernelCall &call, tidalrt_kernel_fn_t cuda_kernel,
                       uint64_t seed = 0, uint64_t step = 0);

} // namespace tidalrt_test

// Skips the test, naming the reason, when no CUDA device can be used.
#define TIDALRT_REQUIRE_GPU()                                                  \
  do {                                                                         \
    std::string reason_ = ::tidalrt_test::cuda_unavailable_reason();           \
    if (!reason_.empty())                                                      \
      GTEST_SKIP() << reason_;                                                 \
  } while (0)

#endif // TIDALRT_TEST_CUDA_TEST_UTIL_H
