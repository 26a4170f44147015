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

int64_t tidal::staticBytes(Value value) {
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
    : owned(std::make_unique<FlatStep>(func)), step(owned.get()), func(func) {
  analyse(inPlace);
}

BufferLiveness::BufferLiveness(const FlatStep &step, bool inPlace)
    : step(&step), func(step.getFunction()) {
  analyse(inPlace);
}

void BufferLiveness::analyse(bool inPlace) {
  // The planner builds this analysis hundreds of times on deep graphs: it
  // reads the FlatStep's arrays only, never the IR.
  ArrayRef<FlatStep::Record> records = step->getRecords();
  ArrayRef<uint32_t> order = step->getOrder();
  const size_t numValues = step->getNumValues();
  const size_t numOps = order.size();
  const unsigned numArgs = func.getNumArguments();
  ops.reserve(numOps);
  resultBase.reserve(numOps);
  positionOf.assign(records.size(), 0);
  buffers.reserve(numValues);
  const int64_t endPosition = numOps + 1;

  // Last uses of every value: arguments are defined at 0, results at their
  // op. (Position p is ops[p - 1].)
  lastUse.assign(numValues, 0);
  auto useAt = [&](int64_t index, int64_t p) {
    if (index >= 0)
      lastUse[index] = std::max(lastUse[index], p);
  };
  for (auto [i, r] : llvm::enumerate(order)) {
    const int64_t p = i + 1;
    const FlatStep::Record &record = records[r];
    ops.push_back(record.op);
    positionOf[r] = p;
    resultBase.push_back(record.firstResult);
    for (uint32_t k = 0; k < record.numResults; ++k)
      lastUse[record.firstResult + k] = p;
    for (int32_t index : step->getOperands(record))
      useAt(index, p);
    // A copy reads its source until the wait for it.
    if (uint32_t c = step->copyWaitedBy(record); c != FlatStep::kNone)
      if (ArrayRef<int32_t> source = step->getOperands(records[c]);
          !source.empty())
        useAt(source[0], p);
  }
  for (int32_t index : step->getReturnedNumbers())
    if (index >= 0)
      lastUse[index] = endPosition;

  // Each value's uses by position: counted, then filled in schedule order
  // (so each value's list ascends).
  useBegin.assign(numValues + 1, 0);
  nonKernelUse.assign(numValues, false);
  for (uint32_t r : order) {
    const FlatStep::Record &record = records[r];
    const bool kernel = record.kind == FlatStep::Kind::Kernel ||
                        record.kind == FlatStep::Kind::Constant;
    for (int32_t index : step->getOperands(record))
      if (index >= 0) {
        ++useBegin[index + 1];
        if (!kernel)
          nonKernelUse[index] = true;
      }
  }
  for (int32_t index : step->getReturnedNumbers())
    if (index >= 0)
      nonKernelUse[index] = true;
  for (size_t n = 0; n < numValues; ++n)
    useBegin[n + 1] += useBegin[n];
  usePositions.resize(useBegin[numValues]);
  {
    std::vector<uint32_t> fill(useBegin.begin(), useBegin.end() - 1);
    for (auto [i, r] : llvm::enumerate(order))
      for (int32_t index : step->getOperands(records[r]))
        if (index >= 0)
          usePositions[fill[index]++] = i + 1;
  }

  bufferOf.assign(numValues, -1);
  auto newBuffer = [&](int64_t index, int64_t start) {
    Buffer buffer;
    buffer.id = buffers.size();
    buffer.bytes = step->getBytes(index);
    buffer.start = start;
    buffer.end = lastUse[index];
    buffer.values.push_back(step->getValue(index));
    bufferOf[index] = buffer.id;
    buffers.push_back(std::move(buffer));
  };
  auto join = [&](int64_t index, unsigned id) {
    Buffer &buffer = buffers[id];
    buffer.values.push_back(step->getValue(index));
    buffer.end = std::max(buffer.end, lastUse[index]);
    bufferOf[index] = id;
  };

  // The arguments' buffers come first: argument argOfBuffer[id] is the
  // root of buffer id (persistent buffers are arguments' only).
  SmallVector<unsigned> argOfBuffer;
  for (unsigned index = 0; index != numArgs; ++index) {
    if (step->getBytes(index) < 0)
      continue;
    argOfBuffer.push_back(index);
    newBuffer(index, 0);
    buffers.back().persistent = step->isPersistentArg(index);
    buffers.back().host = step->isHostArg(index);
  }

  // The argument that each value returned in place of an argument
  // replaces, and the prefetches whose wait is such a value.
  DenseMap<int32_t, unsigned> replaces, prefetchReplaces;
  ArrayRef<int32_t> returned = step->getReturnedNumbers();
  ArrayRef<std::optional<unsigned>> replaced = step->getReplaced();
  replaces.reserve(returned.size());
  for (auto [k, index] : llvm::enumerate(returned))
    if (k < replaced.size() && replaced[k] && index >= 0)
      replaces[index] = *replaced[k];
  for (auto [index, arg] : replaces)
    if (uint32_t w = step->getDefiningRecord(index); w != FlatStep::kNone)
      if (uint32_t c = step->copyWaitedBy(records[w]);
          c != FlatStep::kNone && records[c].kind == FlatStep::Kind::Prefetch)
        prefetchReplaces[records[c].firstResult] = arg;

  for (auto [i, r] : llvm::enumerate(order)) {
    const int64_t p = i + 1;
    const FlatStep::Record &record = records[r];
    const int64_t base = record.firstResult;
    ArrayRef<int32_t> operandIndex = step->getOperands(record);
    switch (record.kind) {
    case FlatStep::Kind::Constant:
      continue;
    case FlatStep::Kind::View:
    case FlatStep::Kind::Wait:
      if (!operandIndex.empty() && record.numResults > 0)
        if (int64_t index = operandIndex[0]; index >= 0 && bufferOf[index] >= 0)
          join(base, bufferOf[index]);
      continue;
    case FlatStep::Kind::Offload:
    case FlatStep::Kind::Prefetch: {
      if (record.numResults == 0)
        continue;
      // A value copied back to the device in place of a persistent argument
      // (tidal-place: a parameter updated on the host) takes the argument's
      // device bytes once nothing reads them any more.
      if (record.kind == FlatStep::Kind::Prefetch)
        if (auto it = prefetchReplaces.find(base); it != prefetchReplaces.end())
          if (int32_t id = bufferOf[it->second]; id >= 0) {
            const Buffer &buffer = buffers[id];
            if (!buffer.host && buffer.persistent && buffer.end < p &&
                buffer.bytes == step->getBytes(base)) {
              join(base, id);
              continue;
            }
          }
      newBuffer(base, p);
      buffers.back().host = record.kind == FlatStep::Kind::Offload;
      continue;
    }
    case FlatStep::Kind::Kernel:
      break;
    }
    const bool onHost = record.host;
    SmallVector<unsigned, 2> claimed;
    for (uint32_t n = 0; n < record.numResults; ++n) {
      const int64_t index = base + n;
      const int64_t bytes = step->getBytes(index);
      if (bytes < 0)
        continue;
      std::optional<unsigned> reused;
      // inPlaceOperands(op, n), with the sizes known here.
      if (inPlace)
        for (uint32_t i : step->inPlaceCandidates(index)) {
          if (i >= operandIndex.size())
            continue;
          const int64_t source = operandIndex[i];
          if (source < 0 || step->getBytes(source) != bytes)
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
            auto replaced = replaces.find(index);
            if (replaced == replaces.end() ||
                replaced->second != argOfBuffer[id])
              continue;
          }
          reused = id;
          inPlaceUses.push_back(
              {step->getValue(index), step->getValue(source), p});
          break;
        }
      if (reused) {
        claimed.push_back(*reused);
        join(index, *reused);
      } else {
        newBuffer(index, p);
        buffers.back().host = onHost;
      }
    }
  }

  for (auto [value, index] :
       llvm::zip(step->getReturned(), step->getReturnedNumbers())) {
    int32_t id = index < 0 ? -1 : bufferOf[index];
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
  int64_t index = step->numberOf(value);
  if (index < 0)
    return -1;
  // A value of an op made after this analysis (its FlatStep updated since)
  // is not in it.
  uint32_t r = step->getDefiningRecord(index);
  return r == FlatStep::kNone || (r < positionOf.size() && positionOf[r])
             ? index
             : -1;
}

BufferLiveness::Uses BufferLiveness::usesOf(int64_t index) const {
  if (index < 0)
    return {};
  return {ArrayRef<uint32_t>(usePositions)
              .slice(useBegin[index], useBegin[index + 1] - useBegin[index]),
          nonKernelUse[index]};
}

BufferLiveness::Uses BufferLiveness::getUses(Value value) const {
  return usesOf(valueIndex(value));
}

BufferLiveness::Uses
BufferLiveness::getResultUses(int64_t position, unsigned resultNumber) const {
  return usesOf(resultBase[position - 1] + resultNumber);
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
    return getPosition(result.getOwner());
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
