//===- RecurrentConverters.cpp - ONNX LSTM, GRU and RNN, unrolled ---------===//
//
// LSTM, GRU and RNN are unrolled over the static sequence length into tidal
// ops (gemm, split, sigmoid, tanh, relu, mul, add, concat), so that
// autodiff, the kernels and the memory planner handle them like any other
// graph: the gradient is backpropagation through time, each step's
// activations are ordinary tensors the planner may swap or recompute.
//
// The input projection of all steps is one gemm ([T N, I] x W^T); each step
// adds h R^T. Gate orders are ONNX's (LSTM i, o, f, c; GRU z, r, h),
// activations the defaults (sigmoid, tanh, tanh; RNN tanh, or relu per
// direction as PyTorch's nn.RNN(nonlinearity='relu') exports), directions
// forward, reverse and bidirectional, layout 0 and 1 (opset 14). Not
// supported, with an error naming them: other activations, `clip`,
// `input_forget` and peepholes. With `sequence_lens` (packed sequences,
// known or not at compile time) each step is masked per sequence: past its
// length a sequence keeps its state and outputs zeros, so Y_h is the state
// at its last step and the reverse direction starts there.
//
//===----------------------------------------------------------------------===//

#include "ConverterSupport.h"

#include <limits>

using namespace mlir;
using namespace mlir::tidal;
using namespace mlir::tidal::importer;

namespace {

enum class Cell { LSTM, GRU, RNN };

struct Recurrent {
  Node &n;
  Composer b;
  bool lstm, rnn;
  int64_t gates; // 4 (LSTM), 3 (GRU) or 1 (RNN)
  int64_t seq = 0, batch = 0, input = 0, hidden = 0, dirs = 1;
  bool batchFirst = false;
  bool reverseOnly = false;
  bool linearBeforeReset = false;
  bool reluRnn[2] = {false, false}; // RNN: relu instead of tanh, per direction
  FloatType ft;
  /// sequence_lens [N] when some sequence is shorter than T (packed
  /// sequences): steps past a sequence's length keep its state and output
  /// zeros.
  Value seqLens;

  Recurrent(Node &n, Cell cell)
      : n(n), b{n}, lstm(cell == Cell::LSTM), rnn(cell == Cell::RNN),
        gates(cell == Cell::LSTM  ? 4
              : cell == Cell::GRU ? 3
                                  : 1) {}

  /// Rows [begin, end) of dimension `axis` of `v`.
  Value slice(Value v, int64_t axis, int64_t begin, int64_t end) {
    if (!b.ok)
      return {};
    auto t = cast<RankedTensorType>(v.getType());
    llvm::SmallVector<int64_t> s(t.getRank(), 0), e(t.getShape()),
        st(t.getRank(), 1);
    s[axis] = begin;
    e[axis] = end;
    return b.op(SliceOp::getOperationName(), {v},
                {n.arr("starts", s), n.arr("ends", e), n.arr("steps", st)});
  }
  /// a x w^T (+ bias).
  Value gemmT(Value a, Value w, Value bias = {}) {
    llvm::SmallVector<Value> ops{a, w};
    if (bias)
      ops.push_back(bias);
    return b.op(GemmOp::getOperationName(), ops,
                {n.named("trans_b", n.b().getBoolAttr(true))});
  }
  Value add(Value x, Value y) {
    return b.binary(AddOp::getOperationName(), x, y);
  }
  Value mul(Value x, Value y) {
    return b.binary(MulOp::getOperationName(), x, y);
  }
  Value sigmoid(Value x) { return b.op(SigmoidOp::getOperationName(), {x}); }
  Value tanh(Value x) { return b.op(TanhOp::getOperationName(), {x}); }
  Value relu(Value x) { return b.op(ReluOp::getOperationName(), {x}); }
  /// The `k`-th of `parts` equal column blocks of a [N, parts * H] value.
  Value block(Value v, int64_t k) {
    return slice(v, 1, k * hidden, (k + 1) * hidden);
  }
  /// Direction d's [rows, cols] matrix of a [dirs, rows, cols] input.
  Value matrix(Value v, int64_t d) {
    auto t = cast<RankedTensorType>(v.getType());
    return b.reshape(slice(v, 0, d, d + 1), {t.getDimSize(1), t.getDimSize(2)});
  }
  /// Direction d's [N, H] state of a [dirs, N, H] input, or zeros.
  Value state(int idx, int64_t d) {
    if (!n.has(idx))
      return b.splat(ft, {batch, hidden}, 0.0);
    auto v = n.in(idx);
    if (failed(v)) {
      b.ok = false;
      return {};
    }
    if (batchFirst) // [N, dirs, H]
      return b.reshape(slice(*v, 1, d, d + 1), {batch, hidden});
    return b.reshape(slice(*v, 0, d, d + 1), {batch, hidden});
  }

  LogicalResult check();
  /// One direction: returns the per-step outputs [T x [N, H]] in time
  /// order, and the final h (and c).
  void direction(Value x2d, int64_t d, bool reverse,
                 llvm::SmallVectorImpl<Value> &ys, Value &hLast, Value &cLast);
  LogicalResult run();
};

/// The longest sequence the converters unroll.
constexpr int64_t kMaxSteps = 1 << 16;

LogicalResult Recurrent::check() {
  auto x = n.type(0);
  if (!x || x.getRank() != 3)
    return n.fail("X must have rank 3");
  ft = dyn_cast<FloatType>(x.getElementType());
  if (!ft)
    return n.fail("X must be a float tensor");
  batchFirst = n.i("layout", 0) != 0;
  seq = x.getDimSize(batchFirst ? 1 : 0);
  batch = x.getDimSize(batchFirst ? 0 : 1);
  input = x.getDimSize(2);
  // The sequence is unrolled, a few ops per step: a static length, bounded
  // (fuzzing found X of [2^31 - 1, 3, 2] allocating 16 GiB for the step
  // values alone).
  if (!x.hasStaticShape() || seq > kMaxSteps)
    return n.fail("X must have a static shape with at most " +
                  llvm::Twine(kMaxSteps) +
                  " steps (the sequence is unrolled), got " + typeToString(x));
  hidden = n.i("hidden_size", 0);
  std::string direction = n.s("direction", "forward");
  if (direction == "bidirectional")
    dirs = 2;
  else if (direction == "reverse")
    reverseOnly = true;
  else if (direction != "forward")
    return n.fail("direction '" + direction + "' is not valid");
  if (n.attr("clip"))
    return n.fail("attribute 'clip' is not supported");
  if (lstm && n.i("input_forget", 0))
    return n.fail("input_forget = 1 is not supported");
  if (lstm && n.has(7))
    return n.fail("peephole weights (input P) are not supported");
  if (const auto *acts = n.attr("activations")) {
    if (rnn) { // one activation per direction: Tanh (default) or Relu
      int count = acts->strings_size();
      if (count != 1 && count != dirs)
        return n.fail("attribute 'activations' must name one activation "
                      "per direction (" +
                      llvm::Twine(dirs) + "), got " + llvm::Twine(count));
      for (int d = 0; d < dirs; ++d) {
        const std::string &a = acts->strings(count == 1 ? 0 : d);
        if (a != "Tanh" && a != "Relu")
          return n.fail("activation '" + a +
                        "' is not supported (RNN: only Tanh and Relu)");
        reluRnn[d] = a == "Relu";
      }
    } else {
      llvm::SmallVector<std::string> want = {"Sigmoid", "Tanh", "Tanh"};
      if (!lstm)
        want.pop_back();
      for (int i = 0; i < acts->strings_size(); ++i)
        if (acts->strings(i) != want[i % want.size()])
          return n.fail("activation '" + acts->strings(i) +
                        "' is not supported (only the default sigmoid and "
                        "tanh)");
    }
  }
  linearBeforeReset = !lstm && n.i("linear_before_reset", 0);
  auto w = n.type(1), r = n.type(2);
  if (!w || !r || w.getRank() != 3 || r.getRank() != 3)
    return n.fail("W and R must have rank 3");
  if (hidden <= 0)
    hidden = r.getDimSize(2);
  // Both come from the model: keep 2 * gates * hidden (the bias length)
  // within int64_t, and a dynamic dim out.
  if (hidden <= 0 || hidden > std::numeric_limits<int64_t>::max() / 8)
    return n.fail("the hidden size (hidden_size, or dim 2 of R) must be a "
                  "positive static size, got " +
                  llvm::Twine(hidden));
  if (w.getDimSize(0) != dirs || w.getDimSize(1) != gates * hidden ||
      w.getDimSize(2) != input)
    return n.fail("W has shape " + typeToString(w) + ", not [" +
                  llvm::Twine(dirs) + ", " + llvm::Twine(gates * hidden) +
                  ", " + llvm::Twine(input) + "]");
  if (r.getDimSize(0) != dirs || r.getDimSize(1) != gates * hidden ||
      r.getDimSize(2) != hidden)
    return n.fail("R has shape " + typeToString(r) + ", not [" +
                  llvm::Twine(dirs) + ", " + llvm::Twine(gates * hidden) +
                  ", " + llvm::Twine(hidden) + "]");
  if (n.has(4)) { // sequence_lens: masks unless every length is T
    DenseElementsAttr lens = n.g.constInput(n.proto, 4);
    auto lt = n.type(4);
    if (!lt || lt.getRank() != 1 || lt.getDimSize(0) != batch ||
        !isa<IntegerType>(lt.getElementType()))
      return n.fail("sequence_lens must be an integer [" + llvm::Twine(batch) +
                    "] tensor");
    if (!lens ||
        llvm::any_of(intValues(lens), [&](int64_t l) { return l != seq; })) {
      auto v = n.in(4);
      if (failed(v))
        return failure();
      seqLens = *v;
    }
  }
  return success();
}

void Recurrent::direction(Value x2d, int64_t d, bool reverse,
                          llvm::SmallVectorImpl<Value> &ys, Value &hLast,
                          Value &cLast) {
  Value w = matrix(*n.in(1), d), r = matrix(*n.in(2), d);
  // Biases: Wb and Rb, each [gates * H]. All of Wb, and the part of Rb
  // outside GRU's reset product, are added to the input projection.
  Value xBias, rhBias;
  if (n.has(3)) {
    Value bias = b.reshape(slice(*n.in(3), 0, d, d + 1), {2 * gates * hidden});
    Value wb = slice(bias, 0, 0, gates * hidden);
    Value rb = slice(bias, 0, gates * hidden, 2 * gates * hidden);
    if (linearBeforeReset) {
      Value zeros = b.splat(ft, {hidden}, 0.0);
      Value rzr = slice(rb, 0, 0, 2 * hidden);
      xBias = add(wb, b.op(ConcatOp::getOperationName(), {rzr, zeros},
                           {n.named("axis", n.b().getI64IntegerAttr(0))}));
      rhBias = slice(rb, 0, 2 * hidden, 3 * hidden);
    } else {
      xBias = add(wb, rb);
    }
  }
  // [T N, gates H] -> per step [N, gates H].
  Value xw = gemmT(x2d, w, xBias);
  Value h = state(5, d), c = lstm ? state(6, d) : Value();
  Value rZR, rH; // GRU without linear_before_reset: R split by gate
  if (!lstm && !rnn && !linearBeforeReset) {
    rZR = slice(r, 0, 0, 2 * hidden);
    rH = slice(r, 0, 2 * hidden, 3 * hidden);
  }
  ys.assign(seq, Value());
  Type lenType =
      seqLens ? cast<RankedTensorType>(seqLens.getType()).getElementType()
              : Type();
  Value zeros = seqLens ? b.splat(ft, {}, 0.0) : Value();
  for (int64_t k = 0; k < seq && b.ok; ++k) {
    int64_t t = reverse ? seq - 1 - k : k;
    Value hPrev = h, cPrev = c;
    Value xt = slice(xw, 0, t * batch, (t + 1) * batch);
    if (rnn) {
      Value g = add(xt, gemmT(h, r));
      h = reluRnn[d] ? relu(g) : tanh(g);
    } else if (lstm) {
      Value g = add(xt, gemmT(h, r));
      Value i = sigmoid(block(g, 0)), o = sigmoid(block(g, 1));
      Value f = sigmoid(block(g, 2)), cand = tanh(block(g, 3));
      c = add(mul(f, c), mul(i, cand));
      h = mul(o, tanh(c));
    } else {
      Value z, rg, cand;
      if (linearBeforeReset) {
        Value hr = gemmT(h, r);
        z = sigmoid(add(block(xt, 0), block(hr, 0)));
        rg = sigmoid(add(block(xt, 1), block(hr, 1)));
        Value hh = block(hr, 2);
        if (rhBias)
          hh = add(hh, rhBias);
        cand = tanh(add(block(xt, 2), mul(rg, hh)));
      } else {
        Value hr = gemmT(h, rZR);
        z = sigmoid(add(block(xt, 0), block(hr, 0)));
        rg = sigmoid(add(block(xt, 1), block(hr, 1)));
        cand = tanh(add(block(xt, 2), gemmT(mul(rg, h), rH)));
      }
      Value one = b.splat(ft, {}, 1.0);
      Value keep = b.binary(SubOp::getOperationName(), one, z);
      h = add(mul(keep, cand), mul(z, h));
    }
    if (seqLens) {
      // Step t counts for the sequences longer than t; the others keep
      // their state and output zeros (a reverse direction thus starts at
      // each sequence's own last step).
      Value valid = b.reshape(b.binary(LessOp::getOperationName(),
                                       b.splat(lenType, {}, t), seqLens),
                              {batch, 1});
      ys[t] = b.op(WhereOp::getOperationName(), {valid, h, zeros});
      h = b.op(WhereOp::getOperationName(), {valid, h, hPrev});
      if (lstm)
        c = b.op(WhereOp::getOperationName(), {valid, c, cPrev});
      continue;
    }
    ys[t] = h;
  }
  hLast = h;
  cLast = c;
}

LogicalResult Recurrent::run() {
  if (failed(check()))
    return failure();
  auto xv = n.in(0);
  if (failed(xv))
    return failure();
  Value x = *xv;
  if (batchFirst) // [N, T, I] -> [T, N, I]
    x = b.op(TransposeOp::getOperationName(), {x}, {n.arr("perm", {1, 0, 2})});
  Value x2d = b.reshape(x, {seq * batch, input});
  llvm::SmallVector<Value> perDirY, hs, cs;
  for (int64_t d = 0; d < dirs && b.ok; ++d) {
    llvm::SmallVector<Value> ys;
    Value h, c;
    direction(x2d, d, reverseOnly || d == 1, ys, h, c);
    if (!b.ok)
      break;
    // Y for this direction: [T, 1, N, H].
    llvm::SmallVector<Value> steps;
    for (Value y : ys)
      steps.push_back(b.reshape(y, {1, 1, batch, hidden}));
    perDirY.push_back(
        steps.size() == 1
            ? steps[0]
            : b.op(ConcatOp::getOperationName(), steps,
                   {n.named("axis", n.b().getI64IntegerAttr(0))}));
    hs.push_back(b.reshape(h, {1, batch, hidden}));
    if (lstm)
      cs.push_back(b.reshape(c, {1, batch, hidden}));
  }
  auto cat = [&](llvm::ArrayRef<Value> parts, int64_t axis) -> Value {
    if (parts.size() == 1)
      return parts[0];
    return b.op(ConcatOp::getOperationName(), parts,
                {n.named("axis", n.b().getI64IntegerAttr(axis))});
  };
  Value y = cat(perDirY, 1), yh = cat(hs, 0), yc = lstm ? cat(cs, 0) : Value();
  if (batchFirst && b.ok) { // Y [N, T, dirs, H]; Y_h, Y_c [N, dirs, H]
    y = b.op(TransposeOp::getOperationName(), {y},
             {n.arr("perm", {2, 0, 1, 3})});
    yh =
        b.op(TransposeOp::getOperationName(), {yh}, {n.arr("perm", {1, 0, 2})});
    if (lstm)
      yc = b.op(TransposeOp::getOperationName(), {yc},
                {n.arr("perm", {1, 0, 2})});
  }
  if (!b.ok)
    return failure();
  llvm::SmallVector<Value> results{y, yh};
  if (lstm)
    results.push_back(yc);
  n.g.bindOutputs(n.proto, results);
  return success();
}

} // namespace

void importer::addRecurrentConverters(llvm::StringMap<Converter> &map) {
  map["LSTM"] = [](Node &n) { return Recurrent(n, Cell::LSTM).run(); };
  map["GRU"] = [](Node &n) { return Recurrent(n, Cell::GRU).run(); };
  map["RNN"] = [](Node &n) { return Recurrent(n, Cell::RNN).run(); };
}
