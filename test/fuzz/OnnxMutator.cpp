//===- OnnxMutator.cpp - structure-aware mutations of ONNX models ---------===//
//
// libFuzzer's LLVMFuzzerCustomMutator for the harnesses whose input is a
// ModelProto (importer, checkpoint); linked into their libFuzzer builds
// only. Three times in four an input that parses gets one structural
// change (an op type, a node's input or output count, an attribute's type
// or values, a tensor's dims, dtype or data size, a graph input's type or
// shape, an opset version, a checkpoint's step count or external data) and
// is reserialized, so that mutants stay valid protobuf and reach the
// importer's checks; otherwise libFuzzer's byte-level mutation applies.
//
//===----------------------------------------------------------------------===//

#include <onnx/onnx_pb.h>

#include <cstdint>
#include <cstring>
#include <random>
#include <string>

extern "C" size_t LLVMFuzzerMutate(uint8_t *data, size_t size, size_t maxSize);

namespace {

using Rng = std::minstd_rand;

const char *const kOps[] = {"Add",
                            "Conv",
                            "Gemm",
                            "MatMul",
                            "Relu",
                            "Reshape",
                            "Concat",
                            "Slice",
                            "Gather",
                            "Transpose",
                            "Softmax",
                            "MaxPool",
                            "Constant",
                            "Shape",
                            "Unsqueeze",
                            "Squeeze",
                            "Expand",
                            "Flatten",
                            "Pad",
                            "Resize",
                            "Einsum",
                            "LSTM",
                            "Split",
                            "ReduceSum",
                            "Where",
                            "Cast",
                            "LayerNorm",
                            "Dropout",
                            "Identity",
                            "ConvTranspose",
                            "Tile",
                            "ScatterND",
                            "GatherND",
                            "TopK",
                            "BatchNormalization",
                            "Range",
                            "ConstantOfShape",
                            "Gradient",
                            "Momentum",
                            "Adam"};

int64_t pick(Rng &rng, int64_t n) {
  return n <= 0 ? 0 : std::uniform_int_distribution<int64_t>(0, n - 1)(rng);
}

/// An integer that tends to break size arithmetic.
int64_t oddInt(Rng &rng) {
  static const int64_t values[] = {-2,
                                   -1,
                                   0,
                                   1,
                                   2,
                                   3,
                                   7,
                                   64,
                                   1 << 20,
                                   INT32_MAX,
                                   int64_t(1) << 40,
                                   INT64_MAX,
                                   INT64_MIN};
  return pick(rng, 4) ? values[pick(rng, std::size(values))]
                      : int64_t(rng()) - int64_t(rng());
}

std::string someName(Rng &rng, const onnx::GraphProto &g) {
  if (g.node_size() && pick(rng, 3)) {
    const onnx::NodeProto &n = g.node(pick(rng, g.node_size()));
    if (n.output_size())
      return n.output(pick(rng, n.output_size()));
  }
  if (g.input_size() && pick(rng, 2))
    return g.input(pick(rng, g.input_size())).name();
  return pick(rng, 2) ? "" : "fuzz" + std::to_string(pick(rng, 4));
}

void mutateTensor(Rng &rng, onnx::TensorProto &t) {
  switch (pick(rng, 7)) {
  case 0:
    if (t.dims_size() && pick(rng, 2))
      t.set_dims(pick(rng, t.dims_size()), oddInt(rng));
    else
      t.add_dims(pick(rng, 4));
    break;
  case 1:
    t.clear_dims();
    break;
  case 2:
    t.set_data_type(static_cast<int32_t>(pick(rng, 22)));
    break;
  case 3:
    t.mutable_raw_data()->resize(pick(rng, t.raw_data().size() + 9));
    break;
  case 4:
    t.add_float_data(1.5f);
    t.add_int64_data(oddInt(rng));
    t.add_int32_data(static_cast<int32_t>(oddInt(rng)));
    break;
  case 5: {
    t.set_data_location(onnx::TensorProto::EXTERNAL);
    auto *kv = t.add_external_data();
    static const char *const keys[] = {"location", "offset", "length"};
    static const char *const values[] = {
        "weights.bin", "tidal:embedded", "model.onnx",           "../x",
        "16",          "4096",           "18446744073709551615", "-1"};
    kv->set_key(keys[pick(rng, 3)]);
    kv->set_value(values[pick(rng, std::size(values))]);
    break;
  }
  default:
    t.set_name(pick(rng, 2) ? "" : t.name() + "_");
    break;
  }
}

void mutateAttribute(Rng &rng, onnx::AttributeProto &a) {
  switch (pick(rng, 5)) {
  case 0:
    a.set_type(static_cast<onnx::AttributeProto::AttributeType>(pick(rng, 15)));
    break;
  case 1:
    a.set_i(oddInt(rng));
    break;
  case 2:
    if (a.ints_size() && pick(rng, 2))
      a.set_ints(pick(rng, a.ints_size()), oddInt(rng));
    else
      a.add_ints(oddInt(rng));
    break;
  case 3:
    if (a.has_t())
      mutateTensor(rng, *a.mutable_t());
    else
      a.clear_ints(), a.set_f(-1e30f), a.set_s("fuzz");
    break;
  default:
    a.set_name(pick(rng, 2) ? "axis" : "perm");
    break;
  }
}

void mutateNode(Rng &rng, onnx::GraphProto &g, onnx::NodeProto &n) {
  switch (pick(rng, 7)) {
  case 0:
    n.set_op_type(kOps[pick(rng, std::size(kOps))]);
    break;
  case 1:
    if (n.input_size() && pick(rng, 2))
      n.mutable_input()->RemoveLast();
    else
      n.add_input(someName(rng, g));
    break;
  case 2:
    if (n.output_size() && pick(rng, 2))
      n.mutable_output()->RemoveLast();
    else
      n.add_output(pick(rng, 2) ? "" : "fuzz_out");
    break;
  case 3:
    if (n.input_size())
      n.set_input(pick(rng, n.input_size()), someName(rng, g));
    break;
  case 4:
    if (n.attribute_size())
      mutateAttribute(rng, *n.mutable_attribute(pick(rng, n.attribute_size())));
    break;
  case 5: {
    onnx::AttributeProto *a = n.add_attribute();
    static const char *const names[] = {"axis", "perm",  "kernel_shape", "pads",
                                        "to",   "value", "mode"};
    a->set_name(names[pick(rng, std::size(names))]);
    a->set_type(onnx::AttributeProto::INTS);
    a->add_ints(oddInt(rng));
    break;
  }
  default:
    n.clear_attribute();
    break;
  }
}

void mutateValueInfo(Rng &rng, onnx::ValueInfoProto &v) {
  auto *tt = v.mutable_type()->mutable_tensor_type();
  auto *shape = tt->mutable_shape();
  switch (pick(rng, 4)) {
  case 0:
    tt->set_elem_type(static_cast<int32_t>(pick(rng, 22)));
    break;
  case 1:
    if (shape->dim_size() && pick(rng, 2))
      shape->mutable_dim(pick(rng, shape->dim_size()))
          ->set_dim_value(oddInt(rng));
    else
      shape->add_dim()->set_dim_param(pick(rng, 2) ? "N" : "batch");
    break;
  case 2:
    tt->clear_shape();
    break;
  default:
    v.clear_type();
    break;
  }
}

void mutateGraph(Rng &rng, onnx::GraphProto &g) {
  switch (pick(rng, 8)) {
  case 0:
  case 1:
  case 2:
    if (g.node_size())
      mutateNode(rng, g, *g.mutable_node(pick(rng, g.node_size())));
    break;
  case 3:
    if (g.initializer_size())
      mutateTensor(rng,
                   *g.mutable_initializer(pick(rng, g.initializer_size())));
    break;
  case 4:
    if (g.input_size())
      mutateValueInfo(rng, *g.mutable_input(pick(rng, g.input_size())));
    break;
  case 5:
    if (g.output_size() && pick(rng, 2))
      mutateValueInfo(rng, *g.mutable_output(pick(rng, g.output_size())));
    else if (g.output_size())
      g.mutable_output()->RemoveLast();
    break;
  case 6:
    if (g.node_size() > 1)
      g.mutable_node()->SwapElements(pick(rng, g.node_size()),
                                     pick(rng, g.node_size()));
    break;
  default:
    if (g.node_size())
      *g.add_node() = g.node(pick(rng, g.node_size()));
    break;
  }
}

void mutateModel(Rng &rng, onnx::ModelProto &m) {
  switch (pick(rng, 10)) {
  case 0:
    if (m.opset_import_size())
      m.mutable_opset_import(pick(rng, m.opset_import_size()))
          ->set_version(pick(rng, 26));
    break;
  case 1: {
    onnx::StringStringEntryProto *p = m.add_metadata_props();
    p->set_key("tidal.steps_done");
    p->set_value(pick(rng, 2) ? std::to_string(rng()) : "12x");
    break;
  }
  case 2:
    if (m.training_info_size()) {
      onnx::TrainingInfoProto &t =
          *m.mutable_training_info(pick(rng, m.training_info_size()));
      if (t.has_algorithm())
        mutateGraph(rng, *t.mutable_algorithm());
      break;
    }
    [[fallthrough]];
  default:
    mutateGraph(rng, *m.mutable_graph());
    break;
  }
}

} // namespace

extern "C" size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size,
                                          size_t maxSize, unsigned seed) {
  Rng rng(seed);
  onnx::ModelProto model;
  if (!pick(rng, 4) || !model.ParseFromArray(data, static_cast<int>(size)))
    return LLVMFuzzerMutate(data, size, maxSize);
  mutateModel(rng, model);
  std::string bytes;
  if (!model.SerializeToString(&bytes) || bytes.size() > maxSize)
    return LLVMFuzzerMutate(data, size, maxSize);
  std::memcpy(data, bytes.data(), bytes.size());
  return bytes.size();
}
