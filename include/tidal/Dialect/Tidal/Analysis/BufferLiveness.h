//===- BufferLiveness.h - lifetimes of a function's buffers -----*- C++ -*-===//
//
// Liveness of every tensor of a scheduled function (its block order is the
// schedule), grouped into buffers: the values that share one set of bytes.
// A view (reshape, flatten, squeeze, unsqueeze, identity) shares its
// operand's buffer; an op implementing InPlaceOpInterface writes a result
// into an operand's buffer when that buffer dies at the op (its last use)
// and has the result's size. Constants and views of them live in the
// read-only constant arena and are not buffers of the function's arena.
//
// Positions: 0 is the function's entry (arguments are defined there), ops
// are numbered 1..N in block order, N+1 is the return. A buffer is live on
// the closed interval [start, end]: an op's operands that die at it and its
// results are live at its position together. Arguments that persist across
// steps (parameters, state, optimizer state) and returned values stay live
// to N+1; so does the buffer of an argument unless the value that replaces
// it is written into its bytes.
//
//===----------------------------------------------------------------------===//

#ifndef TIDAL_DIALECT_TIDAL_ANALYSIS_BUFFERLIVENESS_H
#define TIDAL_DIALECT_TIDAL_ANALYSIS_BUFFERLIVENESS_H

#include "tidal/Dialect/Tidal/Analysis/FlatStep.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Value.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallVector.h"

#include <memory>
#include <optional>

namespace mlir::tidal {

/// True for arguments whose value outlives the step (role param, state,
/// constant or optimizer_state): the driver loads them once and keeps them
/// in the arena between steps. Data inputs (and arguments without a role)
/// are written before every step.
bool isPersistentArgument(func::FuncOp func, unsigned argNumber);

/// For each result of `func`, the persistent argument that it replaces
/// (same `tidal.name`), if any.
SmallVector<std::optional<unsigned>> replacedArguments(func::FuncOp func);

/// The operands whose bytes result `resultNumber` of `op` may take, most
/// preferred first: InPlaceOpInterface's answer restricted to operands of
/// the result's byte size.
SmallVector<unsigned, 2> inPlaceOperands(Operation *op, unsigned resultNumber);

/// One set of bytes and the values that occupy it over time.
struct Buffer {
  unsigned id = 0;
  int64_t bytes = 0;
  int64_t start = 0; ///< first position live (definition)
  int64_t end = 0;   ///< last position live (last use)
  /// The values, in definition order: the root (an argument or a result),
  /// views of it and results written in place over it.
  SmallVector<Value, 2> values;
  bool persistent = false; ///< holds an argument that outlives the step
  bool returned = false;   ///< holds a value the function returns
  bool host = false;       ///< in the host arena (an offloaded copy)
};

/// The byte size of `value`'s static tensor type; -1 without one.
int64_t staticBytes(Value value);

/// True for the ops that move a tensor between the arenas.
bool isCopyOp(Operation *op);

/// A value that reuses an operand's bytes.
struct InPlaceUse {
  Value result;
  Value operand;
  int64_t position;
};

class BufferLiveness {
public:
  /// Analyses `func`, which must have one block of ops without regions.
  /// With `inPlace` false, no result takes an operand's bytes.
  explicit BufferLiveness(func::FuncOp func, bool inPlace = true);
  /// Analyses the function `step` describes, reading only its records: the
  /// planner keeps one FlatStep up to date across its steps and rebuilds
  /// this analysis from it after every batch. Lookups by op and value
  /// (getPosition, getBuffer, ...) read `step`'s op numbers, so this
  /// analysis answers them until `step` is next updated.
  explicit BufferLiveness(const FlatStep &step, bool inPlace = true);

  func::FuncOp getFunction() const { return func; }
  /// The ops in schedule order; op i is at position i + 1.
  ArrayRef<Operation *> getOps() const { return ops; }
  int64_t getEndPosition() const { return ops.size() + 1; }
  int64_t getPosition(Operation *op) const {
    uint32_t r = step->recordOf(op);
    return r < positionOf.size() ? positionOf[r] : 0;
  }

  /// The function's arena buffers (constants excluded), by id.
  ArrayRef<Buffer> getBuffers() const { return buffers; }
  /// The buffer holding `value`; null for constants, views of constants and
  /// values without a static tensor type.
  const Buffer *getBuffer(Value value) const;
  /// getBuffer and getLastUse of result `resultNumber` of the op at
  /// position `position`, without looking the op up (a walk over getOps()
  /// knows it).
  const Buffer *getResultBuffer(int64_t position, unsigned resultNumber) const;
  int64_t getResultLastUse(int64_t position, unsigned resultNumber) const;
  /// Where a value is read: the positions of the ops that take it as an
  /// operand, once per operand, ascending, and whether any of them is a
  /// view, a copy or the return (not a kernel). What the budget fitter asks
  /// of every tensor it might move, without walking use lists.
  struct Uses {
    ArrayRef<uint32_t> positions;
    bool notOnlyKernels = false;
  };
  Uses getUses(Value value) const;
  Uses getResultUses(int64_t position, unsigned resultNumber) const;
  /// The record of the op at `position`: what it is to the liveness
  /// rules, its results and operands.
  const FlatStep::Record &getRecord(int64_t position) const {
    return step->getRecords()[order()[position - 1]];
  }
  /// The results written over an operand's bytes, in schedule order.
  ArrayRef<InPlaceUse> getInPlaceUses() const { return inPlaceUses; }
  /// Returned values that are constants: each needs bytes of its own in the
  /// arena at the return (position N+1), where the caller reads results.
  ArrayRef<Value> getReturnedConstants() const { return returnedConstants; }

  /// First and last position at which `value` itself is used or defined
  /// (not its buffer's).
  int64_t getDefinition(Value value) const;
  int64_t getLastUse(Value value) const;

  /// Bytes live at every position 0..N+1 with every buffer's size rounded up
  /// to `alignment`, in the (device) arena or, with `host`, the host arena.
  SmallVector<int64_t> liveBytes(int64_t alignment, bool host = false) const;
  /// The largest of liveBytes: no offset assignment of these buffers needs
  /// fewer bytes.
  int64_t lowerBound(int64_t alignment, bool host = false) const;
  /// The sum of the aligned sizes of every tensor without any sharing
  /// except views (each value its own bytes for the whole step), swaps left
  /// out: the arena of the program without planning.
  int64_t noReuseBytes(int64_t alignment) const;
  /// True if any buffer lives in the host arena.
  bool hasHostBuffers() const;

private:
  /// The value's number in the FlatStep, -1 for values not in this
  /// analysis (another block's, or of ops made after it).
  int64_t valueIndex(Value value) const;
  void analyse(bool inPlace);
  Uses usesOf(int64_t index) const;
  ArrayRef<uint32_t> order() const { return step->getOrder(); }

  /// The FlatStep this analysis made, if it made one, and the one it read.
  std::unique_ptr<FlatStep> owned;
  const FlatStep *step = nullptr;
  func::FuncOp func;
  SmallVector<Operation *> ops;
  /// By record: its position (0: not in this analysis).
  std::vector<uint32_t> positionOf;
  /// Op i's first result's value number.
  SmallVector<unsigned> resultBase;
  SmallVector<Buffer> buffers;
  /// By value number: the buffer id (-1: none) and the last use.
  SmallVector<int32_t> bufferOf;
  SmallVector<int64_t> lastUse;
  /// By value number: its uses' positions are usePositions[useBegin[n],
  /// useBegin[n + 1]); whether one is not a kernel's.
  std::vector<uint32_t> useBegin, usePositions;
  std::vector<bool> nonKernelUse;
  SmallVector<InPlaceUse> inPlaceUses;
  SmallVector<Value> returnedConstants;
};

/// Rounds `bytes` (at least 1) up to a multiple of `alignment`.
inline int64_t alignBytes(int64_t bytes, int64_t alignment) {
  bytes = bytes < 1 ? 1 : bytes;
  return (bytes + alignment - 1) / alignment * alignment;
}

} // namespace mlir::tidal

#endif // TIDAL_DIALECT_TIDAL_ANALYSIS_BUFFERLIVENESS_H
