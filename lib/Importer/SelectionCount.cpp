//===- SelectionCount.cpp - NonZero's count as a compile-time value -------===//
//
// Shape of NonZero's indices (or of a masked selection) has one dimension
// only the data knows: the number of elements kept. Some exports compute
// with that shape only to rebuild it, as DeBERTa's loss does:
//
//   idx = (labels >= 0).nonzero()                       # [K, 1]
//   logits = torch.gather(logits, 0, idx.expand(idx.size(0), n))
//
// (Shape -> Gather -> Unsqueeze -> Concat -> ... -> Expand). Such a count is
// a compile-time integer here, a sentinel value far below any real one, and
// the shape computations that only move values (Gather, Concat, Reshape,
// Slice, Where's branches, Shape of a tensor holding it, Equal against a
// negative number) fold as usual; the Expand of the same indices and the
// Reshape of a selection recognise it (MaskedSelection.cpp,
// SelectionPropagation.cpp). Any other use is an error naming the node.
//
//===----------------------------------------------------------------------===//

#include "ConverterSupport.h"

#include "llvm/ADT/StringSet.h"

using namespace mlir;
using namespace mlir::tidal;
using namespace mlir::tidal::importer;

namespace {

/// Far below any dimension, index or shape entry a model writes; sentinel j
/// is kBase - j.
constexpr int64_t kBase = INT64_MIN / 2;
constexpr int64_t kMaxSentinels = int64_t(1) << 20;

/// The sentinels among a constant's values (none for floats).
llvm::SmallVector<int64_t> sentinelsIn(DenseElementsAttr c) {
  llvm::SmallVector<int64_t> out;
  if (!c || !isa<IntegerType>(c.getElementType()))
    return out;
  for (int64_t v : intValues(c))
    if (isCountSentinel(v))
      out.push_back(v);
  return out;
}

} // namespace

bool importer::isCountSentinel(int64_t v) {
  return v <= kBase && v > kBase - kMaxSentinels;
}

int64_t importer::countSentinel(GraphImporter &g, Value mask,
                                llvm::StringRef source) {
  if (auto it = g.maskCounts.find(mask); it != g.maskCounts.end())
    return it->second;
  int64_t s = kBase - int64_t(g.maskCounts.size());
  g.maskCounts[mask] = s;
  g.countMasks[s] = {mask, source.str()};
  return s;
}

std::string importer::countProblem(GraphImporter &g,
                                   const onnx::NodeProto &node, bool folding) {
  if (g.countMasks.empty())
    return ""; // no count was ever taken: nothing to scan
  const std::string &op = node.op_type();
  // Inputs through which a sentinel may pass unchanged, by op.
  static const llvm::StringMap<llvm::SmallVector<int, 3>> movers = {
      {"Identity", {0}}, {"Gather", {0}},   {"Unsqueeze", {0}},
      {"Squeeze", {0}},  {"Reshape", {0}},  {"Flatten", {0}},
      {"Slice", {0}},    {"Where", {1, 2}}, {"Shape", {0}},
      {"Size", {0}},     {"Concat", {}}};
  auto moves = [&](int i) {
    if (op == "Concat")
      return true;
    auto it = movers.find(op);
    return it != movers.end() && llvm::is_contained(it->second, i);
  };
  for (int i = 0; i < node.input_size(); ++i) {
    DenseElementsAttr c = g.constInput(node, i);
    llvm::SmallVector<int64_t> found = sentinelsIn(c);
    if (found.empty())
      continue;
    if (folding && moves(i))
      continue;
    if (folding && op == "Cast") {
      const onnx::AttributeProto *to = findAttribute(node, "to");
      if (to && to->i() == onnx::TensorProto::INT64)
        continue;
    }
    // K == a negative number is false whatever K is.
    if (folding && op == "Equal" && node.input_size() == 2) {
      DenseElementsAttr other = g.constInput(node, 1 - i);
      if (other && isa<IntegerType>(other.getElementType()) &&
          (other.getNumElements() == 1 || other.getType() == c.getType())) {
        llvm::SmallVector<int64_t> a = intValues(c), b = intValues(other);
        bool negative = true;
        for (size_t k = 0; k < a.size() && negative; ++k)
          if (isCountSentinel(a[k]))
            negative = b[b.size() == 1 ? 0 : k] < 0;
        if (negative)
          continue;
      }
    }
    auto it = g.countMasks.find(found.front());
    std::string source =
        it == g.countMasks.end() ? "a NonZero" : it->second.second;
    return "input '" + node.input(i) + "' holds the number of elements " +
           source +
           " keeps, known only at run time; tidal uses that number only to "
           "rebuild the shape of the same indices or selection (an Expand "
           "of NonZero's indices, a Reshape of the selection), and " +
           op + " would compute with it";
  }
  return "";
}
