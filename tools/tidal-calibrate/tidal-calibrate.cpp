//===- tidal-calibrate.cpp - measure the cost model's host figures --------===//
//
//   tidal-calibrate [-o profile.json] [--threads N] [--quick] [--link-gbps X]
//   tidal-calibrate --check FILE [-o out.json]
//
// Measures this machine's host figures through the runtime's own kernels
// (tidalrt's C kernel ABI) and writes a machine profile
// (docs/cost-model.md):
//
// - sgemm GFLOP/s: the oneDNN matmul kernel on square sizes, the median of
//   repeats per size, the best size reported; once with oneDNN's best ISA
//   and, on an AVX-512 machine, once limited to AVX2. oneDNN's ISA limit
//   must be set before its first use, so each measurement runs in a forked
//   child (which also keeps a crash or hang there from taking the tool
//   down: a child that overruns its time is killed);
// - memory bandwidth: the add kernel over three large arrays (STREAM "add"),
//   bytes counted as the cost model counts them (operands + result);
// - per-kernel overhead: a tiny relu call, the median microseconds;
// - the parallel grain: the add kernel's size from which the OpenMP team
//   beats one thread (ParallelGrain.h), which programs compiled with the
//   profile use to keep smaller loops on one thread.
//
// The device and the link are the documented defaults (a --link-gbps link
// is "sim"). The JSON goes to -o (temp file + rename) or stdout, and a
// one-line summary to stderr. Errors are one line, exit status 1.
//
// --check FILE loads and validates a profile and prints it normalised.
//
//===----------------------------------------------------------------------===//

#include "CalibrateOptions.h"
#include "KernelCall.h"
#include "NetworkTimes.h"
#include "OpTimes.h"
#include "ParallelGrain.h"
#include "SimLinkTimes.h"
#include "Support.h"

#include "tidal/Dialect/Tidal/Analysis/DeviceProfile.h"

#include "tidalrt/tidalrt.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Signals.h"
#include "llvm/Support/raw_ostream.h"

#include <omp.h>
#include <oneapi/dnnl/dnnl.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fcntl.h>
#include <fstream>
#include <functional>
#include <memory>
#include <poll.h>
#include <signal.h>
#include <sstream>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

using namespace llvm;
using namespace mlir::tidal;
using namespace calibrate;

namespace {

/// How long and how often each figure is measured.
struct Plan {
  std::vector<int64_t> sgemmSizes;
  int reps;             ///< timed repeats per figure (the median is kept)
  double repSeconds;    ///< each repeat runs calls for at least this long
  int64_t streamFloats; ///< elements of each array of the bandwidth test
  int64_t overheadCalls;
  double childTimeoutS;
  bool verbose = false;
};

Plan makePlan(bool quick) {
  if (quick)
    return {{256, 512, 1024}, 3, 0.02, 16 << 20, 500, 30};
  return {{256, 512, 1024, 2048}, 7, 0.1, 32 << 20, 2000, 240};
}

/// The median rate of `call`, in `work` units per call per second: calls
/// to warm up, then `plan.reps` repeats of enough calls to last
/// `plan.repSeconds`. `firstCallS` returns the first call's time.
std::string measureRate(KernelCall &call, double work, const Plan &plan,
                        const std::string &label, double &rate,
                        double *firstCallS = nullptr) {
  Clock::time_point start = Clock::now();
  std::string error = call.run();
  if (!error.empty())
    return error;
  double once = std::max(secondsSince(start), 1e-9);
  if (firstCallS)
    *firstCallS = once;
  // Warm up (caches, the OpenMP pool, clocks) for a quarter of a repeat,
  // which also gives a better per-call estimate than the first call.
  int64_t warm = 1;
  start = Clock::now();
  while (once < 1.0 && secondsSince(start) < plan.repSeconds / 4) {
    if (!(error = call.run()).empty())
      return error;
    ++warm;
  }
  if (warm > 1)
    once = std::max(secondsSince(start) / (double)(warm - 1), 1e-9);
  int64_t calls =
      std::max<int64_t>(1, (int64_t)std::ceil(plan.repSeconds / once));
  std::vector<double> rates;
  for (int r = 0; r < plan.reps; ++r) {
    start = Clock::now();
    if (!(error = call.run(calls)).empty())
      return error;
    double s = std::max(secondsSince(start), 1e-9);
    rates.push_back(work * (double)calls / s);
    // Re-aim after the first repeat, whose single-call estimate may have
    // included one-off costs.
    if (r == 0)
      calls = std::max<int64_t>(
          1, (int64_t)std::ceil(plan.repSeconds * (double)calls / s));
  }
  rate = median(rates);
  if (plan.verbose)
    llvm::errs() << "tidal-calibrate: " << label << ": median "
                 << format("%.2f", rate) << " (min "
                 << format("%.2f",
                           *std::min_element(rates.begin(), rates.end()))
                 << ", max "
                 << format("%.2f",
                           *std::max_element(rates.begin(), rates.end()))
                 << ") over " << rates.size() << " repeats of " << calls
                 << " calls\n";
  return "";
}

/// The median microseconds of one call of the prepared `call`: batches of
/// `plan.overheadCalls` calls after one warm-up batch.
std::string medianCallUs(KernelCall &call, const Plan &plan, const char *label,
                         double &result) {
  std::string error = call.run(plan.overheadCalls); // warm-up
  if (!error.empty())
    return error;
  std::vector<double> us;
  for (int r = 0; r < std::max(plan.reps, 7); ++r) {
    Clock::time_point start = Clock::now();
    if (!(error = call.run(plan.overheadCalls)).empty())
      return error;
    us.push_back(secondsSince(start) * 1e6 / (double)plan.overheadCalls);
  }
  result = median(us);
  if (plan.verbose)
    llvm::errs() << "tidal-calibrate: " << label << " us/call: median "
                 << format("%.3f", result) << " (min "
                 << format("%.3f", *std::min_element(us.begin(), us.end()))
                 << ", max "
                 << format("%.3f", *std::max_element(us.begin(), us.end()))
                 << ") over " << us.size() << " repeats of "
                 << plan.overheadCalls << " calls\n";
  return "";
}

//===----------------------------------------------------------------------===//
// sgemm, in a child process per ISA
//===----------------------------------------------------------------------===//

struct SgemmResult {
  int isa = 0; ///< dnnl_get_effective_cpu_isa()
  double gflops = 0;
  int64_t bestSize = 0;
};

/// "avx512", "avx2" or "sse41": the profile's name of a oneDNN ISA.
std::string isaClass(int isa) {
  if ((isa & dnnl_cpu_isa_avx512_core) == dnnl_cpu_isa_avx512_core)
    return "avx512";
  if ((isa & dnnl_cpu_isa_avx2) == dnnl_cpu_isa_avx2)
    return "avx2";
  return "sse41";
}

const char *isaName(int isa) {
  switch (isa) {
  case dnnl_cpu_isa_sse41:
    return "sse41";
  case dnnl_cpu_isa_avx:
    return "avx";
  case dnnl_cpu_isa_avx2:
    return "avx2";
  case dnnl_cpu_isa_avx2_vnni:
    return "avx2_vnni";
  case dnnl_cpu_isa_avx512_mic:
    return "avx512_mic";
  case dnnl_cpu_isa_avx512_mic_4ops:
    return "avx512_mic_4ops";
  case dnnl_cpu_isa_avx512_core:
    return "avx512_core";
  case dnnl_cpu_isa_avx512_core_vnni:
    return "avx512_core_vnni";
  case dnnl_cpu_isa_avx512_core_bf16:
    return "avx512_core_bf16";
  case dnnl_cpu_isa_avx512_core_amx:
    return "avx512_core_amx";
  default:
    return "unknown";
  }
}

/// Runs in the child: limits oneDNN to `maxIsa` (before its first use) and
/// measures the matmul kernel. Returns the line sent to the parent.
std::string sgemmChild(dnnl_cpu_isa_t maxIsa, const Plan &plan) {
  if (dnnl_set_max_cpu_isa(maxIsa) != dnnl_success)
    return "error oneDNN refused the ISA limit (was it already used?)";
  SgemmResult best;
  best.isa = (int)dnnl_get_effective_cpu_isa();
  for (int64_t n : plan.sgemmSizes) {
    std::string error;
    Buffer a = allocate(n * n, error), b = allocate(n * n, error),
           y = allocate(n * n, error);
    if (!error.empty())
      return "error " + error;
    KernelCall call(tidalrt_k_matmul, {{n, n}, {n, n}, {n, n}},
                    {a.get(), b.get(), y.get()});
    if (!(error = call.prepare()).empty())
      return "error matmul " + std::to_string(n) + ": " + error;
    double rate = 0, once = 0;
    std::string label =
        "sgemm " + std::to_string(n) + " [" + isaName(best.isa) + "] GFLOP/s";
    if (!(error = measureRate(call, 2.0 * n * n * n / 1e9, plan, label, rate,
                              &once))
             .empty())
      return "error matmul " + std::to_string(n) + ": " + error;
    if (rate > best.gflops) {
      best.gflops = rate;
      best.bestSize = n;
    }
    // A very slow machine: larger sizes would only take longer.
    if (once > 1.0)
      break;
  }
  if (plan.verbose) {
    // For information: what a oneDNN primitive call costs beyond a plain
    // kernel's (the profile's overhead is the relu call's).
    std::string error;
    Buffer a = allocate(64, error), b = allocate(64, error),
           y = allocate(64, error);
    KernelCall call(tidalrt_k_matmul, {{8, 8}, {8, 8}, {8, 8}},
                    {a.get(), b.get(), y.get()});
    double us = 0;
    if (error.empty() && (error = call.prepare()).empty())
      error = medianCallUs(call, plan, "sgemm 8", us);
    if (!error.empty())
      return "error matmul 8: " + error;
  }
  std::ostringstream os;
  os.precision(17);
  os << "ok " << best.isa << " " << best.gflops << " " << best.bestSize;
  return os.str();
}

SgemmResult measureSgemm(dnnl_cpu_isa_t maxIsa, const char *what,
                         const Plan &plan) {
  std::string line;
  std::string error = runInChild([&] { return sgemmChild(maxIsa, plan); },
                                 plan.childTimeoutS, line);
  if (!error.empty())
    fatal(Twine("sgemm measurement (") + what + ") " + error);
  if (StringRef(line).starts_with("error "))
    fatal(Twine("sgemm measurement (") + what + "): " + line.substr(6));
  std::istringstream is(line);
  std::string ok;
  SgemmResult r;
  if (!(is >> ok >> r.isa >> r.gflops >> r.bestSize) || ok != "ok" ||
      !(r.gflops > 0))
    fatal(Twine("sgemm measurement (") + what + "): unexpected result '" +
          line + "'");
  return r;
}

//===----------------------------------------------------------------------===//
// Bandwidth and overhead (in this process, after the children)
//===----------------------------------------------------------------------===//

double measureBandwidth(const Plan &plan) {
  int64_t n = plan.streamFloats;
  std::string error;
  Buffer x = allocate(n, error), y = allocate(n, error), z = allocate(n, error);
  if (!error.empty())
    fatal("bandwidth measurement: " + error);
  KernelCall call(tidalrt_k_add, {{n}, {n}, {n}}, {x.get(), y.get(), z.get()});
  double rate = 0;
  if (!(error = call.prepare()).empty() ||
      !(error = measureRate(call, 3.0 * n * sizeof(float) / 1e9, plan,
                            "add GB/s", rate))
           .empty())
    fatal("bandwidth measurement (add): " + error);
  return rate;
}

double measureOverheadUs(const Plan &plan) {
  std::string error;
  Buffer x = allocate(16, error), y = allocate(16, error);
  if (!error.empty())
    fatal("overhead measurement: " + error);
  KernelCall call(tidalrt_k_relu, {{16}, {16}}, {x.get(), y.get()});
  double us = 0;
  if (!(error = call.prepare()).empty() ||
      !(error = medianCallUs(call, plan, "relu [16]", us)).empty())
    fatal("overhead measurement (relu): " + error);
  return us;
}

//===----------------------------------------------------------------------===//
// Machine description and output
//===----------------------------------------------------------------------===//

/// Times the kernel ops of `opts.ops` into `host.opUs` (--ops).
void addOpTimes(const Options &opts, const Plan &plan, DeviceProfile &host) {
  if (opts.ops.empty())
    return;
  OpTimesOptions options;
  options.secondsPerOp = plan.repSeconds / 2;
  options.verbose = plan.verbose;
  std::map<std::string, double> times;
  std::string error = measureOpTimes(opts.ops, options, times);
  if (!error.empty())
    fatal(error);
  for (auto &[signature, us] : times)
    host.opUs[signature] = us;
}

std::string summary(const MachineProfile &p) {
  std::string s;
  raw_string_ostream os(s);
  const DeviceProfile &h = p.host;
  os << "host '" << h.name << "', " << h.threads << " threads, "
     << (h.isa.empty() ? "isa unrecorded" : h.isa) << ": sgemm "
     << format("%.1f", h.gflops) << " GFLOP/s (avx2 "
     << format("%.1f", h.gflopsAvx2) << ", avx512 "
     << format("%.1f", h.gflopsAvx512) << "), " << format("%.2f", h.gbytesPerS)
     << " GB/s, " << format("%.3f", h.opOverheadUs) << " us/kernel"
     << (h.parallelGrain ? ", parallel from " +
                               std::to_string(h.parallelGrain) + " elements"
                         : std::string())
     << (h.opUs.empty() ? ""
                        : ", " + std::to_string(h.opUs.size()) + " ops timed")
     << (h.calibrated ? "" : " (uncalibrated)") << "; device '" << p.device.name
     << "'; link '" << p.link.name << "' " << format("%g", p.link.gbytesPerS)
     << " GB/s";
  if (p.link.calibrated)
    os << ", " << format("%g", p.link.latencyUs) << " us a copy";
  if (!p.network.transport.empty())
    os << "; network '" << p.network.link.name << "' "
       << format("%g", p.network.link.gbytesPerS) << " GB/s, "
       << format("%g", p.network.link.latencyUs) << " us";
  return s;
}

} // namespace

int main(int argc, char **argv) {
  InitLLVM init(argc, argv);
  Options opts = parseOptions(argc, argv);

  if (!opts.check.empty()) {
    std::string error;
    FailureOr<MachineProfile> profile = loadMachineProfile(opts.check, error);
    if (failed(profile))
      fatal(error);
    Output out(opts.output);
    out.commit(machineProfileJson(*profile));
    llvm::errs() << "tidal-calibrate: " << opts.check
                 << ": valid profile: " << summary(*profile) << "\n";
    return 0;
  }

  if (opts.network) {
    // Only rank 0 writes (so the other ranks open no output at all).
    Clock::time_point start = Clock::now();
    NetworkResult result;
    std::string error;
    if (!measureNetwork(opts.quick, opts.verbose, result, error))
      fatal(error);
    if (result.rank != 0)
      return 0;
    MachineProfile p = defaultMachineProfile();
    if (!opts.from.empty()) {
      FailureOr<MachineProfile> from = loadMachineProfile(opts.from, error);
      if (failed(from))
        fatal(error);
      p = *from;
    } else {
      p.machine = hostName();
    }
    p.created = utcNow();
    p.network = result.network;
    std::string problem = validateMachineProfile(p);
    if (!problem.empty())
      fatal("the measured profile is not valid: " + problem);
    Output out(opts.output);
    out.commit(machineProfileJson(p));
    llvm::errs() << "tidal-calibrate: " << p.network.link.name << ": "
                 << format("%.3f", p.network.link.gbytesPerS) << " GB/s, "
                 << format("%.1f", p.network.link.latencyUs)
                 << " us a message (" << format("%.1f", secondsSince(start))
                 << " s)";
    if (!out.toStdout())
      llvm::errs() << " -> " << opts.output;
    llvm::errs() << "\n";
    return 0;
  }

  Clock::time_point start = Clock::now();
  Output out(opts.output);
  std::string load = loadNote();
  Plan plan = makePlan(opts.quick);
  plan.verbose = opts.verbose;
  int threads = opts.threads ? opts.threads : omp_get_max_threads();
  // Set before the children fork, so they inherit it; this creates no
  // OpenMP threads yet.
  omp_set_num_threads(threads);

  if (!opts.from.empty()) {
    // The op times only, added to an existing profile's figures.
    std::string error;
    FailureOr<MachineProfile> profile = loadMachineProfile(opts.from, error);
    if (failed(profile))
      fatal(error);
    if (profile->host.threads && opts.threads &&
        profile->host.threads != opts.threads)
      fatal(opts.from + " was measured with " + Twine(profile->host.threads) +
            " threads, not " + Twine(opts.threads));
    omp_set_num_threads(profile->host.threads ? (int)profile->host.threads
                                              : threads);
    size_t before = profile->host.opUs.size();
    addOpTimes(opts, plan, profile->host);
    profile->created = utcNow();
    out.commit(machineProfileJson(*profile));
    llvm::errs() << "tidal-calibrate: " << opts.from << " + "
                 << profile->host.opUs.size() - before << " ops timed ("
                 << profile->host.opUs.size() << " in the table; "
                 << format("%.1f", secondsSince(start)) << " s)";
    if (!out.toStdout())
      llvm::errs() << " -> " << opts.output;
    llvm::errs() << "\n";
    return 0;
  }

  SgemmResult best = measureSgemm(dnnl_cpu_isa_all, "default ISA", plan);
  std::string isa = isaClass(best.isa);
  SgemmResult avx2 = best;
  if (isa == "avx512")
    avx2 = measureSgemm(dnnl_cpu_isa_avx2, "AVX2", plan);
  double gbytes = measureBandwidth(plan);
  double overheadUs = measureOverheadUs(plan);
  std::string grainError;
  int64_t grain =
      measureParallelGrain(opts.quick ? 0.04 : 0.2, plan.verbose, grainError);
  if (!grainError.empty())
    fatal("parallel grain measurement (add): " + grainError);

  MachineProfile p = defaultMachineProfile();
  p.machine = hostName();
  p.created = utcNow();
  DeviceProfile &h = p.host;
  h.name = cpuModel();
  h.threads = threads;
  h.isa = isa;
  h.gflops = roundTo(best.gflops, 1);
  h.gflopsAvx512 = isa == "avx512" ? h.gflops : 0;
  h.gflopsAvx2 = isa == "sse41" ? 0 : roundTo(avx2.gflops, 1);
  h.gbytesPerS = roundTo(gbytes, 2);
  h.opOverheadUs = roundTo(overheadUs, 3);
  h.parallelGrain = grain;
  h.calibrated = true;
  if (opts.linkGbps > 0) {
    // The sim target's link: its rate as given, its per-copy cost measured
    // on a SIM device of the runtime.
    p.link = simulatedLinkProfile(opts.linkGbps);
    std::string simError;
    double latencyUs = measureSimCopyLatencyUs(
        opts.linkGbps, opts.quick ? 0.1 : 0.5, simError);
    if (latencyUs < 0)
      fatal("the sim link: " + simError);
    p.link.latencyUs = roundTo(latencyUs, 2);
    p.link.calibrated = true;
  }
  addOpTimes(opts, plan, h);

  std::string problem = validateMachineProfile(p);
  if (!problem.empty())
    fatal("the measured profile is not valid: " + problem);
  out.commit(machineProfileJson(p));
  llvm::errs() << "tidal-calibrate: " << summary(p) << " (oneDNN "
               << isaName(best.isa) << ", best sgemm at " << best.bestSize
               << "; " << (load.empty() ? "" : load + " before; ")
               << format("%.1f", secondsSince(start)) << " s)";
  if (!out.toStdout())
    llvm::errs() << " -> " << opts.output;
  llvm::errs() << "\n";
  return 0;
}
