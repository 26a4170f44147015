// pool.cpp - max/average/global-average pooling forward and backward on
// cuDNN (the CUDA twins of runtime/src/cpu/dnnl_pool.cpp).
//
// float32 pooling over 1 to 3 spatial dimensions runs on cuDNN whenever it
// computes what the CPU kernel does: no dilation, symmetric padding smaller
// than the window, the floor output size, and (average with
// count_include_pad) no ceil_mode overhang past the end padding. The rest
// (integer max pooling, dilations, asymmetric or ceil_mode windows, other
// ranks) runs on direct kernels that follow the CPU kernel's loops
// (kernels.h), as does global average pooling.
#include "../../cpu/dnnl_checks.h"
#include "common.h"
#include "kernels.h"

#include <algorithm>
#include <climits>
#include <memory>
#include <vector>

using namespace tidalrt;
using namespace tidalrt::cuda;
using namespace tidalrt::cuda::lib;
using tidalrt::dnnlutil::Pool;
using tidalrt::dnnlutil::Window;

namespace {

// Max pooling backward runs on cuDNN's deterministic max pooling (the
// gradient goes to one maximum of each window, which the CPU kernel takes
// as the first). The direct kernel gives it to the first maximum by
// construction; CudaLibrary.MaxPoolBackwardTies compares the two rules.
constexpr bool kCudnnMaxPoolBackward = true;

// Whether cuDNN's pooling computes what the CPU kernel does.
bool cudnnCan(const Window &w, bool average, bool countIncludePad) {
  if (w.k < 1 || w.k > 3 || w.planes == 0 || w.inSp == 0 || w.outSp == 0 ||
      w.planes > INT_MAX / std::max(w.inSp, w.outSp))
    return false;
  for (int d = 0; d < w.k; ++d) {
    int64_t in = w.in[d], s = w.strides[d], kd = w.kernel[d];
    int64_t pl = w.padBegin[d], pe = w.padEnd[d];
    if (w.dilations[d] != 1 || kd > INT_MAX || s > INT_MAX)
      return false;
    // Symmetric padding that yields the call's output size; a pad smaller
    // than the window puts some input in every window.
    if (padRight(in, w.out[d], kd, s, 1, pl, pe) != pl || pl >= kd ||
        in + 2 * pl < kd || (in + 2 * pl - kd) / s + 1 != w.out[d])
      return false;
    // cuDNN divides by the whole window; the CPU kernel leaves out what
    // lies past the end padding.
    if (average && countIncludePad && (w.out[d] - 1) * s - pl + kd > in + pe)
      return false;
  }
  return true;
}

PoolWindow directWindow(const Window &w) {
  if (w.k > PoolWindow::kMaxDims)
    fail(TIDALRT_UNSUPPORTED,
         "%d spatial dimensions; the CUDA pooling kernels take at most %d", w.k,
         PoolWindow::kMaxDims);
  PoolWindow p;
  p.k = w.k;
  p.planes = w.planes;
  p.inSp = w.inSp;
  p.outSp = w.outSp;
  for (int d = 0; d < w.k; ++d) {
    p.in[d] = w.in[d];
    p.out[d] = w.out[d];
    p.kernel[d] = w.kernel[d];
    p.strides[d] = w.strides[d];
    p.dilations[d] = w.dilations[d];
    p.padBegin[d] = w.padBegin[d];
    p.padEnd[d] = w.padEnd[d];
    p.kSp *= w.kernel[d];
  }
  return p;
}

struct PoolState {
  bool useCudnn = false;
  bool countIncludePad = false;
  PoolWindow direct;
  TensorDesc x, y;
  PoolDesc pool;
  size_t yBytes = 0; // max backward: the recomputed forward output
};

// [N, C, spatial...] with a unit height in front of a 1-D spatial shape.
std::vector<int64_t> cudnnShape(int64_t n, int64_t c,
                                const std::vector<int64_t> &spatial) {
  std::vector<int64_t> d = {n, c};
  if (spatial.size() == 1)
    d.push_back(1);
  d.insert(d.end(), spatial.begin(), spatial.end());
  return d;
}

std::vector<int64_t> withUnit(const std::vector<int64_t> &v, int64_t unit) {
  std::vector<int64_t> r;
  if (v.size() == 1)
    r.push_back(unit);
  r.insert(r.end(), v.begin(), v.end());
  return r;
}

// Builds the state of a pooling call. Tensor roles: `xi` input-shaped
// (input or grad_input), `yi` output-shaped (output or grad).
PoolState *poolState(OpCall &op, Pool kind, int xi, int yi) {
  if (auto *s = getState<PoolState>(op.context, op.index))
    return s;
  bool isMax = kind == Pool::MaxForward || kind == Pool::MaxBackward;
  Window w = dnnlutil::poolWindow(op, kind, xi, yi);
  bool include = w.countIncludePad;
  // Installed once complete, so that a failed build leaves no state.
  std::unique_ptr<PoolState> owned(new PoolState());
  PoolState *s = owned.get();
  s->countIncludePad = include;
  s->useCudnn = op[xi].type == TIDALRT_ELEMENT_TYPE_F32 &&
                (kind != Pool::MaxBackward || kCudnnMaxPoolBackward) &&
                cudnnCan(w, !isMax, include);
  if (!s->useCudnn) {
    s->direct = directWindow(w);
    return setOwnedState(op.context, op.index, owned.release());
  }
  cudnn(op.context); // created while preparing rather than in a step
  cudnnPoolingMode_t mode =
      isMax ? CUDNN_POOLING_MAX_DETERMINISTIC
            : (include ? CUDNN_POOLING_AVERAGE_COUNT_INCLUDE_PADDING
                       : CUDNN_POOLING_AVERAGE_COUNT_EXCLUDE_PADDING);
  s->pool.set(mode, withUnit(w.kernel, 1), withUnit(w.padBegin, 0),
              withUnit(w.strides, 1));
  int64_t n = op[xi].dim(0), c = op[xi].dim(1);
  s->x.set(cudnnShape(n, c, w.in));
  s->y.set(cudnnShape(n, c, w.out));
  if (kind == Pool::MaxBackward)
    s->yBytes = (size_t)(w.planes * w.outSp) * sizeof(float);
  return setOwnedState(op.context, op.index, owned.release());
}

// y = pool(x) on cuDNN.
void cudnnForward(tidalrt_context_t *ctx, const PoolState &s, const void *x,
                  void *y) {
  const float one = 1.0f, zero = 0.0f;
  check(cudnnPoolingForward(cudnn(ctx), s.pool.get(), &one, s.x.get(), x, &zero,
                            s.y.get(), y),
        "cudnnPoolingForward");
}

} // namespace

extern "C" tidalrt_status_t tidalrt_cuda_k_max_pool(tidalrt_context_t *ctx,
                                                    const int64_t *desc,
                                                    void *const *buffers) {
  return runKernel(ctx, desc, buffers, "max_pool", [&](OpCall &op) {
    dnnlutil::checkPool(op, Pool::MaxForward);
    int type = op[0].type;
    PoolState *s = poolState(op, Pool::MaxForward, 0, 1);
    if (preparing(ctx))
      return ok();
    if (s->useCudnn)
      cudnnForward(ctx, *s, op[0].data, op[1].data);
    else
      maxPoolDirect(ctx, "max_pool", s->direct, type, op[0].data, op[1].data);
    return ok();
  });
}

extern "C" tidalrt_status_t
tidalrt_cuda_k_max_pool_backward(tidalrt_context_t *ctx, const int64_t *desc,
                                 void *const *buffers) {
  return runKernel(ctx, desc, buffers, "max_pool_backward", [&](OpCall &op) {
    dnnlutil::checkPool(op, Pool::MaxBackward);
    PoolState *s = poolState(op, Pool::MaxBackward, 1, 0);
    if (!s->useCudnn) {
      if (!preparing(ctx))
        maxPoolBackwardDirect(ctx, "max_pool_backward", s->direct, op[0].f32(),
                              op[1].f32(), op[2].f32());
      return ok();
    }
    // The op has no forward output operand: recompute it into the
    // workspace (cuDNN finds each window's maximum by comparing with it).
    void *y = workspace(ctx, s->yBytes);
    if (preparing(ctx))
      return ok();
    cudnnForward(ctx, *s, op[1].data, y);
    const float one = 1.0f, zero = 0.0f;
    check(cudnnPoolingBackward(cudnn(ctx), s->pool.get(), &one, s->y.get(), y,
                               s->y.get(), op[0].data, s->x.get(), op[1].data,
                               &zero, s->x.get(), op[2].data),
          "cudnnPoolingBackward");
    return ok();
  });
}

extern "C" tidalrt_status_t tidalrt_cuda_k_average_pool(tidalrt_context_t *ctx,
                                                        const int64_t *desc,
                                                        void *const *buffers) {
  return runKernel(ctx, desc, buffers, "average_pool", [&](OpCall &op) {
    dnnlutil::checkPool(op, Pool::AvgForward);
    PoolState *s = poolState(op, Pool::AvgForward, 0, 1);
    if (preparing(ctx))
      return ok();
    if (s->useCudnn)
      cudnnForward(ctx, *s, op[0].data, op[1].data);
    else
      averagePoolDirect(ctx, "average_pool", s->direct, s->countIncludePad,
                        op[0].f32(), op[1].f32());
    return ok();
  });
}

extern "C" tidalrt_status_t tidalrt_cuda_k_average_pool_backward(
    tidalrt_context_t *ctx, const int64_t *desc, void *const *buffers) {
  return runKernel(
      ctx, desc, buffers, "average_pool_backward", [&](OpCall &op) {
        dnnlutil::checkPool(op, Pool::AvgBackward);
        PoolState *s = poolState(op, Pool::AvgBackward, 1, 0);
        if (preparing(ctx))
          return ok();
        if (!s->useCudnn) {
          averagePoolBackwardDirect(ctx, "average_pool_backward", s->direct,
                                    s->countIncludePad, op[0].f32(),
                                    op[1].f32());
          return ok();
        }
        // Average pooling reads neither y nor x: the gradients stand in
        // for them.
        const float one = 1.0f, zero = 0.0f;
        check(cudnnPoolingBackward(cudnn(ctx), s->pool.get(), &one, s->y.get(),
                                   op[0].data, s->y.get(), op[0].data,
                                   s->x.get(), op[1].data, &zero, s->x.get(),
                                   op[1].data),
              "cudnnPoolingBackward");
        return ok();
      });
}

extern "C" tidalrt_status_t
tidalrt_cuda_k_global_average_pool(tidalrt_context_t *ctx, const int64_t *desc,
                                   void *const *buffers) {
  return runKernel(ctx, desc, buffers, "global_average_pool", [&](OpCall &op) {
    dnnlutil::checkGlobalAveragePool(op);
    const TensorRef &x = op[0], &y = op[1];
    if (preparing(ctx))
      return ok();
    // A direct kernel: one plane per thread, summed in double in order as
    // the CPU kernel does (bitwise the same result).
    int64_t planes = x.dim(0) * x.dim(1);
    int64_t sp = planes ? x.numel() / planes : 0;
    planeMean(ctx, "global_average_pool", planes, sp, x.f32(), y.f32());
    return ok();
  });
}
