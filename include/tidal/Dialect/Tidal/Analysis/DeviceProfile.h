//===- DeviceProfile.h - measured or documented machine figures -*- C++ -*-===//
//
// The figures the cost model (CostModel.h) and the planners read: for the
// host and for the accelerator, a sustained flop rate, a memory bandwidth
// and a fixed per-kernel overhead; for the host<->device copy link, a
// bandwidth and a latency. A machine profile is stored as JSON
// ("tidal-device-profile", version 1; docs/cost-model.md) and written by
// `tidal-calibrate`, which measures the host. Until a GPU is measured, the
// device and the link are documented H100 SXM / PCIe 5.0 defaults.
//
//===----------------------------------------------------------------------===//

#ifndef TIDAL_DIALECT_TIDAL_ANALYSIS_DEVICEPROFILE_H
#define TIDAL_DIALECT_TIDAL_ANALYSIS_DEVICEPROFILE_H

#include "mlir/Support/LogicalResult.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <map>
#include <string>

namespace mlir::tidal {

/// The "format" and "version" of a profile file.
constexpr llvm::StringLiteral kMachineProfileFormat = "tidal-device-profile";
constexpr int64_t kMachineProfileVersion = 1;

/// One compute device: the host CPU or the accelerator.
struct DeviceProfile {
  std::string name;
  double gflops = 0;       ///< sustained GFLOP/s of the dense kernels
  double gbytesPerS = 0;   ///< memory bandwidth, GB/s (1e9 bytes/s)
  double opOverheadUs = 0; ///< fixed cost of one kernel call, microseconds
  bool calibrated = false; ///< measured on this machine, not a default

  // Host only ("host" section).
  int64_t threads = 0;     ///< threads the figures hold for; 0: unrecorded
  std::string isa;         ///< "avx512", "avx2", "sse41"; "": unrecorded
  double gflopsAvx2 = 0;   ///< sgemm limited to AVX2; 0: not measured
  double gflopsAvx512 = 0; ///< sgemm with AVX-512; 0: unavailable
  /// The element count from which a parallel loop beats one thread at
  /// `threads` (tidal-calibrate); programs compiled with the profile run
  /// smaller loops on one thread (tidalrt_set_parallel_grain). 0: not
  /// measured (the runtime's default).
  int64_t parallelGrain = 0;
  /// Measured microseconds of individual kernel calls, by op signature
  /// (opSignature in CostModel.h; `tidal-calibrate --ops`). The cost model
  /// takes a measured time over the roofline estimate.
  std::map<std::string, double> opUs;

  // Accelerator only ("device" section).
  int64_t memoryBytes = 0; ///< device memory; 0: unrecorded
};

/// The host<->device copy link.
struct LinkProfile {
  std::string name;
  double gbytesPerS = 0; ///< sustained copy bandwidth, GB/s
  double latencyUs = 0;  ///< fixed cost of one copy, microseconds
  bool calibrated = false;
};

/// The network between the ranks of a data-parallel run, as measured by
/// `mpirun -np N tidal-calibrate --network` (optional in a profile).
struct NetworkProfile {
  std::string transport; ///< "mpi" or "nccl"; empty: none measured
  int64_t ranks = 0;     ///< how many ranks it was measured with
  LinkProfile link;      ///< all-reduce bus bandwidth and per-message latency
};

struct MachineProfile {
  std::string machine; ///< where the profile was measured ("default": none)
  std::string created; ///< ISO 8601 UTC time, "" for the defaults
  DeviceProfile host, device;
  LinkProfile link;
  NetworkProfile network;
};

/// The uncalibrated host default: 100 GFLOP/s, 10 GB/s, 2 us per kernel.
DeviceProfile defaultHostProfile();
/// The documented H100 SXM default (docs/cost-model.md): 50 TFLOP/s FP32,
/// 2800 GB/s, 5 us per kernel, 80 GB.
DeviceProfile defaultDeviceProfile();
/// The documented PCIe 5.0 x16 link with pinned buffers: 50 GB/s, 10 us.
LinkProfile defaultLinkProfile();
/// A simulated link ("sim") of `gbytesPerS` with `latencyUs` per copy
/// (negative: the default link's).
LinkProfile simulatedLinkProfile(double gbytesPerS, double latencyUs = -1);
/// The three defaults together.
MachineProfile defaultMachineProfile();

/// Checks every figure of `profile` (positive rates, non-negative
/// overheads, a known ISA). Returns "" or the first problem, as
/// "host.gflops: must be positive, got -1".
std::string validateMachineProfile(const MachineProfile &profile);

/// Parses and validates the JSON text of a profile. `name` (a file name)
/// prefixes every error: "NAME: host.gflops: missing".
FailureOr<MachineProfile> parseMachineProfile(llvm::StringRef json,
                                              llvm::StringRef name,
                                              std::string &error);
/// Reads, parses and validates the profile file at `path`.
FailureOr<MachineProfile> loadMachineProfile(llvm::StringRef path,
                                             std::string &error);

/// The profile as JSON text (two-space indent, trailing newline), which
/// parseMachineProfile reads back unchanged.
std::string machineProfileJson(const MachineProfile &profile);

/// The predicted time of one copy of `bytes` over `link`: its latency plus
/// bytes / bandwidth; zero for an empty copy.
double copyMicroseconds(const LinkProfile &link, int64_t bytes);

/// The default network between the ranks of a data-parallel run: for "mpi",
/// MPI over shared memory on one machine, 5 GB/s and 30 us per message; for
/// "nccl", NCCL between the GPUs of an H100 SXM node over NVLink, 300 GB/s
/// of bus bandwidth and 10 us per message (assumed from published
/// nccl-tests figures, not measured by tidal-calibrate yet).
LinkProfile defaultCommProfile(llvm::StringRef network = "mpi");
/// The predicted time of tidal's all-reduce of `bytes` over `ranks` ranks
/// (tidalrt/comm.h: an all-to-all, then an all-gather, each moving
/// (ranks - 1) / ranks of the data): two latencies plus 2 (ranks - 1) /
/// ranks * bytes / bandwidth; zero for one rank.
double allReduceMicroseconds(const LinkProfile &link, int64_t bytes,
                             int64_t ranks);

} // namespace mlir::tidal

#endif // TIDAL_DIALECT_TIDAL_ANALYSIS_DEVICEPROFILE_H
