//===- tidal-eval.cpp - run a tidal function on .npy files ----------------===//
//
//   tidal-eval FILE.mlir [--function NAME] [--arg NAME=FILE.npy]...
//              [--output-dir DIR] [--seed N] [--print]
//
// Binds every argument by its `tidal.name` (or `%N` by position), evaluates
// the function with the reference evaluator, and writes result_<i>.npy plus
// manifest.json. Errors are one line, `FILE: error: ...`, exit status 1.
//
//===----------------------------------------------------------------------===//

#include "tidal/Dialect/Tidal/IR/TidalOps.h"
#include "tidal/Evaluator/Evaluator.h"
#include "tidal/InitAll.h"

#include "tidalrt/tidalrt.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <cstring>
#include <map>
#include <optional>

using namespace mlir;
using namespace mlir::tidal;
using llvm::StringRef;
using llvm::Twine;

namespace {
llvm::cl::OptionCategory category("tidal-eval options");

llvm::cl::opt<std::string> inputPath(llvm::cl::Positional,
                                     llvm::cl::desc("<file.mlir>"),
                                     llvm::cl::Required,
                                     llvm::cl::cat(category));
llvm::cl::opt<std::string>
    functionName("function",
                 llvm::cl::desc("Function to run (default: train_step, "
                                "else main, else the only function)"),
                 llvm::cl::init(""), llvm::cl::cat(category));
llvm::cl::list<std::string>
    argBindings("arg",
                llvm::cl::desc("Bind an argument: NAME=FILE.npy by its "
                               "tidal.name, or %N=FILE.npy by position"),
                llvm::cl::value_desc("name=file.npy"), llvm::cl::cat(category));
llvm::cl::opt<std::string>
    outputDir("output-dir",
              llvm::cl::desc("Where to write result_<i>.npy and "
                             "manifest.json (default: the current "
                             "directory, or nothing with --print)"),
              llvm::cl::init(""), llvm::cl::cat(category));
llvm::cl::opt<uint64_t> seed("seed",
                             llvm::cl::desc("Seed of training-mode dropout"),
                             llvm::cl::init(0), llvm::cl::cat(category));
llvm::cl::opt<bool> printResults("print",
                                 llvm::cl::desc("Print the results as text"),
                                 llvm::cl::cat(category));

/// Reports an error about `file` the way every tidal-eval error is reported.
int fail(StringRef file, const Twine &msg) {
  llvm::errs() << file << ": error: " << msg << "\n";
  return 1;
}

std::string typeString(Type t) {
  std::string s;
  llvm::raw_string_ostream os(s);
  t.print(os);
  return s;
}

/// The line and column of `loc` when it carries one.
std::optional<FileLineColLoc> fileLoc(Location loc) {
  std::optional<FileLineColLoc> found;
  loc->walk([&](Location l) {
    if (auto f = dyn_cast<FileLineColLoc>(l)) {
      found = f;
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  return found;
}

/// An evaluation diagnostic as one line: the ONNX node when the location
/// names one, then the message, then the line of the op.
std::string formatEvalDiagnostic(Diagnostic &diag) {
  std::string text;
  Location loc = diag.getLocation();
  if (auto fused = dyn_cast<FusedLoc>(loc);
      fused && !fused.getLocations().empty())
    loc = fused.getLocations().front();
  if (auto name = dyn_cast<NameLoc>(loc))
    text = "node '" + name.getName().str() + "': ";
  text += diag.str();
  if (auto f = fileLoc(diag.getLocation()))
    text += " (line " + std::to_string(f->getLine()) + ")";
  return text;
}

//===----------------------------------------------------------------------===//
// .npy <-> Tensor
//===----------------------------------------------------------------------===//

std::optional<tidalrt_element_type_t> npyType(Type t) {
  if (t.isF32())
    return TIDALRT_ELEMENT_TYPE_F32;
  if (t.isF64())
    return TIDALRT_ELEMENT_TYPE_F64;
  if (t.isF16())
    return TIDALRT_ELEMENT_TYPE_F16;
  if (t.isInteger(1))
    return TIDALRT_ELEMENT_TYPE_BOOL;
  auto it = dyn_cast<IntegerType>(t);
  if (!it)
    return std::nullopt;
  bool u = it.isUnsigned();
  switch (it.getWidth()) {
  case 8:
    return u ? TIDALRT_ELEMENT_TYPE_U8 : TIDALRT_ELEMENT_TYPE_I8;
  case 16:
    return u ? TIDALRT_ELEMENT_TYPE_U16 : TIDALRT_ELEMENT_TYPE_I16;
  case 32:
    return u ? TIDALRT_ELEMENT_TYPE_U32 : TIDALRT_ELEMENT_TYPE_I32;
  case 64:
    return u ? TIDALRT_ELEMENT_TYPE_U64 : TIDALRT_ELEMENT_TYPE_I64;
  default:
    return std::nullopt;
  }
}

template <typename T> T load(const void *p, size_t i) {
  T v;
  std::memcpy(&v, static_cast<const char *>(p) + i * sizeof(T), sizeof(T));
  return v;
}

template <typename T> void store(void *p, size_t i, T v) {
  std::memcpy(static_cast<char *>(p) + i * sizeof(T), &v, sizeof(T));
}

double halfToDouble(uint16_t bits) {
  llvm::APFloat f(llvm::APFloat::IEEEhalf(), llvm::APInt(16, bits));
  return f.convertToFloat();
}

uint16_t doubleToHalf(double v) {
  llvm::APFloat f(v);
  bool lost = false;
  f.convert(llvm::APFloat::IEEEhalf(), llvm::APFloat::rmNearestTiesToEven,
            &lost);
  return static_cast<uint16_t>(f.bitcastToAPInt().getZExtValue());
}

double loadElement(tidalrt_element_type_t t, const void *p, size_t i) {
  switch (t) {
  case TIDALRT_ELEMENT_TYPE_F32:
    return load<float>(p, i);
  case TIDALRT_ELEMENT_TYPE_F64:
    return load<double>(p, i);
  case TIDALRT_ELEMENT_TYPE_F16:
    return halfToDouble(load<uint16_t>(p, i));
  case TIDALRT_ELEMENT_TYPE_BOOL:
    return load<uint8_t>(p, i) ? 1.0 : 0.0;
  case TIDALRT_ELEMENT_TYPE_I8:
    return load<int8_t>(p, i);
  case TIDALRT_ELEMENT_TYPE_U8:
    return load<uint8_t>(p, i);
  case TIDALRT_ELEMENT_TYPE_I16:
    return load<int16_t>(p, i);
  case TIDALRT_ELEMENT_TYPE_U16:
    return load<uint16_t>(p, i);
  case TIDALRT_ELEMENT_TYPE_I32:
    return load<int32_t>(p, i);
  case TIDALRT_ELEMENT_TYPE_U32:
    return load<uint32_t>(p, i);
  case TIDALRT_ELEMENT_TYPE_I64:
    return static_cast<double>(load<int64_t>(p, i));
  case TIDALRT_ELEMENT_TYPE_U64:
    return static_cast<double>(load<uint64_t>(p, i));
  default:
    return 0.0;
  }
}

void storeElement(tidalrt_element_type_t t, void *p, size_t i, double v) {
  switch (t) {
  case TIDALRT_ELEMENT_TYPE_F32:
    return store<float>(p, i, static_cast<float>(v));
  case TIDALRT_ELEMENT_TYPE_F64:
    return store<double>(p, i, v);
  case TIDALRT_ELEMENT_TYPE_F16:
    return store<uint16_t>(p, i, doubleToHalf(v));
  case TIDALRT_ELEMENT_TYPE_BOOL:
    return store<uint8_t>(p, i, v != 0.0);
  case TIDALRT_ELEMENT_TYPE_I8:
    return store<int8_t>(p, i, static_cast<int8_t>(v));
  case TIDALRT_ELEMENT_TYPE_U8:
    return store<uint8_t>(p, i, static_cast<uint8_t>(v));
  case TIDALRT_ELEMENT_TYPE_I16:
    return store<int16_t>(p, i, static_cast<int16_t>(v));
  case TIDALRT_ELEMENT_TYPE_U16:
    return store<uint16_t>(p, i, static_cast<uint16_t>(v));
  case TIDALRT_ELEMENT_TYPE_I32:
    return store<int32_t>(p, i, static_cast<int32_t>(v));
  case TIDALRT_ELEMENT_TYPE_U32:
    return store<uint32_t>(p, i, static_cast<uint32_t>(v));
  case TIDALRT_ELEMENT_TYPE_I64:
    return store<int64_t>(p, i, static_cast<int64_t>(v));
  case TIDALRT_ELEMENT_TYPE_U64:
    return store<uint64_t>(p, i, static_cast<uint64_t>(v));
  default:
    return;
  }
}

/// "float32 [2, 3]", as the error messages spell a tensor.
std::string describe(tidalrt_element_type_t t, ArrayRef<int64_t> shape) {
  std::string s = std::string(tidalrt_element_type_name(t)) + " [";
  llvm::raw_string_ostream os(s);
  llvm::interleaveComma(shape, os);
  os << "]";
  return s;
}

/// Takes the message of `status` without its "<path>: " prefix and frees it.
std::string takeMessage(tidalrt_status_t status, StringRef path) {
  std::string msg = tidalrt_status_message(status);
  tidalrt_status_free(status);
  StringRef m(msg);
  if (m.consume_front(path) && m.consume_front(": "))
    return m.str();
  return msg;
}

/// Reads `path` as argument `argName` of `type`. Reports errors itself.
std::optional<eval::Tensor> readArgument(StringRef path, StringRef argName,
                                         RankedTensorType type) {
  std::optional<tidalrt_element_type_t> want = npyType(type.getElementType());
  if (!want) {
    fail(inputPath, "argument '" + argName + "' has element type " +
                        typeString(type.getElementType()) +
                        ", which .npy files cannot hold");
    return std::nullopt;
  }
  tidalrt_array_t *array = nullptr;
  std::string p = path.str();
  if (tidalrt_status_t s = tidalrt_npy_read(p.c_str(), &array)) {
    fail(path, takeMessage(s, path));
    return std::nullopt;
  }
  tidalrt_element_type_t got = tidalrt_array_element_type(array);
  ArrayRef<int64_t> dims(tidalrt_array_dims(array), tidalrt_array_rank(array));
  if (got != *want || dims != type.getShape()) {
    fail(path, "argument '" + argName + "' expects " +
                   describe(*want, type.getShape()) + ", got " +
                   describe(got, dims));
    tidalrt_array_free(array);
    return std::nullopt;
  }
  eval::Tensor t;
  t.shape.assign(dims.begin(), dims.end());
  t.elementType = type.getElementType();
  size_t n = tidalrt_array_element_count(array);
  const void *data = tidalrt_array_const_data(array);
  t.data.resize(n);
  for (size_t i = 0; i < n; ++i)
    t.data[i] = loadElement(got, data, i);
  tidalrt_array_free(array);
  return t;
}

std::string writeResult(StringRef path, const eval::Tensor &t,
                        tidalrt_element_type_t type) {
  std::vector<char> bytes(t.data.size() * tidalrt_element_type_size(type));
  for (size_t i = 0; i < t.data.size(); ++i)
    storeElement(type, bytes.data(), i, t.data[i]);
  std::string p = path.str();
  if (tidalrt_status_t s = tidalrt_npy_write_data(
          p.c_str(), type, t.shape.size(), t.shape.data(),
          bytes.empty() ? nullptr : bytes.data()))
    return takeMessage(s, path);
  return "";
}

//===----------------------------------------------------------------------===//
// The function and its arguments
//===----------------------------------------------------------------------===//

std::optional<func::FuncOp> pickFunction(ModuleOp module) {
  SmallVector<func::FuncOp> funcs(module.getOps<func::FuncOp>());
  if (!functionName.empty()) {
    for (func::FuncOp f : funcs)
      if (f.getSymName() == functionName)
        return f;
    fail(inputPath, "no function named '" + functionName + "'");
    return std::nullopt;
  }
  for (StringRef name : {"train_step", "main"})
    for (func::FuncOp f : funcs)
      if (f.getSymName() == name)
        return f;
  if (funcs.size() == 1)
    return funcs.front();
  fail(inputPath, funcs.empty() ? "no function to evaluate"
                                : "no train_step or main function; pick one "
                                  "with --function");
  return std::nullopt;
}

/// How argument `i` is named on the command line and in messages.
std::string argName(func::FuncOp f, unsigned i) {
  if (auto name = f.getArgAttrOfType<StringAttr>(i, kNameAttr))
    return name.str();
  return "%" + std::to_string(i);
}

std::optional<SmallVector<eval::Tensor>> bindArguments(func::FuncOp f) {
  std::map<std::string, std::string> files;
  for (const std::string &binding : argBindings) {
    auto [key, file] = StringRef(binding).split('=');
    if (key.empty() || file.empty()) {
      fail(inputPath, "--arg '" + binding + "' is not NAME=FILE.npy");
      return std::nullopt;
    }
    if (!files.emplace(key.str(), file.str()).second) {
      fail(inputPath, "argument '" + key + "' is bound twice");
      return std::nullopt;
    }
  }
  SmallVector<std::string> names;
  for (unsigned i = 0; i < f.getNumArguments(); ++i)
    names.push_back(argName(f, i));
  for (auto &[key, file] : files) {
    unsigned index = 0;
    bool known = llvm::is_contained(names, key) ||
                 (StringRef(key).starts_with("%") &&
                  !StringRef(key).drop_front().getAsInteger(10, index) &&
                  index < f.getNumArguments());
    if (!known) {
      fail(inputPath,
           "--arg '" + key + "' names no argument of @" + f.getSymName());
      return std::nullopt;
    }
  }
  SmallVector<eval::Tensor> args;
  for (unsigned i = 0; i < f.getNumArguments(); ++i) {
    auto it = files.find(names[i]);
    if (it == files.end())
      it = files.find("%" + std::to_string(i));
    if (it == files.end()) {
      fail(inputPath, "argument '" + names[i] + "' of @" + f.getSymName() +
                          " is not bound (--arg " + names[i] + "=FILE.npy)");
      return std::nullopt;
    }
    auto type = dyn_cast<RankedTensorType>(f.getArgumentTypes()[i]);
    if (!type || !type.hasStaticShape()) {
      fail(inputPath,
           "argument '" + names[i] + "' is not a statically shaped tensor");
      return std::nullopt;
    }
    std::optional<eval::Tensor> t = readArgument(it->second, names[i], type);
    if (!t)
      return std::nullopt;
    args.push_back(std::move(*t));
  }
  return args;
}

//===----------------------------------------------------------------------===//
// Results
//===----------------------------------------------------------------------===//

/// Prints `t` on one line for lit tests: f32 to 6 significant digits, f64
/// to 12 (the .npy files carry the exact values).
void printTensor(llvm::raw_ostream &os, func::FuncOp f, unsigned i,
                 const eval::Tensor &t) {
  os << "result " << i;
  if (auto name = f.getResultAttrOfType<StringAttr>(i, kNameAttr))
    os << " \"" << name.getValue() << "\"";
  os << ": " << f.getResultTypes()[i] << " = [";
  llvm::interleaveComma(t.data, os, [&](double v) {
    if (t.elementType.isInteger(1))
      os << (v != 0.0 ? "true" : "false");
    else if (isa<IntegerType>(t.elementType))
      os << static_cast<int64_t>(v);
    else if (t.elementType.isF64())
      os << llvm::format("%.12g", v);
    else
      os << llvm::format("%.6g", v);
  });
  os << "]\n";
}

int writeResults(func::FuncOp f, ArrayRef<eval::Tensor> results,
                 StringRef dir) {
  if (std::error_code ec = llvm::sys::fs::create_directories(dir))
    return fail(inputPath, "cannot create '" + dir + "': " + ec.message());
  llvm::json::Array entries;
  for (auto [i, t] : llvm::enumerate(results)) {
    std::optional<tidalrt_element_type_t> type = npyType(t.elementType);
    if (!type)
      return fail(inputPath, "result " + Twine(i) + " has element type " +
                                 typeString(t.elementType) +
                                 ", which .npy files cannot hold");
    std::string file = "result_" + std::to_string(i) + ".npy";
    SmallString<256> path(dir);
    llvm::sys::path::append(path, file);
    std::string err = writeResult(path, t, *type);
    if (!err.empty())
      return fail(path, err);
    llvm::json::Object entry;
    entry["index"] = static_cast<int64_t>(i);
    auto name = f.getResultAttrOfType<StringAttr>(i, kNameAttr);
    entry["name"] = name ? llvm::json::Value(name.str()) : nullptr;
    auto role = f.getResultAttrOfType<ArgRoleAttr>(i, kRoleAttr);
    entry["role"] =
        role ? llvm::json::Value(stringifyArgRole(role.getValue())) : nullptr;
    entry["file"] = file;
    entry["dtype"] = tidalrt_element_type_name(*type);
    llvm::json::Array shape;
    for (int64_t d : t.shape)
      shape.push_back(d);
    entry["shape"] = std::move(shape);
    entries.push_back(std::move(entry));
  }
  llvm::json::Object manifest;
  manifest["function"] = f.getSymName().str();
  manifest["results"] = std::move(entries);
  SmallString<256> path(dir);
  llvm::sys::path::append(path, "manifest.json");
  std::error_code ec;
  llvm::raw_fd_ostream os(path, ec);
  if (ec)
    return fail(path, "cannot write: " + ec.message());
  os << llvm::formatv("{0:2}", llvm::json::Value(std::move(manifest))) << "\n";
  os.close();
  if (os.has_error()) {
    os.clear_error();
    return fail(path, "cannot write");
  }
  return 0;
}
} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  llvm::cl::HideUnrelatedOptions(category);
  llvm::cl::ParseCommandLineOptions(
      argc, argv, "tidal-eval: the reference evaluator of the tidal dialect\n");

  DialectRegistry registry;
  registerAllDialects(registry);
  MLIRContext context(registry);

  // Parse and verification errors keep MLIR's location text; evaluation
  // errors are reported against the file. Only the first error is shown.
  std::string firstError;
  bool evaluating = false;
  ScopedDiagnosticHandler handler(&context, [&](Diagnostic &diag) {
    if (diag.getSeverity() != DiagnosticSeverity::Error || !firstError.empty())
      return success();
    if (evaluating) {
      firstError = formatEvalDiagnostic(diag);
      return success();
    }
    std::string where = inputPath;
    if (auto f = fileLoc(diag.getLocation()))
      where = (f->getFilename().str() + ":" + Twine(f->getLine()) + ":" +
               Twine(f->getColumn()))
                  .str();
    firstError = where + ": error: " + diag.str();
    return success();
  });

  llvm::SourceMgr sourceMgr;
  auto buffer = llvm::MemoryBuffer::getFileOrSTDIN(inputPath);
  if (!buffer)
    return fail(inputPath, "cannot read: " + buffer.getError().message());
  sourceMgr.AddNewSourceBuffer(std::move(*buffer), llvm::SMLoc());
  OwningOpRef<ModuleOp> module = parseSourceFile<ModuleOp>(sourceMgr, &context);
  if (!module) {
    llvm::errs() << (firstError.empty() ? inputPath + ": error: cannot parse"
                                        : firstError)
                 << "\n";
    return 1;
  }

  std::optional<func::FuncOp> f = pickFunction(*module);
  if (!f)
    return 1;
  std::optional<SmallVector<eval::Tensor>> args = bindArguments(*f);
  if (!args)
    return 1;

  evaluating = true;
  eval::EvalOptions opts;
  opts.seed = seed;
  FailureOr<SmallVector<eval::Tensor>> results =
      eval::evaluate(*f, *args, opts);
  if (failed(results))
    return fail(inputPath,
                firstError.empty() ? "evaluation failed" : firstError);

  if (printResults)
    for (auto [i, t] : llvm::enumerate(*results))
      printTensor(llvm::outs(), *f, i, t);
  if (!printResults || !outputDir.empty())
    return writeResults(*f, *results,
                        outputDir.empty() ? StringRef(".")
                                          : StringRef(outputDir));
  return 0;
}
