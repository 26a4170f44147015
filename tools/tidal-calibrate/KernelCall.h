//===- KernelCall.h - calling the runtime's kernels -------------*- C++ -*-===//
//
// One kernel call site on its own prepared context, as the generated code
// and the driver make it, and aligned float buffers for its tensors: the
// host measurements (tidal-calibrate.cpp, ParallelGrain.cpp) time these.
//
//===----------------------------------------------------------------------===//

#ifndef TIDAL_TOOLS_TIDAL_CALIBRATE_KERNELCALL_H
#define TIDAL_TOOLS_TIDAL_CALIBRATE_KERNELCALL_H

#include "tidalrt/tidalrt.h"

#include <cstdint>
#include <cstdlib>
#include <initializer_list>
#include <memory>
#include <string>
#include <vector>

namespace calibrate {

inline std::string consume(tidalrt_status_t s) {
  std::string m =
      std::string(tidalrt_status_code_name(tidalrt_status_code(s))) + ": " +
      tidalrt_status_message(s);
  tidalrt_status_free(s);
  return m;
}

struct FreeDeleter {
  void operator()(float *p) const { std::free(p); }
};
using Buffer = std::unique_ptr<float[], FreeDeleter>;

/// `n` floats, TIDALRT_ARRAY_ALIGNMENT-aligned, filled with small values
/// (which also faults every page in before timing).
inline Buffer allocate(int64_t n, std::string &error) {
  size_t bytes = (size_t)n * sizeof(float);
  bytes = (bytes + TIDALRT_ARRAY_ALIGNMENT - 1) / TIDALRT_ARRAY_ALIGNMENT *
          TIDALRT_ARRAY_ALIGNMENT;
  Buffer b((float *)std::aligned_alloc(TIDALRT_ARRAY_ALIGNMENT, bytes));
  if (!b) {
    error = "out of memory allocating " + std::to_string(bytes) + " bytes";
    return b;
  }
  uint32_t x = 12345;
  for (int64_t i = 0; i < n; ++i) {
    x = x * 1664525u + 1013904223u;
    b[i] = (float)(x >> 8) / (float)(1u << 24) - 0.5f;
  }
  return b;
}

/// One kernel call site (op 0 of a one-op program) on its own prepared
/// context, as the generated code and the driver make it.
class KernelCall {
public:
  KernelCall(tidalrt_kernel_fn_t fn,
             std::initializer_list<std::vector<int64_t>> shapes,
             std::vector<void *> buffers)
      : fn(fn), buffers(std::move(buffers)) {
    desc = {0, (int64_t)shapes.size()};
    for (const std::vector<int64_t> &dims : shapes) {
      desc.push_back(TIDALRT_ELEMENT_TYPE_F32);
      desc.push_back((int64_t)dims.size());
      desc.insert(desc.end(), dims.begin(), dims.end());
    }
    desc.push_back(0); // no attributes
  }
  KernelCall(const KernelCall &) = delete;
  KernelCall &operator=(const KernelCall &) = delete;
  ~KernelCall() { tidalrt_context_free(ctx); }

  /// Creates and prepares the context; returns "" or the error.
  std::string prepare() {
    tidalrt_context_options_t options = {1, 0};
    if (tidalrt_status_t s = tidalrt_context_create(&options, &ctx))
      return consume(s);
    tidalrt_context_begin_prepare(ctx);
    if (tidalrt_status_t s = fn(ctx, desc.data(), buffers.data()))
      return consume(s);
    if (tidalrt_status_t s = tidalrt_context_end_prepare(ctx))
      return consume(s);
    return "";
  }
  /// Runs the call `times` times; returns "" or the error.
  std::string run(int64_t times = 1) {
    for (int64_t i = 0; i < times; ++i)
      if (tidalrt_status_t s = fn(ctx, desc.data(), buffers.data()))
        return consume(s);
    return "";
  }

private:
  tidalrt_kernel_fn_t fn;
  std::vector<int64_t> desc;
  std::vector<void *> buffers;
  tidalrt_context_t *ctx = nullptr;
};

} // namespace calibrate

#endif // TIDAL_TOOLS_TIDAL_CALIBRATE_KERNELCALL_H
