// kernel.h - what every CPU kernel uses: the call descriptor, state, scratch.
//
// A kernel is written as
//
//   extern "C" tidalrt_status_t tidalrt_k_relu(tidalrt_context_t *ctx,
//                                              const int64_t *desc,
//                                              void *const *buffers) {
//     return tidalrt::runKernel(ctx, desc, buffers, "relu",
//                               [&](tidalrt::OpCall &op) { ...; return ok();
//                               });
//   }
//
// runKernel decodes the descriptor (tidalrt.h, "Kernel call ABI"), turns C++
// exceptions (oneDNN's included) into statuses, and prefixes every failure
// with the kernel's name.
#ifndef TIDALRT_CPU_KERNEL_H
#define TIDALRT_CPU_KERNEL_H

#include "tidalrt/tidalrt.h"

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <exception>
#include <new>

namespace tidalrt {

// One operand or result of a kernel call.
struct TensorRef {
  int32_t type = 0;  // tidalrt_element_type_t
  int32_t rank = -1; // -1: an absent optional operand
  int32_t layout = TIDALRT_LAYOUT_DENSE;
  const int64_t *dims = nullptr;
  void *data = nullptr;

  bool present() const { return rank >= 0; }
  int64_t dim(int i) const { return dims[i]; }
  int64_t numel() const {
    int64_t n = 1;
    for (int i = 0; i < rank; ++i)
      n *= dims[i];
    return n;
  }
  size_t bytes() const {
    return (size_t)numel() *
           tidalrt_element_type_size((tidalrt_element_type_t)type);
  }
  float *f32() const { return static_cast<float *>(data); }
  int64_t *i64() const { return static_cast<int64_t *>(data); }
  uint8_t *u8() const { return static_cast<uint8_t *>(data); }
  bool blocked() const { return layout == TIDALRT_LAYOUT_CHANNEL_BLOCKED; }
};

// One attribute of a kernel call, as encoded by the compiler.
struct AttrRef {
  int64_t tag = TIDALRT_ATTR_ABSENT;
  const int64_t *words = nullptr; // payload (after the tag; for INTS after n)
  int64_t count = 0;              // INTS: n; INT/FLOAT: 1; ABSENT: 0
};

// A decoded kernel call. Lives on the stack of the kernel entry point; holds
// no heap memory.
class OpCall {
public:
  static constexpr int kMaxTensors = 256;
  static constexpr int kMaxAttrs = 32;

  int64_t index = -1;
  const char *kernel = "";
  tidalrt_context_t *context = nullptr;
  int numTensors = 0;
  TensorRef tensors[kMaxTensors];
  int numAttrs = 0;
  AttrRef attrs[kMaxAttrs];
  bool anyBlocked = false; // some tensor is TIDALRT_LAYOUT_CHANNEL_BLOCKED

  // Fills this from `desc`/`buffers`; INTERNAL on a malformed descriptor.
  tidalrt_status_t decode(tidalrt_context_t *ctx, const int64_t *desc,
                          void *const *buffers, const char *kernelName);

  TensorRef &operator[](int i) { return tensors[i]; }
  const TensorRef &operator[](int i) const { return tensors[i]; }

  // Typed attribute access by position (alphabetical order of the ODS
  // names). A wrong tag throws KernelError(INTERNAL), which runKernel turns
  // into a status naming the kernel and attribute index.
  bool has(int i) const;
  int64_t getInt(int i) const;
  bool getBool(int i) const { return getInt(i) != 0; }
  double getFloat(int i) const;
  // INTS payload: returns the count and sets `out` to the words.
  int64_t getInts(int i, const int64_t **out) const;
};

// Thrown inside kernels for errors; runKernel catches it.
struct KernelError {
  tidalrt_status_code_t code;
  char message[256];
};
[[noreturn]] void fail(tidalrt_status_code_t code, const char *format, ...)
    TIDALRT_PRINTF_LIKE(2, 3);

// True while the context prepares: build state, reserve scratch, touch no
// tensor data.
bool preparing(const tidalrt_context_t *ctx);

// The per-op state slot. setState takes ownership; `destroy` runs at
// tidalrt_context_free.
void *getState(tidalrt_context_t *ctx, int64_t opIndex);
void setState(tidalrt_context_t *ctx, int64_t opIndex, void *state,
              void (*destroy)(void *));

template <typename T> T *getState(tidalrt_context_t *ctx, int64_t opIndex) {
  return static_cast<T *>(getState(ctx, opIndex));
}
template <typename T>
T *setOwnedState(tidalrt_context_t *ctx, int64_t opIndex, T *state) {
  setState(ctx, opIndex, state, [](void *p) { delete static_cast<T *>(p); });
  return state;
}

// Scratch memory shared by all ops (ops run one at a time). While
// preparing, records the request and returns nullptr; otherwise returns the
// buffer (64-byte aligned), or throws INTERNAL if `bytes` exceeds what was
// reserved. A context that was never prepared grows its buffer on demand.
void *scratch(tidalrt_context_t *ctx, size_t bytes);

// Sets the calling thread's OpenMP team size to the context's thread count
// (tidalrt_context_set_threads), if one was set. Every kernel call does this
// first (OpCall::decode).
void applyThreads(const tidalrt_context_t *ctx);

// The element count below which a kernel's loop runs on the calling thread
// instead of opening an OpenMP parallel region (tidalrt_set_parallel_grain;
// by default TIDALRT_DEFAULT_PARALLEL_GRAIN). It decides only whether a
// loop runs in parallel, never how a reduction is split, so results do not
// depend on it.
int64_t parallelGrain();

uint64_t seed(const tidalrt_context_t *ctx);
uint64_t step(const tidalrt_context_t *ctx);
// options.num_ops of the context.
size_t numOps(const tidalrt_context_t *ctx);

// The state of generated device programs (runtime/src/device/
// program_state.h: the attached device, its streams and events, the launch
// records), owned by the context: `destroy` runs first in
// tidalrt_context_free, before the op states, so it can wait for device work
// that still uses them. NULL until tidalrt_context_set_device.
void *programState(const tidalrt_context_t *ctx);
void setProgramState(tidalrt_context_t *ctx, void *state,
                     void (*destroy)(void *));

// The slot of all-reduce bucket `bucket`'s ticket (tidalrt_comm_wait),
// kNoTicket when none is in flight.
constexpr uint64_t kNoTicket = UINT64_MAX - 1;
uint64_t &commTicket(tidalrt_context_t *ctx, int64_t bucket);

// Decodes, runs `body(op)` and converts exceptions to a status.
template <typename Body>
tidalrt_status_t runKernel(tidalrt_context_t *ctx, const int64_t *desc,
                           void *const *buffers, const char *name,
                           Body &&body) {
  OpCall op;
  if (tidalrt_status_t s = op.decode(ctx, desc, buffers, name))
    return s;
  try {
    return body(op);
  } catch (const KernelError &e) {
    return tidalrt_status_make(e.code, "%s (op %lld): %s", name,
                               (long long)op.index, e.message);
  } catch (const std::bad_alloc &) {
    return tidalrt_status_make(TIDALRT_OUT_OF_MEMORY,
                               "%s (op %lld): out of memory", name,
                               (long long)op.index);
  } catch (const std::exception &e) {
    return tidalrt_status_make(TIDALRT_INTERNAL, "%s (op %lld): %s", name,
                               (long long)op.index, e.what());
  }
}

inline tidalrt_status_t ok() { return nullptr; }

} // namespace tidalrt

// Defines a kernel that fails with UNSUPPORTED; for kernels not written yet.
#define TIDALRT_UNIMPLEMENTED_KERNEL(name)                                     \
  extern "C" tidalrt_status_t tidalrt_k_##name(                                \
      tidalrt_context_t *, const int64_t *, void *const *) {                   \
    return tidalrt_status_make(TIDALRT_UNSUPPORTED,                            \
                               #name ": not implemented in the CPU runtime");  \
  }

#endif // TIDALRT_CPU_KERNEL_H
