/* trainer.h - the training step as a library: the C ABI of the shared
 * library that `tidalc --emit lib` writes (docs/library-abi.md).
 *
 * One library holds one compiled model. A trainer is its training state
 * (weights, optimizer state, running statistics, the step count) in an
 * arena planned at compile time, on the target the model was compiled for.
 * The caller feeds it batches from any source:
 *
 *   tidalrt_trainer_t trainer;
 *   tidalrt_status_t status = tidalrt_trainer_create(NULL, &trainer);
 *   tidalrt_tensor_view_t inputs[2] = {
 *       {"input", TIDALRT_ELEMENT_TYPE_F32, 2, x_dims, x, sizeof(x)},
 *       {"label", TIDALRT_ELEMENT_TYPE_I64, 1, y_dims, y, sizeof(y)}};
 *   float loss;
 *   status = tidalrt_trainer_step(trainer, inputs, 2, &loss);
 *   status = tidalrt_trainer_save(trainer, "trained.onnx");
 *   tidalrt_trainer_destroy(trainer);
 *
 * Every call returns NULL on success or a status object whose code and
 * message say what went wrong (free it with tidalrt_status_free); none
 * exits, aborts or prints. A trainer is a handle, not a pointer: a handle
 * that was destroyed (or never created) is an error, not undefined
 * behaviour. Calls on one trainer are serialised; trainers are independent.
 *
 * The ABI is versioned: tidalrt_trainer_abi_version() returns
 * TIDALRT_TRAINER_ABI_VERSION of the library; structs that may grow carry
 * their size.
 */
#ifndef TIDALRT_TRAINER_H
#define TIDALRT_TRAINER_H

#include "tidalrt/tidalrt.h"

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define TIDALRT_TRAINER_ABI_VERSION 1u

#define TIDALRT_TRAINER_THREADS_AUTO (-1)

/* A trainer; 0 is never one. */
typedef uint64_t tidalrt_trainer_t;

typedef struct tidalrt_trainer_options {
  /* sizeof(tidalrt_trainer_options_t), for growth. */
  size_t struct_size;
  /* Host threads (0: OpenMP's default). TIDALRT_TRAINER_THREADS_AUTO:
   * start at the cores the process may use and adapt the count to the load
   * after each step, as the executable's --threads auto (on the cpu
   * target; a device target keeps OpenMP's default). */
  int threads;
  /* Seeds the random ops (Dropout), as the executable's --seed. */
  uint64_t seed;
  /* An ONNX file (a --save or tidalrt_trainer_save output) to start from
   * instead of the compiled-in weights; NULL for none. */
  const char *init_path;
} tidalrt_trainer_options_t;

/* A caller's tensor: C order, `bytes` bytes at `data`. */
typedef struct tidalrt_tensor_view {
  const char *name;
  tidalrt_element_type_t type;
  size_t rank;
  const int64_t *dims;
  const void *data;
  size_t bytes;
} tidalrt_tensor_view_t;

/* Where a result is written: `bytes` bytes at `data`. */
typedef struct tidalrt_tensor_buffer {
  const char *name;
  void *data;
  size_t bytes;
} tidalrt_tensor_buffer_t;

typedef struct tidalrt_trainer_counters {
  size_t struct_size;
  /* The global step count (the --init file's steps included). */
  uint64_t steps;
  /* Host memory the trainer holds: arenas and kernel scratch. */
  uint64_t host_bytes;
  /* Device targets: the device memory the last step used at its peak, and
   * the bytes copied to the host and to the device over all steps. */
  uint64_t device_peak_bytes;
  uint64_t bytes_to_host;
  uint64_t bytes_to_device;
  /* The wall time of the last step. */
  double last_step_seconds;
  /* The OpenMP threads the next step's kernels run on (with
   * TIDALRT_TRAINER_THREADS_AUTO it follows the load). Filled when
   * struct_size covers it: callers built before it was added pass a
   * smaller struct. */
  int threads;
} tidalrt_trainer_counters_t;

/* TIDALRT_TRAINER_ABI_VERSION of the library. */
uint32_t tidalrt_trainer_abi_version(void);

/* The compiled program's manifest (JSON): the model, batch size, loss,
 * optimizer, target, and every argument and result of the step and
 * predict functions with name, role, dtype and shape
 * (docs/executable.md "The manifest"). Static; never NULL. */
const char *tidalrt_trainer_manifest(void);

/* Creates a trainer with the compiled-in initial values (or those of
 * options->init_path); `options` may be NULL. */
tidalrt_status_t
tidalrt_trainer_create(const tidalrt_trainer_options_t *options,
                       tidalrt_trainer_t *out_trainer);

/* Destroys a trainer; its handle is invalid from then on. */
tidalrt_status_t tidalrt_trainer_destroy(tidalrt_trainer_t trainer);

/* Runs one training step on one batch: `inputs` names every data input of
 * the step (the manifest's step arguments with role "input") exactly once,
 * each with the argument's dtype and shape (the compiled batch size).
 * Writes the step's loss to `out_loss` (may be NULL). */
tidalrt_status_t tidalrt_trainer_step(tidalrt_trainer_t trainer,
                                      const tidalrt_tensor_view_t *inputs,
                                      size_t input_count, float *out_loss);

/* Runs the eval-mode forward pass (the predict function) with the current
 * weights on one batch and copies each requested result (by name, exactly
 * its byte size) into `outputs`. */
tidalrt_status_t tidalrt_trainer_predict(tidalrt_trainer_t trainer,
                                         const tidalrt_tensor_view_t *inputs,
                                         size_t input_count,
                                         const tidalrt_tensor_buffer_t *outputs,
                                         size_t output_count);

/* Copies the value of a persistent tensor (role param, state or
 * optimizer_state, by its manifest name) out of the trainer, or into it.
 * `bytes` must be its byte size. */
tidalrt_status_t tidalrt_trainer_read(tidalrt_trainer_t trainer,
                                      const char *name, void *dst,
                                      size_t bytes);
tidalrt_status_t tidalrt_trainer_write(tidalrt_trainer_t trainer,
                                       const char *name, const void *src,
                                       size_t bytes);

/* Writes the model with the trainer's values as an ONNX file (atomically;
 * as the executable's --save), or loads one (as --init: every value the
 * file holds, and its step count). */
tidalrt_status_t tidalrt_trainer_save(tidalrt_trainer_t trainer,
                                      const char *path);
tidalrt_status_t tidalrt_trainer_load(tidalrt_trainer_t trainer,
                                      const char *path);

/* Fills `out` (whose struct_size the caller sets: at least up to
 * last_step_seconds; later fields are filled when it covers them). */
tidalrt_status_t tidalrt_trainer_counters(tidalrt_trainer_t trainer,
                                          tidalrt_trainer_counters_t *out);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* TIDALRT_TRAINER_H */
