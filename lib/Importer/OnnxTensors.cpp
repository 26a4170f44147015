//===- OnnxTensors.cpp - ONNX tensor data to MLIR attributes --------------===//

#include "ImporterImpl.h"

#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/APFloat.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <cmath>
#include <limits>
#include <optional>

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

namespace {
/// Where an external tensor's bytes lie: checked to be inside a readable
/// file below the model's directory.
struct ExternalSpan {
  llvm::SmallString<256> path;
  uint64_t offset = 0, length = 0;
};
} // namespace

static bool externalSpan(const onnx::TensorProto &t, llvm::StringRef baseDir,
                         ExternalSpan &span, std::string &error) {
  std::string location;
  bool hasLength = false;
  for (const auto &kv : t.external_data()) {
    if (kv.key() == "location")
      location = kv.value();
    else if (kv.key() == "offset")
      span.offset = std::strtoull(kv.value().c_str(), nullptr, 10);
    else if (kv.key() == "length") {
      span.length = std::strtoull(kv.value().c_str(), nullptr, 10);
      hasLength = true;
    }
  }
  if (location.empty() || llvm::sys::path::is_absolute(location) ||
      llvm::StringRef(location).contains("..")) {
    error = "tensor '" + t.name() + "' has an invalid external data location";
    return false;
  }
  span.path = baseDir;
  llvm::sys::path::append(span.path, location);
  // Opened, not only looked up, so that an unreadable file or a directory
  // fails here as it would when read.
  auto cannotRead = [&](std::error_code ec) {
    error = "tensor '" + t.name() + "': cannot read external data '" +
            std::string(span.path) + "': " + ec.message();
    return false;
  };
  auto file = llvm::sys::fs::openNativeFileForRead(span.path);
  if (!file)
    return cannotRead(llvm::errorToErrorCode(file.takeError()));
  llvm::sys::fs::file_status status;
  std::error_code ec = llvm::sys::fs::status(*file, status);
  llvm::sys::fs::closeFile(*file);
  if (!ec && llvm::sys::fs::is_directory(status))
    ec = std::make_error_code(std::errc::is_a_directory);
  if (ec)
    return cannotRead(ec);
  uint64_t size = status.getSize();
  if (!hasLength)
    span.length = size > span.offset ? size - span.offset : 0;
  if (span.offset > size || span.length > size - span.offset) {
    error = "tensor '" + t.name() + "': external data '" + location +
            "' is shorter than offset + length";
    return false;
  }
  return true;
}

/// The bytes of a checked span.
static bool readSpan(const onnx::TensorProto &t, const ExternalSpan &span,
                     std::string &bytes, std::string &error) {
  if (span.length == 0) {
    bytes.clear();
    return true;
  }
  auto buf = llvm::MemoryBuffer::getFileSlice(
      span.path, span.length, span.offset, /*IsVolatile=*/false);
  if (!buf) {
    error = "tensor '" + t.name() + "': cannot read external data '" +
            std::string(span.path) + "': " + buf.getError().message();
    return false;
  }
  bytes.assign((*buf)->getBufferStart(), (*buf)->getBufferSize());
  return true;
}

bool importer::readExternal(const onnx::TensorProto &t, llvm::StringRef baseDir,
                            std::string &bytes, std::string &error) {
  ExternalSpan span;
  return externalSpan(t, baseDir, span, error) &&
         readSpan(t, span, bytes, error);
}

/// How many values the typed field that holds `t`'s data type has.
static int64_t typedFieldSize(const onnx::TensorProto &t) {
  using TP = onnx::TensorProto;
  switch (t.data_type()) {
  case TP::FLOAT:
    return t.float_data_size();
  case TP::DOUBLE:
    return t.double_data_size();
  case TP::INT64:
    return t.int64_data_size();
  case TP::UINT32:
  case TP::UINT64:
    return t.uint64_data_size();
  default: // bool, float16, bfloat16, int8/16/32, uint8/16: int32_data
    return t.int32_data_size();
  }
}

/// checkTensor, with where external data lies in `span`.
static RankedTensorType checkTensorSpan(MLIRContext *ctx,
                                        const onnx::TensorProto &t,
                                        llvm::StringRef baseDir,
                                        ExternalSpan &span,
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

  // Raw little-endian bytes, inline or external: bools one byte each.
  std::optional<uint64_t> rawBytes;
  if (t.data_location() == TP::EXTERNAL) {
    if (!externalSpan(t, baseDir, span, error))
      return {};
    rawBytes = span.length;
  } else if (t.has_raw_data()) {
    rawBytes = t.raw_data().size();
  }
  if (rawBytes) {
    int64_t need =
        elt.isInteger(1) ? count : count * (elt.getIntOrFloatBitWidth() / 8);
    if (*rawBytes != uint64_t(need)) {
      error = "tensor '" + t.name() + "' holds " + std::to_string(*rawBytes) +
              " bytes, its shape needs " + std::to_string(need);
      return {};
    }
    return type;
  }
  if (int64_t have = typedFieldSize(t); have != count) {
    error = "tensor '" + t.name() + "' holds " + std::to_string(have) +
            " values, its shape needs " + std::to_string(count);
    return {};
  }
  return type;
}

RankedTensorType importer::checkTensor(MLIRContext *ctx,
                                       const onnx::TensorProto &t,
                                       llvm::StringRef baseDir,
                                       std::string &error) {
  ExternalSpan span;
  return checkTensorSpan(ctx, t, baseDir, span, error);
}

DenseElementsAttr importer::decodeTensor(MLIRContext *ctx,
                                         const onnx::TensorProto &t,
                                         llvm::StringRef baseDir,
                                         std::string &error) {
  using TP = onnx::TensorProto;
  // The sizes below hold once checked.
  ExternalSpan span;
  RankedTensorType type = checkTensorSpan(ctx, t, baseDir, span, error);
  if (!type)
    return {};
  Type elt = type.getElementType();
  const int64_t count = type.getNumElements();

  // Raw little-endian bytes, inline or external.
  std::string external;
  const std::string *raw = nullptr;
  if (t.data_location() == TP::EXTERNAL) {
    if (!readSpan(t, span, external, error))
      return {};
    raw = &external;
  } else if (t.has_raw_data()) {
    raw = &t.raw_data();
  }
  unsigned bits = elt.getIntOrFloatBitWidth();
  if (raw) {
    if (elt.isInteger(1)) {
      llvm::SmallVector<bool> v(raw->begin(), raw->end());
      return DenseElementsAttr::get(type, llvm::ArrayRef<bool>(v));
    }
    return DenseElementsAttr::getFromRawBuffer(
        type, llvm::ArrayRef<char>(raw->data(), raw->size()));
  }

  // Typed fields.
  switch (t.data_type()) {
  case TP::FLOAT:
    return DenseElementsAttr::get(
        type, llvm::ArrayRef<float>(t.float_data().data(), count));
  case TP::DOUBLE:
    return DenseElementsAttr::get(
        type, llvm::ArrayRef<double>(t.double_data().data(), count));
  case TP::INT64:
    return DenseElementsAttr::get(
        type, llvm::ArrayRef<int64_t>(t.int64_data().data(), count));
  case TP::UINT32:
  case TP::UINT64: {
    llvm::SmallVector<llvm::APInt> v;
    for (uint64_t x : t.uint64_data())
      v.push_back(llvm::APInt(bits, x));
    return DenseElementsAttr::get(type, v);
  }
  case TP::BOOL: {
    llvm::SmallVector<bool> v;
    for (int32_t x : t.int32_data())
      v.push_back(x != 0);
    return DenseElementsAttr::get(type, llvm::ArrayRef<bool>(v));
  }
  case TP::FLOAT16:
  case TP::BFLOAT16: {
    llvm::SmallVector<llvm::APFloat> v;
    const llvm::fltSemantics &sem = cast<FloatType>(elt).getFloatSemantics();
    for (int32_t x : t.int32_data())
      v.push_back(llvm::APFloat(sem, llvm::APInt(16, uint16_t(x))));
    return DenseElementsAttr::get(type, v);
  }
  default: { // int8/16/32, uint8/16 live in int32_data
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
