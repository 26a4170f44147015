//===- FlatStep.h - a step's ops as flat records ----------------*- C++ -*-===//
//
// What BufferLiveness reads of a scheduled function, copied out of the IR
// into flat arrays: per op its kind as the liveness rules see it, whether
// it runs on the host, its results' byte sizes, the operands a result may
// take the bytes of, and its operands as value numbers; the ops' order.
//
// The budget fitter analyses its function hundreds of times while it
// inserts copies and clones between analyses. Walking a step of 100,000
// ops again for each analysis is a stream of cache misses over tens of
// megabytes of IR; a FlatStep is walked once and then told what changed
// (update()): the ops inserted and moved, and those whose operands were
// replaced. Each analysis then reads only these arrays.
//
// Values are numbered for the life of the FlatStep: the function's
// arguments 0..A-1, then each op's results as its record is made (not in
// schedule order). Ops must not be erased while a FlatStep describes their
// function.
//
//===----------------------------------------------------------------------===//

#ifndef TIDAL_DIALECT_TIDAL_ANALYSIS_FLATSTEP_H
#define TIDAL_DIALECT_TIDAL_ANALYSIS_FLATSTEP_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Value.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SmallVector.h"

#include <optional>
#include <vector>

namespace mlir::tidal {

class FlatStep {
public:
  /// What the liveness rules tell apart.
  enum class Kind : uint8_t {
    Kernel,   ///< computes its results (in place where allowed)
    Constant, ///< results in the constant arena
    View,     ///< result 0 shares operand 0's bytes
    Wait,     ///< result 0 is the copy's result (operand 0)
    Offload,  ///< a copy to a new host buffer
    Prefetch, ///< a copy to a new device buffer
  };
  struct Record {
    Operation *op = nullptr;
    uint32_t firstResult = 0;  ///< the value number of result 0
    uint32_t firstOperand = 0; ///< into the operands' value numbers
    uint32_t numResults = 0, numOperands = 0;
    Kind kind = Kind::Kernel;
    bool host = false; ///< host-placed (isHostPlaced)
  };
  static constexpr uint32_t kNone = ~0u;

  /// Walks `func`, which must have one block of ops without regions.
  explicit FlatStep(func::FuncOp func);

  /// Brings the records up to the IR after ops were `inserted` (in any
  /// order) and `moved` (elsewhere in the block), and `rewired` ops had
  /// operands replaced (the terminator among them where it had). Inserted
  /// ops may use each other's results.
  void update(ArrayRef<Operation *> inserted, ArrayRef<Operation *> moved,
              const DenseSet<Operation *> &rewired);

  func::FuncOp getFunction() const { return func; }
  /// Record numbers in schedule order.
  ArrayRef<uint32_t> getOrder() const { return order; }
  ArrayRef<Record> getRecords() const { return records; }
  /// The record of `op`, kNone if it has none (made after the last update,
  /// or of another block).
  uint32_t recordOf(Operation *op) const {
    auto it = recordByOp.find(op);
    return it == recordByOp.end() ? kNone : it->second;
  }
  /// The value numbers of the record's operands, -1 for a value this step
  /// does not number.
  ArrayRef<int32_t> getOperands(const Record &r) const {
    return ArrayRef<int32_t>(operands).slice(r.firstOperand, r.numOperands);
  }
  /// For a wait, the record of the offload or prefetch it waits for (its
  /// operand's op); kNone otherwise.
  uint32_t copyWaitedBy(const Record &wait) const;

  size_t getNumValues() const { return values.size(); }
  Value getValue(uint32_t number) const { return values[number]; }
  /// The value's static byte size; -1 without a static tensor type.
  int64_t getBytes(uint32_t number) const { return bytes[number]; }
  /// The record defining the value, kNone for an argument.
  uint32_t getDefiningRecord(uint32_t number) const {
    return definedBy[number];
  }
  /// The value number of `value`, -1 if it has none.
  int64_t numberOf(Value value) const;
  /// The operands whose bytes the result numbered `number` may take, as
  /// InPlaceOpInterface lists them (unchecked), for results of kernels.
  ArrayRef<uint32_t> inPlaceCandidates(uint32_t number) const {
    return ArrayRef<uint32_t>(inPlace).slice(
        inPlaceBegin[number], inPlaceBegin[number + 1] - inPlaceBegin[number]);
  }

  /// Per argument: whether it persists across steps, lives in host memory.
  bool isPersistentArg(unsigned arg) const { return persistentArg[arg]; }
  bool isHostArg(unsigned arg) const { return hostArg[arg]; }
  /// The terminator's operands: their values and numbers (-1: none), and
  /// for each the persistent argument it replaces (replacedArguments).
  ArrayRef<Value> getReturned() const { return returned; }
  ArrayRef<int32_t> getReturnedNumbers() const { return returnedNumbers; }
  ArrayRef<std::optional<unsigned>> getReplaced() const { return replaced; }

private:
  uint32_t addRecord(Operation *op);
  void setOperands(uint32_t record);
  void readReturned();
  int64_t typeBytes(Value value);

  func::FuncOp func;
  Block *body;
  std::vector<Record> records;
  std::vector<uint32_t> order;
  DenseMap<Operation *, uint32_t> recordByOp;
  std::vector<int32_t> operands;
  std::vector<Value> values;
  std::vector<int64_t> bytes;
  std::vector<uint32_t> definedBy;
  /// Result value n's in-place candidates: inPlace[inPlaceBegin[n],
  /// inPlaceBegin[n + 1]) (empty for arguments).
  std::vector<uint32_t> inPlace, inPlaceBegin;
  std::vector<bool> persistentArg, hostArg;
  std::vector<Value> returned;
  std::vector<int32_t> returnedNumbers;
  SmallVector<std::optional<unsigned>> replaced;
  DenseMap<Type, int64_t> bytesOfType;
  /// update()'s marks by record: -1 none, -2 moved, else the group of
  /// placed ops that goes before it (all -1 between updates).
  std::vector<int32_t> groupOf;
};

} // namespace mlir::tidal

#endif // TIDAL_DIALECT_TIDAL_ANALYSIS_FLATSTEP_H
