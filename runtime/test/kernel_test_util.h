// kernel_test_util.h - building kernel call descriptors in unit tests.
//
//   KernelCall call;                       // op index 0
//   call.tensor(TIDALRT_ELEMENT_TYPE_F32, {2, 3}, x.data());   // operands...
//   call.absent();                         // an absent optional operand
//   call.tensor(TIDALRT_ELEMENT_TYPE_F32, {2, 3}, y.data());   // ...results
//   call.attrFloat(0.01).attrInt(1).attrInts({1, 1}).attrAbsent();
//   ASSERT_OK(call.run(tidalrt_k_leaky_relu));
//
// Attributes must be added in alphabetical order of their ODS names, every
// declared attribute included (tidalrt.h, "Kernel call ABI").
#ifndef TIDALRT_TEST_KERNEL_TEST_UTIL_H
#define TIDALRT_TEST_KERNEL_TEST_UTIL_H

#include "tidalrt/tidalrt.h"

#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <string>
#include <vector>

namespace tidalrt_test {

class KernelCall {
public:
  explicit KernelCall(int64_t opIndex = 0) : opIndex(opIndex) {}

  KernelCall &tensor(tidalrt_element_type_t type, std::vector<int64_t> dims,
                     void *data) {
    tensorWords.push_back(type);
    tensorWords.push_back((int64_t)dims.size());
    tensorWords.insert(tensorWords.end(), dims.begin(), dims.end());
    buffers.push_back(data);
    ++numTensors;
    return *this;
  }
  KernelCall &f32(std::vector<int64_t> dims, float *data) {
    return tensor(TIDALRT_ELEMENT_TYPE_F32, std::move(dims), data);
  }
  // A float32 tensor in the channel-blocked layout (tidalrt.h, "Tensor
  // layouts").
  KernelCall &blocked(std::vector<int64_t> dims, float *data) {
    return tensor((tidalrt_element_type_t)(TIDALRT_ELEMENT_TYPE_F32 |
                                           TIDALRT_LAYOUT_CHANNEL_BLOCKED
                                               << TIDALRT_LAYOUT_SHIFT),
                  std::move(dims), data);
  }
  KernelCall &i64(std::vector<int64_t> dims, int64_t *data) {
    return tensor(TIDALRT_ELEMENT_TYPE_I64, std::move(dims), data);
  }
  KernelCall &absent() {
    tensorWords.push_back(TIDALRT_ELEMENT_TYPE_F32);
    tensorWords.push_back(-1);
    buffers.push_back(nullptr);
    ++numTensors;
    return *this;
  }
  KernelCall &attrInt(int64_t v) {
    attrWords.push_back(TIDALRT_ATTR_INT);
    attrWords.push_back(v);
    ++numAttrs;
    return *this;
  }
  KernelCall &attrFloat(double v) {
    int64_t w;
    memcpy(&w, &v, sizeof w);
    attrWords.push_back(TIDALRT_ATTR_FLOAT);
    attrWords.push_back(w);
    ++numAttrs;
    return *this;
  }
  KernelCall &attrInts(std::vector<int64_t> v) {
    attrWords.push_back(TIDALRT_ATTR_INTS);
    attrWords.push_back((int64_t)v.size());
    attrWords.insert(attrWords.end(), v.begin(), v.end());
    ++numAttrs;
    return *this;
  }
  KernelCall &attrAbsent() {
    attrWords.push_back(TIDALRT_ATTR_ABSENT);
    ++numAttrs;
    return *this;
  }

  // The tensors' pointers, in descriptor order (NULL for absent operands).
  const std::vector<void *> &pointers() const { return buffers; }

  std::vector<int64_t> descriptor() const {
    std::vector<int64_t> d = {opIndex, numTensors};
    d.insert(d.end(), tensorWords.begin(), tensorWords.end());
    d.push_back(numAttrs);
    d.insert(d.end(), attrWords.begin(), attrWords.end());
    return d;
  }

  // Runs the kernel on a fresh context (prepared first, as the driver
  // does, unless `prepare` is false). Returns "" on success, else the
  // status message prefixed with its code name.
  std::string run(tidalrt_kernel_fn_t kernel, bool prepare = true,
                  uint64_t seed = 0, uint64_t step = 0) const {
    tidalrt_context_options_t options = {(size_t)opIndex + 1, seed};
    tidalrt_context_t *ctx = nullptr;
    std::string error;
    if (tidalrt_status_t s = tidalrt_context_create(&options, &ctx))
      return consume(s);
    tidalrt_context_set_step(ctx, step);
    std::vector<int64_t> d = descriptor();
    if (prepare) {
      tidalrt_context_begin_prepare(ctx);
      if (tidalrt_status_t s = kernel(ctx, d.data(), buffers.data()))
        error = consume(s);
      if (error.empty())
        if (tidalrt_status_t s = tidalrt_context_end_prepare(ctx))
          error = consume(s);
    }
    if (error.empty())
      if (tidalrt_status_t s = kernel(ctx, d.data(), buffers.data()))
        error = consume(s);
    tidalrt_context_free(ctx);
    return error;
  }

private:
  static std::string consume(tidalrt_status_t s) {
    std::string m =
        std::string(tidalrt_status_code_name(tidalrt_status_code(s))) + ": " +
        tidalrt_status_message(s);
    tidalrt_status_free(s);
    return m;
  }

  int64_t opIndex;
  int64_t numTensors = 0;
  int64_t numAttrs = 0;
  std::vector<int64_t> tensorWords;
  std::vector<int64_t> attrWords;
  std::vector<void *> buffers;
};

} // namespace tidalrt_test

#endif // TIDALRT_TEST_KERNEL_TEST_UTIL_H
