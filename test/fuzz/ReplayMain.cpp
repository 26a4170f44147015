//===- ReplayMain.cpp - run a fuzz target over files, without libFuzzer ---===//
//
// The normal build links each harness with this main (as LLVM's
// StandaloneFuzzTargetMain.c does): it runs LLVMFuzzerTestOneInput once on
// every file named on the command line and on every file in every directory
// named there (not recursively, in name order, skipping dot files such as
// .gitkeep), then prints how many ran.
// A crash or sanitizer report ends the process, so a lit test that replays
// the seed corpus and the regressions/ inputs fails on any of them.
//
//===----------------------------------------------------------------------===//

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
extern "C" __attribute__((weak)) int LLVMFuzzerInitialize(int *argc,
                                                          char ***argv);

namespace fs = std::filesystem;

static bool runFile(const fs::path &path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    std::fprintf(stderr, "error: cannot read %s\n", path.c_str());
    return false;
  }
  std::vector<char> bytes((std::istreambuf_iterator<char>(in)),
                          std::istreambuf_iterator<char>());
  // A copy of exactly `size` bytes, as libFuzzer passes them, so that
  // ASan sees a read past the end.
  std::vector<uint8_t> data(bytes.begin(), bytes.end());
  LLVMFuzzerTestOneInput(data.empty() ? nullptr : data.data(), data.size());
  return true;
}

int main(int argc, char **argv) {
  if (LLVMFuzzerInitialize)
    LLVMFuzzerInitialize(&argc, &argv);
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s FILE-OR-DIRECTORY...\n", argv[0]);
    return 2;
  }
  size_t count = 0;
  bool ok = true;
  for (int i = 1; i < argc; ++i) {
    fs::path arg = argv[i];
    std::error_code ec;
    if (!fs::is_directory(arg, ec)) {
      bool ran = runFile(arg);
      ok = ran && ok;
      count += ran;
      continue;
    }
    std::vector<fs::path> files;
    for (const fs::directory_entry &entry : fs::directory_iterator(arg, ec))
      if (entry.is_regular_file() &&
          entry.path().filename().string().front() != '.')
        files.push_back(entry.path());
    if (ec) {
      std::fprintf(stderr, "error: cannot list %s\n", arg.c_str());
      ok = false;
    }
    std::sort(files.begin(), files.end());
    for (const fs::path &file : files) {
      bool ran = runFile(file);
      ok = ran && ok;
      count += ran;
    }
  }
  std::printf("%s: ran %zu inputs\n", fs::path(argv[0]).filename().c_str(),
              count);
  return ok ? 0 : 1;
}
