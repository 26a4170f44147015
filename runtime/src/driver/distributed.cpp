// distributed.cpp - joining a data-parallel run (distributed.h).
#include "distributed.h"

#include "error.h"
#include "memory.h"

#include <cstdlib>
#include <string>
#include <vector>

namespace tidalrt_driver {

// How long a collective waits for the other ranks before the run is
// declared broken; TIDAL_COMM_TIMEOUT (seconds) overrides it.
double comm_timeout() {
  if (const char *text = std::getenv("TIDAL_COMM_TIMEOUT")) {
    char *end = nullptr;
    double seconds = std::strtod(text, &end);
    if (end != text && *end == '\0' && seconds > 0)
      return seconds;
    fail_input(std::string("TIDAL_COMM_TIMEOUT '") + text +
               "' is not a positive number of seconds");
  }
  return 300.0;
}

std::unique_ptr<data_parallel> data_parallel::join(const manifest &m) {
  if (m.distributed.empty())
    return nullptr;
  tidalrt_comm_options_t opts = {TIDALRT_COMM_MPI, comm_timeout()};
  std::unique_ptr<data_parallel> dp(new data_parallel());
  if (tidalrt_status_t status = tidalrt_comm_create(&opts, &dp->comm_))
    fail_runtime("cannot join the data-parallel run: " + take_message(status));
  dp->rank_ = tidalrt_comm_rank(dp->comm_);
  dp->size_ = tidalrt_comm_size(dp->comm_);
  if (dp->size_ != m.ranks)
    fail_input("this program was compiled for " + std::to_string(m.ranks) +
               " ranks (tidalc --ranks " + std::to_string(m.ranks) +
               "); start it with mpirun -np " + std::to_string(m.ranks) +
               " (this run has " + std::to_string(dp->size_) + ")");
  return dp;
}

data_parallel::~data_parallel() { tidalrt_comm_free(comm_); }

options data_parallel::follower_options(options o, int64_t rank) {
  o.follower = true;
  o.log.clear();
  if (!o.trace.empty()) {
    const std::string suffix = ".rank" + std::to_string(rank);
    const std::string json = ".json";
    size_t at = o.trace.size() >= json.size() &&
                        o.trace.compare(o.trace.size() - json.size(),
                                        json.size(), json) == 0
                    ? o.trace.size() - json.size()
                    : o.trace.size();
    o.trace.insert(at, suffix);
  }
  o.eval_inputs.clear();
  o.quiet = true;
  return o;
}

slot_values gathered_values(tidalrt_comm_t *comm, const manifest &m,
                            function_memory &memory,
                            std::deque<std::vector<uint8_t>> &copies,
                            std::deque<tensor_slot> &whole) {
  slot_values values = persistent_values(m, memory, copies);
  for (auto &value : values) {
    const tensor_slot &slot = *value.first;
    if (!slot.sharded())
      continue;
    whole.push_back(slot.full());
    const tensor_slot &full = whole.back();
    copies.emplace_back(full.bytes);
    const float *chunk = reinterpret_cast<const float *>(value.second);
    float *out = reinterpret_cast<float *>(copies.back().data());
    uint64_t c = slot.element_count(), n = full.element_count(), ticket = 0;
    tidalrt_status_t status = tidalrt_comm_allgather_f32_start(
        comm, &chunk, &out, &c, &n, 1, &ticket);
    if (!status)
      status = tidalrt_comm_wait(comm, ticket);
    if (status)
      fail_runtime("cannot gather the optimizer state '" + slot.name +
                   "' from the ranks: " + take_message(status));
    value = {&full, copies.back().data()};
  }
  return values;
}

void share_initial_values(tidalrt_comm_t *comm, const manifest &m,
                          function_memory &memory) {
  std::vector<uint8_t> buffer;
  for (const tensor_slot &slot : m.step.args) {
    // A sharded slot is each rank's own chunk.
    if (!slot.is_persistent() || slot.bytes == 0 || slot.sharded())
      continue;
    buffer.resize(slot.bytes);
    memory.read(slot, buffer.data());
    if (tidalrt_status_t status =
            tidalrt_comm_broadcast(comm, buffer.data(), slot.bytes, 0))
      fail_runtime("cannot share the initial value of '" + slot.name +
                   "' from rank 0: " + take_message(status));
    memory.write(slot, buffer.data());
  }
}

void data_parallel::abort(int status) const {
  tidalrt_comm_abort(comm_, status);
  std::_Exit(status); // not reached
}

} // namespace tidalrt_driver
