/* driver.h - the driver of generated training executables (internal). */
/*
 * A generated executable is the compiled program (an object file that
 * defines the tidal_program_* symbols) linked with main.c, which fills a
 * tidalrt_program_t from those symbols and calls tidalrt_driver_main. The
 * driver does everything else: the command line, data loading, the training
 * loop, --init/--save, logs and traces (docs/executable.md). Tests drive it
 * with a fake program. This header is not part of the public ABI.
 */
#ifndef TIDALRT_DRIVER_DRIVER_H
#define TIDALRT_DRIVER_DRIVER_H

#include "tidalrt/tidalrt.h"

#include <stdint.h>

#ifdef __cplusplus
#include <cstdio>
extern "C" {
#endif

/* What the generated object provides. */
typedef struct tidalrt_program_s {
  /* The NUL-terminated JSON manifest. */
  const char *manifest;
  /* The model and the embedded .npy images; the manifest gives offsets. */
  const unsigned char *blob;
  uint64_t blob_size;
  /* The training step (the forward pass in forward mode). */
  tidalrt_status_t (*step)(tidalrt_context_t *context, uint8_t *arena);
  /* The eval-mode forward pass; used only if the manifest lists it. */
  tidalrt_status_t (*predict)(tidalrt_context_t *context, uint8_t *arena);
} tidalrt_program_t;

/* Runs the executable's command line against `program`; returns the exit
 * status (0 success, 1 bad input, 2 runtime fault). */
int tidalrt_driver_main(int argc, char **argv,
                        const tidalrt_program_t *program);

#ifdef __cplusplus
} /* extern "C" */

namespace tidalrt_driver {
/* As tidalrt_driver_main, writing to `out` and `err` instead of stdout and
 * stderr (tests pass temporary files). */
int run(int argc, char **argv, const tidalrt_program_t *program, std::FILE *out,
        std::FILE *err);
} // namespace tidalrt_driver
#endif

#endif /* TIDALRT_DRIVER_DRIVER_H */
