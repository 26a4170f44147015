// Unit tests of the optimizer update kernels (optimizer.cpp).
//
// The torch.optim kernels are checked bit for bit against 20-step
// trajectories recorded with PyTorch 1.13.1 (torch.optim.SGD/Adam/AdamW on
// a float32 CPU tensor, AVX2 kernels) and against the reference evaluator's
// double formulas to 1e-4; the ONNX kernels against the evaluator's double
// formulas.
#include "isa_test_util.h"
#include "kernel_test_util.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include <omp.h>

using tidalrt_test::KernelCall;

namespace {

using tidalrt_test::forEachIsa;

constexpr int kN = 19;
constexpr int kSteps = 20;

// The PyTorch script (run with torch 1.13.1):
//   N = 19
//   init = [((i * 5) % 11 - 5) / 4.0 for i in range(N)]
//   grad(t) = [((i * 7 + t * 13) % 17 - 8) / 8.0 for i in range(N)]
//   p = torch.nn.Parameter(torch.tensor(init)); opt = <optimizer>([p], ...)
//   for t in range(20): p.grad = torch.tensor(grad(t)); opt.step()
// and the final parameter and state, as float32 bit patterns.
const uint32_t kSgdPlain_Param[kN] = {
    0xbf9ccccdu, 0xbcccccd0u, 0x3f966666u, 0xbe266669u, 0x3f84cccdu,
    0xbf033334u, 0x3f666667u, 0xbf5ccccdu, 0x3f0ccccdu, 0xbf7fffffu,
    0x3e4cccccu, 0xbf91999au, 0xbe19999au, 0x3fa1999au, 0xbe933332u,
    0x3f699999u, 0xbed9999cu, 0x3f466667u, 0xbf466667u,
};
const uint32_t kSgdWeightDecay_Param[kN] = {
    0xbf9cd6c7u, 0xbc4ee4f9u, 0x3f99aad4u, 0xbe5122dau, 0x3f812282u,
    0xbf0051a1u, 0x3f512d7au, 0xbf4c5e0au, 0x3f0516b3u, 0xbf7d7ffbu,
    0x3e63f1c0u, 0xbf9736f8u, 0xbd990a28u, 0x3f9f341eu, 0xbe883339u,
    0x3f723ca8u, 0xbeea31dbu, 0x3f4139eau, 0xbf415262u,
};
const uint32_t kSgdMomentum_Param[kN] = {
    0xbf9bb07fu, 0x3cdc4a0bu, 0x3f956bafu, 0xbe2f8d96u, 0x3f7fed5au,
    0xbf01b31au, 0x3f53db84u, 0xbf54d303u, 0x3f06e663u, 0xbf797255u,
    0x3e73b5ecu, 0xbf9e4886u, 0xbd734c29u, 0x3fa1d0b2u, 0xbe9ae137u,
    0x3f80b680u, 0xbf01f194u, 0x3f489f01u, 0xbf391dafu,
};
const uint32_t kSgdMomentum_MomentumBuffer[kN] = {
    0x3dc56efcu, 0x3f1399bau, 0xbdae1afeu, 0xbdcb66a8u, 0xbed6f397u,
    0x3d855daau, 0xbf4e0726u, 0x3eb13d19u, 0xbe831cc8u, 0x3e91a17cu,
    0x3ed82b97u, 0xbf8cece8u, 0x3f80dae2u, 0x3c990a40u, 0xbe2aa919u,
    0x3f845d8du, 0xbf6aedf8u, 0x3dc56efcu, 0x3f1399bau,
};
const uint32_t kSgdNesterov_Param[kN] = {
    0xbf9b999cu, 0x3cb1b212u, 0x3f955237u, 0xbe2e6287u, 0x3f8048dcu,
    0xbf01af45u, 0x3f55726au, 0xbf555adeu, 0x3f075187u, 0xbf79c782u,
    0x3e6f8244u, 0xbf9ccf96u, 0xbd8c1d56u, 0x3fa19670u, 0xbe99eebcu,
    0x3f7eb677u, 0xbeff51e0u, 0x3f4823f5u, 0xbf3a331fu,
};
const uint32_t kSgdNesterov_MomentumBuffer[kN] = {
    0x3dafa286u, 0x3f13a568u, 0xbd98f646u, 0xbdce9410u, 0xbed27f98u,
    0x3d78761cu, 0xbf4c2f0bu, 0x3ead8ac4u, 0xbe80c830u, 0x3e8d49f0u,
    0x3ed938d5u, 0xbf8e5261u, 0x3f80d035u, 0x3cf30560u, 0xbe2d3f16u,
    0x3f858076u, 0xbf6c18cdu, 0x3dd396d2u, 0x3f11f5f6u,
};
const uint32_t kAdam_Param[kN] = {
    0xbf9fba5bu, 0x3afb39dcu, 0x3f9f7acdu, 0xbe7bdaffu, 0x3f7f9d92u,
    0xbeffaef1u, 0x3f40e8d8u, 0xbf4115b6u, 0x3f009f41u, 0xbf80051bu,
    0x3e8001d9u, 0xbf9ff30eu, 0xbb4f99a6u, 0x3fa03699u, 0xbe816540u,
    0x3f801006u, 0xbf0044cdu, 0x3f408b47u, 0xbf3f8263u,
};
const uint32_t kAdam_ExpAvg[kN] = {
    0x3c1df25du, 0x3d6c2927u, 0xbc0b48ccu, 0xbc22b87fu, 0xbd2bf612u,
    0x3bd562c0u, 0xbda4d284u, 0x3d0dca7bu, 0xbcd1c7adu, 0x3ce90266u,
    0x3d2cefacu, 0xbde17b0fu, 0x3dce2b04u, 0x3af4dd58u, 0xbc888740u,
    0x3dd3c8e2u, 0xbdbbf192u, 0x3c1df25du, 0x3d6c2927u,
};
const uint32_t kAdam_ExpAvgSq[kN] = {
    0x3bfc7112u, 0x3bfcb208u, 0x3be52b90u, 0x3c021c1du, 0x3be0ab38u,
    0x3bfbf711u, 0x3bf7aad4u, 0x3becb24bu, 0x3bfeb041u, 0x3bdf26f3u,
    0x3bfe817fu, 0x3becfed0u, 0x3bf75389u, 0x3bfc284du, 0x3be0adafu,
    0x3c021104u, 0x3be54e60u, 0x3bfc7112u, 0x3bfcb208u,
};
const uint32_t kAdamWeightDecay_Param[kN] = {
    0xbf9da3deu, 0x3c94efbfu, 0x3f9b7ac5u, 0xbe5f53ffu, 0x3f7c60e1u,
    0xbefc4676u, 0x3f43f85fu, 0xbf47df43u, 0x3f05289du, 0xbf803c05u,
    0x3e80a672u, 0xbf9f0db2u, 0xbce3adccu, 0x3fa1c51cu, 0xbe8bb086u,
    0x3f800e7cu, 0xbf0121e5u, 0x3f434073u, 0xbf3ac976u,
};
const uint32_t kAdamWeightDecay_ExpAvg[kN] = {
    0x3b008646u, 0x3e0b7044u, 0xbc750930u, 0xbc8cb50du, 0xbd8db98cu,
    0x3caf3302u, 0xbe2b776au, 0x3d568d04u, 0xbcd1de9fu, 0x3cbabd6du,
    0x3dda7d77u, 0xbe73970cu, 0x3e2c889fu, 0x3d45a879u, 0xbd833c84u,
    0x3e604483u, 0xbe369caeu, 0x3cb1ac65u, 0x3e03dd01u,
};
const uint32_t kAdamWeightDecay_ExpAvgSq[kN] = {
    0x3d908741u, 0x3d91db0fu, 0x3d83a114u, 0x3d95d378u, 0x3d80e4edu,
    0x3d904067u, 0x3d8ecafau, 0x3d86ec22u, 0x3d92b9f4u, 0x3d802fb8u,
    0x3d91ce66u, 0x3d898adbu, 0x3d8d35c1u, 0x3d9160beu, 0x3d810bf6u,
    0x3d95a8e4u, 0x3d843c8au, 0x3d905c4fu, 0x3d91c8cbu,
};
const uint32_t kAdamW_Param[kN] = {
    0xbf9fb227u, 0x3afb2fdeu, 0x3f9f7299u, 0xbe7bce0eu, 0x3f7f9072u,
    0xbeffa1d1u, 0x3f40def4u, 0xbf410bcfu, 0x3f0098b1u, 0xbf7ffd18u,
    0x3e7ff693u, 0xbf9feadau, 0xbb4f9145u, 0x3fa02e65u, 0xbe815e9eu,
    0x3f800976u, 0xbf003e3du, 0x3f40816fu, 0xbf3f788bu,
};
const uint32_t kAdamW_ExpAvg[kN] = {
    0x3c1df25du, 0x3d6c2927u, 0xbc0b48ccu, 0xbc22b87fu, 0xbd2bf612u,
    0x3bd562c0u, 0xbda4d284u, 0x3d0dca7bu, 0xbcd1c7adu, 0x3ce90266u,
    0x3d2cefacu, 0xbde17b0fu, 0x3dce2b04u, 0x3af4dd58u, 0xbc888740u,
    0x3dd3c8e2u, 0xbdbbf192u, 0x3c1df25du, 0x3d6c2927u,
};
const uint32_t kAdamW_ExpAvgSq[kN] = {
    0x3bfc7112u, 0x3bfcb208u, 0x3be52b90u, 0x3c021c1du, 0x3be0ab38u,
    0x3bfbf711u, 0x3bf7aad4u, 0x3becb24bu, 0x3bfeb041u, 0x3bdf26f3u,
    0x3bfe817fu, 0x3becfed0u, 0x3bf75389u, 0x3bfc284du, 0x3be0adafu,
    0x3c021104u, 0x3be54e60u, 0x3bfc7112u, 0x3bfcb208u,
};
const uint32_t kAdamWBetas_Param[kN] = {
    0xbf9a9ce9u, 0x3c976095u, 0x3f985193u, 0xbe575edfu, 0x3f77bdeau,
    0xbef7fa18u, 0x3f440c4du, 0xbf458596u, 0x3f0329f4u, 0xbf7bc5f0u,
    0x3e7c2cb7u, 0xbf9c664du, 0xbcecab32u, 0x3f9efbecu, 0xbe8a4b4cu,
    0x3f7bfc3bu, 0xbeff0d1eu, 0x3f40a188u, 0xbf37773cu,
};
const uint32_t kAdamWBetas_ExpAvg[kN] = {
    0x3c58ac56u, 0x3dc6236bu, 0xbcadddf0u, 0xbc2288ecu, 0xbd761c0cu,
    0x3c57aafeu, 0xbdf9c8d7u, 0x3d3abd07u, 0xbcff8f84u, 0x3d151a78u,
    0x3d908436u, 0xbe2c3c80u, 0x3e0d3602u, 0x3c77e734u, 0xbd208b06u,
    0x3e21c0c4u, 0xbe0a2372u, 0x3c58ac56u, 0x3dc6236bu,
};
const uint32_t kAdamWBetas_ExpAvgSq[kN] = {
    0x3d17a295u, 0x3d186673u, 0x3d09c23eu, 0x3d1cbaf8u, 0x3d073394u,
    0x3d176b8fu, 0x3d157a4du, 0x3d0e18a5u, 0x3d198354u, 0x3d064d02u,
    0x3d18f652u, 0x3d0eff5au, 0x3d147312u, 0x3d180006u, 0x3d073b02u,
    0x3d1c77feu, 0x3d0a2b39u, 0x3d17a295u, 0x3d186673u,
};

float initParam(int i) { return (float)(((i * 5) % 11) - 5) / 4.0f; }
float gradAt(int i, int t) {
  return (float)(((i * 7 + t * 13) % 17) - 8) / 8.0f;
}

float fromBits(uint32_t u) {
  float f;
  memcpy(&f, &u, sizeof f);
  return f;
}

void expectBits(const std::vector<float> &got, const uint32_t *want,
                const char *what) {
  for (int i = 0; i < kN; ++i) {
    uint32_t g;
    memcpy(&g, &got[i], sizeof g);
    EXPECT_EQ(g, want[i]) << what << "[" << i << "]: got " << got[i]
                          << ", PyTorch " << fromBits(want[i]);
  }
}

void expectNear(const std::vector<float> &got, const std::vector<double> &want,
                double rel, const char *what) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i)
    EXPECT_NEAR(got[i], want[i], rel * std::max(1.0, std::fabs(want[i])))
        << what << "[" << i << "]";
}

struct SgdOptions {
  double lr, momentum = 0, dampening = 0, weightDecay = 0;
  bool nesterov = false;
};

// 20 steps of sgd_update / sgd_momentum_update with the results written
// over the operands (the memory planner may alias them), next to the
// evaluator's double formulas.
void runSgd(const SgdOptions &o, std::vector<float> &p, std::vector<float> &buf,
            std::vector<double> &pd, std::vector<double> &bufd) {
  p.resize(kN);
  buf.assign(kN, 0.0f);
  pd.resize(kN);
  bufd.assign(kN, 0.0);
  for (int i = 0; i < kN; ++i)
    pd[i] = p[i] = initParam(i);
  for (int t = 0; t < kSteps; ++t) {
    std::vector<float> g(kN);
    for (int i = 0; i < kN; ++i)
      g[i] = gradAt(i, t);
    KernelCall call;
    call.f32({kN}, p.data()).f32({kN}, g.data());
    if (o.momentum == 0) {
      call.f32({kN}, p.data()).attrFloat(o.lr).attrFloat(o.weightDecay);
      ASSERT_EQ(call.run(tidalrt_k_sgd_update, /*prepare=*/t % 2 == 0), "");
    } else {
      call.f32({kN}, buf.data())
          .f32({kN}, p.data())
          .f32({kN}, buf.data())
          .attrFloat(o.dampening)
          .attrFloat(o.lr)
          .attrFloat(o.momentum)
          .attrInt(o.nesterov)
          .attrFloat(o.weightDecay);
      ASSERT_EQ(call.run(tidalrt_k_sgd_momentum_update, t % 2 == 0), "");
    }
    for (int i = 0; i < kN; ++i) {
      double d = (double)g[i] + o.weightDecay * pd[i];
      if (o.momentum != 0) {
        bufd[i] = o.momentum * bufd[i] + (1 - o.dampening) * d;
        d = o.nesterov ? d + o.momentum * bufd[i] : bufd[i];
      }
      pd[i] -= o.lr * d;
    }
  }
}

struct AdamOptions {
  double lr = 1e-3, beta1 = 0.9, beta2 = 0.999, eps = 1e-8, weightDecay = 0;
  bool decoupled = false;
};

void runAdam(const AdamOptions &o, std::vector<float> &p, std::vector<float> &m,
             std::vector<float> &v, std::vector<double> &pd,
             std::vector<double> &md, std::vector<double> &vd) {
  p.resize(kN);
  m.assign(kN, 0.0f);
  v.assign(kN, 0.0f);
  pd.resize(kN);
  md.assign(kN, 0.0);
  vd.assign(kN, 0.0);
  for (int i = 0; i < kN; ++i)
    pd[i] = p[i] = initParam(i);
  for (int t = 0; t < kSteps; ++t) {
    std::vector<float> g(kN);
    for (int i = 0; i < kN; ++i)
      g[i] = gradAt(i, t);
    int64_t step = t + 1;
    KernelCall call;
    call.f32({kN}, p.data())
        .f32({kN}, g.data())
        .f32({kN}, m.data())
        .f32({kN}, v.data())
        .i64({}, &step)
        .f32({kN}, p.data())
        .f32({kN}, m.data())
        .f32({kN}, v.data())
        .attrFloat(o.beta1)
        .attrFloat(o.beta2)
        .attrInt(o.decoupled)
        .attrFloat(o.eps)
        .attrFloat(o.lr)
        .attrFloat(o.weightDecay);
    ASSERT_EQ(call.run(tidalrt_k_adam_update, t % 2 == 0), "");
    double bc1 = 1 - std::pow(o.beta1, step), bc2 = 1 - std::pow(o.beta2, step);
    for (int i = 0; i < kN; ++i) {
      double param = pd[i], grad = g[i];
      if (o.decoupled)
        param *= 1 - o.lr * o.weightDecay;
      else
        grad += o.weightDecay * param;
      md[i] = o.beta1 * md[i] + (1 - o.beta1) * grad;
      vd[i] = o.beta2 * vd[i] + (1 - o.beta2) * grad * grad;
      pd[i] = param -
              o.lr / bc1 * md[i] / (std::sqrt(vd[i]) / std::sqrt(bc2) + o.eps);
    }
  }
}

} // namespace

TEST(OtherOptimizer, SgdMatchesPyTorch) {
  struct Case {
    const char *name;
    SgdOptions o;
    const uint32_t *param, *buf;
  };
  SgdOptions plain{0.1};
  SgdOptions decay{0.05};
  decay.weightDecay = 0.01;
  SgdOptions momentum{0.01};
  momentum.momentum = 0.9;
  SgdOptions nesterov{0.01};
  nesterov.momentum = 0.9;
  nesterov.nesterov = true;
  nesterov.weightDecay = 1e-3;
  const Case cases[] = {
      {"plain", plain, kSgdPlain_Param, nullptr},
      {"weight decay", decay, kSgdWeightDecay_Param, nullptr},
      {"momentum", momentum, kSgdMomentum_Param, kSgdMomentum_MomentumBuffer},
      {"nesterov", nesterov, kSgdNesterov_Param, kSgdNesterov_MomentumBuffer},
  };
  forEachIsa([&] {
    for (const Case &c : cases) {
      SCOPED_TRACE(c.name);
      std::vector<float> p, buf;
      std::vector<double> pd, bufd;
      runSgd(c.o, p, buf, pd, bufd);
      expectBits(p, c.param, "param");
      expectNear(p, pd, 1e-4, "param vs evaluator");
      if (c.buf) {
        expectBits(buf, c.buf, "momentum_buffer");
        expectNear(buf, bufd, 1e-4, "momentum_buffer vs evaluator");
      }
    }
  });
}

TEST(OtherOptimizer, SgdDampeningFollowsTheEvaluator) {
  // With dampening, tidal's zero-initialised buffer differs from PyTorch's
  // first step (docs/optimizers.md); the evaluator's formula is the spec.
  SgdOptions o{0.02};
  o.momentum = 0.8;
  o.dampening = 0.3;
  o.weightDecay = 0.05;
  forEachIsa([&] {
    std::vector<float> p, buf;
    std::vector<double> pd, bufd;
    runSgd(o, p, buf, pd, bufd);
    expectNear(p, pd, 1e-5, "param");
    expectNear(buf, bufd, 1e-5, "momentum_buffer");
  });
}

TEST(OtherOptimizer, AdamMatchesPyTorch) {
  struct Case {
    const char *name;
    AdamOptions o;
    const uint32_t *param, *m, *v;
  };
  AdamOptions adam;
  AdamOptions adamDecay;
  adamDecay.lr = 0.01;
  adamDecay.weightDecay = 0.01;
  adamDecay.beta1 = 0.8;
  adamDecay.beta2 = 0.99;
  adamDecay.eps = 1e-6;
  AdamOptions adamw;
  adamw.decoupled = true;
  adamw.weightDecay = 0.01;
  AdamOptions adamwBetas;
  adamwBetas.decoupled = true;
  adamwBetas.lr = 0.01;
  adamwBetas.weightDecay = 0.1;
  adamwBetas.beta1 = 0.85;
  adamwBetas.beta2 = 0.995;
  const Case cases[] = {
      {"adam", adam, kAdam_Param, kAdam_ExpAvg, kAdam_ExpAvgSq},
      {"adam weight decay", adamDecay, kAdamWeightDecay_Param,
       kAdamWeightDecay_ExpAvg, kAdamWeightDecay_ExpAvgSq},
      {"adamw", adamw, kAdamW_Param, kAdamW_ExpAvg, kAdamW_ExpAvgSq},
      {"adamw betas", adamwBetas, kAdamWBetas_Param, kAdamWBetas_ExpAvg,
       kAdamWBetas_ExpAvgSq},
  };
  forEachIsa([&] {
    for (const Case &c : cases) {
      SCOPED_TRACE(c.name);
      std::vector<float> p, m, v;
      std::vector<double> pd, md, vd;
      runAdam(c.o, p, m, v, pd, md, vd);
      expectBits(p, c.param, "param");
      expectBits(m, c.m, "exp_avg");
      expectBits(v, c.v, "exp_avg_sq");
      expectNear(p, pd, 1e-4, "param vs evaluator");
      expectNear(m, md, 1e-4, "exp_avg vs evaluator");
      expectNear(v, vd, 1e-4, "exp_avg_sq vs evaluator");
    }
  });
}

// A large update (OpenMP chunks, vector body) gives per element the bits
// of a one-element update (scalar tail), and the same for any thread count.
TEST(OtherOptimizer, LargeAdamMatchesElementwise) {
  const int n = 100003;
  std::mt19937 rng(7);
  std::normal_distribution<float> dist;
  std::vector<float> p(n), g(n), m(n), v(n);
  for (int i = 0; i < n; ++i) {
    p[i] = dist(rng);
    g[i] = dist(rng);
    m[i] = 0.1f * dist(rng);
    v[i] = std::fabs(0.01f * dist(rng));
  }
  int64_t step = 5;
  auto run = [&](int count, int offset, std::vector<float> &np,
                 std::vector<float> &nm, std::vector<float> &nv) {
    KernelCall call;
    call.f32({count}, p.data() + offset)
        .f32({count}, g.data() + offset)
        .f32({count}, m.data() + offset)
        .f32({count}, v.data() + offset)
        .i64({1}, &step)
        .f32({count}, np.data() + offset)
        .f32({count}, nm.data() + offset)
        .f32({count}, nv.data() + offset)
        .attrFloat(0.9)
        .attrFloat(0.999)
        .attrInt(0)
        .attrFloat(1e-8)
        .attrFloat(0.003)
        .attrFloat(0.01);
    return call.run(tidalrt_k_adam_update);
  };
  std::vector<float> p1(n), m1(n), v1(n), p2(n), m2(n), v2(n);
  ASSERT_EQ(run(n, 0, p1, m1, v1), "");
  for (int i = 0; i < n; i += 997)
    ASSERT_EQ(run(1, i, p2, m2, v2), "");
  for (int i = 0; i < n; i += 997) {
    EXPECT_EQ(p1[i], p2[i]) << i;
    EXPECT_EQ(m1[i], m2[i]) << i;
    EXPECT_EQ(v1[i], v2[i]) << i;
  }
  int threads = omp_get_max_threads();
  omp_set_num_threads(1);
  std::vector<float> p3(n), m3(n), v3(n);
  ASSERT_EQ(run(n, 0, p3, m3, v3), "");
  omp_set_num_threads(threads);
  EXPECT_EQ(p1, p3);
  EXPECT_EQ(m1, m3);
  EXPECT_EQ(v1, v3);
}

TEST(OtherOptimizer, AdamErrors) {
  std::vector<float> a(4), b(3);
  int64_t step = 0;
  auto call = [&](std::vector<float> &grad, int64_t *s, int type) {
    KernelCall c;
    c.f32({4}, a.data())
        .f32({(int64_t)grad.size()}, grad.data())
        .f32({4}, a.data())
        .f32({4}, a.data())
        .tensor((tidalrt_element_type_t)type, {}, s)
        .f32({4}, a.data())
        .f32({4}, a.data())
        .f32({4}, a.data())
        .attrFloat(0.9)
        .attrFloat(0.999)
        .attrInt(0)
        .attrFloat(1e-8)
        .attrFloat(1e-3)
        .attrFloat(0);
    return c.run(tidalrt_k_adam_update);
  };
  std::string e = call(a, &step, TIDALRT_ELEMENT_TYPE_I64);
  EXPECT_NE(e.find("INVALID_ARGUMENT"), std::string::npos) << e;
  EXPECT_NE(e.find("step is 0"), std::string::npos) << e;
  step = 1;
  e = call(b, &step, TIDALRT_ELEMENT_TYPE_I64);
  EXPECT_NE(e.find("grad has 3 elements"), std::string::npos) << e;
  e = call(a, &step, TIDALRT_ELEMENT_TYPE_F32);
  EXPECT_NE(e.find("UNSUPPORTED"), std::string::npos) << e;
  EXPECT_NE(e.find("step"), std::string::npos) << e;
  // A float64 parameter is not supported.
  std::vector<double> d(4);
  KernelCall c;
  c.tensor(TIDALRT_ELEMENT_TYPE_F64, {4}, d.data())
      .f32({4}, a.data())
      .tensor(TIDALRT_ELEMENT_TYPE_F64, {4}, d.data())
      .attrFloat(0.1)
      .attrFloat(0);
  e = c.run(tidalrt_k_sgd_update);
  EXPECT_NE(e.find("UNSUPPORTED: sgd_update (op 0): param has element type "
                   "float64"),
            std::string::npos)
      << e;
}

// ONNX Momentum, Adagrad, Adam against the evaluator's double formulas,
// with float32 and float64 learning rates and t = 0 and t > 0.
TEST(OtherOptimizer, OnnxOps) {
  const int n = 45;
  std::mt19937 rng(3);
  std::normal_distribution<float> dist;
  std::vector<float> x(n), g(n), v(n), h(n);
  for (int i = 0; i < n; ++i) {
    x[i] = dist(rng);
    g[i] = dist(rng);
    v[i] = dist(rng);
    h[i] = std::fabs(dist(rng));
  }
  for (int64_t t : {0, 3}) {
    for (bool f64 : {false, true}) {
      SCOPED_TRACE("t=" + std::to_string(t) + (f64 ? " r f64" : " r f32"));
      float rf = 0.05f;
      double rd = 0.05;
      void *r = f64 ? (void *)&rd : (void *)&rf;
      double rv = f64 ? rd : rf;
      auto rType = f64 ? TIDALRT_ELEMENT_TYPE_F64 : TIDALRT_ELEMENT_TYPE_F32;
      for (bool nesterov : {false, true}) {
        std::vector<float> nx(n), nv(n);
        KernelCall c;
        c.tensor(rType, {}, r)
            .i64({}, &t)
            .f32({n}, x.data())
            .f32({n}, g.data())
            .f32({n}, v.data())
            .f32({n}, nx.data())
            .f32({n}, nv.data())
            .attrFloat(0.9)
            .attrFloat(0.7)
            .attrInt(nesterov)
            .attrFloat(0.01);
        ASSERT_EQ(c.run(tidalrt_k_onnx_momentum), "");
        std::vector<double> ex(n), ev(n);
        for (int i = 0; i < n; ++i) {
          double gr = 0.01 * x[i] + g[i];
          ev[i] = 0.9 * v[i] + (t > 0 ? 0.7 : 1.0) * gr;
          ex[i] = x[i] - rv * (nesterov ? gr + 0.9 * ev[i] : ev[i]);
        }
        expectNear(nx, ex, 1e-6, "momentum x");
        expectNear(nv, ev, 1e-6, "momentum v");
      }
      {
        std::vector<float> nx(n), nh(n);
        KernelCall c;
        c.tensor(rType, {}, r)
            .i64({}, &t)
            .f32({n}, x.data())
            .f32({n}, g.data())
            .f32({n}, h.data())
            .f32({n}, nx.data())
            .f32({n}, nh.data())
            .attrFloat(0.1)
            .attrFloat(1e-5)
            .attrFloat(0.001);
        ASSERT_EQ(c.run(tidalrt_k_onnx_adagrad), "");
        std::vector<double> ex(n), eh(n);
        double rate = rv / (1 + t * 0.1);
        for (int i = 0; i < n; ++i) {
          double gr = 0.001 * x[i] + g[i];
          eh[i] = h[i] + gr * gr;
          ex[i] = x[i] - rate * gr / (std::sqrt(eh[i]) + 1e-5);
        }
        expectNear(nx, ex, 1e-6, "adagrad x");
        expectNear(nh, eh, 1e-6, "adagrad h");
      }
      {
        std::vector<float> nx(n), nv(n), nh(n);
        KernelCall c;
        c.tensor(rType, {}, r)
            .i64({}, &t)
            .f32({n}, x.data())
            .f32({n}, g.data())
            .f32({n}, v.data())
            .f32({n}, h.data())
            .f32({n}, nx.data())
            .f32({n}, nv.data())
            .f32({n}, nh.data())
            .attrFloat(0.95)
            .attrFloat(0.1)
            .attrFloat(1e-7)
            .attrFloat(0.001)
            .attrFloat(0.02);
        ASSERT_EQ(c.run(tidalrt_k_onnx_adam), "");
        std::vector<double> ex(n), ev(n), eh(n);
        double rate = t > 0 ? rv * std::sqrt(1 - std::pow(0.1, t)) /
                                  (1 - std::pow(0.95, t))
                            : rv;
        for (int i = 0; i < n; ++i) {
          double gr = 0.001 * x[i] + g[i];
          ev[i] = 0.95 * v[i] + 0.05 * gr;
          eh[i] = 0.1 * h[i] + 0.9 * gr * gr;
          ex[i] = 0.98 * (x[i] - rate * ev[i] / (std::sqrt(eh[i]) + 1e-7));
        }
        expectNear(nx, ex, 1e-6, "adam x");
        expectNear(nv, ev, 1e-6, "adam v");
        expectNear(nh, eh, 1e-6, "adam h");
      }
    }
  }
}

// The ONNX backend node test test_adagrad (one tensor).
TEST(OtherOptimizer, OnnxAdagradNodeTest) {
  float r = 0.1f, x = 1.0f, g = -1.0f, h = 2.0f, nx, nh;
  int64_t t = 0;
  KernelCall c;
  c.f32({}, &r)
      .i64({}, &t)
      .f32({1}, &x)
      .f32({1}, &g)
      .f32({1}, &h)
      .f32({1}, &nx)
      .f32({1}, &nh)
      .attrFloat(0.1)
      .attrFloat(1e-5)
      .attrFloat(0.001);
  ASSERT_EQ(c.run(tidalrt_k_onnx_adagrad), "");
  double gr = 0.001 * 1.0 - 1.0, hn = 2.0 + gr * gr;
  EXPECT_FLOAT_EQ(nh, (float)hn);
  EXPECT_FLOAT_EQ(nx, (float)(1.0 - 0.1 * gr / (std::sqrt(hn) + 1e-5)));
}
