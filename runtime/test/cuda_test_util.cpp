// cuda_test_util.cpp - helpers of the CUDA device's tests.
#include "cuda_test_util.h"

#include "tidalrt/tidalrt.h"

#include <cstring>
#include <vector>

namespace tidalrt_test {

namespace {

std::string consume(tidalrt_status_t status) {
  std::string message =
      std::string(tidalrt_status_code_name(tidalrt_status_code(status))) +
      ": " + tidalrt_status_message(status);
  tidalrt_status_free(status);
  return message;
}

// The byte size of every tensor of a descriptor (-1: absent).
std::vector<int64_t> tensor_bytes(const std::vector<int64_t> &desc) {
  std::vector<int64_t> sizes;
  size_t at = 2;
  for (int64_t t = 0; t < desc[1]; ++t) {
    auto type = static_cast<tidalrt_element_type_t>(desc[at]);
    int64_t rank = desc[at + 1];
    at += 2;
    if (rank < 0) {
      sizes.push_back(-1);
      continue;
    }
    int64_t n = 1;
    for (int64_t d = 0; d < rank; ++d)
      n *= desc[at + d];
    at += static_cast<size_t>(rank);
    sizes.push_back(n * static_cast<int64_t>(tidalrt_element_type_size(type)));
  }
  return sizes;
}

struct kernel_launch {
  tidalrt_kernel_fn_t kernel;
  tidalrt_context_t *ctx;
  const int64_t *desc;
  void *const *buffers;
};

tidalrt_status_t run_kernel(void *arg) {
  auto *launch = static_cast<kernel_launch *>(arg);
  return launch->kernel(launch->ctx, launch->desc, launch->buffers);
}

} // namespace

std::string cuda_unavailable_reason() {
  tidalrt_device_options_t options = {TIDALRT_DEVICE_CUDA, 256, 0};
  tidalrt_device_t *device = nullptr;
  if (tidalrt_status_t status = tidalrt_device_create(&options, &device))
    return consume(status);
  tidalrt_device_free(device);
  return "";
}

std::string run_on_gpu(const KernelCall &call, tidalrt_kernel_fn_t cuda_kernel,
                       uint64_t seed, uint64_t step) {
  std::vector<int64_t> desc = call.descriptor();
  std::vector<int64_t> sizes = tensor_bytes(desc);
  const std::vector<void *> &host = call.pointers();
  // One arena, each tensor at a 256-byte aligned offset.
  std::vector<uint64_t> offsets;
  uint64_t total = 0;
  for (int64_t size : sizes) {
    offsets.push_back(total);
    if (size > 0)
      total += (static_cast<uint64_t>(size) + 255) / 256 * 256;
  }
  tidalrt_device_options_t options = {TIDALRT_DEVICE_CUDA, total, 0};
  tidalrt_device_t *device = nullptr;
  if (tidalrt_status_t status = tidalrt_device_create(&options, &device))
    return consume(status);
  std::string error;
  std::vector<void *> buffers(sizes.size(), nullptr);
  for (size_t i = 0; i < sizes.size() && error.empty(); ++i) {
    if (sizes[i] < 0)
      continue;
    buffers[i] = tidalrt_device_memory(device) + offsets[i];
    if (sizes[i] > 0 && host[i])
      if (tidalrt_status_t status = tidalrt_device_write(
              device, offsets[i], host[i], static_cast<uint64_t>(sizes[i])))
        error = consume(status);
  }
  tidalrt_context_options_t context_options = {static_cast<size_t>(desc[0]) + 1,
                                               seed};
  tidalrt_context_t *ctx = nullptr;
  tidalrt_stream_t *stream = nullptr;
  if (error.empty())
    if (tidalrt_status_t status =
            tidalrt_context_create(&context_options, &ctx))
      error = consume(status);
  if (error.empty())
    if (tidalrt_status_t status =
            tidalrt_context_set_device(ctx, device, nullptr, 0, 0))
      error = consume(status);
  if (error.empty())
    if (tidalrt_status_t status =
            tidalrt_stream_create(device, TIDALRT_STREAM_COMPUTE, &stream))
      error = consume(status);
  kernel_launch launch = {cuda_kernel, ctx, desc.data(), buffers.data()};
  if (error.empty()) {
    tidalrt_context_set_step(ctx, step);
    tidalrt_context_begin_prepare(ctx);
    tidalrt_status_t status = tidalrt_stream_launch(stream, run_kernel, &launch,
                                                    nullptr, 0, nullptr, 0);
    if (!status)
      status = tidalrt_stream_synchronize(stream);
    tidalrt_status_t end = tidalrt_context_end_prepare(ctx);
    if (status) {
      error = consume(status);
      tidalrt_status_free(end);
    } else if (end) {
      error = consume(end);
    }
  }
  if (error.empty()) {
    tidalrt_status_t status = tidalrt_stream_launch(stream, run_kernel, &launch,
                                                    nullptr, 0, nullptr, 0);
    if (!status)
      status = tidalrt_stream_synchronize(stream);
    if (status)
      error = consume(status);
  }
  for (size_t i = 0; i < sizes.size() && error.empty(); ++i)
    if (sizes[i] > 0 && host[i])
      if (tidalrt_status_t status = tidalrt_device_read(
              device, offsets[i], host[i], static_cast<uint64_t>(sizes[i])))
        error = consume(status);
  tidalrt_stream_free(stream);
  tidalrt_context_free(ctx);
  tidalrt_device_free(device);
  return error;
}

} // namespace tidalrt_test
