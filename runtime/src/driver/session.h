// session.h - what one run of the executable works with, shared by the
// training loop (trainer.cpp) and forward mode (forward.cpp).
#ifndef TIDALRT_DRIVER_SESSION_H
#define TIDALRT_DRIVER_SESSION_H

#include "driver.h"
#include "manifest.h"
#include "onnx_weights.h"
#include "options.h"
#include "program.h"

#include "tidalrt/comm.h"

#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>

namespace tidalrt_driver {

class trace_recorder;

struct session {
  // The executable's name for messages (argv[0]'s base name).
  std::string program_name;
  const manifest &info;
  const tidalrt_program_t &program;
  const options &opts;
  std::FILE *out;
  std::FILE *err;
  // A data-parallel run's communicator (distributed.h); NULL for one
  // process. The step's all-reduce kernels use it.
  tidalrt_comm_t *comm = nullptr;
  // The OpenMP threads the kernels run on (0: OpenMP's count on each
  // calling thread), and whether the training loop adapts the count to the
  // load (--threads auto, thread_governor.h) up to `threads`.
  int threads = 0;
  bool adaptive_threads = false;

  // Prints "NAME: warning: MESSAGE" on err.
  void warn(const std::string &message) const;
};

// The compiled program ready to run: models parsed, arenas filled with
// initial values (--init applied), prepared.
struct loaded_program {
  std::unique_ptr<onnx_model> model;
  std::unique_ptr<program_runner> runner;
  // tidal.steps_done of the checkpoint resumed from or the --init file,
  // else 0.
  uint64_t steps_done = 0;
  // The step the run began at: steps_done, or for a resumed run the
  // checkpoint's tidal.run_first_step (--steps and --epochs count from it).
  uint64_t run_first_step = 0;
  // The checkpoint resumed from ("" when the run starts afresh).
  std::string resumed_from;
};
// `evaluate`: the predict function gets its arena too (runs with
// --eval-input, and library trainers).
loaded_program load_program(const session &session, trace_recorder &trace,
                            bool evaluate);

// `name` as a file name: characters outside [A-Za-z0-9._-] become '_'.
std::string sanitize_file_name(const std::string &name);

// The two modes; each returns the exit status or throws a driver_error.
int run_training(const session &session);
int run_forward(const session &session);

} // namespace tidalrt_driver

#endif // TIDALRT_DRIVER_SESSION_H
