// npy_error_test.cpp - malformed and unsupported .npy files, crafted byte by
// byte, are rejected with a message that names the file.
#include "test_util.h"

#include <string>

namespace {

using tidalrt_test::array_ptr;
using tidalrt_test::make_npy;
using tidalrt_test::status_ptr;

const char *const good_dict =
    "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }";
const std::string good_data(24, '\0');

class NpyErrorTest : public tidalrt_test::TempDirTest {
protected:
  // Writes `bytes` to bad.npy, reads it, and expects failure with `code` and
  // a message "<path>: ..." containing `fragment`.
  void expect_error(const std::string &bytes, tidalrt_status_code_t code,
                    const std::string &fragment) {
    write_bytes("bad.npy", bytes);
    std::string file = path("bad.npy");
    tidalrt_array_t *array = reinterpret_cast<tidalrt_array_t *>(0x1);
    status_ptr status(tidalrt_npy_read(file.c_str(), &array));
    ASSERT_TRUE(status) << "accepted a bad file; expected: " << fragment;
    EXPECT_EQ(array, nullptr);
    std::string message = tidalrt_status_message(status.get());
    EXPECT_EQ(tidalrt_status_code(status.get()), code) << message;
    EXPECT_EQ(message.rfind(file + ": ", 0), 0u)
        << "message does not start with the path: " << message;
    EXPECT_NE(message.find(fragment), std::string::npos)
        << "'" << fragment << "' not in: " << message;

    // The in-memory reader reports the same, under the given name.
    array = nullptr;
    status.reset(
        tidalrt_npy_read_memory(bytes.data(), bytes.size(), "mem", &array));
    ASSERT_TRUE(status);
    message = tidalrt_status_message(status.get());
    EXPECT_EQ(tidalrt_status_code(status.get()), code) << message;
    EXPECT_EQ(message.rfind("mem: ", 0), 0u) << message;
    EXPECT_NE(message.find(fragment), std::string::npos) << message;
  }

  void expect_header_error(const std::string &dict, tidalrt_status_code_t code,
                           const std::string &fragment) {
    expect_error(make_npy(dict, good_data), code, fragment);
  }
};

TEST_F(NpyErrorTest, GoodFileIsAccepted) {
  write_bytes("good.npy", make_npy(good_dict, good_data));
  tidalrt_array_t *raw = nullptr;
  ASSERT_STATUS_OK(tidalrt_npy_read(path("good.npy").c_str(), &raw));
  array_ptr array(raw);
  EXPECT_EQ(tidalrt_array_element_count(array.get()), 6u);
}

TEST_F(NpyErrorTest, MissingFile) {
  std::string file = path("missing.npy");
  tidalrt_array_t *array = nullptr;
  status_ptr status(tidalrt_npy_read(file.c_str(), &array));
  EXPECT_EQ(tidalrt_status_code(status.get()), TIDALRT_NOT_FOUND);
  EXPECT_EQ(std::string(tidalrt_status_message(status.get())),
            file + ": cannot open: No such file or directory");
}

TEST_F(NpyErrorTest, Directory) {
  tidalrt_array_t *array = nullptr;
  status_ptr status(tidalrt_npy_read(dir.c_str(), &array));
  EXPECT_EQ(tidalrt_status_code(status.get()), TIDALRT_INVALID_ARGUMENT);
  EXPECT_NE(
      std::string(tidalrt_status_message(status.get())).find("is a directory"),
      std::string::npos);
}

TEST_F(NpyErrorTest, NullArguments) {
  tidalrt_array_t *array = nullptr;
  status_ptr status(tidalrt_npy_read(nullptr, &array));
  EXPECT_EQ(tidalrt_status_code(status.get()), TIDALRT_INVALID_ARGUMENT);
  status.reset(tidalrt_npy_read(path("x.npy").c_str(), nullptr));
  EXPECT_EQ(tidalrt_status_code(status.get()), TIDALRT_INVALID_ARGUMENT);
  status.reset(tidalrt_npy_read_memory(nullptr, 10, nullptr, &array));
  EXPECT_EQ(tidalrt_status_code(status.get()), TIDALRT_INVALID_ARGUMENT);
}

TEST_F(NpyErrorTest, EmptyFile) {
  expect_error("", TIDALRT_INVALID_ARGUMENT, "empty file");
}

TEST_F(NpyErrorTest, BadMagic) {
  std::string bytes = make_npy(good_dict, good_data);
  bytes[5] = 'X'; // \x93NUMPX
  expect_error(bytes, TIDALRT_INVALID_ARGUMENT, "bad magic");
  expect_error("hello, world\n", TIDALRT_INVALID_ARGUMENT, "bad magic");
  expect_error("PK\x03\x04", TIDALRT_INVALID_ARGUMENT, "bad magic"); // .npz
  expect_error("\x93NUM", TIDALRT_INVALID_ARGUMENT, "truncated header");
}

TEST_F(NpyErrorTest, TruncatedPrefix) {
  std::string bytes = make_npy(good_dict, good_data);
  expect_error(bytes.substr(0, 6), TIDALRT_INVALID_ARGUMENT,
               "truncated header");
  expect_error(bytes.substr(0, 8), TIDALRT_INVALID_ARGUMENT,
               "truncated header");
  expect_error(bytes.substr(0, 9), TIDALRT_INVALID_ARGUMENT,
               "truncated header");
  std::string v2 = make_npy(good_dict, good_data, 2);
  expect_error(v2.substr(0, 11), TIDALRT_INVALID_ARGUMENT, "truncated header");
}

TEST_F(NpyErrorTest, TruncatedHeader) {
  std::string bytes = make_npy(good_dict, good_data);
  expect_error(bytes.substr(0, 40), TIDALRT_INVALID_ARGUMENT,
               "truncated header: expected 118 bytes, found 30");
}

TEST_F(NpyErrorTest, TruncatedData) {
  std::string bytes = make_npy(good_dict, good_data);
  expect_error(bytes.substr(0, bytes.size() - 5), TIDALRT_INVALID_ARGUMENT,
               "truncated data: float32 [2, 3] needs 24 bytes, the file has "
               "19");
  expect_error(make_npy(good_dict), TIDALRT_INVALID_ARGUMENT, "truncated data");
}

TEST_F(NpyErrorTest, TrailingData) {
  expect_error(make_npy(good_dict, good_data + "abc"), TIDALRT_INVALID_ARGUMENT,
               "data size mismatch: float32 [2, 3] needs 24 bytes, but 3 "
               "more follow them");
}

TEST_F(NpyErrorTest, UnsupportedVersion) {
  std::string bytes = make_npy(good_dict, good_data);
  bytes[6] = 4;
  expect_error(bytes, TIDALRT_UNSUPPORTED, "format version 4.0");
  bytes[6] = 1;
  bytes[7] = 1;
  expect_error(bytes, TIDALRT_UNSUPPORTED, "format version 1.1");
  bytes[6] = 0;
  bytes[7] = 0;
  expect_error(bytes, TIDALRT_UNSUPPORTED, "format version 0.0");
}

TEST_F(NpyErrorTest, HugeHeaderLength) {
  std::string bytes("\x93NUMPY\x02\x00\xff\xff\xff\xff{}", 14);
  expect_error(bytes, TIDALRT_INVALID_ARGUMENT, "exceeds the limit");
}

TEST_F(NpyErrorTest, FortranOrder) {
  expect_header_error(
      "{'descr': '<f4', 'fortran_order': True, 'shape': (2, 3), }",
      TIDALRT_UNSUPPORTED, "fortran_order=True");
}

TEST_F(NpyErrorTest, BigEndian) {
  expect_header_error(
      "{'descr': '>f4', 'fortran_order': False, 'shape': (2, 3), }",
      TIDALRT_UNSUPPORTED, "big-endian dtype '>f4'");
  expect_error(
      make_npy("{'descr': '>i8', 'fortran_order': False, 'shape': (3,), }",
               good_data),
      TIDALRT_UNSUPPORTED, "a.astype('<i8')");
}

TEST_F(NpyErrorTest, ByteOrderFreeAndNativeAreAccepted) {
  // One-byte types carry no byte order; '=' and a missing order are native.
  const char *dicts[] = {
      "{'descr': '>u1', 'fortran_order': False, 'shape': (24,), }",
      "{'descr': '=f4', 'fortran_order': False, 'shape': (6,), }",
      "{'descr': 'f4', 'fortran_order': False, 'shape': (6,), }",
      "{'descr': '|f4', 'fortran_order': False, 'shape': (6,), }",
      "{\"descr\": \"<f4\", \"fortran_order\": False, \"shape\": (6,)}",
      "{'shape': (2, 3), 'fortran_order': False, 'descr': '<f4'}",
      " { 'descr' : '<i4' , 'fortran_order' : False , 'shape' : ( 2 , 3 , ) } ",
      "{'descr': '<f4', 'fortran_order': False, 'shape': (2L, 3L), }",
  };
  for (const char *dict : dicts) {
    write_bytes("ok.npy", make_npy(dict, good_data));
    tidalrt_array_t *raw = nullptr;
    EXPECT_STATUS_OK(tidalrt_npy_read(path("ok.npy").c_str(), &raw)) << dict;
    tidalrt_array_free(raw);
  }
}

TEST_F(NpyErrorTest, UnsupportedDtypes) {
  struct bad_dtype {
    const char *descr;
    const char *fragment;
  };
  const bad_dtype table[] = {
      {"<c8", "unsupported dtype '<c8' (complex)"},
      {"<U5", "unicode string"},
      {"|S3", "byte string"},
      {"|O", "Python object"},
      {"<M8[ns]", "datetime64"},
      {"<m8[s]", "timedelta64"},
      {"|V2", "bfloat16"},
      {"<f16", "unsupported dtype '<f16'"},
      {"<f3", "unsupported dtype '<f3'"},
      {"<b2", "unsupported dtype '<b2'"},
      {"<i4x", "unsupported dtype '<i4x'"},
      {"", "unsupported dtype ''"},
  };
  for (const bad_dtype &entry : table) {
    SCOPED_TRACE(entry.descr);
    expect_header_error(std::string("{'descr': '") + entry.descr +
                            "', 'fortran_order': False, 'shape': (2, 3), }",
                        TIDALRT_UNSUPPORTED, entry.fragment);
  }
  expect_header_error("{'descr': [('a', '<f4'), ('b', '<i8')], "
                      "'fortran_order': False, 'shape': (2,), }",
                      TIDALRT_UNSUPPORTED, "structured dtypes");
}

TEST_F(NpyErrorTest, MalformedHeaders) {
  struct bad_header {
    const char *dict;
    const char *fragment;
  };
  const bad_header table[] = {
      {"", "expected '{'"},
      {"'descr': '<f4'", "expected '{'"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), ",
       "expected a quoted key"},
      {"{'descr': '<f4', 'fortran_order': False}", "missing key 'shape'"},
      {"{'fortran_order': False, 'shape': (6,)}", "missing key 'descr'"},
      {"{'descr': '<f4', 'shape': (6,)}", "missing key 'fortran_order'"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (6,), "
       "'extra': 1}",
       "unexpected key 'extra'"},
      {"{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, "
       "'shape': (6,)}",
       "duplicate key 'descr'"},
      {"{descr: '<f4'}", "expected a quoted key"},
      {"{'descr' '<f4'}", "expected ':'"},
      {"{'descr': '<f4' 'fortran_order': False}", "expected ',' or '}'"},
      {"{'descr': '<f4, 'fortran_order': False, 'shape': (6,)}",
       "expected ',' or '}'"},
      {"{'descr': '<f4', 'fortran_order': 0, 'shape': (6,)}",
       "'fortran_order' is not True or False"},
      {"{'descr': 4, 'fortran_order': False, 'shape': (6,)}",
       "'descr' is not a quoted dtype string"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': 6}",
       "'shape' is not a tuple of integers"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (6)}",
       "'shape' is not a tuple of integers"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': [2, 3]}",
       "'shape' is not a tuple of integers"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (2.0, 3)}",
       "expected ',' or ')'"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': ('2', 3)}",
       "'shape' is not a tuple of integers"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3}",
       "expected ',' or ')'"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3)} x",
       "unexpected text after the dictionary"},
      {"{'descr': '<f\\x34', 'fortran_order': False, 'shape': (6,)}",
       "unsupported character"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (6,)",
       "expected ',' or '}'"},
  };
  for (const bad_header &entry : table) {
    SCOPED_TRACE(entry.dict);
    expect_header_error(entry.dict, TIDALRT_INVALID_ARGUMENT, entry.fragment);
  }
}

TEST_F(NpyErrorTest, HeaderWithoutNewlineOrPadding) {
  // Only the length field delimits the header; the last byte need not be a
  // newline, and an unterminated string is caught at the end.
  std::string dict = "{'descr': '<f4";
  std::string bytes("\x93NUMPY\x01\x00", 8);
  bytes += static_cast<char>(dict.size());
  bytes += '\0';
  expect_error(bytes + dict, TIDALRT_INVALID_ARGUMENT, "unterminated string");
}

TEST_F(NpyErrorTest, NegativeDimension) {
  expect_header_error(
      "{'descr': '<f4', 'fortran_order': False, 'shape': (2, -3), }",
      TIDALRT_INVALID_ARGUMENT, "negative dimension -3 in shape");
}

TEST_F(NpyErrorTest, OverflowingDimension) {
  expect_header_error("{'descr': '<f4', 'fortran_order': False, "
                      "'shape': (99999999999999999999,), }",
                      TIDALRT_INVALID_ARGUMENT, "overflows int64");
  expect_header_error("{'descr': '<f4', 'fortran_order': False, "
                      "'shape': (9223372036854775808,), }",
                      TIDALRT_INVALID_ARGUMENT, "overflows int64");
}

TEST_F(NpyErrorTest, OverflowingShape) {
  expect_header_error("{'descr': '<f8', 'fortran_order': False, "
                      "'shape': (4294967296, 4294967296), }",
                      TIDALRT_INVALID_ARGUMENT,
                      "float64 [4294967296, 4294967296] is too large");
  expect_header_error("{'descr': '<f8', 'fortran_order': False, "
                      "'shape': (9223372036854775807,), }",
                      TIDALRT_INVALID_ARGUMENT, "too large");
}

TEST_F(NpyErrorTest, ZeroDimensionMakesHugeShapeEmpty) {
  write_bytes("z.npy", make_npy("{'descr': '<f4', 'fortran_order': False, "
                                "'shape': (4294967296, 0, 4294967296), }"));
  tidalrt_array_t *raw = nullptr;
  ASSERT_STATUS_OK(tidalrt_npy_read(path("z.npy").c_str(), &raw));
  array_ptr array(raw);
  EXPECT_EQ(tidalrt_array_element_count(array.get()), 0u);
}

TEST_F(NpyErrorTest, TooManyDimensions) {
  std::string dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (";
  for (int i = 0; i < TIDALRT_MAX_RANK + 1; ++i)
    dict += "1, ";
  dict += "), }";
  expect_error(make_npy(dict, std::string(4, '\0')), TIDALRT_UNSUPPORTED,
               "more than 64 dimensions");
}

} // namespace
