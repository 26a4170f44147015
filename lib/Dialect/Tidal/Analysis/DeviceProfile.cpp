//===- DeviceProfile.cpp - measured or documented machine figures ---------===//
//
// The defaults are documented, with their sources, in docs/cost-model.md.
//
//===----------------------------------------------------------------------===//

#include "tidal/Dialect/Tidal/Analysis/DeviceProfile.h"
#include "tidal/Support/Json.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <charconv>
#include <cmath>

using namespace mlir;
using namespace mlir::tidal;
using llvm::StringRef;

DeviceProfile tidal::defaultHostProfile() {
  DeviceProfile p;
  p.name = "host (uncalibrated default)";
  p.gflops = 100;
  p.gbytesPerS = 10;
  p.opOverheadUs = 2;
  p.threads = 2;
  p.isa = "avx2";
  p.gflopsAvx2 = 100;
  return p;
}

DeviceProfile tidal::defaultDeviceProfile() {
  DeviceProfile p;
  p.name = "H100 SXM (documented default)";
  p.gflops = 50000;    // 75% of the 66.9 TFLOP/s FP32 (non-tensor) peak
  p.gbytesPerS = 2800; // 84% of the 3.35 TB/s HBM3 peak
  p.opOverheadUs = 5;  // launch + stream bookkeeping per kernel
  p.memoryBytes = 81559LL << 20; // 80 GB HBM3 as the driver reports it
  return p;
}

LinkProfile tidal::defaultLinkProfile() {
  LinkProfile p;
  p.name = "PCIe 5.0 x16 pinned (documented default)";
  p.gbytesPerS = 50; // of 63 GB/s per direction after 128b/130b coding
  p.latencyUs = 10;  // cudaMemcpyAsync + synchronisation of a small copy
  return p;
}

LinkProfile tidal::simulatedLinkProfile(double gbytesPerS, double latencyUs) {
  LinkProfile p = defaultLinkProfile();
  p.name = "sim";
  p.gbytesPerS = gbytesPerS;
  if (latencyUs >= 0)
    p.latencyUs = latencyUs;
  return p;
}

MachineProfile tidal::defaultMachineProfile() {
  MachineProfile p;
  p.machine = "default";
  p.host = defaultHostProfile();
  p.device = defaultDeviceProfile();
  p.link = defaultLinkProfile();
  return p;
}

LinkProfile tidal::defaultCommProfile(StringRef network) {
  LinkProfile p;
  if (network == "nccl") {
    p.name = "nccl (default)";
    p.gbytesPerS = 300.0;
    p.latencyUs = 10.0;
    return p;
  }
  p.name = "mpi (default)";
  p.gbytesPerS = 5.0;
  p.latencyUs = 30.0;
  return p;
}

double tidal::allReduceMicroseconds(const LinkProfile &link, int64_t bytes,
                                    int64_t ranks) {
  if (ranks <= 1 || bytes <= 0)
    return 0;
  double moved = 2.0 * double(ranks - 1) / double(ranks) * double(bytes);
  return 2 * link.latencyUs + moved / (link.gbytesPerS * 1e3);
}

double tidal::copyMicroseconds(const LinkProfile &link, int64_t bytes) {
  if (bytes <= 0)
    return 0;
  // 1 GB/s moves 1e3 bytes per microsecond.
  return link.latencyUs + (double)bytes / (link.gbytesPerS * 1e3);
}

//===----------------------------------------------------------------------===//
// Validation
//===----------------------------------------------------------------------===//

/// The shortest text that reads back as `v` (std::to_chars), in fixed
/// notation where that stays short: "180.5", not "180.50000000000001" or
/// "1.805e+02".
static std::string formatNumber(double v) {
  if (!std::isfinite(v))
    return std::isnan(v) ? "nan" : v > 0 ? "inf" : "-inf";
  // JSON's -0 reads back as the integer 0: write every zero as "0" so that
  // profiles round-trip (fuzzing found "(sequence)": -0.0 did not).
  if (v == 0)
    return "0";
  char buf[64];
  double a = std::fabs(v);
  auto r = a >= 1e-6 && a < 1e16 ? std::to_chars(buf, buf + sizeof buf, v,
                                                 std::chars_format::fixed)
                                 : std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, r.ptr);
}

namespace {
/// Collects the first problem of a profile.
struct Checker {
  std::string error;

  void fail(StringRef field, const llvm::Twine &message) {
    if (error.empty())
      error = (field + ": " + message).str();
  }
  void positive(StringRef field, double v) {
    if (!std::isfinite(v) || v <= 0)
      fail(field, "must be positive, got " + formatNumber(v));
  }
  void nonNegative(StringRef field, double v) {
    if (!std::isfinite(v) || v < 0)
      fail(field, "must be zero or positive, got " + formatNumber(v));
  }
  void named(StringRef field, const std::string &name) {
    if (name.empty())
      fail(field, "must not be empty");
  }
};
} // namespace

static bool knownIsa(StringRef isa) {
  return isa.empty() || isa == "avx512" || isa == "avx2" || isa == "sse41";
}

std::string tidal::validateMachineProfile(const MachineProfile &p) {
  Checker c;
  const std::pair<const char *, const DeviceProfile *> sections[] = {
      {"host", &p.host}, {"device", &p.device}};
  for (auto [section, d] : sections) {
    std::string s = section;
    c.named(s + ".name", d->name);
    c.positive(s + ".gflops", d->gflops);
    c.positive(s + ".gbytes_per_s", d->gbytesPerS);
    c.nonNegative(s + ".op_overhead_us", d->opOverheadUs);
    c.nonNegative(s + ".threads", (double)d->threads);
    c.nonNegative(s + ".parallel_grain", (double)d->parallelGrain);
    c.nonNegative(s + ".gflops_avx2", d->gflopsAvx2);
    c.nonNegative(s + ".gflops_avx512", d->gflopsAvx512);
    c.nonNegative(s + ".memory_bytes", (double)d->memoryBytes);
    if (!knownIsa(d->isa))
      c.fail(s + ".isa", "must be \"avx512\", \"avx2\" or \"sse41\", got \"" +
                             d->isa + "\"");
  }
  c.named("link.name", p.link.name);
  c.positive("link.gbytes_per_s", p.link.gbytesPerS);
  c.nonNegative("link.latency_us", p.link.latencyUs);
  if (!p.network.transport.empty()) {
    if (p.network.transport != "mpi" && p.network.transport != "nccl")
      c.fail("network.transport", "must be \"mpi\" or \"nccl\", got \"" +
                                      p.network.transport + "\"");
    if (p.network.ranks < 2)
      c.fail("network.ranks", "must be at least 2");
    c.named("network.name", p.network.link.name);
    c.positive("network.gbytes_per_s", p.network.link.gbytesPerS);
    c.nonNegative("network.latency_us", p.network.link.latencyUs);
  }
  return c.error;
}

//===----------------------------------------------------------------------===//
// Reading
//===----------------------------------------------------------------------===//

namespace {
/// Reads the fields of one JSON object, naming each in errors by its path
/// ("host.gflops").
class ObjectReader {
public:
  ObjectReader(const llvm::json::Object &object, std::string path,
               std::string &error)
      : object(object), path(std::move(path)), error(error) {}

  std::string field(StringRef key) const {
    return path.empty() ? key.str() : path + "." + key.str();
  }
  bool fail(StringRef key, const llvm::Twine &message) {
    if (error.empty())
      error = (field(key) + ": " + message).str();
    return false;
  }
  const llvm::json::Value *get(StringRef key, bool required) {
    seen.insert(key);
    const llvm::json::Value *v = object.get(key);
    if (!v && required)
      fail(key, "missing");
    return v;
  }

  bool string(StringRef key, std::string &out, bool required = true) {
    const llvm::json::Value *v = get(key, required);
    if (!v)
      return !required;
    std::optional<StringRef> s = v->getAsString();
    if (!s)
      return fail(key, "expected a string");
    out = s->str();
    return true;
  }
  bool number(StringRef key, double &out, bool required = true) {
    const llvm::json::Value *v = get(key, required);
    if (!v)
      return !required;
    std::optional<double> d = v->getAsNumber();
    if (!d)
      return fail(key, "expected a number");
    out = *d;
    return true;
  }
  bool integer(StringRef key, int64_t &out, bool required = true) {
    const llvm::json::Value *v = get(key, required);
    if (!v)
      return !required;
    std::optional<int64_t> i = v->getAsInteger();
    if (!i)
      return fail(key, "expected an integer");
    out = *i;
    return true;
  }
  bool boolean(StringRef key, bool &out, bool required = true) {
    const llvm::json::Value *v = get(key, required);
    if (!v)
      return !required;
    std::optional<bool> b = v->getAsBoolean();
    if (!b)
      return fail(key, "expected true or false");
    out = *b;
    return true;
  }
  const llvm::json::Object *child(StringRef key, bool required = true) {
    const llvm::json::Value *v = get(key, required);
    if (!v)
      return nullptr;
    const llvm::json::Object *o = v->getAsObject();
    if (!o)
      fail(key, "expected an object");
    return o;
  }
  /// Fails on the first field that was never asked for (a misspelling).
  bool noOthers() {
    std::vector<std::string> unknown;
    for (const auto &kv : object)
      if (!seen.contains(kv.first))
        unknown.push_back(kv.first.str());
    if (unknown.empty())
      return true;
    llvm::sort(unknown);
    return fail(unknown.front(), "unknown field");
  }

private:
  const llvm::json::Object &object;
  std::string path;
  std::string &error;
  llvm::StringSet<> seen;
};
} // namespace

static bool readDevice(ObjectReader &r, bool host, DeviceProfile &d) {
  if (!r.string("name", d.name) || !r.number("gflops", d.gflops) ||
      !r.number("gbytes_per_s", d.gbytesPerS) ||
      !r.number("op_overhead_us", d.opOverheadUs) ||
      !r.boolean("calibrated", d.calibrated, false))
    return false;
  if (host) {
    if (!r.integer("threads", d.threads, false) ||
        !r.string("isa", d.isa, false) ||
        !r.number("gflops_avx2", d.gflopsAvx2, false) ||
        !r.number("gflops_avx512", d.gflopsAvx512, false) ||
        !r.integer("parallel_grain", d.parallelGrain, false))
      return false;
    if (const llvm::json::Value *ops = r.get("op_us", false)) {
      const llvm::json::Object *table = ops->getAsObject();
      if (!table)
        return r.fail("op_us", "expected an object");
      for (const auto &[key, value] : *table) {
        // Every entry is a time but the sequence correction, which may
        // be negative.
        std::optional<double> us = value.getAsNumber();
        if (!us || !std::isfinite(*us) || (*us < 0 && key != "(sequence)"))
          return r.fail("op_us",
                        "'" + key.str() + "': expected microseconds >= 0");
        d.opUs[key.str()] = *us;
      }
    }
  } else if (!r.integer("memory_bytes", d.memoryBytes, false)) {
    return false;
  }
  return r.noOthers();
}

FailureOr<MachineProfile>
tidal::parseMachineProfile(StringRef json, StringRef name, std::string &error) {
  auto failWith = [&](const llvm::Twine &message) {
    error = (name + ": " + message).str();
    return failure();
  };
  llvm::Expected<llvm::json::Value> value = parseJsonBounded(json);
  if (!value)
    return failWith("invalid JSON: " + llvm::toString(value.takeError()));
  const llvm::json::Object *top = value->getAsObject();
  if (!top)
    return failWith("expected a JSON object");

  std::string problem;
  ObjectReader r(*top, "", problem);
  std::string format;
  if (!r.string("format", format))
    return failWith(problem);
  if (format != kMachineProfileFormat)
    return failWith(llvm::Twine("format: expected \"") + kMachineProfileFormat +
                    "\", got \"" + format + "\"");
  int64_t version = 0;
  if (!r.integer("version", version))
    return failWith(problem);
  if (version != kMachineProfileVersion)
    return failWith("version: " + llvm::Twine(version) +
                    " is not supported (this build reads version " +
                    llvm::Twine(kMachineProfileVersion) + ")");

  MachineProfile p;
  if (!r.string("machine", p.machine, false) ||
      !r.string("created", p.created, false))
    return failWith(problem);
  const std::pair<StringRef, DeviceProfile *> sections[] = {
      {"host", &p.host}, {"device", &p.device}};
  for (auto [key, d] : sections) {
    const llvm::json::Object *o = r.child(key);
    if (!o)
      return failWith(problem);
    ObjectReader section(*o, key.str(), problem);
    if (!readDevice(section, key == "host", *d))
      return failWith(problem);
  }
  const llvm::json::Object *o = r.child("link");
  if (!o)
    return failWith(problem);
  ObjectReader link(*o, "link", problem);
  if (!link.string("name", p.link.name) ||
      !link.number("gbytes_per_s", p.link.gbytesPerS) ||
      !link.number("latency_us", p.link.latencyUs) ||
      !link.boolean("calibrated", p.link.calibrated, false) || !link.noOthers())
    return failWith(problem);
  if (const llvm::json::Object *n = r.child("network", /*required=*/false)) {
    ObjectReader network(*n, "network", problem);
    if (!network.string("name", p.network.link.name) ||
        !network.string("transport", p.network.transport) ||
        !network.integer("ranks", p.network.ranks) ||
        !network.number("gbytes_per_s", p.network.link.gbytesPerS) ||
        !network.number("latency_us", p.network.link.latencyUs) ||
        !network.boolean("calibrated", p.network.link.calibrated, false) ||
        !network.noOthers())
      return failWith(problem);
  } else if (!problem.empty()) {
    return failWith(problem);
  }
  if (!r.noOthers())
    return failWith(problem);

  problem = validateMachineProfile(p);
  if (!problem.empty())
    return failWith(problem);
  return p;
}

FailureOr<MachineProfile> tidal::loadMachineProfile(StringRef path,
                                                    std::string &error) {
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> buffer =
      llvm::MemoryBuffer::getFile(path, /*IsText=*/true);
  if (!buffer) {
    error = (path + ": cannot read: " + buffer.getError().message()).str();
    return failure();
  }
  return parseMachineProfile((*buffer)->getBuffer(), path, error);
}

//===----------------------------------------------------------------------===//
// Writing
//===----------------------------------------------------------------------===//

/// Numbers are written by formatNumber, so that profiles round-trip
/// exactly and read well.
static void writeNumber(llvm::json::OStream &j, StringRef key, double v) {
  j.attributeBegin(key);
  if (std::isfinite(v))
    j.rawValue(formatNumber(v));
  else
    j.value(nullptr); // not a JSON number; validation rejects it
  j.attributeEnd();
}

static void writeDevice(llvm::json::OStream &j, const DeviceProfile &d,
                        bool host) {
  j.attribute("name", d.name);
  if (host) {
    j.attribute("threads", d.threads);
    if (!d.isa.empty())
      j.attribute("isa", d.isa);
  }
  writeNumber(j, "gflops", d.gflops);
  if (host) {
    writeNumber(j, "gflops_avx2", d.gflopsAvx2);
    writeNumber(j, "gflops_avx512", d.gflopsAvx512);
  }
  writeNumber(j, "gbytes_per_s", d.gbytesPerS);
  writeNumber(j, "op_overhead_us", d.opOverheadUs);
  if (host && d.parallelGrain)
    j.attribute("parallel_grain", d.parallelGrain);
  if (!host)
    j.attribute("memory_bytes", d.memoryBytes);
  j.attribute("calibrated", d.calibrated);
  if (host && !d.opUs.empty())
    j.attributeObject("op_us", [&] {
      for (const auto &[key, us] : d.opUs)
        writeNumber(j, key, us);
    });
}

std::string tidal::machineProfileJson(const MachineProfile &p) {
  std::string text;
  llvm::raw_string_ostream os(text);
  {
    llvm::json::OStream j(os, 2);
    j.object([&] {
      j.attribute("format", kMachineProfileFormat);
      j.attribute("version", kMachineProfileVersion);
      j.attribute("machine", p.machine);
      j.attribute("created", p.created);
      j.attributeObject("host", [&] { writeDevice(j, p.host, true); });
      j.attributeObject("device", [&] { writeDevice(j, p.device, false); });
      j.attributeObject("link", [&] {
        j.attribute("name", p.link.name);
        writeNumber(j, "gbytes_per_s", p.link.gbytesPerS);
        writeNumber(j, "latency_us", p.link.latencyUs);
        j.attribute("calibrated", p.link.calibrated);
      });
      if (!p.network.transport.empty())
        j.attributeObject("network", [&] {
          j.attribute("name", p.network.link.name);
          j.attribute("transport", p.network.transport);
          j.attribute("ranks", p.network.ranks);
          writeNumber(j, "gbytes_per_s", p.network.link.gbytesPerS);
          writeNumber(j, "latency_us", p.network.link.latencyUs);
          j.attribute("calibrated", p.network.link.calibrated);
        });
    });
  }
  os << "\n";
  return text;
}
