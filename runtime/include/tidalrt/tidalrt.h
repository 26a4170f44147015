/* tidalrt.h - the public C ABI of the tidal runtime (one versioned header). */
/*
 * Conventions (see docs/runtime-abi.md):
 * - Every public name starts with `tidalrt_` (macros and enumerators with
 *   `TIDALRT_`).
 * - Every fallible call returns a tidalrt_status_t; NULL means success. A
 *   non-NULL status is owned by the caller and released with
 *   tidalrt_status_free().
 * - Objects are opaque handles, created by a function that fills an `out_`
 *   pointer (always the last parameters) and released by a matching
 *   `_free` function that accepts NULL.
 * - On failure, `out_` pointers are set to NULL (or zero) whenever they are
 *   non-NULL, so a caller never sees a half-built object.
 */
#ifndef TIDALRT_TIDALRT_H
#define TIDALRT_TIDALRT_H

#include <stddef.h>
#include <stdint.h>

#include "tidalrt/kernel_list.h"

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__) || defined(__clang__)
#define TIDALRT_PRINTF_LIKE(fmt_index, args_index)                             \
  __attribute__((format(printf, fmt_index, args_index)))
#else
#define TIDALRT_PRINTF_LIKE(fmt_index, args_index)
#endif

/*===----------------------------------------------------------------------===
 * Versioning
 *===----------------------------------------------------------------------===*/

/* MINOR grows when functions or enumerators are added; MAJOR grows (and
 * MINOR resets) when anything existing changes meaning, signature or value. */
#define TIDALRT_ABI_VERSION_MAJOR 0
#define TIDALRT_ABI_VERSION_MINOR 17
#define TIDALRT_ABI_VERSION                                                    \
  ((uint32_t)(((uint32_t)TIDALRT_ABI_VERSION_MAJOR << 16) |                    \
              (uint32_t)TIDALRT_ABI_VERSION_MINOR))

/* The ABI version the linked runtime library implements, encoded as
 * (major << 16) | minor. Compare with TIDALRT_ABI_VERSION. */
uint32_t tidalrt_abi_version(void);

/*===----------------------------------------------------------------------===
 * Status
 *===----------------------------------------------------------------------===*/

/* Values are stable within an ABI major version. */
typedef enum tidalrt_status_code_e {
  TIDALRT_OK = 0,
  /* Bad input: a malformed file, a wrong dtype or shape, a bad parameter. */
  TIDALRT_INVALID_ARGUMENT = 1,
  /* A named thing (file, input, tensor) does not exist. */
  TIDALRT_NOT_FOUND = 2,
  /* The operating system failed a read, write, rename, ... */
  TIDALRT_IO_ERROR = 3,
  /* An allocation failed. */
  TIDALRT_OUT_OF_MEMORY = 4,
  /* Well-formed input that this runtime does not handle. */
  TIDALRT_UNSUPPORTED = 5,
  /* A bug in the runtime or in the generated code. */
  TIDALRT_INTERNAL = 6,
  /* Another process did not answer in time or failed (0.8): a collective
   * of a data-parallel run past its timeout. */
  TIDALRT_UNAVAILABLE = 7,
} tidalrt_status_code_t;

/* An opaque status object; NULL means TIDALRT_OK. */
typedef struct tidalrt_status_s *tidalrt_status_t;

/* Makes a status with a printf-formatted message. Returns NULL for
 * TIDALRT_OK. Never fails: if the message cannot be allocated, a shared
 * preallocated status with the same code and a generic message is returned
 * (tidalrt_status_free() knows not to free it). */
tidalrt_status_t tidalrt_status_make(tidalrt_status_code_t code,
                                     const char *format, ...)
    TIDALRT_PRINTF_LIKE(2, 3);

/* Prepends "<formatted prefix>: " to the message of `status`, taking
 * ownership of `status` and returning the annotated status (which may be the
 * same object). Returns NULL for a NULL status. If allocation fails, the
 * status is returned unannotated rather than lost. */
tidalrt_status_t tidalrt_status_annotate(tidalrt_status_t status,
                                         const char *format, ...)
    TIDALRT_PRINTF_LIKE(2, 3);

/* The code of `status`; TIDALRT_OK for NULL. */
tidalrt_status_code_t tidalrt_status_code(tidalrt_status_t status);

/* The message of `status` ("" for NULL). The string is owned by the status
 * and lives until tidalrt_status_free(). */
const char *tidalrt_status_message(tidalrt_status_t status);

/* Releases `status`. NULL is allowed. */
void tidalrt_status_free(tidalrt_status_t status);

/* A static name for `code`, e.g. "INVALID_ARGUMENT"; "UNKNOWN" if it is not
 * one of the enumerators. */
const char *tidalrt_status_code_name(tidalrt_status_code_t code);

/* Returns UNSUPPORTED unless the linked runtime implements ABI version
 * `major`.`minor` (same major, at least that minor). Generated code calls it
 * with TIDALRT_ABI_VERSION_MAJOR/MINOR of the header it was built against. */
tidalrt_status_t tidalrt_abi_check(uint32_t major, uint32_t minor);

/*===----------------------------------------------------------------------===
 * Element types
 *===----------------------------------------------------------------------===*/

/* Values are those of ONNX's TensorProto.DataType, so the compiler can pass
 * an ONNX element type through unchanged. */
typedef enum tidalrt_element_type_e {
  TIDALRT_ELEMENT_TYPE_INVALID = 0,
  TIDALRT_ELEMENT_TYPE_F32 = 1,
  TIDALRT_ELEMENT_TYPE_U8 = 2,
  TIDALRT_ELEMENT_TYPE_I8 = 3,
  TIDALRT_ELEMENT_TYPE_U16 = 4,
  TIDALRT_ELEMENT_TYPE_I16 = 5,
  TIDALRT_ELEMENT_TYPE_I32 = 6,
  TIDALRT_ELEMENT_TYPE_I64 = 7,
  TIDALRT_ELEMENT_TYPE_BOOL = 9,
  TIDALRT_ELEMENT_TYPE_F16 = 10,
  TIDALRT_ELEMENT_TYPE_F64 = 11,
  TIDALRT_ELEMENT_TYPE_U32 = 12,
  TIDALRT_ELEMENT_TYPE_U64 = 13,
  TIDALRT_ELEMENT_TYPE_BF16 = 16,
} tidalrt_element_type_t;

/* The size of one element in bytes; 0 for an unknown type. */
size_t tidalrt_element_type_size(tidalrt_element_type_t type);

/* The NumPy name of `type` ("float32", "int64", "bool", "bfloat16", ...);
 * "invalid" for an unknown type. The string is static. */
const char *tidalrt_element_type_name(tidalrt_element_type_t type);

/*===----------------------------------------------------------------------===
 * Arrays: a dense, C-order, host-memory tensor that owns its data.
 *===----------------------------------------------------------------------===*/

/* The largest rank an array may have (NumPy 2's limit). */
#define TIDALRT_MAX_RANK 64

/* In an expected shape, a dimension that matches any size (printed `*`). */
#define TIDALRT_DIM_ANY ((int64_t)-1)

/* The alignment in bytes of every array's data. */
#define TIDALRT_ARRAY_ALIGNMENT 64

typedef struct tidalrt_array_s tidalrt_array_t;

/* Creates a zero-filled array of `type` with `rank` dimensions `dims`
 * (`dims` may be NULL when `rank` is 0). Fails with INVALID_ARGUMENT for an
 * unknown type, a rank above TIDALRT_MAX_RANK, a negative dimension or a
 * byte size that does not fit in size_t. */
tidalrt_status_t tidalrt_array_create(tidalrt_element_type_t type, size_t rank,
                                      const int64_t *dims,
                                      tidalrt_array_t **out_array);

/* Releases `array` and its data. NULL is allowed. */
void tidalrt_array_free(tidalrt_array_t *array);

tidalrt_element_type_t tidalrt_array_element_type(const tidalrt_array_t *array);
size_t tidalrt_array_rank(const tidalrt_array_t *array);
/* `rank` dimensions; a valid pointer even when the rank is 0. */
const int64_t *tidalrt_array_dims(const tidalrt_array_t *array);
/* The product of the dimensions (1 for rank 0). */
size_t tidalrt_array_element_count(const tidalrt_array_t *array);
/* element_count * element size. */
size_t tidalrt_array_byte_size(const tidalrt_array_t *array);
/* The data, TIDALRT_ARRAY_ALIGNMENT-aligned, never NULL. */
void *tidalrt_array_data(tidalrt_array_t *array);
const void *tidalrt_array_const_data(const tidalrt_array_t *array);

/* Checks `array` against an expected element type and shape, where a
 * TIDALRT_DIM_ANY entry in `expected_dims` matches any size. On mismatch
 * returns INVALID_ARGUMENT with a message such as
 *   "x.npy: input 'x' expects float32 [*, 1, 28, 28], got int64 [10, 784]".
 * `file` and `input_name` only shape the message and may be NULL. */
tidalrt_status_t tidalrt_array_check(const tidalrt_array_t *array,
                                     const char *file, const char *input_name,
                                     tidalrt_element_type_t expected_type,
                                     size_t expected_rank,
                                     const int64_t *expected_dims);

/*===----------------------------------------------------------------------===
 * NumPy .npy files
 *===----------------------------------------------------------------------===*/

/* Reads a .npy file (format 1.0, 2.0 or 3.0; C order; little-endian or
 * byte-order-free dtype; a type listed above except bf16) into a new array.
 * Every error message starts with "<path>: ". Codes: NOT_FOUND (no such
 * file), IO_ERROR (the read failed), INVALID_ARGUMENT (not a well-formed
 * .npy file: bad magic, truncated, malformed header, negative or
 * overflowing shape, data size mismatch), UNSUPPORTED (a well-formed file
 * tidal cannot use: format version, fortran_order, big-endian or other
 * dtype), OUT_OF_MEMORY. */
tidalrt_status_t tidalrt_npy_read(const char *path,
                                  tidalrt_array_t **out_array);

/* As tidalrt_npy_read, but a well-formed, C-order, little-endian file whose
 * data is aligned to its element size is mapped (read-only, private)
 * rather than read: the array views the mapping, its pages are read on
 * first access and the kernel may drop them again, so a data set larger
 * than memory works. Every other file (and every error) is as
 * tidalrt_npy_read. The array's data must not be written. */
tidalrt_status_t tidalrt_npy_map(const char *path, tidalrt_array_t **out_array);

/* Parses the .npy image held in memory at `bytes` (`size` bytes), e.g. one
 * compiled into an executable. `name` prefixes error messages (NULL:
 * "<memory>"). The data is copied. */
tidalrt_status_t tidalrt_npy_read_memory(const void *bytes, size_t size,
                                         const char *name,
                                         tidalrt_array_t **out_array);

/* Writes `array` to `path` byte for byte as NumPy's np.save would (format
 * 1.0, whose header always suffices up to TIDALRT_MAX_RANK). The write is
 * atomic: the file is written to "<path>.tmp.<pid>.<n>" in the same
 * directory, synced and renamed over `path`; on failure the temporary file
 * is removed and `path` is left as it was. */
tidalrt_status_t tidalrt_npy_write(const char *path,
                                   const tidalrt_array_t *array);

/* As tidalrt_npy_write, from a raw C-order buffer of `type` and shape
 * (`rank`, `dims`). `data` may be NULL only when the shape has 0 elements. */
tidalrt_status_t tidalrt_npy_write_data(const char *path,
                                        tidalrt_element_type_t type,
                                        size_t rank, const int64_t *dims,
                                        const void *data);

/*===----------------------------------------------------------------------===
 * Execution context
 *===----------------------------------------------------------------------===*/

/* What kernels share while a compiled program runs: one state slot per op
 * (oneDNN primitives and other set-up built once), one scratch buffer sized
 * during preparation, the random seed and the step counter. */
typedef struct tidalrt_context_s tidalrt_context_t;

typedef struct tidalrt_context_options_s {
  /* The number of ops of the program (desc[0] of every kernel call is below
   * it). */
  size_t num_ops;
  /* Seeds random ops (Dropout): their stream depends on (seed, step, op). */
  uint64_t seed;
} tidalrt_context_options_t;

tidalrt_status_t
tidalrt_context_create(const tidalrt_context_options_t *options,
                       tidalrt_context_t **out_context);
/* Releases the context, every op's state and the scratch buffer. NULL is
 * allowed. */
void tidalrt_context_free(tidalrt_context_t *context);

/* While preparing, kernels build their state and reserve scratch memory but
 * read and write no tensor data. A program is run once in this mode before
 * its first step, so that no step allocates. Ending preparation allocates
 * the scratch buffer (OUT_OF_MEMORY on failure). */
void tidalrt_context_begin_prepare(tidalrt_context_t *context);
tidalrt_status_t tidalrt_context_end_prepare(tidalrt_context_t *context);

/* The number of OpenMP threads the context's kernels run on (0.10), from
 * the next kernel call on, on whichever thread calls them; 0 leaves
 * OpenMP's own count. oneDNN plans each primitive for a team size, so every
 * thread count has its own op states: call this between steps (no kernel
 * running), and prepare again when tidalrt_context_prepared() says the
 * count's states were never prepared. A count above OMP_THREAD_LIMIT is
 * lowered to it. INVALID_ARGUMENT for a negative count. */
tidalrt_status_t tidalrt_context_set_threads(tidalrt_context_t *context,
                                             int threads);
int tidalrt_context_threads(const tidalrt_context_t *context);
/* The element count below which a kernel's loop runs on the calling
 * thread rather than in an OpenMP parallel region (0.10): for the whole
 * process, read by every kernel call. `tidal-calibrate` measures it
 * (the profile's host.parallel_grain) and a program compiled with that
 * profile sets it when it starts. It decides only whether a loop runs in
 * parallel, never how a reduction is split: results do not depend on it.
 * 0 or less restores the default. */
#define TIDALRT_DEFAULT_PARALLEL_GRAIN 32768
void tidalrt_set_parallel_grain(int64_t elements);
int64_t tidalrt_parallel_grain(void);

/* 1 when the states of the current thread count went through a
 * preparation (tidalrt_context_end_prepare), else 0. */
int tidalrt_context_prepared(const tidalrt_context_t *context);

/* The step number that random ops mix into their stream. */
void tidalrt_context_set_step(tidalrt_context_t *context, uint64_t step);

/* Generated code calls this before returning a kernel's failure, so the
 * caller can name the failing op; -1 when no op failed. */
void tidalrt_context_fail_at(tidalrt_context_t *context, int64_t op_index);
int64_t tidalrt_context_failed_op(const tidalrt_context_t *context);

/* Bytes of scratch memory reserved by the kernels during preparation. */
size_t tidalrt_context_scratch_bytes(const tidalrt_context_t *context);

/*===----------------------------------------------------------------------===
 * Kernel call ABI (generated code -> runtime)
 *===----------------------------------------------------------------------===*/

/* Every tidal op that does work lowers to one call
 *
 *   tidalrt_status_t tidalrt_k_<op>(tidalrt_context_t *context,
 *                                   const int64_t *desc, void *const *buffers);
 *
 * `buffers` holds one pointer per tensor: the op's operands in order, then
 * its results in order (variadic operands/results expand in place; an absent
 * optional operand has a NULL pointer). Tensors are dense, C order, aligned
 * to TIDALRT_ARRAY_ALIGNMENT.
 *
 * `desc` is a constant array of int64 words that the compiler emits per
 * call site:
 *   desc[0]  the op's index in the program (its state slot, its name in
 *            errors)
 *   desc[1]  T, the number of tensors (as in `buffers`)
 *   T times: element type (tidalrt_element_type_t) | layout << 8 (below),
 *            rank r (-1: an absent optional operand, then no dims), r dims
 *   A, the number of attributes, then A attributes: every inherent
 *            attribute the op declares, in alphabetical order of name, with
 *            default values filled in; each is a tag word then its payload:
 *              TIDALRT_ATTR_ABSENT  (no payload; an unset optional attribute)
 *              TIDALRT_ATTR_INT     1 word (integers, booleans 0/1, enums)
 *              TIDALRT_ATTR_FLOAT   1 word holding an IEEE double's bits
 *              TIDALRT_ATTR_INTS    a count n then n words
 * Enum values: #tidal<reduction none|sum|mean> = 0|1|2. */
/* Tensor layouts (the descriptor's type word, bits 8 and up):
 *   TIDALRT_LAYOUT_DENSE            dense, C order
 *   TIDALRT_LAYOUT_CHANNEL_BLOCKED  float32 [N, C, spatial...] with C a
 *     multiple of 16, stored as oneDNN's nC(spatial)Bc: channel blocks of B
 *     = tidalrt_channel_block() (16 where oneDNN runs AVX-512 kernels, 8
 *     otherwise), [N][C / B][spatial...][B]; the same byte count. Only the
 *     kernels of convolutions, batch normalization and element-wise ops on
 *     same-shaped tensors take it (tidalc's tidal-block-channels). */
#define TIDALRT_LAYOUT_SHIFT 8
#define TIDALRT_LAYOUT_DENSE 0
#define TIDALRT_LAYOUT_CHANNEL_BLOCKED 1

/* The channel block of TIDALRT_LAYOUT_CHANNEL_BLOCKED tensors in this
 * process: 16 or 8, fixed at the first call. */
int tidalrt_channel_block(void);

#define TIDALRT_ATTR_ABSENT 0
#define TIDALRT_ATTR_INT 1
#define TIDALRT_ATTR_FLOAT 2
#define TIDALRT_ATTR_INTS 3

typedef tidalrt_status_t (*tidalrt_kernel_fn_t)(tidalrt_context_t *context,
                                                const int64_t *desc,
                                                void *const *buffers);

#define TIDALRT_DECLARE_KERNEL(name)                                           \
  tidalrt_status_t tidalrt_k_##name(                                           \
      tidalrt_context_t *context, const int64_t *desc, void *const *buffers);
TIDALRT_KERNEL_LIST(TIDALRT_DECLARE_KERNEL)
#undef TIDALRT_DECLARE_KERNEL

#ifdef __cplusplus
} /* extern "C" */
#endif

/* Devices, streams and events (ABI 0.3) and generated device programs
 * (0.4; host-placed kernels 0.5); after everything above, which they use. */
#include "tidalrt/device.h"

#endif /* TIDALRT_TIDALRT_H */
