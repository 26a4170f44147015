// random_draw.h - the values of random_normal and random_uniform (namespace
// tidalrt::random), shared by the CPU kernel (random.cpp) and the CUDA
// kernel (cuda/elementwise/random.h), which must draw the same values:
// draw number c of a stream is dropout's 32-bit hash of c (dropout_hash.h:
// the SplitMix64 key of (seed, step, stream), re-keyed every 2^32 draws).
// Element i of a uniform op takes draw i; of a normal op draws 2i and 2i+1
// (Box-Muller). Formulas in double, rounded once to the element type.
#ifndef TIDALRT_CPU_RANDOM_DRAW_H
#define TIDALRT_CPU_RANDOM_DRAW_H

#include "dropout_hash.h"

#include <math.h>
#include <stdint.h>

namespace tidalrt {
namespace random {

// The 32-bit draw number `counter` of the stream `key`.
TIDALRT_DROPOUT_HD inline uint32_t draw(uint64_t key, uint64_t counter) {
  const uint64_t k = dropout::blockKey(key, counter >> 32);
  return dropout::lowbias32(
      dropout::lowbias32((uint32_t)counter + (uint32_t)k) ^
      (uint32_t)(k >> 32));
}

// The top 24 bits of a draw as a double in [0, 1) (exact in float too).
TIDALRT_DROPOUT_HD inline double unit(uint32_t h) {
  return (double)(h >> 8) * 0x1.0p-24;
}

// Element i of a uniform draw on [low, high).
TIDALRT_DROPOUT_HD inline double uniformAt(uint64_t key, uint64_t i, double low,
                                           double high) {
  return low + (high - low) * unit(draw(key, i));
}

// Element i of a normal draw: mean + scale * sqrt(-2 ln u1) cos(2 pi u2),
// u1 = 1 - unit(draw 2i) in (0, 1], u2 = unit(draw 2i + 1); |z| <= 5.77.
TIDALRT_DROPOUT_HD inline double normalAt(uint64_t key, uint64_t i, double mean,
                                          double scale) {
  const double u1 = 1.0 - unit(draw(key, 2 * i));
  const double u2 = unit(draw(key, 2 * i + 1));
  return mean + scale * (sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2));
}

} // namespace random
} // namespace tidalrt

#endif // TIDALRT_CPU_RANDOM_DRAW_H
