// shared_link.h - a host link that the simulated devices of several
// processes share (a PCIe switch in front of N GPUs).
//
// TIDAL_SIM_SWITCH=NAME puts a SIM device behind the switch NAME, whose
// bandwidth is TIDAL_SIM_SWITCH_GBPS (GB/s) in each direction (full duplex,
// as PCIe). Every copy through it reserves its direction of the switch for
// bytes / bandwidth, starting when both the copy and that direction are
// free: copies of all the devices behind one switch (in any process of
// this machine) in one direction pass one after another, while each also
// lasts at least its own link's time (TIDAL_SIM_LINK_GBPS). The switch's
// state is two shared-memory words, the steady-clock times at which each
// direction is next free.
#ifndef TIDALRT_DEVICE_SHARED_LINK_H
#define TIDALRT_DEVICE_SHARED_LINK_H

#include "tidalrt/tidalrt.h"

#include <cstdint>

namespace tidalrt_device {

struct shared_link;

// Opens (creating if needed) the switch named by TIDAL_SIM_SWITCH; NULL
// without error when it is unset. INVALID_ARGUMENT for a bad name or
// bandwidth, INTERNAL when shared memory fails.
tidalrt_status_t open_shared_link_from_env(shared_link **out);
void close_shared_link(shared_link *link);

// Reserves the switch's direction (to_host: device -> host) for `bytes`
// from no earlier than `earliest_ns` (steady clock); returns when the
// transfer through it ends.
int64_t reserve_shared_link(shared_link *link, uint64_t bytes,
                            int64_t earliest_ns, bool to_host);

} // namespace tidalrt_device

#endif // TIDALRT_DEVICE_SHARED_LINK_H
