//===- TidalFusedOps.td - fused element-wise chains ---------*- tablegen -*-===//
//
// The op `tidal-fuse-elementwise` builds: a chain of float32 element-wise
// ops computed in one kernel call over one pass of memory.
//
//===----------------------------------------------------------------------===//

#ifndef TIDAL_DIALECT_TIDAL_IR_TIDALFUSEDOPS_TD
#define TIDAL_DIALECT_TIDAL_IR_TIDALFUSEDOPS_TD

def Tidal_FusedElementwiseOp : Tidal_Op<"fused_elementwise", [Pure,
    DeclareOpInterfaceMethods<Tidal_InPlaceOpInterface,
                              ["getInPlaceOperands"]>]> {
  let summary = "a chain of float32 element-wise ops in one kernel call";
  let description = [{
    Computes `program` element by element over `inputs` and returns the
    registers that `outputs` names, one result each. Registers 0 to
    n - 1 are the inputs (n = number of inputs): a tensor of the results'
    shape, or a one-element tensor read as a broadcast scalar. Step k of
    the program defines register n + k. Each step is four words: the opcode
    (runtime/include/tidalrt/fused_program.h: add, sub, mul, div; neg,
    relu, sigmoid, tanh, sqrt, erf, exp, log, leaky_relu, gelu; and the
    backward ops of relu, leaky_relu, sigmoid, tanh, erf, gelu), operand
    registers a and b (b = -1 for one operand; grad and saved for a backward
    op) and a parameter (leaky_relu's alpha as float32 bits, else 0).

    Every result has one type, a float32 tensor of static shape, and all
    results share one layout (`tidal.blocked` lists all of them or none).
    Each step computes what the op it replaces computes, bit for bit:
    fusion changes no value. Results may take the bytes of any input of
    their type (each tile of every input is read before any result's tile
    is written).

    Only `tidal-fuse-elementwise` creates it, after autodiff, on the cpu
    target; it has no gradient rule and no CUDA kernel.
  }];
  let arguments = (ins Variadic<Tidal_FloatTensor>:$inputs,
                       DenseI64ArrayAttr:$program,
                       DenseI64ArrayAttr:$outputs);
  let results = (outs Variadic<Tidal_FloatTensor>:$results);
  let assemblyFormat = [{
    $inputs attr-dict `:` functional-type($inputs, results)
  }];
  let hasVerifier = 1;
}

#endif // TIDAL_DIALECT_TIDAL_IR_TIDALFUSEDOPS_TD
