//===- LinalgConverters.cpp - ONNX Det as Gaussian elimination ------------===//
//
// Det of [..., n, n] (torch.det, torch.linalg.det; n known at compile time,
// at most kMaxOrder): the batch dims merged, then n - 1 steps of Gaussian
// elimination with partial pivoting, unrolled:
//   p        = k + argmax |A[:, k:, k]|          (the pivot row)
//   A        = P A, P the permutation matrix swapping rows k and p (a
//              one-hot matmul: the pivot is data)
//   sign    *= (p == k ? 1 : -1)
//   A       -= (A[:, :, k] / A[:, k, k] below row k) * A[:, k, :]
// and det = sign * prod(diag(A)). A zero pivot (the column is zero from row
// k down: the matrix is singular) divides by 1 instead, leaving a zero on
// the diagonal, so the determinant is 0 as PyTorch's. The gradient is the
// ops' (matmul, div, reduce_prod): the derivative of the computed
// elimination, det(A) A^-T where A is invertible.
//
//===----------------------------------------------------------------------===//

#include "ConverterSupport.h"

using namespace mlir;
using namespace mlir::tidal;
using namespace mlir::tidal::importer;

namespace {

/// The largest matrix order Det unrolls (63 elimination steps).
constexpr int64_t kMaxOrder = 64;

LogicalResult convertDet(Node &n) {
  auto x = n.floatIn(0);
  if (failed(x))
    return failure();
  RankedTensorType t = n.type(0);
  const int64_t rank = t.getRank();
  if (rank < 2 || t.getDimSize(rank - 1) != t.getDimSize(rank - 2))
    return n.fail("input " + typeToString(t) +
                  " is not a (batch of) square matrices");
  const int64_t order = t.getDimSize(rank - 1);
  if (order < 1 || order > kMaxOrder)
    return n.fail("a matrix of order " + llvm::Twine(order) +
                  " is not supported (1 to " + llvm::Twine(kMaxOrder) + ")");
  Type elt = t.getElementType();
  int64_t batch = 1;
  for (int64_t d = 0; d < rank - 2; ++d)
    batch *= t.getDimSize(d);
  Composer c{n};
  auto f = [&](llvm::ArrayRef<int64_t> shape, llvm::ArrayRef<double> v) {
    return c.op(
        ConstantOp::getOperationName(), {},
        {n.named("value", makeConstant(RankedTensorType::get(shape, elt), v))});
  };
  auto slice = [&](Value v, llvm::ArrayRef<int64_t> starts,
                   llvm::ArrayRef<int64_t> ends) {
    llvm::SmallVector<int64_t> steps(starts.size(), 1);
    return c.op(
        SliceOp::getOperationName(), {v},
        {n.arr("starts", starts), n.arr("ends", ends), n.arr("steps", steps)});
  };
  auto bin = [&](llvm::StringRef op, Value a, Value b) {
    return c.binary(op, a, b);
  };
  Value a = c.reshape(*x, {batch, order, order});
  Value sign = f({batch}, llvm::SmallVector<double>(batch, 1.0));
  llvm::SmallVector<int64_t> iota(order);
  for (int64_t i = 0; i < order; ++i)
    iota[i] = i;
  Value rows = c.i64Const({1, order}, iota);
  Value cols = c.i64Const({1, 1, order}, iota);
  for (int64_t k = 0; k + 1 < order && c.ok; ++k) {
    // The pivot row p (per matrix): the largest |A[i, k]| for i >= k.
    Value column = c.reshape(slice(a, {0, k, k}, {batch, order, k + 1}),
                             {batch, order - k});
    Value magnitude = c.op(AbsOp::getOperationName(), {column});
    Value offset =
        c.op(ArgMaxOp::getOperationName(), {magnitude},
             {n.named("axis", n.b().getI64IntegerAttr(1)),
              n.named("keepdims", n.b().getBoolAttr(true)),
              n.named("select_last_index", n.b().getBoolAttr(false))});
    Value p = bin(AddOp::getOperationName(), offset, c.i64Const({}, {k}));
    Value kk = c.i64Const({}, {k});
    // Row i of P A is row sigma(i) of A: sigma swaps k and p.
    Value isK = bin(EqualOp::getOperationName(), rows, kk);
    Value isP = bin(EqualOp::getOperationName(), rows, p);
    Value sigma =
        c.op(WhereOp::getOperationName(),
             {isK, p, c.op(WhereOp::getOperationName(), {isP, kk, rows})});
    Value oneHot = bin(EqualOp::getOperationName(),
                       c.reshape(sigma, {batch, order, 1}), cols);
    Operation *perm =
        n.g.create(CastOp::getOperationName(), {oneHot}, {}, 1, n.error,
                   {RankedTensorType::get({batch, order, order}, elt)});
    if (!perm)
      return failure();
    a = c.op(MatMulOp::getOperationName(), {perm->getResult(0), a});
    Value swapped = c.reshape(bin(EqualOp::getOperationName(), p, kk), {batch});
    sign = bin(MulOp::getOperationName(), sign,
               c.op(WhereOp::getOperationName(),
                    {swapped, f({}, {1.0}), f({}, {-1.0})}));
    // Eliminate below the pivot.
    Value pivot = slice(a, {0, k, k}, {batch, k + 1, k + 1}); // [B, 1, 1]
    Value zero = bin(EqualOp::getOperationName(), pivot, f({}, {0.0}));
    pivot = c.op(WhereOp::getOperationName(), {zero, f({}, {1.0}), pivot});
    Value below = slice(a, {0, 0, k}, {batch, order, k + 1}); // [B, n, 1]
    llvm::SmallVector<double> mask(order, 0.0);
    for (int64_t i = k + 1; i < order; ++i)
      mask[i] = 1.0;
    Value factors =
        bin(MulOp::getOperationName(),
            bin(DivOp::getOperationName(), below, pivot), f({order, 1}, mask));
    Value pivotRow = slice(a, {0, k, 0}, {batch, k + 1, order}); // [B, 1, n]
    a = bin(SubOp::getOperationName(), a,
            bin(MulOp::getOperationName(), factors, pivotRow));
  }
  if (!c.ok)
    return failure();
  // The diagonal: A * I summed over the columns.
  llvm::SmallVector<double> identity(order * order, 0.0);
  for (int64_t i = 0; i < order; ++i)
    identity[i * order + i] = 1.0;
  Value diag =
      c.op(ReduceSumOp::getOperationName(),
           {bin(MulOp::getOperationName(), a, f({order, order}, identity))},
           {n.arr("axes", {2}), n.named("keepdims", n.b().getBoolAttr(false))});
  Value product =
      c.op(ReduceProdOp::getOperationName(), {diag},
           {n.arr("axes", {1}), n.named("keepdims", n.b().getBoolAttr(false))});
  Value det = bin(MulOp::getOperationName(), sign, product);
  return c.bind(c.reshape(det, t.getShape().drop_back(2)));
}

} // namespace

void importer::addLinalgConverters(llvm::StringMap<Converter> &map) {
  map["Det"] = convertDet;
}
