// op_call.cpp - decoding the compiler's kernel call descriptors.
#include "kernel.h"

#include <algorithm>
#include <cstring>

namespace tidalrt {

// Whether kernel `name` computes right on channel-blocked tensors (the
// call's attributes decoded):
// convolutions, batch normalization, pooling (global average pooling's
// input) and broadcast_to (its [N, C, 1...] -> [N, C, ...] result) take
// each tensor's layout from the call; element-wise kernels on same-shaped
// tensors compute the same on any layout that all of them share.
static bool takesBlockedTensors(const char *name, const OpCall &op) {
  static const char *const layoutAware[] = {"conv",
                                            "conv_backward_data",
                                            "conv_backward_weights",
                                            "batch_norm_training",
                                            "batch_norm_inference",
                                            "max_pool",
                                            "max_pool_backward",
                                            "average_pool",
                                            "average_pool_backward",
                                            "global_average_pool",
                                            "broadcast_to",
                                            "batch_norm_backward"};
  for (const char *k : layoutAware)
    if (!strcmp(name, k))
      return true;
  // Concat and split along the channels (their `axis` is attribute 0):
  // every tensor blocked, so each part's channel runs are whole blocks.
  if (!strcmp(name, "concat") || !strcmp(name, "split")) {
    if (op.numAttrs < 1 || op.attrs[0].tag != TIDALRT_ATTR_INT)
      return false;
    int64_t axis = op.attrs[0].words[0];
    for (int i = 0; i < op.numTensors; ++i) {
      const TensorRef &t = op.tensors[i];
      if (!t.blocked() || (axis != 1 && axis != 1 - t.rank))
        return false;
    }
    return true;
  }
  static const char *const notElementwise[] = {
      "softmax", "log_softmax",     "softmax_backward", "log_softmax_backward",
      "dropout", "dropout_backward"};
  for (const char *k : notElementwise)
    if (!strcmp(name, k))
      return false;
  // Element-wise: every tensor of one shape and layout, but for dense
  // one-element operands (a broadcast scalar reads the same on any layout).
  const TensorRef *first = nullptr;
  for (int i = 0; i < op.numTensors; ++i) {
    const TensorRef &t = op.tensors[i];
    if (!t.present() || (!t.blocked() && t.numel() == 1))
      continue;
    if (!first) {
      first = &t;
      continue;
    }
    if (t.rank != first->rank || t.layout != first->layout ||
        !std::equal(t.dims, t.dims + t.rank, first->dims))
      return false;
  }
  return true;
}

tidalrt_status_t OpCall::decode(tidalrt_context_t *ctx, const int64_t *desc,
                                void *const *buffers, const char *kernelName) {
  kernel = kernelName;
  context = ctx;
  if (ctx)
    applyThreads(ctx);
  if (!desc)
    return tidalrt_status_make(TIDALRT_INTERNAL, "%s: NULL descriptor",
                               kernelName);
  index = desc[0];
  int64_t t = desc[1];
  if (t < 0 || t > kMaxTensors)
    return tidalrt_status_make(
        TIDALRT_INTERNAL, "%s (op %lld): %lld tensors (at most %d)", kernelName,
        (long long)index, (long long)t, kMaxTensors);
  numTensors = (int)t;
  const int64_t *p = desc + 2;
  for (int i = 0; i < numTensors; ++i) {
    TensorRef &ref = tensors[i];
    ref.type = (int32_t)(p[0] & ((1 << TIDALRT_LAYOUT_SHIFT) - 1));
    ref.layout = (int32_t)(p[0] >> TIDALRT_LAYOUT_SHIFT);
    ref.rank = (int32_t)p[1];
    p += 2;
    if (ref.layout != TIDALRT_LAYOUT_DENSE &&
        ref.layout != TIDALRT_LAYOUT_CHANNEL_BLOCKED)
      return tidalrt_status_make(TIDALRT_INTERNAL,
                                 "%s (op %lld): tensor %d has layout %d",
                                 kernelName, (long long)index, i, ref.layout);
    if (ref.blocked()) {
      if (ref.type != TIDALRT_ELEMENT_TYPE_F32 || ref.rank < 3 ||
          ref.rank > 5 || p[1] % 16 != 0)
        return tidalrt_status_make(
            TIDALRT_INTERNAL,
            "%s (op %lld): tensor %d is channel-blocked but not a float32 "
            "[N, C, spatial...] tensor with C a multiple of 16",
            kernelName, (long long)index, i);
      anyBlocked = true;
    }
    if (ref.rank > TIDALRT_MAX_RANK)
      return tidalrt_status_make(TIDALRT_INTERNAL,
                                 "%s (op %lld): tensor %d has rank %d",
                                 kernelName, (long long)index, i, ref.rank);
    ref.dims = p;
    if (ref.rank > 0)
      p += ref.rank;
    ref.data = buffers ? buffers[i] : nullptr;
  }
  int64_t a = *p++;
  if (a < 0 || a > kMaxAttrs)
    return tidalrt_status_make(
        TIDALRT_INTERNAL, "%s (op %lld): %lld attributes (at most %d)",
        kernelName, (long long)index, (long long)a, kMaxAttrs);
  numAttrs = (int)a;
  for (int i = 0; i < numAttrs; ++i) {
    AttrRef &attr = attrs[i];
    attr.tag = *p++;
    switch (attr.tag) {
    case TIDALRT_ATTR_ABSENT:
      attr.count = 0;
      attr.words = p;
      break;
    case TIDALRT_ATTR_INT:
    case TIDALRT_ATTR_FLOAT:
      attr.count = 1;
      attr.words = p++;
      break;
    case TIDALRT_ATTR_INTS:
      attr.count = *p++;
      attr.words = p;
      p += attr.count;
      break;
    default:
      return tidalrt_status_make(
          TIDALRT_INTERNAL, "%s (op %lld): attribute %d has tag %lld",
          kernelName, (long long)index, i, (long long)attr.tag);
    }
  }
  // A call site's descriptor is a constant: checked when it is prepared
  // (or if its context never was), not on every call of a step.
  bool checking = !ctx || preparing(ctx) || !tidalrt_context_prepared(ctx);
  if (anyBlocked && checking && !takesBlockedTensors(kernelName, *this))
    return tidalrt_status_make(
        TIDALRT_INTERNAL,
        "%s (op %lld): a channel-blocked tensor, which this kernel does not "
        "take",
        kernelName, (long long)index);
  return nullptr;
}

static const AttrRef &attrAt(const OpCall &op, int i, int64_t tag) {
  if (i < 0 || i >= op.numAttrs)
    fail(TIDALRT_INTERNAL, "attribute %d requested, the call has %d", i,
         op.numAttrs);
  const AttrRef &a = op.attrs[i];
  if (tag >= 0 && a.tag != tag)
    fail(TIDALRT_INTERNAL, "attribute %d has tag %lld, expected %lld", i,
         (long long)a.tag, (long long)tag);
  return a;
}

bool OpCall::has(int i) const {
  return attrAt(*this, i, -1).tag != TIDALRT_ATTR_ABSENT;
}

int64_t OpCall::getInt(int i) const {
  return attrAt(*this, i, TIDALRT_ATTR_INT).words[0];
}

double OpCall::getFloat(int i) const {
  double d;
  int64_t w = attrAt(*this, i, TIDALRT_ATTR_FLOAT).words[0];
  memcpy(&d, &w, sizeof d);
  return d;
}

int64_t OpCall::getInts(int i, const int64_t **out) const {
  const AttrRef &a = attrAt(*this, i, TIDALRT_ATTR_INTS);
  *out = a.words;
  return a.count;
}

} // namespace tidalrt
