// common.h - what the other CUDA kernels share (namespace
// tidalrt::cuda::other): the host-side operand checks of the CPU kernels
// (runtime/src/cpu/other_util.h, whose OpenMP and AVX2 parts nvcc does not
// see), integer reads that bodies do on the device, and strided index maps.
//
// The checks fail with the same status codes and messages as the CPU
// kernels'. Whatever the CPU kernels check by reading tensor data (a label or
// an index out of range, an optimizer step below 1) cannot be checked on the
// host here; each kernel says what its bodies do instead.
#ifndef TIDALRT_CUDA_OTHER_COMMON_H
#define TIDALRT_CUDA_OTHER_COMMON_H

#include "../../cpu/other_util.h"
#include "../launch.h"

#include <cmath>
#include <cstdint>
#include <cstring>

namespace tidalrt {
namespace cuda {
namespace other {

//===----------------------------------------------------------------------===//
// Host-side checks: the CPU kernels' own (runtime/src/cpu/other_util.h)
//===----------------------------------------------------------------------===//

using tidalrt::other::isIndexType;
using tidalrt::other::normalizeAxis;
using tidalrt::other::product;
using tidalrt::other::requireF32;
using tidalrt::other::requireIndex;
using tidalrt::other::requireTensors;
using tidalrt::other::sameShape;
using tidalrt::other::typeName;

//===----------------------------------------------------------------------===//
// Device-side reads
//===----------------------------------------------------------------------===//

// An integer operand of any index type, read on the device as int64 (u64
// values above INT64_MAX read as INT64_MAX, which every range check
// rejects; as readIndex in other_util.h).
struct IndexRef {
  const void *data = nullptr;
  int32_t type = TIDALRT_ELEMENT_TYPE_I64;

  TIDAL_HD int64_t operator[](int64_t i) const {
    switch (type) {
    case TIDALRT_ELEMENT_TYPE_I64:
      return static_cast<const int64_t *>(data)[i];
    case TIDALRT_ELEMENT_TYPE_I32:
      return static_cast<const int32_t *>(data)[i];
    case TIDALRT_ELEMENT_TYPE_I16:
      return static_cast<const int16_t *>(data)[i];
    case TIDALRT_ELEMENT_TYPE_I8:
      return static_cast<const int8_t *>(data)[i];
    case TIDALRT_ELEMENT_TYPE_U8:
      return static_cast<const uint8_t *>(data)[i];
    case TIDALRT_ELEMENT_TYPE_U16:
      return static_cast<const uint16_t *>(data)[i];
    case TIDALRT_ELEMENT_TYPE_U32:
      return static_cast<const uint32_t *>(data)[i];
    case TIDALRT_ELEMENT_TYPE_U64: {
      uint64_t v = static_cast<const uint64_t *>(data)[i];
      return v > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)v;
    }
    default:
      return 0;
    }
  }
};

inline IndexRef indexRef(const TensorRef &t) {
  IndexRef r;
  r.data = t.data;
  r.type = t.type;
  return r;
}

// A typed index element as int64 (u64 above INT64_MAX clamped as above);
// for bodies templated over the index type.
template <class I> TIDAL_HD inline int64_t toIndex(I v) { return (int64_t)v; }
template <> TIDAL_HD inline int64_t toIndex<uint64_t>(uint64_t v) {
  return v > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)v;
}

// Calls f(I()) with the C type I of an index type.
template <class F> void withIndexType(int32_t type, F f) {
  switch (type) {
  case TIDALRT_ELEMENT_TYPE_I64:
    return f(int64_t());
  case TIDALRT_ELEMENT_TYPE_U64:
    return f(uint64_t());
  case TIDALRT_ELEMENT_TYPE_I32:
    return f(int32_t());
  case TIDALRT_ELEMENT_TYPE_U32:
    return f(uint32_t());
  case TIDALRT_ELEMENT_TYPE_I16:
    return f(int16_t());
  case TIDALRT_ELEMENT_TYPE_U16:
    return f(uint16_t());
  case TIDALRT_ELEMENT_TYPE_I8:
    return f(int8_t());
  default:
    return f(uint8_t());
  }
}

// Calls f(T()) with an unsigned integer type of `bytes` bytes (1, 2, 4 or
// 8): the data movement kernels move elements by their size.
template <class F> void withElementSize(size_t bytes, F f) {
  switch (bytes) {
  case 1:
    return f(uint8_t());
  case 2:
    return f(uint16_t());
  case 4:
    return f(uint32_t());
  default:
    return f(uint64_t());
  }
}

// A quiet NaN, what bodies write where the CPU kernel would fail on data.
TIDAL_HD inline float quietNan() {
  const uint32_t bits = 0x7fc00000u;
  float f;
  memcpy(&f, &bits, sizeof f);
  return f;
}

} // namespace other
} // namespace cuda
} // namespace tidalrt

#endif // TIDALRT_CUDA_OTHER_COMMON_H
