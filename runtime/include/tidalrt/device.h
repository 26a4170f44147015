/* device.h - devices, streams and events: how generated code runs a plan. */
/*
 * The memory planner places tensors in a device arena of exactly the user's
 * budget and in a host arena, and schedules kernel launches on a compute
 * stream and asynchronous copies (offload: device -> host, prefetch: host ->
 * device) on copy streams, with an event for every dependency between
 * streams. Generated code drives that schedule through this interface.
 *
 * Kinds of device (docs/runtime-abi.md, "Devices, streams and events"):
 * - TIDALRT_DEVICE_HOST: every call runs its work at once on the calling
 *   thread; the device arena is plain host memory.
 * - TIDALRT_DEVICE_SIM: the simulated device of SPEC section 4. The arena is
 *   one host allocation; each stream owns a worker thread that runs its work
 *   in order; copies can be throttled to a link bandwidth; events
 *   synchronise the threads so that a program with every needed wait is free
 *   of data races, and one that misses a wait has a real race.
 * - TIDALRT_DEVICE_CUDA (0.6): an NVIDIA GPU, in the separate library
 *   tidalrt_cuda (built when nvcc was found; tidalc links it into --target
 *   cuda executables). The arena is one cudaMalloc of exactly the budget;
 *   each stream is a CUDA stream and each event a CUDA event. A compute
 *   stream's launch calls fn(arg) at once on the calling thread, which
 *   enqueues GPU work on the stream (kernels find it through the runtime,
 *   docs/runtime-abi.md); a host stream's launch runs fn(arg) on the CPU in
 *   the stream's order (cudaLaunchHostFunc); copies are cudaMemcpyAsync.
 *   Without tidalrt_cuda linked in, tidalrt_device_create() returns
 *   TIDALRT_UNSUPPORTED for it.
 *
 * Semantics follow CUDA's streams and events. Work enqueued on one stream
 * runs in the order of the calls that enqueued it; work on different streams
 * is unordered unless an event orders it. Errors are sticky: once work on a
 * stream fails, the stream skips all later work and every synchronisation
 * reports the failure.
 *
 * The last section (ABI 0.4; host-placed kernels 0.5) is what generated
 * device programs call.
 *
 * This header is included by tidalrt.h and may also be included alone.
 */
#ifndef TIDALRT_DEVICE_H
#define TIDALRT_DEVICE_H

#include <stddef.h>
#include <stdint.h>

#include "tidalrt/tidalrt.h"

#ifdef __cplusplus
extern "C" {
#endif

/*===----------------------------------------------------------------------===
 * Devices
 *===----------------------------------------------------------------------===*/

typedef struct tidalrt_device_s tidalrt_device_t;
typedef struct tidalrt_stream_s tidalrt_stream_t;
typedef struct tidalrt_event_s tidalrt_event_t;

/* Values are stable within an ABI major version. */
typedef enum tidalrt_device_kind_e {
  TIDALRT_DEVICE_HOST = 0,
  TIDALRT_DEVICE_SIM = 1,
  TIDALRT_DEVICE_CUDA = 2,
} tidalrt_device_kind_t;

typedef struct tidalrt_device_options_s {
  tidalrt_device_kind_t kind;
  /* The size of the device arena: exactly this many bytes (0 is allowed: an
   * arena that no non-empty range fits). */
  uint64_t memory_bytes;
  /* SIM only: the link bandwidth of every copy in GB/s (1e9 bytes per
   * second); 0 means unthrottled, unless the environment variable
   * TIDAL_SIM_LINK_GBPS holds a bandwidth, which is then used. Must be
   * finite and not negative. */
  double link_gbps;
} tidalrt_device_options_t;

/* Creates a device of `options->kind` with an arena of
 * `options->memory_bytes` bytes, aligned to TIDALRT_ARRAY_ALIGNMENT, whose
 * contents are undefined (as cudaMalloc's are; pages are only committed when
 * touched). Fails with INVALID_ARGUMENT for a bad option or a malformed
 * TIDAL_SIM_LINK_GBPS, UNSUPPORTED for TIDALRT_DEVICE_CUDA, OUT_OF_MEMORY if
 * the arena cannot be allocated. */
tidalrt_status_t tidalrt_device_create(const tidalrt_device_options_t *options,
                                       tidalrt_device_t **out_device);

/* Waits for all work on the device's streams to finish, then releases the
 * device with every stream and event created on it that is still open (their
 * handles become invalid). Never hangs and never fails, even after failed
 * work; failures not yet reported are dropped. NULL is allowed. */
void tidalrt_device_free(tidalrt_device_t *device);

tidalrt_device_kind_t tidalrt_device_kind(const tidalrt_device_t *device);

/* The base of the device arena; the device ranges of launches and copies
 * are byte offsets from it. Never NULL. On HOST and SIM the host may read
 * and write it directly only while no enqueued work touches the same bytes
 * (for example after tidalrt_device_synchronize()); on CUDA it is a device
 * address, which only kernels and the transfers below may use. */
uint8_t *tidalrt_device_memory(tidalrt_device_t *device);

/* Synchronous transfers between host memory and the device arena (0.6),
 * for drivers between steps, on every kind of device: write copies `bytes`
 * bytes from `host` to the arena at `offset`, read the reverse, move copies
 * within the arena (the ranges may overlap) and fill sets bytes to `value`.
 * They wait for nothing: call them only while no enqueued work touches the
 * same bytes (e.g. after tidalrt_device_synchronize()). They return when
 * the transfer is done, do not count in the device's stats, and fail with
 * INVALID_ARGUMENT for a range outside the arena or a NULL host pointer of
 * non-zero size (INTERNAL for a CUDA error). On HOST and SIM they are
 * memcpy, memmove and memset on tidalrt_device_memory(). */
tidalrt_status_t tidalrt_device_write(tidalrt_device_t *device, uint64_t offset,
                                      const void *host, uint64_t bytes);
tidalrt_status_t tidalrt_device_read(tidalrt_device_t *device, uint64_t offset,
                                     void *host, uint64_t bytes);
tidalrt_status_t tidalrt_device_move(tidalrt_device_t *device,
                                     uint64_t dst_offset, uint64_t src_offset,
                                     uint64_t bytes);
tidalrt_status_t tidalrt_device_fill(tidalrt_device_t *device, uint64_t offset,
                                     int value, uint64_t bytes);

/* Joins the device to a data-parallel run (ABI 0.13): the device's
 * collectives (the gradient all-reduce, all-gather and reduce-scatter of
 * tidalc --distributed) then run among the devices of every rank of `comm`.
 * HOST and SIM: nothing to do (their kernels use the context's communicator
 * directly). CUDA: an NCCL communicator over the ranks of `comm`,
 * bootstrapped with tidalrt_comm_broadcast; every rank calls this together,
 * and a rank that never joins makes the others fail with UNAVAILABLE after
 * `timeout_seconds` (<= 0: 300) instead of hanging. UNSUPPORTED when the
 * runtime was built without NCCL. Joining again replaces the earlier run. */
struct tidalrt_comm_s;
tidalrt_status_t tidalrt_device_join_comm(tidalrt_device_t *device,
                                          struct tidalrt_comm_s *comm,
                                          double timeout_seconds);

/* options.memory_bytes. */
uint64_t tidalrt_device_memory_bytes(const tidalrt_device_t *device);

/* The link bandwidth in GB/s that SIM copies are throttled to (after the
 * TIDAL_SIM_LINK_GBPS fallback); 0 when unthrottled and for HOST. */
double tidalrt_device_link_gbps(const tidalrt_device_t *device);

/* Waits for all work enqueued so far on every stream of the device. Returns
 * the failure of the earliest-created failed stream (as
 * tidalrt_stream_synchronize() would), or NULL. */
tidalrt_status_t tidalrt_device_synchronize(tidalrt_device_t *device);

/*===----------------------------------------------------------------------===
 * Streams
 *===----------------------------------------------------------------------===*/

typedef enum tidalrt_stream_kind_e {
  /* Runs tidalrt_stream_launch() work. */
  TIDALRT_STREAM_COMPUTE = 0,
  /* Runs tidalrt_stream_copy() work from the device arena to host memory
   * (offload). */
  TIDALRT_STREAM_COPY_TO_HOST = 1,
  /* Runs tidalrt_stream_copy() work from host memory to the device arena
   * (prefetch). */
  TIDALRT_STREAM_COPY_TO_DEVICE = 2,
  /* Runs tidalrt_stream_launch() work on the host CPU (0.6): host-placed
   * kernels. On HOST and SIM the same as a compute stream (its own thread on
   * SIM); on CUDA fn(arg) runs as a host function in the stream's order,
   * so events order it with the GPU's streams. */
  TIDALRT_STREAM_HOST = 3,
} tidalrt_stream_kind_t;

/* Creates a stream of `kind` on `device`. A device may have any number of
 * streams of each kind; each is numbered in creation order (0, 1, ...), and
 * messages name it, e.g. "stream 2 (copy to host)". On SIM each stream
 * starts its own worker thread. */
tidalrt_status_t tidalrt_stream_create(tidalrt_device_t *device,
                                       tidalrt_stream_kind_t kind,
                                       tidalrt_stream_t **out_stream);

/* Waits for the stream's work to finish, then releases it (and its thread).
 * NULL is allowed. Events recorded on it stay valid. */
void tidalrt_stream_free(tidalrt_stream_t *stream);

/* Work for a compute or host stream: returns NULL on success or a status
 * that the stream takes ownership of. */
typedef tidalrt_status_t (*tidalrt_work_fn_t)(void *arg);

/* A byte range of the device arena: [offset, offset + bytes). */
typedef struct tidalrt_range_s {
  uint64_t offset;
  uint64_t bytes;
} tidalrt_range_t;

/* Enqueues fn(arg) on a compute (or host) stream. `reads` and `writes` are
 * the device
 * ranges the work touches (either list may be empty, with a NULL pointer).
 * Before enqueueing, every range is checked against the arena; one that
 * does not fit fails the call with INVALID_ARGUMENT naming the range and
 * enqueues nothing (the stream is not marked failed). When the work runs,
 * the device's stats count it and raise the measured peak to the end of its
 * highest range. On HOST fn runs before this call returns; on SIM it runs on
 * the stream's thread, and `arg` must stay valid until then. On CUDA a
 * compute stream's fn runs before this call returns and enqueues GPU work
 * (its stats count at enqueue); a host stream's fn runs later, on a thread
 * of the CUDA driver, and must make no CUDA call. fn must not
 * call into the device's streams or events (synchronising its own stream
 * would never return).
 *
 * A status returned by fn marks the stream failed: it skips all later work,
 * and synchronisation returns the status, prefixed with the stream and the
 * launch's number on it ("stream 0 (compute), launch #3: ..."). The call
 * itself only reports enqueue errors (bounds, a copy stream, a NULL fn),
 * on HOST as on SIM. */
tidalrt_status_t
tidalrt_stream_launch(tidalrt_stream_t *stream, tidalrt_work_fn_t fn, void *arg,
                      const tidalrt_range_t *reads, size_t num_reads,
                      const tidalrt_range_t *writes, size_t num_writes);

/* Enqueues an asynchronous copy on a copy stream: on a COPY_TO_HOST stream
 * the device range [device_offset, +bytes) is copied to `host`, on a
 * COPY_TO_DEVICE stream `bytes` bytes at `host` are copied into that range.
 * Bounds are checked as by tidalrt_stream_launch(); `host` must stay valid
 * (and, for COPY_TO_DEVICE, unchanged) until the copy has run, and must not
 * overlap the device arena. The device's stats count the bytes in
 * bytes_to_host or bytes_to_device and raise the measured peak. On SIM a
 * throttled copy lasts at least bytes / (link_gbps * 1e9) seconds. */
tidalrt_status_t tidalrt_stream_copy(tidalrt_stream_t *stream, void *host,
                                     uint64_t device_offset, uint64_t bytes);

/* Blocks until all work enqueued on the stream before the call has finished.
 * Returns NULL, or a new status (the caller frees it) carrying the stream's
 * first failure; a failed stream returns its failure every time. */
tidalrt_status_t tidalrt_stream_synchronize(tidalrt_stream_t *stream);

/*===----------------------------------------------------------------------===
 * Events
 *===----------------------------------------------------------------------===*/

/* Creates an event on `device`, never recorded. */
tidalrt_status_t tidalrt_event_create(tidalrt_device_t *device,
                                      tidalrt_event_t **out_event);

/* Releases the event. NULL is allowed. Work that still waits on it (or will
 * record it) is unaffected: it keeps what it needs alive. */
void tidalrt_event_free(tidalrt_event_t *event);

/* Captures all work enqueued on `stream` so far: the event completes when
 * that work has finished. Recording again replaces the capture (earlier
 * waits keep waiting for what they captured). An event may be recorded on
 * any stream of its device. If the stream has failed by the time the
 * captured work is reached, the capture completes as failed. */
tidalrt_status_t tidalrt_event_record(tidalrt_event_t *event,
                                      tidalrt_stream_t *stream);

/* Makes all work enqueued on `stream` after this call wait until the work
 * the event captured most recently (at the time of this call) has finished,
 * without blocking the caller. Waiting on an event never recorded does
 * nothing (as in CUDA). If the capture completes as failed, `stream` fails
 * too, with a message naming both streams. */
tidalrt_status_t tidalrt_stream_wait_event(tidalrt_stream_t *stream,
                                           tidalrt_event_t *event);

/* Blocks until the event's most recent capture has finished (at once if it
 * was never recorded). Returns NULL, or a new status carrying the failure if
 * the capture completed as failed. */
tidalrt_status_t tidalrt_event_synchronize(tidalrt_event_t *event);

/* 1 when the event's most recent capture has finished (or it was never
 * recorded), 0 otherwise. Does not block. */
int tidalrt_event_query(tidalrt_event_t *event);

/*===----------------------------------------------------------------------===
 * Statistics
 *===----------------------------------------------------------------------===*/

/* What the device's work did since creation or the last reset. Work counts
 * when it has run (skipped work after a failure does not count), so read
 * the figures after synchronising. */
typedef struct tidalrt_device_stats_s {
  /* The highest device byte touched + 1, over the ranges of every launch
   * and copy run: the measured device peak, which must not exceed the
   * plan's. */
  uint64_t peak_device_bytes;
  /* Bytes copied by COPY_TO_HOST and COPY_TO_DEVICE streams. */
  uint64_t bytes_to_host;
  uint64_t bytes_to_device;
  /* Launches and copies run (a launch counts even if its fn failed). */
  uint64_t launches;
  uint64_t copies;
  /* The total time copies took, summed over streams (SIM: including the
   * throttle's sleep). */
  double copy_seconds;
  /* The time compute streams' work stood blocked at event waits (0.16): on
   * SIM the measured copy stall, a generated program's compute stream
   * waiting for its offloads and prefetches (tidalrt_dev_wait). 0 on HOST
   * (its events are complete when waited on) and on CUDA (the GPU waits,
   * not a thread). */
  double compute_wait_seconds;
} tidalrt_device_stats_t;

void tidalrt_device_stats(const tidalrt_device_t *device,
                          tidalrt_device_stats_t *out_stats);
/* Sets every figure to 0. */
void tidalrt_device_reset_stats(tidalrt_device_t *device);

/*===----------------------------------------------------------------------===
 * Generated device programs (ABI 0.4; host-placed kernels 0.5)
 *===----------------------------------------------------------------------===*/

/*
 * A program compiled for a device target (tidalc --target sim) keeps the
 * step function's signature,
 *
 *   tidalrt_status_t tidal_program_step(tidalrt_context_t *ctx,
 *                                       uint8_t *arena);
 *
 * where `arena` is the base of the device arena (tidalrt_device_memory()),
 * and drives the memory plan through the calls below instead of calling
 * kernels directly. They use the device that the driver attached to the
 * context with tidalrt_context_set_device(), with one compute stream, one
 * copy-to-host stream, one copy-to-device stream, one host stream (for
 * host-placed kernels, 0.5) and, per copy (offload or prefetch op, numbered
 * by its copy_id 0..num_copies-1), two events: "the compute stream reached
 * the copy" and "the copy is done". Events are re-recorded every step (CUDA
 * semantics: a wait uses the latest record).
 *
 * With no device attached (the cpu target, or a function the driver runs on
 * the host), tidalrt_dev_launch() and tidalrt_dev_launch_host() call the
 * kernel at once and tidalrt_dev_synchronize() returns NULL; the copy calls
 * fail.
 *
 * Preparation (tidalrt_context_begin_prepare .. end_prepare): every call
 * checks its arguments (op and copy numbers, device and host ranges), so a
 * malformed program fails before its first step; tidalrt_dev_launch() and
 * tidalrt_dev_launch_host() then run the kernel in preparation mode on the
 * calling thread (after the compute and host streams have finished their
 * earlier work, if any), so kernels build their state and reserve scratch
 * as on the cpu target, and allocate the op's launch record; copies and
 * waits enqueue nothing (there is no data yet), and neither do launches.
 *
 * Steps: device kernels run on the compute stream's thread (SIM) in launch
 * order, host-placed kernels on the host stream's thread in theirs. They use
 * the context's per-op state and scratch exactly as on the host, which is
 * safe because the runtime holds one mutex of the context around every
 * kernel: on SIM host-placed and device kernels run one at a time (they
 * share the CPU and the context's scratch), while copies overlap them both;
 * a CUDA device will run them concurrently. Every hand-off between a
 * stream's thread and the calling thread (enqueue, synchronisation) goes
 * through the stream's mutex. The calling thread must not touch the arena,
 * the host arena or the context (other than through these calls) until
 * tidalrt_dev_synchronize() returns.
 *
 * Host-placed kernels (0.5; ZeRO-Offload style, e.g. an optimizer update on
 * optimizer state held in the host arena) read and write only the host
 * arena and run on the host stream, concurrently with the compute stream.
 * Their order with copies, which also touch the host arena, is this
 * protocol, in the calls' program order:
 *  a. a host launch runs after every offload and prefetch enqueued before
 *     it has finished (the host stream waits for the "done" event of each
 *     copy enqueued since the previous host launch): it may read bytes an
 *     offload wrote, or overwrite bytes an earlier prefetch reads;
 *  b. every copy enqueued after a host launch, in the same step or a later
 *     one, runs after all host launches enqueued before it (the copy stream
 *     waits for an event recorded on the host stream): a prefetch sees what
 *     a host kernel wrote, an offload does not overwrite host bytes a host
 *     kernel still reads or writes;
 *  c. a host launch is NOT ordered after the compute stream's kernels: host
 *     and device kernels overlap (device kernels never touch the host
 *     arena). A host kernel that needs a device result gets it through an
 *     offload (rule a), and a device kernel that needs a host result
 *     through a prefetch (rule b) followed by tidalrt_dev_wait().
 */

/* Enqueues `fn(ctx, desc, buffers)` on the context's compute stream.
 * `buffers` holds `num_buffers` pointers (into the device arena, or
 * constants of the program image) and may live on the caller's stack: it is
 * copied into op `op_index`'s launch record, allocated during preparation
 * and reused every step (an op launched again before the next
 * tidalrt_dev_synchronize() first waits for its previous launch). `desc`
 * must stay valid until the kernel has run (a constant of the program
 * does). `ranges` lists `num_reads` read ranges, then `num_writes` write
 * ranges, of the device arena (NULL if there are none): they are checked
 * against the arena (INVALID_ARGUMENT naming the op and the range) and raise
 * the measured device peak.
 *
 * With no device attached, calls fn directly and returns its status. A
 * failure, at enqueue or of the kernel itself, is recorded with
 * tidalrt_context_fail_at(ctx, op_index): a kernel that fails on the compute
 * stream sets it on that thread, fails the stream (later work is skipped)
 * and is returned by tidalrt_dev_synchronize(). So generated code returns a
 * non-NULL status of this call, or of tidalrt_dev_synchronize(), as is. */
tidalrt_status_t tidalrt_dev_launch(tidalrt_context_t *ctx,
                                    tidalrt_kernel_fn_t fn, const int64_t *desc,
                                    void *const *buffers, int64_t num_buffers,
                                    int64_t op_index,
                                    const tidalrt_range_t *ranges,
                                    int64_t num_reads, int64_t num_writes);

/* Runs a host-placed kernel (0.5): enqueues `fn(ctx, desc, buffers)` on the
 * context's host stream, ordered with copies by the protocol above and not
 * after the compute stream's kernels. `buffers` holds `num_buffers`
 * pointers into the host arena (tidalrt_dev_host_arena()) or constants of
 * the program image, and is copied into op `op_index`'s launch record as
 * by tidalrt_dev_launch() (an op launched again before the next
 * tidalrt_dev_synchronize() first waits for its previous launch, on
 * whichever stream that ran). Host kernels touch no device memory, so
 * there are no ranges; the device's stats count the launch.
 *
 * With no device attached, calls fn directly and returns its status.
 * Checks, preparation and failures are as for tidalrt_dev_launch(), with
 * messages naming tidalrt_dev_launch_host (INVALID_ARGUMENT for bad counts
 * or a NULL list, INTERNAL for an op index outside the program; a NULL ctx
 * or fn is INVALID_ARGUMENT): every failure is recorded with
 * tidalrt_context_fail_at(ctx, op_index); a kernel that fails on the host
 * stream fails it (later host launches are skipped, and so are copies that
 * follow it by rule b, and compute work waiting for those copies), and
 * tidalrt_dev_synchronize() returns its failure. */
tidalrt_status_t tidalrt_dev_launch_host(tidalrt_context_t *ctx,
                                         tidalrt_kernel_fn_t fn,
                                         const int64_t *desc,
                                         void *const *buffers,
                                         int64_t num_buffers, int64_t op_index);

/* The host arena attached with tidalrt_context_set_device() (0.5); NULL
 * with no device attached, a host arena of 0 bytes, or `ctx` NULL.
 * Generated code calls it once per step to form the host pointers of
 * host-placed kernels' buffers. */
uint8_t *tidalrt_dev_host_arena(tidalrt_context_t *ctx);

/* The program's constants as device kernels read them (0.7): sets *out to
 * `host` (the constant image of `bytes` bytes in the program) where device
 * memory is host memory (no device, SIM), and on CUDA to a device copy of
 * it, made by the first call after the device is attached and kept (outside
 * the arena) until it is detached or another image is given. Generated
 * code calls it once per step, before the first device kernel that reads a
 * constant; host-placed kernels read `host` itself. INVALID_ARGUMENT for a
 * NULL ctx or out (or host with bytes), INTERNAL if the copy fails. */
tidalrt_status_t tidalrt_dev_constants(tidalrt_context_t *ctx,
                                       const uint8_t *host, uint64_t bytes,
                                       const uint8_t **out);

/* Offload: copies the device range [device_offset, +bytes) to the host
 * arena at host_offset on the copy-to-host stream, after all compute work
 * enqueued so far (records copy `copy_id`'s "reached" event on the compute
 * stream; the copy stream waits for it) and after every host launch
 * enqueued so far (protocol, rule b), then records copy `copy_id`'s done
 * event on the copy stream. Both ranges are checked (INVALID_ARGUMENT). */
tidalrt_status_t tidalrt_dev_offload(tidalrt_context_t *ctx, int64_t copy_id,
                                     uint64_t host_offset,
                                     uint64_t device_offset, uint64_t bytes);

/* Prefetch: the reverse, host arena -> device, on the copy-to-device stream,
 * also after all compute work enqueued so far (the destination bytes'
 * previous occupant must be done with them) and every host launch enqueued
 * so far (rule b: it sees what host kernels wrote). The host bytes must be
 * complete: if they come from an offload, the compute stream must have
 * waited for it (tidalrt_dev_wait) before this call. */
tidalrt_status_t tidalrt_dev_prefetch(tidalrt_context_t *ctx, int64_t copy_id,
                                      uint64_t host_offset,
                                      uint64_t device_offset, uint64_t bytes);

/* Makes the compute stream wait for copy `copy_id` (its latest record)
 * without blocking the caller. A copy never enqueued is not waited for. */
tidalrt_status_t tidalrt_dev_wait(tidalrt_context_t *ctx, int64_t copy_id);

/* The end of a step: waits for all work on the device
 * (tidalrt_device_synchronize), then returns the first failure: the compute
 * stream's if it failed (the context's failed op is then the failing
 * launch's op_index), else the host stream's (likewise, for host-placed
 * kernels), else that of the first failed stream. NULL with no device
 * attached. */
tidalrt_status_t tidalrt_dev_synchronize(tidalrt_context_t *ctx);

/* Driver side: attaches `device` to `ctx` for the calls above, with the
 * host arena of offloaded copies (`host_arena_bytes` bytes at `host_arena`;
 * NULL when 0) and `num_copies` copy numbers. Creates the compute stream,
 * then the copy-to-host and copy-to-device streams, then the host stream
 * (a TIDALRT_STREAM_COMPUTE stream for host-placed kernels: its own thread
 * on SIM), an event for the host-launch protocol, 2 * num_copies events,
 * and the launch records' table (num_ops slots). A device already
 * attached is first synchronised and detached (its streams and events are
 * freed, failures dropped); `device` NULL only detaches. The device and
 * the host arena must outlive the attachment: detach (or free the context,
 * which detaches) before freeing them. The arena contents are not touched.
 * Fails with INVALID_ARGUMENT for a negative num_copies or a NULL host arena
 * of non-zero size, OUT_OF_MEMORY if streams or events cannot be created
 * (nothing stays attached then). */
tidalrt_status_t tidalrt_context_set_device(tidalrt_context_t *ctx,
                                            tidalrt_device_t *device,
                                            uint8_t *host_arena,
                                            uint64_t host_arena_bytes,
                                            int64_t num_copies);

/* The attached device; NULL if none. */
tidalrt_device_t *tidalrt_context_device(const tidalrt_context_t *ctx);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* TIDALRT_DEVICE_H */
