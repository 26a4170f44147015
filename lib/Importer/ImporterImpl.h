//===- ImporterImpl.h - state shared by the ONNX importer's parts -*- C++
//-*-===//
//
// Private to lib/Importer: the graph importer's state, the constant folder
// and the tensor decoding helpers.
//
//===----------------------------------------------------------------------===//

#ifndef TIDAL_LIB_IMPORTER_IMPORTERIMPL_H
#define TIDAL_LIB_IMPORTER_IMPORTERIMPL_H

#include "tidal/Dialect/Tidal/IR/TidalOps.h"
#include "tidal/Importer/OnnxImporter.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"

#include <onnx/onnx_pb.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace mlir::tidal::importer {

/// MLIR element type of an ONNX TensorProto data type, or null.
Type elementTypeFor(MLIRContext *ctx, int32_t onnxType);
/// ONNX's name for a data type ("float", "int64", ...).
std::string onnxTypeName(int32_t onnxType);

/// Reads the external data of `t` (its location relative to `baseDir`, which
/// must stay below it) into `bytes`; false with `error` set when it cannot.
bool readExternal(const onnx::TensorProto &t, llvm::StringRef baseDir,
                  std::string &bytes, std::string &error);

/// The static type of `t` once its data is checked to hold exactly that
/// many elements (external data: its file is opened, not read). Null with
/// `error` set otherwise. An initializer that becomes an argument needs
/// no more: its values are read at run time.
RankedTensorType checkTensor(MLIRContext *ctx, const onnx::TensorProto &t,
                             llvm::StringRef baseDir, std::string &error);
/// Decodes an initializer or Constant tensor (checkTensor, then its values)
/// into an attribute of its static shape. `baseDir` resolves external data.
/// Sets `error` on failure.
DenseElementsAttr decodeTensor(MLIRContext *ctx, const onnx::TensorProto &t,
                               llvm::StringRef baseDir, std::string &error);

/// Integer values of a constant (any integer or bool element type).
llvm::SmallVector<int64_t> intValues(DenseElementsAttr attr);
/// Floating-point values of a constant (any numeric element type).
llvm::SmallVector<double> floatValues(DenseElementsAttr attr);
/// A constant of `type` (integer or float elements) from values.
DenseElementsAttr makeConstant(RankedTensorType type,
                               llvm::ArrayRef<int64_t> ints);
DenseElementsAttr makeConstant(RankedTensorType type,
                               llvm::ArrayRef<double> values);

class GraphImporter;

/// A tensor whose axis `axis` keeps only the slices where a run-time mask
/// holds (x[mask]: NonZero's indices gathered, MaskedSelection.cpp). The
/// value bound to its name is the whole tensor, that axis as long as the
/// mask (`mask`, i1 [N]); the slices the mask drops hold copies of a kept
/// one, so that no op sees a value the selection does not.
struct Selection {
  Value mask;
  int64_t axis = 0;
  std::string source; ///< the NonZero node, for messages
};

/// NonZero's result on its way to a gather (MaskedSelection.cpp): the
/// indices of the true elements of `mask` (i1 [N], the input flattened),
/// as NonZero gives them ([rank, count]), transposed ([count, rank]) or,
/// for a 1-D input, as a list ([count]). A 1-D input's transposed indices
/// expanded to `width` columns ([count, width]: DeBERTa's
/// `idx.expand(idx.size(0), n)`) are Columns of that width.
struct MaskIndices {
  enum Form { Rows, Columns, List };
  Value mask;
  llvm::SmallVector<int64_t> shape; ///< NonZero's input shape
  Form form = Rows;
  std::string source;
  int64_t width = 1;
};

/// The number of elements a NonZero keeps, as a compile-time integer: a
/// sentinel value (SelectionCount.cpp) that Shape of the indices or of a
/// selection gives, which shape computations may move around (Gather,
/// Concat, Reshape, Where, ...) until it names the count of an Expand of
/// those indices or a Reshape of the selection; anything that would compute
/// with it is an error naming the node.
bool isCountSentinel(int64_t v);
/// The sentinel of `mask`'s count (assigned on first use).
int64_t countSentinel(GraphImporter &g, Value mask, llvm::StringRef source);
/// Why `node` cannot take its compile-time inputs ("" when it can): one
/// holds a count sentinel where the node would compute with it (`folding`:
/// the node folds at compile time, so ops that only move values may take
/// one; otherwise none may).
std::string countProblem(GraphImporter &g, const onnx::NodeProto &node,
                         bool folding);

/// Whether `node` is a NonZero on run-time values or reads a Selection or
/// MaskIndices (then convertSelectionNode imports it).
bool readsSelection(GraphImporter &g, const onnx::NodeProto &node);
/// Imports a node that readsSelection: NonZero, the index forms leading to
/// a gather, the gather, ops that keep a selection, and the reductions and
/// losses over the selected axis that end one. Returns failure with `error`
/// set for anything else.
LogicalResult convertSelectionNode(GraphImporter &g,
                                   const onnx::NodeProto &node,
                                   std::string &error);
/// Why the tensor `name` cannot be a graph output ("" when it can): a
/// Selection's or MaskIndices' shape is known only at run time.
std::string selectionOutputProblem(GraphImporter &g, llvm::StringRef name);

/// What a name is bound to while importing: a compile-time constant, an SSA
/// value, or a sequence of them (SequenceConstruct, SplitToSequence, ...:
/// tracked at import, never IR).
struct Bound {
  DenseElementsAttr constant;
  Value value;
  std::shared_ptr<const std::vector<Bound>> sequence;

  bool isSequence() const { return sequence != nullptr; }
  /// The tensor type (null for a sequence).
  Type type() const;
};

/// Evaluates a node at compile time when it is a shape computation whose
/// inputs are all known (Shape of a static tensor, Gather/Concat/Slice/...
/// on constants). Returns true and fills `results` when it folded the node;
/// false when the node must become IR. Sets `error` when folding was
/// required but failed.
bool tryFoldNode(GraphImporter &g, const onnx::NodeProto &node,
                 llvm::SmallVectorImpl<DenseElementsAttr> &results,
                 std::string &error);

/// Converts one node into tidal ops. Returns failure with `error` set.
LogicalResult convertNode(GraphImporter &g, const onnx::NodeProto &node,
                          std::string &error);

/// The domain of ONNX's training operators, and the one version tidal reads.
inline constexpr llvm::StringLiteral kTrainingDomain =
    "ai.onnx.preview.training";
inline constexpr int64_t kTrainingOpset = 1;

/// Orders `g`'s nodes so that each follows the producers of its inputs
/// (those of `available` are defined outside), keeping the file order
/// among ready ones. Returns failure with `error` set.
LogicalResult sortNodes(const onnx::GraphProto &g, llvm::StringSet<> available,
                        bool inAlgorithm, std::vector<int> &order,
                        std::string &error);

/// Replaces every call of a model-local function (ModelProto.functions) in
/// the graph and the training_info algorithms by the function's body,
/// recursively (FunctionInlining.cpp). Returns failure with `error` set.
LogicalResult inlineModelFunctions(onnx::ModelProto &model, std::string &error);

/// The names `g` defines: its inputs, initializers and node outputs.
llvm::StringSet<> definedNames(const onnx::GraphProto &g);

/// Renames the names `g` reads from outside it (those not in `local`,
/// its inputs, initializers or node outputs), at any depth, by `rename`.
void renameOuter(onnx::GraphProto &g, llvm::StringSet<> local,
                 const std::function<std::string(const std::string &)> &rename);

/// The tensors that `node`'s graph attributes (an If's branches, at any
/// depth) read from outside them, added to `refs`.
void collectOuterReferences(const onnx::NodeProto &node,
                            llvm::StringSet<> &refs);

/// Converts a node of the ai.onnx.preview.training domain: Momentum, Adagrad
/// and Adam anywhere, Gradient only in a training_info algorithm graph
/// (`inAlgorithm`). Returns failure with `error` set.
LogicalResult convertTrainingNode(GraphImporter &g, const onnx::NodeProto &node,
                                  bool inAlgorithm, std::string &error);

/// The attribute `name` of `node`, or null.
const onnx::AttributeProto *findAttribute(const onnx::NodeProto &node,
                                          llvm::StringRef name);

/// `t` as MLIR prints it, for messages.
std::string typeToString(Type t);

/// Why a tensor of `type` cannot exist ("tensor<...> is too large: ..."),
/// or "" when its byte count fits (ShapeUtils.h checkedByteSize).
std::string tensorSizeProblem(Type type);

/// Formats `node 'name' (Op)`, or `node #i (Op)` for an unnamed node
/// (`algorithm node #i` in a training_info algorithm graph).
std::string describeNode(const onnx::NodeProto &node, int index,
                         bool inAlgorithm = false);

/// What a model's single TrainingInfoProto asks for (SPEC section 1),
/// checked on the protobuf before anything is imported.
struct TrainingInfo {
  /// The algorithm graph; null when the model has no training_info.
  const onnx::GraphProto *algorithm = nullptr;
  /// The loss: the `y` of the algorithm's Gradient ops.
  std::string loss;
  /// Every name in the Gradient ops' `xs`.
  llvm::StringSet<> differentiated;
  /// update_binding as (initializer, algorithm value) pairs, in file order.
  std::vector<std::pair<std::string, std::string>> bindings;
  llvm::StringSet<> updated;

  explicit operator bool() const { return algorithm != nullptr; }
};

/// Reads and checks `model.training_info`: at most one entry, no
/// initialization graph, a Gradient op whose xs name initializers or graph
/// inputs, and update_binding keys and values that exist. Leaves `info`
/// empty when the model has no training_info.
LogicalResult analyzeTrainingInfo(const onnx::ModelProto &model,
                                  TrainingInfo &info, std::string &error);

/// The results of a training_info model's @main: the loss, then each
/// update_binding's new value, with their tidal.name and tidal.role (the
/// role of the argument of the same name, from `argRoles`).
LogicalResult
buildTrainingResults(GraphImporter &g, const TrainingInfo &info,
                     const llvm::StringMap<ArgRole> &argRoles,
                     llvm::SmallVectorImpl<Value> &results,
                     llvm::SmallVectorImpl<DictionaryAttr> &resultAttrs,
                     std::string &error);

/// The state of importing one graph into one function.
class GraphImporter {
public:
  GraphImporter(MLIRContext *ctx, OpBuilder &builder, int64_t opset)
      : ctx(ctx), builder(builder), opset(opset), loc(UnknownLoc::get(ctx)) {}

  MLIRContext *ctx;
  OpBuilder &builder;
  int64_t opset;

  /// SSA values of the tensors produced so far.
  llvm::StringMap<Value> values;
  /// Tensors known at compile time (Constant nodes, integer initializers,
  /// folded shape computations).
  llvm::StringMap<DenseElementsAttr> constants;
  /// Initializers not yet turned into function arguments.
  llvm::StringMap<const onnx::TensorProto *> pendingInitializers;
  /// Sequences by name (SequenceOps.cpp).
  llvm::StringMap<std::vector<Bound>> sequences;
  /// ImportOptions::embeddingPadding by weight name, and the weights a
  /// Gather on axis 0 has read so far.
  llvm::StringMap<int64_t> paddingRows;
  llvm::StringSet<> paddingRead;
  /// Masked selections and NonZero results by name, and each mask
  /// source's flattened i1 mask and first kept index (MaskedSelection.cpp).
  llvm::StringMap<Selection> selections;
  llvm::StringMap<MaskIndices> maskIndices;
  llvm::DenseMap<Value, Value> flatMasks, firstKept;
  /// Count sentinels: by mask, and each one's mask and NonZero.
  llvm::DenseMap<Value, int64_t> maskCounts;
  llvm::DenseMap<int64_t, std::pair<Value, std::string>> countMasks;
  /// Materialized tidal.constant ops, by tensor name.
  llvm::StringMap<Value> materialized;
  /// Creates the function argument of a pending initializer on first use.
  std::function<Value(llvm::StringRef)> materializeInitializer;

  Location loc;

  bool hasInput(const onnx::NodeProto &node, int i) const {
    return i < node.input_size() && !node.input(i).empty();
  }
  /// The type of input `i`, whether it is an SSA value or a constant.
  RankedTensorType inputType(const onnx::NodeProto &node, int i);
  /// Input `i` as an SSA value, materializing constants as tidal.constant.
  FailureOr<Value> input(const onnx::NodeProto &node, int i,
                         std::string &error);
  /// Input `i` as a compile-time constant, or null.
  DenseElementsAttr constInput(const onnx::NodeProto &node, int i);

  /// Creates op `name` with the node's location, infers and checks its result
  /// types (or takes `resultTypes`, for ops that do not infer) and verifies
  /// it. On failure erases it and returns null with
  /// `error` holding the verifier's message.
  Operation *create(llvm::StringRef name, ValueRange operands,
                    llvm::ArrayRef<NamedAttribute> attrs, unsigned numResults,
                    std::string &error, llvm::ArrayRef<Type> resultTypes = {});

  /// Binds the node's outputs to `results` (skipping unnamed outputs).
  void bindOutputs(const onnx::NodeProto &node, ValueRange results);
};

} // namespace mlir::tidal::importer

#endif // TIDAL_LIB_IMPORTER_IMPORTERIMPL_H
