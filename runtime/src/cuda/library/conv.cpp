// conv.cpp - convolution forward and backward on cuDNN (the CUDA twins of
// runtime/src/cpu/dnnl_conv.cpp).
//
// 1-D, 2-D and 3-D convolutions (input rank 3 to 5) in float32, with
// strides, pads, dilations and groups; a 1-D convolution runs as a 2-D one
// of height 1. cuDNN pads symmetrically only: when the end padding that
// gives the output shape differs from the begin padding, the input-shaped
// tensor goes through an explicitly padded (or cropped) copy in the
// workspace and cuDNN runs unpadded. Descriptors and algorithms are chosen
// once, while preparing: the first deterministic algorithm of cuDNN's
// ranked heuristics that needs at most kWorkspaceLimit of workspace, with
// FMA maths only (no TF32), and no FFT or Winograd transform where another
// algorithm qualifies.
#include "../../cpu/dnnl_checks.h"
#include "common.h"
#include "kernels.h"

#include <memory>
#include <vector>

using namespace tidalrt;
using namespace tidalrt::cuda;
using namespace tidalrt::cuda::lib;
using tidalrt::dnnlutil::ConvGeometry;
using Pass = tidalrt::dnnlutil::Conv;

namespace {

// [lead..., spatial...] with a unit height in front of a 1-D spatial shape
// (cuDNN takes 4-D and 5-D tensors).
std::vector<int64_t> cudnnShape(std::vector<int64_t> lead,
                                const std::vector<int64_t> &spatial,
                                int64_t unit) {
  if (spatial.size() == 1)
    lead.push_back(unit);
  lead.insert(lead.end(), spatial.begin(), spatial.end());
  return lead;
}

struct ConvState {
  bool empty = false;
  // The input-shaped tensor goes through `copy` in the workspace: a padded
  // copy of the input (forward, backward weights) or the crop of a padded
  // gradient (backward data).
  bool padded = false;
  WindowCopy copy;
  size_t paddedBytes = 0;
  TensorDesc x, y; // x: the padded shape when `padded`
  FilterDesc w;
  ConvDesc conv;
  int algo = 0;
  size_t algoBytes = 0;

  size_t workspaceBytes() const {
    return (padded ? alignUp(paddedBytes) : 0) + algoBytes;
  }
};

bool tensorOpMath(cudnnMathType_t t) {
  return t == CUDNN_TENSOR_OP_MATH ||
         t == CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION;
}

// FFT and Winograd transforms round more than a direct or GEMM-based
// float32 convolution: about 1e-4 relative, not PyTorch's float32 spread.
bool inexact(cudnnConvolutionFwdAlgo_t a) {
  return a == CUDNN_CONVOLUTION_FWD_ALGO_FFT ||
         a == CUDNN_CONVOLUTION_FWD_ALGO_FFT_TILING ||
         a == CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD ||
         a == CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD_NONFUSED;
}
bool inexact(cudnnConvolutionBwdDataAlgo_t a) {
  return a == CUDNN_CONVOLUTION_BWD_DATA_ALGO_FFT ||
         a == CUDNN_CONVOLUTION_BWD_DATA_ALGO_FFT_TILING ||
         a == CUDNN_CONVOLUTION_BWD_DATA_ALGO_WINOGRAD ||
         a == CUDNN_CONVOLUTION_BWD_DATA_ALGO_WINOGRAD_NONFUSED;
}
bool inexact(cudnnConvolutionBwdFilterAlgo_t a) {
  return a == CUDNN_CONVOLUTION_BWD_FILTER_ALGO_FFT ||
         a == CUDNN_CONVOLUTION_BWD_FILTER_ALGO_FFT_TILING ||
         a == CUDNN_CONVOLUTION_BWD_FILTER_ALGO_WINOGRAD_NONFUSED;
}

// Takes the first of cuDNN's ranked algorithms that is deterministic, runs
// with FMA maths, needs at most kWorkspaceLimit and is no FFT or Winograd
// transform (one of those only when nothing else qualifies);
// `size(algo, &bytes)` asks cuDNN for its workspace with our descriptors.
template <typename Perf, typename Size>
void chooseAlgorithm(ConvState &s, const std::vector<Perf> &perf, int count,
                     Size &&size, const char *what) {
  for (bool allowInexact : {false, true}) {
    for (int i = 0; i < count; ++i) {
      const Perf &p = perf[i];
      if (p.status != CUDNN_STATUS_SUCCESS ||
          p.determinism != CUDNN_DETERMINISTIC || p.memory > kWorkspaceLimit ||
          tensorOpMath(p.mathType) || (inexact(p.algo) && !allowInexact))
        continue;
      size_t bytes = 0;
      if (size(p.algo, &bytes) != CUDNN_STATUS_SUCCESS ||
          bytes > kWorkspaceLimit)
        continue;
      s.algo = (int)p.algo;
      s.algoBytes = bytes;
      return;
    }
  }
  fail(TIDALRT_UNSUPPORTED,
       "cuDNN has no deterministic %s algorithm for this shape within %zu MiB "
       "of workspace",
       what, kWorkspaceLimit >> 20);
}

// Builds the state of a call, after the CPU kernel's checks
// (dnnl_checks.h).
ConvState *convState(OpCall &op, Pass pass) {
  if (auto *s = getState<ConvState>(op.context, op.index))
    return s;
  ConvGeometry g = dnnlutil::checkConv(op, pass);
  // Installed once complete, so that a failed build leaves no state.
  std::unique_ptr<ConvState> owned(new ConvState());
  ConvState *s = owned.get();
  s->empty = g.empty;
  if (g.empty)
    return setOwnedState(op.context, op.index, owned.release());

  std::vector<int64_t> padded(g.k), pads(g.k);
  for (int i = 0; i < g.k; ++i) {
    s->padded = s->padded || g.padL[i] != g.padR[i];
    padded[i] = g.in[i] + g.padL[i] + g.padR[i];
  }
  std::vector<int64_t> xDims = cudnnShape({g.n, g.c}, g.in, 1);
  if (s->padded) {
    std::vector<int64_t> pDims = cudnnShape({g.n, g.c}, padded, 1);
    WindowCopy &cp = s->copy;
    cp.rank = (int)xDims.size();
    int first = cp.rank - g.k; // the first spatial dimension
    // Forward and backward weights pad the input into the workspace;
    // backward data crops the padded gradient out of it.
    bool crop = pass == Pass::BackwardData;
    for (int d = 0; d < cp.rank; ++d) {
      cp.src[d] = crop ? pDims[d] : xDims[d];
      cp.dst[d] = crop ? xDims[d] : pDims[d];
      cp.offset[d] = d < first ? 0 : (crop ? 1 : -1) * g.padL[d - first];
    }
    s->paddedBytes = sizeof(float);
    for (int64_t v : pDims)
      s->paddedBytes *= (size_t)v;
    xDims = pDims;
  } else {
    pads = g.padL;
  }
  s->x.set(xDims);
  s->y.set(cudnnShape({g.n, g.m}, g.out, 1));
  s->w.set(cudnnShape({g.m, g.c / g.group}, g.kernel, 1));
  s->conv.set(cudnnShape({}, pads, 0), cudnnShape({}, g.strides, 1),
              cudnnShape({}, g.dilations, 1), g.group);

  cudnnHandle_t h = cudnn(op.context);
  int maxCount = 0, count = 0;
  switch (pass) {
  case Pass::Forward: {
    // cuDNN's output shape must be ours (a check of the geometry above).
    std::vector<int> outDims(xDims.size());
    check(cudnnGetConvolutionNdForwardOutputDim(s->conv.get(), s->x.get(),
                                                s->w.get(), (int)xDims.size(),
                                                outDims.data()),
          "cudnnGetConvolutionNdForwardOutputDim");
    std::vector<int64_t> yDims = cudnnShape({g.n, g.m}, g.out, 1);
    for (size_t i = 0; i < yDims.size(); ++i)
      if (outDims[i] != yDims[i])
        fail(TIDALRT_INTERNAL,
             "cuDNN's output dimension %zu is %d, the call's %lld", i,
             outDims[i], (long long)yDims[i]);
    check(cudnnGetConvolutionForwardAlgorithmMaxCount(h, &maxCount),
          "cudnnGetConvolutionForwardAlgorithmMaxCount");
    std::vector<cudnnConvolutionFwdAlgoPerf_t> perf((size_t)maxCount);
    check(cudnnGetConvolutionForwardAlgorithm_v7(h, s->x.get(), s->w.get(),
                                                 s->conv.get(), s->y.get(),
                                                 maxCount, &count, perf.data()),
          "cudnnGetConvolutionForwardAlgorithm_v7");
    chooseAlgorithm(
        *s, perf, count,
        [&](cudnnConvolutionFwdAlgo_t a, size_t *bytes) {
          return cudnnGetConvolutionForwardWorkspaceSize(
              h, s->x.get(), s->w.get(), s->conv.get(), s->y.get(), a, bytes);
        },
        "forward");
    break;
  }
  case Pass::BackwardData: {
    check(cudnnGetConvolutionBackwardDataAlgorithmMaxCount(h, &maxCount),
          "cudnnGetConvolutionBackwardDataAlgorithmMaxCount");
    std::vector<cudnnConvolutionBwdDataAlgoPerf_t> perf((size_t)maxCount);
    check(cudnnGetConvolutionBackwardDataAlgorithm_v7(
              h, s->w.get(), s->y.get(), s->conv.get(), s->x.get(), maxCount,
              &count, perf.data()),
          "cudnnGetConvolutionBackwardDataAlgorithm_v7");
    chooseAlgorithm(
        *s, perf, count,
        [&](cudnnConvolutionBwdDataAlgo_t a, size_t *bytes) {
          return cudnnGetConvolutionBackwardDataWorkspaceSize(
              h, s->w.get(), s->y.get(), s->conv.get(), s->x.get(), a, bytes);
        },
        "backward-data");
    break;
  }
  case Pass::BackwardWeights: {
    check(cudnnGetConvolutionBackwardFilterAlgorithmMaxCount(h, &maxCount),
          "cudnnGetConvolutionBackwardFilterAlgorithmMaxCount");
    std::vector<cudnnConvolutionBwdFilterAlgoPerf_t> perf((size_t)maxCount);
    check(cudnnGetConvolutionBackwardFilterAlgorithm_v7(
              h, s->x.get(), s->y.get(), s->conv.get(), s->w.get(), maxCount,
              &count, perf.data()),
          "cudnnGetConvolutionBackwardFilterAlgorithm_v7");
    chooseAlgorithm(
        *s, perf, count,
        [&](cudnnConvolutionBwdFilterAlgo_t a, size_t *bytes) {
          return cudnnGetConvolutionBackwardFilterWorkspaceSize(
              h, s->x.get(), s->y.get(), s->conv.get(), s->w.get(), a, bytes);
        },
        "backward-filter");
    break;
  }
  }
  return setOwnedState(op.context, op.index, owned.release());
}

// The workspace of a call (reserved while preparing), split into the padded
// tensor and the algorithm's part.
struct Workspace {
  float *padded = nullptr;
  void *algo = nullptr;
};

Workspace carve(tidalrt_context_t *ctx, const ConvState &s) {
  Workspace w;
  size_t bytes = s.workspaceBytes();
  char *base = bytes ? static_cast<char *>(workspace(ctx, bytes)) : nullptr;
  if (!base)
    return w;
  if (s.padded)
    w.padded = reinterpret_cast<float *>(base);
  if (s.algoBytes)
    w.algo = base + (s.padded ? alignUp(s.paddedBytes) : 0);
  return w;
}

void zeroFill(tidalrt_context_t *ctx, const TensorRef &t, const char *what) {
  if (t.numel())
    check(cudaMemsetAsync(t.data, 0, t.bytes(), currentStream(ctx)), what);
}

} // namespace

extern "C" tidalrt_status_t tidalrt_cuda_k_conv(tidalrt_context_t *ctx,
                                                const int64_t *desc,
                                                void *const *buffers) {
  return runKernel(ctx, desc, buffers, "conv", [&](OpCall &op) {
    dnnlutil::checkConvCall(op, Pass::Forward);
    bool bias = op[2].present();
    ConvState *s = convState(op, Pass::Forward);
    const TensorRef &y = op[3];
    int64_t m = y.dim(1), planes = y.dim(0) * m;
    int64_t sp = planes ? y.numel() / planes : 0;
    const float *b = bias ? op[2].f32() : nullptr;
    if (s->empty) {
      // No multiply-adds: the output is the bias (or zero).
      if (!preparing(ctx))
        channelBias(ctx, "conv", y.f32(), b, planes, m, sp, false);
      return ok();
    }
    Workspace ws = carve(ctx, *s);
    if (preparing(ctx))
      return ok();
    const float *x = op[0].f32();
    if (s->padded) {
      windowCopy(ctx, "conv", s->copy, x, ws.padded);
      x = ws.padded;
    }
    const float one = 1.0f, zero = 0.0f;
    check(cudnnConvolutionForward(cudnn(ctx), &one, s->x.get(), x, s->w.get(),
                                  op[1].data, s->conv.get(),
                                  (cudnnConvolutionFwdAlgo_t)s->algo, ws.algo,
                                  s->algoBytes, &zero, s->y.get(), y.data),
          "cudnnConvolutionForward");
    if (bias)
      channelBias(ctx, "conv", y.f32(), b, planes, m, sp, true);
    return ok();
  });
}

extern "C" tidalrt_status_t
tidalrt_cuda_k_conv_backward_data(tidalrt_context_t *ctx, const int64_t *desc,
                                  void *const *buffers) {
  return runKernel(ctx, desc, buffers, "conv_backward_data", [&](OpCall &op) {
    dnnlutil::checkConvCall(op, Pass::BackwardData);
    ConvState *s = convState(op, Pass::BackwardData);
    if (s->empty) {
      if (!preparing(ctx))
        zeroFill(ctx, op[2], "conv_backward_data");
      return ok();
    }
    Workspace ws = carve(ctx, *s);
    if (preparing(ctx))
      return ok();
    float *dx = s->padded ? ws.padded : op[2].f32();
    const float one = 1.0f, zero = 0.0f;
    check(cudnnConvolutionBackwardData(
              cudnn(ctx), &one, s->w.get(), op[1].data, s->y.get(), op[0].data,
              s->conv.get(), (cudnnConvolutionBwdDataAlgo_t)s->algo, ws.algo,
              s->algoBytes, &zero, s->x.get(), dx),
          "cudnnConvolutionBackwardData");
    if (s->padded)
      windowCopy(ctx, "conv_backward_data", s->copy, dx, op[2].f32());
    return ok();
  });
}

extern "C" tidalrt_status_t tidalrt_cuda_k_conv_backward_weights(
    tidalrt_context_t *ctx, const int64_t *desc, void *const *buffers) {
  return runKernel(
      ctx, desc, buffers, "conv_backward_weights", [&](OpCall &op) {
        dnnlutil::checkConvCall(op, Pass::BackwardWeights);
        ConvState *s = convState(op, Pass::BackwardWeights);
        if (s->empty) {
          if (!preparing(ctx))
            zeroFill(ctx, op[2], "conv_backward_weights");
          return ok();
        }
        Workspace ws = carve(ctx, *s);
        if (preparing(ctx))
          return ok();
        const float *x = op[1].f32();
        if (s->padded) {
          windowCopy(ctx, "conv_backward_weights", s->copy, x, ws.padded);
          x = ws.padded;
        }
        const float one = 1.0f, zero = 0.0f;
        check(cudnnConvolutionBackwardFilter(
                  cudnn(ctx), &one, s->x.get(), x, s->y.get(), op[0].data,
                  s->conv.get(), (cudnnConvolutionBwdFilterAlgo_t)s->algo,
                  ws.algo, s->algoBytes, &zero, s->w.get(), op[2].data),
              "cudnnConvolutionBackwardFilter");
        return ok();
      });
}
