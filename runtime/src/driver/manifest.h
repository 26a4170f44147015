// manifest.h - the program manifest: the JSON document that the compiler
// emits next to the step function (tidal_program_manifest).
#ifndef TIDALRT_DRIVER_MANIFEST_H
#define TIDALRT_DRIVER_MANIFEST_H

#include "tidalrt/tidalrt.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace tidalrt_driver {

// One argument or result of a compiled function: a tensor at a fixed byte
// offset of the function's arena or, with `host` (manifest "space": "host",
// device targets only), of its host arena (function_info::host_arena_bytes).
struct tensor_slot {
  std::string name;
  // input, param, state, constant, optimizer_state, loss, gradient, output.
  std::string role;
  tidalrt_element_type_t type = TIDALRT_ELEMENT_TYPE_INVALID;
  std::vector<int64_t> shape;
  uint64_t offset = 0;
  uint64_t bytes = 0;
  // Whether offset and bytes are in the host arena (the one that also holds
  // offloaded copies) rather than the arena (on a device target: the device
  // arena).
  bool host = false;
  // A sharded optimizer's state (tidalc --shard optimizer): this rank's
  // chunk (shape [c]) of a tensor of this shape; empty otherwise.
  std::vector<int64_t> full_shape;

  size_t element_count() const;
  bool sharded() const { return !full_shape.empty(); }
  // The slot of the whole tensor a sharded slot is a chunk of (offset 0).
  tensor_slot full() const;
  // Whether the value persists across steps and is loaded by --init and
  // written by --save: param, state, constant, optimizer_state.
  bool is_persistent() const;
};

struct function_info {
  uint64_t arena_bytes = 0;
  // Device targets (manifest "target" other than "cpu"): the device budget,
  // i.e. the size of the device memory whose base is the function's arena
  // (at least arena_bytes; absent from the manifest: 0, and the function
  // runs on the host), the host arena of offloaded copies, and the number
  // of copy ids its code uses. Slots may lie in the host arena ("space":
  // "host") only if the function has a device_bytes.
  std::optional<uint64_t> device_bytes;
  uint64_t host_arena_bytes = 0;
  uint64_t num_copies = 0;
  std::vector<tensor_slot> args;
  std::vector<tensor_slot> results;

  const tensor_slot *find_arg(const std::string &name) const;
  // The args with role "input", in manifest order.
  std::vector<const tensor_slot *> data_inputs() const;
  // The first result with role "loss", or NULL.
  const tensor_slot *loss_result() const;
};

struct op_info {
  std::string name;
  std::string kind;
};

struct blob_range {
  std::string name;
  uint64_t offset = 0;
  uint64_t size = 0;
};

struct manifest {
  int format = 0;
  std::string model;
  std::string mode;           // "train" or "forward"
  std::string target = "cpu"; // "cpu", "sim" or "cuda"
  std::string loss;           // "cross-entropy", "mse", "output" (train mode)
  int64_t batch_size = 0;
  std::vector<op_info> ops;
  blob_range model_blob;
  std::vector<blob_range> embedded;
  // The optimizer as one line, e.g. "sgd lr=0.01 momentum=0.9".
  std::string optimizer;
  // Data parallel (tidalc --distributed): the backend ("" for one
  // process) and the number of ranks; batch_size is then each rank's
  // share of a global batch of batch_size * ranks samples.
  std::string distributed;
  int64_t ranks = 1;
  // The host's parallel grain from tidalc's --device-profile (0: none):
  // the driver passes it to tidalrt_set_parallel_grain before preparing.
  int64_t parallel_grain = 0;
  function_info step;
  std::optional<function_info> predict;

  bool forward_mode() const { return mode == "forward"; }
  int64_t global_batch_size() const { return batch_size * ranks; }
  // Whether the step runs on a device ("sim", "cuda"): then it needs a
  // device_bytes, and functions with one may have copies and host slots.
  bool device_target() const { return target != "cpu"; }
  // The kind of device of a device target.
  tidalrt_device_kind_t device_kind() const {
    return target == "cuda" ? TIDALRT_DEVICE_CUDA : TIDALRT_DEVICE_SIM;
  }
  const blob_range *find_embedded(const std::string &name) const;
};

// Parses and validates `text` against a blob of `blob_size` bytes. Throws a
// driver_error (exit 2: the program is malformed) naming the problem.
manifest parse_manifest(const char *text, uint64_t blob_size);

// The element type with NumPy name `name`, or INVALID.
tidalrt_element_type_t element_type_from_name(const std::string &name);

// "float32 [32, 64]"; with `sample_dim`, dim 0 is printed as "N".
std::string describe_slot(const tensor_slot &slot, bool sample_dim = false);

} // namespace tidalrt_driver

#endif // TIDALRT_DRIVER_MANIFEST_H
