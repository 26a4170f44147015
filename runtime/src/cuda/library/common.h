// common.h - what the cuDNN/cuBLAS kernels share on the host: owned cuDNN
// descriptors, int conversions, workspace carving and the CPU kernels'
// shape checks they share (namespace tidalrt::cuda::lib). Host compiler
// only, against the CUDA headers.
#ifndef TIDALRT_CUDA_LIBRARY_COMMON_H
#define TIDALRT_CUDA_LIBRARY_COMMON_H

#include "../../cpu/dnnl_checks.h"
#include "../cuda_context.h"

#include <cstddef>
#include <cstdint>
#include <vector>

namespace tidalrt {
namespace cuda {
namespace lib {

// The most device workspace one cuDNN algorithm may ask for.
constexpr size_t kWorkspaceLimit = size_t(64) << 20;

// The workspace alignment of the sub-buffers a kernel carves.
constexpr size_t kWorkspaceAlign = 256;
inline size_t alignUp(size_t n) {
  return (n + kWorkspaceAlign - 1) / kWorkspaceAlign * kWorkspaceAlign;
}

// `v` as an int, or UNSUPPORTED naming `what` (cuDNN and cuBLAS take int
// dimensions).
int toInt(int64_t v, const char *what);
std::vector<int> toInts(const std::vector<int64_t> &v, const char *what);

// The CPU kernels' checks (cpu/dnnl_checks.h), with the same codes and
// messages, and oneDNN's padding_r for one spatial dimension (the ONNX end
// padding when it gives `out` outputs, else the padding that does).
using tidalrt::dnnlutil::padRight;
using tidalrt::dnnlutil::requireF32;
using tidalrt::dnnlutil::requireRank;

// Owned cuDNN descriptors (destroyed with the op state).
class TensorDesc {
public:
  TensorDesc();
  ~TensorDesc();
  TensorDesc(const TensorDesc &) = delete;
  TensorDesc &operator=(const TensorDesc &) = delete;
  // A dense C-order float32 tensor of `dims` (4 or 5 of them).
  void set(const std::vector<int64_t> &dims);
  cudnnTensorDescriptor_t get() const { return desc; }

private:
  cudnnTensorDescriptor_t desc = nullptr;
};

class FilterDesc {
public:
  FilterDesc();
  ~FilterDesc();
  FilterDesc(const FilterDesc &) = delete;
  FilterDesc &operator=(const FilterDesc &) = delete;
  // A dense float32 [K, C, spatial...] filter.
  void set(const std::vector<int64_t> &dims);
  cudnnFilterDescriptor_t get() const { return desc; }

private:
  cudnnFilterDescriptor_t desc = nullptr;
};

class ConvDesc {
public:
  ConvDesc();
  ~ConvDesc();
  ConvDesc(const ConvDesc &) = delete;
  ConvDesc &operator=(const ConvDesc &) = delete;
  // A float32 cross-correlation with FMA maths only (no TF32).
  void set(const std::vector<int64_t> &pads,
           const std::vector<int64_t> &strides,
           const std::vector<int64_t> &dilations, int64_t groups);
  cudnnConvolutionDescriptor_t get() const { return desc; }

private:
  cudnnConvolutionDescriptor_t desc = nullptr;
};

class PoolDesc {
public:
  PoolDesc();
  ~PoolDesc();
  PoolDesc(const PoolDesc &) = delete;
  PoolDesc &operator=(const PoolDesc &) = delete;
  void set(cudnnPoolingMode_t mode, const std::vector<int64_t> &window,
           const std::vector<int64_t> &pads,
           const std::vector<int64_t> &strides);
  cudnnPoolingDescriptor_t get() const { return desc; }

private:
  cudnnPoolingDescriptor_t desc = nullptr;
};

} // namespace lib
} // namespace cuda
} // namespace tidalrt

#endif // TIDALRT_CUDA_LIBRARY_COMMON_H
