//===- BufferLiveness.cpp - lifetimes of a function's buffers -------------===//

#include "tidal/Dialect/Tidal/Analysis/BufferLiveness.h"
#include "tidal/Dialect/Tidal/IR/TidalOps.h"

#include "llvm/ADT/StringMap.h"

#include <algorithm>

using namespace mlir;
using namespace mlir::tidal;

bool tidal::isPersistentArgument(func::FuncOp func, unsigned argNumber) {
  auto role = func.getArgAttrOfType<ArgRoleAttr>(argNumber, kRoleAttr);
  if (!role)
    return false;
  switch (role.getValue()) {
  case ArgRole::param:
  case ArgRole::state:
  case ArgRole::constant:
  case ArgRole::optimizer_state:
    return true;
  default:
    return false;
  }
}

SmallVector<std::optional<unsigned>>
tidal::replacedArguments(func::FuncOp func) {
  llvm::StringMap<unsigned> byName;
  for (unsigned i = 0, e = func.getNumArguments(); i != e; ++i)
    if (auto name = func.getArgAttrOfType<StringAttr>(i, kNameAttr))
      if (isPersistentArgument(func, i))
        byName.try_emplace(name.getValue(), i);
  SmallVector<std::optional<unsigned>> replaced(func.getNumResults());
  for (unsigned i = 0, e = func.getNumResults(); i != e; ++i)
    if (auto name = func.getResultAttrOfType<StringAttr>(i, kNameAttr)) {
      auto it = byName.find(name.getValue());
      if (it != byName.end())
        replaced[i] = it->second;
    }
  return replaced;
}

static int64_t staticBytes(Value value) {
  auto type = dyn_cast<RankedTensorType>(value.getType());
  if (!type || !type.hasStaticShape())
    return -1;
  return tensorByteSize(type);
}

bool tidal::isCopyOp(Operation *op) {
  return isa<OffloadOp, PrefetchOp, WaitOp>(op);
}

SmallVector<unsigned, 2> tidal::inPlaceOperands(Operation *op,
                                                unsigned resultNumber) {
  SmallVector<unsigned, 2> operands;
  auto iface = dyn_cast<InPlaceOpInterface>(op);
  if (!iface || resultNumber >= op->getNumResults())
    return operands;
  int64_t bytes = staticBytes(op->getResult(resultNumber));
  for (unsigned i : iface.getInPlaceOperands(resultNumber))
    if (i < op->getNumOperands() && staticBytes(op->getOperand(i)) == bytes)
      operands.push_back(i);
  return operands;
}

BufferLiveness::BufferLiveness(func::FuncOp func, bool inPlace)
    : BufferLiveness(func, inPlace, replacedArguments(func)) {}

BufferLiveness::BufferLiveness(func::FuncOp func, bool inPlace,
                               ArrayRef<std::optional<unsigned>> replaced)
    : func(func), body(&func.getBody().front()) {
  // The planner builds this analysis hundreds of times on deep graphs, and
  // on a step of 100,000 ops each walk over the ops is a stream of cache
  // misses: one walk of the block's list, one over the ops for positions,
  // sizes and uses, one for the buffers. Sized once: growing the maps step
  // by step was a third of the time.
  size_t numValues = func.getNumArguments();
  for (Operation &op : body->without_terminator()) {
    ops.push_back(&op);
    numValues += op.getNumResults();
  }
  const size_t numOps = ops.size();
  positions.reserve(numOps);
  resultBase.reserve(numOps);
  buffers.reserve(numValues);
  const int64_t endPosition = getEndPosition();
  Operation *terminator = body->getTerminator();
  // Each value's static byte size (-1: none), by index; by type, as a step
  // has far fewer types than values.
  SmallVector<int64_t> bytesOf(numValues, -1);
  DenseMap<Type, int64_t> bytesOfType;
  auto typeBytes = [&](Value value) {
    auto [it, inserted] = bytesOfType.try_emplace(value.getType(), 0);
    if (inserted)
      it->second = staticBytes(value);
    return it->second;
  };
  for (BlockArgument arg : func.getArguments())
    bytesOf[arg.getArgNumber()] = typeBytes(arg);

  // Last uses of every value: arguments are defined at 0, results at their
  // op. (Position p is ops[p - 1].) Each op's operands' indices are kept
  // for the buffers' walk (operandIndices[firstOperand[i] + k]); a block's
  // ops come after their operands' definitions, so they are known here.
  lastUse.assign(numValues, 0);
  SmallVector<int64_t> operandIndices;
  SmallVector<unsigned> firstOperand;
  firstOperand.reserve(numOps + 1);
  auto useAt = [&](int64_t index, int64_t p) {
    if (index >= 0)
      lastUse[index] = std::max(lastUse[index], p);
  };
  unsigned nextIndex = func.getNumArguments();
  for (auto [i, op] : llvm::enumerate(ops)) {
    const int64_t p = i + 1;
    positions[op] = p;
    resultBase.push_back(nextIndex);
    for (OpResult result : op->getResults()) {
      bytesOf[nextIndex] = typeBytes(result);
      lastUse[nextIndex++] = p;
    }
    firstOperand.push_back(operandIndices.size());
    for (Value operand : op->getOperands()) {
      int64_t index = valueIndex(operand);
      operandIndices.push_back(index);
      useAt(index, p);
    }
    // A copy reads its source until the wait for it.
    if (auto wait = dyn_cast<WaitOp>(op))
      if (Operation *copy = wait.getInput().getDefiningOp())
        if (isa<OffloadOp, PrefetchOp>(copy))
          useAt(valueIndex(copy->getOperand(0)), p);
  }
  firstOperand.push_back(operandIndices.size());
  for (Value operand : terminator->getOperands())
    if (int64_t index = valueIndex(operand); index >= 0)
      lastUse[index] = endPosition;

  bufferOf.assign(numValues, -1);
  auto newBuffer = [&](int64_t index, Value value, int64_t start) {
    Buffer buffer;
    buffer.id = buffers.size();
    buffer.bytes = bytesOf[index];
    buffer.start = start;
    buffer.end = lastUse[index];
    buffer.values.push_back(value);
    bufferOf[index] = buffer.id;
    buffers.push_back(std::move(buffer));
  };
  auto join = [&](int64_t index, Value value, unsigned id) {
    Buffer &buffer = buffers[id];
    buffer.values.push_back(value);
    buffer.end = std::max(buffer.end, lastUse[index]);
    bufferOf[index] = id;
  };
  auto bufferIdOf = [&](Value value) -> int32_t {
    int64_t index = valueIndex(value);
    return index < 0 ? -1 : bufferOf[index];
  };

  // The arguments' buffers come first: argument argOfBuffer[id] is the
  // root of buffer id (persistent buffers are arguments' only).
  SmallVector<unsigned> argOfBuffer;
  for (unsigned index = 0, e = func.getNumArguments(); index != e; ++index) {
    if (bytesOf[index] < 0)
      continue;
    argOfBuffer.push_back(index);
    newBuffer(index, body->getArgument(index), 0);
    buffers.back().persistent = isPersistentArgument(func, index);
    buffers.back().host = isHostArgument(func, index);
  }

  // The argument that each value returned in place of an argument replaces.
  DenseMap<Value, unsigned> replaces;
  replaces.reserve(terminator->getNumOperands());
  for (OpOperand &use : terminator->getOpOperands())
    if (auto arg = replaced[use.getOperandNumber()])
      replaces[use.get()] = *arg;

  for (auto [i, op] : llvm::enumerate(ops)) {
    const int64_t p = i + 1;
    const int64_t base = resultBase[i];
    ArrayRef<int64_t> operandIndex(operandIndices.begin() + firstOperand[i],
                                   operandIndices.begin() +
                                       firstOperand[i + 1]);
    if (isa<ConstantOp>(op))
      continue;
    if (isViewOp(op) || isa<WaitOp>(op)) {
      if (int64_t index = operandIndex[0]; index >= 0 && bufferOf[index] >= 0)
        join(base, op->getResult(0), bufferOf[index]);
      continue;
    }
    if (isa<OffloadOp, PrefetchOp>(op)) {
      // A value copied back to the device in place of a persistent argument
      // (tidal-place: a parameter updated on the host) takes the argument's
      // device bytes once nothing reads them any more.
      std::optional<unsigned> replaced;
      if (isa<PrefetchOp>(op))
        for (Operation *user : op->getUsers())
          if (isa<WaitOp>(user))
            if (auto r = replaces.find(user->getResult(0)); r != replaces.end())
              replaced = r->second;
      if (replaced) {
        if (int32_t id = bufferIdOf(func.getArgument(*replaced)); id >= 0) {
          const Buffer &buffer = buffers[id];
          if (!buffer.host && buffer.persistent && buffer.end < p &&
              buffer.bytes == bytesOf[base]) {
            join(base, op->getResult(0), id);
            continue;
          }
        }
      }
      newBuffer(base, op->getResult(0), p);
      buffers.back().host = isa<OffloadOp>(op);
      continue;
    }
    const bool onHost = isHostPlaced(op);
    auto iface =
        inPlace ? dyn_cast<InPlaceOpInterface>(op) : InPlaceOpInterface();
    SmallVector<unsigned, 2> claimed;
    for (OpResult result : op->getResults()) {
      const int64_t index = base + result.getResultNumber();
      const int64_t bytes = bytesOf[index];
      if (bytes < 0)
        continue;
      std::optional<unsigned> reused;
      // inPlaceOperands(op, result's number), with the sizes known here.
      if (iface)
        for (unsigned i : iface.getInPlaceOperands(result.getResultNumber())) {
          if (i >= operandIndex.size())
            continue;
          const int64_t source = operandIndex[i];
          if (source < 0 || bytesOf[source] != bytes)
            continue;
          int32_t id = bufferOf[source];
          if (id < 0 || llvm::is_contained(claimed, unsigned(id)))
            continue;
          const Buffer &buffer = buffers[id];
          if (buffer.end != p || buffer.bytes != bytes || buffer.host != onHost)
            continue;
          // A persistent argument's bytes take only the value replacing it.
          if (buffer.persistent) {
            assert(unsigned(id) < argOfBuffer.size() && "not an argument's");
            auto replaced = replaces.find(result);
            if (replaced == replaces.end() ||
                replaced->second != argOfBuffer[id])
              continue;
          }
          reused = id;
          inPlaceUses.push_back({result, op->getOperand(i), p});
          break;
        }
      if (reused) {
        claimed.push_back(*reused);
        join(index, result, *reused);
      } else {
        newBuffer(index, result, p);
        buffers.back().host = onHost;
      }
    }
  }

  for (Value value : terminator->getOperands()) {
    int32_t id = bufferIdOf(value);
    if (id < 0) {
      if (staticBytes(value) >= 0)
        returnedConstants.push_back(value);
      continue;
    }
    buffers[id].returned = true;
    buffers[id].end = endPosition;
  }
  for (Buffer &buffer : buffers)
    if (buffer.persistent)
      buffer.end = endPosition;
}

int64_t BufferLiveness::valueIndex(Value value) const {
  if (auto arg = dyn_cast<BlockArgument>(value))
    return arg.getOwner() == body ? int64_t(arg.getArgNumber()) : -1;
  auto result = cast<OpResult>(value);
  int64_t p = positions.lookup(result.getOwner());
  return p == 0 ? -1 : int64_t(resultBase[p - 1]) + result.getResultNumber();
}

const Buffer *BufferLiveness::getBuffer(Value value) const {
  int64_t index = valueIndex(value);
  if (index < 0 || bufferOf[index] < 0)
    return nullptr;
  return &buffers[bufferOf[index]];
}

const Buffer *BufferLiveness::getResultBuffer(int64_t position,
                                              unsigned resultNumber) const {
  int32_t id = bufferOf[resultBase[position - 1] + resultNumber];
  return id < 0 ? nullptr : &buffers[id];
}

int64_t BufferLiveness::getResultLastUse(int64_t position,
                                         unsigned resultNumber) const {
  return lastUse[resultBase[position - 1] + resultNumber];
}

int64_t BufferLiveness::getDefinition(Value value) const {
  if (auto result = dyn_cast<OpResult>(value))
    return positions.lookup(result.getOwner());
  return 0;
}

int64_t BufferLiveness::getLastUse(Value value) const {
  int64_t index = valueIndex(value);
  return index < 0 ? 0 : lastUse[index];
}

SmallVector<int64_t> BufferLiveness::liveBytes(int64_t alignment,
                                               bool host) const {
  int64_t n = getEndPosition() + 1;
  SmallVector<int64_t> delta(n + 1, 0);
  for (const Buffer &buffer : buffers) {
    if (buffer.host != host)
      continue;
    int64_t bytes = alignBytes(buffer.bytes, alignment);
    delta[buffer.start] += bytes;
    delta[buffer.end + 1] -= bytes;
  }
  if (!host)
    for (Value value : returnedConstants)
      delta[n - 1] += alignBytes(staticBytes(value), alignment);
  SmallVector<int64_t> live(n, 0);
  int64_t running = 0;
  for (int64_t i = 0; i < n; ++i)
    live[i] = running += delta[i];
  return live;
}

int64_t BufferLiveness::lowerBound(int64_t alignment, bool host) const {
  SmallVector<int64_t> live = liveBytes(alignment, host);
  return live.empty() ? 0 : *std::max_element(live.begin(), live.end());
}

int64_t BufferLiveness::noReuseBytes(int64_t alignment) const {
  int64_t total = 0;
  for (const Buffer &buffer : buffers) {
    // Views share their operand's bytes; every other value has its own.
    for (Value value : buffer.values) {
      Operation *def = value.getDefiningOp();
      if (!def || (!isViewOp(def) && !isCopyOp(def)))
        total += alignBytes(staticBytes(value), alignment);
    }
  }
  for (Value value : returnedConstants)
    total += alignBytes(staticBytes(value), alignment);
  return total;
}

bool BufferLiveness::hasHostBuffers() const {
  return llvm::any_of(buffers, [](const Buffer &b) { return b.host; });
}
