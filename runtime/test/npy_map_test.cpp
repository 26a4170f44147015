// npy_map_test.cpp - tidalrt_npy_map: large well-formed files are mapped
// (the array views the file), everything else behaves as tidalrt_npy_read.
#include "test_util.h"

#include <cstring>
#include <fstream>
#include <string>
#include <vector>

namespace {

using tidalrt_test::array_ptr;
using tidalrt_test::make_npy;
using tidalrt_test::status_ptr;

class NpyMapTest : public tidalrt_test::TempDirTest {
protected:
  // Whether this process has `file` mapped (/proc/self/maps).
  static bool is_mapped(const std::string &file) {
    std::ifstream maps("/proc/self/maps");
    std::string line;
    while (std::getline(maps, line))
      if (line.size() >= file.size() &&
          line.compare(line.size() - file.size(), file.size(), file) == 0)
        return true;
    return false;
  }

  // The status message of mapping and of reading `file`.
  static std::pair<std::string, std::string>
  both_errors(const std::string &file) {
    tidalrt_array_t *array = nullptr;
    status_ptr mapped(tidalrt_npy_map(file.c_str(), &array));
    EXPECT_EQ(array, nullptr);
    status_ptr read(tidalrt_npy_read(file.c_str(), &array));
    EXPECT_TRUE(mapped && read);
    return {mapped ? tidalrt_status_message(mapped.get()) : "",
            read ? tidalrt_status_message(read.get()) : ""};
  }
};

const char *const dict_100k =
    "{'descr': '<f4', 'fortran_order': False, 'shape': (100000,), }";

TEST_F(NpyMapTest, LargeFileIsMappedWithTheSameValues) {
  std::vector<float> values(100000);
  for (size_t i = 0; i < values.size(); ++i)
    values[i] = static_cast<float>(i) * 0.5f;
  std::string data(reinterpret_cast<const char *>(values.data()),
                   values.size() * sizeof(float));
  write_bytes("big.npy", make_npy(dict_100k, data));
  std::string file = path("big.npy");
  tidalrt_array_t *raw = nullptr;
  ASSERT_EQ(tidalrt_npy_map(file.c_str(), &raw), nullptr);
  array_ptr array(raw);
  EXPECT_TRUE(is_mapped(file));
  ASSERT_EQ(tidalrt_array_byte_size(array.get()), data.size());
  EXPECT_EQ(tidalrt_array_dims(array.get())[0], 100000);
  EXPECT_EQ(std::memcmp(tidalrt_array_const_data(array.get()), data.data(),
                        data.size()),
            0);
  array.reset();
  EXPECT_FALSE(is_mapped(file));
}

TEST_F(NpyMapTest, SmallFileIsRead) {
  std::string data(24, '\0');
  write_bytes("small.npy",
              make_npy("{'descr': '<f4', 'fortran_order': False, 'shape': (2, "
                       "3), }",
                       data));
  std::string file = path("small.npy");
  tidalrt_array_t *raw = nullptr;
  ASSERT_EQ(tidalrt_npy_map(file.c_str(), &raw), nullptr);
  array_ptr array(raw);
  EXPECT_FALSE(is_mapped(file));
  EXPECT_EQ(tidalrt_array_element_count(array.get()), 6u);
}

TEST_F(NpyMapTest, BadLargeFilesReportAsReadDoes) {
  std::string data(400000, '\0');
  // Truncated, one byte too many, Fortran order, a missing file.
  write_bytes("short.npy", make_npy(dict_100k, data.substr(1)));
  write_bytes("long.npy", make_npy(dict_100k, data + "x"));
  write_bytes("fortran.npy",
              make_npy("{'descr': '<f4', 'fortran_order': True, 'shape': "
                       "(1000, 100), }",
                       data));
  for (const char *name :
       {"short.npy", "long.npy", "fortran.npy", "none.npy"}) {
    auto [mapped, read] = both_errors(path(name));
    EXPECT_EQ(mapped, read) << name;
    EXPECT_FALSE(mapped.empty()) << name;
    EXPECT_FALSE(is_mapped(path(name))) << name;
  }
}

} // namespace
