// dnnl_conv.cpp - convolution forward and backward (oneDNN).
//
// 1-D, 2-D and 3-D convolutions (input rank 3 to 5) in float32, with
// strides, asymmetric padding, dilations and groups. oneDNN chooses the
// layouts it computes in (format_tag::any); the plan reorders the call's
// tensors (dense, or channel-blocked activations: no reorder when that is
// what oneDNN chose) into and out of them through the kernel scratch
// buffer.
#include "dnnl_util.h"

#include <algorithm>
#include <memory>

using namespace tidalrt;
using namespace tidalrt::dnnlutil;

namespace {

// Attribute positions (alphabetical ODS names), the same for the three ops.
enum { kDilations = 0, kGroup = 1, kPads = 2, kStrides = 3 };

// Let oneDNN pick blocked layouts (reordering around the primitive) rather
// than forcing the dense ones, which send most shapes to its gemm-based
// implementation.
constexpr bool kChooseLayouts = true;

// The geometry of one convolution (checkConv and its twins), with the
// tensor and attribute checks that the CUDA kernels share. `x` is the
// input-shaped tensor, `y` the output-shaped one, `w` the weight.
ConvGeometry convGeometry(const OpCall &op, const TensorRef &x,
                          const TensorRef &w, const TensorRef &y) {
  int rank = x.rank;
  if (rank < 3)
    fail(TIDALRT_INVALID_ARGUMENT, "input has rank %d, expected >= 3", rank);
  if (rank > 5)
    fail(TIDALRT_UNSUPPORTED, "%d spatial dimensions; at most 3 are supported",
         rank - 2);
  if (w.rank != rank || y.rank != rank)
    fail(TIDALRT_INVALID_ARGUMENT,
         "ranks differ: input %d, weight %d, output %d", rank, w.rank, y.rank);
  int k = rank - 2;
  const int64_t *strides, *pads, *dilations;
  int64_t ns = op.getInts(kStrides, &strides);
  int64_t np = op.getInts(kPads, &pads);
  int64_t nd = op.getInts(kDilations, &dilations);
  if ((ns != k && ns != 0) || (np != 2 * k && np != 0) || (nd != k && nd != 0))
    fail(TIDALRT_INVALID_ARGUMENT,
         "strides/pads/dilations have %lld/%lld/%lld values for %d spatial "
         "dimensions",
         (long long)ns, (long long)np, (long long)nd, k);
  int64_t group = op.getInt(kGroup);
  int64_t n = x.dim(0), c = x.dim(1), m = w.dim(0);
  if (group < 1 || c % group || m % group || w.dim(1) != c / group ||
      y.dim(0) != n || y.dim(1) != m)
    fail(TIDALRT_INVALID_ARGUMENT,
         "channels do not match: input [%lld, %lld], weight [%lld, %lld], "
         "group %lld, output [%lld, %lld]",
         (long long)n, (long long)c, (long long)m, (long long)w.dim(1),
         (long long)group, (long long)y.dim(0), (long long)y.dim(1));
  ConvGeometry g;
  g.k = k;
  g.n = n;
  g.c = c;
  g.m = m;
  g.group = group;
  for (int i = 0; i < k; ++i) {
    int64_t s = ns ? strides[i] : 1, d = nd ? dilations[i] : 1;
    int64_t pb = np ? pads[i] : 0, pe = np ? pads[k + i] : 0;
    if (s < 1 || d < 1 || pb < 0 || pe < 0)
      fail(TIDALRT_INVALID_ARGUMENT,
           "dimension %d: stride %lld, dilation %lld, pads %lld/%lld", i,
           (long long)s, (long long)d, (long long)pb, (long long)pe);
    g.in.push_back(x.dim(2 + i));
    g.out.push_back(y.dim(2 + i));
    g.kernel.push_back(w.dim(2 + i));
    g.strides.push_back(s);
    g.dilations.push_back(d);
    g.padL.push_back(pb);
    g.padR.push_back(
        padRight(x.dim(2 + i), y.dim(2 + i), w.dim(2 + i), s, d, pb, pe));
  }
  g.empty = x.numel() == 0 || w.numel() == 0 || y.numel() == 0;
  return g;
}

// A convolution in oneDNN's terms.
struct DnnlConv {
  memory::dims src, weights, dst, strides, dilations, padL, padR;
};

DnnlConv dnnlConv(const ConvGeometry &g) {
  DnnlConv d;
  d.src = {g.n, g.c};
  d.src.insert(d.src.end(), g.in.begin(), g.in.end());
  d.dst = {g.n, g.m};
  d.dst.insert(d.dst.end(), g.out.begin(), g.out.end());
  // Grouped weights: [group, M / group, C / group, kernel...].
  if (g.group == 1)
    d.weights = {g.m, g.c};
  else
    d.weights = {g.group, g.m / g.group, g.c / g.group};
  d.weights.insert(d.weights.end(), g.kernel.begin(), g.kernel.end());
  d.strides = g.strides;
  for (int64_t v : g.dilations)
    d.dilations.push_back(v - 1);
  d.padL = g.padL;
  d.padR = g.padR;
  return d;
}

memory::desc layout(const memory::dims &dims) {
  return kChooseLayouts ? anyDesc(dims) : plainDesc(dims);
}

dnnl::convolution_forward::primitive_desc forwardDesc(const DnnlConv &g,
                                                      bool bias) {
  memory::desc biasMd = bias ? plainDesc({g.dst[1]}) : memory::desc();
  dnnl::convolution_forward::desc d(
      dnnl::prop_kind::forward_training, dnnl::algorithm::convolution_direct,
      layout(g.src), layout(g.weights), biasMd, layout(g.dst), g.strides,
      g.dilations, g.padL, g.padR);
  return dnnl::convolution_forward::primitive_desc(d, scratchpadAttr(),
                                                   engine());
}

struct ConvState {
  bool empty = false;
  Plan plan;
};

ConvState *convState(OpCall &op, bool bias) {
  if (auto *s = getState<ConvState>(op.context, op.index))
    return s;
  ConvGeometry geometry = checkConv(op, Conv::Forward);
  // Installed once complete, so that a failed build leaves no state.
  std::unique_ptr<ConvState> owned(new ConvState());
  ConvState *s = owned.get();
  s->empty = geometry.empty;
  if (geometry.empty)
    return setOwnedState(op.context, op.index, owned.release());
  DnnlConv g = dnnlConv(geometry);
  buildWithDnnl("convolution", [&] {
    auto pd = forwardDesc(g, bias);
    Plan &p = s->plan;
    int src = p.input(pd.src_desc(), userDesc(op[0], g.src), 0);
    int wei = p.input(pd.weights_desc(), plainDesc(g.weights), 1);
    int dst = p.output(pd.dst_desc(), userDesc(op[3], g.dst), 3);
    if (bias)
      p.add(dnnl::convolution_forward(pd), pd.scratchpad_desc(),
            {{DNNL_ARG_SRC, src},
             {DNNL_ARG_WEIGHTS, wei},
             {DNNL_ARG_BIAS, p.tensor(pd.bias_desc(), 2)},
             {DNNL_ARG_DST, dst}});
    else
      p.add(
          dnnl::convolution_forward(pd), pd.scratchpad_desc(),
          {{DNNL_ARG_SRC, src}, {DNNL_ARG_WEIGHTS, wei}, {DNNL_ARG_DST, dst}});
    p.flush();
    return 0;
  });
  return setOwnedState(op.context, op.index, owned.release());
}

ConvState *backwardDataState(OpCall &op) {
  if (auto *s = getState<ConvState>(op.context, op.index))
    return s;
  ConvGeometry geometry = checkConv(op, Conv::BackwardData);
  // Installed once complete, so that a failed build leaves no state.
  std::unique_ptr<ConvState> owned(new ConvState());
  ConvState *s = owned.get();
  s->empty = geometry.empty;
  if (geometry.empty)
    return setOwnedState(op.context, op.index, owned.release());
  DnnlConv g = dnnlConv(geometry);
  buildWithDnnl("convolution backward (data)", [&] {
    auto hint = forwardDesc(g, false);
    dnnl::convolution_backward_data::desc d(
        dnnl::algorithm::convolution_direct, layout(g.src), layout(g.weights),
        layout(g.dst), g.strides, g.dilations, g.padL, g.padR);
    dnnl::convolution_backward_data::primitive_desc pd(d, scratchpadAttr(),
                                                       engine(), hint);
    Plan &p = s->plan;
    int diffDst = p.input(pd.diff_dst_desc(), userDesc(op[0], g.dst), 0);
    int wei = p.input(pd.weights_desc(), plainDesc(g.weights), 1);
    int diffSrc = p.output(pd.diff_src_desc(), userDesc(op[2], g.src), 2);
    p.add(dnnl::convolution_backward_data(pd), pd.scratchpad_desc(),
          {{DNNL_ARG_DIFF_DST, diffDst},
           {DNNL_ARG_WEIGHTS, wei},
           {DNNL_ARG_DIFF_SRC, diffSrc}});
    p.flush();
    return 0;
  });
  return setOwnedState(op.context, op.index, owned.release());
}

ConvState *backwardWeightsState(OpCall &op) {
  if (auto *s = getState<ConvState>(op.context, op.index))
    return s;
  ConvGeometry geometry = checkConv(op, Conv::BackwardWeights);
  // Installed once complete, so that a failed build leaves no state.
  std::unique_ptr<ConvState> owned(new ConvState());
  ConvState *s = owned.get();
  s->empty = geometry.empty;
  if (geometry.empty)
    return setOwnedState(op.context, op.index, owned.release());
  DnnlConv g = dnnlConv(geometry);
  buildWithDnnl("convolution backward (weights)", [&] {
    auto hint = forwardDesc(g, false);
    dnnl::convolution_backward_weights::desc d(
        dnnl::algorithm::convolution_direct, layout(g.src), layout(g.weights),
        layout(g.dst), g.strides, g.dilations, g.padL, g.padR);
    dnnl::convolution_backward_weights::primitive_desc pd(d, scratchpadAttr(),
                                                          engine(), hint);
    Plan &p = s->plan;
    int diffDst = p.input(pd.diff_dst_desc(), userDesc(op[0], g.dst), 0);
    int src = p.input(pd.src_desc(), userDesc(op[1], g.src), 1);
    int diffWei = p.output(pd.diff_weights_desc(), plainDesc(g.weights), 2);
    p.add(dnnl::convolution_backward_weights(pd), pd.scratchpad_desc(),
          {{DNNL_ARG_DIFF_DST, diffDst},
           {DNNL_ARG_SRC, src},
           {DNNL_ARG_DIFF_WEIGHTS, diffWei}});
    p.flush();
    return 0;
  });
  return setOwnedState(op.context, op.index, owned.release());
}

void fillZero(const TensorRef &t) {
  if (t.numel())
    memset(t.data, 0, t.bytes());
}

} // namespace

void tidalrt::dnnlutil::checkConvCall(const OpCall &op, Conv kind) {
  if (kind == Conv::Forward) {
    if (op.numTensors != 4 || op.numAttrs != 4)
      fail(TIDALRT_INTERNAL, "expected 4 tensors and 4 attributes");
  } else if (op.numTensors != 3 || op.numAttrs != 4) {
    fail(TIDALRT_INTERNAL, "expected 3 tensors and 4 attributes");
  }
}

ConvGeometry tidalrt::dnnlutil::checkConv(const OpCall &op, Conv kind) {
  switch (kind) {
  case Conv::Forward: {
    bool bias = op[2].present();
    requireF32(op, 0, "input");
    requireF32(op, 1, "weight");
    if (bias)
      requireF32(op, 2, "bias");
    requireF32(op, 3, "output");
    ConvGeometry g = convGeometry(op, op[0], op[1], op[3]);
    if (bias && (op[2].rank != 1 || op[2].dim(0) != op[1].dim(0)))
      fail(TIDALRT_INVALID_ARGUMENT, "bias must be [%lld]",
           (long long)op[1].dim(0));
    return g;
  }
  case Conv::BackwardData:
    requireF32(op, 0, "grad");
    requireF32(op, 1, "weight");
    requireF32(op, 2, "grad_input");
    return convGeometry(op, op[2], op[1], op[0]);
  case Conv::BackwardWeights:
    break;
  }
  requireF32(op, 0, "grad");
  requireF32(op, 1, "input");
  requireF32(op, 2, "grad_weight");
  return convGeometry(op, op[1], op[2], op[0]);
}

extern "C" tidalrt_status_t tidalrt_k_conv(tidalrt_context_t *ctx,
                                           const int64_t *desc,
                                           void *const *buffers) {
  return runKernel(ctx, desc, buffers, "conv", [&](OpCall &op) {
    checkConvCall(op, Conv::Forward);
    bool bias = op[2].present();
    ConvState *s = convState(op, bias);
    if (preparing(ctx)) {
      s->plan.bind(ctx, op);
      return ok();
    }
    if (s->empty) {
      // No multiply-adds: the output is the bias (or zero).
      const TensorRef &y = op[3];
      int64_t m = y.dim(1), planes = y.dim(0) * m;
      int64_t sp = planes ? y.numel() / planes : 0;
      for (int64_t p = 0; p < planes; ++p)
        std::fill(y.f32() + p * sp, y.f32() + (p + 1) * sp,
                  bias ? op[2].f32()[p % m] : 0.0f);
      return ok();
    }
    s->plan.run(ctx, op);
    return ok();
  });
}

extern "C" tidalrt_status_t tidalrt_k_conv_backward_data(tidalrt_context_t *ctx,
                                                         const int64_t *desc,
                                                         void *const *buffers) {
  return runKernel(ctx, desc, buffers, "conv_backward_data", [&](OpCall &op) {
    checkConvCall(op, Conv::BackwardData);
    ConvState *s = backwardDataState(op);
    if (s->empty) {
      if (!preparing(ctx))
        fillZero(op[2]);
      return ok();
    }
    s->plan.run(ctx, op);
    return ok();
  });
}

extern "C" tidalrt_status_t
tidalrt_k_conv_backward_weights(tidalrt_context_t *ctx, const int64_t *desc,
                                void *const *buffers) {
  return runKernel(ctx, desc, buffers, "conv_backward_weights",
                   [&](OpCall &op) {
                     checkConvCall(op, Conv::BackwardWeights);
                     ConvState *s = backwardWeightsState(op);
                     if (s->empty) {
                       if (!preparing(ctx))
                         fillZero(op[2]);
                       return ok();
                     }
                     s->plan.run(ctx, op);
                     return ok();
                   });
}
