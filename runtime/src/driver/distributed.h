// distributed.h - joining a data-parallel run (tidalc --distributed mpi or
// nccl):
// the communicator, the rank's role, the shared initial weights.
//
// Every rank runs the same compiled step on its contiguous share of each
// global batch; the step's all-reduce kernels use this communicator.
// Rank 0 alone prints, logs, evaluates, traces and writes --save and
// checkpoints; the other ranks run quietly. A rank that fails ends the
// whole run (MPI_Abort) after printing its error, so none of the others
// waits for it.
#ifndef TIDALRT_DRIVER_DISTRIBUTED_H
#define TIDALRT_DRIVER_DISTRIBUTED_H

#include "manifest.h"
#include "options.h"
#include "step_state.h"

#include <deque>
#include <vector>

#include "tidalrt/comm.h"

#include <memory>

namespace tidalrt_driver {

class function_memory;

// How long a collective waits for the other ranks before the run is
// declared broken: TIDAL_COMM_TIMEOUT (seconds), else 300. Throws a
// driver_error for a malformed value.
double comm_timeout();

class data_parallel {
public:
  // Joins the run the manifest was compiled for; NULL for a program of one
  // process. Throws a driver_error when the launcher started a different
  // number of processes than tidalc --ranks said, or MPI fails.
  static std::unique_ptr<data_parallel> join(const manifest &m);
  ~data_parallel();
  data_parallel(const data_parallel &) = delete;
  data_parallel &operator=(const data_parallel &) = delete;

  tidalrt_comm_t *comm() const { return comm_; }
  int64_t rank() const { return rank_; }
  int64_t size() const { return size_; }
  bool leader() const { return rank_ == 0; }

  // The options rank `rank` (not 0) runs with: it writes no --save, --log
  // or checkpoint (it takes part in their gathers), its own --trace
  // (FILE.rankR.json), no evaluation, no progress line.
  static options follower_options(options o, int64_t rank);

  // Ends every rank with `status` (after this rank printed its error).
  [[noreturn]] void abort(int status) const;

private:
  data_parallel() = default;
  tidalrt_comm_t *comm_ = nullptr;
  int64_t rank_ = 0;
  int64_t size_ = 1;
};

// The step's persistent values for --save and checkpoints: a sharded
// optimizer's state gathered from every rank into whole tensors (a
// collective: every rank calls it at the same points), the others as
// persistent_values gives them. `copies` and `whole` hold what the result
// points to.
slot_values gathered_values(tidalrt_comm_t *comm, const manifest &m,
                            function_memory &memory,
                            std::deque<std::vector<uint8_t>> &copies,
                            std::deque<tensor_slot> &whole);

// Makes every rank's persistent step values (weights, optimizer and
// normalisation state) rank 0's.
void share_initial_values(tidalrt_comm_t *comm, const manifest &m,
                          function_memory &memory);

} // namespace tidalrt_driver

#endif // TIDALRT_DRIVER_DISTRIBUTED_H
