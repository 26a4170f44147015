//===- EmbedModel.cpp - a model's bytes, external data moved in -----------===//

#include "tidal/Importer/EmbedModel.h"

#include "ImporterImpl.h"

#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

using namespace mlir;
using namespace mlir::tidal;

namespace {

template <typename Visit>
bool forEachInitializer(onnx::ModelProto &model, Visit visit) {
  auto graph = [&](onnx::GraphProto &g) {
    for (auto &tensor : *g.mutable_initializer())
      if (!visit(tensor))
        return false;
    return true;
  };
  if (!graph(*model.mutable_graph()))
    return false;
  for (auto &info : *model.mutable_training_info()) {
    if (info.has_initialization() && !graph(*info.mutable_initialization()))
      return false;
    if (info.has_algorithm() && !graph(*info.mutable_algorithm()))
      return false;
  }
  return true;
}

} // namespace

bool tidal::readModelForEmbedding(llvm::StringRef path,
                                  std::vector<char> &model,
                                  std::vector<char> &external,
                                  std::string &error) {
  auto buf = llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                         /*RequiresNullTerminator=*/false);
  if (!buf) {
    error = "cannot read: " + buf.getError().message();
    return false;
  }
  llvm::StringRef bytes = (*buf)->getBuffer();
  model.assign(bytes.begin(), bytes.end());
  external.clear();
  onnx::ModelProto proto;
  // A model that does not parse was rejected by the importer already.
  if (bytes.size() > (size_t)INT32_MAX ||
      !proto.ParseFromArray(bytes.data(), (int)bytes.size()))
    return true;
  llvm::SmallString<256> baseDir(path);
  llvm::sys::path::remove_filename(baseDir);
  if (baseDir.empty())
    baseDir = ".";
  bool any = false;
  bool ok = forEachInitializer(proto, [&](onnx::TensorProto &t) {
    if (t.data_location() != onnx::TensorProto::EXTERNAL &&
        t.external_data_size() == 0)
      return true;
    std::string data;
    if (!importer::readExternal(t, baseDir, data, error))
      return false;
    size_t offset = (external.size() + 63) / 64 * 64;
    external.resize(offset);
    external.insert(external.end(), data.begin(), data.end());
    t.clear_external_data();
    auto add = [&](const char *key, const std::string &value) {
      auto *kv = t.add_external_data();
      kv->set_key(key);
      kv->set_value(value);
    };
    add("location", "tidal:embedded");
    add("offset", std::to_string(offset));
    add("length", std::to_string(data.size()));
    any = true;
    return true;
  });
  if (!ok)
    return false;
  if (any) {
    std::string rewritten;
    if (!proto.SerializeToString(&rewritten)) {
      error = "cannot serialize the model with its external data moved in";
      return false;
    }
    model.assign(rewritten.begin(), rewritten.end());
  }
  return true;
}
