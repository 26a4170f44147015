//===- TidalAttrs.td - tidal attributes and enums ----------*- tablegen -*-===//

#ifndef TIDAL_DIALECT_TIDAL_IR_TIDALATTRS_TD
#define TIDAL_DIALECT_TIDAL_IR_TIDALATTRS_TD

include "tidal/Dialect/Tidal/IR/TidalDialect.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"

// What a function argument or result is (SPEC section 1). A result with
// role param, state or optimizer_state is the new value of the argument of
// the same tidal.name.
def Tidal_ArgRole : I32EnumAttr<"ArgRole", "role of a graph value", [
    I32EnumAttrCase<"input", 0>,     // data fed per step (images, labels)
    I32EnumAttrCase<"param", 1>,     // trainable floating-point initializer
    I32EnumAttrCase<"state", 2>,     // BatchNormalization running mean/var
    I32EnumAttrCase<"constant", 3>,  // frozen or integer initializer
    I32EnumAttrCase<"optimizer_state", 4>, // momentum buffers, moments, step
    I32EnumAttrCase<"loss", 5>,      // the scalar being minimized
    I32EnumAttrCase<"gradient", 6>,  // d(loss)/d(param of the same name)
    I32EnumAttrCase<"output", 7>     // any other graph output
  ]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::mlir::tidal";
}
def Tidal_ArgRoleAttr : EnumAttr<Tidal_Dialect, Tidal_ArgRole, "role">;

// Loss reduction, as ONNX's `reduction` attribute.
def Tidal_Reduction : I32EnumAttr<"Reduction", "loss reduction", [
    I32EnumAttrCase<"none", 0>,
    I32EnumAttrCase<"sum", 1>,
    I32EnumAttrCase<"mean", 2>
  ]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::mlir::tidal";
}
def Tidal_ReductionAttr : EnumAttr<Tidal_Dialect, Tidal_Reduction, "reduction">;

// How tidal.pad fills the border, as ONNX Pad's `mode`.
def Tidal_PadMode : I32EnumAttr<"PadMode", "padding mode", [
    I32EnumAttrCase<"constant", 0>, // the `value` attribute
    I32EnumAttrCase<"reflect", 1>,  // mirrored without the edge element
    I32EnumAttrCase<"edge", 2>      // the edge element repeated
  ]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::mlir::tidal";
}
def Tidal_PadModeAttr : EnumAttr<Tidal_Dialect, Tidal_PadMode, "pad_mode">;

#endif // TIDAL_DIALECT_TIDAL_IR_TIDALATTRS_TD
