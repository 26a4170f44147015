// data.cpp - loading data inputs, the batch order and batch copies.
#include "data.h"

#include "driver.h"
#include "error.h"
#include "manifest.h"
#include "step_state.h"

#include <cstring>

namespace tidalrt_driver {

const data_input *data_set::find(const std::string &name) const {
  for (const data_input &input : inputs)
    if (input.slot->name == name)
      return &input;
  return nullptr;
}

namespace {

std::string name_list(const std::vector<const tensor_slot *> &slots) {
  std::string text;
  for (const tensor_slot *slot : slots)
    text += (text.empty() ? "" : ", ") + slot->name;
  return text.empty() ? "none" : text;
}

} // namespace

data_set load_data(const std::vector<const tensor_slot *> &slots,
                   const bindings &files, const char *option,
                   const manifest &manifest, const tidalrt_program_s *program,
                   int64_t batch_size, bool need_full_batch) {
  for (const auto &binding : files) {
    bool known = false;
    for (const tensor_slot *slot : slots)
      known = known || slot->name == binding.first;
    if (!known)
      fail_input(std::string(option) + " " + binding.first + "=" +
                 binding.second + ": the model has no data input '" +
                 binding.first + "' (its inputs: " + name_list(slots) + ")");
  }
  data_set set;
  const data_input *first = nullptr;
  for (const tensor_slot *slot : slots) {
    data_input input;
    input.slot = slot;
    const std::string *file = nullptr;
    for (const auto &binding : files)
      if (binding.first == slot->name)
        file = &binding.second;
    tidalrt_array_t *array = nullptr;
    tidalrt_status_t status = nullptr;
    if (file) {
      input.source = *file;
      status = tidalrt_npy_map(file->c_str(), &array);
    } else if (const blob_range *embedded =
                   program ? manifest.find_embedded(slot->name) : nullptr) {
      input.source = "embedded data";
      std::string name = "embedded data '" + slot->name + "'";
      status = tidalrt_npy_read_memory(program->blob + embedded->offset,
                                       embedded->size, name.c_str(), &array);
    } else {
      fail_input("missing input '" + slot->name + "' (" +
                 describe_slot(*slot, true) + "): give " + option + " " +
                 slot->name + "=FILE.npy");
    }
    if (status) {
      tidalrt_status_code_t code = tidalrt_status_code(status);
      std::string message =
          take_message(status) + " (input '" + slot->name + "')";
      if (code == TIDALRT_OUT_OF_MEMORY)
        fail_runtime(message);
      fail_input(message);
    }
    input.array.reset(array);
    std::vector<int64_t> expected = slot->shape;
    expected[0] = TIDALRT_DIM_ANY;
    check_status(tidalrt_array_check(array, input.source.c_str(),
                                     slot->name.c_str(), slot->type,
                                     expected.size(), expected.data()));
    int64_t samples = tidalrt_array_dims(array)[0];
    input.row_bytes = static_cast<size_t>(slot->bytes / slot->shape[0]);
    // A NaN or infinity in the data would train silently into NaN weights.
    uint64_t count = static_cast<uint64_t>(samples) *
                     (slot->element_count() / slot->shape[0]);
    if (std::optional<uint64_t> bad = first_nonfinite(
            slot->type, tidalrt_array_const_data(array), count)) {
      uint64_t per_sample = slot->element_count() / slot->shape[0];
      fail_input(input.source + ": input '" + slot->name + "' holds " +
                 describe_nonfinite(slot->type, tidalrt_array_const_data(array),
                                    *bad) +
                 " at element " + std::to_string(*bad) + " (sample " +
                 std::to_string(*bad / per_sample) + ")");
    }
    if (!first) {
      set.samples = static_cast<uint64_t>(samples);
    } else if (static_cast<uint64_t>(samples) != set.samples) {
      fail_input(input.source + ": input '" + slot->name + "' has " +
                 std::to_string(samples) + " samples but input '" +
                 first->slot->name + "' (" + first->source + ") has " +
                 std::to_string(set.samples) +
                 "; every input needs the same number of samples (dim 0)");
    }
    set.inputs.push_back(std::move(input));
    first = &set.inputs.front();
  }
  if (need_full_batch && !set.inputs.empty() &&
      set.samples < static_cast<uint64_t>(batch_size))
    fail_input(first->source + ": input '" + first->slot->name + "' has " +
               std::to_string(set.samples) +
               " samples, fewer than the batch size " +
               std::to_string(batch_size));
  return set;
}

namespace {

struct splitmix64 {
  uint64_t state;
  uint64_t next() {
    uint64_t z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  // Uniform in [0, bound), by rejection (no modulo bias).
  uint64_t below(uint64_t bound) {
    uint64_t limit = UINT64_MAX - (UINT64_MAX % bound + 1) % bound;
    // Values above `limit` would make the low residues more likely.
    uint64_t r;
    do
      r = next();
    while (r > limit);
    return r % bound;
  }
};

} // namespace

std::vector<uint64_t> epoch_permutation(uint64_t samples, uint64_t seed,
                                        uint64_t epoch) {
  std::vector<uint64_t> order(samples);
  for (uint64_t i = 0; i < samples; ++i)
    order[i] = i;
  splitmix64 rng{seed ^ (0x9E3779B97F4A7C15ull * (epoch + 1))};
  for (uint64_t i = samples; i > 1; --i) {
    uint64_t j = rng.below(i);
    std::swap(order[i - 1], order[j]);
  }
  return order;
}

batch_order::batch_order(uint64_t samples, uint64_t batch_size, bool shuffle,
                         uint64_t seed)
    : samples(samples), batch_size(batch_size), shuffle(shuffle), seed(seed),
      per_epoch(batch_size ? samples / batch_size : 0), batch(batch_size) {}

const std::vector<uint64_t> &batch_order::rows(uint64_t step) {
  uint64_t epoch = step / per_epoch;
  uint64_t first = (step % per_epoch) * batch_size;
  if (shuffle && epoch != cached_epoch) {
    permutation = epoch_permutation(samples, seed, epoch);
    cached_epoch = epoch;
  }
  for (uint64_t i = 0; i < batch_size; ++i)
    batch[i] = shuffle ? permutation[first + i] : first + i;
  return batch;
}

void copy_rows(const data_input &input, const uint64_t *rows, size_t count,
               uint8_t *dst, int64_t batch_size) {
  const uint8_t *src =
      static_cast<const uint8_t *>(tidalrt_array_const_data(input.array.get()));
  size_t row = input.row_bytes;
  size_t i = 0;
  while (i < count) {
    // Copy runs of consecutive samples with one memcpy.
    size_t run = 1;
    while (i + run < count && rows[i + run] == rows[i] + run)
      ++run;
    std::memcpy(dst + i * row, src + rows[i] * row, run * row);
    i += run;
  }
  if (count < static_cast<size_t>(batch_size))
    std::memset(dst + count * row, 0,
                (static_cast<size_t>(batch_size) - count) * row);
}

} // namespace tidalrt_driver
