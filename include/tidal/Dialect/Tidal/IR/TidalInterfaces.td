//===- TidalInterfaces.td - tidal op interfaces ---------------*- tablegen -*-===//
//
// Interfaces that the planning passes query instead of listing op kinds.
//
//===----------------------------------------------------------------------===//

#ifndef TIDAL_DIALECT_TIDAL_IR_TIDALINTERFACES_TD
#define TIDAL_DIALECT_TIDAL_IR_TIDALINTERFACES_TD

include "mlir/IR/OpBase.td"

def Tidal_InPlaceOpInterface : OpInterface<"InPlaceOpInterface"> {
  let cppNamespace = "::mlir::tidal";
  let description = [{
    An op whose runtime kernel may write a result into the bytes of one of
    its operands: it reads each element of that operand before it writes the
    same element of the result and reads nothing else of it afterwards. The
    memory planner gives the result the operand's bytes when the operand
    dies at the op ("in place"); docs/runtime-abi.md lists the kernels and
    runtime/test/cpu_inplace_test.cpp proves each of them bitwise.

    The default is the element-wise rule: result 0 may take any operand of
    exactly its type (same shape, same floating-point element type), in
    operand order. Broadcast operands never qualify.
  }];
  let methods = [
    InterfaceMethod<
      "The operands whose bytes result `result` may take, most preferred "
      "first (empty: none).",
      "::llvm::SmallVector<unsigned, 2>", "getInPlaceOperands",
      (ins "unsigned":$result), [{}], [{
        ::llvm::SmallVector<unsigned, 2> operands;
        ::mlir::Operation *op = $_op.getOperation();
        if (result != 0 || op->getNumResults() == 0)
          return operands;
        ::mlir::Type type = op->getResult(0).getType();
        auto shaped = ::llvm::dyn_cast<::mlir::ShapedType>(type);
        if (!shaped || !::llvm::isa<::mlir::FloatType>(shaped.getElementType()))
          return operands;
        for (unsigned i = 0, e = op->getNumOperands(); i != e; ++i)
          if (op->getOperand(i).getType() == type)
            operands.push_back(i);
        return operands;
      }]>,
  ];
}

#endif // TIDAL_DIALECT_TIDAL_IR_TIDALINTERFACES_TD
