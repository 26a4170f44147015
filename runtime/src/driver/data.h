// data.h - data inputs (.npy files and embedded data), mini-batch order and
// copying batches into the arena.
#ifndef TIDALRT_DRIVER_DATA_H
#define TIDALRT_DRIVER_DATA_H

#include "tidalrt/tidalrt.h"

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

struct tidalrt_program_s;

namespace tidalrt_driver {

struct manifest;
struct tensor_slot;

struct array_deleter {
  void operator()(tidalrt_array_t *array) const { tidalrt_array_free(array); }
};
using array_ptr = std::unique_ptr<tidalrt_array_t, array_deleter>;

// One data input: the whole data set of one graph input.
struct data_input {
  // The argument it feeds (its shape[0] is the batch size).
  const tensor_slot *slot = nullptr;
  // The file it came from, or "embedded data".
  std::string source;
  array_ptr array;
  // Bytes of one sample (one row along dim 0).
  size_t row_bytes = 0;
};

struct data_set {
  std::vector<data_input> inputs;
  // The common dim 0 of every input.
  uint64_t samples = 0;

  const data_input *find(const std::string &name) const;
};

using bindings = std::vector<std::pair<std::string, std::string>>;

// Loads one array per slot in `slots`: from the file bound to its name in
// `files`, else (if `program` is not NULL) from the embedded data of that
// name. Checks dtype and shape[1:] against the slot, that every input has
// the same number of samples, and, if `need_full_batch`, that there are at
// least `batch_size` of them. `option` ("--input") words the messages.
// Every name in `files` must be a slot (or in `extra_names`, which are
// accepted and ignored). Throws a driver_error (exit 1).
data_set load_data(const std::vector<const tensor_slot *> &slots,
                   const bindings &files, const char *option,
                   const manifest &manifest, const tidalrt_program_s *program,
                   int64_t batch_size, bool need_full_batch);

// The order of samples in epoch `epoch`: the Fisher-Yates permutation of
// 0..samples-1 drawn from splitmix64 seeded with
// seed ^ (0x9E3779B97F4A7C15 * (epoch + 1)) (docs/executable.md).
std::vector<uint64_t> epoch_permutation(uint64_t samples, uint64_t seed,
                                        uint64_t epoch);

// Which samples make up the batch of each global step.
class batch_order {
public:
  batch_order(uint64_t samples, uint64_t batch_size, bool shuffle,
              uint64_t seed);
  uint64_t batches_per_epoch() const { return per_epoch; }
  // The `batch_size` sample indices of global step `step`.
  const std::vector<uint64_t> &rows(uint64_t step);

private:
  uint64_t samples;
  uint64_t batch_size;
  bool shuffle;
  uint64_t seed;
  uint64_t per_epoch;
  uint64_t cached_epoch = UINT64_MAX;
  std::vector<uint64_t> permutation;
  std::vector<uint64_t> batch;
};

// Copies samples `rows[0..count)` of `input` into `dst` (one argument slot
// of `batch_size` rows) and zero-fills rows count..batch_size-1.
void copy_rows(const data_input &input, const uint64_t *rows, size_t count,
               uint8_t *dst, int64_t batch_size);

} // namespace tidalrt_driver

#endif // TIDALRT_DRIVER_DATA_H
