// batch_norm_kernels.cpp - tidal's batch-norm kernels (batch_norm.cpp)
// against oneDNN's batch-normalization primitive (the kernels tidal used
// before, and the peer) in the same run, training forward and backward, on
// the dense and the channel-blocked layout. Not a test: see bench/README.md
// "Batch normalization".
//
//   build/bin/tidalrt-bench-batch-norm [--threads 2] [--iters 200]
//                                      [--shapes 4x64x56x56,4x192x2x2]
//
// Each (shape, layout, kernel) runs --iters times after one warm-up call;
// the median call is reported. tidal and oneDNN alternate per shape, so
// drift in the machine's load hits both alike. Prints a markdown table of
// microseconds per call and the ratio tidal / oneDNN (< 1: tidal faster).
#include "../runtime/test/kernel_test_util.h"
#include "tidalrt/tidalrt.h"

#include <dnnl.hpp>
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;
using memory = dnnl::memory;

struct Shape {
  int64_t n, c, h, w;
  int64_t numel() const { return n * c * h * w; }
};

template <typename F> double medianUs(int iters, F &&f) {
  f();
  std::vector<double> t;
  for (int i = 0; i < iters; ++i) {
    auto a = Clock::now();
    f();
    t.push_back(
        std::chrono::duration<double, std::micro>(Clock::now() - a).count());
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

struct Data {
  std::vector<float> x, y, dy, dx, scale, bias, rm, rv, nm, nv, mean, var, ds,
      db;
  explicit Data(const Shape &s)
      : x(s.numel()), y(s.numel()), dy(s.numel()), dx(s.numel()),
        scale(s.c, 1.0f), bias(s.c, 0.0f), rm(s.c, 0.0f), rv(s.c, 1.0f),
        nm(s.c), nv(s.c), mean(s.c), var(s.c), ds(s.c), db(s.c) {
    for (int64_t i = 0; i < s.numel(); ++i) {
      x[i] = (float)((i * 7919) % 1000) / 500.0f - 1.0f;
      dy[i] = (float)((i * 104729) % 1000) / 500.0f - 1.0f;
    }
  }
};

// tidal's kernels on a prepared context: forward and backward medians.
std::pair<double, double> timeTidal(const Shape &s, bool blocked, Data &d,
                                    int threads, int iters) {
  std::vector<int64_t> dims = {s.n, s.c, s.h, s.w}, perC = {s.c};
  using tidalrt_test::KernelCall;
  auto data = [&](KernelCall &call, float *p) -> KernelCall & {
    return blocked ? call.blocked(dims, p) : call.f32(dims, p);
  };
  KernelCall f;
  data(f, d.x.data())
      .f32(perC, d.scale.data())
      .f32(perC, d.bias.data())
      .f32(perC, d.rm.data())
      .f32(perC, d.rv.data());
  data(f, d.y.data())
      .f32(perC, d.nm.data())
      .f32(perC, d.nv.data())
      .f32(perC, d.mean.data())
      .f32(perC, d.var.data())
      .attrAbsent()
      .attrAbsent()
      .attrFloat(1e-5)
      .attrFloat(0.9)
      .attrInt(0);
  KernelCall b;
  data(b, d.dy.data());
  data(b, d.x.data())
      .f32(perC, d.scale.data())
      .f32(perC, d.mean.data())
      .f32(perC, d.var.data());
  data(b, d.dx.data()).f32(perC, d.ds.data()).f32(perC, d.db.data());
  b.attrFloat(1e-5);
  double result[2];
  int k = 0;
  for (auto [call, fn] : {std::make_pair(&f, &tidalrt_k_batch_norm_training),
                          std::make_pair(&b, &tidalrt_k_batch_norm_backward)}) {
    tidalrt_context_options_t options = {1, 0};
    tidalrt_context_t *ctx = nullptr;
    tidalrt_context_create(&options, &ctx);
    tidalrt_context_set_threads(ctx, threads);
    std::vector<int64_t> desc = call->descriptor();
    auto run = [&] {
      if (tidalrt_status_t st = fn(ctx, desc.data(), call->pointers().data())) {
        std::fprintf(stderr, "tidal: %s\n", tidalrt_status_message(st));
        std::exit(1);
      }
    };
    tidalrt_context_begin_prepare(ctx);
    run();
    tidalrt_context_end_prepare(ctx);
    result[k++] = medianUs(iters, run);
    tidalrt_context_free(ctx);
  }
  return {result[0], result[1]};
}

// oneDNN's primitive on the same layout: forward training and backward.
std::pair<double, double> timeOneDnn(const Shape &s, bool blocked, Data &d,
                                     int iters) {
  static dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  dnnl::stream stream(engine);
  memory::dims dims = {s.n, s.c, s.h, s.w};
  auto tag = !blocked                        ? memory::format_tag::nchw
             : tidalrt_channel_block() == 16 ? memory::format_tag::nChw16c
                                             : memory::format_tag::nChw8c;
  memory::desc data(dims, memory::data_type::f32, tag);
  memory::desc perC({s.c}, memory::data_type::f32, memory::format_tag::a);
  auto flags = dnnl::normalization_flags::use_scale |
               dnnl::normalization_flags::use_shift;
  dnnl::batch_normalization_forward::primitive_desc fpd(
      {dnnl::prop_kind::forward_training, data, 1e-5f, flags}, engine);
  dnnl::batch_normalization_backward::primitive_desc bpd(
      {dnnl::prop_kind::backward, data, data, 1e-5f, flags}, engine, fpd);
  auto mem = [&](const memory::desc &md, std::vector<float> &v) {
    return memory(md, engine, v.data());
  };
  memory x = mem(data, d.x), y = mem(data, d.y), dy = mem(data, d.dy),
         dx = mem(data, d.dx), scale = mem(perC, d.scale),
         bias = mem(perC, d.bias), mean = mem(perC, d.mean),
         var = mem(perC, d.var), ds = mem(perC, d.ds), db = mem(perC, d.db);
  dnnl::batch_normalization_forward fwd(fpd);
  dnnl::batch_normalization_backward bwd(bpd);
  double f = medianUs(iters, [&] {
    fwd.execute(stream, {{DNNL_ARG_SRC, x},
                         {DNNL_ARG_SCALE, scale},
                         {DNNL_ARG_SHIFT, bias},
                         {DNNL_ARG_DST, y},
                         {DNNL_ARG_MEAN, mean},
                         {DNNL_ARG_VARIANCE, var}});
    stream.wait();
  });
  double b = medianUs(iters, [&] {
    bwd.execute(stream, {{DNNL_ARG_DIFF_DST, dy},
                         {DNNL_ARG_SRC, x},
                         {DNNL_ARG_SCALE, scale},
                         {DNNL_ARG_SHIFT, scale},
                         {DNNL_ARG_MEAN, mean},
                         {DNNL_ARG_VARIANCE, var},
                         {DNNL_ARG_DIFF_SRC, dx},
                         {DNNL_ARG_DIFF_SCALE, ds},
                         {DNNL_ARG_DIFF_SHIFT, db}});
    stream.wait();
  });
  return {f, b};
}

std::vector<Shape> parseShapes(const char *text) {
  std::vector<Shape> shapes;
  std::string s = text;
  size_t at = 0;
  while (at < s.size()) {
    size_t end = s.find(',', at);
    std::string one = s.substr(at, end == std::string::npos ? end : end - at);
    Shape sh{};
    if (std::sscanf(one.c_str(), "%ldx%ldx%ldx%ld", &sh.n, &sh.c, &sh.h,
                    &sh.w) != 4) {
      std::fprintf(stderr, "bad shape '%s' (want NxCxHxW)\n", one.c_str());
      std::exit(2);
    }
    shapes.push_back(sh);
    if (end == std::string::npos)
      break;
    at = end + 1;
  }
  return shapes;
}

} // namespace

int main(int argc, char **argv) {
  int threads = 2, iters = 200;
  // ResNet-style stages at 224 and 32 pixels, and the small spatial sizes
  // of MobileNet-v2 at 32 pixels (the real-model suite's size).
  const char *shapes = "4x64x56x56,4x128x28x28,4x256x14x14,4x512x7x7,"
                       "16x32x32x32,16x64x8x8,4x96x8x8,4x192x2x2,4x1280x1x1";
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--threads") && i + 1 < argc)
      threads = std::atoi(argv[++i]);
    else if (!std::strcmp(argv[i], "--iters") && i + 1 < argc)
      iters = std::atoi(argv[++i]);
    else if (!std::strcmp(argv[i], "--shapes") && i + 1 < argc)
      shapes = argv[++i];
    else {
      std::fprintf(stderr,
                   "usage: %s [--threads T] [--iters N] [--shapes "
                   "NxCxHxW,...]\n",
                   argv[0]);
      return 2;
    }
  }
  omp_set_num_threads(threads);
  std::printf("threads %d, channel block %d, median of %d calls (us)\n\n",
              threads, tidalrt_channel_block(), iters);
  std::printf("| shape | layout | tidal fwd | oneDNN fwd | tidal bwd | "
              "oneDNN bwd | tidal / oneDNN (fwd + bwd) |\n");
  std::printf("|---|---|---|---|---|---|---|\n");
  for (const Shape &s : parseShapes(shapes))
    for (bool blocked : {false, true}) {
      if (blocked && s.c % tidalrt_channel_block())
        continue;
      Data d(s);
      auto t = timeTidal(s, blocked, d, threads, iters);
      auto o = timeOneDnn(s, blocked, d, iters);
      std::printf("| %ldx%ldx%ldx%ld | %s | %.1f | %.1f | %.1f | %.1f | "
                  "%.2f |\n",
                  s.n, s.c, s.h, s.w, blocked ? "blocked" : "dense", t.first,
                  o.first, t.second, o.second,
                  (t.first + t.second) / (o.first + o.second));
    }
  return 0;
}
