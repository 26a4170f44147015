#!/usr/bin/env python3
"""A stand-in for tidalc that records its results on one machine and replays
them on another (docs/cuda.md, "Running the GPU checks").

The lent GPU machines have no LLVM/MLIR 19, so tidalc cannot run there;
the executables it makes need only the runtime's static libraries, the
CUDA libraries and oneDNN. scripts/gpu_pack.sh runs the GPU tests and the
GPU benchmark here with this script as their tidalc in record mode, and
the GPU machine runs them again in replay mode:

    TIDAL_REPLAY=record TIDAL_REPLAY_DIR=DIR TIDAL_REAL_TIDALC=build/bin/tidalc
        tidalc_replay.py ARGS...   runs the real tidalc, stores its exit
        status, stdout, stderr and output file under DIR, keyed by ARGS
        with every input file replaced by its SHA-256 and the -o path by a
        placeholder. An executable is stored as its object file and link
        command (captured through TIDAL_CXX), not linked bytes.
    TIDAL_REPLAY=replay TIDAL_REPLAY_DIR=DIR TIDAL_REPLAY_RUNTIME_DIR=LIBA
        TIDAL_REPLAY_LIB_DIR=LIBSO tidalc_replay.py ARGS...   gives back the
        recorded result; an executable is linked again with the local C++
        driver against LIBA (libtidalrt*.a) and the shared libraries, each
        taken from LIBSO when its recorded path does not exist here.
        Arguments never recorded: exit 3 with one line saying so.

Internally, TIDAL_REPLAY_CAPTURE=ENTRY marks the call as the C++ driver
that tidalc's linker runs during a recording.
"""

import hashlib
import json
import os
import shutil
import subprocess
import sys


def fail(msg, code=3):
    print(f"tidalc_replay: {msg}", file=sys.stderr)
    sys.exit(code)


def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def normalize(args):
    """(key, output path or None, input files) of a tidalc command line."""
    norm, out, inputs = [], None, []
    i = 0
    while i < len(args):
        a = args[i]
        if a == "-o" and i + 1 < len(args):
            out = args[i + 1]
            norm += ["-o", "<OUT>"]
            i += 2
            continue
        if a.startswith("-o") and len(a) > 2 and not a.startswith("--"):
            out = a[2:]
            norm.append("-o<OUT>")
        elif not a.startswith("-") and os.path.isfile(a):
            norm.append("<FILE:" + sha256(a) + ">")
            inputs.append(a)
        else:
            norm.append(a)
        i += 1
    key = hashlib.sha256(json.dumps(norm).encode()).hexdigest()[:32]
    return key, norm, out, inputs


def substitute(text, pairs):
    for old, new in pairs:
        if old:
            text = text.replace(old, new)
    return text


def capture(entry, argv):
    """Runs as tidalc's C++ driver: keeps the object file and link command,
    then links for real so that tidalc finishes as usual."""
    out = argv[argv.index("-o") + 1]
    obj = next(a for a in argv if a.endswith(".o") and os.path.isfile(a))
    shutil.copyfile(obj, os.path.join(entry, "object.o"))
    link = []
    for a in argv:
        if a == out:
            link.append("<OUT>")
        elif a == obj:
            link.append("<OBJ>")
        elif a.startswith("-L"):
            link.append("-L<RUNTIME>")
        else:
            link.append(a)
    with open(os.path.join(entry, "link.json"), "w") as f:
        json.dump(link, f)
    os.execvp(os.environ.get("TIDAL_REPLAY_REAL_CXX", "c++"), ["c++"] + argv)


def record(cache, key, norm, out, args):
    real = os.environ.get("TIDAL_REAL_TIDALC")
    if not real:
        fail("TIDAL_REAL_TIDALC is not set", 2)
    entry = os.path.join(cache, key)
    shutil.rmtree(entry, ignore_errors=True)
    os.makedirs(entry)
    env = dict(os.environ, TIDAL_REPLAY_CAPTURE=entry, TIDAL_CXX=os.path.abspath(__file__),
               TIDAL_REPLAY_REAL_CXX=os.environ.get("TIDAL_CXX", "c++"))
    proc = subprocess.run([real] + args, capture_output=True, text=True, env=env)
    kind = "none"
    if os.path.exists(os.path.join(entry, "link.json")):
        kind = "link"
    elif out and out != os.devnull and os.path.isfile(out):
        shutil.copyfile(out, os.path.join(entry, "output"))
        kind = "file"
    meta = {"args": norm, "rc": proc.returncode, "stdout": substitute(proc.stdout, [(out, "<OUT>")]),
            "stderr": substitute(proc.stderr, [(out, "<OUT>")]), "output": kind}
    with open(os.path.join(entry, "meta.json"), "w") as f:
        json.dump(meta, f, indent=1)
    sys.stdout.write(proc.stdout)
    sys.stderr.write(proc.stderr)
    return proc.returncode


def relink(entry, out):
    with open(os.path.join(entry, "link.json")) as f:
        link = json.load(f)
    runtime = os.environ.get("TIDAL_REPLAY_RUNTIME_DIR")
    libdir = os.environ.get("TIDAL_REPLAY_LIB_DIR", "")
    if not runtime:
        fail("TIDAL_REPLAY_RUNTIME_DIR is not set", 2)
    temp = f"{out}.tmp.{os.getpid()}"
    argv = [os.environ.get("TIDAL_CXX", "c++")]
    for a in link:
        if a == "<OUT>":
            a = temp
        elif a == "<OBJ>":
            a = os.path.join(entry, "object.o")
        elif a == "-L<RUNTIME>":
            a = "-L" + runtime
        elif a.startswith("/") and not os.path.exists(a) and libdir:
            a = os.path.join(libdir, os.path.basename(a))
        argv.append(a)
    proc = subprocess.run(argv, capture_output=True, text=True)
    if proc.returncode != 0:
        fail(f"relinking {out} failed: {' '.join(argv)}\n{proc.stderr}", 2)
    os.replace(temp, out)


def replay(cache, key, norm, out):
    entry = os.path.join(cache, key)
    meta_path = os.path.join(entry, "meta.json")
    if not os.path.isfile(meta_path):
        fail("no recording of tidalc " + " ".join(norm))
    with open(meta_path) as f:
        meta = json.load(f)
    if meta["rc"] == 0 and out:
        if meta["output"] == "link":
            relink(entry, out)
        elif meta["output"] == "file":
            shutil.copyfile(os.path.join(entry, "output"), out)
    sys.stdout.write(substitute(meta["stdout"], [("<OUT>", out or "")]))
    sys.stderr.write(substitute(meta["stderr"], [("<OUT>", out or "")]))
    return meta["rc"]


def main():
    entry = os.environ.get("TIDAL_REPLAY_CAPTURE")
    if entry:
        return capture(entry, sys.argv[1:])
    mode, cache = os.environ.get("TIDAL_REPLAY"), os.environ.get("TIDAL_REPLAY_DIR")
    if mode not in ("record", "replay") or not cache:
        fail("set TIDAL_REPLAY=record|replay and TIDAL_REPLAY_DIR", 2)
    args = sys.argv[1:]
    key, norm, out, _ = normalize(args)
    if mode == "record":
        return record(cache, key, norm, out, args)
    return replay(cache, key, norm, out)


if __name__ == "__main__":
    sys.exit(main())
