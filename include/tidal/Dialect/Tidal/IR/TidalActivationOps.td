//===- TidalActivationOps.td - activations and element-wise math -*- tablegen -*-===//
//
// The activation family (ONNX Clip, HardSigmoid, HardSwish, Elu, Selu, Celu,
// Softplus, Softsign, Mish) with their backward ops, and the element-wise
// math ops (Abs, Reciprocal, Sin, Cos, Tan, Asin, Acos, Atan, Sinh, Cosh,
// Asinh, Acosh, Atanh, Sign, Floor, Ceil, Round). The
// formulas, PyTorch's, are in runtime/src/cpu/activation_math.h and
// docs/dialect.md; every backward op takes the forward input as `saved`.
//
//===----------------------------------------------------------------------===//

#ifndef TIDAL_DIALECT_TIDAL_IR_TIDALACTIVATIONOPS_TD
#define TIDAL_DIALECT_TIDAL_IR_TIDALACTIVATIONOPS_TD

//===----------------------------------------------------------------------===//
// Forward
//===----------------------------------------------------------------------===//

def Tidal_ClipOp : Tidal_UnaryOp<"clip"> {
  let summary = "min(max(x, min), max) (ONNX Clip; ReLU6, Hardtanh, clamp)";
  let description = [{
    The bounds are compile-time values (the importer takes ONNX's min/max
    inputs, or -inf/+inf when absent). NaN stays NaN. The backward passes
    the gradient where `min < x < max` (Hardtanh's rule).
  }];
  let arguments = (ins Tidal_FloatTensor:$input, F32Attr:$min, F32Attr:$max);
  let hasVerifier = 1;
}
def Tidal_HardSigmoidOp : Tidal_UnaryOp<"hard_sigmoid"> {
  let summary = "max(0, min(1, alpha * x + beta)) (ONNX HardSigmoid)";
  let arguments = (ins Tidal_FloatTensor:$input,
                       DefaultValuedAttr<F32Attr, "0.2">:$alpha,
                       DefaultValuedAttr<F32Attr, "0.5">:$beta);
}
def Tidal_HardSwishOp : Tidal_UnaryOp<"hard_swish"> {
  let summary = "x * min(max(x + 3, 0), 6) / 6 (ONNX HardSwish)";
}
def Tidal_EluOp : Tidal_UnaryOp<"elu"> {
  let summary = "x > 0 ? x : alpha * (exp(x) - 1) (ONNX Elu)";
  let arguments = (ins Tidal_FloatTensor:$input,
                       DefaultValuedAttr<F32Attr, "1.0">:$alpha);
}
def Tidal_SeluOp : Tidal_UnaryOp<"selu"> {
  let summary = "gamma * (x > 0 ? x : alpha * (exp(x) - 1)) (ONNX Selu)";
  let arguments = (ins Tidal_FloatTensor:$input,
      DefaultValuedAttr<F32Attr, "1.67326319217681884765625">:$alpha,
      DefaultValuedAttr<F32Attr, "1.05070102214813232421875">:$gamma);
}
def Tidal_CeluOp : Tidal_UnaryOp<"celu"> {
  let summary = "x > 0 ? x : alpha * (exp(x / alpha) - 1) (ONNX Celu)";
  let arguments = (ins Tidal_FloatTensor:$input,
                       DefaultValuedAttr<F32Attr, "1.0">:$alpha);
  let hasVerifier = 1;
}
def Tidal_SoftplusOp : Tidal_UnaryOp<"softplus"> {
  let summary = "log(1 + exp(x)), x itself beyond 20 (ONNX Softplus)";
}
def Tidal_SoftsignOp : Tidal_UnaryOp<"softsign"> {
  let summary = "x / (1 + |x|) (ONNX Softsign)";
}
def Tidal_MishOp : Tidal_UnaryOp<"mish"> {
  let summary = "x * tanh(softplus(x)) (ONNX Mish)";
}
def Tidal_AbsOp : Tidal_UnaryOp<"abs", Tidal_NumTensor> {
  let summary = "absolute value (ONNX Abs)";
}
def Tidal_ReciprocalOp : Tidal_UnaryOp<"reciprocal"> {
  let summary = "1 / x (ONNX Reciprocal)";
}
def Tidal_SinOp : Tidal_UnaryOp<"sin"> {
  let summary = "sine (ONNX Sin)";
}
def Tidal_CosOp : Tidal_UnaryOp<"cos"> {
  let summary = "cosine (ONNX Cos)";
}
def Tidal_TanOp : Tidal_UnaryOp<"tan"> {
  let summary = "tangent (ONNX Tan)";
}
def Tidal_AsinOp : Tidal_UnaryOp<"asin"> {
  let summary = "arcsine (ONNX Asin)";
}
def Tidal_AcosOp : Tidal_UnaryOp<"acos"> {
  let summary = "arccosine (ONNX Acos)";
}
def Tidal_AtanOp : Tidal_UnaryOp<"atan"> {
  let summary = "arctangent (ONNX Atan)";
}
def Tidal_SinhOp : Tidal_UnaryOp<"sinh"> {
  let summary = "hyperbolic sine (ONNX Sinh)";
}
def Tidal_CoshOp : Tidal_UnaryOp<"cosh"> {
  let summary = "hyperbolic cosine (ONNX Cosh)";
}
def Tidal_AsinhOp : Tidal_UnaryOp<"asinh"> {
  let summary = "inverse hyperbolic sine (ONNX Asinh)";
}
def Tidal_AcoshOp : Tidal_UnaryOp<"acosh"> {
  let summary = "inverse hyperbolic cosine (ONNX Acosh)";
}
def Tidal_AtanhOp : Tidal_UnaryOp<"atanh"> {
  let summary = "inverse hyperbolic tangent (ONNX Atanh)";
}
def Tidal_SignOp : Tidal_UnaryOp<"sign", Tidal_NumTensor> {
  let summary = "-1, 0 or 1 by the sign of x (ONNX Sign); zero gradient";
}
def Tidal_FloorOp : Tidal_UnaryOp<"floor"> {
  let summary = "round down (ONNX Floor); zero gradient";
}
def Tidal_CeilOp : Tidal_UnaryOp<"ceil"> {
  let summary = "round up (ONNX Ceil); zero gradient";
}
def Tidal_RoundOp : Tidal_UnaryOp<"round"> {
  let summary = "round half to even (ONNX Round); zero gradient";
}

//===----------------------------------------------------------------------===//
// Backward: grad_input from (grad, saved = the forward input)
//===----------------------------------------------------------------------===//

def Tidal_ClipBackwardOp : Tidal_ElementwiseGradOp<"clip_backward"> {
  let summary = "grad where min < saved < max, else 0";
  let description = [{
    `saved` is the clip's output (autodiff) or its input: `min < y < max`
    exactly where `min < x < max`, so either gives the same mask.
  }];
  let arguments = (ins Tidal_FloatTensor:$grad, Tidal_FloatTensor:$saved,
                       F32Attr:$min, F32Attr:$max);
}
def Tidal_HardSigmoidBackwardOp
    : Tidal_ElementwiseGradOp<"hard_sigmoid_backward"> {
  let summary = "alpha * grad where 0 < alpha * x + beta < 1, else 0";
  let arguments = (ins Tidal_FloatTensor:$grad, Tidal_FloatTensor:$saved,
                       DefaultValuedAttr<F32Attr, "0.2">:$alpha,
                       DefaultValuedAttr<F32Attr, "0.5">:$beta);
}
def Tidal_HardSwishBackwardOp
    : Tidal_ElementwiseGradOp<"hard_swish_backward"> {
  let summary = "0 for x < -3, grad * (x / 3 + 1/2) for x <= 3, else grad";
}
def Tidal_EluBackwardOp : Tidal_ElementwiseGradOp<"elu_backward"> {
  let summary = "grad for x > 0, else grad * alpha * exp(x)";
  let arguments = (ins Tidal_FloatTensor:$grad, Tidal_FloatTensor:$saved,
                       DefaultValuedAttr<F32Attr, "1.0">:$alpha);
}
def Tidal_SeluBackwardOp : Tidal_ElementwiseGradOp<"selu_backward"> {
  let summary = "grad * gamma for x > 0, else grad * gamma * alpha * exp(x)";
  let arguments = (ins Tidal_FloatTensor:$grad, Tidal_FloatTensor:$saved,
      DefaultValuedAttr<F32Attr, "1.67326319217681884765625">:$alpha,
      DefaultValuedAttr<F32Attr, "1.05070102214813232421875">:$gamma);
}
def Tidal_CeluBackwardOp : Tidal_ElementwiseGradOp<"celu_backward"> {
  let summary = "grad for x > 0, else grad * exp(x / alpha)";
  let arguments = (ins Tidal_FloatTensor:$grad, Tidal_FloatTensor:$saved,
                       DefaultValuedAttr<F32Attr, "1.0">:$alpha);
}
def Tidal_SoftplusBackwardOp : Tidal_ElementwiseGradOp<"softplus_backward"> {
  let summary = "grad * sigmoid(x), grad itself beyond 20";
}
def Tidal_SoftsignBackwardOp : Tidal_ElementwiseGradOp<"softsign_backward"> {
  let summary = "grad / (1 + |x|)^2";
}
def Tidal_MishBackwardOp : Tidal_ElementwiseGradOp<"mish_backward"> {
  let summary = "grad * (t + x * sigmoid(x) * (1 - t^2)), t = tanh(softplus(x))";
}

#endif // TIDAL_DIALECT_TIDAL_IR_TIDALACTIVATIONOPS_TD
