//===- EinsumConverter.cpp - ONNX Einsum as transposes and a matmul -------===//
//
// Einsum of any number of operands in explicit form ("bhqd,bhkd->bhqk") or
// implicit form (the output: the letters used once, sorted), without
// repeated letters within an operand (diagonals). An ellipsis ("...ij,
// ...jk->...ik") becomes letters no operand uses, right-aligned as NumPy
// aligns the dimensions it stands for (implicit form: they lead the output);
// its dimensions must then match, not broadcast. Letters are
// classified: batch (both operands and the output), contracted (both, not
// the output), free (one operand and the output), summed (one operand
// only). Summed letters are reduced first; then
//   A -> [batch, freeA, contracted], B -> [batch, contracted, freeB]
// (transpose + reshape), one batched matmul, and a reshape + transpose into
// the output's order. More operands contract left to right, each pair
// keeping the letters the output or a later operand needs ("bi,ij,bj->b":
// "bi,ij->bj", then "bj,bj->b"). The attention forms become exactly the
// matmuls PyTorch's own einsum would run.
//
//===----------------------------------------------------------------------===//

#include "ConverterSupport.h"

#include <map>

using namespace mlir;
using namespace mlir::tidal;
using namespace mlir::tidal::importer;

namespace {

struct Term {
  std::string letters;
  Value value;
  llvm::SmallVector<int64_t> shape;
};

/// Reduces `t` over the letters not in `keep`; returns false on failure.
bool sumOut(Composer &b, Term &t, const std::string &keep) {
  llvm::SmallVector<int64_t> axes;
  std::string rest;
  llvm::SmallVector<int64_t> shape;
  for (size_t i = 0; i < t.letters.size(); ++i) {
    if (keep.find(t.letters[i]) == std::string::npos) {
      axes.push_back(i);
    } else {
      rest += t.letters[i];
      shape.push_back(t.shape[i]);
    }
  }
  if (axes.empty())
    return true;
  t.value = b.op(ReduceSumOp::getOperationName(), {t.value},
                 {b.n.arr("axes", axes),
                  b.n.named("keepdims", b.n.b().getBoolAttr(false))});
  t.letters = rest;
  t.shape = shape;
  return b.ok;
}

/// Transposes `t` into the letter order `order` (a permutation of its own).
void permute(Composer &b, Term &t, const std::string &order) {
  if (order == t.letters)
    return;
  llvm::SmallVector<int64_t> perm, shape;
  for (char c : order) {
    int64_t i = t.letters.find(c);
    perm.push_back(i);
    shape.push_back(t.shape[i]);
  }
  t.value =
      b.op(TransposeOp::getOperationName(), {t.value}, {b.n.arr("perm", perm)});
  t.letters = order;
  t.shape = shape;
}

int64_t product(const Term &t, const std::string &letters) {
  int64_t p = 1;
  for (char c : letters)
    p *= t.shape[t.letters.find(c)];
  return p;
}

/// The comma-separated operand terms of an equation's left-hand side.
llvm::SmallVector<std::string> splitOperands(const std::string &lhs) {
  llvm::SmallVector<std::string> ins;
  for (size_t start = 0;;) {
    size_t comma = lhs.find(',', start);
    ins.push_back(lhs.substr(start, comma - start));
    if (comma == std::string::npos)
      break;
    start = comma + 1;
  }
  return ins;
}

/// `eq` with every "..." replaced by letters of its own (see the file
/// comment), given the operands' ranks.
FailureOr<std::string> expandEllipsis(Node &n, const std::string &eq) {
  size_t arrow = eq.find("->");
  std::string lhs = eq.substr(0, arrow);
  llvm::SmallVector<std::string> ins = splitOperands(lhs);
  if ((int)ins.size() != n.proto.input_size())
    return n.fail("equation '" + eq + "' has " + llvm::Twine(ins.size()) +
                  " operands for " + llvm::Twine(n.proto.input_size()) +
                  " inputs");
  std::string used;
  for (char c : eq)
    if (std::isalpha((unsigned char)c))
      used += c;
  std::string spare;
  for (char c :
       std::string("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"))
    if (used.find(c) == std::string::npos)
      spare += c;
  // How many dimensions each operand's ellipsis stands for.
  llvm::SmallVector<int64_t> covered(ins.size(), 0);
  int64_t widest = 0;
  for (size_t i = 0; i < ins.size(); ++i) {
    size_t at = ins[i].find("...");
    if (at == std::string::npos)
      continue;
    if (ins[i].find("...", at + 3) != std::string::npos)
      return n.fail("equation '" + eq + "': operand " + llvm::Twine(i) +
                    " has two ellipses");
    int64_t letters = ins[i].size() - 3, rank = n.type(i).getRank();
    if (rank < letters)
      return n.fail("operand " + llvm::Twine(i) + " has rank " +
                    llvm::Twine(rank) + " but '" + ins[i] + "' names " +
                    llvm::Twine(letters) + " dimensions besides the ellipsis");
    covered[i] = rank - letters;
    widest = std::max(widest, covered[i]);
  }
  if (widest > (int64_t)spare.size())
    return n.fail("equation '" + eq + "': too many dimensions for letters");
  const std::string all = spare.substr(0, widest);
  std::string out;
  for (size_t i = 0; i < ins.size(); ++i) {
    size_t at = ins[i].find("...");
    if (at != std::string::npos)
      ins[i].replace(at, 3, all.substr(widest - covered[i]));
    out += (i ? "," : "") + ins[i];
  }
  std::string result;
  if (arrow != std::string::npos) {
    result = eq.substr(arrow + 2);
    if (size_t at = result.find("..."); at != std::string::npos)
      result.replace(at, 3, all);
  } else {
    // Implicit: the ellipsis dimensions, then the letters used once, sorted.
    std::map<char, int> uses;
    for (char c : lhs)
      if (std::isalpha((unsigned char)c))
        ++uses[c];
    result = all;
    for (auto [c, k] : uses)
      if (k == 1)
        result += c;
  }
  return out + "->" + result;
}

/// Contracts `a` with `c` into `a`, keeping the letters in `needed` (the
/// output's and later operands'): batch letters (both operands, needed),
/// contracted (both, not needed), free (one operand, needed); letters of
/// one operand that are not needed are summed first.
LogicalResult contract(Node &n, Composer &b, const std::string &eq, Term &a,
                       Term c, const std::string &needed) {
  std::string both, keepA, keepB;
  for (char x : a.letters)
    if (c.letters.find(x) != std::string::npos)
      both += x;
  for (char x : a.letters)
    if (both.find(x) != std::string::npos ||
        needed.find(x) != std::string::npos)
      keepA += x;
  for (char x : c.letters)
    if (both.find(x) != std::string::npos ||
        needed.find(x) != std::string::npos)
      keepB += x;
  if (!sumOut(b, a, keepA) || !sumOut(b, c, keepB))
    return failure();
  std::string batch, contracted, freeA, freeB;
  for (char x : both) {
    if (a.shape[a.letters.find(x)] != c.shape[c.letters.find(x)])
      return n.fail("equation '" + eq + "': dimension '" + std::string(1, x) +
                    "' differs between the operands (broadcasting is not "
                    "supported)");
    (needed.find(x) != std::string::npos ? batch : contracted) += x;
  }
  for (char x : a.letters)
    if (both.find(x) == std::string::npos)
      freeA += x;
  for (char x : c.letters)
    if (both.find(x) == std::string::npos)
      freeB += x;
  permute(b, a, batch + freeA + contracted);
  permute(b, c, batch + contracted + freeB);
  int64_t nb = product(a, batch), m = product(a, freeA),
          k = product(a, contracted), nn = product(c, freeB);
  Value left = b.reshape(a.value, {nb, m, k});
  Value right = b.reshape(c.value, {nb, k, nn});
  Value prod = b.op(MatMulOp::getOperationName(), {left, right});
  Term r{batch + freeA + freeB, prod, {}};
  for (char x : batch)
    r.shape.push_back(a.shape[a.letters.find(x)]);
  for (char x : freeA)
    r.shape.push_back(a.shape[a.letters.find(x)]);
  for (char x : freeB)
    r.shape.push_back(c.shape[c.letters.find(x)]);
  r.value = b.reshape(prod, r.shape);
  if (!b.ok)
    return failure();
  a = r;
  return success();
}

LogicalResult convertEinsum(Node &n) {
  std::string eq;
  for (char c : n.s("equation", ""))
    if (c != ' ')
      eq += c;
  if (eq.find("...") != std::string::npos) {
    auto expanded = expandEllipsis(n, eq);
    if (failed(expanded))
      return failure();
    eq = *expanded;
  }
  size_t arrow = eq.find("->");
  std::string lhs = eq.substr(0, arrow);
  llvm::SmallVector<std::string> ins = splitOperands(lhs);
  if ((int)ins.size() != n.proto.input_size() || ins.empty())
    return n.fail("equation '" + eq + "' has " + llvm::Twine(ins.size()) +
                  " operands for " + llvm::Twine(n.proto.input_size()) +
                  " inputs");
  std::map<char, int> uses;
  for (const std::string &s : ins)
    for (char c : s) {
      if (!std::isalpha((unsigned char)c))
        return n.fail("equation '" + eq + "' is malformed");
      ++uses[c];
    }
  std::string out;
  if (arrow != std::string::npos) {
    out = eq.substr(arrow + 2);
  } else {
    for (auto [c, k] : uses)
      if (k == 1)
        out += c;
  }
  llvm::SmallVector<Term> terms;
  for (size_t i = 0; i < ins.size(); ++i) {
    auto v = n.in(i);
    if (failed(v))
      return failure();
    Term t{ins[i], *v, llvm::SmallVector<int64_t>(n.type(i).getShape())};
    if ((int64_t)t.letters.size() != n.type(i).getRank())
      return n.fail("operand " + llvm::Twine(i) + " has rank " +
                    llvm::Twine(n.type(i).getRank()) + " but '" + t.letters +
                    "' names " + llvm::Twine(t.letters.size()) + " dimensions");
    for (size_t a = 0; a < t.letters.size(); ++a)
      if (t.letters.find(t.letters[a], a + 1) != std::string::npos)
        return n.fail("equation '" + eq +
                      "': a letter repeated within an operand (a diagonal) "
                      "is not supported");
    terms.push_back(t);
  }
  for (char c : out)
    if (!uses.count(c))
      return n.fail("equation '" + eq + "': output letter '" +
                    std::string(1, c) + "' is in no operand");
  Composer b{n};
  // Left to right, each pair contracted into the letters the output or a
  // later operand still needs.
  Term acc = terms[0];
  for (size_t i = 1; i < terms.size(); ++i) {
    std::string needed = out;
    for (size_t j = i + 1; j < terms.size(); ++j)
      needed += terms[j].letters;
    if (failed(contract(n, b, eq, acc, terms[i], needed)))
      return failure();
  }
  if (!sumOut(b, acc, out))
    return failure();
  if (acc.letters.size() != out.size())
    return n.fail("equation '" + eq + "': output '" + out +
                  "' does not name every kept dimension");
  permute(b, acc, out);
  return b.bind(acc.value);
}

} // namespace

void importer::addEinsumConverter(llvm::StringMap<Converter> &map) {
  map["Einsum"] = convertEinsum;
}
