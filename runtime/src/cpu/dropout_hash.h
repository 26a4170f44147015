// dropout_hash.h - the dropout stream (namespace tidalrt::dropout), shared
// by the CPU kernel (dropout.cpp, simd.h) and the CUDA kernel
// (cuda/elementwise/dropout.h), which must draw the same masks bit for bit:
// the 64-bit key of (seed, step, stream) mixed by SplitMix64, re-keyed
// every 2^32 elements, and Wellons' lowbias32 hash of each element index.
// Integer arithmetic only; host and device code (nvcc includes it).
#ifndef TIDALRT_CPU_DROPOUT_HASH_H
#define TIDALRT_CPU_DROPOUT_HASH_H

#include <cmath>
#include <cstdint>

#if defined(__CUDACC__)
#define TIDALRT_DROPOUT_HD __host__ __device__
#else
#define TIDALRT_DROPOUT_HD
#endif

namespace tidalrt {
namespace dropout {

// SplitMix64's increment.
constexpr uint64_t kGamma = 0x9e3779b97f4a7c15ull;

// SplitMix64's output function of state z (after the gamma step).
TIDALRT_DROPOUT_HD inline uint64_t mix64(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

// The key of one dropout op at one step.
inline uint64_t streamKey(uint64_t seed, uint64_t step, int64_t stream) {
  uint64_t k = mix64(seed + kGamma);
  k = mix64((k ^ step) + kGamma);
  return mix64((k ^ (uint64_t)stream) + kGamma);
}

// The key of elements [2^32 * block, 2^32 * (block + 1)).
TIDALRT_DROPOUT_HD inline uint64_t blockKey(uint64_t key, uint64_t block) {
  return block ? mix64(key + block * kGamma) : key;
}

TIDALRT_DROPOUT_HD inline uint32_t lowbias32(uint32_t x) {
  x ^= x >> 16;
  x *= 0x7feb352du;
  x ^= x >> 15;
  x *= 0x846ca68bu;
  x ^= x >> 16;
  return x;
}

// ceil(ratio * 2^32): a draw below it drops the element.
inline uint64_t threshold(double ratio) {
  return (uint64_t)std::ceil(ratio * 0x1.0p32);
}

} // namespace dropout
} // namespace tidalrt

#endif // TIDALRT_CPU_DROPOUT_HASH_H
