//===- ChannelLayout.h - channel-blocked tensors ----------------*- C++ -*-===//
//
// `tidal-block-channels` keeps the activations of conv -> batch norm ->
// element-wise chains in a channel-blocked layout (oneDNN's nChw16c or
// nChw8c, the block chosen by the runtime for its CPU) instead of dense
// NCHW, so that convolutions skip their reorders and batch normalization
// runs oneDNN's vectorized kernels. A value's layout is a property of its
// bytes: the op that defines it lists the value's result index in
// `tidal.blocked`; copies (offload, prefetch, wait) pass their operand's
// layout on. Values without the mark are dense, C order.
//
//===----------------------------------------------------------------------===//

#ifndef TIDAL_DIALECT_TIDAL_IR_CHANNELLAYOUT_H
#define TIDAL_DIALECT_TIDAL_IR_CHANNELLAYOUT_H

#include "mlir/IR/Operation.h"
#include "mlir/IR/Types.h"
#include "mlir/IR/Value.h"

namespace mlir::tidal {

/// The discardable attribute listing an op's channel-blocked results.
constexpr llvm::StringLiteral kBlockedAttrName = "tidal.blocked";

/// The channel count a blocked tensor's dim 1 must be a multiple of: a
/// multiple of every block the runtime may choose (8 for AVX2, 16 for
/// AVX-512), so the blocked bytes are exactly the dense ones' count.
constexpr int64_t kChannelBlockMultiple = 16;

/// Whether `v`'s bytes are channel-blocked.
bool isChannelBlocked(Value v);

/// Whether operand `i` of `op` may be channel-blocked while the others keep
/// their own layouts (convolutions, batch normalization, max and average
/// pooling: the kernels take each tensor's layout from the call).
bool acceptsBlockedOperand(Operation *op, unsigned i);
/// As acceptsBlockedOperand for result `i`.
bool acceptsBlockedResult(Operation *op, unsigned i);

/// Whether `op` computes element by element on tensors of one shape, so
/// that it computes the same on any layout shared by all its tensors
/// (element-wise ops on same-shaped operands, copies), or moves whole runs
/// of channels per sample (concat and split along the channels, whose
/// parts a blocked group has as multiples of 16 channels). One-element
/// operands (broadcast scalars) read the same on any layout and do not
/// count.
bool isLayoutTransparent(Operation *op);

/// Whether values of type `t` have one element (a broadcast scalar).
bool isBroadcastScalar(Type t);

} // namespace mlir::tidal

#endif // TIDAL_DIALECT_TIDAL_IR_CHANNELLAYOUT_H
