// onnx_weights.h - initial values from ONNX models (the compiled-in model
// and --init files) and writing trained models (--save).
#ifndef TIDALRT_DRIVER_ONNX_WEIGHTS_H
#define TIDALRT_DRIVER_ONNX_WEIGHTS_H

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace tidalrt_driver {

struct tensor_slot;

// The metadata_props key that records the global step count (--save writes
// it, --init resumes from it).
extern const char *const steps_done_key;

// The program blob entry holding a compiled-in model's external data
// (tidalc writes it: include/tidal/Importer/EmbedModel.h).
extern const char *const external_data_blob;

// Where initializers stored as ONNX external data are read from: files
// relative to `base_dir`, and the location "tidal:embedded" (tidalc's
// rewrite of a compiled-in model's external data) from `blob`.
struct external_source {
  std::string base_dir = ".";
  const unsigned char *blob = nullptr;
  size_t blob_size = 0;
};

class onnx_model {
public:
  ~onnx_model();

  // Parses a serialized ModelProto; `what` names it in messages and
  // problems with it exit with `exit_status` (2 for the compiled-in model,
  // 1 for a user's file).
  static std::unique_ptr<onnx_model>
  parse(const void *data, size_t size, const std::string &what, int exit_status,
        external_source source = external_source());
  // Reads and parses the file `path` (problems exit with status 1); its
  // external data is read relative to its directory.
  static std::unique_ptr<onnx_model> read(const std::string &path);

  const std::string &name() const;
  bool has_initializer(const std::string &name) const;

  // Copies the initializer named slot.name into `dst` (slot.bytes bytes).
  // Returns false if there is none; throws if its dtype or shape differs
  // from the slot's or its data is malformed or cannot be read.
  bool load(const tensor_slot &slot, void *dst) const;

  // Drops the values of the initializers named in `names` (their values are
  // loaded; --save replaces them from the run's own), so that the parsed
  // model does not hold a second copy of the weights while training.
  void release_data(const std::vector<std::string> &names);

  // The metadata value tidal.steps_done, if present (throws if it is not a
  // number).
  std::optional<uint64_t> steps_done() const;

  // Writes this model to `path` atomically, with each (slot, data) value
  // stored in the initializer of that name (appended if the model has
  // none) and tidal.steps_done = `steps_done`. With `external_data`, when
  // the model was read with external data, or when it would pass
  // protobuf's 2 GiB limit, every initializer of 1 KiB or more goes to
  // "<path>.data" (ONNX external data, location relative to the model),
  // written atomically before the model.
  // `metadata` adds (or replaces) metadata_props entries.
  void
  save(const std::vector<std::pair<const tensor_slot *, const void *>> &values,
       uint64_t steps_done, const std::string &path, bool external_data = false,
       const std::vector<std::pair<std::string, std::string>> &metadata = {})
      const;

  // The metadata_props value of `key`, if present.
  std::optional<std::string> metadata(const std::string &key) const;

private:
  struct impl;
  explicit onnx_model(std::unique_ptr<impl> p);
  std::unique_ptr<impl> p;
};

} // namespace tidalrt_driver

#endif // TIDALRT_DRIVER_ONNX_WEIGHTS_H
