// simd_loops.cpp - throughput of simd.h's float32 loops on each ISA
// (scalar, AVX2, AVX-512) at one thread, as ratios against the AVX2 loop
// in the same run. Not a test: see bench/README.md.
//
//   build/bin/tidalrt-bench-simd [--sizes 4096,1048576] [--repeat 7]
//                                [--min-ms 20]
//
// Each (loop, size, ISA) is timed as the best of --repeat rounds; a round
// calls the loop on the same arrays until --min-ms have passed and takes
// the mean time per call. The ISAs run interleaved within each round, so
// that drift in the machine's load hits all three alike. Prints a markdown
// table: elements per nanosecond for each ISA, and each ISA's time relative
// to AVX2's (AVX-512 / AVX2 < 1 means AVX-512 is faster).
#include "../runtime/src/cpu/simd.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <vector>

namespace simd = tidalrt::simd;

namespace {

using Clock = std::chrono::steady_clock;

struct Loop {
  const char *name;
  std::function<void(simd::Isa, int64_t)> run;
};

// Arrays shared by the loops (inputs in each function's fast range).
struct Data {
  std::vector<float> x, b, g, y, r0, r1, r2, r3;
  std::vector<double> acc;
  std::vector<uint8_t> mask;

  explicit Data(int64_t n) {
    std::mt19937 rng(1234);
    std::uniform_real_distribution<float> u(-4.0f, 4.0f);
    auto fill = [&](std::vector<float> &v, float lo) {
      v.resize((size_t)n);
      for (float &e : v)
        e = lo + std::fabs(u(rng));
    };
    x.resize((size_t)n);
    for (float &e : x)
      e = u(rng);
    fill(b, 0.5f);
    g.resize((size_t)n);
    for (float &e : g)
      e = u(rng);
    y.resize((size_t)n);
    fill(r0, 0.0f);
    fill(r1, 0.0f);
    fill(r2, 0.0f);
    fill(r3, 0.0f);
    acc.assign((size_t)n, 0.0);
    mask.resize((size_t)n);
    for (uint8_t &m : mask)
      m = rng() % 2;
  }
};

std::vector<Loop> loops(Data &d) {
  std::vector<Loop> l;
  auto unary = [&](const char *name, simd::Unary op,
                   const std::vector<float> &in) {
    const float *x = in.data();
    l.push_back({name, [&d, op, x](simd::Isa isa, int64_t n) {
                   simd::unaryF32(isa, op, x, d.y.data(), n, 0.1f);
                 }});
  };
  unary("relu", simd::Unary::Relu, d.x);
  unary("exp", simd::Unary::Exp, d.x);
  unary("log", simd::Unary::Log, d.b); // of positive inputs
  unary("tanh", simd::Unary::Tanh, d.x);
  unary("sigmoid", simd::Unary::Sigmoid, d.x);
  unary("erf", simd::Unary::Erf, d.x);
  unary("gelu", simd::Unary::Gelu, d.x);
  l.push_back({"add", [&d](simd::Isa isa, int64_t n) {
                 simd::binaryF32(isa, simd::Binary::Add, d.x.data(), 1,
                                 d.b.data(), 1, d.y.data(), n);
               }});
  l.push_back({"mul by a scalar", [&d](simd::Isa isa, int64_t n) {
                 simd::binaryF32(isa, simd::Binary::Mul, d.x.data(), 1,
                                 d.b.data(), 0, d.y.data(), n);
               }});
  l.push_back({"div", [&d](simd::Isa isa, int64_t n) {
                 simd::binaryF32(isa, simd::Binary::Div, d.x.data(), 1,
                                 d.b.data(), 1, d.y.data(), n);
               }});
  auto grad = [&](const char *name, simd::Grad op) {
    l.push_back({name, [&d, op](simd::Isa isa, int64_t n) {
                   simd::gradF32(isa, op, d.g.data(), d.x.data(), d.y.data(), n,
                                 0.1f);
                 }});
  };
  grad("relu_backward", simd::Grad::Relu);
  grad("tanh_backward", simd::Grad::Tanh);
  grad("gelu_backward", simd::Grad::Gelu);
  l.push_back({"dropout (ratio 0.5)", [&d](simd::Isa isa, int64_t n) {
                 simd::DropoutStream s;
                 s.k1 = 0x1234567u;
                 s.k2 = 0x89abcdefu;
                 s.threshold = (uint64_t)1 << 31;
                 simd::dropoutF32(isa, s, 0, d.x.data(), d.y.data(),
                                  d.mask.data(), n, 2.0f);
               }});
  l.push_back({"mask_scale", [&d](simd::Isa isa, int64_t n) {
                 simd::maskScaleF32(isa, d.x.data(), d.mask.data(), 2.0f,
                                    d.y.data(), n);
               }});
  l.push_back({"sum", [&d](simd::Isa isa, int64_t n) {
                 volatile double s = simd::sumF32(isa, d.x.data(), n);
                 (void)s;
               }});
  l.push_back({"accumulate", [&d](simd::Isa isa, int64_t n) {
                 simd::accumulateF32(isa, d.x.data(), d.acc.data(), n);
               }});
  l.push_back({"accumulate4", [&d](simd::Isa isa, int64_t n) {
                 const float *rows[4] = {d.r0.data(), d.r1.data(), d.r2.data(),
                                         d.r3.data()};
                 simd::accumulate4F32(isa, rows, d.acc.data(), n);
               }});
  return l;
}

// Mean nanoseconds per call over at least minMs.
double timeOnce(const Loop &loop, simd::Isa isa, int64_t n, double minMs) {
  loop.run(isa, n); // warm the caches and the code
  int64_t calls = 0;
  auto start = Clock::now();
  double ns = 0.0;
  do {
    for (int k = 0; k < 4; ++k)
      loop.run(isa, n);
    calls += 4;
    ns = std::chrono::duration<double, std::nano>(Clock::now() - start).count();
  } while (ns < minMs * 1e6);
  return ns / (double)calls;
}

std::vector<int64_t> parseSizes(const char *s) {
  std::vector<int64_t> v;
  for (const char *p = s; *p;) {
    v.push_back(strtoll(p, nullptr, 10));
    p = strchr(p, ',');
    if (!p)
      break;
    ++p;
  }
  return v;
}

} // namespace

int main(int argc, char **argv) {
  std::vector<int64_t> sizes = {4096, 1 << 20};
  int repeat = 7;
  double minMs = 20.0;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--sizes" && i + 1 < argc)
      sizes = parseSizes(argv[++i]);
    else if (a == "--repeat" && i + 1 < argc)
      repeat = atoi(argv[++i]);
    else if (a == "--min-ms" && i + 1 < argc)
      minMs = atof(argv[++i]);
    else {
      fprintf(stderr, "usage: %s [--sizes N,N...] [--repeat R] [--min-ms MS]\n",
              argv[0]);
      return 2;
    }
  }
  std::vector<simd::Isa> isas;
  for (simd::Isa isa : {simd::Isa::Scalar, simd::Isa::Avx2, simd::Isa::Avx512})
    if (simd::isaAvailable(isa))
      isas.push_back(isa);
  if (isas.size() < 2 || isas[1] != simd::Isa::Avx2) {
    fprintf(stderr, "this CPU has no AVX2, the peer of the comparison\n");
    return 1;
  }
  const bool has512 = isas.size() == 3;
  printf("1 thread; best of %d rounds of >= %.0f ms; elements per ns "
         "(higher is faster) and time relative to AVX2\n\n",
         repeat, minMs);
  printf("| loop | n | scalar el/ns | AVX2 el/ns | AVX-512 el/ns | "
         "scalar / AVX2 time | AVX-512 / AVX2 time |\n");
  printf("|---|---|---|---|---|---|---|\n");
  for (int64_t n : sizes) {
    Data d(n);
    for (const Loop &loop : loops(d)) {
      double best[3] = {1e300, 1e300, 1e300};
      for (int r = 0; r < repeat; ++r)
        for (size_t k = 0; k < isas.size(); ++k)
          best[k] = std::min(best[k], timeOnce(loop, isas[k], n, minMs));
      auto rate = [&](int k) { return (double)n / best[k]; };
      if (has512)
        printf("| %s | %lld | %.2f | %.2f | %.2f | %.2f | %.2f |\n", loop.name,
               (long long)n, rate(0), rate(1), rate(2), best[0] / best[1],
               best[2] / best[1]);
      else
        printf("| %s | %lld | %.2f | %.2f | - | %.2f | - |\n", loop.name,
               (long long)n, rate(0), rate(1), best[0] / best[1]);
      fflush(stdout);
    }
  }
  return 0;
}
