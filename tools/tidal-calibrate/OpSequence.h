//===- OpSequence.h - a step's kernel calls in order, for timing -*- C++
//-*-===//
//
// tidal-calibrate --ops times the step's calls one after another as well as
// each alone (OpTimes.cpp): this is the step's data flow, with its memory
// plan's arena offsets where it has one.
//
//===----------------------------------------------------------------------===//

#ifndef TIDAL_TOOLS_TIDAL_CALIBRATE_OPSEQUENCE_H
#define TIDAL_TOOLS_TIDAL_CALIBRATE_OPSEQUENCE_H

#include "tidal/Conversion/TidalToRuntime/Descriptor.h"
#include "tidal/Dialect/Tidal/Analysis/CostModel.h"
#include "tidal/Dialect/Tidal/IR/TidalOps.h"

#include "tidalrt/tidalrt.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/DenseMap.h"

#include <vector>

namespace calibrate {

using namespace mlir;
using namespace mlir::tidal;

/// The kernel calls of one function in order, each reading and writing one
/// buffer per value (a view shares its source's): the step's data flow
/// without its memory plan, to time the ops one after another.
struct Sequence {
  Sequence() = default;
  explicit Sequence(func::FuncOp func)
      : func(func), funcOps(func.getBody().front().getOperations().size()) {
    // A function with a memory plan (tidal-plan-memory) runs its values at
    // their arena offsets, reusing bytes as the generated program does.
    if (auto size = func->getAttrOfType<IntegerAttr>(kArenaSizeAttr))
      arenaBytes = size.getInt();
  }

  struct Call {
    tidalrt_kernel_fn_t fn = nullptr;
    SmallVector<int64_t> desc;
    SmallVector<int> tensors; ///< buffer ids; -1: an absent operand
    size_t job = 0;           ///< the single-op measurement it matches
  };
  func::FuncOp func; ///< only while its module is being walked
  size_t funcOps = 0;
  std::vector<Call> ops;
  DenseMap<Value, int> ids;
  std::vector<int64_t> bytes;
  std::vector<Type> types; ///< float element type, or null
  std::vector<bool> ones;  ///< an optimizer's step count
  /// A constant's bytes (empty: made-up data).
  std::vector<std::vector<char>> init;
  /// The value's offset in the planned arena, or -1 (its own buffer).
  std::vector<int64_t> arenaOffset;
  std::vector<bool> isArgument; ///< a function argument (the driver's input)
  int64_t arenaBytes = -1;      ///< the function's planned arena, -1: none
  int64_t totalBytes = 0;

  /// `v`'s planned arena offset, or -1.
  int64_t plannedOffset(Value v) {
    if (arenaBytes < 0)
      return -1;
    if (auto arg = dyn_cast<BlockArgument>(v)) {
      if (arg.getOwner()->getParentOp() != func.getOperation())
        return -1;
      auto offset =
          func.getArgAttrOfType<IntegerAttr>(arg.getArgNumber(), kOffsetAttr);
      return offset ? offset.getInt() : -1;
    }
    Operation *def = v.getDefiningOp();
    if (isa<ConstantOp>(def))
      return -1; // in the program image
    auto offsets = def->getAttrOfType<DenseI64ArrayAttr>(kOffsetsAttr);
    unsigned i = cast<OpResult>(v).getResultNumber();
    if (!offsets || i >= offsets.size() || offsets[i] < 0)
      return -1;
    return offsets[i];
  }

  int idOf(Value v, bool one) {
    while (Operation *def = v.getDefiningOp()) {
      if (!isViewOp(def))
        break;
      v = def->getOperand(0);
    }
    auto type = cast<ShapedType>(v.getType());
    auto [it, inserted] = ids.try_emplace(v, (int)bytes.size());
    if (inserted) {
      bytes.push_back(tensorByteSize(type));
      arenaOffset.push_back(plannedOffset(v));
      isArgument.push_back(isa<BlockArgument>(v));
      if (arenaOffset.back() < 0 ||
          arenaOffset.back() + bytes.back() > arenaBytes)
        arenaOffset.back() = -1;
      if (arenaOffset.back() < 0)
        totalBytes += bytes.back();
      Type element = type.getElementType();
      types.push_back(isa<FloatType>(element) ? element : Type());
      ones.push_back(false);
      init.emplace_back();
      if (auto constant = v.getDefiningOp<ConstantOp>())
        if (auto dense = dyn_cast<DenseElementsAttr>(constant.getValue());
            dense && !dense.getElementType().isInteger(1)) {
          ArrayRef<char> raw = dense.getRawData();
          std::vector<char> &bytes = init.back();
          if (dense.isSplat())
            for (int64_t i = 0; i < dense.getNumElements(); ++i)
              bytes.insert(bytes.end(), raw.begin(), raw.end());
          else
            bytes.assign(raw.begin(), raw.end());
        }
    }
    if (one)
      ones[it->second] = true;
    return it->second;
  }
  void add(Operation *op, tidalrt_kernel_fn_t fn, size_t job) {
    if (!func || op->getParentOp() != func.getOperation())
      return;
    FailureOr<SmallVector<int64_t>> desc =
        encodeDescriptor(op, (int64_t)ops.size());
    if (failed(desc))
      return;
    Call call{fn, std::move(*desc), {}, job};
    for (Value v : kernelTensors(op)) {
      if (!v) {
        call.tensors.push_back(-1);
        continue;
      }
      auto type = cast<ShapedType>(v.getType());
      call.tensors.push_back(idOf(v, isOptimizerUpdate(op) &&
                                         type.getRank() == 0 &&
                                         type.getElementType().isInteger(64)));
    }
    ops.push_back(std::move(call));
  }
};

} // namespace calibrate

#endif // TIDAL_TOOLS_TIDAL_CALIBRATE_OPSEQUENCE_H
