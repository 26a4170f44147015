//===- CommOps.cpp - type rules of the data-parallel collectives ----------===//
//
// all_reduce_start and all_reduce_wait return one tensor per operand, of its
// type, written over it when the plan allows (InPlaceOpInterface); the
// kernels take float32 only. A wait reads exactly the results of one start
// of its bucket, in order.
//
//===----------------------------------------------------------------------===//

#include "tidal/Dialect/Tidal/IR/TidalOps.h"

using namespace mlir;
using namespace mlir::tidal;

/// Result i has operand i's type.
template <typename Adaptor>
static LogicalResult sameTypes(Adaptor adaptor, SmallVectorImpl<Type> &out) {
  for (Value v : adaptor.getInputs())
    out.push_back(v.getType());
  return success();
}

LogicalResult
AllReduceStartOp::inferReturnTypes(MLIRContext *, std::optional<Location>,
                                   AllReduceStartOp::Adaptor adaptor,
                                   SmallVectorImpl<Type> &out) {
  return sameTypes(adaptor, out);
}

LogicalResult
AllReduceWaitOp::inferReturnTypes(MLIRContext *, std::optional<Location>,
                                  AllReduceWaitOp::Adaptor adaptor,
                                  SmallVectorImpl<Type> &out) {
  return sameTypes(adaptor, out);
}

/// Result i may take operand i's bytes.
static SmallVector<unsigned, 2> ownOperand(unsigned result) { return {result}; }

SmallVector<unsigned, 2> AllReduceStartOp::getInPlaceOperands(unsigned result) {
  return ownOperand(result);
}

SmallVector<unsigned, 2> AllReduceWaitOp::getInPlaceOperands(unsigned result) {
  return ownOperand(result);
}

LogicalResult
ReduceScatterWaitOp::inferReturnTypes(MLIRContext *, std::optional<Location>,
                                      ReduceScatterWaitOp::Adaptor adaptor,
                                      SmallVectorImpl<Type> &out) {
  return sameTypes(adaptor, out);
}

SmallVector<unsigned, 2>
ReduceScatterWaitOp::getInPlaceOperands(unsigned result) {
  return ownOperand(result);
}

LogicalResult
AllGatherWaitOp::inferReturnTypes(MLIRContext *, std::optional<Location>,
                                  AllGatherWaitOp::Adaptor adaptor,
                                  SmallVectorImpl<Type> &out) {
  return sameTypes(adaptor, out);
}

SmallVector<unsigned, 2> AllGatherWaitOp::getInPlaceOperands(unsigned result) {
  return ownOperand(result);
}

/// What the runtime's kernels accept: 1 to 120 float32 tensors (a kernel
/// call holds at most 256 tensors, operands and results).
static LogicalResult verifyBucket(Operation *op, ValueRange inputs) {
  if (inputs.empty())
    return op->emitOpError("needs at least one tensor");
  if (inputs.size() > 120)
    return op->emitOpError("takes at most 120 tensors, got ") << inputs.size();
  for (Value v : inputs)
    if (!cast<RankedTensorType>(v.getType()).getElementType().isF32())
      return op->emitOpError("reduces float32 tensors only, got ")
             << v.getType();
  return success();
}

/// A wait reads all the results of one `StartOp` of its own bucket, in
/// order.
template <typename StartOp, typename WaitOp>
static LogicalResult verifyWait(WaitOp wait, StringRef startName) {
  if (failed(verifyBucket(wait, wait.getInputs())))
    return failure();
  auto start = wait.getInputs().front().template getDefiningOp<StartOp>();
  if (!start || !llvm::equal(start->getResults(), wait.getInputs()))
    return wait.emitOpError("waits for one ")
           << startName
           << ": its operands must be all the results of one, in order";
  if (start.getBucket() != wait.getBucket())
    return wait.emitOpError("waits for bucket ")
           << wait.getBucket() << " but its operands come from bucket "
           << start.getBucket();
  return success();
}

/// Each of `chunks` is 1-D ceil(n / ranks) of the matching `fulls` (`what`:
/// "operand" or "result", the side that holds the chunks).
static LogicalResult verifyChunks(Operation *op, ValueRange chunks,
                                  ValueRange fulls, int64_t ranks,
                                  StringRef what) {
  if (chunks.size() != fulls.size())
    return op->emitOpError("needs one result per operand");
  for (auto [c, f] : llvm::zip(chunks, fulls)) {
    auto chunk = cast<RankedTensorType>(c.getType());
    auto full = cast<RankedTensorType>(f.getType());
    int64_t n = full.getNumElements();
    if (chunk.getRank() != 1 ||
        full.getElementType() != chunk.getElementType() ||
        chunk.getDimSize(0) * ranks < n ||
        (chunk.getDimSize(0) - 1) * ranks >= n)
      return op->emitOpError() << what << " " << chunk << " is not a chunk of "
                               << full << " over " << ranks << " ranks";
  }
  return success();
}

/// 1 (a sum) or the number of ranks (a mean).
static LogicalResult verifyDivisor(Operation *op, uint64_t divisor,
                                   uint64_t ranks) {
  if (divisor != 1 && divisor != ranks)
    return op->emitOpError("divisor must be 1 (a sum) or the number of ranks "
                           "(a mean), got ")
           << divisor << " for " << ranks << " ranks";
  return success();
}

LogicalResult AllReduceStartOp::verify() {
  if (failed(verifyBucket(*this, getInputs())))
    return failure();
  return verifyDivisor(*this, getDivisor(), getRanks());
}

LogicalResult AllReduceWaitOp::verify() {
  return verifyWait<AllReduceStartOp>(*this, "all_reduce_start");
}

LogicalResult ShardOp::verify() {
  auto in = cast<RankedTensorType>(getInput().getType());
  auto out = cast<RankedTensorType>(getOutput().getType());
  if (!in.getElementType().isF32() ||
      out.getElementType() != in.getElementType())
    return emitOpError("shards float32 tensors only, got ")
           << in << " -> " << out;
  int64_t ranks = getRanks();
  int64_t chunk = (in.getNumElements() + ranks - 1) / ranks;
  if (out.getRank() != 1 || out.getDimSize(0) != chunk)
    return emitOpError("result must be 1-D with ceil(")
           << in.getNumElements() << " / " << ranks << ") = " << chunk
           << " elements, got " << out;
  return success();
}

LogicalResult AllGatherStartOp::verify() {
  if (failed(verifyBucket(*this, getInputs())))
    return failure();
  return verifyChunks(*this, getInputs(), getOutputs(), getRanks(), "operand");
}

LogicalResult AllGatherWaitOp::verify() {
  return verifyWait<AllGatherStartOp>(*this, "all_gather_start");
}

LogicalResult ReduceScatterStartOp::verify() {
  if (failed(verifyBucket(*this, getInputs())) ||
      failed(verifyDivisor(*this, getDivisor(), getRanks())))
    return failure();
  return verifyChunks(*this, getOutputs(), getInputs(), getRanks(), "result");
}

LogicalResult ReduceScatterWaitOp::verify() {
  return verifyWait<ReduceScatterStartOp>(*this, "reduce_scatter_start");
}
