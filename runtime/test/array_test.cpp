// array_test.cpp - array handles and the dtype/shape check.
#include "test_util.h"

#include <cstdint>
#include <cstring>
#include <string>

namespace {

using tidalrt_test::array_ptr;
using tidalrt_test::status_ptr;

array_ptr make_array(tidalrt_element_type_t type,
                     std::initializer_list<int64_t> dims) {
  std::vector<int64_t> shape(dims);
  tidalrt_array_t *array = nullptr;
  status_ptr status(
      tidalrt_array_create(type, shape.size(), shape.data(), &array));
  EXPECT_FALSE(status) << tidalrt_test::describe(status);
  return array_ptr(array);
}

std::string check_message(const tidalrt_array_t *array, const char *file,
                          const char *input, tidalrt_element_type_t type,
                          std::vector<int64_t> dims) {
  status_ptr status(
      tidalrt_array_check(array, file, input, type, dims.size(), dims.data()));
  if (!status)
    return "OK";
  EXPECT_EQ(tidalrt_status_code(status.get()), TIDALRT_INVALID_ARGUMENT);
  return tidalrt_status_message(status.get());
}

TEST(ArrayTest, CreateIsZeroedAndAligned) {
  array_ptr array = make_array(TIDALRT_ELEMENT_TYPE_F32, {2, 3, 4});
  ASSERT_TRUE(array);
  EXPECT_EQ(tidalrt_array_element_type(array.get()), TIDALRT_ELEMENT_TYPE_F32);
  ASSERT_EQ(tidalrt_array_rank(array.get()), 3u);
  EXPECT_EQ(tidalrt_array_dims(array.get())[0], 2);
  EXPECT_EQ(tidalrt_array_dims(array.get())[1], 3);
  EXPECT_EQ(tidalrt_array_dims(array.get())[2], 4);
  EXPECT_EQ(tidalrt_array_element_count(array.get()), 24u);
  EXPECT_EQ(tidalrt_array_byte_size(array.get()), 96u);
  const auto *data =
      static_cast<const unsigned char *>(tidalrt_array_data(array.get()));
  ASSERT_NE(data, nullptr);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(data) % TIDALRT_ARRAY_ALIGNMENT, 0u);
  EXPECT_EQ(tidalrt_array_const_data(array.get()), data);
  for (size_t i = 0; i < 96; ++i)
    EXPECT_EQ(data[i], 0);
}

TEST(ArrayTest, ScalarAndEmpty) {
  tidalrt_array_t *raw = nullptr;
  ASSERT_STATUS_OK(
      tidalrt_array_create(TIDALRT_ELEMENT_TYPE_I64, 0, nullptr, &raw));
  array_ptr scalar(raw);
  EXPECT_EQ(tidalrt_array_rank(scalar.get()), 0u);
  EXPECT_NE(tidalrt_array_dims(scalar.get()), nullptr);
  EXPECT_EQ(tidalrt_array_element_count(scalar.get()), 1u);
  EXPECT_EQ(tidalrt_array_byte_size(scalar.get()), 8u);

  array_ptr empty = make_array(TIDALRT_ELEMENT_TYPE_F64, {3, 0, 5});
  EXPECT_EQ(tidalrt_array_element_count(empty.get()), 0u);
  EXPECT_EQ(tidalrt_array_byte_size(empty.get()), 0u);
  EXPECT_NE(tidalrt_array_data(empty.get()), nullptr);
}

TEST(ArrayTest, CreateRejectsBadArguments) {
  tidalrt_array_t *array = reinterpret_cast<tidalrt_array_t *>(0x1);
  int64_t negative[] = {2, -1};
  status_ptr status(
      tidalrt_array_create(TIDALRT_ELEMENT_TYPE_F32, 2, negative, &array));
  EXPECT_EQ(tidalrt_status_code(status.get()), TIDALRT_INVALID_ARGUMENT);
  EXPECT_NE(std::strstr(tidalrt_status_message(status.get()), "negative"),
            nullptr);
  EXPECT_EQ(array, nullptr) << "out_array must be cleared on failure";

  int64_t huge[] = {INT64_MAX, INT64_MAX};
  status.reset(tidalrt_array_create(TIDALRT_ELEMENT_TYPE_F32, 2, huge, &array));
  EXPECT_EQ(tidalrt_status_code(status.get()), TIDALRT_INVALID_ARGUMENT);
  EXPECT_NE(std::strstr(tidalrt_status_message(status.get()), "too large"),
            nullptr);

  int64_t one[] = {1};
  status.reset(
      tidalrt_array_create(TIDALRT_ELEMENT_TYPE_INVALID, 1, one, &array));
  EXPECT_EQ(tidalrt_status_code(status.get()), TIDALRT_INVALID_ARGUMENT);

  std::vector<int64_t> too_many(TIDALRT_MAX_RANK + 1, 1);
  status.reset(tidalrt_array_create(TIDALRT_ELEMENT_TYPE_F32, too_many.size(),
                                    too_many.data(), &array));
  EXPECT_EQ(tidalrt_status_code(status.get()), TIDALRT_INVALID_ARGUMENT);

  status.reset(tidalrt_array_create(TIDALRT_ELEMENT_TYPE_F32, 1, one, nullptr));
  EXPECT_EQ(tidalrt_status_code(status.get()), TIDALRT_INVALID_ARGUMENT);
}

TEST(ArrayTest, MaxRankIsAllowed) {
  std::vector<int64_t> dims(TIDALRT_MAX_RANK, 1);
  tidalrt_array_t *raw = nullptr;
  ASSERT_STATUS_OK(tidalrt_array_create(TIDALRT_ELEMENT_TYPE_U8, dims.size(),
                                        dims.data(), &raw));
  array_ptr array(raw);
  EXPECT_EQ(tidalrt_array_rank(array.get()), size_t{TIDALRT_MAX_RANK});
}

TEST(ArrayTest, FreeNullIsAllowed) { tidalrt_array_free(nullptr); }

TEST(ArrayCheckTest, MatchesWithAnySampleCount) {
  array_ptr array = make_array(TIDALRT_ELEMENT_TYPE_F32, {10, 1, 28, 28});
  EXPECT_EQ(check_message(array.get(), "x.npy", "x", TIDALRT_ELEMENT_TYPE_F32,
                          {TIDALRT_DIM_ANY, 1, 28, 28}),
            "OK");
  EXPECT_EQ(check_message(array.get(), "x.npy", "x", TIDALRT_ELEMENT_TYPE_F32,
                          {10, 1, 28, 28}),
            "OK");
}

TEST(ArrayCheckTest, WrongTypeAndShape) {
  array_ptr array = make_array(TIDALRT_ELEMENT_TYPE_I64, {10, 784});
  EXPECT_EQ(check_message(array.get(), "x.npy", "x", TIDALRT_ELEMENT_TYPE_F32,
                          {TIDALRT_DIM_ANY, 1, 28, 28}),
            "x.npy: input 'x' expects float32 [*, 1, 28, 28], got int64 "
            "[10, 784]");
}

TEST(ArrayCheckTest, WrongTypeOnly) {
  array_ptr array = make_array(TIDALRT_ELEMENT_TYPE_I32, {5});
  EXPECT_EQ(check_message(array.get(), "label.npy", "label",
                          TIDALRT_ELEMENT_TYPE_I64, {TIDALRT_DIM_ANY}),
            "label.npy: input 'label' expects int64 [*], got int32 [5]");
}

TEST(ArrayCheckTest, WrongInnerDim) {
  array_ptr array = make_array(TIDALRT_ELEMENT_TYPE_F32, {4, 3});
  EXPECT_EQ(check_message(array.get(), "x.npy", "x", TIDALRT_ELEMENT_TYPE_F32,
                          {TIDALRT_DIM_ANY, 4}),
            "x.npy: input 'x' expects float32 [*, 4], got float32 [4, 3]");
}

TEST(ArrayCheckTest, ScalarAndWithoutNames) {
  tidalrt_array_t *raw = nullptr;
  ASSERT_STATUS_OK(
      tidalrt_array_create(TIDALRT_ELEMENT_TYPE_F32, 0, nullptr, &raw));
  array_ptr scalar(raw);
  EXPECT_EQ(check_message(scalar.get(), nullptr, nullptr,
                          TIDALRT_ELEMENT_TYPE_F32, {TIDALRT_DIM_ANY}),
            "expected float32 [*], got float32 []");
  EXPECT_EQ(check_message(scalar.get(), "s.npy", nullptr,
                          TIDALRT_ELEMENT_TYPE_F32, {}),
            "OK");
  EXPECT_EQ(check_message(scalar.get(), "s.npy", nullptr,
                          TIDALRT_ELEMENT_TYPE_F64, {}),
            "s.npy: expected float64 [], got float32 []");
}

} // namespace
