//===- SimLinkTimes.h - what a copy costs the simulated device --*- C++ -*-===//
//
// On the sim target a copy is a memcpy on a copy thread, throttled to the
// link's rate, and a compute stream that waits for it is woken by that
// thread: each copy the compute stream waits for costs the sim its bytes
// over the rate plus a fixed part (the copy thread's wake-up and sleep, the
// compute thread's wake-up) that depends on the machine. tidal-calibrate
// --link-gbps measures that fixed part on a SIM device of the runtime, and
// the profile carries it as the link's latency (docs/cost-model.md).
//
//===----------------------------------------------------------------------===//

#ifndef TIDAL_TOOLS_TIDAL_CALIBRATE_SIMLINKTIMES_H
#define TIDAL_TOOLS_TIDAL_CALIBRATE_SIMLINKTIMES_H

#include <string>

namespace calibrate {

/// The microseconds a SIM device throttled to `gbps` spends on a copy that
/// its compute stream waits for, beyond the copy's bytes over the rate: the
/// median over 5 batches of compute -> copy -> compute round trips (a copy
/// stream waits for the compute stream's event, copies 4 KiB, and the
/// compute stream waits for it), each batch about `seconds` / 5 long. A
/// negative result means the measurement failed (the message is in
/// `error`).
double measureSimCopyLatencyUs(double gbps, double seconds, std::string &error);

} // namespace calibrate

#endif // TIDAL_TOOLS_TIDAL_CALIBRATE_SIMLINKTIMES_H
