//===- TidalGradOps.td - tidal gradient ops -------------------*- tablegen -*-===//
//
// The backward ops that `--tidal-autodiff` emits. Each one is the
// vector-Jacobian product of one forward op for the operands that have a
// gradient; they take what the forward pass saved (its input, its output or
// statistics) explicitly, so that liveness sees every saved tensor. Gradients
// that are plain arithmetic (Add, Mul, MatMul, Gemm, Reshape, ...) are built
// from forward ops instead.
//
//===----------------------------------------------------------------------===//

#ifndef TIDAL_DIALECT_TIDAL_IR_TIDALGRADOPS_TD
#define TIDAL_DIALECT_TIDAL_IR_TIDALGRADOPS_TD

//===----------------------------------------------------------------------===//
// The gradient marker
//===----------------------------------------------------------------------===//

def Tidal_GradientOp : Tidal_InferOp<"gradient", [Pure]> {
  let summary = "d(y)/d(xs), expanded by --tidal-autodiff (ONNX Gradient)";
  let description = [{
    The gradient of the scalar `y` with respect to each of `xs`, which must
    be function arguments that `y` is computed from. The importer creates it
    for the `Gradient` op of an ONNX `training_info` algorithm;
    `--tidal-autodiff` replaces it with the backward graph.
  }];
  let arguments = (ins Tidal_FloatTensor:$y, Variadic<Tidal_FloatTensor>:$xs);
  let results = (outs Variadic<Tidal_FloatTensor>:$grads);
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Element-wise backward ops: `grad_input = grad * f'(saved)`
//===----------------------------------------------------------------------===//

class Tidal_ElementwiseGradOp<string mnemonic>
    : Tidal_Op<mnemonic, [Pure, Elementwise, SameOperandsAndResultType,
                          InferTypeOpInterface, Tidal_InPlaceOpInterface]> {
  let arguments = (ins Tidal_FloatTensor:$grad,
                       Tidal_FloatTensor:$saved);
  let results = (outs Tidal_FloatTensor:$grad_input);
  let assemblyFormat = "$grad `,` $saved attr-dict `:` type($grad)";
}

def Tidal_ReluBackwardOp : Tidal_ElementwiseGradOp<"relu_backward"> {
  let summary = "grad where relu's output is positive, else 0";
  let description = [{ `saved` is the forward output (PyTorch's rule). }];
}
def Tidal_LeakyReluBackwardOp
    : Tidal_ElementwiseGradOp<"leaky_relu_backward"> {
  let summary = "grad if input > 0 else alpha * grad";
  let arguments = (ins Tidal_FloatTensor:$grad, Tidal_FloatTensor:$saved,
                       DefaultValuedAttr<F32Attr, "0.01">:$alpha);
}
def Tidal_SigmoidBackwardOp
    : Tidal_ElementwiseGradOp<"sigmoid_backward"> {
  let summary = "grad * y * (1 - y), y the forward output";
}
def Tidal_TanhBackwardOp : Tidal_ElementwiseGradOp<"tanh_backward"> {
  let summary = "grad * (1 - y^2), y the forward output";
}
def Tidal_GeluBackwardOp : Tidal_ElementwiseGradOp<"gelu_backward"> {
  let summary = "grad * (Phi(x) + x * phi(x)), x the forward input";
  let description = [{
    `Phi(x) = 0.5 * (1 + erf(x / sqrt(2)))`, `phi(x) = exp(-x^2 / 2) /
    sqrt(2 pi)`.
  }];
}
def Tidal_ErfBackwardOp : Tidal_ElementwiseGradOp<"erf_backward"> {
  let summary = "grad * 2/sqrt(pi) * exp(-x^2), x the forward input";
}

def Tidal_DropoutBackwardOp
    : Tidal_InferOp<"dropout_backward", [Pure, Tidal_InPlaceOpInterface]> {
  let summary = "grad * mask / (1 - ratio)";
  let arguments = (ins Tidal_FloatTensor:$grad, Tidal_MaskTensor:$mask,
                       F32Attr:$ratio);
  let results = (outs Tidal_FloatTensor:$grad_input);
  let hasVerifier = 1;
}

class Tidal_SoftmaxGradOp<string mnemonic>
    : Tidal_Op<mnemonic, [Pure, SameOperandsAndResultType,
                          InferTypeOpInterface]> {
  let arguments = (ins Tidal_FloatTensor:$grad, Tidal_FloatTensor:$output,
                       I64Attr:$axis);
  let results = (outs Tidal_FloatTensor:$grad_input);
  let assemblyFormat = "$grad `,` $output attr-dict `:` type($grad)";
  let hasVerifier = 1;
}
def Tidal_SoftmaxBackwardOp : Tidal_SoftmaxGradOp<"softmax_backward"> {
  let summary = "y * (grad - sum(grad * y, axis)), y the softmax output";
}
def Tidal_LogSoftmaxBackwardOp : Tidal_SoftmaxGradOp<"log_softmax_backward"> {
  let summary = "grad - exp(y) * sum(grad, axis), y the log_softmax output";
}

//===----------------------------------------------------------------------===//
// Shape-changing backward ops: the result type is the forward input's
//===----------------------------------------------------------------------===//

// An op whose result type cannot be inferred from its operands (a strided
// window loses the input's exact extent); the verifier checks it instead.
class Tidal_TypedOp<string mnemonic, list<Trait> traits = []>
    : Tidal_Op<mnemonic, traits> {
  let assemblyFormat = [{
    operands attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Tidal_BroadcastToOp : Tidal_TypedOp<"broadcast_to", [Pure]> {
  let summary = "repeat a tensor to the result shape (ONNX Expand)";
  let description = [{
    Unidirectional broadcast: `input` must broadcast to the result's shape.
    The backward of reductions and of broadcasting operands.
  }];
  let arguments = (ins Tidal_Tensor:$input);
  let results = (outs Tidal_Tensor:$output);
}

def Tidal_ConvBackwardDataOp : Tidal_TypedOp<"conv_backward_data", [Pure]> {
  let summary = "gradient of a convolution with respect to its input";
  let arguments = (ins Tidal_FloatTensor:$grad, Tidal_FloatTensor:$weight,
                       DenseI64ArrayAttr:$strides, DenseI64ArrayAttr:$pads,
                       DenseI64ArrayAttr:$dilations,
                       DefaultValuedAttr<I64Attr, "1">:$group);
  let results = (outs Tidal_FloatTensor:$grad_input);
}

def Tidal_ConvBackwardWeightsOp
    : Tidal_TypedOp<"conv_backward_weights", [Pure]> {
  let summary = "gradient of a convolution with respect to its weight";
  let arguments = (ins Tidal_FloatTensor:$grad, Tidal_FloatTensor:$input,
                       DenseI64ArrayAttr:$strides, DenseI64ArrayAttr:$pads,
                       DenseI64ArrayAttr:$dilations,
                       DefaultValuedAttr<I64Attr, "1">:$group);
  let results = (outs Tidal_FloatTensor:$grad_weight);
}

def Tidal_MaxPoolBackwardOp : Tidal_TypedOp<"max_pool_backward", [Pure]> {
  let summary = "routes grad to the first maximum of each window";
  let description = [{
    The forward input is saved; the maximum's position is recomputed from it
    (ties go to the first element in window order, as PyTorch does).
  }];
  let arguments = (ins Tidal_FloatTensor:$grad, Tidal_FloatTensor:$input,
                       DenseI64ArrayAttr:$kernel_shape,
                       DenseI64ArrayAttr:$strides, DenseI64ArrayAttr:$pads,
                       DenseI64ArrayAttr:$dilations,
                       DefaultValuedAttr<BoolAttr, "false">:$ceil_mode);
  let results = (outs Tidal_FloatTensor:$grad_input);
}

def Tidal_AveragePoolBackwardOp
    : Tidal_TypedOp<"average_pool_backward", [Pure]> {
  let summary = "spreads grad evenly over each window";
  let arguments = (ins Tidal_FloatTensor:$grad,
                       DenseI64ArrayAttr:$kernel_shape,
                       DenseI64ArrayAttr:$strides, DenseI64ArrayAttr:$pads,
                       DefaultValuedAttr<BoolAttr, "false">:$ceil_mode,
                       DefaultValuedAttr<BoolAttr, "false">:$count_include_pad);
  let results = (outs Tidal_FloatTensor:$grad_input);
}

def Tidal_SliceBackwardOp : Tidal_TypedOp<"slice_backward", [Pure]> {
  let summary = "scatters grad into zeros at the slice's positions";
  let arguments = (ins Tidal_FloatTensor:$grad, DenseI64ArrayAttr:$starts,
                       DenseI64ArrayAttr:$ends, DenseI64ArrayAttr:$steps);
  let results = (outs Tidal_FloatTensor:$grad_input);
}

def Tidal_GatherBackwardOp : Tidal_TypedOp<"gather_backward", [Pure]> {
  let summary = "scatter-adds grad into zeros at the gathered indices";
  let arguments = (ins Tidal_FloatTensor:$grad, Tidal_IndexTensor:$indices,
                       I64Attr:$axis);
  let results = (outs Tidal_FloatTensor:$grad_input);
}

//===----------------------------------------------------------------------===//
// Normalization and loss backward ops
//===----------------------------------------------------------------------===//

def Tidal_BatchNormBackwardOp : Tidal_InferOp<"batch_norm_backward", [Pure]> {
  let summary = "gradients of training-mode batch normalization";
  let description = [{
    With `xhat = (x - batch_mean) / sqrt(batch_var + epsilon)` and `M`
    elements per channel: `grad_bias = sum(grad)`, `grad_scale =
    sum(grad * xhat)`, `grad_input = scale / sqrt(batch_var + epsilon) *
    (grad - grad_bias / M - xhat * grad_scale / M)`; sums over every
    dimension but 1. `batch_var` is the biased variance.
  }];
  let arguments = (ins Tidal_FloatTensor:$grad, Tidal_FloatTensor:$input,
                       Tidal_FloatTensor:$scale, Tidal_FloatTensor:$batch_mean,
                       Tidal_FloatTensor:$batch_var,
                       DefaultValuedAttr<F32Attr, "1.0e-5">:$epsilon);
  let results = (outs Tidal_FloatTensor:$grad_input,
                      Tidal_FloatTensor:$grad_scale,
                      Tidal_FloatTensor:$grad_bias);
  let hasVerifier = 1;
}

def Tidal_LayerNormBackwardOp : Tidal_InferOp<"layer_norm_backward", [Pure]> {
  let summary = "gradients of layer normalization";
  let description = [{
    Over the normalized dims `[axis, rank)` with `K` elements and `xhat =
    (x - mean) * inv_std_dev`: `grad_input = inv_std_dev * (g - mean(g) -
    xhat * mean(g * xhat))` with `g = grad * scale`; `grad_scale` and
    `grad_bias` sum `grad * xhat` and `grad` over the leading dims and take
    the scale's shape.
  }];
  let arguments = (ins Tidal_FloatTensor:$grad, Tidal_FloatTensor:$input,
                       Tidal_FloatTensor:$scale, Tidal_FloatTensor:$mean,
                       Tidal_FloatTensor:$inv_std_dev, I64Attr:$axis);
  let results = (outs Tidal_FloatTensor:$grad_input,
                      Tidal_FloatTensor:$grad_scale,
                      Tidal_FloatTensor:$grad_bias);
  let hasVerifier = 1;
}

def Tidal_SoftmaxCrossEntropyLossBackwardOp
    : Tidal_InferOp<"softmax_cross_entropy_loss_backward", [Pure]> {
  let summary = "gradient of softmax cross entropy for the scores";
  let description = [{
    `grad_scores[n, c, d] = g[n, d] * w[label] * (exp(log_prob[n, c, d]) -
    (c == label))`, zero where the label is `ignore_index`; `g` is
    `grad_loss` spread by the reduction (divided by the sum of the applied
    weights for `mean`).
  }];
  let arguments = (ins Tidal_FloatTensor:$grad_loss,
                       Tidal_FloatTensor:$log_prob, Tidal_IndexTensor:$labels,
                       Optional<Tidal_FloatTensor>:$weights,
                       Tidal_ReductionAttr:$reduction,
                       OptionalAttr<I64Attr>:$ignore_index);
  let results = (outs Tidal_FloatTensor:$grad_scores);
  let hasVerifier = 1;
}

def Tidal_NllLossBackwardOp : Tidal_TypedOp<"nll_loss_backward", [Pure]> {
  let summary = "gradient of the negative log likelihood for its input";
  let description = [{
    `grad_input[n, c, d] = -g[n, d] * w[target] * (c == target)`, zero where
    the target is `ignore_index`; `g` as for the cross entropy.
  }];
  let arguments = (ins Tidal_FloatTensor:$grad_loss,
                       Tidal_IndexTensor:$target,
                       Optional<Tidal_FloatTensor>:$weight,
                       Tidal_ReductionAttr:$reduction,
                       OptionalAttr<I64Attr>:$ignore_index);
  let results = (outs Tidal_FloatTensor:$grad_input);
}

#endif // TIDAL_DIALECT_TIDAL_IR_TIDALGRADOPS_TD
