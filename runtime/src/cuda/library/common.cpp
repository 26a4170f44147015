// common.cpp - the owned cuDNN descriptors and int checks of common.h.
#include "common.h"

#include <climits>

namespace tidalrt {
namespace cuda {
namespace lib {

int toInt(int64_t v, const char *what) {
  if (v < INT_MIN || v > INT_MAX)
    fail(TIDALRT_UNSUPPORTED, "%s (%lld) does not fit cuDNN/cuBLAS's int", what,
         (long long)v);
  return (int)v;
}

std::vector<int> toInts(const std::vector<int64_t> &v, const char *what) {
  std::vector<int> r;
  for (int64_t x : v)
    r.push_back(toInt(x, what));
  return r;
}

TensorDesc::TensorDesc() {
  check(cudnnCreateTensorDescriptor(&desc), "cudnnCreateTensorDescriptor");
}
TensorDesc::~TensorDesc() { cudnnDestroyTensorDescriptor(desc); }

void TensorDesc::set(const std::vector<int64_t> &dims) {
  std::vector<int> d = toInts(dims, "a tensor dimension");
  std::vector<int> strides(d.size());
  int64_t s = 1;
  for (size_t i = d.size(); i-- > 0;) {
    strides[i] = toInt(s, "a tensor stride");
    s *= d[i] > 0 ? d[i] : 1;
  }
  toInt(s, "a tensor's element count");
  check(cudnnSetTensorNdDescriptor(desc, CUDNN_DATA_FLOAT, (int)d.size(),
                                   d.data(), strides.data()),
        "cudnnSetTensorNdDescriptor");
}

FilterDesc::FilterDesc() {
  check(cudnnCreateFilterDescriptor(&desc), "cudnnCreateFilterDescriptor");
}
FilterDesc::~FilterDesc() { cudnnDestroyFilterDescriptor(desc); }

void FilterDesc::set(const std::vector<int64_t> &dims) {
  std::vector<int> d = toInts(dims, "a filter dimension");
  int64_t n = 1;
  for (int x : d)
    n *= x;
  toInt(n, "a filter's element count");
  check(cudnnSetFilterNdDescriptor(desc, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW,
                                   (int)d.size(), d.data()),
        "cudnnSetFilterNdDescriptor");
}

ConvDesc::ConvDesc() {
  check(cudnnCreateConvolutionDescriptor(&desc),
        "cudnnCreateConvolutionDescriptor");
}
ConvDesc::~ConvDesc() { cudnnDestroyConvolutionDescriptor(desc); }

void ConvDesc::set(const std::vector<int64_t> &pads,
                   const std::vector<int64_t> &strides,
                   const std::vector<int64_t> &dilations, int64_t groups) {
  std::vector<int> p = toInts(pads, "a padding");
  std::vector<int> s = toInts(strides, "a stride");
  std::vector<int> d = toInts(dilations, "a dilation");
  check(cudnnSetConvolutionNdDescriptor(desc, (int)p.size(), p.data(), s.data(),
                                        d.data(), CUDNN_CROSS_CORRELATION,
                                        CUDNN_DATA_FLOAT),
        "cudnnSetConvolutionNdDescriptor");
  check(cudnnSetConvolutionGroupCount(desc, toInt(groups, "group")),
        "cudnnSetConvolutionGroupCount");
  check(cudnnSetConvolutionMathType(desc, CUDNN_FMA_MATH),
        "cudnnSetConvolutionMathType");
}

PoolDesc::PoolDesc() {
  check(cudnnCreatePoolingDescriptor(&desc), "cudnnCreatePoolingDescriptor");
}
PoolDesc::~PoolDesc() { cudnnDestroyPoolingDescriptor(desc); }

void PoolDesc::set(cudnnPoolingMode_t mode, const std::vector<int64_t> &window,
                   const std::vector<int64_t> &pads,
                   const std::vector<int64_t> &strides) {
  std::vector<int> w = toInts(window, "a pooling window");
  std::vector<int> p = toInts(pads, "a padding");
  std::vector<int> s = toInts(strides, "a stride");
  // NaNs do not win a max, as in the CPU kernel's `best < x` loop.
  check(cudnnSetPoolingNdDescriptor(desc, mode, CUDNN_NOT_PROPAGATE_NAN,
                                    (int)w.size(), w.data(), p.data(),
                                    s.data()),
        "cudnnSetPoolingNdDescriptor");
}

} // namespace lib
} // namespace cuda
} // namespace tidalrt
