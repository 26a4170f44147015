//===- OnnxTensors.cpp - ONNX tensor data to MLIR attributes --------------===//

#include "ImporterImpl.h"

#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/APFloat.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace mlir::tidal;
using namespace mlir::tidal::importer;

Type importer::elementTypeFor(MLIRContext *ctx, int32_t t) {
  using TP = onnx::TensorProto;
  Builder b(ctx);
  switch (t) {
  case TP::FLOAT:
    return b.getF32Type();
  case TP::DOUBLE:
    return b.getF64Type();
  case TP::FLOAT16:
    return b.getF16Type();
  case TP::BFLOAT16:
    return b.getBF16Type();
  case TP::INT8:
    return b.getIntegerType(8);
  case TP::INT16:
    return b.getIntegerType(16);
  case TP::INT32:
    return b.getIntegerType(32);
  case TP::INT64:
    return b.getIntegerType(64);
  case TP::UINT8:
    return b.getIntegerType(8, /*isSigned=*/false);
  case TP::UINT16:
    return b.getIntegerType(16, false);
  case TP::UINT32:
    return b.getIntegerType(32, false);
  case TP::UINT64:
    return b.getIntegerType(64, false);
  case TP::BOOL:
    return b.getI1Type();
  default:
    return {};
  }
}

std::string importer::onnxTypeName(int32_t t) {
  if (onnx::TensorProto_DataType_IsValid(t))
    return llvm::StringRef(onnx::TensorProto_DataType_Name(t)).lower();
  return "type " + std::to_string(t);
}

bool importer::readExternal(const onnx::TensorProto &t, llvm::StringRef baseDir,
                            std::string &bytes, std::string &error) {
  std::string location;
  uint64_t offset = 0, length = 0;
  bool hasLength = false;
  for (const auto &kv : t.external_data()) {
    if (kv.key() == "location")
      location = kv.value();
    else if (kv.key() == "offset")
      offset = std::strtoull(kv.value().c_str(), nullptr, 10);
    else if (kv.key() == "length") {
      length = std::strtoull(kv.value().c_str(), nullptr, 10);
      hasLength = true;
    }
  }
  if (location.empty() || llvm::sys::path::is_absolute(location) ||
      llvm::StringRef(location).contains("..")) {
    error = "tensor '" + t.name() + "' has an invalid external data location";
    return false;
  }
  llvm::SmallString<256> path(baseDir);
  llvm::sys::path::append(path, location);
  auto buf = llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                         /*RequiresNullTerminator=*/false);
  if (!buf) {
    error = "tensor '" + t.name() + "': cannot read external data '" +
            std::string(path) + "': " + buf.getError().message();
    return false;
  }
  uint64_t size = (*buf)->getBufferSize();
  if (!hasLength)
    length = size > offset ? size - offset : 0;
  if (offset > size || length > size - offset) {
    error = "tensor '" + t.name() + "': external data '" + location +
            "' is shorter than offset + length";
    return false;
  }
  bytes.assign((*buf)->getBufferStart() + offset, length);
  return true;
}

DenseElementsAttr importer::decodeTensor(MLIRContext *ctx,
                                         const onnx::TensorProto &t,
                                         llvm::StringRef baseDir,
                                         std::string &error) {
  using TP = onnx::TensorProto;
  Type elt = elementTypeFor(ctx, t.data_type());
  if (!elt) {
    error = "tensor '" + t.name() + "' has unsupported data type " +
            onnxTypeName(t.data_type());
    return {};
  }
  llvm::SmallVector<int64_t> shape;
  int64_t count = 1;
  for (int64_t d : t.dims()) {
    if (d < 0 || (d > 0 && count > (int64_t(1) << 40) / d)) {
      error = "tensor '" + t.name() + "' has an invalid shape";
      return {};
    }
    shape.push_back(d);
    count *= d;
  }
  auto type = RankedTensorType::get(shape, elt);

  // Raw little-endian bytes, inline or external.
  std::string external;
  const std::string *raw = nullptr;
  if (t.data_location() == TP::EXTERNAL) {
    if (!readExternal(t, baseDir, external, error))
      return {};
    raw = &external;
  } else if (t.has_raw_data()) {
    raw = &t.raw_data();
  }
  unsigned bits = elt.getIntOrFloatBitWidth();
  if (raw) {
    if (elt.isInteger(1)) {
      if ((int64_t)raw->size() != count) {
        error = "tensor '" + t.name() + "' holds " +
                std::to_string(raw->size()) + " bytes, its shape needs " +
                std::to_string(count);
        return {};
      }
      llvm::SmallVector<bool> v(raw->begin(), raw->end());
      return DenseElementsAttr::get(type, llvm::ArrayRef<bool>(v));
    }
    int64_t need = count * (bits / 8);
    if ((int64_t)raw->size() != need) {
      error = "tensor '" + t.name() + "' holds " + std::to_string(raw->size()) +
              " bytes, its shape needs " + std::to_string(need);
      return {};
    }
    return DenseElementsAttr::getFromRawBuffer(
        type, llvm::ArrayRef<char>(raw->data(), raw->size()));
  }

  // Typed fields.
  auto sizeError = [&](int64_t have) {
    error = "tensor '" + t.name() + "' holds " + std::to_string(have) +
            " values, its shape needs " + std::to_string(count);
    return DenseElementsAttr();
  };
  switch (t.data_type()) {
  case TP::FLOAT: {
    if (t.float_data_size() != count)
      return sizeError(t.float_data_size());
    return DenseElementsAttr::get(
        type, llvm::ArrayRef<float>(t.float_data().data(), count));
  }
  case TP::DOUBLE: {
    if (t.double_data_size() != count)
      return sizeError(t.double_data_size());
    return DenseElementsAttr::get(
        type, llvm::ArrayRef<double>(t.double_data().data(), count));
  }
  case TP::INT64: {
    if (t.int64_data_size() != count)
      return sizeError(t.int64_data_size());
    return DenseElementsAttr::get(
        type, llvm::ArrayRef<int64_t>(t.int64_data().data(), count));
  }
  case TP::UINT32:
  case TP::UINT64: {
    if (t.uint64_data_size() != count)
      return sizeError(t.uint64_data_size());
    llvm::SmallVector<llvm::APInt> v;
    for (uint64_t x : t.uint64_data())
      v.push_back(llvm::APInt(bits, x));
    return DenseElementsAttr::get(type, v);
  }
  case TP::BOOL: {
    if (t.int32_data_size() != count)
      return sizeError(t.int32_data_size());
    llvm::SmallVector<bool> v;
    for (int32_t x : t.int32_data())
      v.push_back(x != 0);
    return DenseElementsAttr::get(type, llvm::ArrayRef<bool>(v));
  }
  case TP::FLOAT16:
  case TP::BFLOAT16: {
    if (t.int32_data_size() != count)
      return sizeError(t.int32_data_size());
    llvm::SmallVector<llvm::APFloat> v;
    const llvm::fltSemantics &sem = cast<FloatType>(elt).getFloatSemantics();
    for (int32_t x : t.int32_data())
      v.push_back(llvm::APFloat(sem, llvm::APInt(16, uint16_t(x))));
    return DenseElementsAttr::get(type, v);
  }
  default: { // int8/16/32, uint8/16 live in int32_data
    if (t.int32_data_size() != count)
      return sizeError(t.int32_data_size());
    llvm::SmallVector<llvm::APInt> v;
    for (int32_t x : t.int32_data())
      v.push_back(llvm::APInt(bits, uint64_t(int64_t(x)), /*isSigned=*/true));
    return DenseElementsAttr::get(type, v);
  }
  }
}

/// int64_t(d), saturated: NaN is 0 and values past the int64 range clamp to
/// it, where the cast itself is undefined (fuzzing: Pad's pads given as a
/// float tensor holding 5.9e28).
static int64_t saturatingInt(double d) {
  if (std::isnan(d))
    return 0;
  if (d >= 9223372036854775808.0) // 2^63
    return std::numeric_limits<int64_t>::max();
  if (d < -9223372036854775808.0)
    return std::numeric_limits<int64_t>::min();
  return int64_t(d);
}

llvm::SmallVector<int64_t> importer::intValues(DenseElementsAttr attr) {
  llvm::SmallVector<int64_t> out;
  Type elt = attr.getElementType();
  if (auto it = dyn_cast<IntegerType>(elt)) {
    for (const llvm::APInt &v : attr.getValues<llvm::APInt>())
      out.push_back(it.isUnsigned() || it.getWidth() == 1
                        ? int64_t(v.getZExtValue())
                        : v.getSExtValue());
  } else {
    for (const llvm::APFloat &v : attr.getValues<llvm::APFloat>())
      out.push_back(saturatingInt(v.convertToDouble()));
  }
  return out;
}

llvm::SmallVector<double> importer::floatValues(DenseElementsAttr attr) {
  llvm::SmallVector<double> out;
  if (isa<FloatType>(attr.getElementType())) {
    for (llvm::APFloat v : attr.getValues<llvm::APFloat>()) {
      bool lost;
      v.convert(llvm::APFloat::IEEEdouble(), llvm::APFloat::rmNearestTiesToEven,
                &lost);
      out.push_back(v.convertToDouble());
    }
    return out;
  }
  for (int64_t v : intValues(attr))
    out.push_back(double(v));
  return out;
}

DenseElementsAttr importer::makeConstant(RankedTensorType type,
                                         llvm::ArrayRef<int64_t> ints) {
  Type elt = type.getElementType();
  if (isa<FloatType>(elt)) {
    llvm::SmallVector<double> d(ints.begin(), ints.end());
    return makeConstant(type, d);
  }
  unsigned bits = elt.getIntOrFloatBitWidth();
  llvm::SmallVector<llvm::APInt> v;
  for (int64_t x : ints)
    v.push_back(llvm::APInt(bits, uint64_t(x), /*isSigned=*/true));
  return DenseElementsAttr::get(type, v);
}

DenseElementsAttr importer::makeConstant(RankedTensorType type,
                                         llvm::ArrayRef<double> values) {
  Type elt = type.getElementType();
  if (auto ft = dyn_cast<FloatType>(elt)) {
    llvm::SmallVector<llvm::APFloat> v;
    for (double x : values) {
      llvm::APFloat f(x);
      bool lost;
      f.convert(ft.getFloatSemantics(), llvm::APFloat::rmNearestTiesToEven,
                &lost);
      v.push_back(f);
    }
    return DenseElementsAttr::get(type, v);
  }
  llvm::SmallVector<int64_t> ints;
  for (double x : values)
    ints.push_back(int64_t(x));
  return makeConstant(type, ints);
}
