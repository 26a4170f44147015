//===- CheckpointFuzzer.cpp - fuzz the driver's checkpoint reader ---------===//
//
// Bytes -> tidalrt_driver::onnx_model::parse, as a generated executable
// reads an --init checkpoint (or its compiled-in model), then steps_done(),
// has_initializer() and load() into slots as the manifest would describe
// them: one per initializer of the model (its own name, dtype and shape,
// up to 1 MiB), a slot of that name with another dtype, a few fixed names,
// and a second load after release_data(). Bad input must throw
// driver_error (the driver's clean exit 1); a crash, a sanitizer report or
// any other exception is a bug. External data is read from a private
// directory holding one file, weights.bin (4 KiB), and "tidal:embedded"
// from a 4 KiB blob.
//
//===----------------------------------------------------------------------===//

#include "error.h"
#include "manifest.h"
#include "onnx_weights.h"

#include <onnx/onnx_pb.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <unistd.h>
#include <vector>

using namespace tidalrt_driver;

namespace {

constexpr size_t kPatternBytes = 4096;
std::string externalDir;
unsigned char blob[kPatternBytes];

void removeExternalDir() {
  std::remove((externalDir + "/weights.bin").c_str());
  rmdir(externalDir.c_str());
}

// The slot the compiled model would have for `tensor`, if tidal has its
// dtype and it holds at most 1 MiB.
bool slotFor(const onnx::TensorProto &tensor, tensor_slot &slot) {
  int type = tensor.data_type();
  size_t width =
      type > 0 && type < 64
          ? tidalrt_element_type_size(static_cast<tidalrt_element_type_t>(type))
          : 0;
  if (!width || tensor.dims_size() > TIDALRT_MAX_RANK)
    return false;
  uint64_t bytes = width;
  for (int64_t dim : tensor.dims()) {
    if (dim < 0 || dim > (1 << 20) || (bytes *= uint64_t(dim)) > (1u << 20))
      return false;
    slot.shape.push_back(dim);
  }
  slot.name = tensor.name();
  slot.role = "param";
  slot.type = static_cast<tidalrt_element_type_t>(type);
  slot.bytes = bytes;
  return true;
}

tensor_slot fixedSlot(const char *name, tidalrt_element_type_t type,
                      std::vector<int64_t> shape) {
  tensor_slot slot;
  slot.name = name;
  slot.role = "param";
  slot.type = type;
  slot.shape = std::move(shape);
  slot.bytes = slot.element_count() * tidalrt_element_type_size(type);
  return slot;
}

void load(const onnx_model &model, const tensor_slot &slot) {
  // Exactly slot.bytes, so that ASan reports a write past them.
  std::vector<unsigned char> buffer(slot.bytes);
  try {
    bool found = model.load(slot, buffer.data());
    if (found != model.has_initializer(slot.name)) {
      std::fprintf(stderr,
                   "checkpoint fuzzer: load and has_initializer "
                   "disagree on '%s'\n",
                   slot.name.c_str());
      std::abort();
    }
  } catch (const driver_error &) {
  }
}

} // namespace

extern "C" int LLVMFuzzerInitialize(int *, char ***) {
  const char *tmp = std::getenv("TMPDIR");
  std::string pattern =
      std::string(tmp && *tmp ? tmp : "/tmp") + "/tidal-fuzz-checkpoint.XXXXXX";
  if (!mkdtemp(pattern.data())) {
    std::perror("checkpoint fuzzer: mkdtemp");
    std::abort();
  }
  externalDir = pattern;
  for (size_t i = 0; i < kPatternBytes; ++i)
    blob[i] = static_cast<unsigned char>(i * 7 + 1);
  std::ofstream(externalDir + "/weights.bin", std::ios::binary)
      .write(reinterpret_cast<const char *>(blob), kPatternBytes);
  std::atexit(removeExternalDir);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  external_source source;
  source.base_dir = externalDir;
  source.blob = blob;
  source.blob_size = kPatternBytes;
  std::unique_ptr<onnx_model> model;
  try {
    model = onnx_model::parse(data, size, "fuzz.onnx", EXIT_BAD_INPUT, source);
  } catch (const driver_error &) {
    return 0;
  }
  try {
    (void)model->steps_done();
  } catch (const driver_error &) {
  }

  std::vector<tensor_slot> slots = {
      fixedSlot("w", TIDALRT_ELEMENT_TYPE_F32, {2, 3}),
      fixedSlot("b", TIDALRT_ELEMENT_TYPE_I64, {4}),
      fixedSlot("h", TIDALRT_ELEMENT_TYPE_F16, {}),
  };
  onnx::ModelProto proto;
  if (proto.ParseFromArray(data, static_cast<int>(size))) {
    for (const onnx::TensorProto &tensor : proto.graph().initializer()) {
      if (slots.size() >= 12)
        break;
      tensor_slot slot;
      if (!slotFor(tensor, slot))
        continue;
      // The same name with another dtype must be refused cleanly.
      tensor_slot other = slot;
      other.type = slot.type == TIDALRT_ELEMENT_TYPE_F32
                       ? TIDALRT_ELEMENT_TYPE_I32
                       : TIDALRT_ELEMENT_TYPE_F32;
      other.bytes = other.element_count() * 4;
      slots.push_back(std::move(slot));
      slots.push_back(std::move(other));
    }
  }
  std::vector<std::string> names;
  for (const tensor_slot &slot : slots) {
    load(*model, slot);
    names.push_back(slot.name);
  }
  // --init loads, then drops the values; a second load sees only headers.
  model->release_data(names);
  for (const tensor_slot &slot : slots)
    load(*model, slot);
  return 0;
}
