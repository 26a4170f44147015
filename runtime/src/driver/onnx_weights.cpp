// onnx_weights.cpp - reading initializers from ONNX models and writing
// trained ones (through Debian's onnx_proto).
#include "onnx_weights.h"

#include "error.h"
#include "file_util.h"
#include "manifest.h"

#include <google/protobuf/io/zero_copy_stream_impl.h>
#include <onnx/onnx_pb.h>

#include <cerrno>

#include <cstring>
#include <optional>
#include <unordered_map>

namespace tidalrt_driver {

const char *const steps_done_key = "tidal.steps_done";
const char *const external_data_blob = "tidal.external_data";

struct onnx_model::impl {
  onnx::ModelProto proto;
  std::string what;
  int exit_status = EXIT_BAD_INPUT;
  std::unordered_map<std::string, const onnx::TensorProto *> initializers;
  external_source source;
  bool has_external = false;

  [[noreturn]] void fail(const std::string &message) const {
    throw driver_error(exit_status, what + ": " + message);
  }

  // Copies the external data of `tensor` (which must be `size` bytes) to
  // `dst`.
  void read_external(const onnx::TensorProto &tensor, void *dst,
                     size_t size) const;
};

namespace {

const char *const embedded_location = "tidal:embedded";

bool is_external(const onnx::TensorProto &tensor) {
  return tensor.data_location() == onnx::TensorProto::EXTERNAL ||
         tensor.external_data_size() > 0;
}

} // namespace

void onnx_model::impl::read_external(const onnx::TensorProto &tensor, void *dst,
                                     size_t size) const {
  std::string location;
  uint64_t offset = 0;
  std::optional<uint64_t> length;
  for (const auto &entry : tensor.external_data()) {
    const std::string &v = entry.value();
    bool number = !v.empty() && v.size() <= 19 &&
                  v.find_first_not_of("0123456789") == std::string::npos;
    if (entry.key() == "location")
      location = v;
    else if ((entry.key() == "offset" || entry.key() == "length") && !number)
      fail("initializer '" + tensor.name() + "': external data " + entry.key() +
           " '" + v + "' is not a number");
    else if (entry.key() == "offset")
      offset = std::stoull(v);
    else if (entry.key() == "length")
      length = std::stoull(v);
  }
  if (length && *length != size)
    fail("initializer '" + tensor.name() + "' has " + std::to_string(*length) +
         " bytes of external data, it needs " + std::to_string(size));
  if (location == embedded_location) {
    if (!source.blob || offset > source.blob_size ||
        size > source.blob_size - offset)
      fail("initializer '" + tensor.name() +
           "': its compiled-in external data is missing or short");
    if (size)
      std::memcpy(dst, source.blob + offset, size);
    return;
  }
  // As onnx's checker: a relative path that stays below the model.
  if (location.empty() || location[0] == '/' ||
      location.find("..") != std::string::npos)
    fail("initializer '" + tensor.name() +
         "' has an invalid external data location '" + location + "'");
  std::string path = source.base_dir + "/" + location;
  try {
    read_file_range(path, offset, dst, size);
  } catch (const driver_error &e) {
    fail("initializer '" + tensor.name() + "': " + e.what());
  }
}

namespace {

// Every initializer of the model: the main graph's, then those of the
// training_info graphs (first one wins).
template <typename Model, typename Visit>
void for_each_initializer(Model &model, Visit visit) {
  auto graph = [&](auto &g) {
    for (auto &tensor : *g.mutable_initializer())
      visit(tensor);
  };
  graph(*model.mutable_graph());
  for (auto &info : *model.mutable_training_info()) {
    if (info.has_initialization())
      graph(*info.mutable_initialization());
    if (info.has_algorithm())
      graph(*info.mutable_algorithm());
  }
}

std::string describe_tensor(const onnx::TensorProto &tensor) {
  const char *type = "invalid";
  int data_type = tensor.data_type();
  if (data_type > 0 && data_type < 64)
    type = tidalrt_element_type_name(
        static_cast<tidalrt_element_type_t>(data_type));
  std::string text = std::string(std::strcmp(type, "invalid") == 0
                                     ? "ONNX type " + std::to_string(data_type)
                                     : type) +
                     " [";
  for (int i = 0; i < tensor.dims_size(); ++i)
    text += (i ? ", " : "") + std::to_string(tensor.dims(i));
  return text + "]";
}

template <typename Field, typename Element>
bool copy_typed(const Field &field, size_t count, Element *dst) {
  if (static_cast<size_t>(field.size()) != count)
    return false;
  for (size_t i = 0; i < count; ++i)
    dst[i] = static_cast<Element>(field.Get(static_cast<int>(i)));
  return true;
}

} // namespace

onnx_model::onnx_model(std::unique_ptr<impl> p) : p(std::move(p)) {}
onnx_model::~onnx_model() = default;

std::unique_ptr<onnx_model> onnx_model::parse(const void *data, size_t size,
                                              const std::string &what,
                                              int exit_status,
                                              external_source source) {
  auto state = std::make_unique<impl>();
  state->what = what;
  state->exit_status = exit_status;
  state->source = std::move(source);
  if (size > static_cast<size_t>(INT32_MAX) ||
      !state->proto.ParseFromArray(data, static_cast<int>(size)))
    state->fail("not a valid ONNX model (the ModelProto does not parse)");
  if (!state->proto.has_graph())
    state->fail("not a valid ONNX model (it has no graph)");
  for_each_initializer(state->proto, [&](const onnx::TensorProto &tensor) {
    state->initializers.emplace(tensor.name(), &tensor);
    state->has_external = state->has_external || is_external(tensor);
  });
  return std::unique_ptr<onnx_model>(new onnx_model(std::move(state)));
}

std::unique_ptr<onnx_model> onnx_model::read(const std::string &path) {
  std::string bytes = read_file(path);
  external_source source;
  source.base_dir = directory_of(path);
  return parse(bytes.data(), bytes.size(), path, EXIT_BAD_INPUT,
               std::move(source));
}

const std::string &onnx_model::name() const { return p->what; }

bool onnx_model::has_initializer(const std::string &name) const {
  return p->initializers.count(name) != 0;
}

bool onnx_model::load(const tensor_slot &slot, void *dst) const {
  auto it = p->initializers.find(slot.name);
  if (it == p->initializers.end())
    return false;
  const onnx::TensorProto &tensor = *it->second;
  bool same_shape =
      static_cast<size_t>(tensor.dims_size()) == slot.shape.size();
  for (size_t i = 0; same_shape && i < slot.shape.size(); ++i)
    same_shape = tensor.dims(static_cast<int>(i)) == slot.shape[i];
  if (tensor.data_type() != static_cast<int>(slot.type) || !same_shape)
    p->fail("initializer '" + slot.name + "' is " + describe_tensor(tensor) +
            ", the compiled model expects " + describe_slot(slot));
  if (is_external(tensor)) {
    p->read_external(tensor, dst, slot.bytes);
    return true;
  }
  size_t count = slot.element_count();
  if (tensor.has_raw_data()) {
    if (tensor.raw_data().size() != slot.bytes)
      p->fail("initializer '" + slot.name + "' holds " +
              std::to_string(tensor.raw_data().size()) +
              " bytes of raw data, " + describe_slot(slot) + " needs " +
              std::to_string(slot.bytes));
    if (slot.bytes)
      std::memcpy(dst, tensor.raw_data().data(), slot.bytes);
    return true;
  }
  bool ok = false;
  switch (slot.type) {
  case TIDALRT_ELEMENT_TYPE_F32:
    ok = copy_typed(tensor.float_data(), count, static_cast<float *>(dst));
    break;
  case TIDALRT_ELEMENT_TYPE_F64:
    ok = copy_typed(tensor.double_data(), count, static_cast<double *>(dst));
    break;
  case TIDALRT_ELEMENT_TYPE_I64:
    ok = copy_typed(tensor.int64_data(), count, static_cast<int64_t *>(dst));
    break;
  case TIDALRT_ELEMENT_TYPE_U32:
    ok = copy_typed(tensor.uint64_data(), count, static_cast<uint32_t *>(dst));
    break;
  case TIDALRT_ELEMENT_TYPE_U64:
    ok = copy_typed(tensor.uint64_data(), count, static_cast<uint64_t *>(dst));
    break;
  case TIDALRT_ELEMENT_TYPE_I32:
    ok = copy_typed(tensor.int32_data(), count, static_cast<int32_t *>(dst));
    break;
  case TIDALRT_ELEMENT_TYPE_I16:
    ok = copy_typed(tensor.int32_data(), count, static_cast<int16_t *>(dst));
    break;
  case TIDALRT_ELEMENT_TYPE_U16:
  case TIDALRT_ELEMENT_TYPE_F16:
  case TIDALRT_ELEMENT_TYPE_BF16:
    // 16-bit floats are stored as their bit patterns.
    ok = copy_typed(tensor.int32_data(), count, static_cast<uint16_t *>(dst));
    break;
  case TIDALRT_ELEMENT_TYPE_I8:
    ok = copy_typed(tensor.int32_data(), count, static_cast<int8_t *>(dst));
    break;
  case TIDALRT_ELEMENT_TYPE_U8:
  case TIDALRT_ELEMENT_TYPE_BOOL:
    ok = copy_typed(tensor.int32_data(), count, static_cast<uint8_t *>(dst));
    break;
  default:
    break;
  }
  if (!ok)
    p->fail("initializer '" + slot.name + "' (" + describe_slot(slot) +
            ") does not hold " + std::to_string(count) + " values");
  return true;
}

void onnx_model::release_data(const std::vector<std::string> &names) {
  for (const std::string &name : names) {
    auto it = p->initializers.find(name);
    if (it == p->initializers.end())
      continue;
    // The map holds const pointers into p->proto, which this object owns.
    auto *tensor = const_cast<onnx::TensorProto *>(it->second);
    // A fresh tensor with the same header: the move frees the old values'
    // buffers (Clear() would keep their capacity).
    onnx::TensorProto header;
    header.set_name(tensor->name());
    header.set_doc_string(tensor->doc_string());
    header.set_data_type(tensor->data_type());
    *header.mutable_dims() = tensor->dims();
    *tensor = std::move(header);
  }
}

std::optional<std::string> onnx_model::metadata(const std::string &key) const {
  for (const auto &prop : p->proto.metadata_props())
    if (prop.key() == key)
      return prop.value();
  return std::nullopt;
}

std::optional<uint64_t> onnx_model::steps_done() const {
  for (const auto &prop : p->proto.metadata_props()) {
    if (prop.key() != steps_done_key)
      continue;
    const std::string &value = prop.value();
    if (value.empty() || value.size() > 19 ||
        value.find_first_not_of("0123456789") != std::string::npos)
      p->fail(std::string("metadata ") + steps_done_key + " '" + value +
              "' is not a step count");
    return std::stoull(value);
  }
  return std::nullopt;
}

void onnx_model::save(
    const std::vector<std::pair<const tensor_slot *, const void *>> &values,
    uint64_t steps_done, const std::string &path, bool external_data,
    const std::vector<std::pair<std::string, std::string>> &metadata) const {
  onnx::ModelProto model = p->proto;
  std::unordered_map<std::string, onnx::TensorProto *> index;
  for_each_initializer(model, [&](onnx::TensorProto &tensor) {
    index.emplace(tensor.name(), &tensor);
  });
  for (const auto &value : values) {
    const tensor_slot &slot = *value.first;
    onnx::TensorProto *tensor;
    auto it = index.find(slot.name);
    if (it != index.end()) {
      tensor = it->second;
      std::string doc = tensor->doc_string();
      tensor->Clear();
      tensor->set_doc_string(doc);
    } else {
      tensor = model.mutable_graph()->add_initializer();
      index.emplace(slot.name, tensor);
      // Before IR version 4 every initializer had to be a graph input.
      if (model.ir_version() < 4) {
        onnx::ValueInfoProto *input = model.mutable_graph()->add_input();
        input->set_name(slot.name);
        auto *type = input->mutable_type()->mutable_tensor_type();
        type->set_elem_type(static_cast<int>(slot.type));
        auto *shape = type->mutable_shape();
        for (int64_t dim : slot.shape)
          shape->add_dim()->set_dim_value(dim);
      }
    }
    tensor->set_name(slot.name);
    tensor->set_data_type(static_cast<int>(slot.type));
    for (int64_t dim : slot.shape)
      tensor->add_dims(dim);
    tensor->set_raw_data(value.second, slot.bytes);
  }
  // Initializers left external (not trained) are read in: the output's
  // external data is a file of its own.
  for_each_initializer(model, [&](onnx::TensorProto &tensor) {
    if (!is_external(tensor))
      return;
    size_t count = 1;
    for (int64_t dim : tensor.dims())
      count *= static_cast<size_t>(dim);
    int type = tensor.data_type();
    size_t width = type > 0 && type < 64
                       ? tidalrt_element_type_size(
                             static_cast<tidalrt_element_type_t>(type))
                       : 0;
    if (!width)
      p->fail("initializer '" + tensor.name() + "' is " +
              describe_tensor(tensor) +
              ", whose external data tidal cannot copy");
    std::string bytes(count * width, '\0');
    p->read_external(tensor, bytes.data(), bytes.size());
    tensor.clear_external_data();
    tensor.clear_data_location();
    tensor.set_raw_data(std::move(bytes));
  });
  auto set_metadata = [&](const std::string &key, const std::string &value) {
    onnx::StringStringEntryProto *entry = nullptr;
    for (auto &prop : *model.mutable_metadata_props())
      if (prop.key() == key)
        entry = &prop;
    if (!entry) {
      entry = model.add_metadata_props();
      entry->set_key(key);
    }
    entry->set_value(value);
  };
  set_metadata(steps_done_key, std::to_string(steps_done));
  for (const auto &[key, value] : metadata)
    set_metadata(key, value);
  // Past protobuf's limit (with room for the graph), or asked for.
  const size_t inline_limit = static_cast<size_t>(INT32_MAX) - (64u << 20);
  if (external_data || p->has_external || model.ByteSizeLong() > inline_limit) {
    size_t slash = path.rfind('/');
    std::string location =
        (slash == std::string::npos ? path : path.substr(slash + 1)) + ".data";
    std::string data;
    for_each_initializer(model, [&](onnx::TensorProto &tensor) {
      if (!tensor.has_raw_data() || tensor.raw_data().size() < 1024)
        return;
      size_t offset = (data.size() + 63) / 64 * 64; // aligned, as onnx does
      data.resize(offset);
      data += tensor.raw_data();
      tensor.clear_raw_data();
      tensor.set_data_location(onnx::TensorProto::EXTERNAL);
      auto add = [&](const char *key, const std::string &value) {
        auto *kv = tensor.add_external_data();
        kv->set_key(key);
        kv->set_value(value);
      };
      add("location", location);
      add("offset", std::to_string(offset));
      add("length", std::to_string(data.size() - offset));
    });
    write_file_atomically(directory_of(path) + "/" + location, data);
  }
  if (model.ByteSizeLong() > static_cast<size_t>(INT32_MAX))
    fail_input(path + ": cannot write: the model exceeds protobuf's 2 GiB "
                      "limit even with its initializers as external data");
  // Serialized straight into the file: no second copy of the weights.
  write_file_atomically(path, [&](int fd) {
    google::protobuf::io::FileOutputStream out(fd);
    bool ok = model.SerializeToZeroCopyStream(&out) && out.Flush();
    return ok ? 0 : (out.GetErrno() ? out.GetErrno() : EIO);
  });
}

} // namespace tidalrt_driver
