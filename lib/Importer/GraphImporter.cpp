//===- GraphImporter.cpp - value lookup and op creation for converters ----===//
//
// How the converters see the graph: a tensor name resolves to an SSA value,
// a compile-time constant or a not-yet-used initializer, and every op they
// create has its result types inferred and is verified on the spot, so that
// a bad node is reported as that node.
//
//===----------------------------------------------------------------------===//

#include "ImporterImpl.h"
#include "tidal/Dialect/Tidal/IR/ShapeUtils.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"
#include "llvm/ADT/STLExtras.h"

using namespace mlir;
using namespace mlir::tidal;
using namespace mlir::tidal::importer;

//===----------------------------------------------------------------------===//
// GraphImporter helpers used by the converters
//===----------------------------------------------------------------------===//

RankedTensorType GraphImporter::inputType(const onnx::NodeProto &node, int i) {
  const std::string &name = node.input(i);
  auto c = constants.find(name);
  if (c != constants.end())
    return cast<RankedTensorType>(c->second.getType());
  auto v = values.find(name);
  if (v != values.end())
    return cast<RankedTensorType>(v->second.getType());
  if (materializeInitializer)
    if (Value arg = materializeInitializer(name))
      return cast<RankedTensorType>(arg.getType());
  return {};
}

DenseElementsAttr GraphImporter::constInput(const onnx::NodeProto &node,
                                            int i) {
  if (!hasInput(node, i))
    return {};
  auto it = constants.find(node.input(i));
  return it == constants.end() ? DenseElementsAttr() : it->second;
}

Type importer::Bound::type() const {
  return sequence ? Type() : constant ? constant.getType() : value.getType();
}

FailureOr<Value> GraphImporter::input(const onnx::NodeProto &node, int i,
                                      std::string &error) {
  const std::string &name = node.input(i);
  if (sequences.count(name)) {
    error =
        "input '" + name + "' is a sequence, where the operator takes a tensor";
    return failure();
  }
  if (auto v = values.find(name); v != values.end())
    return v->second;
  if (auto m = materialized.find(name); m != materialized.end())
    return m->second;
  if (materializeInitializer)
    if (Value arg = materializeInitializer(name))
      return arg;
  auto c = constants.find(name);
  if (c == constants.end()) {
    error = "input '" + name + "' is not defined";
    return failure();
  }
  OpBuilder::InsertionGuard guard(builder);
  Operation *op = create(ConstantOp::getOperationName(), {},
                         {builder.getNamedAttr("value", c->second)}, 1, error);
  if (!op)
    return failure();
  materialized[name] = op->getResult(0);
  return op->getResult(0);
}

std::string importer::tensorSizeProblem(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  if (!tensor || !tensor.hasStaticShape() ||
      checkedByteSize(tensor.getShape(), tensor.getElementTypeBitWidth()))
    return "";
  return typeToString(tensor) +
         " is too large: its byte count passes 64 bits or the 256 TiB a "
         "64-bit machine can address";
}

Operation *GraphImporter::create(StringRef name, ValueRange operands,
                                 ArrayRef<NamedAttribute> attrs,
                                 unsigned numResults, std::string &error,
                                 ArrayRef<Type> resultTypes) {
  // Collect the first error that inference or verification reports.
  std::string diagText;
  ScopedDiagnosticHandler handler(ctx, [&](Diagnostic &diag) {
    if (diag.getSeverity() == DiagnosticSeverity::Error && diagText.empty())
      diagText = diag.str();
    return success();
  });

  OperationState state(loc, name);
  state.addOperands(operands);
  state.addAttributes(attrs);
  if (!resultTypes.empty())
    state.addTypes(resultTypes);
  else
    state.addTypes(SmallVector<Type>(numResults, NoneType::get(ctx)));
  Operation *op = builder.create(state);

  SmallVector<Type> types;
  auto infer = dyn_cast<InferTypeOpInterface>(op);
  if (infer && resultTypes.empty()) {
    if (failed(infer.inferReturnTypes(
            ctx, op->getLoc(), op->getOperands(), op->getAttrDictionary(),
            op->getPropertiesStorage(), op->getRegions(), types)) ||
        types.size() != numResults) {
      if (diagText.empty())
        diagText = "cannot infer the result types";
      op->erase();
      error = diagText;
      return nullptr;
    }
    for (auto [result, type] : llvm::zip(op->getResults(), types))
      result.setType(type);
  }
  if (failed(mlir::verify(op))) {
    op->erase();
    error = diagText.empty() ? "the op does not verify" : diagText;
    return nullptr;
  }
  for (Type type : op->getResultTypes()) {
    std::string why = tensorSizeProblem(type);
    if (!why.empty()) {
      op->erase();
      error = "its result " + why;
      return nullptr;
    }
  }
  return op;
}

void GraphImporter::bindOutputs(const onnx::NodeProto &node,
                                ValueRange results) {
  for (int i = 0, e = std::min<int>(node.output_size(), results.size()); i < e;
       ++i)
    if (!node.output(i).empty())
      values[node.output(i)] = results[i];
}

//===----------------------------------------------------------------------===//
// Small helpers shared by the converters
//===----------------------------------------------------------------------===//

const onnx::AttributeProto *importer::findAttribute(const onnx::NodeProto &node,
                                                    llvm::StringRef name) {
  for (const auto &a : node.attribute())
    if (a.name() == name)
      return &a;
  return nullptr;
}

std::string importer::typeToString(Type t) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << t;
  return s;
}
