// npy_numpy_test.cpp - files written by NumPy read here, and files written
// here load in NumPy byte for byte as np.save writes them. Needs Debian's
// /usr/bin/python3 with numpy; skipped otherwise.
#include "test_util.h"

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

namespace {

using tidalrt_test::array_ptr;
using tidalrt_test::status_ptr;

class NpyNumPyTest : public tidalrt_test::TempDirTest {
protected:
  void SetUp() override {
    TempDirTest::SetUp();
    if (!tidalrt_test::python_has_numpy())
      GTEST_SKIP() << TIDALRT_TEST_PYTHON << " with numpy is not available";
  }

  void python(const std::string &body) {
    std::string code = "import numpy as np, sys, os\n"
                       "d = " +
                       quoted(dir) + "\n" + body;
    ASSERT_EQ(tidalrt_test::run_python(code), 0) << "Python failed:\n" << code;
  }

  static std::string quoted(const std::string &text) {
    return "'" + text + "'"; // temp paths hold no quotes
  }

  array_ptr read(const std::string &name) {
    tidalrt_array_t *raw = nullptr;
    status_ptr status(tidalrt_npy_read(path(name).c_str(), &raw));
    EXPECT_FALSE(status) << tidalrt_test::describe(status);
    return array_ptr(raw);
  }
};

// NumPy dtype names for the types tidalrt reads and writes.
const char *const numpy_types =
    "['float16', 'float32', 'float64', 'int8', 'int16', 'int32', 'int64', "
    "'uint8', 'uint16', 'uint32', 'uint64', 'bool']";

TEST_F(NpyNumPyTest, ReadsWhatNumPyWrites) {
  // Values 0..23 (bool: i % 2) in shape (2, 3, 4).
  python(std::string("for t in ") + numpy_types + R"(:
    a = np.arange(24).reshape(2, 3, 4)
    a = (a % 2).astype(bool) if t == 'bool' else a.astype(t)
    np.save(os.path.join(d, t + '.npy'), a)
)");
  for (tidalrt_element_type_t type : tidalrt_test::npy_element_types()) {
    std::string name = std::string(tidalrt_element_type_name(type)) + ".npy";
    SCOPED_TRACE(name);
    array_ptr array = read(name);
    ASSERT_TRUE(array);
    EXPECT_EQ(tidalrt_array_element_type(array.get()), type);
    ASSERT_EQ(tidalrt_array_rank(array.get()), 3u);
    EXPECT_EQ(tidalrt_array_dims(array.get())[0], 2);
    EXPECT_EQ(tidalrt_array_dims(array.get())[1], 3);
    EXPECT_EQ(tidalrt_array_dims(array.get())[2], 4);
    ASSERT_EQ(tidalrt_array_element_count(array.get()), 24u);
    const void *data = tidalrt_array_const_data(array.get());
    for (int i = 0; i < 24; ++i) {
      double value = 0;
      switch (type) {
      case TIDALRT_ELEMENT_TYPE_F16: {
        // Small integers are exact in binary16: decode by hand.
        uint16_t bits = static_cast<const uint16_t *>(data)[i];
        int exponent = (bits >> 10) & 0x1f;
        int mantissa = bits & 0x3ff;
        value = exponent ? std::ldexp(1.0 + mantissa / 1024.0, exponent - 15)
                         : std::ldexp(mantissa / 1024.0, -14);
        break;
      }
      case TIDALRT_ELEMENT_TYPE_F32:
        value = static_cast<const float *>(data)[i];
        break;
      case TIDALRT_ELEMENT_TYPE_F64:
        value = static_cast<const double *>(data)[i];
        break;
      case TIDALRT_ELEMENT_TYPE_I8:
        value = static_cast<const int8_t *>(data)[i];
        break;
      case TIDALRT_ELEMENT_TYPE_I16:
        value = static_cast<const int16_t *>(data)[i];
        break;
      case TIDALRT_ELEMENT_TYPE_I32:
        value = static_cast<const int32_t *>(data)[i];
        break;
      case TIDALRT_ELEMENT_TYPE_I64:
        value = static_cast<double>(static_cast<const int64_t *>(data)[i]);
        break;
      case TIDALRT_ELEMENT_TYPE_U8:
      case TIDALRT_ELEMENT_TYPE_BOOL:
        value = static_cast<const uint8_t *>(data)[i];
        break;
      case TIDALRT_ELEMENT_TYPE_U16:
        value = static_cast<const uint16_t *>(data)[i];
        break;
      case TIDALRT_ELEMENT_TYPE_U32:
        value = static_cast<const uint32_t *>(data)[i];
        break;
      case TIDALRT_ELEMENT_TYPE_U64:
        value = static_cast<double>(static_cast<const uint64_t *>(data)[i]);
        break;
      default:
        FAIL() << "unexpected type";
      }
      EXPECT_EQ(value, type == TIDALRT_ELEMENT_TYPE_BOOL ? i % 2 : i)
          << "element " << i;
    }
  }
}

TEST_F(NpyNumPyTest, ReadsEveryRankAndEmptyArrays) {
  python(R"(
shapes = {'r0': (), 'r1': (5,), 'r2': (2, 3), 'r4': (2, 1, 3, 2),
          'e1': (0,), 'e3': (3, 0, 2), 'big': (100000,)}
for n, s in shapes.items():
    np.save(os.path.join(d, n + '.npy'),
            np.arange(int(np.prod(s)), dtype=np.float32).reshape(s))
)");
  struct expectation {
    const char *name;
    std::vector<int64_t> dims;
  };
  const expectation table[] = {
      {"r0", {}},  {"r1", {5}},       {"r2", {2, 3}},    {"r4", {2, 1, 3, 2}},
      {"e1", {0}}, {"e3", {3, 0, 2}}, {"big", {100000}},
  };
  for (const expectation &e : table) {
    SCOPED_TRACE(e.name);
    array_ptr array = read(std::string(e.name) + ".npy");
    ASSERT_TRUE(array);
    ASSERT_EQ(tidalrt_array_rank(array.get()), e.dims.size());
    size_t count = 1;
    for (size_t i = 0; i < e.dims.size(); ++i) {
      EXPECT_EQ(tidalrt_array_dims(array.get())[i], e.dims[i]);
      count *= static_cast<size_t>(e.dims[i]);
    }
    ASSERT_EQ(tidalrt_array_element_count(array.get()), count);
    const float *data =
        static_cast<const float *>(tidalrt_array_const_data(array.get()));
    for (size_t i = 0; i < count; ++i)
      ASSERT_EQ(data[i], static_cast<float>(i));
  }
}

TEST_F(NpyNumPyTest, ReadsFormatVersions2And3) {
  python(R"(
a = np.arange(12, dtype='<i8').reshape(3, 4)
for v in [(1, 0), (2, 0), (3, 0)]:
    with open(os.path.join(d, 'v%d.npy' % v[0]), 'wb') as f:
        np.lib.format.write_array(f, a, version=v)
)");
  for (const char *name : {"v1.npy", "v2.npy", "v3.npy"}) {
    SCOPED_TRACE(name);
    std::string bytes = read_bytes(name);
    ASSERT_GT(bytes.size(), 8u);
    EXPECT_EQ(bytes[6], name[1] - '0') << "NumPy wrote another version";
    array_ptr array = read(name);
    ASSERT_TRUE(array);
    EXPECT_EQ(tidalrt_array_element_type(array.get()),
              TIDALRT_ELEMENT_TYPE_I64);
    ASSERT_EQ(tidalrt_array_element_count(array.get()), 12u);
    const int64_t *data =
        static_cast<const int64_t *>(tidalrt_array_const_data(array.get()));
    for (int64_t i = 0; i < 12; ++i)
      EXPECT_EQ(data[i], i);
  }
}

TEST_F(NpyNumPyTest, RejectsFortranOrderAndBigEndian) {
  python(R"(
np.save(os.path.join(d, 'f.npy'), np.asfortranarray(np.ones((3, 4), 'f4')))
np.save(os.path.join(d, 'b.npy'), np.ones((3, 4), '>f4'))
np.save(os.path.join(d, 'c.npy'), np.ones((3,), np.complex64))
np.savez(os.path.join(d, 'z.npz'), a=np.ones(3))
)");
  struct expectation {
    const char *name;
    tidalrt_status_code_t code;
    const char *fragment;
  };
  const expectation table[] = {
      {"f.npy", TIDALRT_UNSUPPORTED, "fortran_order=True"},
      {"b.npy", TIDALRT_UNSUPPORTED, "big-endian dtype '>f4'"},
      {"c.npy", TIDALRT_UNSUPPORTED, "unsupported dtype '<c8'"},
      {"z.npz", TIDALRT_INVALID_ARGUMENT, "not a .npy file"},
  };
  for (const expectation &e : table) {
    SCOPED_TRACE(e.name);
    tidalrt_array_t *raw = nullptr;
    status_ptr status(tidalrt_npy_read(path(e.name).c_str(), &raw));
    ASSERT_TRUE(status);
    EXPECT_EQ(tidalrt_status_code(status.get()), e.code);
    std::string message = tidalrt_status_message(status.get());
    EXPECT_EQ(message.rfind(path(e.name) + ": ", 0), 0u) << message;
    EXPECT_NE(message.find(e.fragment), std::string::npos) << message;
  }
}

TEST_F(NpyNumPyTest, NumPyLoadsWhatWeWrite) {
  // Write arange(n) of every type and several shapes; NumPy must load the
  // values and, re-saving them, produce the very same bytes.
  const std::vector<std::vector<int64_t>> shapes = {
      {},
      {7},
      {2, 3},
      {2, 3, 4},
      {1, 2, 1, 3},
      {0, 5},
      {12345678901, 0},
      // Long enough that NumPy's growth padding spills into a 3rd block.
      std::vector<int64_t>(16, 1)};
  for (tidalrt_element_type_t type : tidalrt_test::npy_element_types()) {
    for (size_t s = 0; s < shapes.size(); ++s) {
      const std::vector<int64_t> &dims = shapes[s];
      tidalrt_array_t *raw = nullptr;
      ASSERT_STATUS_OK(
          tidalrt_array_create(type, dims.size(), dims.data(), &raw));
      array_ptr array(raw);
      void *data = tidalrt_array_data(raw);
      size_t count = tidalrt_array_element_count(raw);
      for (size_t i = 0; i < count; ++i) {
        switch (type) {
        case TIDALRT_ELEMENT_TYPE_F16: // small integers, encoded by hand
        {
          uint16_t bits = 0;
          if (i) {
            int exponent = 0;
            while ((i >> (exponent + 1)) != 0)
              ++exponent;
            uint16_t mantissa =
                static_cast<uint16_t>(((i << 10) >> exponent) & 0x3ff);
            bits = static_cast<uint16_t>(((exponent + 15) << 10) | mantissa);
          }
          static_cast<uint16_t *>(data)[i] = bits;
          break;
        }
        case TIDALRT_ELEMENT_TYPE_F32:
          static_cast<float *>(data)[i] = static_cast<float>(i);
          break;
        case TIDALRT_ELEMENT_TYPE_F64:
          static_cast<double *>(data)[i] = static_cast<double>(i);
          break;
        case TIDALRT_ELEMENT_TYPE_I8:
        case TIDALRT_ELEMENT_TYPE_U8:
          static_cast<uint8_t *>(data)[i] = static_cast<uint8_t>(i);
          break;
        case TIDALRT_ELEMENT_TYPE_BOOL:
          static_cast<uint8_t *>(data)[i] = static_cast<uint8_t>(i % 2);
          break;
        case TIDALRT_ELEMENT_TYPE_I16:
        case TIDALRT_ELEMENT_TYPE_U16:
          static_cast<uint16_t *>(data)[i] = static_cast<uint16_t>(i);
          break;
        case TIDALRT_ELEMENT_TYPE_I32:
        case TIDALRT_ELEMENT_TYPE_U32:
          static_cast<uint32_t *>(data)[i] = static_cast<uint32_t>(i);
          break;
        case TIDALRT_ELEMENT_TYPE_I64:
        case TIDALRT_ELEMENT_TYPE_U64:
          static_cast<uint64_t *>(data)[i] = i;
          break;
        default:
          FAIL() << "unexpected type";
        }
      }
      std::string name = std::string(tidalrt_element_type_name(type)) + "_" +
                         std::to_string(s) + ".npy";
      ASSERT_STATUS_OK(tidalrt_npy_write(path(name).c_str(), array.get()));
    }
  }
  python(std::string("types = ") + numpy_types + R"(
shapes = [(), (7,), (2, 3), (2, 3, 4), (1, 2, 1, 3), (0, 5), (12345678901, 0),
          (1,) * 16]
bad = 0
for t in types:
    for s, shape in enumerate(shapes):
        name = os.path.join(d, '%s_%d.npy' % (t, s))
        a = np.load(name)
        n = int(np.prod(shape))
        want = np.arange(n).reshape(shape)
        want = (want % 2).astype(bool) if t == 'bool' else want.astype(t)
        if a.dtype != np.dtype(t) or a.shape != shape or \
                not np.array_equal(a, want):
            print('mismatch', name, a.dtype, a.shape, file=sys.stderr)
            bad += 1
        ref = name + '.ref'
        np.save(ref, a)
        os.rename(ref + '.npy', ref)
        if open(ref, 'rb').read() != open(name, 'rb').read():
            print('bytes differ from np.save', name, file=sys.stderr)
            bad += 1
        os.remove(ref)
sys.exit(1 if bad else 0)
)");
}

} // namespace
