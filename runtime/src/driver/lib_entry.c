/* lib_entry.c - the entry points of a `tidalc --emit lib` shared library
 * that need the compiled program's symbols (as main.c for executables).
 * Linked whole from libtidalrt_lib.a; the rest of the ABI
 * (tidalrt/trainer.h) is in trainer_lib.cpp, which these pull in. */
#include "trainer_lib.h"

extern const char tidal_program_manifest[];
extern const unsigned char tidal_program_blob[];
extern const uint64_t tidal_program_blob_size;
tidalrt_status_t tidal_program_step(tidalrt_context_t *context, uint8_t *arena);
tidalrt_status_t tidal_program_predict(tidalrt_context_t *context,
                                       uint8_t *arena);

const char *tidalrt_trainer_manifest(void) { return tidal_program_manifest; }

tidalrt_status_t
tidalrt_trainer_create(const tidalrt_trainer_options_t *options,
                       tidalrt_trainer_t *out_trainer) {
  tidalrt_program_t program;
  program.manifest = tidal_program_manifest;
  program.blob = tidal_program_blob;
  program.blob_size = tidal_program_blob_size;
  program.step = tidal_program_step;
  program.predict = tidal_program_predict;
  return tidalrt_trainer_create_program(&program, options, out_trainer);
}
