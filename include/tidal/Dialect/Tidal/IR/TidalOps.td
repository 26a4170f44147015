//===- TidalOps.td - tidal ops --------------------------------*- tablegen -*-===//
//
// Forward ops of the tidal dialect, one per ONNX operator that tidal trains.
// Shapes are static; attributes are the ONNX ones after the importer has
// resolved defaults, negative axes and auto_pad, so that no later pass needs
// to know ONNX's conventions.
//
//===----------------------------------------------------------------------===//

#ifndef TIDAL_DIALECT_TIDAL_IR_TIDALOPS_TD
#define TIDAL_DIALECT_TIDAL_IR_TIDALOPS_TD

include "tidal/Dialect/Tidal/IR/TidalDialect.td"
include "tidal/Dialect/Tidal/IR/TidalAttrs.td"
include "mlir/IR/BuiltinAttributeInterfaces.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "tidal/Dialect/Tidal/IR/TidalInterfaces.td"

//===----------------------------------------------------------------------===//
// Type constraints
//===----------------------------------------------------------------------===//

def Tidal_Tensor : StaticShapeTensorOf<[AnyType]>;
def Tidal_FloatTensor : StaticShapeTensorOf<[AnyFloat]>;
def Tidal_NumTensor : StaticShapeTensorOf<[AnyFloat, AnyInteger]>;
def Tidal_IndexTensor : StaticShapeTensorOf<[AnyInteger]>;
def Tidal_MaskTensor : StaticShapeTensorOf<[I1]>;

//===----------------------------------------------------------------------===//
// Base classes
//===----------------------------------------------------------------------===//

class Tidal_Op<string mnemonic, list<Trait> traits = []>
    : Op<Tidal_Dialect, mnemonic, traits>;

// An op whose result types follow from its operands and attributes. The
// generic format keeps every type visible so that tests can check shapes.
class Tidal_InferOp<string mnemonic, list<Trait> traits = []>
    : Tidal_Op<mnemonic, !listconcat(traits, [InferTypeOpAdaptor])> {
  let assemblyFormat = [{
    operands attr-dict `:` functional-type(operands, results)
  }];
}

// Element-wise op on one tensor: the result has the operand's type.
class Tidal_UnaryOp<string mnemonic, Type operandType = Tidal_FloatTensor,
                    list<Trait> traits = []>
    : Tidal_Op<mnemonic, !listconcat(traits, [Pure, Elementwise,
                                               SameOperandsAndResultType,
                                               InferTypeOpInterface,
                                               Tidal_InPlaceOpInterface])> {
  let arguments = (ins operandType:$input);
  let results = (outs operandType:$output);
  let assemblyFormat = "$input attr-dict `:` type($input)";
}

// Element-wise op on two tensors with NumPy (multidirectional) broadcasting.
class Tidal_BinaryOp<string mnemonic, list<Trait> traits = []>
    : Tidal_InferOp<mnemonic, !listconcat(traits, [Pure,
                                                    Tidal_InPlaceOpInterface])> {
  let arguments = (ins Tidal_NumTensor:$lhs, Tidal_NumTensor:$rhs);
  let results = (outs Tidal_NumTensor:$output);
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Element-wise arithmetic
//===----------------------------------------------------------------------===//

def Tidal_AddOp : Tidal_BinaryOp<"add", [Commutative]> {
  let summary = "element-wise addition with broadcasting (ONNX Add)";
}
def Tidal_SubOp : Tidal_BinaryOp<"sub"> {
  let summary = "element-wise subtraction with broadcasting (ONNX Sub)";
}
def Tidal_MulOp : Tidal_BinaryOp<"mul", [Commutative]> {
  let summary = "element-wise multiplication with broadcasting (ONNX Mul)";
}
def Tidal_DivOp : Tidal_BinaryOp<"div"> {
  let summary = "element-wise division with broadcasting (ONNX Div)";
}
def Tidal_PowOp : Tidal_BinaryOp<"pow"> {
  let summary = "element-wise power with broadcasting (ONNX Pow)";
  let description = [{
    `lhs ^ rhs`. As in ONNX, the exponent may have a different element type;
    the result has the base's element type.
  }];
}

def Tidal_NegOp : Tidal_UnaryOp<"neg", Tidal_NumTensor> {
  let summary = "element-wise negation (ONNX Neg)";
}
def Tidal_ReluOp : Tidal_UnaryOp<"relu", Tidal_NumTensor> {
  let summary = "max(x, 0) (ONNX Relu)";
}
def Tidal_SigmoidOp : Tidal_UnaryOp<"sigmoid"> {
  let summary = "1 / (1 + exp(-x)) (ONNX Sigmoid)";
}
def Tidal_TanhOp : Tidal_UnaryOp<"tanh"> {
  let summary = "hyperbolic tangent (ONNX Tanh)";
}
def Tidal_SqrtOp : Tidal_UnaryOp<"sqrt"> {
  let summary = "square root (ONNX Sqrt)";
}
def Tidal_ErfOp : Tidal_UnaryOp<"erf", Tidal_NumTensor> {
  let summary = "Gauss error function (ONNX Erf)";
}
def Tidal_GeluOp : Tidal_UnaryOp<"gelu"> {
  let summary = "GELU, 0.5 * x * (1 + erf(x / sqrt(2)))";
  let description = [{
    PyTorch's exact GELU (`approximate='none'`). ONNX before opset 20 has no
    Gelu; `tidal-fuse-gelu` forms it from the exported Div, Erf, Add, Mul,
    Mul chain so that backward keeps only `x`.
  }];
}
def Tidal_ExpOp : Tidal_UnaryOp<"exp"> {
  let summary = "natural exponential (ONNX Exp)";
}
def Tidal_LogOp : Tidal_UnaryOp<"log"> {
  let summary = "natural logarithm (ONNX Log)";
}
def Tidal_IdentityOp : Tidal_UnaryOp<"identity", Tidal_Tensor> {
  let summary = "the input, unchanged (ONNX Identity); a free alias";
}
def Tidal_LeakyReluOp : Tidal_UnaryOp<"leaky_relu"> {
  let summary = "x if x >= 0 else alpha * x (ONNX LeakyRelu)";
  let arguments = (ins Tidal_FloatTensor:$input,
                       DefaultValuedAttr<F32Attr, "0.01">:$alpha);
}

//===----------------------------------------------------------------------===//
// Linear algebra
//===----------------------------------------------------------------------===//

def Tidal_GemmOp : Tidal_InferOp<"gemm", [Pure]> {
  let summary = "alpha * op(A) * op(B) + beta * C (ONNX Gemm)";
  let description = [{
    `A` and `B` are matrices, transposed first when `trans_a`/`trans_b` are
    set; `C`, when present, broadcasts unidirectionally to `[M, N]`.
  }];
  let arguments = (ins Tidal_NumTensor:$a, Tidal_NumTensor:$b,
                       Optional<Tidal_NumTensor>:$c,
                       DefaultValuedAttr<F32Attr, "1.0">:$alpha,
                       DefaultValuedAttr<F32Attr, "1.0">:$beta,
                       DefaultValuedAttr<BoolAttr, "false">:$trans_a,
                       DefaultValuedAttr<BoolAttr, "false">:$trans_b);
  let results = (outs Tidal_NumTensor:$output);
  let hasVerifier = 1;
}

def Tidal_MatMulOp : Tidal_InferOp<"matmul", [Pure]> {
  let summary = "NumPy matmul: batched, broadcasting (ONNX MatMul)";
  let description = [{
    A 1-D operand is promoted to a matrix (a row for `lhs`, a column for
    `rhs`) and the added dimension removed from the result; leading batch
    dimensions broadcast.
  }];
  let arguments = (ins Tidal_NumTensor:$lhs, Tidal_NumTensor:$rhs);
  let results = (outs Tidal_NumTensor:$output);
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Convolution, pooling, normalization
//===----------------------------------------------------------------------===//

def Tidal_ConvOp : Tidal_InferOp<"conv", [Pure]> {
  let summary = "N-d grouped, strided, dilated convolution (ONNX Conv)";
  let description = [{
    `input` is `[N, C, D1..Dk]`, `weight` is `[M, C/group, K1..Kk]`, the
    optional `bias` is `[M]`. `pads` holds the k begin paddings then the k end
    paddings; `auto_pad` has been resolved into them.
  }];
  let arguments = (ins Tidal_FloatTensor:$input, Tidal_FloatTensor:$weight,
                       Optional<Tidal_FloatTensor>:$bias,
                       DenseI64ArrayAttr:$strides,
                       DenseI64ArrayAttr:$pads,
                       DenseI64ArrayAttr:$dilations,
                       DefaultValuedAttr<I64Attr, "1">:$group);
  let results = (outs Tidal_FloatTensor:$output);
  let hasVerifier = 1;
}

def Tidal_MaxPoolOp : Tidal_InferOp<"max_pool", [Pure]> {
  let summary = "N-d max pooling (ONNX MaxPool)";
  let arguments = (ins Tidal_NumTensor:$input,
                       DenseI64ArrayAttr:$kernel_shape,
                       DenseI64ArrayAttr:$strides,
                       DenseI64ArrayAttr:$pads,
                       DenseI64ArrayAttr:$dilations,
                       DefaultValuedAttr<BoolAttr, "false">:$ceil_mode);
  let results = (outs Tidal_NumTensor:$output);
}

def Tidal_AveragePoolOp : Tidal_InferOp<"average_pool", [Pure]> {
  let summary = "N-d average pooling (ONNX AveragePool)";
  let arguments = (ins Tidal_FloatTensor:$input,
                       DenseI64ArrayAttr:$kernel_shape,
                       DenseI64ArrayAttr:$strides,
                       DenseI64ArrayAttr:$pads,
                       DefaultValuedAttr<BoolAttr, "false">:$ceil_mode,
                       DefaultValuedAttr<BoolAttr, "false">:$count_include_pad);
  let results = (outs Tidal_FloatTensor:$output);
}

def Tidal_GlobalAveragePoolOp : Tidal_InferOp<"global_average_pool", [Pure]> {
  let summary = "mean over all spatial dimensions (ONNX GlobalAveragePool)";
  let arguments = (ins Tidal_FloatTensor:$input);
  let results = (outs Tidal_FloatTensor:$output);
}

def Tidal_BatchNormInferenceOp : Tidal_InferOp<"batch_norm_inference", [Pure]> {
  let summary = "batch normalization with running statistics";
  let description = [{
    ONNX BatchNormalization with one output (or `training_mode = 0`):
    `y = scale * (x - mean) / sqrt(var + epsilon) + bias` per channel
    (dimension 1). With `relu = true` (set by tidal-fuse-epilogues), the
    result is `max(y, 0)`: a ReLU fused into the kernel's epilogue; with
    `clip_min` and `clip_max` it is `tidal.clip`'s `min(max(y, clip_min),
    clip_max)` (ReLU6). At most one of the two epilogues.
  }];
  let arguments = (ins Tidal_FloatTensor:$input, Tidal_FloatTensor:$scale,
                       Tidal_FloatTensor:$bias, Tidal_FloatTensor:$mean,
                       Tidal_FloatTensor:$var,
                       DefaultValuedAttr<F32Attr, "1.0e-5">:$epsilon,
                       DefaultValuedAttr<BoolAttr, "false">:$relu,
                       OptionalAttr<F32Attr>:$clip_min,
                       OptionalAttr<F32Attr>:$clip_max);
  let results = (outs Tidal_FloatTensor:$output);
  let hasVerifier = 1;
}

def Tidal_BatchNormTrainingOp : Tidal_InferOp<"batch_norm_training", [Pure,
    DeclareOpInterfaceMethods<Tidal_InPlaceOpInterface,
                              ["getInPlaceOperands"]>]> {
  let summary = "batch normalization with batch statistics (training mode)";
  let description = [{
    Both ONNX training forms: the opset-9..13 five-output one and the
    opset-14+ three-output one with `training_mode = 1`. Normalizes with the
    batch mean and biased batch variance, and returns the updated running
    statistics `running * momentum + batch * (1 - momentum)`, where the
    running variance is updated with the unbiased batch variance as PyTorch
    does, plus the batch mean and biased variance that backward needs.
    With `relu = true` (set by tidal-fuse-epilogues after autodiff), the
    first result is `max(y, 0)`: a ReLU fused into the kernel's epilogue
    (the statistics are the same); with `clip_min` and `clip_max` it is
    `tidal.clip`'s `min(max(y, clip_min), clip_max)` (ReLU6). At most one
    of the two epilogues.

    In place: the new running mean and variance may take the bytes of the
    running mean and variance they replace (the memory planner does so
    when those die here, as BatchNorm state does in a training step).
  }];
  let arguments = (ins Tidal_FloatTensor:$input, Tidal_FloatTensor:$scale,
                       Tidal_FloatTensor:$bias,
                       Tidal_FloatTensor:$running_mean,
                       Tidal_FloatTensor:$running_var,
                       DefaultValuedAttr<F32Attr, "1.0e-5">:$epsilon,
                       DefaultValuedAttr<F32Attr, "0.9">:$momentum,
                       DefaultValuedAttr<BoolAttr, "false">:$relu,
                       OptionalAttr<F32Attr>:$clip_min,
                       OptionalAttr<F32Attr>:$clip_max);
  let results = (outs Tidal_FloatTensor:$output,
                      Tidal_FloatTensor:$new_running_mean,
                      Tidal_FloatTensor:$new_running_var,
                      Tidal_FloatTensor:$batch_mean,
                      Tidal_FloatTensor:$batch_var);
  let hasVerifier = 1;
}

def Tidal_LayerNormOp : Tidal_InferOp<"layer_norm", [Pure]> {
  let summary = "layer normalization over the trailing dims (ONNX LayerNormalization)";
  let description = [{
    Normalizes over dimensions `[axis, rank)`; `scale` and the optional
    `bias` broadcast to that trailing shape. Also returns the mean and the
    inverse standard deviation, shaped like the input with the normalized
    dimensions set to 1, which backward needs.
  }];
  let arguments = (ins Tidal_FloatTensor:$input, Tidal_FloatTensor:$scale,
                       Optional<Tidal_FloatTensor>:$bias,
                       I64Attr:$axis,
                       DefaultValuedAttr<F32Attr, "1.0e-5">:$epsilon);
  let results = (outs Tidal_FloatTensor:$output, Tidal_FloatTensor:$mean,
                      Tidal_FloatTensor:$inv_std_dev);
  let hasVerifier = 1;
}

def Tidal_DropoutOp : Tidal_InferOp<"dropout"> {
  let summary = "random zeroing with scaling 1/(1-ratio) (ONNX Dropout)";
  let description = [{
    With `training` false, or `ratio` 0, this is the identity and the mask is
    all true. Not `Pure`: in training it draws random numbers.

    The mask is a function of (seed, step, `stream`, element), where `seed`
    is the op's own or the run's and `stream` numbers a function's random
    ops (dropout, random_normal, random_uniform) in program order
    (`assignRandomStreams`). Rescheduling keeps `stream`, so a rescheduled
    program draws the same masks.
  }];
  let arguments = (ins Tidal_FloatTensor:$input,
                       DefaultValuedAttr<F32Attr, "0.5">:$ratio,
                       DefaultValuedAttr<BoolAttr, "false">:$training,
                       OptionalAttr<I64Attr>:$seed,
                       OptionalAttr<I64Attr>:$stream);
  let results = (outs Tidal_FloatTensor:$output, Tidal_MaskTensor:$mask);
  let hasVerifier = 1;
}

// Random draws of the result's static shape (no operands). Not `Pure`, like
// dropout: CSE must not merge two draws, nor passes hoist or erase one.
class Tidal_RandomOp<string mnemonic> : Tidal_Op<mnemonic> {
  let results = (outs Tidal_FloatTensor:$output);
  let assemblyFormat = "attr-dict `:` type($output)";
  let hasVerifier = 1;
}

def Tidal_RandomNormalOp : Tidal_RandomOp<"random_normal"> {
  let summary = "normally distributed values (ONNX RandomNormal[Like])";
  let description = [{
    `mean + scale * z` with z standard normal, drawn per element from
    (seed, step, `stream`, element) like dropout's mask (`seed` the op's own
    or the run's, `stream` numbered by `assignRandomStreams`), so that
    recomputing or rescheduling the op draws the same values.
  }];
  let arguments = (ins DefaultValuedAttr<F32Attr, "0.0">:$mean,
                       DefaultValuedAttr<F32Attr, "1.0">:$scale,
                       OptionalAttr<I64Attr>:$seed,
                       OptionalAttr<I64Attr>:$stream);
}

def Tidal_RandomUniformOp : Tidal_RandomOp<"random_uniform"> {
  let summary = "uniformly distributed values in [low, high) (ONNX "
                "RandomUniform[Like], Bernoulli's draw)";
  let description = [{
    `low + (high - low) * u` with u uniform in [0, 1) on a 2^-24 grid, drawn
    per element from (seed, step, `stream`, element) as `random_normal`.
  }];
  let arguments = (ins DefaultValuedAttr<F32Attr, "0.0">:$low,
                       DefaultValuedAttr<F32Attr, "1.0">:$high,
                       OptionalAttr<I64Attr>:$seed,
                       OptionalAttr<I64Attr>:$stream);
}

//===----------------------------------------------------------------------===//
// Softmax and losses
//===----------------------------------------------------------------------===//

def Tidal_SoftmaxOp : Tidal_UnaryOp<"softmax"> {
  let summary = "softmax along one axis (ONNX Softmax, opset 13)";
  let arguments = (ins Tidal_FloatTensor:$input, I64Attr:$axis);
  let hasVerifier = 1;
}

def Tidal_LogSoftmaxOp : Tidal_UnaryOp<"log_softmax"> {
  let summary = "log of softmax along one axis (ONNX LogSoftmax, opset 13)";
  let arguments = (ins Tidal_FloatTensor:$input, I64Attr:$axis);
  let hasVerifier = 1;
}

def Tidal_SoftmaxCrossEntropyLossOp
    : Tidal_InferOp<"softmax_cross_entropy_loss", [Pure]> {
  let summary = "cross entropy of softmax(scores) and class labels";
  let description = [{
    ONNX SoftmaxCrossEntropyLoss: `scores` is `[N, C, d1..dk]`, `labels` is
    `[N, d1..dk]` of class indices, `weights` optionally `[C]`. The loss is a
    scalar for `sum`/`mean`, else shaped like `labels`; `log_prob` is
    log_softmax of the scores along dimension 1.
  }];
  let arguments = (ins Tidal_FloatTensor:$scores, Tidal_IndexTensor:$labels,
                       Optional<Tidal_FloatTensor>:$weights,
                       Tidal_ReductionAttr:$reduction,
                       OptionalAttr<I64Attr>:$ignore_index);
  let results = (outs Tidal_FloatTensor:$loss, Tidal_FloatTensor:$log_prob);
  let hasVerifier = 1;
}

def Tidal_NllLossOp : Tidal_InferOp<"nll_loss", [Pure]> {
  let summary = "negative log likelihood (ONNX NegativeLogLikelihoodLoss)";
  let arguments = (ins Tidal_FloatTensor:$input, Tidal_IndexTensor:$target,
                       Optional<Tidal_FloatTensor>:$weight,
                       Tidal_ReductionAttr:$reduction,
                       OptionalAttr<I64Attr>:$ignore_index);
  let results = (outs Tidal_FloatTensor:$loss);
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Data movement and shape
//===----------------------------------------------------------------------===//

def Tidal_ConstantOp : Tidal_InferOp<"constant", [Pure, ConstantLike]> {
  let summary = "a compile-time tensor (ONNX Constant)";
  let arguments = (ins ElementsAttr:$value);
  let results = (outs Tidal_Tensor:$output);
  let assemblyFormat = "attr-dict $value";
  let hasFolder = 1;
}

def Tidal_ReshapeOp : Tidal_InferOp<"reshape", [Pure]> {
  let summary = "the same elements in a new static shape (ONNX Reshape)";
  let description = [{
    `shape` is fully resolved: ONNX's 0 and -1 entries have been replaced.
    A free alias in the memory plan.
  }];
  let arguments = (ins Tidal_Tensor:$input, DenseI64ArrayAttr:$shape);
  let results = (outs Tidal_Tensor:$output);
}

def Tidal_FlattenOp : Tidal_InferOp<"flatten", [Pure]> {
  let summary = "reshape to 2-D at `axis` (ONNX Flatten)";
  let arguments = (ins Tidal_Tensor:$input, I64Attr:$axis);
  let results = (outs Tidal_Tensor:$output);
}

def Tidal_SqueezeOp : Tidal_InferOp<"squeeze", [Pure]> {
  let summary = "remove size-1 dimensions (ONNX Squeeze)";
  let arguments = (ins Tidal_Tensor:$input, DenseI64ArrayAttr:$axes);
  let results = (outs Tidal_Tensor:$output);
}

def Tidal_UnsqueezeOp : Tidal_InferOp<"unsqueeze", [Pure]> {
  let summary = "insert size-1 dimensions (ONNX Unsqueeze)";
  let description = [{ `axes` index the result's dimensions. }];
  let arguments = (ins Tidal_Tensor:$input, DenseI64ArrayAttr:$axes);
  let results = (outs Tidal_Tensor:$output);
}

def Tidal_TransposeOp : Tidal_InferOp<"transpose", [Pure]> {
  let summary = "permute dimensions (ONNX Transpose)";
  let arguments = (ins Tidal_Tensor:$input, DenseI64ArrayAttr:$perm);
  let results = (outs Tidal_Tensor:$output);
}

def Tidal_ConcatOp : Tidal_InferOp<"concat", [Pure]> {
  let summary = "join tensors along an axis (ONNX Concat)";
  let arguments = (ins Variadic<Tidal_Tensor>:$inputs, I64Attr:$axis);
  let results = (outs Tidal_Tensor:$output);
}

def Tidal_SplitOp : Tidal_InferOp<"split", [Pure]> {
  let summary = "cut a tensor along an axis into parts (ONNX Split)";
  let arguments = (ins Tidal_Tensor:$input, I64Attr:$axis,
                       DenseI64ArrayAttr:$sizes);
  let results = (outs Variadic<Tidal_Tensor>:$outputs);
}

def Tidal_SliceOp : Tidal_InferOp<"slice", [Pure]> {
  let summary = "strided slice (ONNX Slice)";
  let description = [{
    One entry per dimension, already clamped: dimension `i` takes indices
    `starts[i], starts[i] + steps[i], ...` up to, not including, `ends[i]`.
    With a negative step `ends[i]` may be -1 (through index 0).
  }];
  let arguments = (ins Tidal_Tensor:$input, DenseI64ArrayAttr:$starts,
                       DenseI64ArrayAttr:$ends, DenseI64ArrayAttr:$steps);
  let results = (outs Tidal_Tensor:$output);
}

def Tidal_GatherOp : Tidal_InferOp<"gather", [Pure]> {
  let summary = "take slices along an axis by index (ONNX Gather)";
  let description = [{
    The result shape is `data[:axis] + indices + data[axis+1:]`. Negative
    indices count from the end, as in ONNX. Embeddings are a gather on axis 0.
    With `padding_index` (axis 0 only: nn.Embedding's `padding_idx`, which
    ONNX does not keep; `tidalc --embedding-padding`) the gradient leaves
    out the positions whose index is that row, as PyTorch's: the row is
    read but not trained through this lookup.
  }];
  let arguments = (ins Tidal_Tensor:$data, Tidal_IndexTensor:$indices,
                       I64Attr:$axis, OptionalAttr<I64Attr>:$padding_index);
  let results = (outs Tidal_Tensor:$output);
  let builders = [
    OpBuilder<(ins "Type":$output, "Value":$data, "Value":$indices,
                   "IntegerAttr":$axis), [{
      build($_builder, $_state, output, data, indices, axis, IntegerAttr());
    }]>
  ];
  let hasVerifier = 1;
}

def Tidal_ScatterExtremeOp : Tidal_InferOp<"scatter_extreme", [Pure]> {
  let summary = "scatter by index keeping the largest or smallest value "
                "(ONNX ScatterElements/ScatterND reduction max, min)";
  let description = [{
    `updates` has gather's output shape, `data[:axis] + indices +
    data[axis+1:]`. The result is `data` with each position `k` along
    `axis` replaced by the largest (`largest`; else the smallest) of its
    value and the updates whose index is `k` (PyTorch's `scatter_reduce`
    amax/amin with `include_self`); a NaN among them is the result.
    Negative indices count from the end. The gradient goes to every
    element equal to the result, shared evenly among them, as PyTorch's.
  }];
  let arguments = (ins Tidal_FloatTensor:$data, Tidal_IndexTensor:$indices,
                       Tidal_FloatTensor:$updates, I64Attr:$axis,
                       BoolAttr:$largest);
  let results = (outs Tidal_FloatTensor:$output);
  let hasVerifier = 1;
}

include "tidal/Dialect/Tidal/IR/TidalGradOps.td"
include "tidal/Dialect/Tidal/IR/TidalActivationOps.td"
include "tidal/Dialect/Tidal/IR/TidalLogicOps.td"
include "tidal/Dialect/Tidal/IR/TidalReduceOps.td"
include "tidal/Dialect/Tidal/IR/TidalPadOps.td"
include "tidal/Dialect/Tidal/IR/TidalOptimizerOps.td"
include "tidal/Dialect/Tidal/IR/TidalMemoryOps.td"
include "tidal/Dialect/Tidal/IR/TidalCommOps.td"
include "tidal/Dialect/Tidal/IR/TidalFusedOps.td"

#endif // TIDAL_DIALECT_TIDAL_IR_TIDALOPS_TD
