"""The ONNX backend node tests, compiled and run as executables.

The models of test_eval_node.py (those tidal's op set covers, compile-time
operands bound to the test's own values, random dropout and bfloat16 values skipped) are
compiled with `tidalc MODEL --mode forward -o EXE`, run once as
`EXE --input NAME=FILE.npy ... --output-dir DIR --quiet` on
test_data_set_0's inputs, and every output the driver writes is compared
with the expected one, exactly as test_eval_node.py compares the
evaluator's (the same tolerances and the same exempted outputs).

Outcomes: passed; import unsupported (tidalc rejects the model at import:
test_node_import.py's business); skipped with a reason (random dropout or draws, bfloat16 values);
expected failure (EXPECTED_FAILURES: the failure must contain the reason
given there, and a model that starts passing fails the test until it is
taken off the list); failed (a compile or link error, a failing executable,
a missing or wrong output). The counts, the failures by op and the run time are printed. One
model again: `python3 python/test/test_compiled_node.py --check NAME`.

Needs TIDAL_BUILD_DIR with bin/tidalc and bin/tidal-eval (the evaluator is
the reference these models are selected by).
"""

import collections
import os
import sys
import tempfile
import time
import unittest
from multiprocessing.pool import ThreadPool

import onnx

import compiled_support as cs
import test_eval_node as eval_node
from onnx_node_tests import load_case
from tidal.ops import op_types

THREADS = 2

# Models the executables cannot run yet, and the substring their failure
# must contain: {name: substring}. The evaluator runs them (test_eval_node).
_F64_MATMUL = "matmul (op 0): lhs has element type float64; only float32 is supported"
EXPECTED_FAILURES = {
    # float64 Einsum lowers to matmul, whose CPU kernel (oneDNN) is float32.
    "test_einsum_batch_matmul": _F64_MATMUL,
    "test_einsum_inner_prod": _F64_MATMUL,
}


def data_inputs(model, inputs):
    """The test inputs that the executable reads (the others are bound)."""
    bound = {i.name for i in model.graph.initializer}
    return {name: value for name, value in inputs.items() if name not in bound}


def batching_problem(inputs):
    """Why the forward driver's batching (dim 0 of every input, the same
    for all) cannot take these inputs as they are, or None."""
    if not inputs:
        return "no data input"
    if any(v.ndim == 0 for v in inputs.values()):
        return "a rank-0 input"
    if any(v.shape[0] == 0 for v in inputs.values()):
        return "an input with dim 0 of size 0"
    if len({v.shape[0] for v in inputs.values()}) > 1:
        return "inputs with different dim 0"
    return None


def run_case(case):
    """run_case_as_is, with EXPECTED_FAILURES applied."""
    outcome, detail, compared, worst = run_case_as_is(case)
    name = case[0]
    if name not in EXPECTED_FAILURES:
        return outcome, detail, compared, worst
    if outcome == "failed" and EXPECTED_FAILURES[name] in detail:
        return "expected_failure", detail, compared, worst
    if outcome == "failed":
        return "failed", f"{detail} (expected a failure containing {EXPECTED_FAILURES[name]!r})", compared, worst
    return "failed", f"[listed] {outcome}, but EXPECTED_FAILURES lists it: take it off the list", compared, worst


def run_case_as_is(case):
    """(outcome, detail, outputs compared, worst error ratio) of one node
    test; a failure's detail starts with its kind in brackets."""
    name, _, bind = case
    with tempfile.TemporaryDirectory(prefix=f"tidal-compiled-{name}-") as work:
        path, model, inputs, outputs = load_case(name, bind, work)
        why = eval_node.skip_reason(model, inputs)
        if why:
            return "skipped", why, 0, 0.0
        exe = os.path.join(work, "forward")
        error = cs.tidalc(path, exe, "--mode", "forward")
        if error:
            if cs.tidalc(path, os.path.join(work, "f.mlir"), "--emit", "mlir", "--stop-after", "import"):
                return "import_unsupported", error, 0, 0.0
            return "failed", f"[compile] {error}", 0, 0.0
        feed = data_inputs(model, inputs)
        error, results = cs.run_forward(exe, feed, [o.name for o in model.graph.output], work)
        if error:
            # A rejection before any op ran names no op.
            why = batching_problem(feed) if "op '" not in error else None
            kind = f"batching: {why}" if why else "run"
            return "failed", f"[{kind}] {error}", 0, 0.0
        problems = [f"no output file for {n!r}" for n, _ in outputs if results.get(n) is None]
        ratios = []
        for k, (out_name, expected) in enumerate(outputs):
            if results.get(out_name) is None or (name, k) in eval_node.KNOWN_DIFFERENCES:
                continue
            problem, ratio = eval_node.compare(results[out_name], expected, eval_node.ATOL_FOR.get(name))
            ratios.append(ratio)
            if problem:
                problems.append(f"output {out_name!r} {problem}")
        worst = max(ratios, default=0.0)
        if problems:
            return "failed", "[output] " + "; ".join(problems)[:400], len(ratios), worst
        return "passed", "", len(ratios), worst


def ops_of(path):
    ops = op_types(onnx.load(path).graph) - {"Constant"}
    return "+".join(sorted(ops)) or "Constant"


_SKIP = eval_node._SKIP


@unittest.skipIf(_SKIP, _SKIP)
class CompiledNodeTest(unittest.TestCase):
    def test_compiled_node_models(self):
        cases = eval_node.candidates()
        self.assertGreater(len(cases), 0)
        start = time.monotonic()
        with ThreadPool(THREADS) as pool:
            outcomes = pool.map(run_case, cases)
        seconds = time.monotonic() - start

        counts = collections.Counter(outcome for outcome, _, _, _ in outcomes)
        failed_by_op, lines = collections.Counter(), []
        outputs_compared, worst = 0, 0.0
        for (name, path, _), (outcome, detail, compared, ratio) in zip(cases, outcomes):
            outputs_compared += compared
            worst = max(worst, ratio)
            if outcome == "failed":
                failed_by_op[ops_of(path)] += 1
                lines.append(f"  FAIL {name}: {detail}")
            elif outcome != "passed":
                lines.append(f"  {outcome.upper().replace('_', ' ')} {name}: {detail}")
        kinds = collections.Counter(
            d[1:].split("]")[0].split(":")[0] for o, d, _, _ in outcomes if o == "failed"
        )
        summary = [
            f"candidates {len(cases)}",
            f"passed {counts['passed']}",
            f"failed {counts['failed']} ({', '.join(f'{k} {n}' for k, n in sorted(kinds.items())) or 'none'})",
            f"import unsupported {counts['import_unsupported']}",
            f"expected failures {counts['expected_failure']}",
            f"skipped (random dropout or draws, bfloat16) {counts['skipped']}",
            f"outputs compared {outputs_compared}",
            f"tolerance rtol={eval_node.RTOL:g} atol={eval_node.ATOL:g}",
            f"largest error {worst:.3g} x tolerance",
            f"{seconds:.0f} s with {THREADS} threads",
        ]
        print("\n[compiled node tests] " + ", ".join(summary), file=sys.stderr)
        if failed_by_op:
            by_op = ", ".join(f"{op} {n}" for op, n in sorted(failed_by_op.items()))
            print(f"  failed by op: {by_op}", file=sys.stderr)
        for line in lines:
            print(line, file=sys.stderr)
        if counts["failed"]:
            print("  reproduce one: TIDAL_BUILD_DIR=build PYTHONPATH=python /usr/bin/python3"
                  " python/test/test_compiled_node.py --check NAME", file=sys.stderr)
            names = ", ".join(name for (name, _, _), (o, _, _, _) in zip(cases, outcomes) if o == "failed")
            self.fail(f"{counts['failed']} compiled node tests fail (listed above): {names[:2000]}")


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--check":  # one node test
        outcome, detail, _, _ = run_case(next(c for c in eval_node.candidates() if c[0] == sys.argv[2]))
        print(f"{sys.argv[2]}: {outcome} {detail}")
        sys.exit(outcome == "failed")
    unittest.main()
