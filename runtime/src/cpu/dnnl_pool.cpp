// dnnl_pool.cpp - max/average/global-average pooling forward and backward.
//
// float32 pooling over 1 to 3 spatial dimensions runs on oneDNN's pooling_v2
// primitives whenever they compute exactly what the reference evaluator
// does. The rest runs on a direct loop over a window table built once per
// call site (pool_loops.h): other ranks, integer max pooling, windows that lie
// wholly in the padding, and average pooling with count_include_pad whose
// ceil_mode overhang goes past the end padding (PyTorch and ONNX leave the
// overhang out of the divisor; oneDNN counts the whole kernel).
#include "dnnl_util.h"
#include "pool_loops.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>

using namespace tidalrt;
using namespace tidalrt::dnnlutil;

namespace {

// Reads the window from the attributes; `x` is input-shaped, `y`
// output-shaped. `dilationsAttr` < 0: the op has none (all 1).
Window makeWindow(const OpCall &op, const TensorRef &x, const TensorRef &y,
                  int kernelAttr, int stridesAttr, int padsAttr,
                  int dilationsAttr) {
  if (x.rank < 2 || y.rank != x.rank)
    fail(TIDALRT_INVALID_ARGUMENT,
         "expects input and output of equal rank >= 2, got %d and %d", x.rank,
         y.rank);
  if (x.dim(0) != y.dim(0) || x.dim(1) != y.dim(1))
    fail(TIDALRT_INVALID_ARGUMENT,
         "batch and channel dims differ: [%lld, %lld] vs [%lld, %lld]",
         (long long)x.dim(0), (long long)x.dim(1), (long long)y.dim(0),
         (long long)y.dim(1));
  Window w;
  w.k = x.rank - 2;
  const int64_t *kernel, *strides, *pads, *dilations = nullptr;
  int64_t nk = op.getInts(kernelAttr, &kernel);
  int64_t ns = op.getInts(stridesAttr, &strides);
  int64_t np = op.getInts(padsAttr, &pads);
  int64_t nd = dilationsAttr >= 0 ? op.getInts(dilationsAttr, &dilations) : 0;
  if (nk != w.k || (ns != w.k && ns != 0) || (np != 2 * w.k && np != 0) ||
      (nd != w.k && nd != 0))
    fail(TIDALRT_INVALID_ARGUMENT,
         "kernel_shape/strides/pads/dilations have %lld/%lld/%lld/%lld "
         "values for %d spatial dimensions",
         (long long)nk, (long long)ns, (long long)np, (long long)nd, w.k);
  w.planes = x.dim(0) * x.dim(1);
  for (int i = 0; i < w.k; ++i) {
    w.in.push_back(x.dim(2 + i));
    w.out.push_back(y.dim(2 + i));
    w.kernel.push_back(kernel[i]);
    w.strides.push_back(ns ? strides[i] : 1);
    w.dilations.push_back(nd ? dilations[i] : 1);
    w.padBegin.push_back(np ? pads[i] : 0);
    w.padEnd.push_back(np ? pads[w.k + i] : 0);
    if (w.kernel[i] < 1 || w.strides[i] < 1 || w.dilations[i] < 1 ||
        w.padBegin[i] < 0 || w.padEnd[i] < 0)
      fail(TIDALRT_INVALID_ARGUMENT,
           "dimension %d: kernel %lld, stride %lld, dilation %lld, pads "
           "%lld/%lld",
           i, (long long)w.kernel[i], (long long)w.strides[i],
           (long long)w.dilations[i], (long long)w.padBegin[i],
           (long long)w.padEnd[i]);
    w.inSp *= w.in[i];
    w.outSp *= w.out[i];
  }
  return w;
}

// Whether oneDNN's pooling computes what the evaluator does; fills the
// oneDNN parameters when it does.
struct DnnlWindow {
  memory::dims strides, kernel, dilations, padL, padR;
};

bool dnnlWindow(const Window &w, bool average, bool countIncludePad,
                DnnlWindow &dw) {
  if (w.k < 1 || w.k > 3 || w.planes == 0 || w.inSp == 0 || w.outSp == 0)
    return false;
  for (int d = 0; d < w.k; ++d) {
    int64_t in = w.in[d], s = w.strides[d], dil = w.dilations[d];
    int64_t pl = w.padBegin[d], pe = w.padEnd[d], kd = w.kernel[d];
    int64_t ext = (kd - 1) * dil + 1;
    int64_t pr = padRight(in, w.out[d], kd, s, dil, pl, pe);
    if (pr < 0 || pl >= ext || pr >= ext || ext > in + pl + pr ||
        (in + pl + pr - ext) / s + 1 != w.out[d])
      return false;
    // Every window must reach into the input (else the evaluator gives
    // -inf or 0 and oneDNN something else).
    for (int64_t o = 0; o < w.out[d]; ++o) {
      bool any = false;
      for (int64_t j = 0; j < kd && !any; ++j) {
        int64_t i = o * s - pl + j * dil;
        any = i >= 0 && i < in;
      }
      if (!any)
        return false;
    }
    // oneDNN divides by the whole kernel; the evaluator leaves out what
    // lies past the end padding.
    if (average && countIncludePad && (w.out[d] - 1) * s - pl + kd > in + pe)
      return false;
    dw.strides.push_back(s);
    dw.kernel.push_back(kd);
    dw.dilations.push_back(dil - 1);
    dw.padL.push_back(pl);
    dw.padR.push_back(pr);
  }
  return true;
}

struct PoolState {
  bool useDnnl = false;
  Plan plan;
  Window window;
  WindowTable table;
};

memory::dims fullDims(const std::vector<int64_t> &sp, int64_t n, int64_t c) {
  memory::dims d = {n, c};
  d.insert(d.end(), sp.begin(), sp.end());
  return d;
}

// The layout the primitives run on: dense (`block` 0), or channels
// blocked by `block` (8 or 16). Blocked by 8 is what oneDNN's AVX2 pooling
// kernels need: on dense tensors oneDNN 2.6 has AVX-512 kernels only, and
// an AVX2 machine (or ONEDNN_MAX_CPU_ISA=AVX2) gets its reference loop,
// 5-10x slower than a reorder to the blocked layout and back. Calls with
// channel-blocked tensors run on the runtime's block (channelBlock()).
memory::desc poolLayout(const memory::dims &dims, int block) {
  return block ? blockedDesc(dims, block) : plainDesc(dims);
}

dnnl::pooling_v2_forward::primitive_desc
forwardDesc(dnnl::prop_kind prop, dnnl::algorithm alg, const Window &w,
            const DnnlWindow &dw, int64_t n, int64_t c, int block) {
  dnnl::pooling_v2_forward::desc d(
      prop, alg, poolLayout(fullDims(w.in, n, c), block),
      poolLayout(fullDims(w.out, n, c), block), dw.strides, dw.kernel,
      dw.dilations, dw.padL, dw.padR);
  return dnnl::pooling_v2_forward::primitive_desc(d, scratchpadAttr(),
                                                  engine());
}

// oneDNN's reference implementations ("simple_nchw:any", "ref:any").
bool isReference(const dnnl::primitive_desc_base &pd) {
  std::string impl = pd.impl_info_str();
  return impl.rfind("simple", 0) == 0 || impl.rfind("ref", 0) == 0;
}

// Whether the primitives of this pooling run on the blocked layout: when
// the plain one only has a reference implementation and the blocked one
// has a better one.
bool useBlocked(dnnl::algorithm alg, const Window &w, const DnnlWindow &dw,
                int64_t n, int64_t c) {
  if (w.k < 1 || w.k > 3)
    return false;
  auto prop = dnnl::prop_kind::forward_training;
  if (!isReference(forwardDesc(prop, alg, w, dw, n, c, 0)))
    return false;
  try {
    return !isReference(forwardDesc(prop, alg, w, dw, n, c, 8));
  } catch (const dnnl::error &) {
    return false;
  }
}

dnnl::algorithm averageAlgorithm(bool countIncludePad) {
  return countIncludePad ? dnnl::algorithm::pooling_avg_include_padding
                         : dnnl::algorithm::pooling_avg_exclude_padding;
}

// Builds the state of a pooling call. Tensor roles: `xi` input-shaped
// (input or grad_input), `yi` output-shaped (output or grad).
PoolState *poolState(OpCall &op, Pool kind, int xi, int yi) {
  if (auto *s = getState<PoolState>(op.context, op.index))
    return s;
  bool isMax = kind == Pool::MaxForward || kind == Pool::MaxBackward;
  Window w = poolWindow(op, kind, xi, yi);
  bool include = w.countIncludePad;
  // Installed once complete, so that a failed build leaves no state.
  std::unique_ptr<PoolState> owned(new PoolState());
  PoolState *s = owned.get();
  s->window = w;
  DnnlWindow dw;
  s->useDnnl = op[xi].type == TIDALRT_ELEMENT_TYPE_F32 &&
               dnnlWindow(w, !isMax, include, dw);
  if (!s->useDnnl) {
    buildTable(w, !isMax, include, s->table);
    return setOwnedState(op.context, op.index, owned.release());
  }
  int64_t n = op[xi].dim(0), c = op[xi].dim(1);
  memory::dims xDims = fullDims(w.in, n, c), yDims = fullDims(w.out, n, c);
  // Each tensor's own layout (dense or channel-blocked), and the one the
  // primitives run on (reorders in between when they differ).
  auto user = [&](int i) {
    return userDesc(op[i], i == xi || (kind == Pool::MaxBackward && i == 2)
                               ? xDims
                               : yDims);
  };
  buildWithDnnl("pooling", [&] {
    dnnl::algorithm alg =
        isMax ? dnnl::algorithm::pooling_max : averageAlgorithm(include);
    int blocked = op.anyBlocked                  ? channelBlock()
                  : useBlocked(alg, w, dw, n, c) ? 8
                                                 : 0;
    memory::desc xMd = poolLayout(xDims, blocked);
    memory::desc yMd = poolLayout(yDims, blocked);
    Plan &p = s->plan;
    switch (kind) {
    case Pool::MaxForward: {
      auto pd = forwardDesc(dnnl::prop_kind::forward_inference,
                            dnnl::algorithm::pooling_max, w, dw, n, c, blocked);
      int src = p.input(xMd, user(0), 0);
      int dst = p.output(yMd, user(1), 1);
      p.add(dnnl::pooling_v2_forward(pd), pd.scratchpad_desc(),
            {{DNNL_ARG_SRC, src}, {DNNL_ARG_DST, dst}});
      break;
    }
    case Pool::MaxBackward: {
      // Recompute the forward for its workspace (the argmax of each
      // window, the first maximum on ties), then route the gradient.
      auto fwd =
          forwardDesc(dnnl::prop_kind::forward_training,
                      dnnl::algorithm::pooling_max, w, dw, n, c, blocked);
      int ws = p.temp(fwd.workspace_desc());
      int src = p.input(xMd, user(1), 1);
      p.add(dnnl::pooling_v2_forward(fwd), fwd.scratchpad_desc(),
            {{DNNL_ARG_SRC, src},
             {DNNL_ARG_DST, p.temp(fwd.dst_desc())},
             {DNNL_ARG_WORKSPACE, ws}});
      dnnl::pooling_v2_backward::desc d(dnnl::algorithm::pooling_max, xMd, yMd,
                                        dw.strides, dw.kernel, dw.dilations,
                                        dw.padL, dw.padR);
      dnnl::pooling_v2_backward::primitive_desc pd(d, scratchpadAttr(),
                                                   engine(), fwd);
      int diffDst = p.input(yMd, user(0), 0);
      int diffSrc = p.output(xMd, user(2), 2);
      p.add(dnnl::pooling_v2_backward(pd), pd.scratchpad_desc(),
            {{DNNL_ARG_DIFF_DST, diffDst},
             {DNNL_ARG_WORKSPACE, ws},
             {DNNL_ARG_DIFF_SRC, diffSrc}});
      break;
    }
    case Pool::AvgForward: {
      auto pd = forwardDesc(dnnl::prop_kind::forward_inference,
                            averageAlgorithm(include), w, dw, n, c, blocked);
      int src = p.input(xMd, user(0), 0);
      int dst = p.output(yMd, user(1), 1);
      p.add(dnnl::pooling_v2_forward(pd), pd.scratchpad_desc(),
            {{DNNL_ARG_SRC, src}, {DNNL_ARG_DST, dst}});
      break;
    }
    case Pool::AvgBackward: {
      auto fwd = forwardDesc(dnnl::prop_kind::forward_training,
                             averageAlgorithm(include), w, dw, n, c, blocked);
      dnnl::pooling_v2_backward::desc d(averageAlgorithm(include), xMd, yMd,
                                        dw.strides, dw.kernel, dw.dilations,
                                        dw.padL, dw.padR);
      dnnl::pooling_v2_backward::primitive_desc pd(d, scratchpadAttr(),
                                                   engine(), fwd);
      int diffDst = p.input(yMd, user(0), 0);
      int diffSrc = p.output(xMd, user(1), 1);
      p.add(dnnl::pooling_v2_backward(pd), pd.scratchpad_desc(),
            {{DNNL_ARG_DIFF_DST, diffDst}, {DNNL_ARG_DIFF_SRC, diffSrc}});
      break;
    }
    }
    p.flush();
    return 0;
  });
  return setOwnedState(op.context, op.index, owned.release());
}

// Runs a direct loop on dense copies of the call's channel-blocked
// tensors, in the kernel scratch buffer: the others are copied in before,
// `outputs` copied back after. `body` gets every tensor's dense address.
template <typename Body>
void onDense(OpCall &op, std::initializer_list<int> outputs, Body &&body) {
  constexpr int kMax = 4;
  size_t offset[kMax] = {}, need = 0;
  for (int i = 0; i < op.numTensors && i < kMax; ++i)
    if (op[i].blocked()) {
      offset[i] = need;
      need += (op[i].bytes() + 63) / 64 * 64;
    }
  char *base = need ? static_cast<char *>(scratch(op.context, need)) : nullptr;
  if (preparing(op.context))
    return;
  auto isOutput = [&](int i) {
    for (int o : outputs)
      if (o == i)
        return true;
    return false;
  };
  float *ptr[kMax] = {};
  for (int i = 0; i < op.numTensors && i < kMax; ++i) {
    ptr[i] = op[i].f32();
    if (!op[i].blocked())
      continue;
    ptr[i] = reinterpret_cast<float *>(base + offset[i]);
    if (!isOutput(i))
      blockedToDense(op[i], op[i].f32(), ptr[i]);
  }
  body(ptr);
  for (int o : outputs)
    if (op[o].blocked())
      denseToBlocked(op[o], ptr[o], op[o].f32());
}

} // namespace

Window tidalrt::dnnlutil::poolWindow(const OpCall &op, Pool kind, int xi,
                                     int yi) {
  bool isMax = kind == Pool::MaxForward || kind == Pool::MaxBackward;
  // Attributes: max: ceil_mode, dilations, kernel_shape, pads, strides;
  // average: ceil_mode, count_include_pad, kernel_shape, pads, strides.
  bool include = !isMax && op.getBool(1);
  Window w = makeWindow(op, op[xi], op[yi], 2, 4, 3, isMax ? 1 : -1);
  w.countIncludePad = include;
  return w;
}

void tidalrt::dnnlutil::checkPool(const OpCall &op, Pool kind) {
  int tensors = kind == Pool::MaxBackward ? 3 : 2;
  if (op.numTensors != tensors || op.numAttrs != 5)
    fail(TIDALRT_INTERNAL, "expected %d tensors and %d attributes", tensors, 5);
  switch (kind) {
  case Pool::MaxForward: {
    if (op[0].type != op[1].type)
      fail(TIDALRT_INVALID_ARGUMENT, "element types differ: %s vs %s",
           tidalrt_element_type_name((tidalrt_element_type_t)op[0].type),
           tidalrt_element_type_name((tidalrt_element_type_t)op[1].type));
    int type = op[0].type;
    switch (type) {
    case TIDALRT_ELEMENT_TYPE_F32:
    case TIDALRT_ELEMENT_TYPE_F64:
    case TIDALRT_ELEMENT_TYPE_I8:
    case TIDALRT_ELEMENT_TYPE_U8:
    case TIDALRT_ELEMENT_TYPE_I16:
    case TIDALRT_ELEMENT_TYPE_U16:
    case TIDALRT_ELEMENT_TYPE_I32:
    case TIDALRT_ELEMENT_TYPE_I64:
    case TIDALRT_ELEMENT_TYPE_U32:
    case TIDALRT_ELEMENT_TYPE_U64:
      break;
    default:
      fail(TIDALRT_UNSUPPORTED, "element type %s is not supported",
           tidalrt_element_type_name((tidalrt_element_type_t)type));
    }
    break;
  }
  case Pool::MaxBackward:
    requireF32(op, 0, "grad");
    requireF32(op, 1, "input");
    requireF32(op, 2, "grad_input");
    if (op[1].rank != op[2].rank ||
        !std::equal(op[1].dims, op[1].dims + op[1].rank, op[2].dims))
      fail(TIDALRT_INVALID_ARGUMENT, "grad_input is not shaped as the input");
    break;
  case Pool::AvgForward:
    requireF32(op, 0, "input");
    requireF32(op, 1, "output");
    break;
  case Pool::AvgBackward:
    requireF32(op, 0, "grad");
    requireF32(op, 1, "grad_input");
    break;
  }
}

void tidalrt::dnnlutil::checkGlobalAveragePool(const OpCall &op) {
  if (op.numTensors != 2 || op.numAttrs != 0)
    fail(TIDALRT_INTERNAL, "expected %d tensors and %d attributes", 2, 0);
  requireF32(op, 0, "input");
  requireF32(op, 1, "output");
  const TensorRef &x = op[0], &y = op[1];
  if (x.rank < 2 || y.rank != x.rank || y.dim(0) != x.dim(0) ||
      y.dim(1) != x.dim(1) || y.numel() != x.dim(0) * x.dim(1))
    fail(TIDALRT_INVALID_ARGUMENT,
         "output must be [N, C, 1...] for an [N, C, ...] input");
}

extern "C" tidalrt_status_t tidalrt_k_max_pool(tidalrt_context_t *ctx,
                                               const int64_t *desc,
                                               void *const *buffers) {
  return runKernel(ctx, desc, buffers, "max_pool", [&](OpCall &op) {
    checkPool(op, Pool::MaxForward);
    int type = op[0].type;
    PoolState *s = poolState(op, Pool::MaxForward, 0, 1);
    if (s->useDnnl) {
      s->plan.run(ctx, op);
      return ok();
    }
    if (op.anyBlocked) {
      onDense(op, {1}, [&](float *const *t) {
        maxPoolLoop(s->window, s->table, t[0], t[1]);
      });
      return ok();
    }
    if (preparing(ctx))
      return ok();
    void *x = op[0].data, *y = op[1].data;
    switch (type) {
    case TIDALRT_ELEMENT_TYPE_F32:
      maxPoolLoop(s->window, s->table, (const float *)x, (float *)y);
      break;
    case TIDALRT_ELEMENT_TYPE_F64:
      maxPoolLoop(s->window, s->table, (const double *)x, (double *)y);
      break;
    case TIDALRT_ELEMENT_TYPE_I8:
      maxPoolLoop(s->window, s->table, (const int8_t *)x, (int8_t *)y);
      break;
    case TIDALRT_ELEMENT_TYPE_U8:
      maxPoolLoop(s->window, s->table, (const uint8_t *)x, (uint8_t *)y);
      break;
    case TIDALRT_ELEMENT_TYPE_I16:
      maxPoolLoop(s->window, s->table, (const int16_t *)x, (int16_t *)y);
      break;
    case TIDALRT_ELEMENT_TYPE_U16:
      maxPoolLoop(s->window, s->table, (const uint16_t *)x, (uint16_t *)y);
      break;
    case TIDALRT_ELEMENT_TYPE_I32:
      maxPoolLoop(s->window, s->table, (const int32_t *)x, (int32_t *)y);
      break;
    case TIDALRT_ELEMENT_TYPE_I64:
      maxPoolLoop(s->window, s->table, (const int64_t *)x, (int64_t *)y);
      break;
    case TIDALRT_ELEMENT_TYPE_U32:
      maxPoolLoop(s->window, s->table, (const uint32_t *)x, (uint32_t *)y);
      break;
    case TIDALRT_ELEMENT_TYPE_U64:
      maxPoolLoop(s->window, s->table, (const uint64_t *)x, (uint64_t *)y);
      break;
    }
    return ok();
  });
}

extern "C" tidalrt_status_t tidalrt_k_max_pool_backward(tidalrt_context_t *ctx,
                                                        const int64_t *desc,
                                                        void *const *buffers) {
  return runKernel(ctx, desc, buffers, "max_pool_backward", [&](OpCall &op) {
    checkPool(op, Pool::MaxBackward);
    PoolState *s = poolState(op, Pool::MaxBackward, 1, 0);
    if (s->useDnnl) {
      s->plan.run(ctx, op);
      return ok();
    }
    onDense(op, {2}, [&](float *const *t) {
      maxPoolBackwardLoop(s->window, s->table, t[0], t[1], t[2]);
    });
    return ok();
  });
}

extern "C" tidalrt_status_t tidalrt_k_average_pool(tidalrt_context_t *ctx,
                                                   const int64_t *desc,
                                                   void *const *buffers) {
  return runKernel(ctx, desc, buffers, "average_pool", [&](OpCall &op) {
    checkPool(op, Pool::AvgForward);
    PoolState *s = poolState(op, Pool::AvgForward, 0, 1);
    if (s->useDnnl) {
      s->plan.run(ctx, op);
      return ok();
    }
    onDense(op, {1}, [&](float *const *t) {
      averagePoolLoop(s->window, s->table, t[0], t[1]);
    });
    return ok();
  });
}

extern "C" tidalrt_status_t
tidalrt_k_average_pool_backward(tidalrt_context_t *ctx, const int64_t *desc,
                                void *const *buffers) {
  return runKernel(ctx, desc, buffers, "average_pool_backward",
                   [&](OpCall &op) {
                     checkPool(op, Pool::AvgBackward);
                     PoolState *s = poolState(op, Pool::AvgBackward, 1, 0);
                     if (s->useDnnl) {
                       s->plan.run(ctx, op);
                       return ok();
                     }
                     onDense(op, {1}, [&](float *const *t) {
                       averagePoolBackwardLoop(s->window, s->table, t[0], t[1]);
                     });
                     return ok();
                   });
}

extern "C" tidalrt_status_t
tidalrt_k_global_average_pool(tidalrt_context_t *ctx, const int64_t *desc,
                              void *const *buffers) {
  return runKernel(ctx, desc, buffers, "global_average_pool", [&](OpCall &op) {
    checkGlobalAveragePool(op);
    const TensorRef &x = op[0], &y = op[1];
    if (preparing(ctx))
      return ok();
    int64_t planes = x.dim(0) * x.dim(1);
    int64_t sp = planes ? x.numel() / planes : 0;
    const float *xd = x.f32();
    float *yd = y.f32();
    if (x.blocked()) {
      // Each channel's sum in the same order as the dense loop's.
      int64_t n = x.dim(0), c = x.dim(1), b = channelBlock();
#pragma omp parallel for collapse(2) if (x.numel() > parallelGrain())
      for (int64_t i = 0; i < n; ++i)
        for (int64_t cb = 0; cb < c / b; ++cb) {
          const float *xp = xd + (i * (c / b) + cb) * sp * b;
          double sum[16] = {};
          for (int64_t s = 0; s < sp; ++s)
            for (int64_t k = 0; k < b; ++k)
              sum[k] += xp[s * b + k];
          for (int64_t k = 0; k < b; ++k)
            yd[i * c + cb * b + k] = sp ? (float)(sum[k] / (double)sp) : 0.0f;
        }
      return ok();
    }
#pragma omp parallel for if (x.numel() > parallelGrain())
    for (int64_t p = 0; p < planes; ++p) {
      const float *xp = xd + p * sp;
      double sum = 0.0;
      for (int64_t i = 0; i < sp; ++i)
        sum += xp[i];
      yd[p] = sp ? (float)(sum / (double)sp) : 0.0f;
    }
    return ok();
  });
}
