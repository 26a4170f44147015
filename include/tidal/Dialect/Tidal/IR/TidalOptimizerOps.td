//===- TidalOptimizerOps.td - tidal optimizer update ops ------*- tablegen -*-===//
//
// One op per parameter update. The torch.optim family follows PyTorch 1.13's
// single-tensor formulas (docs/optimizers.md); the onnx_* family follows the
// ai.onnx.preview.training operators exactly. Hyper-parameters are f64
// attributes, as PyTorch holds them in Python floats.
//
//===----------------------------------------------------------------------===//

#ifndef TIDAL_DIALECT_TIDAL_IR_TIDALOPTIMIZEROPS_TD
#define TIDAL_DIALECT_TIDAL_IR_TIDALOPTIMIZEROPS_TD

class Tidal_UpdateOp<string mnemonic, list<Trait> traits = []>
    : Tidal_InferOp<mnemonic, !listconcat(traits, [Pure])> {
  let hasVerifier = 1;
}

def Tidal_SgdUpdateOp : Tidal_UpdateOp<"sgd_update", [DeclareOpInterfaceMethods<
    Tidal_InPlaceOpInterface, ["getInPlaceOperands"]>]> {
  let summary = "torch.optim.SGD without momentum";
  let description = [{
    `d = grad + weight_decay * param; param' = param - lr * d`.
  }];
  let arguments = (ins Tidal_FloatTensor:$param, Tidal_FloatTensor:$grad,
                       F64Attr:$lr, DefaultValuedAttr<F64Attr, "0.0">:$weight_decay);
  let results = (outs Tidal_FloatTensor:$new_param);
}

def Tidal_SgdMomentumUpdateOp : Tidal_UpdateOp<"sgd_momentum_update", [DeclareOpInterfaceMethods<
    Tidal_InPlaceOpInterface, ["getInPlaceOperands"]>]> {
  let summary = "torch.optim.SGD with momentum (and Nesterov)";
  let description = [{
    `d = grad + weight_decay * param; buf' = momentum * buf + (1 - dampening)
    * d` (on the first step PyTorch sets `buf' = d`; the buffer starts at
    zero, which is the same when dampening is 0); `d = d + momentum * buf'`
    if `nesterov`, else `d = buf'`; `param' = param - lr * d`.
  }];
  let arguments = (ins Tidal_FloatTensor:$param, Tidal_FloatTensor:$grad,
                       Tidal_FloatTensor:$momentum_buffer, F64Attr:$lr,
                       F64Attr:$momentum,
                       DefaultValuedAttr<F64Attr, "0.0">:$dampening,
                       DefaultValuedAttr<F64Attr, "0.0">:$weight_decay,
                       DefaultValuedAttr<BoolAttr, "false">:$nesterov);
  let results = (outs Tidal_FloatTensor:$new_param,
                      Tidal_FloatTensor:$new_momentum_buffer);
}

def Tidal_AdamUpdateOp : Tidal_UpdateOp<"adam_update", [DeclareOpInterfaceMethods<
    Tidal_InPlaceOpInterface, ["getInPlaceOperands"]>]> {
  let summary = "torch.optim.Adam, or AdamW with decoupled weight decay";
  let description = [{
    `step` is the step number after this update (1 on the first step). Adam:
    `g = grad + weight_decay * param`; AdamW (`decoupled`): `param *= 1 - lr
    * weight_decay`, `g = grad`. Then `m' = beta1 * m + (1 - beta1) * g`,
    `v' = beta2 * v + (1 - beta2) * g * g`, `param' = param - lr / (1 -
    beta1^step) * m' / (sqrt(v') / sqrt(1 - beta2^step) + eps)`.
  }];
  let arguments = (ins Tidal_FloatTensor:$param, Tidal_FloatTensor:$grad,
                       Tidal_FloatTensor:$exp_avg,
                       Tidal_FloatTensor:$exp_avg_sq,
                       Tidal_IndexTensor:$step,
                       DefaultValuedAttr<F64Attr, "0.001">:$lr,
                       DefaultValuedAttr<F64Attr, "0.9">:$beta1,
                       DefaultValuedAttr<F64Attr, "0.999">:$beta2,
                       DefaultValuedAttr<F64Attr, "1.0e-8">:$eps,
                       DefaultValuedAttr<F64Attr, "0.0">:$weight_decay,
                       DefaultValuedAttr<BoolAttr, "false">:$decoupled);
  let results = (outs Tidal_FloatTensor:$new_param,
                      Tidal_FloatTensor:$new_exp_avg,
                      Tidal_FloatTensor:$new_exp_avg_sq);
}

//===----------------------------------------------------------------------===//
// ai.onnx.preview.training, one op per tensor
//===----------------------------------------------------------------------===//

def Tidal_OnnxMomentumOp : Tidal_UpdateOp<"onnx_momentum", [DeclareOpInterfaceMethods<
    Tidal_InPlaceOpInterface, ["getInPlaceOperands"]>]> {
  let summary = "ONNX Momentum (ai.onnx.preview.training, version 1)";
  let description = [{
    `g = norm_coefficient * x + grad`; `v' = alpha * v + b * g` where `b`
    is `beta`, or 1 when the iteration count `t` is 0; `x' = x - r * v'`,
    or with `nesterov` `x' = x - r * (g + alpha * v')`.
  }];
  let arguments = (ins Tidal_FloatTensor:$r, Tidal_IndexTensor:$t,
                       Tidal_FloatTensor:$x, Tidal_FloatTensor:$grad,
                       Tidal_FloatTensor:$v, F64Attr:$alpha, F64Attr:$beta,
                       F64Attr:$norm_coefficient,
                       DefaultValuedAttr<BoolAttr, "false">:$nesterov);
  let results = (outs Tidal_FloatTensor:$new_x, Tidal_FloatTensor:$new_v);
}

def Tidal_OnnxAdagradOp : Tidal_UpdateOp<"onnx_adagrad", [DeclareOpInterfaceMethods<
    Tidal_InPlaceOpInterface, ["getInPlaceOperands"]>]> {
  let summary = "ONNX Adagrad (ai.onnx.preview.training, version 1)";
  let description = [{
    `r' = r / (1 + t * decay_factor)`, `g = norm_coefficient * x + grad`,
    `h' = h + g * g`, `x' = x - r' * g / (sqrt(h') + epsilon)`.
  }];
  let arguments = (ins Tidal_FloatTensor:$r, Tidal_IndexTensor:$t,
                       Tidal_FloatTensor:$x, Tidal_FloatTensor:$grad,
                       Tidal_FloatTensor:$h,
                       DefaultValuedAttr<F64Attr, "0.0">:$decay_factor,
                       DefaultValuedAttr<F64Attr, "1.0e-6">:$epsilon,
                       DefaultValuedAttr<F64Attr, "0.0">:$norm_coefficient);
  let results = (outs Tidal_FloatTensor:$new_x, Tidal_FloatTensor:$new_h);
}

def Tidal_OnnxAdamOp : Tidal_UpdateOp<"onnx_adam", [DeclareOpInterfaceMethods<
    Tidal_InPlaceOpInterface, ["getInPlaceOperands"]>]> {
  let summary = "ONNX Adam (ai.onnx.preview.training, version 1)";
  let description = [{
    `g = norm_coefficient * x + grad`, `v' = alpha * v + (1 - alpha) * g`,
    `h' = beta * h + (1 - beta) * g * g`, `r' = r * sqrt(1 - beta^t) / (1 -
    alpha^t)` when `t > 0` (else `r`), `x' = x - r' * v' / (sqrt(h') +
    epsilon)`, then `x' *= 1 - norm_coefficient_post`.
  }];
  let arguments = (ins Tidal_FloatTensor:$r, Tidal_IndexTensor:$t,
                       Tidal_FloatTensor:$x, Tidal_FloatTensor:$grad,
                       Tidal_FloatTensor:$v, Tidal_FloatTensor:$h,
                       DefaultValuedAttr<F64Attr, "0.9">:$alpha,
                       DefaultValuedAttr<F64Attr, "0.999">:$beta,
                       DefaultValuedAttr<F64Attr, "1.0e-6">:$epsilon,
                       DefaultValuedAttr<F64Attr, "0.0">:$norm_coefficient,
                       DefaultValuedAttr<F64Attr, "0.0">:$norm_coefficient_post);
  let results = (outs Tidal_FloatTensor:$new_x, Tidal_FloatTensor:$new_v,
                      Tidal_FloatTensor:$new_h);
}

#endif // TIDAL_DIALECT_TIDAL_IR_TIDALOPTIMIZEROPS_TD
