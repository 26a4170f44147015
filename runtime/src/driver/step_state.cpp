// step_state.cpp - persistent values, snapshots and non-finite scans.
#include "step_state.h"

#include "manifest.h"
#include "memory.h"

#include <cmath>
#include <cstring>

namespace tidalrt_driver {

slot_values persistent_values(const manifest &m, function_memory &memory,
                              std::deque<std::vector<uint8_t>> &copies) {
  slot_values values;
  for (const tensor_slot &slot : m.step.args) {
    if (!slot.is_persistent())
      continue;
    const uint8_t *data = memory.host_at(slot);
    if (!data) {
      copies.emplace_back(slot.bytes);
      memory.read(slot, copies.back().data());
      data = copies.back().data();
    }
    values.emplace_back(&slot, data);
  }
  return values;
}

namespace {

template <typename T>
std::optional<uint64_t> scan(const void *data, uint64_t count) {
  const T *values = static_cast<const T *>(data);
  // x * 0 is NaN iff x is NaN or infinite, and a sum of zeros stays 0: one
  // vectorisable pass for the usual all-finite case.
  T sum = 0;
  for (uint64_t i = 0; i < count; ++i)
    sum += values[i] * T(0);
  if (!std::isnan(sum))
    return std::nullopt;
  for (uint64_t i = 0; i < count; ++i)
    if (!std::isfinite(values[i]))
      return i;
  return std::nullopt;
}

// Half-width floats: non-finite iff every exponent bit is set.
std::optional<uint64_t> scan_bits(const void *data, uint64_t count,
                                  uint16_t exponent) {
  const uint16_t *values = static_cast<const uint16_t *>(data);
  for (uint64_t i = 0; i < count; ++i)
    if ((values[i] & exponent) == exponent)
      return i;
  return std::nullopt;
}

bool is_floating(tidalrt_element_type_t type) {
  return type == TIDALRT_ELEMENT_TYPE_F32 || type == TIDALRT_ELEMENT_TYPE_F64 ||
         type == TIDALRT_ELEMENT_TYPE_F16 || type == TIDALRT_ELEMENT_TYPE_BF16;
}

} // namespace

std::optional<uint64_t> first_nonfinite(tidalrt_element_type_t type,
                                        const void *data, uint64_t count) {
  switch (type) {
  case TIDALRT_ELEMENT_TYPE_F32:
    return scan<float>(data, count);
  case TIDALRT_ELEMENT_TYPE_F64:
    return scan<double>(data, count);
  case TIDALRT_ELEMENT_TYPE_F16:
    return scan_bits(data, count, 0x7c00);
  case TIDALRT_ELEMENT_TYPE_BF16:
    return scan_bits(data, count, 0x7f80);
  default:
    return std::nullopt;
  }
}

std::string describe_nonfinite(tidalrt_element_type_t type, const void *data,
                               uint64_t index) {
  bool nan, negative;
  if (type == TIDALRT_ELEMENT_TYPE_F32 || type == TIDALRT_ELEMENT_TYPE_F64) {
    double v = type == TIDALRT_ELEMENT_TYPE_F32
                   ? static_cast<const float *>(data)[index]
                   : static_cast<const double *>(data)[index];
    nan = std::isnan(v);
    negative = std::signbit(v);
  } else {
    uint16_t bits = static_cast<const uint16_t *>(data)[index];
    uint16_t mantissa = type == TIDALRT_ELEMENT_TYPE_F16 ? 0x03ff : 0x007f;
    nan = (bits & mantissa) != 0;
    negative = bits & 0x8000;
  }
  return nan ? "nan" : negative ? "-inf" : "inf";
}

nonfinite_value find_nonfinite_state(const manifest &m,
                                     function_memory &memory) {
  nonfinite_value found;
  for (const tensor_slot &slot : m.step.args) {
    if (!slot.is_persistent())
      continue;
    if (!is_floating(slot.type))
      continue;
    const uint8_t *data = memory.view(slot);
    uint64_t count = slot.element_count();
    if (std::optional<uint64_t> index =
            first_nonfinite(slot.type, data, count)) {
      found.slot = &slot;
      found.index = *index;
      found.value = describe_nonfinite(slot.type, data, *index);
      return found;
    }
  }
  return found;
}

nonfinite_value find_nonfinite(const slot_values &values) {
  nonfinite_value found;
  for (const auto &[slot, data] : values) {
    if (!is_floating(slot->type))
      continue;
    if (std::optional<uint64_t> index =
            first_nonfinite(slot->type, data, slot->element_count())) {
      found.slot = slot;
      found.index = *index;
      found.value = describe_nonfinite(slot->type, data, *index);
      return found;
    }
  }
  return found;
}

void state_snapshot::take(const manifest &m, function_memory &memory) {
  size_t i = 0;
  for (const tensor_slot &slot : m.step.args) {
    if (!slot.is_persistent())
      continue;
    if (i == saved.size())
      saved.emplace_back(&slot, std::vector<uint8_t>(slot.bytes));
    memory.read(slot, saved[i].second.data());
    ++i;
  }
}

void state_snapshot::restore(function_memory &memory) const {
  for (const auto &[slot, bytes] : saved)
    memory.write(*slot, bytes.data());
}

} // namespace tidalrt_driver
