"""Shared helpers for tidal's Python tests: paths, tidalc runs, model files.

Environment:
  TIDAL_BUILD_DIR  the CMake build directory (holds bin/tidalc, bin/tidal-opt
                   and test/Models); tests that need a tool skip without it.
"""

import atexit
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
PYTHON_DIR = os.path.dirname(HERE)
REPO_ROOT = os.path.dirname(PYTHON_DIR)
for _p in (PYTHON_DIR, os.path.join(PYTHON_DIR, "tools")):
    if _p not in sys.path:
        sys.path.insert(0, _p)

import gen_test_models  # noqa: E402  (needs the sys.path entry above)

BUILD_DIR = os.environ.get("TIDAL_BUILD_DIR", "")


def tool(name):
    """Path of build tool `name` (e.g. "tidalc"), or None when not built."""
    if not BUILD_DIR:
        return None
    path = os.path.join(BUILD_DIR, "bin", name)
    return path if os.path.isfile(path) and os.access(path, os.X_OK) else None


def skip_reason(*names):
    """Why a test needing tools `names` must skip, or None."""
    if not BUILD_DIR:
        return "TIDAL_BUILD_DIR is not set (point it at the CMake build directory)"
    missing = [n for n in names if tool(n) is None]
    if missing:
        return f"{', '.join(missing)} not built in {BUILD_DIR}/bin"
    return None


_generated_dir = None


def models_dir():
    """The directory holding gen_test_models.py's files.

    The build's copy (TIDAL_BUILD_DIR/test/Models) when it is complete and
    newer than the generator; otherwise a fresh private copy for this run.
    """
    global _generated_dir
    if BUILD_DIR:
        built = os.path.join(BUILD_DIR, "test", "Models")
        stamp = os.path.join(built, ".stamp")
        script = os.path.join(PYTHON_DIR, "tools", "gen_test_models.py")
        if (
            os.path.exists(stamp)
            and os.path.getmtime(stamp) >= os.path.getmtime(script)
            and all(os.path.exists(os.path.join(built, n)) for n in gen_test_models.MODELS)
        ):
            return built
    if _generated_dir is None:
        _generated_dir = tempfile.mkdtemp(prefix="tidal-models-")
        atexit.register(shutil.rmtree, _generated_dir, True)
        gen_test_models.generate(_generated_dir)
    return _generated_dir


def model_path(name):
    return os.path.join(models_dir(), name)


def run(argv, timeout=120, env=None):
    """Runs argv (with `env` added to the environment); returns
    CompletedProcess with text stdout/stderr."""
    return subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=timeout,
                          env=dict(os.environ, **env) if env else None)


def run_tidalc(args, timeout=120):
    return run([tool("tidalc")] + list(args), timeout=timeout)


def describe(proc):
    """A compact account of a process result for assertion messages."""
    out = proc.stdout if len(proc.stdout) < 600 else proc.stdout[:600] + "..."
    return f"exit {proc.returncode}\n--- stderr ---\n{proc.stderr}--- stdout ---\n{out}"


def one_line_error_problem(proc, path=None, require_prefix=True):
    """None when `proc` failed cleanly: exit 1 and exactly one stderr line
    `<path>: error: ...`; otherwise what is wrong with it."""
    if proc.returncode < 0:
        return f"killed by signal {-proc.returncode} (a crash)"
    if proc.returncode != 1:
        return f"exit status {proc.returncode}, expected 1"
    lines = proc.stderr.splitlines()
    if len(lines) != 1 or not proc.stderr.endswith("\n"):
        return f"stderr is {len(lines)} lines, expected one newline-terminated line"
    line = lines[0]
    if require_prefix and path is not None and not line.startswith(f"{path}: error: "):
        return f"stderr does not start with '{path}: error: '"
    if "error:" not in line:
        return "stderr has no 'error:'"
    return None


# --- reading tidalc's MLIR ----------------------------------------------------

_CLOSE = {"(": ")", "[": "]", "{": "}", "<": ">"}


def split_top_level(text, sep=","):
    """Splits `text` at `sep` outside brackets and string literals."""
    parts, depth, start, i, in_str = [], [], 0, 0, False
    while i < len(text):
        c = text[i]
        if in_str:
            if c == "\\":
                i += 1
            elif c == '"':
                in_str = False
        elif c == '"':
            in_str = True
        elif c in _CLOSE:
            depth.append(_CLOSE[c])
        elif depth and c == depth[-1]:
            depth.pop()
        elif c == "-" and text[i + 1 : i + 2] == ">":
            i += 1  # '->' is not a closing bracket
        elif c == sep and not depth:
            parts.append(text[start:i].strip())
            start = i + 1
        i += 1
    tail = text[start:].strip()
    if tail:
        parts.append(tail)
    return parts


def main_arguments(mlir, func="main"):
    """The argument list of `func.func @func` as [(type, attr-dict text)]."""
    m = re.search(r"func\.func\s+(?:public\s+|private\s+)?@" + re.escape(func) + r"\(", mlir)
    if not m:
        raise ValueError(f"no func.func @{func} in the output")
    start = m.end()
    depth, i, in_str = 1, start, False
    while depth:
        c = mlir[i]
        if in_str:
            if c == "\\":
                i += 1
            elif c == '"':
                in_str = False
        elif c == '"':
            in_str = True
        elif c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
        i += 1
    args = []
    for arg in split_top_level(mlir[start : i - 1]):
        # %argN: TYPE {attrs}  (attrs optional)
        _, _, rest = arg.partition(":")
        rest = rest.strip()
        brace = rest.find("{")
        if brace >= 0:
            args.append((rest[:brace].strip(), rest[brace:]))
        else:
            args.append((rest, ""))
    return args


def arg_attr(attrs, key):
    """The value text of attribute `key` in an attr-dict text, or None."""
    m = re.search(re.escape(key) + r'\s*=\s*("(?:[^"\\]|\\.)*"|#tidal<[^>]*>|[^,}]+)', attrs)
    if not m:
        return None
    value = m.group(1).strip()
    return value[1:-1] if value.startswith('"') else value


def tensor_types(mlir):
    """Every `tensor<...>` type spelled in `mlir`."""
    return re.findall(r"tensor<[^<>]*(?:<[^<>]*>[^<>]*)*>", mlir)


def saved_initializers(path):
    """Every initializer of the ONNX file at `path`, as raw bytes by name."""
    import onnx
    from onnx import numpy_helper
    return {i.name: numpy_helper.to_array(i).tobytes() for i in onnx.load(path).graph.initializer}


def train_saving(exe, inputs, work, tag, steps, threads=2):
    """Runs `exe` for `steps` shuffled steps (seed 5) with --log and --save
    into `work`; returns (log lines, saved initializers). Raises on failure."""
    log, out = os.path.join(work, f"log_{tag}.jsonl"), os.path.join(work, f"out_{tag}.onnx")
    argv = [exe] + inputs + ["--steps", str(steps), "--shuffle", "--seed", "5", "--log", log, "--save", out,
                             "--quiet", "--threads", str(threads)]
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=600)
    if proc.returncode != 0:
        raise AssertionError(f"{' '.join(argv)}: {proc.stderr}")
    return log_lines(log), saved_initializers(out)


def log_lines(path):
    """The JSON objects of a --log file, one per step."""
    import json
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def planned_copy_bytes(plan):
    """Bytes a step of `plan` (a plan file) copies to the host and to the
    device: its offloads' and prefetches' operands, as the sim device's log
    counts them (`bytes_to_host`, `bytes_to_device`)."""
    size = {t["id"]: t["bytes"] for t in plan["tensors"]}
    moved = {"tidal.offload": 0, "tidal.prefetch": 0}
    for op in plan["schedule"]:
        if op["op"] in moved:
            moved[op["op"]] += sum(size[t] for t in op["reads"])
    return moved["tidal.offload"], moved["tidal.prefetch"]


def host_layers(plan):
    """The kernels of `plan` (a plan file) on the host other than optimizer
    updates: the layers tidal-place moved there."""
    return [op["op"] for op in plan["schedule"] if op["kernel"] and op["device"] == "host" and
            "update" not in op["op"] and "onnx_" not in op["op"]]


class SimRuns:
    """For unittest.TestCase classes that compile with tidalc and train on
    the cpu and sim targets: `steps` shuffled steps (seed 5) with a --log
    and a --save, `train_env` added to every run's environment."""

    steps = 3
    train_env = {}

    def tidalc(self, args):
        proc = run_tidalc(args, timeout=600)
        self.assertEqual(proc.returncode, 0, describe(proc))

    def train(self, exe, inputs, work, tag, env=None):
        """Returns the --log lines and the saved initializers."""
        log, out = os.path.join(work, f"log_{tag}.jsonl"), os.path.join(work, f"out_{tag}.onnx")
        argv = [exe] + inputs + ["--steps", str(self.steps), "--shuffle", "--seed", "5", "--log", log, "--save", out,
                                 "--quiet"]
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=600,
                              env=dict(os.environ, **self.train_env, **(env or {})))
        self.assertEqual(proc.returncode, 0, f"{' '.join(argv)}: {proc.stderr}")
        return log_lines(log), saved_initializers(out)

    def assert_like_cpu(self, log, values, cpu_log, cpu_saved, budget, copies, what):
        """A sim run against the cpu run: losses and every saved tensor
        bitwise equal, the measured device peak within `budget`, and exactly
        `copies` (planned_copy_bytes) crossing the link at every step."""
        self.assertEqual([l["loss"] for l in log], [l["loss"] for l in cpu_log], what)
        for key, value in cpu_saved.items():
            self.assertEqual(values[key], value, f"{what}: '{key}' differs from the cpu run")
        for line in log:
            self.assertLessEqual(line["device_peak_bytes"], budget, what)
            self.assertEqual((line["bytes_to_host"], line["bytes_to_device"]), copies, what)

    def cpu_run(self, case, work):
        """Exports a zoo case into `work` and trains it on the cpu target:
        (model path, tidalc flags, data arguments, cpu log, cpu saved)."""
        from tidal import training
        os.makedirs(work, exist_ok=True)
        model = os.path.join(work, "model.onnx")
        training.export_case(case, model)
        flags = training.tidalc_flags(case)
        inputs = training.write_inputs(case, work)
        cpu_exe = os.path.join(work, "train_cpu")
        self.tidalc([model, "-o", cpu_exe] + flags)
        cpu_log, cpu_saved = self.train(cpu_exe, inputs, work, "cpu")
        return model, flags, inputs, cpu_log, cpu_saved

    def plan(self, model, work, flags):
        """The plan file for the sim target."""
        import json
        out = os.path.join(work, "plan.json")
        self.tidalc([model, "-o", out, "--emit", "plan", "--target", "sim"] + flags)
        with open(out) as f:
            return json.load(f)
