//===- ConvTransposeConverter.cpp - ONNX ConvTranspose --------------------===//
//
// ConvTranspose is the adjoint of Conv: with weight W [C, M/group, K...] it
// maps X [N, C, D...] to the input side of a convolution with that weight,
// which is what tidal.conv_backward_data computes. So it imports as
// conv_backward_data(X, W) (the oneDNN/cuDNN backward-data kernels, no
// zero-stuffing) plus the bias per channel; its own gradients are a
// convolution (for X) and conv_backward_weights (for W), in ConvRules.cpp.
//
// The output size per spatial axis is ONNX's
//   stride * (in - 1) + output_padding + (kernel - 1) * dilation + 1
//     - pad_begin - pad_end,
// or `output_shape` with the padding that gives it (auto_pad SAME_UPPER
// puts the odd one at the end, otherwise at the beginning). output_padding,
// and an output_shape up to a stride past the reach, become output rows that
// no input reaches (zeros before the bias).
//
//===----------------------------------------------------------------------===//

#include "ConverterSupport.h"

using namespace mlir;
using namespace mlir::tidal;
using namespace mlir::tidal::importer;

namespace {

LogicalResult convertConvTranspose(Node &n) {
  auto ops = inputs(n, 2, 1);
  if (failed(ops))
    return failure();
  auto x = n.type(0), w = n.type(1);
  if (!isa<FloatType>(x.getElementType()))
    return n.fail("needs a float input, got " + typeToString(x));
  if (w.getRank() < 3 || w.getRank() != x.getRank())
    return n.fail("input " + typeToString(x) + " and weight " +
                  typeToString(w) + " must have the same rank, 3 or more");
  const size_t k = w.getRank() - 2;
  llvm::SmallVector<int64_t> kernel(w.getShape().drop_front(2));
  if (auto ks = n.ints("kernel_shape"); ks && *ks != kernel)
    return n.fail("kernel_shape [" + shapeToString(*ks) +
                  "] does not match the weight's spatial shape [" +
                  shapeToString(kernel) + "]");
  const int64_t group = n.i("group", 1);
  if (group <= 0 || x.getDimSize(1) != w.getDimSize(0) ||
      w.getDimSize(0) % group)
    return n.fail("group " + llvm::Twine(group) + " does not fit input " +
                  typeToString(x) + " and weight " + typeToString(w));
  auto orOnes = [&](llvm::StringRef name, size_t size, int64_t value) {
    return n.ints(name).value_or(llvm::SmallVector<int64_t>(size, value));
  };
  llvm::SmallVector<int64_t> strides = orOnes("strides", k, 1),
                             dilations = orOnes("dilations", k, 1),
                             outPad = orOnes("output_padding", k, 0),
                             pads = orOnes("pads", 2 * k, 0);
  if (strides.size() != k || dilations.size() != k || outPad.size() != k ||
      pads.size() != 2 * k)
    return n.fail("strides, dilations, output_padding and pads do not match "
                  "the kernel's " +
                  llvm::Twine(k) + " spatial dims");
  for (size_t d = 0; d < k; ++d) {
    if (strides[d] <= 0 || dilations[d] <= 0)
      return n.fail("strides and dilations must be positive");
    if (outPad[d] < 0 || outPad[d] >= std::max(strides[d], dilations[d]))
      return n.fail("output_padding " + llvm::Twine(outPad[d]) +
                    " must be below the stride or the dilation");
  }
  std::string autoPad = n.s("auto_pad", "NOTSET");
  if (autoPad != "NOTSET" && autoPad != "VALID" && autoPad != "SAME_UPPER" &&
      autoPad != "SAME_LOWER")
    return n.fail("auto_pad '" + autoPad + "' is not valid");
  auto outputShape = n.ints("output_shape");
  if (outputShape && outputShape->size() > k)
    outputShape->erase(outputShape->begin(),
                       outputShape->end() - k); // [N, C, D...] given
  if (outputShape && outputShape->size() != k)
    return n.fail("output_shape has " + llvm::Twine(outputShape->size()) +
                  " values for " + llvm::Twine(k) + " spatial dims");
  llvm::SmallVector<int64_t> shape{x.getDimSize(0), w.getDimSize(1) * group};
  for (size_t d = 0; d < k; ++d) {
    const int64_t in = x.getDimSize(2 + d);
    const int64_t full =
        strides[d] * (in - 1) + outPad[d] + (kernel[d] - 1) * dilations[d] + 1;
    int64_t extra = 0; // rows past the last one any input reaches
    if (outputShape || autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER") {
      const int64_t want = outputShape ? (*outputShape)[d] : in * strides[d];
      // ONNX's split of the total padding, with Python's floor division:
      // an output_shape past the reach gives a negative end pad, zeros.
      const int64_t total = full - want;
      const int64_t half = total >= 0 ? total / 2 : -((-total + 1) / 2);
      const bool upper = autoPad == "SAME_UPPER";
      pads[d] = upper ? half : total - half;
      pads[k + d] = upper ? total - half : half;
      if (pads[k + d] < 0 && pads[d] >= 0) {
        extra = -pads[k + d];
        pads[k + d] = 0;
      }
      if (pads[d] < 0 ||
          outPad[d] + extra >= std::max(strides[d], dilations[d]))
        return n.fail("output size " + llvm::Twine(want) + " on spatial dim " +
                      llvm::Twine(d) +
                      " is more than a stride past what the transposed "
                      "convolution reaches (" +
                      llvm::Twine(full) + ")");
    } else if (autoPad == "VALID") {
      pads[d] = pads[k + d] = 0;
    }
    if (pads[d] < 0 || pads[k + d] < 0)
      return n.fail("pads must not be negative");
    const int64_t out = full - pads[d] - pads[k + d] + extra;
    if (out <= 0)
      return n.fail("the pads leave no output on spatial dim " +
                    llvm::Twine(d));
    shape.push_back(out);
  }
  Composer c{n};
  auto resultType = RankedTensorType::get(shape, x.getElementType());
  Operation *op =
      n.g.create(ConvBackwardDataOp::getOperationName(), {(*ops)[0], (*ops)[1]},
                 {n.arr("strides", strides), n.arr("pads", pads),
                  n.arr("dilations", dilations),
                  n.named("group", n.b().getI64IntegerAttr(group))},
                 1, n.error, {resultType});
  if (!op)
    return failure();
  Value y = op->getResult(0);
  if (ops->size() == 3) {
    auto bias = n.type(2);
    if (bias.getRank() != 1 || bias.getDimSize(0) != shape[1])
      return n.fail("bias must be [" + llvm::Twine(shape[1]) + "], got " +
                    typeToString(bias));
    llvm::SmallVector<int64_t> perChannel(k + 1, 1);
    perChannel[0] = shape[1];
    y = c.binary(AddOp::getOperationName(), y,
                 c.reshape((*ops)[2], perChannel));
  }
  return c.bind(y);
}

} // namespace

void importer::addConvTransposeConverter(llvm::StringMap<Converter> &map) {
  map["ConvTranspose"] = convertConvTranspose;
}
