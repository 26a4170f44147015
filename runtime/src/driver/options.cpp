// options.cpp - parsing the command line and printing the usage.
#include "options.h"

#include "error.h"
#include "manifest.h"

#include <cerrno>
#include <cstdlib>
#include <set>

namespace tidalrt_driver {

namespace {

uint64_t parse_count(const std::string &option, const std::string &text) {
  // Digits only: strtoull would accept "-1", "+3", " 7" and "0x10".
  if (text.empty() || text.size() > 20 ||
      text.find_first_not_of("0123456789") != std::string::npos)
    fail_input(option + " expects a non-negative integer, got '" + text + "'");
  errno = 0;
  unsigned long long value = std::strtoull(text.c_str(), nullptr, 10);
  if (errno == ERANGE)
    fail_input(option + " value '" + text + "' is too large");
  return value;
}

std::pair<std::string, std::string> parse_binding(const std::string &option,
                                                  const std::string &text) {
  size_t equals = text.find('=');
  if (equals == std::string::npos || equals == 0 || equals + 1 == text.size())
    fail_input(option + " expects NAME=FILE.npy, got '" + text + "'");
  return {text.substr(0, equals), text.substr(equals + 1)};
}

} // namespace

void parse_threads(const std::string &source, const std::string &value,
                   options &result) {
  if (value == "auto") {
    result.threads_auto = true;
    return;
  }
  if (value.empty() || value.size() > 4 ||
      value.find_first_not_of("0123456789") != std::string::npos ||
      std::stoi(value) < 1 || std::stoi(value) > 4096)
    fail_input(source + " expects auto or a count from 1 to 4096, got '" +
               value + "'");
  result.threads = std::stoi(value);
}

void threads_from_environment(options &result) {
  if (result.threads || result.threads_auto)
    return;
  const char *env = std::getenv("TIDAL_THREADS");
  if (env && *env)
    parse_threads("TIDAL_THREADS", env, result);
}

options parse_options(int argc, char **argv) {
  options result;
  result.no_arguments = argc <= 1;
  std::set<std::string> seen;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "-h" || arg == "--help") {
      result.help = true;
      continue;
    }
    if (arg.rfind("--", 0) != 0 || arg.size() == 2)
      fail_input("unexpected argument '" + arg + "' (see --help)");
    std::string name = arg;
    std::optional<std::string> value;
    size_t equals = arg.find('=');
    if (equals != std::string::npos) {
      name = arg.substr(0, equals);
      value = arg.substr(equals + 1);
    }
    static const std::set<std::string> flags = {"--shuffle", "--quiet",
                                                "--save-external-data"};
    static const std::set<std::string> valued = {
        "--input",          "--eval-input",
        "--steps",          "--epochs",
        "--seed",           "--init",
        "--save",           "--log",
        "--trace",          "--threads",
        "--output-dir",     "--checkpoint-every",
        "--checkpoint-dir", "--checkpoint-keep",
        "--resume",         "--on-nonfinite",
        "--check-finite"};
    if (flags.count(name)) {
      if (value)
        fail_input(name + " takes no value");
    } else if (valued.count(name)) {
      if (!value) {
        if (i + 1 >= argc)
          fail_input(name + " expects a value");
        value = argv[++i];
      }
    } else {
      fail_input("unknown option '" + name + "' (see --help)");
    }
    bool repeatable = name == "--input" || name == "--eval-input";
    if (!repeatable && !seen.insert(name).second)
      fail_input(name + " is given more than once");

    if (name == "--shuffle") {
      result.shuffle = true;
    } else if (name == "--quiet") {
      result.quiet = true;
    } else if (name == "--save-external-data") {
      result.save_external_data = true;
    } else if (name == "--input" || name == "--eval-input") {
      auto binding = parse_binding(name, *value);
      auto &list = name == "--input" ? result.inputs : result.eval_inputs;
      for (const auto &existing : list)
        if (existing.first == binding.first)
          fail_input(name + " " + binding.first + " is given more than once");
      list.push_back(std::move(binding));
    } else if (name == "--steps") {
      result.steps = parse_count(name, *value);
    } else if (name == "--epochs") {
      result.epochs = parse_count(name, *value);
    } else if (name == "--seed") {
      result.seed = parse_count(name, *value);
    } else if (name == "--checkpoint-every") {
      result.checkpoint_every = parse_count(name, *value);
      if (!*result.checkpoint_every)
        fail_input("--checkpoint-every expects a step count of at least 1");
    } else if (name == "--checkpoint-keep") {
      result.checkpoint_keep = parse_count(name, *value);
      if (!result.checkpoint_keep)
        fail_input("--checkpoint-keep expects a count of at least 1");
    } else if (name == "--on-nonfinite") {
      if (*value != "stop" && *value != "skip")
        fail_input("--on-nonfinite expects stop or skip, got '" + *value + "'");
      result.skip_nonfinite = *value == "skip";
    } else if (name == "--check-finite") {
      if (*value != "loss" && *value != "state")
        fail_input("--check-finite expects loss or state, got '" + *value +
                   "'");
      result.check_state = *value == "state";
    } else if (name == "--threads") {
      parse_threads(name, *value, result);
    } else {
      if (value->empty())
        fail_input(name + " expects a file name");
      if (name == "--init")
        result.init = *value;
      else if (name == "--save")
        result.save = *value;
      else if (name == "--log")
        result.log = *value;
      else if (name == "--trace")
        result.trace = *value;
      else if (name == "--checkpoint-dir")
        result.checkpoint_dir = *value;
      else if (name == "--resume")
        result.resume = *value;
      else
        result.output_dir = *value;
    }
  }
  if (result.steps && result.epochs)
    fail_input("--steps and --epochs cannot be combined");
  if (result.save_external_data && result.save.empty())
    fail_input("--save-external-data needs --save FILE.onnx");
  // --resume DIR also writes its checkpoints to DIR.
  if (result.checkpoint_dir.empty())
    result.checkpoint_dir = result.resume;
  if ((result.checkpoint_every || seen.count("--checkpoint-keep")) &&
      result.checkpoint_dir.empty())
    fail_input(std::string(result.checkpoint_every ? "--checkpoint-every"
                                                   : "--checkpoint-keep") +
               " needs --checkpoint-dir DIR (or --resume DIR)");
  return result;
}

void print_usage(std::FILE *stream, const std::string &program_name,
                 const manifest &manifest) {
  bool forward = manifest.forward_mode();
  std::fprintf(stream, "usage: %s [--input NAME=FILE.npy ...] %s[options]\n\n",
               program_name.c_str(),
               forward ? "--output-dir DIR " : "[--steps N | --epochs E] ");
  if (forward)
    std::fprintf(stream,
                 "Runs the forward pass of %s over every sample, in batches "
                 "of %lld.\n",
                 manifest.model.c_str(),
                 static_cast<long long>(manifest.batch_size));
  else
    std::fprintf(stream, "Trains %s: batch size %lld, loss %s, optimizer %s.\n",
                 manifest.model.c_str(),
                 static_cast<long long>(manifest.global_batch_size()),
                 manifest.loss.empty() ? "output" : manifest.loss.c_str(),
                 manifest.optimizer.c_str());
  if (!manifest.distributed.empty())
    std::fprintf(stream,
                 "Data parallel: start it with mpirun -np %lld; each rank "
                 "takes %lld samples of every batch.\n",
                 static_cast<long long>(manifest.ranks),
                 static_cast<long long>(manifest.batch_size));
  if (forward)
    std::fprintf(stream, "\nData inputs (N samples each):\n");
  else
    std::fprintf(stream, "\nData inputs (N samples each, N >= %lld):\n",
                 static_cast<long long>(manifest.global_batch_size()));
  auto list_inputs = [&](const function_info &function) {
    std::vector<const tensor_slot *> inputs = function.data_inputs();
    if (inputs.empty())
      std::fprintf(stream, "  (none)\n");
    for (const tensor_slot *input : inputs) {
      std::string line = "  " + input->name;
      if (line.size() < 26)
        line.resize(26, ' ');
      else
        line += "  ";
      line += describe_slot(*input, /*sample_dim=*/true);
      if (const blob_range *embedded = manifest.find_embedded(input->name))
        line +=
            "  (embedded data: " + std::to_string(embedded->size) + " bytes)";
      std::fprintf(stream, "%s\n", line.c_str());
    }
  };
  list_inputs(manifest.step);
  if (manifest.predict) {
    std::fprintf(stream, "\nEvaluation inputs (--eval-input):\n");
    list_inputs(*manifest.predict);
  }
  std::fprintf(
      stream,
      "\nOptions:\n"
      "  --input NAME=FILE.npy   data for input NAME (NumPy .npy, C order; "
      "dim 0 counts samples)\n");
  if (!forward)
    std::fprintf(
        stream,
        "  --steps N               train N steps\n"
        "  --epochs E              train E epochs (default: 1 epoch; the last "
        "partial batch is dropped)\n"
        "  --shuffle               shuffle the samples every epoch\n"
        "  --seed S                seed of the shuffle and random ops "
        "(default 0)\n");
  std::fprintf(
      stream,
      "  --init FILE.onnx        start from the weights%s in FILE.onnx\n",
      forward ? "" : " and optimizer state");
  if (!forward)
    std::fprintf(
        stream,
        "  --save FILE.onnx        write the trained model (and optimizer "
        "state) to FILE.onnx\n"
        "  --save-external-data    its initializers in FILE.onnx.data (ONNX "
        "external data;\n"
        "                          automatic over 2 GiB or for a model given "
        "so)\n"
        "  --checkpoint-dir DIR    write checkpoints (weights, optimizer "
        "state, step) to DIR\n"
        "  --checkpoint-every N    every N steps (default: every epoch with "
        "--epochs, and at the end)\n"
        "  --checkpoint-keep K     keep the newest K checkpoints (default 2)\n"
        "  --resume DIR            continue from the newest complete "
        "checkpoint in DIR (start\n"
        "                          afresh if it has none); checkpoints go "
        "to DIR too\n"
        "  --on-nonfinite stop|skip  on a non-finite loss: stop with an "
        "error (default), or\n"
        "                          undo the step's update and go on\n"
        "  --check-finite loss|state  check the loss (default), or also "
        "every weight and\n"
        "                          optimizer state after each step\n");
  std::fprintf(stream,
               "  --log FILE.jsonl        one JSON object per %s\n"
               "  --trace FILE.json       the measured timeline as a Chrome "
               "trace\n"
               "  --threads N|auto        host threads; auto (the default "
               "unless OMP_NUM_THREADS\n"
               "                          is set) uses fewer while other "
               "work holds the cores\n"
               "  --quiet                 no progress bar\n",
               forward ? "batch" : "step");
  if (manifest.predict && !forward)
    std::fprintf(stream,
                 "  --eval-input NAME=FILE.npy\n"
                 "                          held-out data, evaluated after "
                 "training (and every epoch)\n");
  if (forward)
    std::fprintf(stream, "  --output-dir DIR        where each output is "
                         "written as NAME.npy\n");
  std::fprintf(stream, "  --help                  print this help\n");
}

} // namespace tidalrt_driver
