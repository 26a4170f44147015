//===- CalibrateOptions.h - tidal-calibrate's command line ------*- C++ -*-===//
//
// Parsed by hand: libLLVM already registers an llvm::cl option "threads".
//
//===----------------------------------------------------------------------===//

#ifndef TIDAL_TOOLS_TIDAL_CALIBRATE_CALIBRATEOPTIONS_H
#define TIDAL_TOOLS_TIDAL_CALIBRATE_CALIBRATEOPTIONS_H

#include <string>
#include <vector>

namespace calibrate {

struct Options {
  std::string output;
  int threads = 0; ///< 0: OpenMP's default
  bool quick = false;
  bool verbose = false;
  double linkGbps = 0; ///< 0: the documented link
  std::string check;
  /// --ops: steps whose kernel ops are timed; --from: the profile whose
  /// figures they are added to (instead of measuring the host).
  std::vector<std::string> ops;
  std::string from;
  /// --network: time the all-reduce between the ranks an MPI launcher
  /// started (rank 0 writes the profile; with --from, into that profile).
  bool network = false;
};

/// The options of argv; exits with a one-line error on bad ones, and with
/// the usage on --help.
Options parseOptions(int argc, char **argv);

} // namespace calibrate

#endif // TIDAL_TOOLS_TIDAL_CALIBRATE_CALIBRATEOPTIONS_H
