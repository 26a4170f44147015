"""Runs the ONNX node tests that a newer onnx release ships beyond Debian's
(libonnx-testdata, onnx 1.12) through tidal's compiled-node check, for the
tests whose operators tidal imports: each is compiled in forward mode, run,
and compared with ONNX's expected outputs (python/test/test_compiled_node.py).

    python3 -m venv /tmp/onnx-venv && /tmp/onnx-venv/bin/pip install onnx==1.17.0
    TIDAL_BUILD_DIR=build /usr/bin/python3 scripts/newer_node_tests.py \\
        /tmp/onnx-venv/lib/python3.11/site-packages/onnx/backend/test/data/node

Prints the outcome counts and every test that did not pass. "harness"
marks data onnx 1.12's numpy_helper cannot read (float8, int4)."""
import collections
import os
import sys
from multiprocessing.pool import ThreadPool

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path[:0] = [os.path.join(ROOT, "python"), os.path.join(ROOT, "python", "test")]

import onnx_node_tests  # noqa: E402
import test_compiled_node  # noqa: E402
import test_eval_node  # noqa: E402


def main(argv):
    if len(argv) != 2 or not os.path.isdir(argv[1]):
        print(__doc__, file=sys.stderr)
        return 2
    old = set(os.listdir(onnx_node_tests.NODE_DIR))
    # The newer data has the window functions right: compare them.
    for key in [k for k, why in test_eval_node.KNOWN_DIFFERENCES.items() if why == test_eval_node.WINDOW_DATA]:
        del test_eval_node.KNOWN_DIFFERENCES[key]
    onnx_node_tests.NODE_DIR = test_eval_node.NODE_DIR = argv[1]
    cases = [c for c in test_eval_node.candidates() if c[0] not in old]

    def run(case):
        try:
            return test_compiled_node.run_case(case)
        except Exception as err:  # the harness cannot read the test's data
            return ("harness", f"{type(err).__name__}: {err}", 0, 0.0)

    with ThreadPool(2) as pool:
        outcomes = pool.map(run, cases)
    print(f"{len(cases)} new node tests in tidal's operator set:",
          dict(collections.Counter(o[0] for o in outcomes)))
    for (name, _, _), (outcome, detail, _, _) in zip(cases, outcomes):
        if outcome != "passed":
            print(f"  {name}: {outcome} {detail[:200]}")
    return 1 if any(o[0] == "failed" for o in outcomes) else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
