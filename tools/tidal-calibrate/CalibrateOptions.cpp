//===- CalibrateOptions.cpp - tidal-calibrate's command line --------------===//
//
// See CalibrateOptions.h.
//
//===----------------------------------------------------------------------===//

#include "CalibrateOptions.h"
#include "Support.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>
#include <cstdlib>

using namespace llvm;

namespace calibrate {

namespace {

const char *const usage =
    "USAGE: tidal-calibrate [-o FILE] [--threads N] [--quick] [--link-gbps X]\n"
    "       tidal-calibrate --ops STEP.mlir [--ops ...] [--from P.json] "
    "[-o FILE]\n"
    "       tidal-calibrate --check FILE [-o FILE]\n"
    "       mpirun -np N tidal-calibrate --network [--from P.json] [-o FILE]\n"
    "\n"
    "Measures this host's sgemm rate (with and without AVX-512), memory\n"
    "bandwidth and kernel overhead through the runtime's kernels, and writes\n"
    "a machine profile for tidal's cost model (docs/cost-model.md).\n"
    "\n"
    "  -o FILE          write the profile to FILE (temp file + rename);\n"
    "                   default or '-': stdout\n"
    "  --threads N      threads to measure with (default: OpenMP's,\n"
    "                   OMP_NUM_THREADS or every CPU)\n"
    "  --quick          fewer repeats and smaller arrays (under 5 s)\n"
    "  --link-gbps X    a simulated host<->device link of X GB/s (\"sim\")\n"
    "                   instead of the documented PCIe 5.0 default, its\n"
    "                   per-copy latency measured on a sim device\n"
    "  --ops STEP.mlir  also time every distinct kernel op of the step\n"
    "                   (tidalc --emit mlir --stop-after tidal-schedule) into\n"
    "                   the profile's host.op_us table (repeatable)\n"
    "  --from P.json    with --ops: add the op times to this profile's\n"
    "                   figures instead of measuring the host again\n"
    "  --check FILE     load and validate a profile and print it; measures\n"
    "                   nothing\n"
    "  --network        under an MPI launcher (N >= 2 ranks): time the\n"
    "                   all-reduce of --distributed mpi steps between the\n"
    "                   ranks and write it as the profile's network (rank\n"
    "                   0 writes; with --from, into that profile)\n"
    "  --verbose        print every measurement to stderr\n"
    "  --help           this text\n";

} // namespace

Options parseOptions(int argc, char **argv) {
  Options o;
  bool sawThreads = false, sawLink = false;
  for (int i = 1; i < argc; ++i) {
    StringRef arg = argv[i];
    if (arg == "--help" || arg == "-help" || arg == "-h") {
      llvm::outs() << usage;
      llvm::outs().flush();
      std::exit(0);
    }
    if (arg == "--quick" || arg == "-quick") {
      o.quick = true;
      continue;
    }
    if (arg == "--verbose" || arg == "-verbose" || arg == "-v") {
      o.verbose = true;
      continue;
    }
    if (arg == "--network" || arg == "-network") {
      o.network = true;
      continue;
    }
    // The options with a value: "--name VALUE" or "--name=VALUE".
    StringRef name = arg, value;
    bool inlineValue = false;
    if (arg.starts_with("-")) {
      size_t eq = arg.find('=');
      if (eq != StringRef::npos) {
        name = arg.take_front(eq);
        value = arg.drop_front(eq + 1);
        inlineValue = true;
      }
    }
    StringRef bare = name.ltrim('-');
    if (!name.starts_with("-") ||
        (bare != "o" && bare != "threads" && bare != "link-gbps" &&
         bare != "check" && bare != "ops" && bare != "from"))
      fatal("unknown " +
            Twine(name.starts_with("-") ? "option '" : "argument '") + arg +
            "' (see --help)");
    if (!inlineValue) {
      if (i + 1 >= argc)
        fatal(Twine("missing value for '") + arg + "'");
      value = argv[++i];
    }
    if (bare == "o") {
      o.output = value.str();
    } else if (bare == "ops" || bare == "from") {
      if (value.empty())
        fatal("--" + bare + ": expected a file name");
      if (bare == "ops")
        o.ops.push_back(value.str());
      else
        o.from = value.str();
    } else if (bare == "check") {
      if (value.empty())
        fatal("--check: expected a file name");
      o.check = value.str();
    } else if (bare == "threads") {
      sawThreads = true;
      if (value.getAsInteger(10, o.threads) || o.threads < 1 ||
          o.threads > 4096)
        fatal("--threads: expected an integer from 1 to 4096, got '" + value +
              "'");
    } else {
      sawLink = true;
      std::string text = value.str();
      char *end = nullptr;
      o.linkGbps = std::strtod(text.c_str(), &end);
      if (text.empty() || *end || !std::isfinite(o.linkGbps) || o.linkGbps <= 0)
        fatal("--link-gbps: expected a positive number of GB/s, got '" + value +
              "'");
    }
  }
  if (!o.check.empty() && (o.quick || sawThreads || sawLink || !o.ops.empty()))
    fatal("--check measures nothing: it takes no --quick, --threads, "
          "--link-gbps or --ops");
  if (o.network &&
      (!o.check.empty() || !o.ops.empty() || sawLink || sawThreads))
    fatal("--network times the ranks' all-reduce only: it takes no --check, "
          "--ops, --link-gbps or --threads");
  if (!o.from.empty() && o.ops.empty() && !o.network)
    fatal("--from needs --ops or --network: it adds op times or the "
          "network to a profile");
  if (!o.from.empty() && !o.network && (o.quick || sawLink))
    fatal("--from keeps the profile's figures: it takes no --quick or "
          "--link-gbps");
  return o;
}

} // namespace calibrate
