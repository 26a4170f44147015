// status_test.cpp - status objects, code names and the ABI version.
#include "test_util.h"

#include <cstring>
#include <string>

namespace {

using tidalrt_test::status_ptr;

TEST(StatusTest, OkIsNull) {
  EXPECT_EQ(tidalrt_status_make(TIDALRT_OK, "ignored %d", 1), nullptr);
  EXPECT_EQ(tidalrt_status_code(nullptr), TIDALRT_OK);
  EXPECT_STREQ(tidalrt_status_message(nullptr), "");
  tidalrt_status_free(nullptr); // allowed
}

TEST(StatusTest, MakeFormatsMessage) {
  status_ptr status(tidalrt_status_make(TIDALRT_INVALID_ARGUMENT,
                                        "%s: expected %s, got %d", "x.npy",
                                        "float32", 64));
  ASSERT_TRUE(status);
  EXPECT_EQ(tidalrt_status_code(status.get()), TIDALRT_INVALID_ARGUMENT);
  EXPECT_STREQ(tidalrt_status_message(status.get()),
               "x.npy: expected float32, got 64");
}

TEST(StatusTest, EmptyMessage) {
  status_ptr status(tidalrt_status_make(TIDALRT_INTERNAL, "%s", ""));
  ASSERT_TRUE(status);
  EXPECT_EQ(tidalrt_status_code(status.get()), TIDALRT_INTERNAL);
  EXPECT_STREQ(tidalrt_status_message(status.get()), "");
}

TEST(StatusTest, LongMessage) {
  std::string text(100000, 'a');
  status_ptr status(tidalrt_status_make(TIDALRT_IO_ERROR, "%s!", text.c_str()));
  EXPECT_EQ(std::string(tidalrt_status_message(status.get())), text + "!");
}

TEST(StatusTest, AnnotatePrependsAndKeepsCode) {
  tidalrt_status_t inner =
      tidalrt_status_make(TIDALRT_NOT_FOUND, "no such input 'x'");
  status_ptr status(tidalrt_status_annotate(inner, "%s line %d", "run", 3));
  EXPECT_EQ(tidalrt_status_code(status.get()), TIDALRT_NOT_FOUND);
  EXPECT_STREQ(tidalrt_status_message(status.get()),
               "run line 3: no such input 'x'");
}

TEST(StatusTest, AnnotateOkStaysOk) {
  EXPECT_EQ(tidalrt_status_annotate(nullptr, "context"), nullptr);
}

TEST(StatusTest, CodeNames) {
  EXPECT_STREQ(tidalrt_status_code_name(TIDALRT_OK), "OK");
  EXPECT_STREQ(tidalrt_status_code_name(TIDALRT_INVALID_ARGUMENT),
               "INVALID_ARGUMENT");
  EXPECT_STREQ(tidalrt_status_code_name(TIDALRT_NOT_FOUND), "NOT_FOUND");
  EXPECT_STREQ(tidalrt_status_code_name(TIDALRT_IO_ERROR), "IO_ERROR");
  EXPECT_STREQ(tidalrt_status_code_name(TIDALRT_OUT_OF_MEMORY),
               "OUT_OF_MEMORY");
  EXPECT_STREQ(tidalrt_status_code_name(TIDALRT_UNSUPPORTED), "UNSUPPORTED");
  EXPECT_STREQ(tidalrt_status_code_name(TIDALRT_INTERNAL), "INTERNAL");
  EXPECT_STREQ(tidalrt_status_code_name(static_cast<tidalrt_status_code_t>(99)),
               "UNKNOWN");
}

TEST(VersionTest, MatchesHeader) {
  EXPECT_EQ(tidalrt_abi_version(), TIDALRT_ABI_VERSION);
  EXPECT_EQ(tidalrt_abi_version() >> 16, TIDALRT_ABI_VERSION_MAJOR);
  EXPECT_EQ(tidalrt_abi_version() & 0xffff, TIDALRT_ABI_VERSION_MINOR);
}

TEST(VersionTest, Check) {
  EXPECT_EQ(
      tidalrt_abi_check(TIDALRT_ABI_VERSION_MAJOR, TIDALRT_ABI_VERSION_MINOR),
      nullptr);
  if (TIDALRT_ABI_VERSION_MINOR > 0) {
    EXPECT_EQ(tidalrt_abi_check(TIDALRT_ABI_VERSION_MAJOR, 0), nullptr);
  }
  status_ptr newer(tidalrt_abi_check(TIDALRT_ABI_VERSION_MAJOR,
                                     TIDALRT_ABI_VERSION_MINOR + 1));
  EXPECT_EQ(tidalrt_status_code(newer.get()), TIDALRT_UNSUPPORTED);
  EXPECT_NE(std::strstr(tidalrt_status_message(newer.get()), "ABI"), nullptr);
  status_ptr other_major(tidalrt_abi_check(TIDALRT_ABI_VERSION_MAJOR + 1, 0));
  EXPECT_EQ(tidalrt_status_code(other_major.get()), TIDALRT_UNSUPPORTED);
}

TEST(ElementTypeTest, SizesAndNames) {
  struct expectation {
    tidalrt_element_type_t type;
    size_t size;
    const char *name;
  };
  const expectation table[] = {
      {TIDALRT_ELEMENT_TYPE_F16, 2, "float16"},
      {TIDALRT_ELEMENT_TYPE_BF16, 2, "bfloat16"},
      {TIDALRT_ELEMENT_TYPE_F32, 4, "float32"},
      {TIDALRT_ELEMENT_TYPE_F64, 8, "float64"},
      {TIDALRT_ELEMENT_TYPE_I8, 1, "int8"},
      {TIDALRT_ELEMENT_TYPE_I16, 2, "int16"},
      {TIDALRT_ELEMENT_TYPE_I32, 4, "int32"},
      {TIDALRT_ELEMENT_TYPE_I64, 8, "int64"},
      {TIDALRT_ELEMENT_TYPE_U8, 1, "uint8"},
      {TIDALRT_ELEMENT_TYPE_U16, 2, "uint16"},
      {TIDALRT_ELEMENT_TYPE_U32, 4, "uint32"},
      {TIDALRT_ELEMENT_TYPE_U64, 8, "uint64"},
      {TIDALRT_ELEMENT_TYPE_BOOL, 1, "bool"},
      {TIDALRT_ELEMENT_TYPE_INVALID, 0, "invalid"},
      {static_cast<tidalrt_element_type_t>(8), 0, "invalid"}, // ONNX string
  };
  for (const expectation &e : table) {
    EXPECT_EQ(tidalrt_element_type_size(e.type), e.size) << e.name;
    EXPECT_STREQ(tidalrt_element_type_name(e.type), e.name);
  }
}

TEST(ElementTypeTest, ValuesAreOnnxDataTypes) {
  // onnx.TensorProto.DataType: FLOAT=1 UINT8=2 INT8=3 UINT16=4 INT16=5
  // INT32=6 INT64=7 BOOL=9 FLOAT16=10 DOUBLE=11 UINT32=12 UINT64=13
  // BFLOAT16=16.
  EXPECT_EQ(TIDALRT_ELEMENT_TYPE_F32, 1);
  EXPECT_EQ(TIDALRT_ELEMENT_TYPE_U8, 2);
  EXPECT_EQ(TIDALRT_ELEMENT_TYPE_I8, 3);
  EXPECT_EQ(TIDALRT_ELEMENT_TYPE_U16, 4);
  EXPECT_EQ(TIDALRT_ELEMENT_TYPE_I16, 5);
  EXPECT_EQ(TIDALRT_ELEMENT_TYPE_I32, 6);
  EXPECT_EQ(TIDALRT_ELEMENT_TYPE_I64, 7);
  EXPECT_EQ(TIDALRT_ELEMENT_TYPE_BOOL, 9);
  EXPECT_EQ(TIDALRT_ELEMENT_TYPE_F16, 10);
  EXPECT_EQ(TIDALRT_ELEMENT_TYPE_F64, 11);
  EXPECT_EQ(TIDALRT_ELEMENT_TYPE_U32, 12);
  EXPECT_EQ(TIDALRT_ELEMENT_TYPE_U64, 13);
  EXPECT_EQ(TIDALRT_ELEMENT_TYPE_BF16, 16);
}

} // namespace
