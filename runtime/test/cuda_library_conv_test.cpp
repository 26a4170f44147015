// cuda_library_conv_test.cpp - the cuDNN/cuBLAS CUDA kernels of convolution
// (runtime/src/cuda/library/) against the CPU kernels they mirror
// (cuda_library_case.h says how). Skips, naming the reason, without a
// usable GPU.
#include "cuda_library_case.h"

#include <cmath>
#include <cstring>

using namespace cuda_library_test;

namespace {

// ---- Convolution -------------------------------------------------------

struct ConvCase {
  Shape x, w; // [N, C, D...], [M, C/group, K...]
  Shape pads, strides, dilations;
  int64_t group = 1;
  bool bias = false;

  int k() const { return (int)x.size() - 2; }
  Shape y() const {
    Shape o = {x[0], w[0]};
    for (int i = 0; i < k(); ++i) {
      int64_t d = dilations.empty() ? 1 : dilations[i];
      int64_t s = strides.empty() ? 1 : strides[i];
      int64_t p = pads.empty() ? 0 : pads[i] + pads[k() + i];
      int64_t span = x[2 + i] + p - ((w[2 + i] - 1) * d + 1);
      o.push_back(span < 0 ? 0 : span / s + 1);
    }
    return o;
  }
  Case &attrs(Case &c) const {
    return c.attrInts(dilations).attrInt(group).attrInts(pads).attrInts(
        strides);
  }
};

std::vector<ConvCase> convCases() {
  return {
      // 2-D, symmetric pads, bias.
      {{2, 3, 7, 6}, {4, 3, 3, 3}, {1, 1, 1, 1}, {1, 1}, {1, 1}, 1, true},
      // Strided, no pads or bias, a non-square kernel.
      {{1, 2, 9, 8}, {5, 2, 3, 2}, {}, {2, 2}, {}, 1, false},
      // Groups, dilation, mixed strides.
      {{2, 4, 10, 9}, {6, 2, 3, 3}, {2, 1, 2, 1}, {1, 2}, {2, 1}, 2, true},
      // Depthwise.
      {{1, 6, 8, 8}, {6, 1, 3, 3}, {1, 1, 1, 1}, {1, 1}, {1, 1}, 6, false},
      // Depthwise, strided, at MobileNet-mini's sizes (its block 1), the
      // one zoo model that differs from PyTorch on an H100 (docs/cuda.md).
      {{4, 48, 16, 16}, {48, 1, 3, 3}, {1, 1, 1, 1}, {2, 2}, {1, 1}, 48, false},
      {{4, 32, 16, 16}, {32, 1, 3, 3}, {1, 1, 1, 1}, {1, 1}, {1, 1}, 32, false},
      // Asymmetric pads (an explicitly padded copy).
      {{1, 3, 6, 7}, {2, 3, 3, 3}, {0, 1, 2, 0}, {1, 1}, {1, 1}, 1, true},
      {{2, 2, 8, 8}, {3, 2, 3, 3}, {0, 0, 1, 1}, {2, 2}, {1, 1}, 1, false},
      // 1-D (as 2-D of height 1), asymmetric.
      {{2, 3, 11}, {4, 3, 3}, {1, 2}, {2}, {1}, 1, true},
      {{3, 4, 16}, {4, 2, 5}, {2, 2}, {1}, {2}, 2, false},
      // 3-D.
      {{1, 2, 5, 6, 4},
       {3, 2, 3, 3, 2},
       {1, 1, 1, 1, 1, 1},
       {1, 1, 1},
       {1, 1, 1},
       1,
       true},
      {{2, 4, 6, 5, 7},
       {4, 2, 2, 3, 3},
       {0, 1, 1, 1, 1, 0},
       {2, 1, 2},
       {1, 1, 1},
       2,
       false},
      // Larger channel counts.
      {{4, 16, 12, 12}, {32, 16, 3, 3}, {1, 1, 1, 1}, {1, 1}, {1, 1}, 1, true},
      {{2, 32, 9, 9}, {8, 32, 1, 1}, {}, {2, 2}, {}, 1, false},
  };
}

Case convForward(const ConvCase &cc, uint32_t seed) {
  Case c;
  c.random(cc.x, seed).random(cc.w, seed + 1);
  if (cc.bias)
    c.random({cc.w[0]}, seed + 2);
  else
    c.absent();
  c.out(cc.y());
  return cc.attrs(c);
}

Case convBackwardData(const ConvCase &cc, uint32_t seed) {
  Case c;
  c.random(cc.y(), seed).random(cc.w, seed + 1).out(cc.x);
  return cc.attrs(c);
}

Case convBackwardWeights(const ConvCase &cc, uint32_t seed) {
  Case c;
  c.random(cc.y(), seed).random(cc.x, seed + 1).out(cc.w);
  return cc.attrs(c);
}

TEST(CudaLibrary, Conv) {
  TIDALRT_REQUIRE_GPU();
  uint32_t seed = 1;
  for (const ConvCase &cc : convCases()) {
    SCOPED_TRACE("case " + std::to_string(seed));
    expectMatch(convForward(cc, seed), tidalrt_k_conv, tidalrt_cuda_k_conv,
                kConvTolerance);
    seed += 3;
  }
}

TEST(CudaLibrary, ConvBackwardData) {
  TIDALRT_REQUIRE_GPU();
  uint32_t seed = 100;
  for (const ConvCase &cc : convCases()) {
    SCOPED_TRACE("case " + std::to_string(seed));
    expectMatch(convBackwardData(cc, seed), tidalrt_k_conv_backward_data,
                tidalrt_cuda_k_conv_backward_data, kConvTolerance);
    seed += 3;
  }
}

TEST(CudaLibrary, ConvBackwardWeights) {
  TIDALRT_REQUIRE_GPU();
  uint32_t seed = 200;
  for (const ConvCase &cc : convCases()) {
    SCOPED_TRACE("case " + std::to_string(seed));
    expectMatch(convBackwardWeights(cc, seed), tidalrt_k_conv_backward_weights,
                tidalrt_cuda_k_conv_backward_weights, kConvTolerance);
    seed += 3;
  }
}

TEST(CudaLibrary, ConvEmpty) {
  TIDALRT_REQUIRE_GPU();
  // No batch: nothing to write. No input channels: the output is the bias
  // (or zero), and the gradients are zero.
  for (bool bias : {false, true}) {
    ConvCase noBatch{{0, 3, 5, 5}, {4, 3, 3, 3}, {}, {}, {}, 1, bias};
    ConvCase noChannels{{2, 0, 5, 5}, {4, 0, 3, 3}, {}, {}, {}, 1, bias};
    for (const ConvCase &cc : {noBatch, noChannels}) {
      expectMatch(convForward(cc, 7), tidalrt_k_conv, tidalrt_cuda_k_conv, 0);
      expectMatch(convBackwardData(cc, 8), tidalrt_k_conv_backward_data,
                  tidalrt_cuda_k_conv_backward_data, 0);
      expectMatch(convBackwardWeights(cc, 9), tidalrt_k_conv_backward_weights,
                  tidalrt_cuda_k_conv_backward_weights, 0);
    }
  }
}

TEST(CudaLibrary, ConvDeterministic) {
  TIDALRT_REQUIRE_GPU();
  ConvCase cc{
      {4, 8, 14, 14}, {16, 8, 3, 3}, {1, 1, 1, 1}, {2, 2}, {1, 1}, 1, true};
  expectDeterministic(convForward(cc, 11), tidalrt_cuda_k_conv);
  expectDeterministic(convBackwardData(cc, 12),
                      tidalrt_cuda_k_conv_backward_data);
  expectDeterministic(convBackwardWeights(cc, 13),
                      tidalrt_cuda_k_conv_backward_weights);
}

TEST(CudaLibrary, ConvErrors) {
  TIDALRT_REQUIRE_GPU();
  // Channels do not match the group.
  ConvCase channels{{1, 4, 5, 5}, {2, 3, 3, 3}, {}, {}, {}, 1, false};
  expectSameError(convForward(channels, 1), tidalrt_k_conv,
                  tidalrt_cuda_k_conv);
  expectSameError(convBackwardData(channels, 1), tidalrt_k_conv_backward_data,
                  tidalrt_cuda_k_conv_backward_data);
  // A bias of the wrong length.
  Case bias;
  bias.random({1, 2, 5, 5}, 1)
      .random({3, 2, 3, 3}, 2)
      .random({4}, 3)
      .out({1, 3, 3, 3})
      .attrInts({})
      .attrInt(1)
      .attrInts({})
      .attrInts({});
  expectSameError(bias, tidalrt_k_conv, tidalrt_cuda_k_conv);
  // Four spatial dimensions.
  ConvCase rank6{{1, 1, 3, 3, 3, 3}, {1, 1, 2, 2, 2, 2}, {}, {}, {}, 1, false};
  expectSameError(convForward(rank6, 1), tidalrt_k_conv, tidalrt_cuda_k_conv);
  // A negative pad.
  ConvCase pad{{1, 1, 5, 5}, {1, 1, 3, 3}, {-1, 0, 0, 0}, {}, {}, 1, false};
  expectSameError(convBackwardWeights(pad, 1), tidalrt_k_conv_backward_weights,
                  tidalrt_cuda_k_conv_backward_weights);
}

} // namespace
