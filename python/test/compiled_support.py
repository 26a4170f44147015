"""Helpers of the compiled-executable tests (test_compiled_node.py and
test_compiled_random.py): compiling a model with tidalc, running the
executable it makes, and evaluating tidalc's MLIR with tidal-eval (every
argument bound by its tidal.name), so that the two can be compared.
"""

import json
import os
import re
import subprocess

import numpy as np

import support

TIMEOUT_S = 120

_ELEMENT_DTYPES = {
    "f32": np.float32, "f64": np.float64, "f16": np.float16, "i1": np.bool_,
    "i8": np.int8, "i16": np.int16, "i32": np.int32, "i64": np.int64,
    "ui8": np.uint8, "ui16": np.uint16, "ui32": np.uint32, "ui64": np.uint64,
}


def first_line(text, limit=300):
    lines = (text or "").strip().splitlines()
    return lines[0][:limit] if lines else ""


def run(argv):
    """(exit status, stderr) of argv; a timeout is exit status None."""
    try:
        proc = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, timeout=TIMEOUT_S)
    except subprocess.TimeoutExpired:
        return None, f"timed out after {TIMEOUT_S} s"
    return proc.returncode, proc.stderr


def tidalc(model, out, *options):
    """Runs `tidalc MODEL -o OUT OPTIONS...`; None or the error line."""
    status, err = run([support.tool("tidalc"), model, "-o", out] + list(options))
    if status == 0:
        return None
    return f"tidalc {' '.join(options)}: exit {status}: {first_line(err)}"


def sanitise(name):
    """The driver's file name for output `name` (docs/executable.md)."""
    out = re.sub(r"[^A-Za-z0-9._-]", "_", name) or "_"
    return "_" * len(out) if out in (".", "..") else out


def output_files(names):
    """{output name: the .npy file name the driver writes it to}; a repeated
    sanitised name gets _2, _3, ... in output order, as the driver does."""
    files, taken = {}, set()
    for name in names:
        base = unique = sanitise(name)
        n = 2
        while unique in taken:
            unique, n = f"{base}_{n}", n + 1
        taken.add(unique)
        files[name] = unique + ".npy"
    return files


def save_inputs(inputs, work):
    """Writes {name: array} as work/in<k>.npy; returns the --input flags."""
    flags = []
    for k, (name, value) in enumerate(inputs.items()):
        path = os.path.join(work, f"in{k}.npy")
        np.save(path, value)
        flags += ["--input", f"{name}={path}"]
    return flags


def run_forward(exe, inputs, output_names, work):
    """Runs a --mode forward executable on {name: array}; returns
    (None or the error, {output name: array or None})."""
    out_dir = os.path.join(work, "out")
    status, err = run([exe] + save_inputs(inputs, work) + ["--output-dir", out_dir, "--quiet"])
    if status != 0:
        return f"executable exit {status}: {first_line(err)}", {}
    results = {}
    for name, file in output_files(output_names).items():
        path = os.path.join(out_dir, file)
        results[name] = np.load(path) if os.path.isfile(path) else None
    return None, results


def parse_type(text):
    """(shape, dtype) of an MLIR `tensor<2x3xf32>`."""
    dims = text[len("tensor<"):-1].split("x")
    return tuple(int(d) for d in dims[:-1]), np.dtype(_ELEMENT_DTYPES[dims[-1]])


def arguments(mlir, function):
    """[(tidal.name, role, shape, dtype)] of `function`'s arguments."""
    found = []
    for type_text, attrs in support.main_arguments(mlir, function):
        role = re.search(r"role (\w+)", support.arg_attr(attrs, "tidal.role") or "")
        found.append((support.arg_attr(attrs, "tidal.name"), role.group(1) if role else None) + parse_type(type_text))
    return found


def evaluate(mlir_path, function, values, out_dir):
    """Evaluates @function of tidalc's MLIR with tidal-eval, binding each
    argument by its tidal.name from `values` (optimizer state that is not
    there starts at zero, as in the executable). Returns (None or the error,
    [(name, role, array)] in result order)."""
    with open(mlir_path) as f:
        mlir = f.read()
    argv = [support.tool("tidal-eval"), mlir_path, "--function", function, "--output-dir", out_dir]
    for k, (name, role, shape, dtype) in enumerate(arguments(mlir, function)):
        if name in values:
            value = values[name]
        elif role == "optimizer_state":
            value = np.zeros(shape, dtype)
        else:
            return f"no value for argument {k} ({name!r}, role {role})", []
        path = os.path.join(os.path.dirname(mlir_path), f"eval_arg{k}.npy")
        np.save(path, value)
        argv += ["--arg", f"{name}={path}"]
    status, err = run(argv)
    if status != 0:
        return f"tidal-eval exit {status}: {first_line(err)}", []
    with open(os.path.join(out_dir, "manifest.json")) as f:
        results = json.load(f)["results"]
    return None, [(r["name"], r["role"], np.load(os.path.join(out_dir, r["file"]))) for r in results]

