// checkpoint.cpp - writing, finding and pruning periodic checkpoints.
#include "checkpoint.h"

#include "error.h"
#include "file_util.h"
#include "session.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

namespace tidalrt_driver {

const char *const seed_key = "tidal.seed";
const char *const shuffle_key = "tidal.shuffle";
const char *const run_first_step_key = "tidal.run_first_step";

namespace {

constexpr const char *prefix = "step-";
constexpr const char *suffix = ".onnx";
constexpr size_t digits = 12;

// The step of a checkpoint file name, or -1 for any other name.
int64_t step_of(const std::string &name) {
  size_t p = std::string(prefix).size(), s = std::string(suffix).size();
  if (name.size() != p + digits + s || name.compare(0, p, prefix) != 0 ||
      name.compare(p + digits, s, suffix) != 0)
    return -1;
  std::string number = name.substr(p, digits);
  if (number.find_first_not_of("0123456789") != std::string::npos)
    return -1;
  return static_cast<int64_t>(std::stoull(number));
}

// Whether `name` is a temporary file of an atomic write of a checkpoint
// (file_util.cpp: NAME.tmp.PID, NAME.data.tmp.PID).
bool is_temporary(const std::string &name) {
  return name.compare(0, std::string(prefix).size(), prefix) == 0 &&
         name.find(".tmp.") != std::string::npos;
}

// The checkpoint steps in `dir`, newest first; removes temporary files.
std::vector<uint64_t> list_checkpoints(const std::string &dir,
                                       bool remove_temporaries) {
  std::vector<uint64_t> steps;
  DIR *d = opendir(dir.c_str());
  if (!d)
    return steps;
  std::vector<std::string> stale;
  while (dirent *entry = readdir(d)) {
    std::string name = entry->d_name;
    int64_t step = step_of(name);
    if (step >= 0)
      steps.push_back(static_cast<uint64_t>(step));
    else if (remove_temporaries && is_temporary(name))
      stale.push_back(dir + "/" + name);
  }
  closedir(d);
  for (const std::string &path : stale)
    unlink(path.c_str());
  std::sort(steps.rbegin(), steps.rend());
  return steps;
}

void remove_checkpoint(const std::string &path) {
  unlink(path.c_str());
  unlink((path + ".data").c_str());
}

} // namespace

std::string checkpoint_path(const std::string &dir, uint64_t step) {
  char number[32];
  std::snprintf(number, sizeof(number), "%012llu",
                static_cast<unsigned long long>(step));
  return dir + "/" + prefix + number + suffix;
}

found_checkpoint find_newest_checkpoint(const session &s,
                                        const std::string &dir) {
  struct stat info;
  if (stat(dir.c_str(), &info) == 0 && !S_ISDIR(info.st_mode))
    fail_input("--resume " + dir + ": not a directory");
  found_checkpoint found;
  for (uint64_t step : list_checkpoints(dir, /*remove_temporaries=*/true)) {
    std::string path = checkpoint_path(dir, step);
    try {
      std::unique_ptr<onnx_model> model = onnx_model::read(path);
      if (model->steps_done().value_or(UINT64_MAX) != step)
        fail_input(path + ": its tidal.steps_done is not " +
                   std::to_string(step));
      found.path = path;
      found.step = step;
      found.model = std::move(model);
      return found;
    } catch (const driver_error &e) {
      s.warn(std::string("skipping a checkpoint that does not read back: ") +
             e.what());
    }
  }
  return found;
}

void check_resume_options(const session &s, const found_checkpoint &found) {
  auto check = [&](const char *key, const std::string &now,
                   const char *option) {
    std::optional<std::string> then = found.model->metadata(key);
    if (then && *then != now)
      fail_input(found.path + " was written with " + option + " " + *then +
                 ", this run has " + option + " " + now +
                 "; resume with the options of the run that wrote it");
  };
  check(seed_key, std::to_string(s.opts.seed), "--seed");
  std::optional<std::string> shuffled = found.model->metadata(shuffle_key);
  if (shuffled && (*shuffled == "1") != s.opts.shuffle)
    fail_input(found.path + " was written " +
               (s.opts.shuffle ? "without" : "with") +
               " --shuffle; resume with the options of the run that wrote it");
}

checkpoint_writer::checkpoint_writer(const session &s, std::string dir,
                                     uint64_t keep, uint64_t run_first_step)
    : s(s), dir(std::move(dir)), keep(keep), run_first_step(run_first_step) {
  struct stat info;
  if (stat(this->dir.c_str(), &info) != 0) {
    if (mkdir(this->dir.c_str(), 0777) != 0 && errno != EEXIST)
      fail_input("--checkpoint-dir " + this->dir +
                 ": cannot create it: " + errno_message(errno));
  } else if (!S_ISDIR(info.st_mode)) {
    fail_input("--checkpoint-dir " + this->dir + ": not a directory");
  }
  if (access(this->dir.c_str(), W_OK | X_OK) != 0)
    fail_input("--checkpoint-dir " + this->dir +
               ": cannot write: " + errno_message(errno));
}

void checkpoint_writer::write(
    const onnx_model &model,
    const std::vector<std::pair<const tensor_slot *, const void *>> &values,
    uint64_t steps_done) {
  std::string path = checkpoint_path(dir, steps_done);
  try {
    model.save(values, steps_done, path, /*external_data=*/false,
               {{seed_key, std::to_string(s.opts.seed)},
                {shuffle_key, s.opts.shuffle ? "1" : "0"},
                {run_first_step_key, std::to_string(run_first_step)}});
  } catch (const driver_error &e) {
    fail_input(std::string("checkpoint at step ") + std::to_string(steps_done) +
               ": " + e.what() + " (the earlier checkpoints in " + dir +
               " are intact)");
  }
  ++count;
  std::vector<uint64_t> steps =
      list_checkpoints(dir, /*remove_temporaries=*/false);
  for (size_t i = 0; i < steps.size(); ++i)
    if (i >= keep && steps[i] < steps_done)
      remove_checkpoint(checkpoint_path(dir, steps[i]));
}

} // namespace tidalrt_driver
