/*===- tidalrt/comm.h - processes of a data-parallel run --------*- C -*-===*
 *
 * Communication between the processes (ranks) of a data-parallel training
 * run (ABI 0.8; docs/runtime-abi.md, "Communication"). A communicator is an
 * opaque handle over a backend:
 *
 * - TIDALRT_COMM_SINGLE: one process, rank 0 of 1; collectives leave their
 *   data as it is. Always available.
 * - TIDALRT_COMM_MPI: the processes an MPI launcher started (mpirun, or a
 *   scheduler that sets the MPI environment), through the separate library
 *   tidalrt_mpi (Open MPI). A process started without a launcher is rank 0
 *   of 1. UNSUPPORTED when tidalrt_mpi is not linked in.
 *
 * Collectives are deterministic: an all-reduce adds the ranks' values in
 * rank order, ((x0 + x1) + x2) + ..., whatever the transport, so a run on N
 * ranks gives the same bits every time, and every rank the same bits. Each
 * collective waits at most the communicator's timeout for the other ranks:
 * past it the call returns TIDALRT_UNAVAILABLE (a rank failed or is stuck)
 * instead of hanging, and the communicator is broken: later collectives
 * fail at once. tidalrt_comm_abort() then ends every rank.
 *
 * One thread uses a communicator at a time (besides the communicator's own
 * thread, which runs started collectives).
 *===----------------------------------------------------------------------===*/
#ifndef TIDALRT_COMM_H
#define TIDALRT_COMM_H

#include "tidalrt/tidalrt.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum tidalrt_comm_kind_e {
  TIDALRT_COMM_SINGLE = 0,
  TIDALRT_COMM_MPI = 1,
} tidalrt_comm_kind_t;

typedef struct tidalrt_comm_options_s {
  tidalrt_comm_kind_t kind;
  /* How long a collective waits for the other ranks; <= 0: 300 s. */
  double timeout_seconds;
} tidalrt_comm_options_t;

typedef struct tidalrt_comm_s tidalrt_comm_t;

/* Joins the run (MPI: initializes MPI unless the program did, and
 * duplicates MPI_COMM_WORLD). INVALID_ARGUMENT for NULL arguments or an
 * unknown kind; UNSUPPORTED for a backend not linked in; INTERNAL when MPI
 * fails. */
tidalrt_status_t tidalrt_comm_create(const tidalrt_comm_options_t *options,
                                     tidalrt_comm_t **out);

/* Leaves the run. MPI itself is finalized at exit when tidalrt_comm_create
 * initialized it. NULL is ignored. */
void tidalrt_comm_free(tidalrt_comm_t *comm);

/* "single" or "mpi". */
const char *tidalrt_comm_backend(const tidalrt_comm_t *comm);
int64_t tidalrt_comm_rank(const tidalrt_comm_t *comm);
int64_t tidalrt_comm_size(const tidalrt_comm_t *comm);

/* Replaces `data[0..count)` on every rank with the sum over the ranks, added
 * in rank order. Every rank passes the same count. */
tidalrt_status_t tidalrt_comm_allreduce_f32(tidalrt_comm_t *comm, float *data,
                                            uint64_t count);

/* Starts an all-reduce of `num_segments` float32 arrays as one message, on
 * the communicator's own thread (ABI 0.9): each element becomes the
 * rank-order sum over the ranks divided by `divisor` (1: the sum; the
 * number of ranks: the mean). Returns at once with a ticket; the arrays
 * must stay untouched until tidalrt_comm_wait(ticket) returns. Collectives
 * run in the order they were started, on every rank the same; a
 * synchronous collective first waits for the started ones. With one rank
 * the division happens before this returns. */
tidalrt_status_t
tidalrt_comm_allreduce_f32_start(tidalrt_comm_t *comm, float *const *segments,
                                 const uint64_t *counts, uint64_t num_segments,
                                 uint64_t divisor, uint64_t *ticket);

/* Starts an all-gather on the communicator's own thread (ABI 0.9): output
 * t (output_counts[t] floats) receives every rank's chunk t (chunk_counts[t]
 * floats each) in rank order, rank r's at element r * chunk_counts[t], the
 * last cut at the output's length (which must need every rank: more than
 * (ranks - 1) chunks, at most ranks). Returns at once with a ticket for
 * tidalrt_comm_wait, having copied the chunks (the caller may reuse them);
 * the outputs stay untouched until the wait. With
 * one rank the copy happens before it returns. */
tidalrt_status_t tidalrt_comm_allgather_f32_start(
    tidalrt_comm_t *comm, const float *const *chunks, float *const *outputs,
    const uint64_t *chunk_counts, const uint64_t *output_counts,
    uint64_t num_tensors, uint64_t *ticket);

/* Starts a reduce-scatter on the communicator's own thread (ABI 0.9): chunk
 * t (chunk_counts[t] floats) receives the rank-order sum over the ranks of
 * this rank's chunk of input t (elements [rank * c, (rank + 1) * c) of its
 * input_counts[t], zero past its end), divided by `divisor`: ZeRO stage 2's
 * gradient reduction, half an all-reduce's traffic. Returns at once with a
 * ticket for tidalrt_comm_wait, having copied the inputs (the caller may
 * reuse them); the chunks stay untouched until the wait. With one rank the
 * chunk is the input, divided, before it returns. */
tidalrt_status_t tidalrt_comm_reduce_scatter_f32_start(
    tidalrt_comm_t *comm, const float *const *inputs, float *const *chunks,
    const uint64_t *input_counts, const uint64_t *chunk_counts,
    uint64_t num_tensors, uint64_t divisor, uint64_t *ticket);

/* Waits for a started collective; its failure, if any, is returned (once).
 * Every ticket must be waited for. */
tidalrt_status_t tidalrt_comm_wait(tidalrt_comm_t *comm, uint64_t ticket);

/* What a communicator's started collectives cost this process (ABI 0.9):
 * how many ran, the seconds its thread spent running them, and the seconds
 * callers spent blocked in tidalrt_comm_wait. 1 - wait / busy is the share
 * of the communication that computation hid. */
typedef struct tidalrt_comm_stats_s {
  uint64_t collectives;
  uint64_t bytes;
  double busy_seconds;
  double wait_seconds;
} tidalrt_comm_stats_t;
void tidalrt_comm_stats(const tidalrt_comm_t *comm, tidalrt_comm_stats_t *out);

/* One started collective as it ran on the communicator's thread (ABI
 * 0.9): its bytes and its start and end on the steady clock
 * (CLOCK_MONOTONIC, seconds). */
typedef struct tidalrt_comm_event_s {
  uint64_t bytes;
  double start_seconds;
  double end_seconds;
} tidalrt_comm_event_t;

/* Starts (on != 0) or stops recording an event per started collective
 * (at most 2^20 kept until taken). */
void tidalrt_comm_record_events(tidalrt_comm_t *comm, int on);
/* Moves up to `max` recorded events, oldest first, into `out`; returns how
 * many. */
uint64_t tidalrt_comm_take_events(tidalrt_comm_t *comm,
                                  tidalrt_comm_event_t *out, uint64_t max);

/* Copies `bytes` bytes of rank `root`'s `data` to every rank's `data`. */
tidalrt_status_t tidalrt_comm_broadcast(tidalrt_comm_t *comm, void *data,
                                        uint64_t bytes, int64_t root);

/* Returns when every rank has called it. */
tidalrt_status_t tidalrt_comm_barrier(tidalrt_comm_t *comm);

/* The communicator that a context's all-reduce kernels (tidal.all_reduce_
 * start/wait) use (ABI 0.9); NULL, the default: one process. The context
 * does not own it; it must outlive the context's last step. */
void tidalrt_context_set_comm(tidalrt_context_t *context, tidalrt_comm_t *comm);
tidalrt_comm_t *tidalrt_context_comm(const tidalrt_context_t *context);

/* Ends every rank of the run with exit status `code` (MPI_Abort); with one
 * process, exits this one. Does not return. */
void tidalrt_comm_abort(tidalrt_comm_t *comm, int code);

#ifdef __cplusplus
}
#endif

#endif /* TIDALRT_COMM_H */
