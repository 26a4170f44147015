// driver.cpp - tidalrt_driver_main: the command line, the mode, and turning
// failures into one line on stderr and an exit status.
#include "driver.h"

#include "checkpoint.h"
#include "data.h"
#include "distributed.h"
#include "error.h"
#include "session.h"
#include "trace.h"

#include <algorithm>
#include <csignal>
#include <cstdlib>
#include <new>
#include <omp.h>
#include <sys/mman.h>
#include <unistd.h>

namespace tidalrt_driver {

void session::warn(const std::string &message) const {
  std::fprintf(err, "%s: warning: %s\n", program_name.c_str(), message.c_str());
  std::fflush(err);
}

namespace {

// Tells the kernel that the read-only pages inside [p, p + size) are not
// needed now (they are the executable's, re-read on a later access).
void release_pages(const void *p, size_t size) {
  const uintptr_t page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  uintptr_t begin = (reinterpret_cast<uintptr_t>(p) + page - 1) / page * page;
  uintptr_t end = (reinterpret_cast<uintptr_t>(p) + size) / page * page;
  if (end > begin)
    madvise(reinterpret_cast<void *>(begin), end - begin, MADV_DONTNEED);
}

} // namespace

loaded_program load_program(const session &s, trace_recorder &trace,
                            bool evaluate) {
  const manifest &m = s.info;
  loaded_program loaded;
  double start = trace.now_us();
  // tidalc moves a model's external data into the program blob.
  external_source compiled;
  if (const blob_range *external = m.find_embedded(external_data_blob)) {
    compiled.blob = s.program.blob + external->offset;
    compiled.blob_size = external->size;
  }
  loaded.model = onnx_model::parse(
      s.program.blob + m.model_blob.offset, m.model_blob.size,
      m.model + " (compiled in)", EXIT_RUNTIME_FAULT, std::move(compiled));
  std::unique_ptr<onnx_model> init;
  if (!s.opts.resume.empty()) {
    found_checkpoint found = find_newest_checkpoint(s, s.opts.resume);
    if (found.model) {
      check_resume_options(s, found);
      loaded.steps_done = found.step;
      loaded.run_first_step = found.step;
      if (std::optional<std::string> first =
              found.model->metadata(run_first_step_key)) {
        if (first->empty() || first->size() > 19 ||
            first->find_first_not_of("0123456789") != std::string::npos ||
            std::stoull(*first) > found.step)
          fail_input(found.path + ": metadata " + run_first_step_key + " '" +
                     *first + "' is not a step count up to " +
                     std::to_string(found.step));
        loaded.run_first_step = std::stoull(*first);
      }
      loaded.resumed_from = found.path;
      init = std::move(found.model);
    }
  }
  if (!init && !s.opts.init.empty()) {
    init = onnx_model::read(s.opts.init);
    loaded.steps_done = init->steps_done().value_or(0);
    loaded.run_first_step = loaded.steps_done;
  }
  loaded.runner =
      std::make_unique<program_runner>(m, s.program, s.opts.seed, evaluate);
  if (s.comm)
    loaded.runner->set_comm(s.comm);
  loaded.runner->load_initial_values(*loaded.model, init.get());
  if (s.comm)
    share_initial_values(s.comm, m, loaded.runner->step_memory());
  // The run holds the step's values from here on: the parsed model keeps
  // only what --save needs besides them, and the blob's pages (the model's
  // bytes and external data, read again from the executable if needed)
  // leave memory.
  std::vector<std::string> held;
  for (const tensor_slot &slot : m.step.args)
    if (slot.is_persistent())
      held.push_back(slot.name);
  loaded.model->release_data(held);
  release_pages(s.program.blob + m.model_blob.offset, m.model_blob.size);
  if (const blob_range *external = m.find_embedded(external_data_blob))
    release_pages(s.program.blob + external->offset, external->size);
  trace.complete("load", "load", start, trace.now_us() - start);
  start = trace.now_us();
  if (s.threads)
    loaded.runner->set_threads(s.threads); // prepares
  else
    loaded.runner->prepare();
  double end = trace.now_us();
  trace.complete("prepare", "prepare", start, end - start);
  trace.host_bytes(end, loaded.runner->host_bytes());
  return loaded;
}

namespace {

std::string base_name(const char *path) {
  std::string name = path && *path ? path : "tidal-program";
  size_t slash = name.rfind('/');
  return slash == std::string::npos ? name : name.substr(slash + 1);
}

// One line: a kernel's message may hold newlines.
std::string one_line(std::string text) {
  for (char &c : text)
    if (c == '\n' || c == '\r')
      c = ' ';
  return text;
}

void check_mode_options(const manifest &m, const options &o) {
  if (m.forward_mode()) {
    const char *unused = nullptr;
    if (o.steps)
      unused = "--steps";
    else if (o.epochs)
      unused = "--epochs";
    else if (o.shuffle)
      unused = "--shuffle";
    else if (!o.save.empty())
      unused = "--save";
    else if (!o.eval_inputs.empty())
      unused = "--eval-input";
    else if (!o.checkpoint_dir.empty())
      unused = o.resume.empty() ? "--checkpoint-dir" : "--resume";
    if (unused)
      fail_input(std::string(unused) +
                 " does not apply: this program runs the forward pass of " +
                 m.model + " (it was compiled without a loss)");
    if (o.output_dir.empty())
      fail_input("this program runs the forward pass of " + m.model +
                 "; give --output-dir DIR for its outputs");
  } else if (!o.output_dir.empty()) {
    fail_input("--output-dir applies only to forward-mode programs");
  }
}

// The output of a rank other than 0 of a data-parallel run.
struct null_output {
  std::FILE *file = nullptr;
  ~null_output() {
    if (file)
      std::fclose(file);
  }
};

// Ends a failed rank's run: every rank of a data-parallel run, so that
// none waits for it; else returns the status.
int failed(int status, const data_parallel *dp) {
  if (dp && dp->size() > 1)
    dp->abort(status);
  return status;
}

} // namespace

int run(int argc, char **argv, const tidalrt_program_t *program, std::FILE *out,
        std::FILE *err) {
  std::string name = base_name(argc > 0 ? argv[0] : nullptr);
  std::unique_ptr<data_parallel> dp;
  null_output quiet;
  try {
    if (!program)
      fail_runtime("no program");
    manifest m = parse_manifest(program->manifest, program->blob_size);
    options o = parse_options(argc, argv);
    if (o.help) {
      print_usage(out, name, m);
      std::fflush(out);
      return EXIT_OK;
    }
    if (o.no_arguments) {
      // Without arguments, train on the embedded data if it covers every
      // input; otherwise there is nothing to run.
      bool embedded = !m.forward_mode();
      for (const tensor_slot *input : m.step.data_inputs())
        embedded = embedded && m.find_embedded(input->name);
      if (!embedded) {
        print_usage(err, name, m);
        std::fflush(err);
        return EXIT_BAD_INPUT;
      }
    }
    check_mode_options(m, o);
    threads_from_environment(o);
    if (o.threads)
      omp_set_num_threads(std::min(*o.threads, omp_get_thread_limit()));
    if (m.parallel_grain)
      tidalrt_set_parallel_grain(m.parallel_grain);
    dp = data_parallel::join(m);
    if (dp && dp->size() > 1) {
      name += " (rank " + std::to_string(dp->rank()) + " of " +
              std::to_string(dp->size()) + ")";
      if (!dp->leader()) {
        o = data_parallel::follower_options(o, dp->rank());
        quiet.file = std::fopen("/dev/null", "w");
        if (!quiet.file)
          fail_runtime("cannot open /dev/null");
        out = quiet.file;
      }
    }
    session s{name, m, *program, o, out, err, dp ? dp->comm() : nullptr};
    s.threads = omp_get_max_threads();
    // Unless the user fixed the count, training and forward mode on the cpu
    // target adapt it to the load. (A device target's host kernels keep
    // theirs.)
    s.adaptive_threads =
        (o.threads_auto || (!o.threads && !std::getenv("OMP_NUM_THREADS"))) &&
        !m.device_target() && s.threads > 1;
    return m.forward_mode() ? run_forward(s) : run_training(s);
  } catch (const driver_error &e) {
    std::fflush(out);
    std::fprintf(err, "%s: error: %s\n", name.c_str(),
                 one_line(e.what()).c_str());
    std::fflush(err);
    return failed(e.exit_status(), dp.get());
  } catch (const std::bad_alloc &) {
    std::fflush(out);
    std::fprintf(err, "%s: error: out of memory\n", name.c_str());
    std::fflush(err);
    return failed(EXIT_RUNTIME_FAULT, dp.get());
  } catch (const std::exception &e) {
    std::fflush(out);
    std::fprintf(err, "%s: error: internal error: %s\n", name.c_str(),
                 one_line(e.what()).c_str());
    std::fflush(err);
    return failed(EXIT_RUNTIME_FAULT, dp.get());
  }
}

} // namespace tidalrt_driver

extern "C" int tidalrt_driver_main(int argc, char **argv,
                                   const tidalrt_program_t *program) {
  // A write past the file-size limit fails with EFBIG, reported as any
  // failed write, instead of killing the process.
  std::signal(SIGXFSZ, SIG_IGN);
  return tidalrt_driver::run(argc, argv, program, stdout, stderr);
}
