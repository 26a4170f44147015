// program_dump.cpp - TIDAL_DUMP_DIR=DIR: after every device kernel of a
// generated device program, the bytes it wrote (its write ranges of the
// device arena) go to DIR/op-NNNNN-wK.bin (op index, write range K), so that
// two runs of one plan on different devices (a CUDA executable on the GPU
// and with TIDAL_DEVICE=sim on the CPU kernels) can be compared op by op
// (scripts/compare_dumps.py). Each kernel is waited for first, so a run
// with a dump is slow. An op launched again in a step (recomputation)
// overwrites its files; the last step's values remain.
#include "program_state.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

namespace tidalrt_device {
namespace program {

tidalrt_status_t dump_writes(program_state *state, int64_t op_index,
                             const tidalrt_range_t *ranges, int64_t num_reads,
                             int64_t num_writes) {
  if (num_writes <= 0)
    return nullptr;
  if (tidalrt_status_t status = tidalrt_stream_synchronize(state->compute))
    return status;
  std::vector<uint8_t> bytes;
  for (int64_t k = 0; k < num_writes; ++k) {
    const tidalrt_range_t &range = ranges[num_reads + k];
    try {
      bytes.resize(range.bytes);
    } catch (const std::exception &) {
      return tidalrt_status_make(TIDALRT_OUT_OF_MEMORY,
                                 "TIDAL_DUMP_DIR: %llu bytes",
                                 (unsigned long long)range.bytes);
    }
    if (tidalrt_status_t status = tidalrt_device_read(
            state->device, range.offset, bytes.data(), range.bytes))
      return status;
    char name[64];
    std::snprintf(name, sizeof(name), "/op-%05lld-w%lld.bin",
                  (long long)op_index, (long long)k);
    std::string path = state->dump_dir + name;
    std::FILE *file = std::fopen(path.c_str(), "wb");
    bool ok = file &&
              std::fwrite(bytes.data(), 1, bytes.size(), file) == bytes.size();
    int error = errno;
    if (file && std::fclose(file) != 0 && ok) {
      ok = false;
      error = errno;
    }
    if (!ok)
      return tidalrt_status_make(TIDALRT_INTERNAL,
                                 "TIDAL_DUMP_DIR: cannot write %s: %s",
                                 path.c_str(), std::strerror(error));
  }
  return nullptr;
}

} // namespace program
} // namespace tidalrt_device
