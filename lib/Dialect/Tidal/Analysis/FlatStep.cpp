//===- FlatStep.cpp - a step's ops as flat records, kept up to date -------===//

#include "tidal/Dialect/Tidal/Analysis/FlatStep.h"
#include "tidal/Dialect/Tidal/Analysis/BufferLiveness.h"
#include "tidal/Dialect/Tidal/IR/TidalOps.h"

#include <algorithm>

using namespace mlir;
using namespace mlir::tidal;

int64_t FlatStep::typeBytes(Value value) {
  auto [it, inserted] = bytesOfType.try_emplace(value.getType(), -1);
  if (inserted)
    it->second = staticBytes(value);
  return it->second;
}

uint32_t FlatStep::copyWaitedBy(const Record &wait) const {
  if (wait.kind != Kind::Wait || wait.numOperands == 0)
    return kNone;
  int32_t input = operands[wait.firstOperand];
  if (input < 0)
    return kNone;
  uint32_t c = definedBy[input];
  return c != kNone && (records[c].kind == Kind::Offload ||
                        records[c].kind == Kind::Prefetch)
             ? c
             : kNone;
}

FlatStep::FlatStep(func::FuncOp func)
    : func(func), body(&func.getBody().front()) {
  const unsigned numArgs = func.getNumArguments();
  size_t numOps = 0;
  for (Operation &op : body->without_terminator()) {
    (void)op;
    ++numOps;
  }
  records.reserve(numOps);
  order.reserve(numOps);
  recordByOp.reserve(numOps);
  values.reserve(numArgs + 2 * numOps);
  bytes.reserve(numArgs + 2 * numOps);
  definedBy.reserve(numArgs + 2 * numOps);
  inPlaceBegin.reserve(numArgs + 2 * numOps + 1);
  operands.reserve(3 * numOps);
  inPlaceBegin.push_back(0);
  for (BlockArgument arg : func.getArguments()) {
    values.push_back(arg);
    bytes.push_back(typeBytes(arg));
    definedBy.push_back(kNone);
    inPlaceBegin.push_back(inPlace.size());
    persistentArg.push_back(isPersistentArgument(func, arg.getArgNumber()));
    hostArg.push_back(isHostArgument(func, arg.getArgNumber()));
  }
  // A block's ops come after their operands' definitions: each op's
  // operands are numbered as its record is made.
  for (Operation &op : body->without_terminator()) {
    uint32_t r = addRecord(&op);
    order.push_back(r);
    setOperands(r);
  }
  replaced = replacedArguments(func);
  readReturned();
}

uint32_t FlatStep::addRecord(Operation *op) {
  Record record;
  record.op = op;
  record.firstResult = values.size();
  record.numResults = op->getNumResults();
  record.numOperands = op->getNumOperands();
  record.firstOperand = operands.size();
  record.host = isHostPlaced(op);
  if (isa<ConstantOp>(op))
    record.kind = Kind::Constant;
  else if (isa<WaitOp>(op))
    record.kind = Kind::Wait;
  else if (isa<OffloadOp>(op))
    record.kind = Kind::Offload;
  else if (isa<PrefetchOp>(op))
    record.kind = Kind::Prefetch;
  else if (isViewOp(op))
    record.kind = Kind::View;
  const uint32_t r = records.size();
  auto iface = record.kind == Kind::Kernel ? dyn_cast<InPlaceOpInterface>(op)
                                           : InPlaceOpInterface();
  for (OpResult result : op->getResults()) {
    values.push_back(result);
    bytes.push_back(typeBytes(result));
    definedBy.push_back(r);
    if (iface)
      for (unsigned i : iface.getInPlaceOperands(result.getResultNumber()))
        inPlace.push_back(i);
    inPlaceBegin.push_back(inPlace.size());
  }
  operands.resize(operands.size() + record.numOperands, -1);
  records.push_back(record);
  recordByOp[op] = r;
  return r;
}

void FlatStep::setOperands(uint32_t r) {
  const Record &record = records[r];
  for (auto [k, operand] : llvm::enumerate(record.op->getOperands()))
    operands[record.firstOperand + k] = numberOf(operand);
}

void FlatStep::readReturned() {
  Operation *terminator = body->getTerminator();
  returned.assign(terminator->operand_begin(), terminator->operand_end());
  returnedNumbers.clear();
  for (Value value : returned)
    returnedNumbers.push_back(numberOf(value));
}

int64_t FlatStep::numberOf(Value value) const {
  if (auto arg = dyn_cast<BlockArgument>(value))
    return arg.getOwner() == body ? int64_t(arg.getArgNumber()) : -1;
  auto result = cast<OpResult>(value);
  uint32_t r = recordOf(result.getOwner());
  return r == kNone
             ? -1
             : int64_t(records[r].firstResult) + result.getResultNumber();
}

void FlatStep::update(ArrayRef<Operation *> inserted,
                      ArrayRef<Operation *> moved,
                      const DenseSet<Operation *> &rewired) {
  // Records first: an inserted op may read another's results.
  DenseSet<Operation *> placed; // ops whose place in the order is new
  SmallVector<uint32_t> fresh;
  for (Operation *op : inserted) {
    if (recordByOp.count(op))
      continue;
    fresh.push_back(addRecord(op));
    placed.insert(op);
  }
  for (uint32_t r : fresh)
    setOperands(r);
  for (Operation *op : moved)
    placed.insert(op);
  bool returnChanged = false;
  for (Operation *op : rewired) {
    if (op == body->getTerminator())
      returnChanged = true;
    else if (uint32_t r = recordOf(op); r != kNone)
      setOperands(r);
  }
  if (returnChanged)
    readReturned();
  if (placed.empty())
    return;

  // Each placed op goes before the first op after it in the block that
  // kept its place (its anchor; the terminator: at the end). The ops
  // before one anchor are found walking back from it, so they come in
  // block order. Marks by record, so that the walk over the order below
  // looks nothing up.
  groupOf.resize(records.size(), -1);
  std::vector<SmallVector<uint32_t, 4>> groups;
  SmallVector<uint32_t> marked;
  Operation *terminator = body->getTerminator();
  int32_t endGroup = -1;
  for (Operation *op : placed) {
    Operation *anchor = op->getNextNode();
    while (anchor != terminator && placed.count(anchor))
      anchor = anchor->getNextNode();
    int32_t *slot = &endGroup;
    if (anchor != terminator) {
      uint32_t a = recordOf(anchor);
      assert(a != kNone && "an op inserted but not reported");
      slot = &groupOf[a];
      if (*slot < 0)
        marked.push_back(a);
    }
    if (*slot >= 0)
      continue;
    SmallVector<uint32_t, 4> group;
    for (Operation *prev = anchor->getPrevNode(); prev && placed.count(prev);
         prev = prev->getPrevNode())
      group.push_back(recordOf(prev));
    std::reverse(group.begin(), group.end());
    *slot = groups.size();
    groups.push_back(std::move(group));
  }
  // A moved op leaves its old place; it comes again in its anchor's
  // group. (One inserted and moved since the last update is not in the
  // order: its mark changes nothing.)
  for (Operation *op : moved) {
    uint32_t r = recordOf(op);
    assert(r != kNone && "an op moved but neither recorded nor reported");
    if (groupOf[r] == -1)
      marked.push_back(r);
    groupOf[r] = -2;
  }
  std::vector<uint32_t> next;
  next.reserve(order.size() + fresh.size());
  for (uint32_t r : order) {
    int32_t g = groupOf[r];
    if (g == -2)
      continue;
    if (g >= 0)
      next.insert(next.end(), groups[g].begin(), groups[g].end());
    next.push_back(r);
  }
  if (endGroup >= 0)
    next.insert(next.end(), groups[endGroup].begin(), groups[endGroup].end());
  for (uint32_t r : marked)
    groupOf[r] = -1;
  order = std::move(next);
}
