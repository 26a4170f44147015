//===- OpVersions.cpp - the ONNX operator versions tidal reads ------------===//
//
// The since_versions below are ONNX's (docs/Operators.md, checked against
// docs/Changelog.md), every one up to kMaxOpset, older ones included: an
// older model is accepted only when its operators resolve to their opset-13
// definitions, which takes the full history to decide. A version is
// "handled" only when the converter knows what changed in it; a change that
// only adds element types needs nothing (types are checked on import).
//
// Adding a converter means adding its operator here, or models using it are
// rejected as unsupported.
//
//===----------------------------------------------------------------------===//

#include "tidal/Importer/OpVersions.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"

#include <algorithm>
#include <cstdlib>

using namespace mlir;
using namespace mlir::tidal;

namespace {

/// A set of versions as a bit mask (all are below 32).
template <typename... T> constexpr uint32_t v(T... versions) {
  return ((uint32_t(1) << versions) | ... | 0u);
}

constexpr OpImport op = OpImport::op, folded = OpImport::compileTime,
                   training = OpImport::training, unrolled = OpImport::unrolled,
                   sequence = OpImport::sequence;

// Notes name the changes in the versions tidal reads; "types" changes only
// add element types.
const OpVersionInfo kOps[] = {
    {"", "Abs", v(1, 6, 13), v(13), op, ""},
    {"", "Acos", v(7, 22), v(7, 22), op, "22: types"},
    {"", "Acosh", v(9, 22), v(9, 22), op, "22: types"},
    {"", "Add", v(1, 6, 7, 13, 14), v(13, 14), op, "14: types"},
    {"", "AffineGrid", v(20), v(20), op, "`size` known at compile time"},
    {"", "And", v(1, 7), v(7), op, ""},
    {"", "ArgMax", v(1, 11, 12, 13), v(13), op, "bool input not supported"},
    {"", "ArgMin", v(1, 11, 12, 13), v(13), op, "bool input not supported"},
    {"", "Asin", v(7, 22), v(7, 22), op, "22: types"},
    {"", "Asinh", v(9, 22), v(9, 22), op, "22: types"},
    {"", "Atan", v(7, 22), v(7, 22), op, "22: types"},
    {"", "Atanh", v(9, 22), v(9, 22), op, "22: types"},
    {"", "AveragePool", v(1, 7, 10, 11, 19, 22), v(11, 19, 22), op,
     "19: `dilations` (only 1 is supported); 22: types"},
    {"", "BatchNormalization", v(1, 6, 7, 9, 14, 15), v(9, 14, 15), op,
     "9: training when the running statistics outputs are used; "
     "14: `training_mode`, three outputs; 15: types"},
    {"", "Bernoulli", v(15, 22), v(15, 22), op,
     "a uniform draw compared with p; 22: types"},
    {"", "BlackmanWindow", v(17), v(17), folded,
     "`size` known at compile time: a constant"},
    {"", "Cast", v(1, 6, 9, 13, 19, 21), v(13, 19, 21), op,
     "19: `saturate` (float8 only), types; 21: types"},
    {"", "CastLike", v(15, 19, 21), v(15, 19, 21), op, "19, 21: types"},
    {"", "Ceil", v(1, 6, 13), v(13), op, ""},
    {"", "Celu", v(12), v(12), op, ""},
    {"", "Clip", v(1, 6, 11, 12, 13), v(13), op,
     "float: `min` and `max` known at compile time; integers (x.clamp on "
     "lengths, indices): max/min with the bounds, known or not"},
    {"", "Col2Im", v(18), v(18), op,
     "F.fold: a grouped transposed convolution with one-hot kernels; "
     "`image_shape` and `block_shape` known at compile time"},
    {"", "Concat", v(1, 4, 11, 13), v(13), op, ""},
    {"", "ConcatFromSequence", v(11), v(11), sequence,
     "one concat of the elements (`new_axis`: stacked)"},
    {"", "Constant", v(1, 9, 11, 12, 13, 19, 21), v(13, 19, 21), folded,
     "19, 21: types"},
    {"", "ConstantOfShape", v(9, 20, 21), v(9, 20, 21), folded,
     "20, 21: types"},
    {"", "Conv", v(1, 11, 22), v(11, 22), op, "22: types"},
    {"", "ConvTranspose", v(1, 11, 22), v(11, 22), op, "22: types"},
    {"", "Cos", v(7, 22), v(7, 22), op, "22: types"},
    {"", "Cosh", v(9, 22), v(9, 22), op, "22: types"},
    {"", "CumSum", v(11, 14), v(11, 14), op,
     "`axis` known at compile time; float or integer data; 14: types"},
    {"", "DFT", v(17, 20), v(17, 20), op,
     "one matmul with a constant transform matrix (real or complex input, "
     "inverse, onesided); `dft_length` known at compile time; 20: `axis` "
     "input (known at compile time)"},
    {"", "DeformConv", v(19, 22), v(19, 22), op,
     "2-D: bilinear samples at the offset positions (GridSample's gathers) "
     "times the mask, then a grouped matmul; any offset_group; 22: types"},
    {"", "DepthToSpace", v(1, 11, 13), v(13), op, "modes DCR and CRD"},
    {"", "Det", v(11, 22), v(11, 22), op,
     "Gaussian elimination, matrices of order 1 to 64; 22: types"},
    {"", "Div", v(1, 6, 7, 13, 14), v(13, 14), op, "14: types"},
    {"", "Dropout", v(1, 6, 7, 10, 12, 13, 22), v(13, 22), op,
     "`ratio` and `training_mode` are inputs known at compile time; 22: types"},
    {"", "Einsum", v(12), v(12), op,
     "any number of operands (contracted left to right); ellipses as "
     "letters of their own; no diagonals"},
    {"", "Elu", v(1, 6, 22), v(6, 22), op, "22: types"},
    {"", "Equal", v(1, 7, 11, 13, 19), v(13, 19), op, "19: types"},
    {"", "Erf", v(9, 13), v(13), op, ""},
    {"", "Exp", v(1, 6, 13), v(13), op, ""},
    {"", "Expand", v(8, 13), v(13), op, ""},
    {"", "EyeLike", v(9, 22), v(9, 22), folded,
     "the input's static shape only; 22: types"},
    {"", "Flatten", v(1, 9, 11, 13, 21), v(13, 21), op, "21: types"},
    {"", "Floor", v(1, 6, 13), v(13), op, ""},
    {"", "GRU", v(1, 3, 7, 14, 22), v(7, 14, 22), op,
     "14: `layout`; 22: types"},
    {"", "Gather", v(1, 11, 13), v(13), op, ""},
    {"", "GatherElements", v(11, 13), v(13), op, ""},
    {"", "GatherND", v(11, 12, 13), v(13), op, "12: `batch_dims`"},
    {"", "Gelu", v(20), v(20), op, "`approximate` none or tanh"},
    {"", "Gemm", v(1, 6, 7, 9, 11, 13), v(13), op, ""},
    {"", "GlobalAveragePool", v(1, 22), v(1, 22), op, "22: types"},
    {"", "GlobalLpPool", v(1, 2, 22), v(2, 22), op,
     "integer p >= 1: reduce_sum of |x|^p, ^(1/p); 22: types"},
    {"", "GlobalMaxPool", v(1, 22), v(1, 22), op, "22: types"},
    {"", "Greater", v(1, 7, 9, 13), v(13), op, ""},
    {"", "GreaterOrEqual", v(12, 16), v(12, 16), op, "16: types"},
    {"", "GroupNormalization", v(18, 21), v(18, 21), op,
     "18: scale and bias per group; 21: per channel"},
    {"", "GridSample", v(16, 20, 22), v(16, 20, 22), op,
     "4-D; bilinear (20: linear) and nearest, padding zeros, border, "
     "reflection; 20: also 5-D (trilinear); bicubic is rejected; 22: types"},
    {"", "HammingWindow", v(17), v(17), folded,
     "`size` known at compile time: a constant"},
    {"", "HannWindow", v(17), v(17), folded,
     "`size` known at compile time: a constant"},
    {"", "HardSigmoid", v(1, 6, 22), v(6, 22), op, "22: types"},
    {"", "HardSwish", v(14, 22), v(14, 22), op, "22: types"},
    {"", "Hardmax", v(1, 11, 13), v(13), op, "13: one axis"},
    {"", "Identity", v(1, 13, 14, 16, 19, 21), v(13, 14, 16, 19, 21), op,
     "14, 16: sequence and optional types (not supported); 19, 21: types"},
    {"", "If", v(1, 11, 13, 16, 19, 21), v(13, 16, 19, 21), unrolled,
     "a condition known at compile time (a shape test, as PyTorch exports "
     "`squeeze(dim)`) imports the branch taken; a data condition computes "
     "both branches and selects each output with a where (equal types); "
     "16, 19, 21: types"},
    {"", "InstanceNormalization", v(1, 6, 22), v(6, 22), op, "22: types"},
    {"", "IsInf", v(10, 20), v(10, 20), op, "20: types"},
    {"", "IsNaN", v(9, 13, 20), v(13, 20), op, "13, 20: types"},
    {"", "LRN", v(1, 13), v(13), op,
     "average_pool of x^2 over the channel window (ONNX model-zoo CNNs)"},
    {"", "LSTM", v(1, 7, 14, 22), v(7, 14, 22), op, "14: `layout`; 22: types"},
    {"", "LayerNormalization", v(17), v(17), op, ""},
    {"", "LeakyRelu", v(1, 6, 16), v(6, 16), op, "16: types"},
    {"", "Less", v(1, 7, 9, 13), v(13), op, ""},
    {"", "LessOrEqual", v(12, 16), v(12, 16), op, "16: types"},
    {"", "Log", v(1, 6, 13), v(13), op, ""},
    {"", "LogSoftmax", v(1, 11, 13), v(13), op,
     "13: `axis` names one dimension (before, the input was coerced to 2-D)"},
    {"", "Loop", v(1, 11, 13, 16, 19, 21), v(13, 16, 19, 21), unrolled,
     "trip count and condition known at compile time (nn.EmbeddingBag, "
     "torch.jit.script loops): the body is imported once per iteration, "
     "scan outputs stacked, sequences carried; EmbeddingBag over data "
     "offsets: a segment sum or mean; 16, 19, 21: types"},
    {"", "LpNormalization", v(1, 22), v(1, 22), op, "p 1 or 2; 22: types"},
    {"", "LpPool", v(1, 2, 11, 18, 22), v(11, 18, 22), op,
     "integer p >= 1: average_pool of |x|^p times the window, ^(1/p); 18: "
     "`ceil_mode` and `dilations` (1 only); 22: types"},
    {"", "MatMul", v(1, 9, 13), v(13), op, ""},
    {"", "Max", v(1, 6, 8, 12, 13), v(13), op, ""},
    {"", "MaxPool", v(1, 8, 10, 11, 12, 22), v(12, 22), op,
     "the `Indices` output is not supported; 22: types"},
    {"", "Mean", v(1, 6, 8, 13), v(13), op, ""},
    {"", "MeanVarianceNormalization", v(9, 13), v(13), op, "13: types"},
    {"", "MelWeightMatrix", v(17), v(17), folded,
     "inputs known at compile time: a constant"},
    {"", "Min", v(1, 6, 8, 12, 13), v(13), op, ""},
    {"", "Mish", v(18, 22), v(18, 22), op, "22: types"},
    {"", "Mod", v(10, 13), v(13), op,
     "integers (`fmod` 0 or 1) and floats (`fmod` 1); constants fold; 13: "
     "types"},
    {"", "Mul", v(1, 6, 7, 13, 14), v(13, 14), op, "14: types"},
    {"", "Neg", v(1, 6, 13), v(13), op, ""},
    {"", "NegativeLogLikelihoodLoss", v(12, 13, 22), v(13, 22), op,
     "22: types"},
    {"", "NonZero", v(9, 13), v(13), op,
     "a run-time mask only to select (x[mask]) into a reduction or loss"},
    {"", "Not", v(1), v(1), op, ""},
    {"", "OneHot", v(9, 11), v(11), op,
     "11: negative indices; `depth` known at compile time"},
    {"", "Or", v(1, 7), v(7), op, ""},
    {"", "PRelu", v(1, 6, 7, 9, 16), v(9, 16), op, "16: types"},
    {"", "Pad", v(1, 2, 11, 13, 18, 19, 21), v(13, 18, 19, 21), op,
     "18: `axes` input; 19: `wrap` mode (slices and concats); 21: types"},
    {"", "Pow", v(1, 7, 12, 13, 15), v(13, 15), op, "15: types"},
    {"", "RandomNormal", v(1, 22), v(1, 22), op,
     "float32 and float64 draws; 22: types"},
    {"", "RandomNormalLike", v(1, 22), v(1, 22), op,
     "float32 and float64 draws; 22: types"},
    {"", "RandomUniform", v(1, 22), v(1, 22), op,
     "float32 and float64 draws; 22: types"},
    {"", "RandomUniformLike", v(1, 22), v(1, 22), op,
     "float32 and float64 draws; 22: types"},
    {"", "Range", v(11), v(11), folded, ""},
    {"", "Reciprocal", v(1, 6, 13), v(13), op, ""},
    {"", "ReduceL1", v(1, 11, 13, 18), v(13, 18), op, "18: `axes` input"},
    {"", "ReduceL2", v(1, 11, 13, 18), v(13, 18), op, "18: `axes` input"},
    {"", "ReduceLogSum", v(1, 11, 13, 18), v(13, 18), op, "18: `axes` input"},
    {"", "ReduceLogSumExp", v(1, 11, 13, 18), v(13, 18), op,
     "18: `axes` input"},
    {"", "ReduceMax", v(1, 11, 12, 13, 18, 20), v(13, 18, 20), op,
     "18: `axes` input; 20: bool (not supported)"},
    {"", "ReduceMean", v(1, 11, 13, 18), v(13, 18), op,
     "18: `axes` becomes an input, with `noop_with_empty_axes`"},
    {"", "ReduceMin", v(1, 11, 12, 13, 18, 20), v(13, 18, 20), op,
     "18: `axes` input; 20: bool (not supported)"},
    {"", "ReduceProd", v(1, 11, 13, 18), v(13, 18), op, "18: `axes` input"},
    {"", "ReduceSum", v(1, 11, 13), v(13), op,
     "13: `axes` is an input, with `noop_with_empty_axes`"},
    {"", "ReduceSumSquare", v(1, 11, 13, 18), v(13, 18), op,
     "18: `axes` input"},
    {"", "Relu", v(1, 6, 13, 14), v(13, 14), op, "14: types"},
    {"", "Reshape", v(1, 5, 13, 14, 19, 21), v(13, 14, 19, 21), op,
     "14: `allowzero`; 19, 21: types"},
    {"", "Resize", v(10, 11, 13, 18, 19), v(13, 18, 19), op,
     "`scales`/`sizes` known at compile time; 13: optional `roi`, types; "
     "18: `axes`, `antialias` (upsampling only), keep_aspect_ratio_policy; "
     "19: half_pixel_symmetric. tf_crop_and_resize is rejected"},
    {"", "RNN", v(1, 7, 14, 22), v(7, 14, 22), op,
     "14: `layout`; activations Tanh or Relu; 22: types"},
    {"", "Round", v(11, 22), v(11, 22), op, "22: types"},
    {"", "STFT", v(17), v(17), op,
     "a strided 1-D convolution with the window times a constant transform "
     "matrix; `frame_step` and `frame_length` known at compile time; a "
     "[batch, length] signal (as PyTorch exports it) is real"},
    {"", "Scan", v(8, 9, 11, 16, 19, 21), v(11, 16, 19, 21), unrolled,
     "sequence length from the scan inputs' static shapes: the body is "
     "imported once per element, both directions, any scan axes; 16, 19, "
     "21: types"},
    {"", "ScatterElements", v(11, 13, 16, 18), v(13, 16, 18), op,
     "16: `reduction` (none, add; integer data: none); 18: max, min "
     "(float data: scatter_extreme)"},
    {"", "ScatterND", v(11, 13, 16, 18), v(13, 16, 18), op,
     "16: `reduction` (none, add; mul is not supported); 18: max, min "
     "(float data: scatter_extreme)"},
    {"", "Selu", v(1, 6, 22), v(6, 22), op, "22: types"},
    {"", "SequenceAt", v(11), v(11), sequence,
     "the position known at compile time"},
    {"", "SequenceConstruct", v(11), v(11), sequence, ""},
    {"", "SequenceEmpty", v(11), v(11), sequence, ""},
    {"", "SequenceErase", v(11), v(11), sequence,
     "the position known at compile time"},
    {"", "SequenceInsert", v(11), v(11), sequence,
     "the position known at compile time"},
    {"", "SequenceLength", v(11), v(11), sequence, "a constant"},
    {"", "SequenceMap", v(17), v(17), sequence,
     "the body imported once per element"},
    {"", "Shape", v(1, 13, 15, 19, 21), v(13, 15, 19, 21), folded,
     "15: `start` and `end`; 19, 21: types"},
    {"", "Shrink", v(9), v(9), op, ""},
    {"", "Sigmoid", v(1, 6, 13), v(13), op, ""},
    {"", "Sign", v(9, 13), v(13), op, ""},
    {"", "Sin", v(7, 22), v(7, 22), op, "22: types"},
    {"", "Sinh", v(9, 22), v(9, 22), op, "22: types"},
    {"", "Size", v(1, 13, 19, 21), v(13, 19, 21), folded, "19, 21: types"},
    {"", "Slice", v(1, 10, 11, 13), v(13), op, ""},
    {"", "Softmax", v(1, 11, 13), v(13), op,
     "13: `axis` names one dimension (before, the input was coerced to 2-D)"},
    {"", "SoftmaxCrossEntropyLoss", v(12, 13), v(13), op, ""},
    {"", "Softplus", v(1, 22), v(1, 22), op, "22: types"},
    {"", "Softsign", v(1, 22), v(1, 22), op, "22: types"},
    {"", "SpaceToDepth", v(1, 13), v(13), op, ""},
    {"", "Split", v(1, 2, 11, 13, 18), v(13, 18), op,
     "13: `split` is an input; 18: `num_outputs` (an uneven last chunk is "
     "smaller)"},
    {"", "SplitToSequence", v(11), v(11), sequence,
     "`split` known at compile time; slices of the input"},
    {"", "Sqrt", v(1, 6, 13), v(13), op, ""},
    {"", "Squeeze", v(1, 11, 13, 21), v(13, 21), op,
     "13: `axes` is an input; 21: types"},
    {"", "Sub", v(1, 6, 7, 13, 14), v(13, 14), op, "14: types"},
    {"", "Sum", v(1, 6, 8, 13), v(13), op, ""},
    {"", "Tan", v(7, 22), v(7, 22), op, "22: types"},
    {"", "Tanh", v(1, 6, 13), v(13), op, ""},
    {"", "ThresholdedRelu", v(10, 22), v(10, 22), op, "22: types"},
    {"", "Tile", v(1, 6, 13), v(13), op, "`repeats` known at compile time"},
    {"", "TopK", v(1, 10, 11), v(11), op,
     "float or integer input; K known at compile time (above 64: a bitonic "
     "sorting "
     "network, torch.sort); the values come sorted whatever `sorted` says "
     "(ONNX allows any order)"},
    {"", "Transpose", v(1, 13, 21), v(13, 21), op, "21: types"},
    {"", "Trilu", v(14), v(14), op, "`k` known at compile time"},
    {"", "Unsqueeze", v(1, 11, 13, 21), v(13, 21), op,
     "13: `axes` is an input; 21: types"},
    {"", "Where", v(9, 16), v(9, 16), op, "16: types"},
    {"", "Xor", v(1, 7), v(7), op, ""},
    {"ai.onnx.preview.training", "Adagrad", v(1), v(1), training, ""},
    {"ai.onnx.preview.training", "Adam", v(1), v(1), training, ""},
    {"ai.onnx.preview.training", "Gradient", v(1), v(1), training,
     "only in a training_info algorithm graph"},
    {"ai.onnx.preview.training", "Momentum", v(1), v(1), training, ""},
};

bool isDefaultDomain(llvm::StringRef d) { return d.empty() || d == "ai.onnx"; }

bool has(uint32_t set, int64_t version) {
  return version > 0 && version < 32 && (set >> version) & 1;
}

/// The model opsets at which `version` of `op` (any version when 0) is
/// accepted, as "a-b, c".
std::string acceptedOpsets(const OpVersionInfo &op, int64_t version) {
  llvm::SmallVector<std::pair<int64_t, int64_t>> ranges;
  for (int64_t o = 1; o <= kMaxOpset; ++o) {
    if ((version && resolveOpVersion(op, o) != version) || !acceptsOpset(op, o))
      continue;
    if (!ranges.empty() && ranges.back().second == o - 1)
      ranges.back().second = o;
    else
      ranges.push_back({o, o});
  }
  std::string out;
  for (auto [a, b] : ranges) {
    out += out.empty() ? "" : ", ";
    out += std::to_string(a) + (a == b ? "" : "-" + std::to_string(b));
  }
  return out;
}

std::string listVersions(uint32_t set) {
  std::string out;
  for (int64_t version = 1; version <= kMaxOpset; ++version)
    if (has(set, version))
      out += (out.empty() ? "" : ", ") + std::to_string(version);
  return out;
}

} // namespace

llvm::ArrayRef<OpVersionInfo> mlir::tidal::supportedOps() { return kOps; }

const OpVersionInfo *mlir::tidal::findOp(llvm::StringRef domain,
                                         llvm::StringRef opType) {
  for (const OpVersionInfo &op : kOps)
    if (op.opType == opType &&
        (op.domain == domain ||
         (isDefaultDomain(op.domain) && isDefaultDomain(domain))))
      return &op;
  return nullptr;
}

int64_t mlir::tidal::resolveOpVersion(const OpVersionInfo &op, int64_t opset) {
  for (int64_t version = std::min<int64_t>(opset, kMaxOpset); version > 0;
       --version)
    if (has(op.since, version))
      return version;
  return 0;
}

bool mlir::tidal::acceptsOpset(const OpVersionInfo &op, int64_t opset) {
  int64_t version = resolveOpVersion(op, opset);
  if (!has(op.handled, version))
    return false;
  // The training domain has its own versioning (checked by the importer).
  return !isDefaultDomain(op.domain) || opset >= kMinOpset ||
         version == resolveOpVersion(op, kMinOpset);
}

std::string mlir::tidal::unsupportedVersionReason(const OpVersionInfo &op,
                                                  int64_t opset) {
  if (acceptsOpset(op, opset))
    return "";
  std::string name = op.opType.str();
  int64_t version = resolveOpVersion(op, opset);
  // The nearest version tidal reads, the newer one on a tie.
  int64_t ref = version ? version : opset, nearest = 0;
  for (int64_t w = 1; w <= kMaxOpset; ++w)
    if (has(op.handled, w) &&
        (!nearest || std::abs(w - ref) <= std::abs(nearest - ref)))
      nearest = w;
  std::string why;
  if (!version) {
    int64_t first = 1;
    while (first <= kMaxOpset && !has(op.since, first))
      ++first;
    why = name + " is not defined at opset " + std::to_string(opset) +
          " (ONNX adds it at opset " + std::to_string(first) + ")";
  } else if (opset < kMinOpset) {
    why = "opset " + std::to_string(opset) +
          " is outside the supported range " + std::to_string(kMinOpset) + "-" +
          std::to_string(kMaxOpset) + " and " + name + "-" +
          std::to_string(version) + " differs from its opset-" +
          std::to_string(kMinOpset) + " definition";
  } else {
    why = name + "-" + std::to_string(version) + " (opset " +
          std::to_string(opset) + ") is not supported by tidal";
  }
  std::string opsets = acceptedOpsets(op, nearest);
  bool single = opsets.find_first_of("-,") == std::string::npos;
  return why + "; the nearest supported form is " + name + "-" +
         std::to_string(nearest) + " (" + (single ? "opset " : "opsets ") +
         opsets + ")";
}

void mlir::tidal::printSupportedOps(llvm::raw_ostream &os) {
  os << "# Supported ONNX operators\n\n"
     << "Generated by `tidalc --list-ops` from `lib/Importer/OpVersions.cpp`; "
        "do not edit.\n\n"
     << "tidal reads default-domain (ai.onnx) opsets " << kMinOpset << " to "
     << kMaxOpset << ". A model at an older opset is accepted when every "
     << "operator it uses is still defined as at opset " << kMinOpset
     << ". *ONNX versions* are ONNX's since-versions up to opset " << kMaxOpset
     << "; *tidal reads* are the versions the importer "
     << "converts; *opsets* are the model opsets at which a node of the "
     << "operator is accepted. \"types\" marks a version that only adds "
     << "element types. An operator or version outside this table is "
     << "rejected with one line naming the node, the operator, its opset "
     << "and the nearest supported form.\n";
  auto section = [&](llvm::StringRef title, bool defaultDomain) {
    os << "\n## " << title << "\n\n"
       << "| Operator | ONNX versions | tidal reads | Opsets | Imported as "
          "| Changes |\n"
       << "|---|---|---|---|---|---|\n";
    for (const OpVersionInfo &op : kOps) {
      if (isDefaultDomain(op.domain) != defaultDomain)
        continue;
      llvm::StringRef how =
          op.how == OpImport::op            ? "tidal ops"
          : op.how == OpImport::compileTime ? "compile-time constants only"
          : op.how == OpImport::unrolled    ? "subgraphs imported inline"
          : op.how == OpImport::sequence    ? "list of tensors at import"
                                            : "optimizer / gradient ops";
      std::string opsets = defaultDomain ? acceptedOpsets(op, 0) : "1";
      os << "| " << op.opType << " | " << listVersions(op.since) << " | "
         << listVersions(op.handled) << " | " << opsets << " | " << how << " | "
         << op.notes << " |\n";
    }
  };
  section("ai.onnx", true);
  section("ai.onnx.preview.training (version 1)", false);
}
