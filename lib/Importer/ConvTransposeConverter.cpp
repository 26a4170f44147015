//===- ConvTransposeConverter.cpp - ONNX ConvTranspose and Col2Im ---------===//
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
// Col2Im (F.fold) sums each column's block back into the image: the
// transposed convolution of the columns, viewed as [N, C * K, L1...], with
// group C and one-hot kernels (column channel c * K + j adds to channel c
// at block position j). Its gradient is the convolution that extracts the
// blocks again (F.unfold).
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

LogicalResult convertCol2Im(Node &n) {
  auto x = n.floatIn(0);
  if (failed(x))
    return failure();
  RankedTensorType t = n.type(0);
  auto image = n.constInts(1, "image_shape");
  if (failed(image))
    return failure();
  auto block = n.constInts(2, "block_shape");
  if (failed(block))
    return failure();
  const size_t k = image->size();
  if (k == 0 || block->size() != k)
    return n.fail("image_shape and block_shape must have the same, non-zero "
                  "length");
  if (t.getRank() != 3)
    return n.fail("input must be [N, C * prod(block_shape), L], got " +
                  typeToString(t));
  auto orOnes = [&](llvm::StringRef name, size_t size, int64_t value) {
    return n.ints(name).value_or(llvm::SmallVector<int64_t>(size, value));
  };
  llvm::SmallVector<int64_t> strides = orOnes("strides", k, 1),
                             dilations = orOnes("dilations", k, 1),
                             pads = orOnes("pads", 2 * k, 0);
  if (strides.size() != k || dilations.size() != k || pads.size() != 2 * k)
    return n.fail("strides, dilations and pads do not match the " +
                  llvm::Twine(k) + " spatial dims");
  int64_t blockSize = 1;
  for (int64_t b : *block)
    blockSize *= b;
  if (blockSize <= 0 || t.getDimSize(1) % blockSize)
    return n.fail("input channels " + llvm::Twine(t.getDimSize(1)) +
                  " are not a multiple of the block size " +
                  llvm::Twine(blockSize));
  const int64_t channels = t.getDimSize(1) / blockSize;
  llvm::SmallVector<int64_t> grid{t.getDimSize(0), t.getDimSize(1)};
  int64_t positions = 1;
  for (size_t d = 0; d < k; ++d) {
    if (strides[d] <= 0 || dilations[d] <= 0 || pads[d] < 0 ||
        pads[k + d] < 0 || (*image)[d] <= 0 || (*block)[d] <= 0)
      return n.fail("image_shape, block_shape, strides and dilations must be "
                    "positive, pads not negative");
    int64_t span = dilations[d] * ((*block)[d] - 1) + 1;
    int64_t reach = (*image)[d] + pads[d] + pads[k + d] - span;
    if (reach < 0)
      return n.fail("a block spans " + llvm::Twine(span) + " on spatial dim " +
                    llvm::Twine(d) + ", more than the padded image");
    grid.push_back(reach / strides[d] + 1);
    positions *= grid.back();
  }
  if (positions != t.getDimSize(2))
    return n.fail("input has " + llvm::Twine(t.getDimSize(2)) +
                  " blocks, the image and block shapes give " +
                  llvm::Twine(positions));
  // One-hot kernels [C * K, 1, block...].
  llvm::SmallVector<int64_t> wShape{t.getDimSize(1), 1};
  wShape.append(block->begin(), block->end());
  llvm::SmallVector<double> w(t.getDimSize(1) * blockSize, 0.0);
  for (int64_t c = 0; c < channels; ++c)
    for (int64_t j = 0; j < blockSize; ++j)
      w[(c * blockSize + j) * blockSize + j] = 1.0;
  Composer c{n};
  Value weight = c.op(
      ConstantOp::getOperationName(), {},
      {n.named(
          "value",
          makeConstant(RankedTensorType::get(wShape, t.getElementType()), w))});
  Value cols = c.reshape(*x, grid);
  if (!c.ok)
    return failure();
  llvm::SmallVector<int64_t> shape{t.getDimSize(0), channels};
  shape.append(image->begin(), image->end());
  Operation *op = n.g.create(
      ConvBackwardDataOp::getOperationName(), {cols, weight},
      {n.arr("strides", strides), n.arr("pads", pads),
       n.arr("dilations", dilations),
       n.named("group", n.b().getI64IntegerAttr(channels))},
      1, n.error, {RankedTensorType::get(shape, t.getElementType())});
  if (!op)
    return failure();
  return c.bind(op->getResult(0));
}

} // namespace

void importer::addConvTransposeConverter(llvm::StringMap<Converter> &map) {
  map["ConvTranspose"] = convertConvTranspose;
  map["Col2Im"] = convertCol2Im;
}
