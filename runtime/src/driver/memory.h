// memory.h - where a compiled function's slots live (host memory or a
// device arena) and how the driver moves their bytes.
#ifndef TIDALRT_DRIVER_MEMORY_H
#define TIDALRT_DRIVER_MEMORY_H

#include "manifest.h"
#include "tidalrt/tidalrt.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace tidalrt_driver {

struct data_input;

// A zero-initialised, 64-byte aligned block of host memory; or a view of
// `bytes` bytes of memory owned elsewhere (a device arena), which it does
// not free and the driver never dereferences.
class arena {
public:
  arena() = default;
  explicit arena(uint64_t bytes);
  static arena view(uint8_t *memory, uint64_t bytes);
  ~arena();
  arena(const arena &) = delete;
  arena &operator=(const arena &) = delete;
  arena(arena &&other) noexcept;
  arena &operator=(arena &&other) noexcept;

  uint8_t *data() const { return bytes_; }
  uint64_t size() const { return size_; }

private:
  uint8_t *bytes_ = nullptr;
  uint64_t size_ = 0;
  bool owned_ = true;
};

// The name of a device kind in messages: "host", "sim", "cuda".
const char *device_kind_name(tidalrt_device_kind_t kind);

// A function's memory: its arena, its host arena (offloaded copies and the
// slots with "space": "host"; none for a function on the host) and the
// device whose arena holds the other slots (NULL: the arena is host
// memory). A device arena may be GPU memory, which the host cannot
// dereference, so every access to a slot's bytes goes through the calls
// below: memcpy and memmove in host memory, the device's synchronous
// transfers (tidalrt_device_write, _read, _move) in a device arena. They
// run between steps, while the device is idle. A transfer that fails is a
// runtime fault (exit 2) naming the slot, the function and the device.
class function_memory {
public:
  // `name` ("step", "predict function") names the function in messages.
  explicit function_memory(const char *name) : name_(name) {}
  function_memory(const function_memory &) = delete;
  function_memory &operator=(const function_memory &) = delete;

  // The function runs on the host: a zeroed arena of `arena_bytes`.
  void allocate(uint64_t arena_bytes);
  // The function runs on `device` (not owned; it must outlive this
  // object's use): its arena is the start of the device arena, which is
  // zeroed here (tidalrt_device_fill), with a zeroed host arena of
  // `host_arena_bytes`.
  void attach(tidalrt_device_t *device, uint64_t arena_bytes,
              uint64_t host_arena_bytes);

  const char *name() const { return name_; }
  tidalrt_device_t *device() const { return device_; }
  // The arena the function is called with: on a device, the base of the
  // device arena (tidalrt_device_memory).
  uint8_t *base() const { return memory_.data(); }
  uint8_t *host_arena() const { return host_.data(); }
  uint64_t host_arena_bytes() const { return host_.size(); }
  // Host memory it holds: the arena of a function on the host, and the
  // host arena (not the staging buffer: it holds one batch's input, as the
  // loaded data sets, which are not counted either).
  uint64_t host_bytes() const;

  // Whether `slot`'s bytes are in a device arena.
  bool on_device(const tensor_slot &slot) const {
    return device_ && !slot.host;
  }
  // The slot's bytes in host memory; NULL for a slot on the device.
  uint8_t *host_at(const tensor_slot &slot) const;

  // Copies the slot's bytes [offset, offset + bytes) (all of them without
  // the offset) to `dst`, or from `src`.
  void read(const tensor_slot &slot, void *dst) const;
  void read(const tensor_slot &slot, uint64_t offset, void *dst,
            uint64_t bytes) const;
  void write(const tensor_slot &slot, const void *src) const;
  void write(const tensor_slot &slot, uint64_t offset, const void *src,
             uint64_t bytes) const;

  // Host memory in which to assemble the slot's new bytes, which
  // end_write() then puts in the slot: the slot itself in host memory,
  // else the staging buffer, holding the slot's current bytes if `keep`
  // (else undefined) and valid until the next use of the staging buffer.
  uint8_t *begin_write(const tensor_slot &slot, bool keep = false);
  void end_write(const tensor_slot &slot);

  // The slot's bytes in host memory: the slot itself, or a copy in the
  // staging buffer (valid until its next use).
  const uint8_t *view(const tensor_slot &slot);

  // Writes samples rows[0..count) of `input` into its slot (input.slot) and
  // zeroes the rows count..batch_size-1 (copy_rows): gathered in place in
  // host memory, else into the staging buffer and written with one
  // transfer.
  void write_rows(const data_input &input, const uint64_t *rows, size_t count,
                  int64_t batch_size);

  // Copies `src`, a slot of `from` (this function or another, which may be
  // on another device or on the host), into `dst`, a slot of this function
  // of the same size: memmove within host memory, tidalrt_device_move
  // within one device, a read or a write between host memory and a device,
  // a read into the staging buffer and a write between two devices.
  void copy(const tensor_slot &dst, const function_memory &from,
            const tensor_slot &src);

private:
  uint8_t *staging(uint64_t bytes);
  void check_part(const tensor_slot &slot, uint64_t offset, uint64_t bytes,
                  const char *call) const;
  // "cannot ACTION 'x' (input, float32 [4, 2]) PREPOSITION the step's cuda
  // device: MESSAGE" (exit 2).
  [[noreturn]] void transfer_failed(const std::string &action,
                                    const tensor_slot &slot,
                                    const char *preposition,
                                    tidalrt_status_t status) const;

  const char *name_;
  arena memory_;
  arena host_;
  tidalrt_device_t *device_ = nullptr;
  // Reused for every staged transfer: no heap allocation per step once it
  // has grown to the largest input.
  std::vector<uint8_t> staging_;
};

} // namespace tidalrt_driver

#endif // TIDALRT_DRIVER_MEMORY_H
