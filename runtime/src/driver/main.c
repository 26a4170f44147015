/* main.c - main() of a generated executable: hands the compiled program's
 * symbols to the driver. Linked from libtidalrt_main.a, before the driver. */
#include "driver.h"

extern const char tidal_program_manifest[];
extern const unsigned char tidal_program_blob[];
extern const uint64_t tidal_program_blob_size;
tidalrt_status_t tidal_program_step(tidalrt_context_t *context, uint8_t *arena);
tidalrt_status_t tidal_program_predict(tidalrt_context_t *context,
                                       uint8_t *arena);

int main(int argc, char **argv) {
  tidalrt_program_t program;
  program.manifest = tidal_program_manifest;
  program.blob = tidal_program_blob;
  program.blob_size = tidal_program_blob_size;
  program.step = tidal_program_step;
  program.predict = tidal_program_predict;
  return tidalrt_driver_main(argc, argv, &program);
}
