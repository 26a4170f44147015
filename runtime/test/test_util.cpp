// test_util.cpp - helpers shared by the runtime's unit tests.
#include "test_util.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <unistd.h>

namespace fs = std::filesystem;

namespace tidalrt_test {

std::string describe(const status_ptr &status) {
  if (!status)
    return "OK";
  return std::string(
             tidalrt_status_code_name(tidalrt_status_code(status.get()))) +
         ": " + tidalrt_status_message(status.get());
}

::testing::AssertionResult is_ok(tidalrt_status_t status) {
  status_ptr owned(status);
  if (!owned)
    return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << describe(owned);
}

const std::vector<tidalrt_element_type_t> &npy_element_types() {
  static const std::vector<tidalrt_element_type_t> types = {
      TIDALRT_ELEMENT_TYPE_F16, TIDALRT_ELEMENT_TYPE_F32,
      TIDALRT_ELEMENT_TYPE_F64, TIDALRT_ELEMENT_TYPE_I8,
      TIDALRT_ELEMENT_TYPE_I16, TIDALRT_ELEMENT_TYPE_I32,
      TIDALRT_ELEMENT_TYPE_I64, TIDALRT_ELEMENT_TYPE_U8,
      TIDALRT_ELEMENT_TYPE_U16, TIDALRT_ELEMENT_TYPE_U32,
      TIDALRT_ELEMENT_TYPE_U64, TIDALRT_ELEMENT_TYPE_BOOL,
  };
  return types;
}

void TempDirTest::SetUp() {
  std::string pattern =
      (fs::temp_directory_path() / "tidalrt-test-XXXXXX").string();
  ASSERT_NE(mkdtemp(pattern.data()), nullptr) << "mkdtemp failed";
  dir = pattern;
}

void TempDirTest::TearDown() {
  if (dir.empty())
    return;
  std::error_code ignored;
  // Restore permissions a test may have taken away, then remove everything.
  fs::permissions(dir, fs::perms::owner_all, fs::perm_options::add, ignored);
  fs::remove_all(dir, ignored);
}

void TempDirTest::write_bytes(const std::string &name,
                              const std::string &bytes) const {
  std::ofstream out(path(name), std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  ASSERT_TRUE(out.good()) << "cannot write " << path(name);
}

std::string TempDirTest::read_bytes(const std::string &name) const {
  std::ifstream in(path(name), std::ios::binary);
  std::ostringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

std::vector<std::string> TempDirTest::list(const std::string &subdir) const {
  std::vector<std::string> names;
  for (const auto &entry :
       fs::directory_iterator(subdir.empty() ? dir : path(subdir)))
    names.push_back(entry.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

std::string make_npy(const std::string &dict, const std::string &data,
                     int major) {
  size_t length_bytes = major == 1 ? 2 : 4;
  size_t prefix = 8 + length_bytes;
  std::string header = dict;
  while ((prefix + header.size() + 1) % 64 != 0)
    header += ' ';
  header += '\n';
  std::string bytes("\x93NUMPY", 6);
  bytes += static_cast<char>(major);
  bytes += '\0';
  for (size_t i = 0; i < length_bytes; ++i)
    bytes += static_cast<char>((header.size() >> (8 * i)) & 0xff);
  return bytes + header + data;
}

bool python_has_numpy() {
  if (access(TIDALRT_TEST_PYTHON, X_OK) != 0)
    return false;
  return run_python("import numpy") == 0;
}

int run_python(const std::string &code) {
  // Pass the program through a file: no shell quoting to get wrong.
  std::string script =
      (fs::temp_directory_path() / "tidalrt-test-XXXXXX.py").string();
  int fd = mkstemps(script.data(), 3);
  if (fd < 0)
    return -1;
  {
    std::ofstream out(script);
    out << code << "\n";
  }
  close(fd);
  std::string command =
      std::string(TIDALRT_TEST_PYTHON) + " " + script + " 1>&2";
  int result = std::system(command.c_str());
  unlink(script.c_str());
  return result;
}

} // namespace tidalrt_test
