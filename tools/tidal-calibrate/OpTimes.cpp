//===- OpTimes.cpp - measured kernel times of a step's ops ----------------===//
//
// See OpTimes.h. Each distinct op gets its own one-op context, prepared as
// the generated program prepares it, and buffers of its exact shapes: float
// data of magnitude [0.5, 1.5) and either sign (no zeros or denormals, both
// branches of activations), integers zero (valid indices and labels). The calls
// run in a forked child, so a kernel that crashes on made-up data fails the
// measurement, not the tool.
//
//===----------------------------------------------------------------------===//

#include "OpTimes.h"
#include "OpSequence.h"
#include "Support.h"

#include "tidal/Conversion/TidalToRuntime/Descriptor.h"
#include "tidal/Dialect/Tidal/Analysis/CostModel.h"
#include "tidal/Dialect/Tidal/IR/TidalOps.h"
#include "tidal/InitAll.h"

#include "tidalrt/tidalrt.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <sstream>

using namespace mlir;
using namespace mlir::tidal;

namespace calibrate {
namespace {

const llvm::StringMap<tidalrt_kernel_fn_t> &kernels() {
  static const llvm::StringMap<tidalrt_kernel_fn_t> table = [] {
    llvm::StringMap<tidalrt_kernel_fn_t> t;
#define TIDAL_CALIBRATE_KERNEL(name) t[#name] = &tidalrt_k_##name;
    TIDALRT_KERNEL_LIST(TIDAL_CALIBRATE_KERNEL)
#undef TIDAL_CALIBRATE_KERNEL
    return t;
  }();
  return table;
}

/// One kernel call to time.
struct Job {
  std::string signature;
  tidalrt_kernel_fn_t fn = nullptr;
  SmallVector<int64_t> desc;
  /// Per kernel tensor: its bytes (-1: an absent optional operand), and
  /// its element type if it holds floats (else null: integers, filled
  /// with zeros, or with ones for an optimizer's step counter).
  SmallVector<std::pair<int64_t, Type>> tensors;
  SmallVector<bool> ones;
};

/// The sequence is timed only while its buffers (every value's, no reuse)
/// stay under this.
constexpr int64_t kSequenceBytesLimit = int64_t(2) << 30;

struct FreeDeleter {
  void operator()(void *p) const { std::free(p); }
};

/// Fills `bytes` of element type `type` with values of magnitude in
/// [0.5, 1.5) for floats (no zeros or denormals), of either sign with
/// `signs` (both branches of activations), zeros otherwise.
void fill(void *data, int64_t bytes, Type type, bool signs = true) {
  std::memset(data, 0, bytes);
  if (!type)
    return;
  uint32_t x = 2463534242u;
  auto next = [&] {
    x ^= x << 13, x ^= x >> 17, x ^= x << 5;
    float magnitude = 0.5f + (float)(x >> 8) / (float)(1u << 24);
    return signs && (x & 1) ? -magnitude : magnitude;
  };
  if (type.isF32()) {
    float *p = static_cast<float *>(data);
    for (int64_t i = 0; i < bytes / 4; ++i)
      p[i] = next();
  } else if (type.isF64()) {
    double *p = static_cast<double *>(data);
    for (int64_t i = 0; i < bytes / 8; ++i)
      p[i] = next();
  } else if (type.isF16() || type.isBF16()) {
    uint16_t one = type.isF16() ? 0x3C00 : 0x3F80; // 1.0
    uint16_t *p = static_cast<uint16_t *>(data);
    for (int64_t i = 0; i < bytes / 2; ++i)
      p[i] = one;
  }
}

/// A 64-byte aligned buffer of `bytes` filled as `fill` does, holding 1 if
/// it is an optimizer's step count (`one`); null when out of memory.
void *filledBuffer(int64_t bytes, Type type, bool signs, bool one) {
  size_t size = ((size_t)std::max<int64_t>(bytes, 1) + 63) / 64 * 64;
  void *p = std::aligned_alloc(64, size);
  if (!p)
    return nullptr;
  fill(p, bytes, type, signs);
  if (one && bytes == 8)
    *static_cast<int64_t *>(p) = 1;
  return p;
}

std::string consume(tidalrt_status_t status) {
  std::string message = tidalrt_status_message(status);
  tidalrt_status_free(status);
  return message;
}

/// A job's buffers and prepared one-op context.
struct Prepared {
  std::vector<std::unique_ptr<void, FreeDeleter>> owned;
  std::vector<void *> buffers;
  std::unique_ptr<tidalrt_context_t, void (*)(tidalrt_context_t *)> ctx{
      nullptr, tidalrt_context_free};

  std::string prepare(const Job &job, bool signs) {
    for (auto [i, tensor] : llvm::enumerate(job.tensors)) {
      auto [bytes, type] = tensor;
      if (bytes < 0) {
        buffers.push_back(nullptr);
        continue;
      }
      void *p = filledBuffer(bytes, type, signs, job.ones[i]);
      if (!p)
        return "out of memory for a " + std::to_string(bytes) + "-byte tensor";
      owned.emplace_back(p);
      buffers.push_back(p);
    }
    tidalrt_context_options_t contextOptions = {1, 0};
    tidalrt_context_t *raw = nullptr;
    if (tidalrt_status_t s = tidalrt_context_create(&contextOptions, &raw))
      return consume(s);
    ctx.reset(raw);
    tidalrt_context_begin_prepare(ctx.get());
    if (tidalrt_status_t s = job.fn(ctx.get(), job.desc.data(), buffers.data()))
      return consume(s);
    if (tidalrt_status_t s = tidalrt_context_end_prepare(ctx.get()))
      return consume(s);
    return "";
  }
  std::string call(const Job &job) {
    if (tidalrt_status_t s = job.fn(ctx.get(), job.desc.data(), buffers.data()))
      return consume(s);
    return "";
  }
};

/// The fastest of five repeats of `once`, in microseconds per call, after
/// a warm-up of a fifth of the time: the time on a quiet machine (on a
/// shared one a repeat may include a time slice given to another process,
/// which a median of few repeats does not always filter).
std::string timeRepeats(const std::function<std::string()> &once,
                        double seconds, double &us) {
  Clock::time_point start = Clock::now();
  int64_t warm = 0;
  do {
    if (std::string error = once(); !error.empty())
      return error;
    ++warm;
  } while (secondsSince(start) < seconds / 5);
  // The fastest warm-up call sizes the repeats.
  double each = secondsSince(start) / (double)warm;
  for (int i = 0; i < 3; ++i) {
    Clock::time_point t = Clock::now();
    if (std::string error = once(); !error.empty())
      return error;
    each = std::min(each, secondsSince(t));
  }
  int64_t calls =
      std::max<int64_t>(1, (int64_t)(seconds / 5 / std::max(each, 1e-9)));
  std::vector<double> perCall;
  for (int r = 0; r < 5; ++r) {
    start = Clock::now();
    for (int64_t i = 0; i < calls; ++i)
      if (std::string error = once(); !error.empty())
        return error;
    perCall.push_back(secondsSince(start) / (double)calls * 1e6);
  }
  us = *std::min_element(perCall.begin(), perCall.end());
  return "";
}

} // namespace

std::string measureOpTimes(const std::vector<std::string> &files,
                           const OpTimesOptions &options,
                           std::map<std::string, double> &times) {
  DialectRegistry registry;
  registerAllDialects(registry);
  MLIRContext context(registry);
  std::string diagnostic;
  ScopedDiagnosticHandler handler(&context, [&](Diagnostic &diag) {
    if (diagnostic.empty())
      diagnostic = diag.str();
    return success();
  });
  std::vector<Job> jobs;
  llvm::StringMap<size_t> seen; // signature -> job
  Sequence sequence;
  for (const std::string &file : files) {
    diagnostic.clear();
    OwningOpRef<ModuleOp> module = parseSourceFile<ModuleOp>(file, &context);
    if (!module)
      return file + ": " + (diagnostic.empty() ? "cannot parse" : diagnostic);
    // The ops of the function with the most, in order, for the sequence;
    // every function's for the single-op times.
    func::FuncOp largest;
    auto size = [](func::FuncOp f) {
      return f.getBody().front().getOperations().size();
    };
    for (auto f : module->getOps<func::FuncOp>())
      if (!f.isExternal() && (!largest || size(f) > size(largest)))
        largest = f;
    if (largest && size(largest) > sequence.funcOps)
      sequence = Sequence(largest);
    module->walk([&](Operation *op) {
      auto kernel = kernels().find(op->getName().stripDialect());
      if (kernel == kernels().end() || !isa<TidalDialect>(op->getDialect()))
        return;
      std::string signature = opSignature(op);
      if (auto it = seen.find(signature); it != seen.end()) {
        sequence.add(op, kernel->second, it->second);
        return;
      }
      FailureOr<SmallVector<int64_t>> desc = encodeDescriptor(op, 0);
      if (failed(desc))
        return; // not expressible: the compiler would reject it too
      seen[signature] = jobs.size();
      sequence.add(op, kernel->second, jobs.size());
      Job job;
      job.signature = std::move(signature);
      job.fn = kernel->second;
      job.desc = std::move(*desc);
      for (Value v : kernelTensors(op)) {
        if (!v) {
          job.tensors.push_back({-1, Type()});
          job.ones.push_back(false);
          continue;
        }
        auto type = cast<ShapedType>(v.getType());
        Type element = type.getElementType();
        job.ones.push_back(isOptimizerUpdate(op) && type.getRank() == 0 &&
                           element.isInteger(64));
        job.tensors.push_back(
            {tensorByteSize(type), isa<FloatType>(element) ? element : Type()});
      }
      jobs.push_back(std::move(job));
    });
    sequence.func = nullptr; // gone with the module
  }
  if (jobs.empty())
    return "no kernel ops in " +
           (files.size() == 1 ? files.front() : std::string("the files"));

  std::string output;
  Type f32 = FloatType::getF32(&context); // not inside the forked child
  std::string error = runInChild(
      [&]() -> std::string {
        std::ostringstream os;
        os.precision(17);
        // Each op alone: with data of both signs for the table, and with
        // positive data as the sequence below runs it (a step's made-up
        // data flow of both signs meets NaNs from logs and roots of
        // negatives, and runs far slower than a real step).
        std::vector<double> isolatedUs;
        for (const Job &job : jobs) {
          double us = 0, positiveUs = 0;
          std::string problem;
          for (bool signs : {true, false}) {
            Prepared p;
            problem = p.prepare(job, signs);
            if (problem.empty())
              problem =
                  timeRepeats([&] { return p.call(job); }, options.secondsPerOp,
                              signs ? us : positiveUs);
            if (!problem.empty())
              break;
          }
          if (!problem.empty()) {
            os << "error\t" << job.signature << "\t" << problem << "\n";
            return os.str();
          }
          isolatedUs.push_back(positiveUs);
          os << us << "\t" << job.signature << "\n";
          if (options.verbose)
            llvm::errs() << "tidal-calibrate: " << us << " us  "
                         << job.signature << "\n";
        }
        // The step's ops one after another, each reading what the ones
        // before it wrote: what a call costs beyond its time in a loop of
        // itself (threads waking for another kernel, data in another
        // core's cache).
        int64_t arena = std::max<int64_t>(sequence.arenaBytes, 0);
        if (sequence.ops.empty() ||
            sequence.totalBytes + arena > kSequenceBytesLimit)
          return os.str();
        // Planned values share one arena (made-up positive floats: the
        // values' own types are not known per byte); the rest get buffers.
        std::unique_ptr<void, FreeDeleter> arenaBuffer;
        if (arena > 0) {
          arenaBuffer.reset(filledBuffer(arena, f32,
                                         /*signs=*/false, false));
          if (!arenaBuffer)
            return os.str();
        }
        std::vector<std::unique_ptr<void, FreeDeleter>> owned;
        std::vector<void *> address;
        struct Reset {
          char *p;
          int64_t bytes;
          bool one;
        };
        std::vector<Reset> resets;

        for (size_t id = 0; id < sequence.bytes.size(); ++id) {
          int64_t bytes = sequence.bytes[id];
          if (sequence.arenaOffset[id] >= 0) {
            char *p = static_cast<char *>(arenaBuffer.get()) +
                      sequence.arenaOffset[id];
            // Integers (indices, labels, counters) as the own buffers hold
            // them: zero, or one for an optimizer's step count.
            if (!sequence.types[id])
              std::memset(p, 0, bytes);
            if (sequence.ones[id] && bytes == 8)
              *reinterpret_cast<int64_t *>(p) = 1;
            // An integer argument (labels, indices, a step count) whose
            // bytes later ops reuse is written again before each pass, as
            // the driver writes the inputs before each step. Float
            // arguments are updated in place from pass to pass, as in
            // training.
            if (!sequence.types[id] && sequence.isArgument[id])
              resets.push_back({p, bytes, (bool)sequence.ones[id]});
            address.push_back(p);
            continue;
          }
          void *p = filledBuffer(bytes, sequence.types[id], /*signs=*/false,
                                 sequence.ones[id]);
          if (!p)
            return os.str(); // too large here: no sequence figure
          const std::vector<char> &init = sequence.init[id];
          if ((int64_t)init.size() == bytes)
            std::memcpy(p, init.data(), init.size());
          owned.emplace_back(p);
          address.push_back(p);
        }
        // The float arguments (parameters, optimizer state) are set back
        // to their first values before each pass: passes of made-up
        // gradients otherwise drive them to infinities and NaNs within a
        // few hundred passes, whose lanes the vector math computes with
        // the scalar libm (a transformer block's GELU 4-8x slower than
        // alone). The copies' own time is measured and taken off.
        struct Snapshot {
          void *p;
          std::vector<char> bytes;
        };
        std::vector<Snapshot> snapshots;
        for (size_t id = 0; id < sequence.bytes.size(); ++id)
          if (sequence.isArgument[id] && sequence.types[id]) {
            const char *p = static_cast<const char *>(address[id]);
            snapshots.push_back(
                {address[id], std::vector<char>(p, p + sequence.bytes[id])});
          }
        // Before each pass: the float arguments' first values, and the
        // integer arguments written again.
        auto restore = [&]() -> std::string {
          for (const Snapshot &snap : snapshots)
            std::memcpy(snap.p, snap.bytes.data(), snap.bytes.size());
          for (const Reset &r : resets) {
            std::memset(r.p, 0, r.bytes);
            if (r.one && r.bytes == 8)
              *reinterpret_cast<int64_t *>(r.p) = 1;
          }
          return "";
        };
        std::vector<std::vector<void *>> buffers;
        double alone = 0;
        for (const Sequence::Call &call : sequence.ops) {
          std::vector<void *> b;
          for (int id : call.tensors)
            b.push_back(id < 0 ? nullptr : address[id]);
          buffers.push_back(std::move(b));
          alone += isolatedUs[call.job];
        }
        tidalrt_context_options_t contextOptions = {sequence.ops.size(), 0};
        tidalrt_context_t *raw = nullptr;
        std::string problem;
        if (tidalrt_status_t st = tidalrt_context_create(&contextOptions, &raw))
          problem = consume(st);
        std::unique_ptr<tidalrt_context_t, void (*)(tidalrt_context_t *)> ctx(
            raw, tidalrt_context_free);
        auto pass = [&]() -> std::string {
          restore();
          for (auto [call, b] : llvm::zip(sequence.ops, buffers))
            if (tidalrt_status_t st =
                    call.fn(ctx.get(), call.desc.data(), b.data()))
              return consume(st);
          return "";
        };
        if (problem.empty()) {
          tidalrt_context_begin_prepare(ctx.get());
          problem = pass();
          if (tidalrt_status_t st = tidalrt_context_end_prepare(ctx.get());
              st && problem.empty())
            problem = consume(st);
        }
        double passUs = 0, restoreUs = 0;
        if (problem.empty())
          problem = timeRepeats(pass, options.secondsPerOp * 5, passUs);
        if (problem.empty() && (!snapshots.empty() || !resets.empty()) &&
            timeRepeats(restore, options.secondsPerOp, restoreUs).empty())
          passUs = std::max(0.0, passUs - restoreUs);
        if (!problem.empty()) {
          os << "error\tthe step's ops in sequence\t" << problem << "\n";
          return os.str();
        }
        if (options.verbose) {
          // Which calls cost more in the step than alone: each call's
          // fastest time over 20 passes against its time alone.
          std::vector<double> inStep(sequence.ops.size(), 1e30);
          for (int rep = 0; rep < 20; ++rep) {
            restore();
            for (auto [i, call] : llvm::enumerate(sequence.ops)) {
              Clock::time_point t = Clock::now();
              if (tidalrt_status_t st =
                      call.fn(ctx.get(), call.desc.data(), buffers[i].data()))
                return consume(st);
              inStep[i] = std::min(inStep[i], secondsSince(t) * 1e6);
            }
          }
          std::vector<size_t> order(inStep.size());
          for (size_t i = 0; i < order.size(); ++i)
            order[i] = i;
          auto extra = [&](size_t i) {
            return inStep[i] - isolatedUs[sequence.ops[i].job];
          };
          llvm::sort(order,
                     [&](size_t a, size_t b) { return extra(a) > extra(b); });
          for (size_t k = 0; k < std::min<size_t>(8, order.size()); ++k) {
            size_t i = order[k];
            llvm::errs() << "tidal-calibrate: call " << i << " in the step "
                         << inStep[i] << " us, alone "
                         << isolatedUs[sequence.ops[i].job]
                         << " us: " << jobs[sequence.ops[i].job].signature
                         << "\n";
          }
        }
        if (options.verbose) {
          // What the passes left in the step's float values.
          int64_t nonFinite = 0, values = 0;
          for (size_t id = 0; id < sequence.bytes.size(); ++id)
            if (sequence.types[id] && sequence.types[id].isF32()) {
              const float *f = static_cast<const float *>(address[id]);
              for (int64_t k = 0; k < sequence.bytes[id] / 4; ++k, ++values)
                nonFinite += !std::isfinite(f[k]);
            }
          llvm::errs() << "tidal-calibrate: " << nonFinite << " of " << values
                       << " float values not finite after the passes\n";
        }
        double n = (double)sequence.ops.size();
        // Negative where the calls run faster together (data already in
        // cache from the op before); the cost model keeps each op's time
        // non-negative.
        double gap = (passUs - alone) / n;
        os << gap << "\t" << kSequenceOpKey << "\n";
        if (options.verbose)
          llvm::errs() << "tidal-calibrate: the step's " << sequence.ops.size()
                       << " calls in sequence"
                       << (arena > 0 ? " on the planned arena of " +
                                           std::to_string(arena) + " bytes"
                                     : std::string())
                       << " take " << passUs << " us, alone " << alone
                       << " us: " << gap << " us more per call\n";
        return os.str();
      },
      options.timeoutS, output);
  if (!error.empty())
    return "measuring the ops " + error;
  std::istringstream in(output);
  std::string line;
  while (std::getline(in, line)) {
    size_t tab = line.find('\t');
    if (tab == std::string::npos)
      continue;
    std::string first = line.substr(0, tab), rest = line.substr(tab + 1);
    if (first == "error") {
      size_t second = rest.find('\t');
      return rest.substr(0, second) + ": " + rest.substr(second + 1);
    }
    times[rest] = roundTo(std::strtod(first.c_str(), nullptr), 3);
  }
  return "";
}

} // namespace calibrate
