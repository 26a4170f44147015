//===- TidalPadOps.td - padding ------------------------------*- tablegen -*-===//
//
// ONNX Pad in its constant, reflect and edge modes, and its backward op.
//
//===----------------------------------------------------------------------===//

#ifndef TIDAL_DIALECT_TIDAL_IR_TIDALPADOPS_TD
#define TIDAL_DIALECT_TIDAL_IR_TIDALPADOPS_TD

def Tidal_PadOp : Tidal_InferOp<"pad", [Pure]> {
  let summary = "pad a tensor's borders (ONNX Pad: constant, reflect, edge)";
  let description = [{
    `pads` holds the rank begin paddings then the rank end paddings, all
    non-negative (the importer turns ONNX's negative pads into a slice).
    `constant` fills with `value`; `reflect` mirrors without repeating the
    edge element (PyTorch's 'reflect'; each padding at most the dimension
    minus one); `edge` repeats the edge element (PyTorch's 'replicate').
  }];
  let arguments = (ins Tidal_Tensor:$input, DenseI64ArrayAttr:$pads,
                       Tidal_PadModeAttr:$mode,
                       DefaultValuedAttr<F64Attr, "0.0">:$value);
  let results = (outs Tidal_Tensor:$output);
  let hasVerifier = 1;
}

def Tidal_PadBackwardOp : Tidal_TypedOp<"pad_backward", [Pure]> {
  let summary = "the gradient of tidal.pad's input";
  let description = [{
    Each input element's gradient is the sum of the output gradients that
    read it: one for `constant`, several at the borders for `reflect` and
    `edge`. The result has the forward input's type.
  }];
  let arguments = (ins Tidal_FloatTensor:$grad, DenseI64ArrayAttr:$pads,
                       Tidal_PadModeAttr:$mode);
  let results = (outs Tidal_FloatTensor:$grad_input);
}

#endif // TIDAL_DIALECT_TIDAL_IR_TIDALPADOPS_TD
