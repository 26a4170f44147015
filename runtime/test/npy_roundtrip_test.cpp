// npy_roundtrip_test.cpp - write then read every dtype at ranks 0 to 4.
#include "test_util.h"

#include <cstring>
#include <string>
#include <tuple>
#include <vector>

namespace {

using tidalrt_test::array_ptr;
using tidalrt_test::status_ptr;

const std::vector<std::vector<int64_t>> &shapes() {
  static const std::vector<std::vector<int64_t>> all = {
      {}, {5}, {2, 3}, {2, 3, 4}, {2, 1, 3, 2}, {0}, {3, 0, 2},
  };
  return all;
}

// Deterministic bytes; bools stay 0 or 1 as NumPy requires.
std::vector<unsigned char> pattern(tidalrt_element_type_t type, size_t size) {
  std::vector<unsigned char> bytes(size);
  for (size_t i = 0; i < size; ++i)
    bytes[i] = type == TIDALRT_ELEMENT_TYPE_BOOL
                   ? static_cast<unsigned char>(i % 3 == 0)
                   : static_cast<unsigned char>(i * 37 + 11);
  return bytes;
}

class NpyRoundTripTest : public tidalrt_test::TempDirTest,
                         public ::testing::WithParamInterface<
                             std::tuple<tidalrt_element_type_t, size_t>> {};

TEST_P(NpyRoundTripTest, WriteThenRead) {
  tidalrt_element_type_t type = std::get<0>(GetParam());
  const std::vector<int64_t> &dims = shapes()[std::get<1>(GetParam())];

  tidalrt_array_t *raw = nullptr;
  ASSERT_STATUS_OK(tidalrt_array_create(type, dims.size(), dims.data(), &raw));
  array_ptr original(raw);
  size_t byte_size = tidalrt_array_byte_size(original.get());
  std::vector<unsigned char> bytes = pattern(type, byte_size);
  if (byte_size)
    std::memcpy(tidalrt_array_data(original.get()), bytes.data(), byte_size);

  std::string file = path("a.npy");
  ASSERT_STATUS_OK(tidalrt_npy_write(file.c_str(), original.get()));
  EXPECT_EQ(list(), std::vector<std::string>{"a.npy"})
      << "no temporary file may be left behind";

  // The data starts on a 64-byte boundary, as with np.save.
  std::string image = read_bytes("a.npy");
  ASSERT_GE(image.size(), 10u);
  size_t header_length = static_cast<unsigned char>(image[8]) |
                         (static_cast<unsigned char>(image[9]) << 8);
  EXPECT_EQ((10 + header_length) % 64, 0u);
  EXPECT_EQ(image.size(), 10 + header_length + byte_size);
  EXPECT_EQ(image[10 + header_length - 1], '\n');

  for (int from_memory = 0; from_memory < 2; ++from_memory) {
    raw = nullptr;
    tidalrt_status_t status =
        from_memory ? tidalrt_npy_read_memory(image.data(), image.size(),
                                              "embedded", &raw)
                    : tidalrt_npy_read(file.c_str(), &raw);
    ASSERT_STATUS_OK(status) << (from_memory ? "from memory" : "from file");
    array_ptr copy(raw);
    EXPECT_EQ(tidalrt_array_element_type(copy.get()), type);
    ASSERT_EQ(tidalrt_array_rank(copy.get()), dims.size());
    for (size_t i = 0; i < dims.size(); ++i)
      EXPECT_EQ(tidalrt_array_dims(copy.get())[i], dims[i]) << "axis " << i;
    ASSERT_EQ(tidalrt_array_byte_size(copy.get()), byte_size);
    if (byte_size) {
      EXPECT_EQ(std::memcmp(tidalrt_array_const_data(copy.get()), bytes.data(),
                            byte_size),
                0);
    }
  }
}

std::string round_trip_name(
    const ::testing::TestParamInfo<NpyRoundTripTest::ParamType> &info) {
  const std::vector<int64_t> &dims = shapes()[std::get<1>(info.param)];
  std::string name = tidalrt_element_type_name(std::get<0>(info.param));
  name += "_rank" + std::to_string(dims.size());
  for (int64_t dim : dims)
    name += "_" + std::to_string(dim);
  return name;
}

INSTANTIATE_TEST_SUITE_P(
    AllTypesAndRanks, NpyRoundTripTest,
    ::testing::Combine(::testing::ValuesIn(tidalrt_test::npy_element_types()),
                       ::testing::Range<size_t>(0, shapes().size())),
    round_trip_name);

class NpyWriteDataTest : public tidalrt_test::TempDirTest {};

TEST_F(NpyWriteDataTest, FromRawBuffer) {
  const float values[] = {1.5f, -2.0f, 3.25f, 0.0f, 1e-3f, 7.0f};
  const int64_t dims[] = {2, 3};
  std::string file = path("raw.npy");
  ASSERT_STATUS_OK(tidalrt_npy_write_data(
      file.c_str(), TIDALRT_ELEMENT_TYPE_F32, 2, dims, values));
  tidalrt_array_t *raw = nullptr;
  ASSERT_STATUS_OK(tidalrt_npy_read(file.c_str(), &raw));
  array_ptr array(raw);
  ASSERT_EQ(tidalrt_array_byte_size(array.get()), sizeof(values));
  EXPECT_EQ(std::memcmp(tidalrt_array_const_data(array.get()), values,
                        sizeof(values)),
            0);
}

TEST_F(NpyWriteDataTest, HeaderTextMatchesNumPy) {
  const int64_t dims[] = {10, 784};
  std::vector<float> zeros(10 * 784);
  std::string file = path("x.npy");
  ASSERT_STATUS_OK(tidalrt_npy_write_data(
      file.c_str(), TIDALRT_ELEMENT_TYPE_F32, 2, dims, zeros.data()));
  std::string image = read_bytes("x.npy");
  // What np.save(np.zeros((10, 784), np.float32)) writes (NumPy >= 1.23).
  std::string dict = "{'descr': '<f4', 'fortran_order': False, "
                     "'shape': (10, 784), }" +
                     std::string(19, ' ');
  std::string expected = tidalrt_test::make_npy(dict);
  EXPECT_EQ(image.substr(0, expected.size()), expected);
}

TEST_F(NpyWriteDataTest, OneDimensionalShapeHasTrailingComma) {
  const int64_t dims[] = {7};
  std::vector<int64_t> values(7, 3);
  std::string file = path("l.npy");
  ASSERT_STATUS_OK(tidalrt_npy_write_data(
      file.c_str(), TIDALRT_ELEMENT_TYPE_I64, 1, dims, values.data()));
  EXPECT_NE(read_bytes("l.npy").find("'shape': (7,), }"), std::string::npos);
}

TEST_F(NpyWriteDataTest, OverwritesExistingFile) {
  write_bytes("y.npy", "old contents");
  const uint8_t value = 42;
  std::string file = path("y.npy");
  ASSERT_STATUS_OK(tidalrt_npy_write_data(file.c_str(), TIDALRT_ELEMENT_TYPE_U8,
                                          0, nullptr, &value));
  tidalrt_array_t *raw = nullptr;
  ASSERT_STATUS_OK(tidalrt_npy_read(file.c_str(), &raw));
  array_ptr array(raw);
  EXPECT_EQ(*static_cast<const uint8_t *>(tidalrt_array_const_data(raw)), 42);
  EXPECT_EQ(list(), std::vector<std::string>{"y.npy"});
}

} // namespace
