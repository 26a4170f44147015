// shard.h - tidal.shard on the GPU: this rank's chunk of the flattened
// float32 input, zero-padded (the twin of tidalrt_k_shard in
// runtime/src/cpu/comm_kernels.cpp). The rank is the context's
// communicator's, as on the CPU.
#ifndef TIDALRT_CUDA_COMM_SHARD_H
#define TIDALRT_CUDA_COMM_SHARD_H

#include "../launch.h"

#include "tidalrt/comm.h"

#include <algorithm>

namespace tidalrt {
namespace cuda {

// shard: input -> chunk; ranks (0).
template <class L> void k_shard(L &l, OpCall &op) {
  if (op.numTensors != 2 || op[0].type != TIDALRT_ELEMENT_TYPE_F32 ||
      op[1].type != TIDALRT_ELEMENT_TYPE_F32)
    fail(TIDALRT_INTERNAL, "expected a float32 input and result");
  const int64_t ranks = op.getInt(0);
  tidalrt_comm_t *comm = tidalrt_context_comm(l.ctx);
  const int64_t size = comm ? tidalrt_comm_size(comm) : 1;
  if (size != ranks)
    fail(TIDALRT_INVALID_ARGUMENT,
         "the step was compiled for %lld ranks (tidalc --ranks) but runs "
         "on %lld",
         (long long)ranks, (long long)size);
  const int64_t rank = comm ? tidalrt_comm_rank(comm) : 0;
  const int64_t n = op[0].numel(), c = op[1].numel();
  if (c * ranks < n || (c - 1) * ranks >= n)
    fail(TIDALRT_INTERNAL, "%lld elements in %lld chunks of %lld", (long long)n,
         (long long)ranks, (long long)c);
  const int64_t begin = std::min(n, rank * c);
  const int64_t len = std::min(c, n - begin);
  l.copy(op[1].f32(), op[0].f32() + begin, (size_t)len * sizeof(float));
  l.zero(op[1].f32() + len, (size_t)(c - len) * sizeof(float));
}

} // namespace cuda
} // namespace tidalrt

#endif // TIDALRT_CUDA_COMM_SHARD_H
