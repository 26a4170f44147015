// cuda_library_pool_test.cpp - the cuDNN/cuBLAS CUDA kernels of pooling
// (runtime/src/cuda/library/) against the CPU kernels they mirror
// (cuda_library_case.h says how). Skips, naming the reason, without a
// usable GPU.
#include "cuda_library_case.h"

#include <cmath>
#include <cstring>

using namespace cuda_library_test;

namespace {

// ---- Pooling -----------------------------------------------------------

struct PoolCase {
  Shape x, kernel, strides, pads, dilations;
  bool ceil = false;
  bool includePad = false;

  int k() const { return (int)x.size() - 2; }
  Shape dil() const { return dilations.empty() ? Shape(k(), 1) : dilations; }
  Shape str() const { return strides.empty() ? Shape(k(), 1) : strides; }
  Shape pad() const { return pads.empty() ? Shape(2 * k(), 0) : pads; }
  // The compiler's output size (tidal::windowOutputSize).
  Shape y() const {
    Shape o = {x[0], x[1]}, d = dil(), s = str(), p = pad();
    for (int i = 0; i < k(); ++i) {
      int64_t span = d[i] * (kernel[i] - 1) + 1;
      int64_t steps = x[2 + i] + p[i] + p[k() + i] - span;
      int64_t n = (ceil ? (steps + s[i] - 1) / s[i] : steps / s[i]) + 1;
      if (ceil && (n - 1) * s[i] >= x[2 + i] + p[i])
        --n;
      o.push_back(n);
    }
    return o;
  }
  Case &maxAttrs(Case &c) const {
    return c.attrInt(ceil)
        .attrInts(dil())
        .attrInts(kernel)
        .attrInts(pad())
        .attrInts(str());
  }
  Case &avgAttrs(Case &c) const {
    return c.attrInt(ceil)
        .attrInt(includePad)
        .attrInts(kernel)
        .attrInts(pad())
        .attrInts(str());
  }
};

std::vector<PoolCase> poolCases() {
  return {
      // cuDNN windows: plain, symmetric pads, overlapping, 1-D, 3-D.
      {{2, 3, 8, 8}, {2, 2}, {2, 2}, {}, {}},
      {{1, 2, 9, 9}, {3, 3}, {2, 2}, {1, 1, 1, 1}, {}},
      {{2, 2, 7, 6}, {3, 2}, {1, 1}, {1, 0, 1, 0}, {}},
      {{2, 3, 10}, {3}, {2}, {1, 1}, {}},
      {{1, 2, 6, 6, 6}, {2, 2, 2}, {2, 2, 2}, {}, {}},
      {{2, 3, 7, 5, 6}, {3, 2, 3}, {2, 1, 2}, {1, 0, 1, 1, 0, 1}, {}},
      // Direct kernels: ceil_mode, asymmetric pads, dilations, a pad as
      // large as the window, no spatial dims, four spatial dims.
      {{1, 2, 8, 8}, {3, 3}, {2, 2}, {}, {}, true},
      {{2, 2, 7, 7}, {3, 3}, {2, 2}, {1, 1, 1, 1}, {}, true},
      {{1, 1, 7, 7}, {2, 2}, {2, 2}, {0, 0, 1, 1}, {}},
      {{1, 2, 9, 9}, {2, 3}, {1, 2}, {}, {2, 2}},
      {{1, 2, 5}, {2}, {1}, {2, 2}, {}},
      {{3, 4}, {}, {}, {}, {}},
      {{1, 2, 3, 4, 3, 4}, {2, 2, 2, 2}, {1, 2, 1, 2}, {}, {}},
  };
}

Case maxPool(const PoolCase &pc, uint32_t seed, bool ties) {
  Case c;
  if (ties)
    c.tied(pc.x, seed);
  else
    c.random(pc.x, seed);
  c.out(pc.y());
  return pc.maxAttrs(c);
}

Case maxPoolBackward(const PoolCase &pc, uint32_t seed, bool ties) {
  Case c;
  c.random(pc.y(), seed);
  if (ties)
    c.tied(pc.x, seed + 1);
  else
    c.random(pc.x, seed + 1);
  c.out(pc.x);
  return pc.maxAttrs(c);
}

Case averagePool(const PoolCase &pc, uint32_t seed) {
  Case c;
  c.random(pc.x, seed).out(pc.y());
  return pc.avgAttrs(c);
}

Case averagePoolBackward(const PoolCase &pc, uint32_t seed) {
  Case c;
  c.random(pc.y(), seed).out(pc.x);
  return pc.avgAttrs(c);
}

TEST(CudaLibrary, MaxPool) {
  TIDALRT_REQUIRE_GPU();
  uint32_t seed = 300;
  for (const PoolCase &pc : poolCases())
    for (bool ties : {false, true}) {
      SCOPED_TRACE("case " + std::to_string(seed));
      // A maximum is exact.
      expectMatch(maxPool(pc, seed++, ties), tidalrt_k_max_pool,
                  tidalrt_cuda_k_max_pool, 0);
    }
}

TEST(CudaLibrary, MaxPoolElementTypes) {
  TIDALRT_REQUIRE_GPU();
  PoolCase pcs[] = {{{2, 3, 7, 7}, {3, 3}, {2, 2}, {1, 1, 1, 1}, {}},
                    {{2, 3, 8, 8}, {3, 3}, {2, 2}, {}, {}, true}};
  std::mt19937 gen(5);
  std::uniform_int_distribution<int> dist(-100, 100);
  for (const PoolCase &pc : pcs) {
    int64_t n = numel(pc.x);
    auto run = [&](tidalrt_element_type_t type, auto sample) {
      using T = decltype(sample);
      std::vector<T> v((size_t)n);
      for (T &e : v)
        e = (T)dist(gen);
      Case c;
      c.raw(type, pc.x, v.data(), v.size() * sizeof(T)).out(pc.y(), type);
      pc.maxAttrs(c);
      SCOPED_TRACE(tidalrt_element_type_name(type));
      expectMatch(c, tidalrt_k_max_pool, tidalrt_cuda_k_max_pool, 0);
    };
    run(TIDALRT_ELEMENT_TYPE_F64, double());
    run(TIDALRT_ELEMENT_TYPE_I8, int8_t());
    run(TIDALRT_ELEMENT_TYPE_U8, uint8_t());
    run(TIDALRT_ELEMENT_TYPE_I16, int16_t());
    run(TIDALRT_ELEMENT_TYPE_U16, uint16_t());
    run(TIDALRT_ELEMENT_TYPE_I32, int32_t());
    run(TIDALRT_ELEMENT_TYPE_I64, int64_t());
    run(TIDALRT_ELEMENT_TYPE_U32, uint32_t());
    run(TIDALRT_ELEMENT_TYPE_U64, uint64_t());
  }
}

TEST(CudaLibrary, MaxPoolBackward) {
  TIDALRT_REQUIRE_GPU();
  uint32_t seed = 400;
  for (const PoolCase &pc : poolCases()) {
    SCOPED_TRACE("case " + std::to_string(seed));
    // Overlapping windows add gradients in another order.
    expectMatch(maxPoolBackward(pc, seed, false), tidalrt_k_max_pool_backward,
                tidalrt_cuda_k_max_pool_backward, kTolerance);
    seed += 2;
  }
}

// The gradient of a window goes to its FIRST maximum, as on the CPU (cuDNN
// does not document which maximum it picks; see kCudnnMaxPoolBackward in
// src/cuda/library/pool.cpp).
TEST(CudaLibrary, MaxPoolBackwardTies) {
  TIDALRT_REQUIRE_GPU();
  uint32_t seed = 500;
  for (const PoolCase &pc : poolCases()) {
    SCOPED_TRACE("case " + std::to_string(seed));
    expectMatch(maxPoolBackward(pc, seed, true), tidalrt_k_max_pool_backward,
                tidalrt_cuda_k_max_pool_backward, kTolerance);
    seed += 2;
  }
}

TEST(CudaLibrary, AveragePool) {
  TIDALRT_REQUIRE_GPU();
  uint32_t seed = 600;
  for (PoolCase pc : poolCases())
    for (bool include : {false, true}) {
      pc.includePad = include;
      SCOPED_TRACE("case " + std::to_string(seed));
      expectMatch(averagePool(pc, seed++), tidalrt_k_average_pool,
                  tidalrt_cuda_k_average_pool, kTolerance);
    }
}

TEST(CudaLibrary, AveragePoolBackward) {
  TIDALRT_REQUIRE_GPU();
  uint32_t seed = 700;
  for (PoolCase pc : poolCases())
    for (bool include : {false, true}) {
      pc.includePad = include;
      SCOPED_TRACE("case " + std::to_string(seed));
      expectMatch(averagePoolBackward(pc, seed++),
                  tidalrt_k_average_pool_backward,
                  tidalrt_cuda_k_average_pool_backward, kTolerance);
    }
}

TEST(CudaLibrary, PoolDeterministic) {
  TIDALRT_REQUIRE_GPU();
  PoolCase cudnn{{4, 8, 15, 15}, {3, 3}, {2, 2}, {1, 1, 1, 1}, {}};
  PoolCase direct{{4, 8, 15, 15}, {3, 3}, {2, 2}, {0, 0, 1, 1}, {}, true};
  for (const PoolCase &pc : {cudnn, direct}) {
    expectDeterministic(maxPoolBackward(pc, 1, true),
                        tidalrt_cuda_k_max_pool_backward);
    expectDeterministic(averagePoolBackward(pc, 2),
                        tidalrt_cuda_k_average_pool_backward);
  }
}

TEST(CudaLibrary, GlobalAveragePool) {
  TIDALRT_REQUIRE_GPU();
  // The same double sum in the same order: bitwise.
  std::vector<std::pair<Shape, Shape>> shapes = {
      {{2, 3, 5, 7}, {2, 3, 1, 1}},
      {{1, 4, 3, 3, 3}, {1, 4, 1, 1, 1}},
      {{2, 3}, {2, 3}},
      {{2, 5, 0}, {2, 5, 1}},
      {{3, 2, 200}, {3, 2, 1}},
  };
  uint32_t seed = 800;
  for (const auto &s : shapes) {
    Case c;
    c.random(s.first, seed++).out(s.second);
    expectMatch(c, tidalrt_k_global_average_pool,
                tidalrt_cuda_k_global_average_pool, 0);
  }
}

TEST(CudaLibrary, PoolErrors) {
  TIDALRT_REQUIRE_GPU();
  PoolCase pc{{1, 2, 6, 6}, {2, 2}, {2, 2}, {}, {}};
  // An element type max pooling does not take.
  std::vector<unsigned char> flags((size_t)numel(pc.x), 1);
  Case boolean;
  boolean.raw(TIDALRT_ELEMENT_TYPE_BOOL, pc.x, flags.data(), flags.size())
      .out(pc.y(), TIDALRT_ELEMENT_TYPE_BOOL);
  pc.maxAttrs(boolean);
  expectSameError(boolean, tidalrt_k_max_pool, tidalrt_cuda_k_max_pool);
  // grad_input not shaped as the input.
  Case shape;
  shape.random(pc.y(), 1).random(pc.x, 2).out({1, 2, 6, 5});
  pc.maxAttrs(shape);
  expectSameError(shape, tidalrt_k_max_pool_backward,
                  tidalrt_cuda_k_max_pool_backward);
  // A kernel_shape of the wrong length.
  PoolCase wrong{{1, 2, 6, 6}, {2}, {2, 2}, {}, {}};
  Case avg;
  avg.random(pc.x, 3).out(pc.y());
  wrong.avgAttrs(avg);
  expectSameError(avg, tidalrt_k_average_pool, tidalrt_cuda_k_average_pool);
  // A global average pool output of the wrong size.
  Case global;
  global.random({2, 3, 4, 4}, 4).out({2, 3, 2, 1});
  expectSameError(global, tidalrt_k_global_average_pool,
                  tidalrt_cuda_k_global_average_pool);
}

} // namespace
