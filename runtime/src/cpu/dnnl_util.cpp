// dnnl_util.cpp - the oneDNN engine, stream, descriptors and Plan, and the
// shared checks requireF32, requireRank and padRight (dnnl_checks.h).
#include "dnnl_util.h"

#include <cstring>

namespace tidalrt {
namespace dnnlutil {

const dnnl::engine &engine() {
  static const dnnl::engine e(dnnl::engine::kind::cpu, 0);
  return e;
}

const dnnl::stream &stream() {
  static const dnnl::stream s(engine());
  return s;
}

memory::dims dimsOf(const TensorRef &t) {
  return memory::dims(t.dims, t.dims + t.rank);
}

memory::desc plainDesc(const memory::dims &dims) {
  memory::dims strides(dims.size());
  memory::dim s = 1;
  for (size_t i = dims.size(); i-- > 0;) {
    strides[i] = s;
    s *= dims[i] > 0 ? dims[i] : 1;
  }
  return memory::desc(dims, memory::data_type::f32, strides);
}

int channelBlock() {
  // 16 where oneDNN's batch normalization has a vectorized kernel for
  // 16-channel blocks (AVX-512), else 8 (AVX2: its kernels block by 8, and
  // take 16-channel blocks only in the reference loop).
  static const int block = [] {
    try {
      memory::desc md({16, 16, 4, 4}, memory::data_type::f32,
                      memory::format_tag::nChw16c);
      dnnl::batch_normalization_forward::desc d(
          dnnl::prop_kind::forward_training, md, 1e-5f,
          dnnl::normalization_flags::use_scale |
              dnnl::normalization_flags::use_shift);
      dnnl::batch_normalization_forward::primitive_desc pd(d, engine());
      return strstr(pd.impl_info_str(), "ref") ? 8 : 16;
    } catch (const dnnl::error &) {
      return 8;
    }
  }();
  return block;
}

memory::desc blockedDesc(const memory::dims &dims, int block) {
  using tag = memory::format_tag;
  bool b16 = (block ? block : channelBlock()) == 16;
  tag t;
  switch (dims.size()) {
  case 3:
    t = b16 ? tag::nCw16c : tag::nCw8c;
    break;
  case 4:
    t = b16 ? tag::nChw16c : tag::nChw8c;
    break;
  case 5:
    t = b16 ? tag::nCdhw16c : tag::nCdhw8c;
    break;
  default:
    fail(TIDALRT_INTERNAL, "a channel-blocked tensor of rank %d",
         (int)dims.size());
  }
  return memory::desc(dims, memory::data_type::f32, t);
}

memory::desc userDesc(const TensorRef &t, const memory::dims &dims) {
  return t.blocked() ? blockedDesc(dims) : plainDesc(dims);
}

namespace {
// [N][C / B][S][B] <-> [N][C][S] for a blocked [N, C, spatial...] tensor.
template <bool ToDense>
void convertBlocked(const TensorRef &t, const float *src, float *dst) {
  int64_t b = channelBlock(), n = t.dim(0), c = t.dim(1);
  int64_t s = n * c ? t.numel() / (n * c) : 0;
#pragma omp parallel for collapse(2) if (t.numel() > parallelGrain())
  for (int64_t i = 0; i < n; ++i)
    for (int64_t ch = 0; ch < c; ++ch)
      for (int64_t p = 0; p < s; ++p) {
        int64_t blocked = ((i * (c / b) + ch / b) * s + p) * b + ch % b;
        int64_t dense = (i * c + ch) * s + p;
        if (ToDense)
          dst[dense] = src[blocked];
        else
          dst[blocked] = src[dense];
      }
}
} // namespace

void blockedToDense(const TensorRef &t, const float *src, float *dst) {
  convertBlocked<true>(t, src, dst);
}

void denseToBlocked(const TensorRef &t, const float *src, float *dst) {
  convertBlocked<false>(t, src, dst);
}

memory::desc anyDesc(const memory::dims &dims) {
  return memory::desc(dims, memory::data_type::f32, memory::format_tag::any);
}

dnnl::primitive_attr scratchpadAttr() {
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  return attr;
}

void requireF32(const OpCall &op, int i, const char *what) {
  if (op[i].type != TIDALRT_ELEMENT_TYPE_F32)
    fail(TIDALRT_UNSUPPORTED,
         "%s has element type %s; only float32 is "
         "supported",
         what, tidalrt_element_type_name((tidalrt_element_type_t)op[i].type));
}

void requireRank(const OpCall &op, int i, int rank, const char *what) {
  if (op[i].rank != rank)
    fail(TIDALRT_INVALID_ARGUMENT, "%s has rank %d, expected %d", what,
         op[i].rank, rank);
}

static size_t alignUp(size_t n) {
  return (n + TIDALRT_ARRAY_ALIGNMENT - 1) / TIDALRT_ARRAY_ALIGNMENT *
         TIDALRT_ARRAY_ALIGNMENT;
}

int Plan::addMem(const memory::desc &md, Kind kind, int64_t where) {
  mems.push_back({dnnl::memory(md, engine(), DNNL_MEMORY_NONE), kind, where});
  return (int)mems.size() - 1;
}

int Plan::tensor(const memory::desc &md, int tensorIndex) {
  return addMem(md, Tensor, tensorIndex);
}

int Plan::temp(const memory::desc &md) {
  size_t offset = regionBytes;
  regionBytes += alignUp(md.get_size());
  return addMem(md, Region, (int64_t)offset);
}

size_t Plan::extra(size_t bytes) {
  size_t offset = regionBytes;
  regionBytes += alignUp(bytes);
  return offset;
}

void Plan::addReorder(int from, int to) {
  memory::desc src = mems[from].mem.get_desc();
  memory::desc dst = mems[to].mem.get_desc();
  dnnl::reorder::primitive_desc pd(engine(), src, engine(), dst,
                                   scratchpadAttr());
  add(dnnl::reorder(pd), pd.scratchpad_desc(),
      {{DNNL_ARG_FROM, from}, {DNNL_ARG_TO, to}});
}

int Plan::input(const memory::desc &want, const memory::desc &user,
                int tensorIndex) {
  int t = tensor(user, tensorIndex);
  if (want == user)
    return t;
  int copy = temp(want);
  addReorder(t, copy);
  return copy;
}

int Plan::output(const memory::desc &want, const memory::desc &user,
                 int tensorIndex) {
  if (want == user)
    return tensor(user, tensorIndex);
  int copy = temp(want);
  pending.push_back({copy, tensorIndex, user});
  return copy;
}

void Plan::flush() {
  std::vector<Pending> todo;
  todo.swap(pending);
  for (const Pending &p : todo)
    addReorder(p.from, tensor(p.user, p.tensorIndex));
}

void Plan::add(const dnnl::primitive &prim, const memory::desc &scratchpad,
               std::initializer_list<Arg> args) {
  Step s;
  s.prim = prim;
  if (args.size() + 1 > (size_t)kMaxArgs)
    fail(TIDALRT_INTERNAL, "a oneDNN step with %zu arguments", args.size());
  for (const Arg &a : args) {
    if (a.mem == kAbsent)
      continue;
    s.args[s.numArgs] = a.arg;
    s.mems[s.numArgs++] = a.mem;
  }
  size_t padBytes = scratchpad.get_size();
  if (padBytes) {
    if (padBytes > scratchpadBytes)
      scratchpadBytes = padBytes;
    s.args[s.numArgs] = DNNL_ARG_SCRATCHPAD;
    s.mems[s.numArgs++] = addMem(scratchpad, Scratchpad, 0);
  }
  steps.push_back(std::move(s));
}

size_t Plan::scratchBytes() const {
  return regionBytes + alignUp(scratchpadBytes);
}

char *Plan::bind(tidalrt_context_t *ctx, const OpCall &op) {
  size_t bytes = scratchBytes();
  char *base = bytes ? static_cast<char *>(scratch(ctx, bytes)) : nullptr;
  if (preparing(ctx))
    return nullptr;
  for (const Mem &m : mems) {
    void *p = nullptr;
    switch (m.kind) {
    case Tensor:
      p = op[(int)m.where].data;
      break;
    case Region:
      p = base + m.where;
      break;
    case Scratchpad:
      p = base + regionBytes;
      break;
    }
    m.mem.set_data_handle(p);
  }
  return base;
}

void Plan::execute() const {
  const dnnl::stream &s = stream();
  for (const Step &step : steps) {
    dnnl_exec_arg_t args[kMaxArgs];
    for (int i = 0; i < step.numArgs; ++i)
      args[i] = {step.args[i], mems[step.mems[i]].mem.get()};
    dnnl_status_t st =
        dnnl_primitive_execute(step.prim.get(), s.get(), step.numArgs, args);
    if (st != dnnl_success)
      fail(TIDALRT_INTERNAL, "oneDNN execution failed (status %d)", (int)st);
  }
  dnnl_stream_wait(s.get());
}

void Plan::run(tidalrt_context_t *ctx, const OpCall &op) {
  bind(ctx, op);
  if (!preparing(ctx))
    execute();
}

int64_t padRight(int64_t in, int64_t out, int64_t kernel, int64_t stride,
                 int64_t dilation, int64_t padBegin, int64_t padEnd) {
  int64_t extent = (kernel - 1) * dilation + 1;
  int64_t span = in + padBegin + padEnd - extent;
  if (span >= 0 && span / stride + 1 == out)
    return padEnd;
  return (out - 1) * stride + extent - in - padBegin;
}

} // namespace dnnlutil
} // namespace tidalrt

extern "C" int tidalrt_channel_block(void) {
  try {
    return tidalrt::dnnlutil::channelBlock();
  } catch (...) {
    return 8;
  }
}
