//===- Placer.cpp - the general placement rule ----------------------------===//
//
// See Placer.h.
//
//===----------------------------------------------------------------------===//

#include "Placer.h"

#include "tidal/Dialect/Tidal/Analysis/BufferLiveness.h"
#include "tidal/Dialect/Tidal/Analysis/CostModel.h"
#include "tidal/Dialect/Tidal/IR/TidalOps.h"

#include "mlir/IR/Builders.h"

using namespace mlir;
using namespace mlir::tidal;
using namespace mlir::tidal::place;

namespace {

/// Constants (and views of them) live in the program image, which both
/// sides read.
bool isConstantValue(Value v) {
  while (Operation *def = v.getDefiningOp()) {
    if (isa<ConstantOp>(def))
      return true;
    if (!isViewOp(def))
      return false;
    v = def->getOperand(0);
  }
  return false;
}

int64_t bytesOf(Value v) {
  return tensorByteSize(cast<ShapedType>(v.getType()));
}

} // namespace

namespace mlir::tidal::place {

bool isPlaceable(Operation *op) {
  return !isa<ConstantOp, OffloadOp, PrefetchOp, WaitOp, func::ReturnOp>(op) &&
         !isViewOp(op);
}

bool Placer::onHost(Value v) const {
  if (auto arg = dyn_cast<BlockArgument>(v))
    return hostArgs.contains(arg);
  Operation *def = v.getDefiningOp();
  if (isa<OffloadOp>(def))
    return true;
  if (isa<PrefetchOp, ConstantOp>(def))
    return false;
  if (isa<WaitOp>(def) || isViewOp(def))
    return onHost(def->getOperand(0));
  return hostOps.contains(def);
}

bool Placer::usedOnlyOnHost(Value v) const {
  bool any = false;
  for (Operation *user : v.getUsers()) {
    if (isViewOp(user)) {
      if (!usedOnlyOnHost(user->getResult(0)))
        return false;
    } else if (!hostOps.contains(user)) {
      return false;
    }
    any = true;
  }
  return any;
}

bool Placer::readOnHost(Value v) const {
  return llvm::any_of(v.getUsers(), [&](Operation *user) {
    return isViewOp(user) ? readOnHost(user->getResult(0))
                          : hostOps.contains(user);
  });
}

/// Moves each host op that reads device tensors later, past device kernels
/// that do not read its results, until their predicted time covers the
/// copies of those tensors to the host: the copies start when the last of
/// them is defined.
void Placer::sinkHostOps() {
  Block &body = func.getBody().front();
  SmallVector<Operation *> order;
  for (Operation &op : body.without_terminator())
    if (hostOps.contains(&op))
      order.push_back(&op);
  for (Operation *op : llvm::reverse(order)) {
    int64_t bytes = 0;
    Operation *anchor = nullptr;
    for (Value v : op->getOperands()) {
      if (isConstantValue(v) || onHost(v))
        continue;
      bytes += bytesOf(v);
      if (Operation *def = v.getDefiningOp())
        if (!anchor || anchor->isBeforeInBlock(def))
          anchor = def;
    }
    if (bytes == 0)
      continue;
    double copyUs = copyMicroseconds(link, bytes);
    double hiddenUs = 0;
    if (anchor)
      for (Operation *o = anchor->getNextNode(); o && o != op;
           o = o->getNextNode())
        if (!hostOps.contains(o))
          hiddenUs += estimateCost(o, options.device).us;
    auto readsResult = [&](Operation *next) {
      return llvm::any_of(next->getOperands(),
                          [&](Value v) { return v.getDefiningOp() == op; });
    };
    while (hiddenUs < copyUs) {
      Operation *next = op->getNextNode();
      if (!next || next->hasTrait<OpTrait::IsTerminator>() ||
          readsResult(next) || hostOps.contains(next))
        break;
      op->moveAfter(next);
      hiddenUs += estimateCost(next, options.device).us;
    }
  }
}

Value Placer::copyFor(Value v, Operation *user, Operation *anchor) {
  if (Value copy = copies.lookup(v))
    return copy;
  bool toHost = !onHost(v);
  OpBuilder b(func.getContext());
  Block &body = func.getBody().front();
  Operation *def = v.getDefiningOp();
  if (def && isViewOp(def) && !def->getOperand(0).getDefiningOp() && !toHost)
    def = nullptr; // a view of an argument: hoisted like the argument
  if (def) {
    b.setInsertionPointAfter(def);
  } else if (!toHost) {
    // A host argument that a device op reads (a streamed parameter): the
    // prefetch goes back over device kernels until their predicted time
    // hides the copy.
    const double copyUs = copyMicroseconds(link, bytesOf(v));
    Operation *at = user;
    double hiddenUs = 0;
    while (hiddenUs < copyUs && at->getPrevNode()) {
      at = at->getPrevNode();
      if (Operation *vdef = v.getDefiningOp(); vdef == at)
        break; // not before the view it reads
      if (isPlaceable(at) && !hostOps.contains(at))
        hiddenUs += estimateCost(at, options.device).us;
    }
    if (Operation *vdef = v.getDefiningOp(); vdef == at)
      b.setInsertionPointAfter(at);
    else
      b.setInsertionPoint(at);
  } else if (anchor)
    b.setInsertionPointAfter(anchor);
  else
    b.setInsertionPointToStart(&body);
  Location loc = user->getLoc();
  Value started = toHost ? b.create<OffloadOp>(loc, v).getResult()
                         : b.create<PrefetchOp>(loc, v).getResult();
  b.setInsertionPoint(user);
  Value waited = b.create<WaitOp>(loc, started).getResult();
  copies[v] = waited;
  ++numCopies;
  return waited;
}

void Placer::run(PlaceStats &stats) {
  if (hostOps.empty())
    return;
  Block &body = func.getBody().front();
  sinkHostOps();

  for (BlockArgument arg : func.getArguments())
    if (usedOnlyOnHost(arg) ||
        (stream && isPersistentArgument(func, arg.getArgNumber()) &&
         readOnHost(arg) &&
         (streamOnly.empty() || llvm::any_of(arg.getUsers(), [&](Operation *u) {
            return streamOnly.contains(u);
          }))))
      hostArgs.insert(arg);

  SmallVector<Operation *> ops;
  for (Operation &op : body.without_terminator())
    ops.push_back(&op);
  for (Operation *op : ops) {
    if (!isPlaceable(op))
      continue;
    bool opHost = hostOps.contains(op);
    // Where the copies of arguments start: after the last operand that an
    // op defines (so that they share the link with nothing earlier).
    Operation *anchor = nullptr;
    for (Value v : op->getOperands())
      if (Operation *def = v.getDefiningOp())
        if (!anchor || anchor->isBeforeInBlock(def))
          anchor = def;
    for (OpOperand &use : op->getOpOperands()) {
      Value v = use.get();
      if (isConstantValue(v) || onHost(v) == opHost)
        continue;
      use.set(copyFor(v, op, anchor));
    }
  }

  // Results go where the arguments they replace live; others stay where
  // they were computed.
  auto ret = cast<func::ReturnOp>(body.getTerminator());
  SmallVector<std::optional<unsigned>> replaced = replacedArguments(func);
  Builder b(func.getContext());
  SmallVector<unsigned> hostResults;
  for (OpOperand &use : ret->getOpOperands()) {
    Value v = use.get();
    unsigned i = use.getOperandNumber();
    if (isConstantValue(v))
      continue;
    bool host = onHost(v);
    if (replaced[i]) {
      bool argHost = hostArgs.contains(func.getArgument(*replaced[i]));
      if (argHost != host) {
        use.set(copyFor(v, ret, nullptr));
        host = argHost;
      }
    }
    if (host)
      hostResults.push_back(i);
  }
  // One update for all arguments (and one for all results): an update per
  // attribute would build an array of every dictionary each time.
  StringAttr hostAttr = b.getStringAttr(kHostValue);
  SmallVector<DictionaryAttr> argDicts, resultDicts;
  for (BlockArgument arg : func.getArguments()) {
    NamedAttrList attrs(func.getArgAttrDict(arg.getArgNumber()));
    if (hostArgs.contains(arg)) {
      attrs.set(kSpaceAttr, hostAttr);
      ++stats.hostArgs;
      stats.hostArgBytes += bytesOf(arg);
    }
    argDicts.push_back(attrs.getDictionary(func.getContext()));
  }
  for (unsigned i = 0; i < func.getNumResults(); ++i) {
    NamedAttrList attrs(func.getResultAttrDict(i));
    if (llvm::is_contained(hostResults, i))
      attrs.set(kSpaceAttr, hostAttr);
    resultDicts.push_back(attrs.getDictionary(func.getContext()));
  }
  func.setAllArgAttrs(argDicts);
  func.setAllResultAttrs(resultDicts);
  for (Operation *op : hostOps) {
    op->setAttr(kDeviceAttr, b.getStringAttr(kHostValue));
    ++stats.hostOps;
  }
  stats.copies += numCopies;
}

/// Bytes of the arguments that persist across steps, each aligned: with
/// everything on the device, no budget below this can be met.
int64_t persistentBytes(func::FuncOp func, int64_t alignment) {
  int64_t total = 0;
  for (BlockArgument arg : func.getArguments())
    if (isPersistentArgument(func, arg.getArgNumber()))
      if (auto type = dyn_cast<ShapedType>(arg.getType());
          type && type.hasStaticShape())
        total += alignBytes(tensorByteSize(type), alignment);
  return total;
}

/// The ops that `mode` (host, optimizer or stream) puts on the host, and
/// the placeable ops whose index is in `layers`.
DenseSet<Operation *> hostOpsFor(func::FuncOp func, StringRef mode,
                                 const DenseSet<int64_t> &layers) {
  DenseSet<Operation *> hostOps;
  for (Operation &op : func.getBody().front().without_terminator()) {
    if (!isPlaceable(&op))
      continue;
    if (auto index = op.getAttrOfType<IntegerAttr>(kPlaceIndexAttr))
      if (layers.contains(index.getInt())) {
        hostOps.insert(&op);
        continue;
      }
    // An update without state (plain SGD) frees no device memory on the
    // host: it stays.
    // Streamed parameters are updated on the host, plain SGD too.
    if (mode == "host" ||
        (mode == "optimizer" && isOptimizerUpdate(&op) &&
         !isa<SgdUpdateOp>(op)) ||
        (mode == "stream" && isOptimizerUpdate(&op)))
      hostOps.insert(&op);
  }
  return hostOps;
}

} // namespace mlir::tidal::place
