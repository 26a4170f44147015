// manifest.cpp - parsing and validating the program manifest (JSON).
#include "manifest.h"

#include "error.h"

#include <nlohmann/json.hpp>

#include <set>

namespace tidalrt_driver {

using json = nlohmann::ordered_json;

size_t tensor_slot::element_count() const {
  size_t count = 1;
  for (int64_t dim : shape)
    count *= static_cast<size_t>(dim);
  return count;
}

tensor_slot tensor_slot::full() const {
  tensor_slot whole = *this;
  whole.shape = full_shape;
  whole.full_shape.clear();
  whole.offset = 0;
  whole.host = false;
  whole.bytes = whole.element_count() * tidalrt_element_type_size(type);
  return whole;
}

bool tensor_slot::is_persistent() const {
  return role == "param" || role == "state" || role == "constant" ||
         role == "optimizer_state";
}

const tensor_slot *function_info::find_arg(const std::string &name) const {
  for (const tensor_slot &slot : args)
    if (slot.name == name)
      return &slot;
  return nullptr;
}

std::vector<const tensor_slot *> function_info::data_inputs() const {
  std::vector<const tensor_slot *> inputs;
  for (const tensor_slot &slot : args)
    if (slot.role == "input")
      inputs.push_back(&slot);
  return inputs;
}

const tensor_slot *function_info::loss_result() const {
  for (const tensor_slot &slot : results)
    if (slot.role == "loss")
      return &slot;
  return nullptr;
}

const blob_range *manifest::find_embedded(const std::string &name) const {
  for (const blob_range &range : embedded)
    if (range.name == name)
      return &range;
  return nullptr;
}

tidalrt_element_type_t element_type_from_name(const std::string &name) {
  static const tidalrt_element_type_t types[] = {
      TIDALRT_ELEMENT_TYPE_F32,  TIDALRT_ELEMENT_TYPE_U8,
      TIDALRT_ELEMENT_TYPE_I8,   TIDALRT_ELEMENT_TYPE_U16,
      TIDALRT_ELEMENT_TYPE_I16,  TIDALRT_ELEMENT_TYPE_I32,
      TIDALRT_ELEMENT_TYPE_I64,  TIDALRT_ELEMENT_TYPE_BOOL,
      TIDALRT_ELEMENT_TYPE_F16,  TIDALRT_ELEMENT_TYPE_F64,
      TIDALRT_ELEMENT_TYPE_U32,  TIDALRT_ELEMENT_TYPE_U64,
      TIDALRT_ELEMENT_TYPE_BF16,
  };
  for (tidalrt_element_type_t type : types)
    if (name == tidalrt_element_type_name(type))
      return type;
  return TIDALRT_ELEMENT_TYPE_INVALID;
}

std::string describe_slot(const tensor_slot &slot, bool sample_dim) {
  std::string text = tidalrt_element_type_name(slot.type);
  text += " [";
  for (size_t i = 0; i < slot.shape.size(); ++i) {
    if (i)
      text += ", ";
    text += (i == 0 && sample_dim) ? "N" : std::to_string(slot.shape[i]);
  }
  return text + "]";
}

namespace {

[[noreturn]] void bad(const std::string &message) {
  fail_runtime("malformed program manifest: " + message);
}

const json &member(const json &object, const char *key,
                   const std::string &where) {
  auto it = object.find(key);
  if (it == object.end())
    bad(where + " has no \"" + key + "\"");
  return *it;
}

std::string get_string(const json &object, const char *key,
                       const std::string &where) {
  const json &value = member(object, key, where);
  if (!value.is_string())
    bad(where + "." + key + " is not a string");
  return value.get<std::string>();
}

uint64_t get_uint(const json &object, const char *key,
                  const std::string &where) {
  const json &value = member(object, key, where);
  if (!value.is_number_unsigned())
    bad(where + "." + key + " is not a non-negative integer");
  return value.get<uint64_t>();
}

blob_range parse_range(const json &object, const std::string &where,
                       uint64_t blob_size) {
  if (!object.is_object())
    bad(where + " is not an object");
  blob_range range;
  range.offset = get_uint(object, "offset", where);
  range.size = get_uint(object, "size", where);
  if (range.offset > blob_size || range.size > blob_size - range.offset)
    bad(where + " lies outside the " + std::to_string(blob_size) +
        "-byte program blob");
  return range;
}

const std::set<std::string> &known_roles() {
  static const std::set<std::string> roles = {
      "input",           "param", "state",    "constant",
      "optimizer_state", "loss",  "gradient", "output"};
  return roles;
}

// A slot of `function` (described as `function_where`, its sizes and device
// fields already parsed) of a program whose target has a device (sim, cuda)
// or not (cpu).
tensor_slot parse_slot(const json &object, const std::string &where,
                       const function_info &function,
                       const std::string &function_where, bool device_target) {
  if (!object.is_object())
    bad(where + " is not an object");
  tensor_slot slot;
  slot.name = get_string(object, "name", where);
  std::string at = where + " ('" + slot.name + "')";
  slot.role = get_string(object, "role", at);
  if (!known_roles().count(slot.role))
    bad(at + " has unknown role '" + slot.role + "'");
  std::string dtype = get_string(object, "dtype", at);
  slot.type = element_type_from_name(dtype);
  if (slot.type == TIDALRT_ELEMENT_TYPE_INVALID)
    bad(at + " has unknown dtype '" + dtype + "'");
  const json &shape = member(object, "shape", at);
  if (!shape.is_array() || shape.size() > TIDALRT_MAX_RANK)
    bad(at + ".shape is not an array of at most 64 dimensions");
  for (const json &dim : shape) {
    if (!dim.is_number_unsigned() || dim.get<uint64_t>() > (1ull << 62))
      bad(at + ".shape holds a dimension that is not a non-negative integer");
    slot.shape.push_back(dim.get<int64_t>());
  }
  slot.offset = get_uint(object, "offset", at);
  slot.bytes = get_uint(object, "bytes", at);
  // Overflow-safe element count times element size.
  uint64_t expected = tidalrt_element_type_size(slot.type);
  for (int64_t dim : slot.shape)
    if (__builtin_mul_overflow(expected, static_cast<uint64_t>(dim),
                               &expected) ||
        expected > (1ull << 62))
      bad(at + " is too large");
  if (expected != slot.bytes)
    bad(at + " is " + describe_slot(slot) + " but says " +
        std::to_string(slot.bytes) + " bytes");
  if (object.contains("full_shape")) {
    const json &full = object["full_shape"];
    if (!full.is_array() || full.size() > TIDALRT_MAX_RANK ||
        slot.shape.size() != 1)
      bad(at + ".full_shape is not an array of at most 64 dimensions of a "
               "1-D chunk");
    uint64_t n = 1;
    for (const json &dim : full) {
      if (!dim.is_number_unsigned() || dim.get<uint64_t>() > (1ull << 62) ||
          __builtin_mul_overflow(n, dim.get<uint64_t>(), &n) ||
          n > (1ull << 62))
        bad(at + ".full_shape holds a dimension that is not a non-negative "
                 "integer, or is too large");
      slot.full_shape.push_back(dim.get<int64_t>());
    }
    if (n == 0 || slot.shape[0] == 0 ||
        static_cast<uint64_t>(slot.shape[0]) > n)
      bad(at + " is not a chunk of its full_shape");
  }
  if (object.contains("space")) {
    const json &space = object["space"];
    if (!space.is_string())
      bad(at + ".space is not a string");
    std::string name = space.get<std::string>();
    if (name == "host")
      slot.host = true;
    else if (name != "device")
      bad(at + " has unknown space '" + name +
          "' (neither 'device' nor 'host')");
  }
  // A host slot lies in the host arena that the runtime attaches with the
  // function's device: a function without one (a cpu program, or a device
  // target's predict function that runs on the host) has no host arena.
  if (slot.host && !device_target)
    bad(at + " is in the host arena (\"space\": \"host\"), which a cpu "
             "program does not have");
  if (slot.host && !function.device_bytes)
    bad(at + " is in the host arena (\"space\": \"host\"), but " +
        function_where +
        " has no \"device_bytes\": it runs on the host, "
        "without a host arena");
  uint64_t size = slot.host ? function.host_arena_bytes : function.arena_bytes;
  if (slot.offset > size || slot.bytes > size - slot.offset)
    bad(at + " lies outside the " + std::to_string(size) +
        (slot.host ? "-byte host arena" : "-byte arena"));
  return slot;
}

function_info parse_function(const json &object, const std::string &where,
                             int64_t batch_size, bool train,
                             bool device_target) {
  if (!object.is_object())
    bad(where + " is not an object");
  function_info function;
  function.arena_bytes = get_uint(object, "arena_bytes", where);
  if (object.contains("device_bytes"))
    function.device_bytes = get_uint(object, "device_bytes", where);
  if (object.contains("host_arena_bytes"))
    function.host_arena_bytes = get_uint(object, "host_arena_bytes", where);
  if (object.contains("num_copies"))
    function.num_copies = get_uint(object, "num_copies", where);
  if (function.device_bytes && *function.device_bytes < function.arena_bytes)
    bad(where + ".device_bytes " + std::to_string(*function.device_bytes) +
        " is below its arena_bytes " + std::to_string(function.arena_bytes));
  if (function.num_copies > (1ull << 24))
    bad(where + ".num_copies " + std::to_string(function.num_copies) +
        " is out of range");
  if (!function.device_bytes &&
      (function.host_arena_bytes || function.num_copies))
    bad(where + " has copies (host_arena_bytes, num_copies) but no "
                "device_bytes");
  const json &args = member(object, "args", where);
  const json &results = member(object, "results", where);
  if (!args.is_array() || !results.is_array())
    bad(where + ".args and .results must be arrays");
  std::set<std::string> names;
  for (size_t i = 0; i < args.size(); ++i) {
    tensor_slot slot =
        parse_slot(args[i], where + ".args[" + std::to_string(i) + "]",
                   function, where, device_target);
    if (!names.insert(slot.name).second)
      bad(where + " has two args named '" + slot.name + "'");
    // Forward programs may take inputs that are not batched (scalars, a
    // broadcast operand); they run once on files of exactly their shape.
    if (train && slot.role == "input" &&
        (slot.shape.empty() || slot.shape[0] != batch_size))
      bad(where + " input '" + slot.name + "' is " + describe_slot(slot) +
          ", whose dim 0 is not the batch size " + std::to_string(batch_size));
    function.args.push_back(std::move(slot));
  }
  for (size_t i = 0; i < results.size(); ++i) {
    tensor_slot slot =
        parse_slot(results[i], where + ".results[" + std::to_string(i) + "]",
                   function, where, device_target);
    if (const tensor_slot *arg = function.find_arg(slot.name)) {
      if (arg->is_persistent() &&
          (arg->type != slot.type || arg->shape != slot.shape))
        bad(where + " result '" + slot.name + "' is " + describe_slot(slot) +
            " but the argument of that name is " + describe_slot(*arg));
    }
    function.results.push_back(std::move(slot));
  }
  if (train) {
    const tensor_slot *loss = function.loss_result();
    if (!loss)
      bad(where + " has no result with role \"loss\"");
    if (loss->type != TIDALRT_ELEMENT_TYPE_F32 || loss->element_count() != 1)
      bad(where + " loss '" + loss->name + "' is " + describe_slot(*loss) +
          ", not a float32 scalar");
  }
  return function;
}

std::string describe_optimizer(const json &optimizer) {
  if (optimizer.is_null())
    return "none";
  if (!optimizer.is_object())
    bad("\"optimizer\" is not an object");
  std::string text;
  auto name = optimizer.find("name");
  text = name != optimizer.end() && name->is_string() ? name->get<std::string>()
                                                      : "unnamed";
  for (auto it = optimizer.begin(); it != optimizer.end(); ++it) {
    if (it.key() == "name")
      continue;
    // tidalc writes scalars only; dump() of a nested value recurses per
    // level (300,000 nested arrays overflowed the stack).
    if (it->is_structured())
      bad("optimizer." + it.key() + " is not a number, string or boolean");
    text += " " + it.key() + "=" +
            (it->is_string() ? it->get<std::string>() : it->dump());
  }
  return text;
}

} // namespace

manifest parse_manifest(const char *text, uint64_t blob_size) {
  if (!text)
    bad("no manifest");
  json root = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (root.is_discarded())
    bad("not valid JSON");
  if (!root.is_object())
    bad("not a JSON object");
  manifest result;
  const json &format = member(root, "format", "manifest");
  if (!format.is_number_integer() || format.get<int64_t>() != 1)
    bad("format " + format.dump() + " is not 1");
  result.format = 1;
  result.model = get_string(root, "model", "manifest");
  result.mode = get_string(root, "mode", "manifest");
  if (result.mode != "train" && result.mode != "forward")
    bad("mode '" + result.mode + "' is neither 'train' nor 'forward'");
  if (root.contains("target")) {
    result.target = get_string(root, "target", "manifest");
    if (result.target != "cpu" && result.target != "sim" &&
        result.target != "cuda")
      bad("target '" + result.target +
          "' is not one this runtime runs (cpu, sim, cuda)");
  }
  if (root.contains("loss")) {
    const json &loss = root["loss"];
    if (!loss.is_null()) {
      if (!loss.is_string())
        bad("manifest.loss is not a string");
      result.loss = loss.get<std::string>();
    }
  }
  uint64_t batch = get_uint(root, "batch_size", "manifest");
  if (batch < 1 || batch > (1ull << 40))
    bad("batch_size " + std::to_string(batch) + " is out of range");
  result.batch_size = static_cast<int64_t>(batch);
  if (root.contains("parallel_grain")) {
    uint64_t grain = get_uint(root, "parallel_grain", "manifest");
    if (grain < 1 || grain > (1ull << 40))
      bad("parallel_grain " + std::to_string(grain) + " is out of range");
    result.parallel_grain = static_cast<int64_t>(grain);
  }
  if (root.contains("distributed")) {
    const json &d = root["distributed"];
    if (!d.is_object())
      bad("manifest.distributed is not an object");
    result.distributed = get_string(d, "backend", "manifest.distributed");
    if (result.distributed != "mpi" && result.distributed != "nccl")
      bad("distributed backend '" + result.distributed +
          "' is not one this runtime runs (mpi, nccl)");
    uint64_t ranks = get_uint(d, "ranks", "manifest.distributed");
    if (ranks < 1 || ranks > 65536)
      bad("distributed.ranks " + std::to_string(ranks) + " is out of range");
    result.ranks = static_cast<int64_t>(ranks);
    if (get_uint(d, "global_batch_size", "manifest.distributed") !=
        batch * ranks)
      bad("distributed.global_batch_size is not batch_size * ranks");
  }
  uint64_t num_ops = get_uint(root, "num_ops", "manifest");
  // ops is resized to num_ops below: bound it (a real step has at most tens
  // of thousands of kernel calls; fuzzing found 2^64 - 1 aborting the
  // driver with std::length_error).
  if (num_ops > (1ull << 22))
    bad("num_ops " + std::to_string(num_ops) + " is out of range");
  if (root.contains("ops")) {
    const json &ops = root["ops"];
    if (!ops.is_array())
      bad("manifest.ops is not an array");
    for (size_t i = 0; i < ops.size(); ++i) {
      std::string where = "ops[" + std::to_string(i) + "]";
      if (!ops[i].is_object())
        bad(where + " is not an object");
      result.ops.push_back({get_string(ops[i], "name", where),
                            get_string(ops[i], "kind", where)});
    }
  }
  if (result.ops.size() > num_ops)
    bad("num_ops " + std::to_string(num_ops) + " is below the " +
        std::to_string(result.ops.size()) + " ops listed");
  result.ops.resize(num_ops);
  result.model_blob = parse_range(member(root, "model_blob", "manifest"),
                                  "model_blob", blob_size);
  result.model_blob.name = result.model;
  if (root.contains("embedded")) {
    const json &embedded = root["embedded"];
    if (!embedded.is_array())
      bad("manifest.embedded is not an array");
    for (size_t i = 0; i < embedded.size(); ++i) {
      std::string where = "embedded[" + std::to_string(i) + "]";
      blob_range range = parse_range(embedded[i], where, blob_size);
      range.name = get_string(embedded[i], "name", where);
      if (result.find_embedded(range.name))
        bad("two embedded data sets are named '" + range.name + "'");
      result.embedded.push_back(std::move(range));
    }
  }
  // By reference: copying a json value recurses per nesting level too.
  static const json no_optimizer;
  auto optimizer = root.find("optimizer");
  result.optimizer =
      describe_optimizer(optimizer != root.end() ? *optimizer : no_optimizer);
  const json &functions = member(root, "functions", "manifest");
  if (!functions.is_object())
    bad("manifest.functions is not an object");
  bool train = result.mode == "train";
  bool device_target = result.device_target();
  result.step =
      parse_function(member(functions, "step", "functions"), "functions.step",
                     result.batch_size, train, device_target);
  if (functions.contains("predict") && !functions["predict"].is_null())
    result.predict = parse_function(functions["predict"], "functions.predict",
                                    result.batch_size, false, device_target);
  // A device target's step runs on the device; its predict function runs
  // on a device of its own if it has a device_bytes, else on the host. A
  // cpu program has no device (a device_bytes is ignored), hence no host
  // arena: parse_slot has rejected host slots in it, and in a function
  // without a device_bytes.
  if (result.device_target() && !result.step.device_bytes)
    bad("functions.step of a " + result.target +
        " program has no \"device_bytes\"");
  if (!result.device_target()) {
    for (function_info *function :
         {&result.step, result.predict ? &*result.predict : nullptr}) {
      if (!function)
        continue;
      if (function->host_arena_bytes || function->num_copies)
        bad("a cpu program has copies (host_arena_bytes, num_copies)");
      function->device_bytes.reset(); // no device: the arena is host memory
    }
  }
  // A sharded slot is one rank's ceil(n / ranks) elements.
  for (const tensor_slot &slot : result.step.args)
    if (slot.sharded()) {
      uint64_t n = slot.full().element_count(), c = slot.element_count();
      uint64_t ranks = static_cast<uint64_t>(result.ranks);
      if (slot.role != "optimizer_state" || c * ranks < n ||
          (c - 1) * ranks >= n)
        bad("functions.step.args ('" + slot.name +
            "') is not a chunk of its full_shape over " +
            std::to_string(ranks) + " ranks");
    }
  return result;
}

} // namespace tidalrt_driver
