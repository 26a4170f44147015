// dnnl_util.h - what the oneDNN kernels share: the process's engine and
// stream, memory descriptors for the runtime's dense tensors, and Plan, a
// sequence of primitives built once per call site and run on the call's
// tensors and on regions of the kernel scratch buffer. The operand checks
// that the CUDA kernels share are in dnnl_checks.h.
#ifndef TIDALRT_CPU_DNNL_UTIL_H
#define TIDALRT_CPU_DNNL_UTIL_H

#include "dnnl_checks.h"
#include "kernel.h"

#include "oneapi/dnnl/dnnl.hpp"

#include <initializer_list>
#include <vector>

namespace tidalrt {
namespace dnnlutil {

using dnnl::memory;

// The CPU engine (index 0) and an in-order stream on it, created once for
// the process.
const dnnl::engine &engine();
const dnnl::stream &stream();

// The dims of `t` (rank >= 1).
memory::dims dimsOf(const TensorRef &t);
// A dense C-order float32 descriptor of `dims`.
memory::desc plainDesc(const memory::dims &dims);
// The channel block of TIDALRT_LAYOUT_CHANNEL_BLOCKED tensors: 16 or 8
// (tidalrt_channel_block).
int channelBlock();
// A float32 descriptor of `dims` (rank 3 to 5) with channels blocked by
// `block` (8 or 16; 0: channelBlock()).
memory::desc blockedDesc(const memory::dims &dims, int block = 0);
// The descriptor of call tensor `t` with `dims`: blocked or dense as the
// call says.
memory::desc userDesc(const TensorRef &t, const memory::dims &dims);
// Copies the elements of channel-blocked tensor `t` from `src` (blocked)
// to `dst` in dense order, and back.
void blockedToDense(const TensorRef &t, const float *src, float *dst);
void denseToBlocked(const TensorRef &t, const float *src, float *dst);
// A float32 descriptor that lets the primitive choose the layout.
memory::desc anyDesc(const memory::dims &dims);
// The attribute every primitive is created with: a user scratchpad.
dnnl::primitive_attr scratchpadAttr();

// Runs `build` and turns oneDNN's errors into a status: UNSUPPORTED when no
// implementation handles the case, INVALID_ARGUMENT for bad arguments.
template <typename F> auto buildWithDnnl(const char *what, F &&build) {
  try {
    return build();
  } catch (const dnnl::error &e) {
    fail(e.status == dnnl_unimplemented ? TIDALRT_UNSUPPORTED
                                        : TIDALRT_INVALID_ARGUMENT,
         "oneDNN cannot build the %s: %s (status %d)", what, e.what(),
         (int)e.status);
  }
}

// A sequence of oneDNN primitives with the memories they run on. Each
// memory lives in a call tensor, in its own region of the kernel scratch
// buffer, or in the region shared by every primitive's scratchpad. Built
// during preparation (or lazily on the first call); running it allocates
// nothing on the runtime's side.
class Plan {
public:
  struct Arg {
    int arg; // DNNL_ARG_*
    int mem; // a handle from tensor()/temp()/input()/output()
  };

  // A memory on tensor `tensorIndex` of the call, which has layout `md`.
  int tensor(const memory::desc &md, int tensorIndex);
  // A memory in a scratch region of its own.
  int temp(const memory::desc &md);
  // The memory to give a primitive that wants `want` for tensor
  // `tensorIndex` (whose own layout is `user`): the tensor itself, or a
  // scratch copy that a reorder step (added now) fills.
  int input(const memory::desc &want, const memory::desc &user,
            int tensorIndex);
  // As input() for a result: a reorder back to the tensor is added by the
  // next flush().
  int output(const memory::desc &want, const memory::desc &user,
             int tensorIndex);
  // No memory: an argument with it is left out (one the primitive needs
  // only in some configurations, such as a fused ReLU's workspace).
  static constexpr int kAbsent = -1;
  // Appends a primitive with its arguments; `scratchpad` is its
  // scratchpad_desc() (the scratchpad argument is added when non-empty).
  void add(const dnnl::primitive &prim, const memory::desc &scratchpad,
           std::initializer_list<Arg> args);
  // Appends the reorders of the results that output() redirected.
  void flush();

  // The scratch bytes the plan needs (its regions and scratchpad).
  size_t scratchBytes() const;
  // Extra scratch that the kernel itself uses, after the plan's regions;
  // returns its offset from the scratch base.
  size_t extra(size_t bytes);

  // Sets every memory's data handle from `op`'s tensors and the scratch
  // buffer and returns the scratch base (nullptr when the plan needs no
  // scratch). While preparing, only reserves the scratch and returns
  // nullptr.
  char *bind(tidalrt_context_t *ctx, const OpCall &op);
  // Runs the steps on the stream and waits; bind() first.
  void execute() const;
  // bind() then, unless preparing, execute().
  void run(tidalrt_context_t *ctx, const OpCall &op);

  bool empty() const { return steps.empty(); }

private:
  static constexpr int kMaxArgs = 12;
  enum Kind { Tensor, Region, Scratchpad };
  struct Mem {
    dnnl::memory mem;
    Kind kind;
    int64_t where; // tensor index or region offset
  };
  struct Step {
    dnnl::primitive prim;
    int numArgs = 0;
    int args[kMaxArgs];
    int mems[kMaxArgs];
  };
  struct Pending {
    int from, tensorIndex;
    memory::desc user;
  };
  int addMem(const memory::desc &md, Kind kind, int64_t where);
  void addReorder(int from, int to);

  std::vector<Mem> mems;
  std::vector<Step> steps;
  std::vector<Pending> pending;
  size_t regionBytes = 0;
  size_t scratchpadBytes = 0;
};

} // namespace dnnlutil
} // namespace tidalrt

#endif // TIDALRT_CPU_DNNL_UTIL_H
