/* trainer_lib.h - what the trainer library's entry (lib_entry.c) and the
 * tests call: tidalrt_trainer_create on a given program (internal). */
#ifndef TIDALRT_DRIVER_TRAINER_LIB_H
#define TIDALRT_DRIVER_TRAINER_LIB_H

#include "driver.h"
#include "tidalrt/trainer.h"

#ifdef __cplusplus
extern "C" {
#endif

/* tidalrt_trainer_create for `program` (copied). */
tidalrt_status_t
tidalrt_trainer_create_program(const tidalrt_program_t *program,
                               const tidalrt_trainer_options_t *options,
                               tidalrt_trainer_t *out_trainer);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* TIDALRT_DRIVER_TRAINER_LIB_H */
