//===- TidalReduceOps.td - reductions over axes --------------*- tablegen -*-===//
//
// Sum, mean, maximum, minimum and product over a set of axes (ONNX
// ReduceSum, ReduceMean, ReduceMax, ReduceMin, ReduceProd; ReduceL1, L2,
// SumSquare, LogSum and LogSumExp are compositions at import), and the
// index of the maximum or minimum along one axis (ArgMax, ArgMin).
//
//===----------------------------------------------------------------------===//

#ifndef TIDAL_DIALECT_TIDAL_IR_TIDALREDUCEOPS_TD
#define TIDAL_DIALECT_TIDAL_IR_TIDALREDUCEOPS_TD

class Tidal_ReduceOp<string mnemonic> : Tidal_InferOp<mnemonic, [Pure]> {
  let description = [{
    Reduces over `axes` (non-negative, sorted, unique; the importer resolves
    ONNX's empty-axes conventions). `keepdims` keeps them as size 1.
  }];
  let arguments = (ins Tidal_NumTensor:$input, DenseI64ArrayAttr:$axes,
                       DefaultValuedAttr<BoolAttr, "true">:$keepdims);
  let results = (outs Tidal_NumTensor:$output);
  let hasVerifier = 1;
}
def Tidal_ReduceMeanOp : Tidal_ReduceOp<"reduce_mean"> {
  let summary = "mean over axes (ONNX ReduceMean)";
}
def Tidal_ReduceSumOp : Tidal_ReduceOp<"reduce_sum"> {
  let summary = "sum over axes (ONNX ReduceSum)";
}
def Tidal_ReduceMaxOp : Tidal_ReduceOp<"reduce_max"> {
  let summary = "maximum over axes (ONNX ReduceMax)";
  let description = [{
    As `tidal.reduce_sum`. NaN if any reduced element is NaN (torch.amax);
    an empty reduction gives the lowest value of the type (-inf for floats),
    as ONNX says. The gradient is split evenly among the elements equal to
    the maximum (torch.amax's rule).
  }];
}
def Tidal_ReduceMinOp : Tidal_ReduceOp<"reduce_min"> {
  let summary = "minimum over axes (ONNX ReduceMin)";
  let description = [{
    As `tidal.reduce_max`, for the smallest element (+inf or the highest
    value of the type when empty).
  }];
}
def Tidal_ReduceProdOp : Tidal_ReduceOp<"reduce_prod"> {
  let summary = "product over axes (ONNX ReduceProd)";
  let description = [{
    As `tidal.reduce_sum`; an empty product is 1. Floats multiply in double
    in row-major order and round once; integers wrap in int64. The gradient
    of an element is the product of the others, exact where the input holds
    zeros (PyTorch's torch.prod rule).
  }];
}

// The index of the extreme element along `axis`.
class Tidal_ArgReduceOp<string mnemonic> : Tidal_InferOp<mnemonic, [Pure]> {
  let description = [{
    The int64 index along `axis` (non-negative) of the first extreme element,
    or of the last with `select_last_index`; a NaN counts as more extreme
    than any number (torch.argmax). `keepdims` keeps the axis as size 1. The
    result is an index, so the op has no gradient.
  }];
  let arguments = (ins Tidal_NumTensor:$input, I64Attr:$axis,
                       DefaultValuedAttr<BoolAttr, "true">:$keepdims,
                       DefaultValuedAttr<BoolAttr, "false">:$select_last_index);
  let results = (outs StaticShapeTensorOf<[I64]>:$output);
  let hasVerifier = 1;
}
def Tidal_ArgMaxOp : Tidal_ArgReduceOp<"argmax"> {
  let summary = "index of the maximum along an axis (ONNX ArgMax)";
}
def Tidal_ArgMinOp : Tidal_ArgReduceOp<"argmin"> {
  let summary = "index of the minimum along an axis (ONNX ArgMin)";
}

#endif // TIDAL_DIALECT_TIDAL_IR_TIDALREDUCEOPS_TD
