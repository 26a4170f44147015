// test_util.h - helpers shared by the runtime's unit tests.
#ifndef TIDALRT_TEST_TEST_UTIL_H
#define TIDALRT_TEST_TEST_UTIL_H

#include "tidalrt/tidalrt.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace tidalrt_test {

struct status_deleter {
  void operator()(tidalrt_status_s *status) const {
    tidalrt_status_free(status);
  }
};
// Owns a status; empty means OK.
using status_ptr = std::unique_ptr<tidalrt_status_s, status_deleter>;

struct array_deleter {
  void operator()(tidalrt_array_t *array) const { tidalrt_array_free(array); }
};
using array_ptr = std::unique_ptr<tidalrt_array_t, array_deleter>;

// "OK" or "CODE: message", for assertion output.
std::string describe(const status_ptr &status);

// Takes ownership of `status`; a failure carries its code and message, so
// that `EXPECT_STATUS_OK(call) << context` reads well.
::testing::AssertionResult is_ok(tidalrt_status_t status);

#define EXPECT_STATUS_OK(expr) EXPECT_TRUE(::tidalrt_test::is_ok(expr))
#define ASSERT_STATUS_OK(expr) ASSERT_TRUE(::tidalrt_test::is_ok(expr))

// The npy-supported element types.
const std::vector<tidalrt_element_type_t> &npy_element_types();

// A fresh directory, removed with its contents at the end of each test.
class TempDirTest : public ::testing::Test {
protected:
  void SetUp() override;
  void TearDown() override;

  std::string path(const std::string &name) const { return dir + "/" + name; }
  void write_bytes(const std::string &name, const std::string &bytes) const;
  std::string read_bytes(const std::string &name) const;
  // The names in the directory, sorted.
  std::vector<std::string> list(const std::string &subdir = "") const;

  std::string dir;
};

// A .npy image with a hand-written header dictionary: magic, `major`.0,
// header length (2 bytes for 1.0, 4 otherwise), the text padded with spaces
// and a newline to a multiple of 64 bytes, then `data`.
std::string make_npy(const std::string &dict, const std::string &data = "",
                     int major = 1);

// Whether `TIDALRT_TEST_PYTHON` runs and imports numpy.
bool python_has_numpy();
// Runs the Python program `code` and returns its exit status.
int run_python(const std::string &code);

} // namespace tidalrt_test

#endif // TIDALRT_TEST_TEST_UTIL_H
