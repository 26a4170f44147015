//===- Manifest.cpp - the program manifest the driver reads ---------------===//
//
// Format: docs/executable.md ("The program manifest").
//
//===----------------------------------------------------------------------===//

#include "tidal/Conversion/TidalToRuntime/KernelOps.h"
#include "tidal/Dialect/Tidal/IR/TidalOps.h"
#include "tidal/Target/Program.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/Support/JSON.h"

using namespace mlir;
using namespace mlir::tidal;
namespace json = llvm::json;

static int64_t alignBlob(int64_t n) { return (n + 63) / 64 * 64; }

static json::Object describeValue(Type type, StringAttr name,
                                  std::optional<ArgRole> role, int64_t offset,
                                  bool host,
                                  DenseI64ArrayAttr shardOf = nullptr) {
  auto tensor = cast<RankedTensorType>(type);
  json::Array shape;
  for (int64_t d : tensor.getShape())
    shape.push_back(d);
  json::Object object{
      {"name", name ? name.getValue().str() : std::string()},
      {"role", role ? stringifyArgRole(*role).str() : std::string("output")},
      {"dtype", numpyTypeName(tensor.getElementType()).str()},
      {"shape", std::move(shape)},
      {"offset", offset},
      {"bytes", tensorByteSize(tensor)},
  };
  // tidal-place: the offset is in the host arena.
  if (host)
    object["space"] = "host";
  // tidal-shard-optimizer: this rank's chunk of a tensor of this shape.
  if (shardOf) {
    json::Array full;
    for (int64_t d : shardOf.asArrayRef())
      full.push_back(d);
    object["full_shape"] = std::move(full);
  }
  return object;
}

static std::optional<ArgRole> roleOf(DictionaryAttr attrs) {
  if (!attrs)
    return std::nullopt;
  if (auto role = attrs.getAs<ArgRoleAttr>(kRoleAttr))
    return role.getValue();
  return std::nullopt;
}

/// `onDevice`: the function runs on the runtime's device, whose memory (its
/// budget) holds the arena; offloaded copies go to a host arena.
static FailureOr<json::Object> describeFunction(func::FuncOp func,
                                                bool onDevice) {
  json::Array args, results;
  for (BlockArgument arg : func.getArguments()) {
    unsigned i = arg.getArgNumber();
    auto offset = func.getArgAttrOfType<IntegerAttr>(i, kOffsetAttr);
    if (!offset)
      return func.emitError("argument ") << i << " has no planned offset";
    args.push_back(describeValue(
        arg.getType(), func.getArgAttrOfType<StringAttr>(i, kNameAttr),
        roleOf(func.getArgAttrDict(i)), offset.getInt(),
        isHostArgument(func, i),
        func.getArgAttrOfType<DenseI64ArrayAttr>(i, kShardOfAttr)));
  }
  auto resultOffsets =
      func->getAttrOfType<DenseI64ArrayAttr>(kResultOffsetsAttr);
  auto arenaSize = func->getAttrOfType<IntegerAttr>(kArenaSizeAttr);
  if (!resultOffsets || !arenaSize ||
      resultOffsets.size() != (int64_t)func.getNumResults())
    return func.emitError("function has no memory plan");
  for (unsigned i = 0; i < func.getNumResults(); ++i)
    results.push_back(
        describeValue(func.getResultTypes()[i],
                      func.getResultAttrOfType<StringAttr>(i, kNameAttr),
                      roleOf(func.getResultAttrDict(i)), resultOffsets[i],
                      isHostResult(func, i)));
  json::Object description{{"arena_bytes", arenaSize.getInt()},
                           {"args", std::move(args)},
                           {"results", std::move(results)}};
  if (onDevice) {
    auto budget = func->getAttrOfType<IntegerAttr>(kDeviceBudgetAttr);
    auto host = func->getAttrOfType<IntegerAttr>(kHostArenaSizeAttr);
    int64_t copies = 0;
    func.walk([&](Operation *op) { copies += isa<OffloadOp, PrefetchOp>(op); });
    description["device_bytes"] =
        std::max(budget ? budget.getInt() : 0, arenaSize.getInt());
    description["host_arena_bytes"] = host ? host.getInt() : 0;
    description["num_copies"] = copies;
  }
  return description;
}

FailureOr<std::string> tidal::buildManifest(ModuleOp planned,
                                            const ProgramInfo &info) {
  SymbolTable symbols(planned);
  json::Object functions;
  auto step = symbols.lookup<func::FuncOp>(info.stepFunc);
  if (!step)
    return planned.emitError() << "no function @" << info.stepFunc;
  FailureOr<json::Object> stepJson =
      describeFunction(step, info.target != "cpu");
  if (failed(stepJson))
    return failure();
  functions["step"] = std::move(*stepJson);
  if (auto predict = symbols.lookup<func::FuncOp>(info.predictFunc)) {
    FailureOr<json::Object> predictJson = describeFunction(predict, false);
    if (failed(predictJson))
      return failure();
    functions["predict"] = std::move(*predictJson);
  }

  json::Array ops;
  forEachKernelCall(planned, [&](Operation *op, int64_t) {
    ops.push_back(json::Object{{"name", opDisplayName(op)},
                               {"kind", op->getName().stripDialect().str()}});
  });
  int64_t numOps = ops.size();

  int64_t blobOffset = alignBlob(info.modelBytes.size());
  json::Array embedded;
  for (const EmbeddedData &data : info.embedded) {
    embedded.push_back(json::Object{{"name", data.name},
                                    {"offset", blobOffset},
                                    {"size", (int64_t)data.bytes.size()}});
    blobOffset = alignBlob(blobOffset + data.bytes.size());
  }

  json::Value optimizer = json::Object();
  if (auto parsed = json::parse(info.optimizerJson))
    optimizer = std::move(*parsed);
  else
    llvm::consumeError(parsed.takeError());

  json::Object manifest{
      {"format", 1},
      {"model", info.modelName},
      {"mode", info.mode},
      {"target", info.target},
      {"loss", info.loss},
      {"batch_size", info.batchSize},
      {"num_ops", numOps},
      {"ops", std::move(ops)},
      {"model_blob",
       json::Object{{"offset", 0}, {"size", (int64_t)info.modelBytes.size()}}},
      {"embedded", std::move(embedded)},
      {"optimizer", std::move(optimizer)},
      {"functions", std::move(functions)},
  };
  if (info.parallelGrain > 0)
    manifest["parallel_grain"] = info.parallelGrain;
  if (!info.distributed.empty())
    manifest["distributed"] =
        json::Object{{"backend", info.distributed},
                     {"ranks", info.ranks},
                     {"global_batch_size", info.batchSize * info.ranks}};
  std::string text;
  llvm::raw_string_ostream os(text);
  os << json::Value(std::move(manifest));
  return text;
}
