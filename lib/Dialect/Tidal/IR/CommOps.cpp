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

LogicalResult AllReduceStartOp::verify() {
  if (failed(verifyBucket(*this, getInputs())))
    return failure();
  if ((uint64_t)getDivisor() != 1 && (uint64_t)getDivisor() != getRanks())
    return emitOpError("divisor must be 1 (a sum) or the number of ranks (a "
                       "mean), got ")
           << getDivisor() << " for " << getRanks() << " ranks";
  return success();
}

LogicalResult AllReduceWaitOp::verify() {
  if (failed(verifyBucket(*this, getInputs())))
    return failure();
  auto start = getInputs().front().getDefiningOp<AllReduceStartOp>();
  if (!start || !llvm::equal(start->getResults(), getInputs()))
    return emitOpError("waits for one all_reduce_start: its operands must be "
                       "all the results of one, in order");
  if (start.getBucket() != getBucket())
    return emitOpError("waits for bucket ")
           << getBucket() << " but its operands come from bucket "
           << start.getBucket();
  return success();
}

/// Whether `n` elements make `ranks` chunks of `chunk`: ceil(n / ranks).
static bool isChunkOf(int64_t chunk, int64_t n, int64_t ranks) {
  return chunk * ranks >= n && (chunk - 1) * ranks < n;
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
  if (getInputs().size() != getOutputs().size())
    return emitOpError("needs one result per operand");
  for (auto [in, out] : llvm::zip(getInputs(), getOutputs())) {
    auto chunk = cast<RankedTensorType>(in.getType());
    auto full = cast<RankedTensorType>(out.getType());
    if (chunk.getRank() != 1 ||
        full.getElementType() != chunk.getElementType() ||
        !isChunkOf(chunk.getDimSize(0), full.getNumElements(), getRanks()))
      return emitOpError("operand ") << chunk << " is not a chunk of " << full
                                     << " over " << getRanks() << " ranks";
  }
  return success();
}

LogicalResult AllGatherWaitOp::verify() {
  if (failed(verifyBucket(*this, getInputs())))
    return failure();
  auto start = getInputs().front().getDefiningOp<AllGatherStartOp>();
  if (!start || !llvm::equal(start->getResults(), getInputs()))
    return emitOpError("waits for one all_gather_start: its operands must be "
                       "all the results of one, in order");
  if (start.getBucket() != getBucket())
    return emitOpError("waits for bucket ")
           << getBucket() << " but its operands come from bucket "
           << start.getBucket();
  return success();
}

LogicalResult ReduceScatterStartOp::verify() {
  if (failed(verifyBucket(*this, getInputs())))
    return failure();
  if (getInputs().size() != getOutputs().size())
    return emitOpError("needs one result per operand");
  if ((uint64_t)getDivisor() != 1 && (uint64_t)getDivisor() != getRanks())
    return emitOpError("divisor must be 1 (a sum) or the number of ranks (a "
                       "mean), got ")
           << getDivisor() << " for " << getRanks() << " ranks";
  for (auto [in, out] : llvm::zip(getInputs(), getOutputs())) {
    auto full = cast<RankedTensorType>(in.getType());
    auto chunk = cast<RankedTensorType>(out.getType());
    if (chunk.getRank() != 1 ||
        full.getElementType() != chunk.getElementType() ||
        !isChunkOf(chunk.getDimSize(0), full.getNumElements(), getRanks()))
      return emitOpError("result ") << chunk << " is not a chunk of " << full
                                    << " over " << getRanks() << " ranks";
  }
  return success();
}

LogicalResult ReduceScatterWaitOp::verify() {
  if (failed(verifyBucket(*this, getInputs())))
    return failure();
  auto start = getInputs().front().getDefiningOp<ReduceScatterStartOp>();
  if (!start || !llvm::equal(start->getResults(), getInputs()))
    return emitOpError("waits for one reduce_scatter_start: its operands "
                       "must be all the results of one, in order");
  if (start.getBucket() != getBucket())
    return emitOpError("waits for bucket ")
           << getBucket() << " but its operands come from bucket "
           << start.getBucket();
  return success();
}
