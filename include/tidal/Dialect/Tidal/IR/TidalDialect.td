//===- TidalDialect.td - the tidal dialect definition ------*- tablegen -*-===//
//
// The tensor-level dialect that tidal imports ONNX into and plans on.
//
//===----------------------------------------------------------------------===//

#ifndef TIDAL_DIALECT_TIDAL_IR_TIDALDIALECT_TD
#define TIDAL_DIALECT_TIDAL_IR_TIDALDIALECT_TD

include "mlir/IR/OpBase.td"

def Tidal_Dialect : Dialect {
  let name = "tidal";
  let cppNamespace = "::mlir::tidal";
  let summary = "Tensor-level training graphs for ahead-of-time memory planning";
  let description = [{
    Ops of a neural-network training step at tensor level: value semantics on
    statically shaped `RankedTensorType`s. Every op infers its result types
    from its operands and attributes, and carries the ONNX node it came from
    as its location, so that any diagnostic names the node. Later passes add
    gradient ops, placement, swap/recompute ops and memory offsets on top.
  }];
  let useDefaultAttributePrinterParser = 1;
}

#endif // TIDAL_DIALECT_TIDAL_IR_TIDALDIALECT_TD
