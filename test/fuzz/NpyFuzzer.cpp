//===- NpyFuzzer.cpp - fuzz the runtime's .npy reader ---------------------===//
//
// Bytes -> tidalrt_npy_read_memory, the reader the generated executables use
// for --data/--input files (tidalrt_npy_read shares everything after the
// file is opened). It must return an array or a status with a message, and
// an array must have the size its header claims. Arrays that parse are
// written back with tidalrt_npy_write_data's preamble and read again.
//
//===----------------------------------------------------------------------===//

#include "tidalrt/tidalrt.h"
// A private C header without extern "C" of its own.
extern "C" {
#include "npy_header.h"
}

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

static void check(bool condition, const char *what) {
  if (!condition) {
    std::fprintf(stderr, "npy fuzzer: %s\n", what);
    std::abort();
  }
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  tidalrt_array_t *array = nullptr;
  tidalrt_status_t status =
      tidalrt_npy_read_memory(data, size, "fuzz.npy", &array);
  if (status) {
    check(!array, "an error left an array");
    const char *message = tidalrt_status_message(status);
    check(message && std::strncmp(message, "fuzz.npy: ", 10) == 0,
          "the message does not start with the name");
    tidalrt_status_free(status);
    return 0;
  }
  check(array != nullptr, "success without an array");
  size_t bytes = tidalrt_array_byte_size(array);
  size_t width = tidalrt_element_type_size(tidalrt_array_element_type(array));
  check(bytes == tidalrt_array_element_count(array) * width,
        "byte size is not element count times element size");
  check(bytes <= size, "the array is larger than its file");

  // The same array as np.save writes it reads back identically.
  char preamble[TIDALRT_NPY_MAX_PREAMBLE_LENGTH];
  size_t length = tidalrt_npy_format_preamble(
      preamble, tidalrt_array_element_type(array), tidalrt_array_rank(array),
      tidalrt_array_dims(array));
  check(length > 0, "a type that was read has no .npy dtype");
  std::string copy(preamble, length);
  copy.append(static_cast<const char *>(tidalrt_array_const_data(array)),
              bytes);
  tidalrt_array_t *again = nullptr;
  status = tidalrt_npy_read_memory(copy.data(), copy.size(), "copy", &again);
  check(!status, "np.save's layout of a read array does not read back");
  check(tidalrt_array_rank(again) == tidalrt_array_rank(array) &&
            std::memcmp(tidalrt_array_dims(again), tidalrt_array_dims(array),
                        tidalrt_array_rank(array) * sizeof(int64_t)) == 0 &&
            (bytes == 0 ||
             std::memcmp(tidalrt_array_const_data(again),
                         tidalrt_array_const_data(array), bytes) == 0),
        "the written array reads back different");
  tidalrt_array_free(again);
  tidalrt_array_free(array);
  return 0;
}
