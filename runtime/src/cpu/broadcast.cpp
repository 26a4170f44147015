// broadcast.cpp - shape helpers of the element-wise kernels.
#include "broadcast.h"

#include <cstdio>

namespace tidalrt {
namespace ew {

const char *shapeString(int rank, const int64_t *dims, char *buf, size_t size) {
  if (size == 0)
    return buf;
  if (rank < 0) {
    snprintf(buf, size, "(absent)");
    return buf;
  }
  size_t used = (size_t)snprintf(buf, size, "[");
  for (int i = 0; i < rank && used < size; ++i)
    used += (size_t)snprintf(buf + used, size - used, i ? ", %lld" : "%lld",
                             (long long)dims[i]);
  if (used < size)
    snprintf(buf + used, size - used, "]");
  return buf;
}

const char *typeName(int32_t type) {
  return tidalrt_element_type_name((tidalrt_element_type_t)type);
}

void expectTensors(const OpCall &op, int n) {
  if (op.numTensors != n)
    fail(TIDALRT_INTERNAL, "expects %d tensors, the call has %d", n,
         op.numTensors);
}

void expectElements(const TensorRef &t, int64_t n, const char *what) {
  if (!t.present())
    fail(TIDALRT_INVALID_ARGUMENT, "%s is absent", what);
  if (t.numel() != n) {
    char buf[128];
    fail(TIDALRT_INVALID_ARGUMENT,
         "%s of shape %s has %lld elements, expected %lld", what,
         shapeString(t, buf, sizeof buf), (long long)t.numel(), (long long)n);
  }
}

int buildBroadcastPlan(int outRank, const int64_t *outDims, int numInputs,
                       const TensorRef *const *inputs, BroadcastPlan &plan) {
  plan.numInputs = numInputs;
  plan.total = 1;
  for (int i = 0; i < outRank; ++i)
    plan.total *= outDims[i];
  // Check every input and compute its contiguous strides, aligned right.
  int64_t inStride[BroadcastPlan::kMaxInputs][TIDALRT_MAX_RANK];
  for (int k = 0; k < numInputs; ++k) {
    const TensorRef &t = *inputs[k];
    if (t.rank < 0 || t.rank > outRank)
      return k;
    int off = outRank - t.rank;
    int64_t s = 1;
    for (int i = outRank - 1; i >= 0; --i) {
      int j = i - off;
      if (j < 0) {
        inStride[k][i] = 0;
        continue;
      }
      int64_t d = t.dims[j];
      if (d != 1 && d != outDims[i])
        return k;
      inStride[k][i] = d == 1 ? 0 : s;
      s *= d;
    }
  }
  // Drop size-1 result dimensions and merge contiguous neighbours.
  int r = 0;
  for (int i = 0; i < outRank; ++i) {
    if (outDims[i] == 1)
      continue;
    bool merge = r > 0;
    for (int k = 0; merge && k < numInputs; ++k)
      merge = plan.strides[k][r - 1] == inStride[k][i] * outDims[i];
    if (merge) {
      plan.dims[r - 1] *= outDims[i];
      for (int k = 0; k < numInputs; ++k)
        plan.strides[k][r - 1] = inStride[k][i];
    } else {
      plan.dims[r] = outDims[i];
      for (int k = 0; k < numInputs; ++k)
        plan.strides[k][r] = inStride[k][i];
      ++r;
    }
  }
  if (r == 0) {
    plan.dims[0] = 1;
    for (int k = 0; k < numInputs; ++k)
      plan.strides[k][0] = 0;
    r = 1;
  }
  plan.rank = r;
  return -1;
}

} // namespace ew
} // namespace tidalrt
