#!/usr/bin/python3
"""Runs every tidal test suite against a build directory, one summary.

Suites: lit + FileCheck (test/), GoogleTest through CTest, the Python tests
(python/test, Debian's /usr/bin/python3) and the clang-format check. Exits
non-zero when any test fails or a suite cannot run.
"""
import os
import re
import subprocess
import sys
import xml.etree.ElementTree as ET

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LIT = "/usr/lib/llvm-19/build/utils/lit/lit.py"


def run(name, cmd, env=None):
    print(f"\n===== {name}: {' '.join(cmd)}", flush=True)
    proc = subprocess.run(cmd, cwd=ROOT, env=env, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True)
    sys.stdout.write(proc.stdout)
    sys.stdout.flush()
    return proc.returncode, proc.stdout


def lit(build):
    rc, out = run("lit", ["/usr/bin/python3", LIT, "-v",
                          os.path.join(build, "test")])
    counts = {k: 0 for k in ("passed", "failed", "skipped")}
    for key, label in (("passed", "Passed"), ("failed", "Failed"),
                       ("skipped", "Unsupported"), ("failed", "Unresolved"),
                       ("failed", "Timed Out"), ("failed", "Unexpectedly Passed"),
                       ("passed", "Expectedly Failed")):
        m = re.search(rf"^\s*{label}\s*:\s*(\d+)", out, re.M)
        if m:
            counts[key] += int(m.group(1))
    if rc and not counts["failed"]:
        counts["failed"] = 1
    return counts


def ctest(build):
    junit = os.path.join(build, "ctest-junit.xml")
    rc, _ = run("ctest", ["ctest", "--test-dir", build, "--output-on-failure",
                          "--output-junit", junit])
    counts = {"passed": 0, "failed": 0, "skipped": 0}
    try:
        for case in ET.parse(junit).getroot().iter("testcase"):
            status = case.get("status", "run")
            if case.find("failure") is not None or status == "fail":
                counts["failed"] += 1
            elif case.find("skipped") is not None or status in ("notrun",
                                                                "disabled"):
                counts["skipped"] += 1
            else:
                counts["passed"] += 1
    except (OSError, ET.ParseError):
        counts["failed"] += 1
    if rc and not counts["failed"]:
        counts["failed"] = 1
    return counts


def python_tests(build):
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python"),
               TIDAL_BUILD_DIR=os.path.abspath(build))
    # Extra NAME=VALUE lines for this phase only (scripts/sanitize.sh).
    for line in os.environ.get("TIDAL_PYTHON_TESTS_ENV", "").splitlines():
        name, _, value = line.partition("=")
        if name:
            env[name] = value
    rc, out = run("python", ["/usr/bin/python3", "-m", "unittest", "discover",
                             "-s", os.path.join(ROOT, "python", "test"), "-v"],
                  env=env)
    m = re.search(r"^Ran (\d+) tests?", out, re.M)
    total = int(m.group(1)) if m else 0
    fails = sum(int(x) for x in re.findall(r"(?:failures|errors)=(\d+)", out))
    skips = sum(int(x) for x in re.findall(r"skipped=(\d+)", out))
    if rc and not fails:
        fails = 1
    return {"passed": total - fails - skips, "failed": fails, "skipped": skips}


def clang_format():
    files = []
    for top in ("include", "lib", "tools", "runtime", "test"):
        for dirpath, _, names in os.walk(os.path.join(ROOT, top)):
            files += [os.path.join(dirpath, n) for n in names
                      if n.endswith((".cpp", ".h", ".c"))]
    rc, _ = run("clang-format", ["clang-format", "--dry-run", "-Werror"] +
                sorted(files))
    return {"passed": 0 if rc else 1, "failed": 1 if rc else 0, "skipped": 0}


def main():
    build = sys.argv[1] if len(sys.argv) > 1 else "build"
    build = os.path.abspath(os.path.join(ROOT, build))
    # A fixed thread count for tidal's executables in every suite: they
    # otherwise adapt it to the load (--threads auto), and tests compare
    # runs bit for bit, which holds at one count. TIDAL_THREADS, not
    # OMP_NUM_THREADS, which would also change PyTorch's reference runs.
    # Tests of the adaptation pass --threads auto.
    os.environ.setdefault("TIDAL_THREADS", str(len(os.sched_getaffinity(0))))
    results = {"lit": lit(build), "ctest": ctest(build),
               "python": python_tests(build), "clang-format": clang_format()}
    print("\n===== summary")
    total = {"passed": 0, "failed": 0, "skipped": 0}
    for name, c in results.items():
        print(f"  {name:13s} {c['passed']:5d} passed {c['failed']:4d} failed "
              f"{c['skipped']:4d} skipped")
        for k in total:
            total[k] += c[k]
    print(f"tidal: {total['passed']} passed, {total['failed']} failed, "
          f"{total['skipped']} skipped")
    return 1 if total["failed"] else 0


if __name__ == "__main__":
    sys.exit(main())
