// memory.cpp - arenas, and reading, writing and copying slots in host
// memory or through a device's synchronous transfers.
#include "memory.h"

#include "data.h"
#include "error.h"

#include <cstdlib>
#include <cstring>
#include <sys/sysinfo.h>

namespace tidalrt_driver {

arena::arena(uint64_t bytes) {
  uint64_t rounded = (bytes + TIDALRT_ARRAY_ALIGNMENT - 1) /
                     TIDALRT_ARRAY_ALIGNMENT * TIDALRT_ARRAY_ALIGNMENT;
  if (rounded == 0)
    rounded = TIDALRT_ARRAY_ALIGNMENT;
  if (rounded < bytes || rounded > SIZE_MAX)
    fail_runtime("cannot allocate an arena of " + std::to_string(bytes) +
                 " bytes");
  // Zeroing an arena larger than memory and swap would end in the OOM
  // killer, not in an error: refuse it up front.
  struct sysinfo info;
  if (sysinfo(&info) == 0) {
    unsigned __int128 total =
        (static_cast<unsigned __int128>(info.totalram) + info.totalswap) *
        info.mem_unit;
    if (rounded > total)
      fail_runtime("cannot allocate the " + std::to_string(bytes) +
                   "-byte arena: this machine has " +
                   std::to_string(static_cast<uint64_t>(total)) +
                   " bytes of memory and swap");
  }
  bytes_ = static_cast<uint8_t *>(std::aligned_alloc(
      TIDALRT_ARRAY_ALIGNMENT, static_cast<size_t>(rounded)));
  if (!bytes_)
    fail_runtime("cannot allocate the " + std::to_string(bytes) +
                 "-byte arena: out of memory");
  std::memset(bytes_, 0, static_cast<size_t>(rounded));
  size_ = bytes;
}

arena arena::view(uint8_t *memory, uint64_t bytes) {
  arena result;
  result.bytes_ = memory;
  result.size_ = bytes;
  result.owned_ = false;
  return result;
}

arena::~arena() {
  if (owned_)
    std::free(bytes_);
}

arena::arena(arena &&other) noexcept
    : bytes_(other.bytes_), size_(other.size_), owned_(other.owned_) {
  other.bytes_ = nullptr;
  other.size_ = 0;
  other.owned_ = true;
}

arena &arena::operator=(arena &&other) noexcept {
  if (this != &other) {
    if (owned_)
      std::free(bytes_);
    bytes_ = other.bytes_;
    size_ = other.size_;
    owned_ = other.owned_;
    other.bytes_ = nullptr;
    other.size_ = 0;
    other.owned_ = true;
  }
  return *this;
}

const char *device_kind_name(tidalrt_device_kind_t kind) {
  switch (kind) {
  case TIDALRT_DEVICE_HOST:
    return "host";
  case TIDALRT_DEVICE_SIM:
    return "sim";
  case TIDALRT_DEVICE_CUDA:
    return "cuda";
  }
  return "unknown";
}

void function_memory::allocate(uint64_t arena_bytes) {
  device_ = nullptr;
  memory_ = arena(arena_bytes);
  host_ = arena();
}

void function_memory::attach(tidalrt_device_t *device, uint64_t arena_bytes,
                             uint64_t host_arena_bytes) {
  device_ = device;
  memory_ = arena::view(tidalrt_device_memory(device), arena_bytes);
  host_ = arena(host_arena_bytes);
  // A CUDA arena starts undefined (cudaMalloc); zero it as a host arena is.
  uint64_t bytes = tidalrt_device_memory_bytes(device);
  if (tidalrt_status_t status = tidalrt_device_fill(device, 0, 0, bytes))
    fail_runtime(std::string("cannot zero the ") + name_ + "'s " +
                 device_kind_name(tidalrt_device_kind(device)) + " device of " +
                 std::to_string(bytes) + " bytes: " + take_message(status));
}

uint64_t function_memory::host_bytes() const {
  return (device_ ? 0 : memory_.size()) + host_.size();
}

uint8_t *function_memory::host_at(const tensor_slot &slot) const {
  if (slot.host)
    return host_.data() + slot.offset;
  return device_ ? nullptr : memory_.data() + slot.offset;
}

void function_memory::check_part(const tensor_slot &slot, uint64_t offset,
                                 uint64_t bytes, const char *call) const {
  if (offset > slot.bytes || bytes > slot.bytes - offset)
    fail_runtime(std::string("internal error: ") + call + " of " +
                 std::to_string(bytes) + " bytes at byte " +
                 std::to_string(offset) + " of the " + name_ + "'s '" +
                 slot.name + "' (" + std::to_string(slot.bytes) + " bytes)");
}

void function_memory::transfer_failed(const std::string &action,
                                      const tensor_slot &slot,
                                      const char *preposition,
                                      tidalrt_status_t status) const {
  fail_runtime("cannot " + action + " '" + slot.name + "' (" + slot.role +
               ", " + describe_slot(slot) + ") " + preposition + " the " +
               name_ + "'s " + device_kind_name(tidalrt_device_kind(device_)) +
               " device: " + take_message(status));
}

void function_memory::read(const tensor_slot &slot, void *dst) const {
  read(slot, 0, dst, slot.bytes);
}

void function_memory::read(const tensor_slot &slot, uint64_t offset, void *dst,
                           uint64_t bytes) const {
  check_part(slot, offset, bytes, "a read");
  if (!bytes)
    return;
  if (const uint8_t *at = host_at(slot)) {
    std::memcpy(dst, at + offset, static_cast<size_t>(bytes));
    return;
  }
  if (tidalrt_status_t status =
          tidalrt_device_read(device_, slot.offset + offset, dst, bytes))
    transfer_failed("read", slot, "from", status);
}

void function_memory::write(const tensor_slot &slot, const void *src) const {
  write(slot, 0, src, slot.bytes);
}

void function_memory::write(const tensor_slot &slot, uint64_t offset,
                            const void *src, uint64_t bytes) const {
  check_part(slot, offset, bytes, "a write");
  if (!bytes)
    return;
  if (uint8_t *at = host_at(slot)) {
    std::memcpy(at + offset, src, static_cast<size_t>(bytes));
    return;
  }
  if (tidalrt_status_t status =
          tidalrt_device_write(device_, slot.offset + offset, src, bytes))
    transfer_failed("write", slot, "to", status);
}

uint8_t *function_memory::staging(uint64_t bytes) {
  if (bytes > SIZE_MAX)
    fail_runtime("cannot allocate a staging buffer of " +
                 std::to_string(bytes) + " bytes");
  if (staging_.size() < bytes)
    staging_.resize(static_cast<size_t>(bytes));
  return staging_.data();
}

uint8_t *function_memory::begin_write(const tensor_slot &slot, bool keep) {
  if (uint8_t *at = host_at(slot))
    return at;
  uint8_t *buffer = staging(slot.bytes);
  if (keep)
    read(slot, buffer);
  return buffer;
}

void function_memory::end_write(const tensor_slot &slot) {
  if (on_device(slot))
    write(slot, staging_.data());
}

const uint8_t *function_memory::view(const tensor_slot &slot) {
  if (const uint8_t *at = host_at(slot))
    return at;
  uint8_t *buffer = staging(slot.bytes);
  read(slot, buffer);
  return buffer;
}

void function_memory::write_rows(const data_input &input, const uint64_t *rows,
                                 size_t count, int64_t batch_size) {
  const tensor_slot &slot = *input.slot;
  copy_rows(input, rows, count, begin_write(slot), batch_size);
  end_write(slot);
}

void function_memory::copy(const tensor_slot &dst, const function_memory &from,
                           const tensor_slot &src) {
  if (dst.bytes != src.bytes)
    fail_runtime(std::string("internal error: copying ") +
                 std::to_string(src.bytes) + " bytes of the " + from.name_ +
                 "'s '" + src.name + "' into the " + std::to_string(dst.bytes) +
                 " bytes of the " + name_ + "'s '" + dst.name + "'");
  uint64_t bytes = dst.bytes;
  if (!bytes)
    return;
  uint8_t *to_host = host_at(dst);
  const uint8_t *from_host = from.host_at(src);
  if (to_host && from_host) {
    // An update may copy within one arena; the ranges may overlap.
    std::memmove(to_host, from_host, static_cast<size_t>(bytes));
  } else if (to_host) {
    from.read(src, to_host);
  } else if (from_host) {
    write(dst, from_host);
  } else if (device_ == from.device_) {
    if (tidalrt_status_t status =
            tidalrt_device_move(device_, dst.offset, src.offset, bytes))
      transfer_failed("copy '" + src.name + "' to", dst, "within", status);
  } else {
    uint8_t *buffer = staging(bytes);
    from.read(src, buffer);
    write(dst, buffer);
  }
}

} // namespace tidalrt_driver
