//===- TidalLogicOps.td - comparisons, logic, selection -----*- tablegen -*-===//
//
// Element-wise maximum/minimum (ONNX Max, Min; the variadic forms and Sum,
// Mean become chains at import), comparisons (Equal, Less, LessOrEqual,
// Greater, GreaterOrEqual) producing i1 masks, the logical ops on masks
// (And, Or, Xor, Not) and selection (Where): what attention masks, padding
// masks and clamps with tensor bounds are made of. All broadcast as NumPy.
//
//===----------------------------------------------------------------------===//

#ifndef TIDAL_DIALECT_TIDAL_IR_TIDALLOGICOPS_TD
#define TIDAL_DIALECT_TIDAL_IR_TIDALLOGICOPS_TD

def Tidal_MaxOp : Tidal_BinaryOp<"max", [Commutative]> {
  let summary = "element-wise maximum with broadcasting (ONNX Max)";
  let description = [{
    NaN if either operand is NaN (torch.maximum). The gradient goes to the
    larger operand, half to each on a tie (PyTorch's rule).
  }];
}
def Tidal_MinOp : Tidal_BinaryOp<"min", [Commutative]> {
  let summary = "element-wise minimum with broadcasting (ONNX Min)";
  let description = [{ As `tidal.max`, for the smaller operand. }];
}

// lhs and rhs of one element type, broadcasting; an i1 result.
class Tidal_CompareOp<string mnemonic, list<Trait> traits = []>
    : Tidal_InferOp<mnemonic, !listconcat(traits, [Pure])> {
  let arguments = (ins Tidal_NumTensor:$lhs, Tidal_NumTensor:$rhs);
  let results = (outs Tidal_MaskTensor:$output);
  let hasVerifier = 1;
}
def Tidal_EqualOp : Tidal_CompareOp<"equal", [Commutative]> {
  let summary = "lhs == rhs (ONNX Equal)";
}
def Tidal_LessOp : Tidal_CompareOp<"less"> {
  let summary = "lhs < rhs (ONNX Less)";
}
def Tidal_LessOrEqualOp : Tidal_CompareOp<"less_or_equal"> {
  let summary = "lhs <= rhs (ONNX LessOrEqual)";
}
def Tidal_GreaterOp : Tidal_CompareOp<"greater"> {
  let summary = "lhs > rhs (ONNX Greater)";
}
def Tidal_GreaterOrEqualOp : Tidal_CompareOp<"greater_or_equal"> {
  let summary = "lhs >= rhs (ONNX GreaterOrEqual)";
}

// Masks in, a mask out, broadcasting.
class Tidal_LogicOp<string mnemonic>
    : Tidal_InferOp<mnemonic, [Pure, Commutative]> {
  let arguments = (ins Tidal_MaskTensor:$lhs, Tidal_MaskTensor:$rhs);
  let results = (outs Tidal_MaskTensor:$output);
}
def Tidal_LogicalAndOp : Tidal_LogicOp<"logical_and"> {
  let summary = "logical and of masks (ONNX And)";
}
def Tidal_LogicalOrOp : Tidal_LogicOp<"logical_or"> {
  let summary = "logical or of masks (ONNX Or)";
}
def Tidal_LogicalXorOp : Tidal_LogicOp<"logical_xor"> {
  let summary = "logical exclusive or of masks (ONNX Xor)";
}
def Tidal_LogicalNotOp : Tidal_UnaryOp<"logical_not", Tidal_MaskTensor> {
  let summary = "logical negation of a mask (ONNX Not)";
}

def Tidal_WhereOp : Tidal_InferOp<"where", [Pure]> {
  let summary = "condition ? lhs : rhs, three-way broadcasting (ONNX Where)";
  let description = [{
    The gradient of `lhs` is the result's gradient where the condition
    holds (0 elsewhere), of `rhs` where it does not, each summed back over
    its broadcast dimensions.
  }];
  let arguments = (ins Tidal_MaskTensor:$condition, Tidal_Tensor:$lhs,
                       Tidal_Tensor:$rhs);
  let results = (outs Tidal_Tensor:$output);
  let hasVerifier = 1;
}

def Tidal_CastOp : Tidal_TypedOp<"cast", [Pure]> {
  let summary = "convert elements to the result's element type (ONNX Cast)";
  let description = [{
    float32, float64, float16, bfloat16, the integer types and i1. Float to
    integer truncates toward zero, NaN gives 0 and values out of range
    saturate; to float16/bfloat16 rounds to nearest even; to i1 is `x != 0`. A float-to-float cast passes the gradient through (cast
    back); others have none. On compile-time values Cast folds at import.
  }];
  let arguments = (ins Tidal_Tensor:$input);
  let results = (outs Tidal_Tensor:$output);
}

#endif // TIDAL_DIALECT_TIDAL_IR_TIDALLOGICOPS_TD
