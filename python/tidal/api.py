"""`tidal.compile` and `tidal.load`: from an nn.Module (or an ONNX file) to
a `Trainer`, through the same compiler as the command line.

    trainer = tidal.compile(model, (torch.randn(32, 64),), loss="cross-entropy",
                            optimizer=tidal.optim.AdamW(lr=1e-3), target="sim",
                            device_memory="2MiB")
    history = trainer.fit(loader, epochs=3)
    model.load_state_dict(trainer.state_dict())
"""

import atexit
import json
import os
import shutil
import subprocess
import tempfile
import warnings
from typing import Optional, Sequence

import numpy as np

from tidal import optim as optim_module
from tidal._library import TidalError
from tidal.trainer import COMPILE_KEY, Trainer

OPSET = 17


def tidalc_path() -> str:
    """$TIDAL_TIDALC, else tidalc in $TIDAL_BUILD_DIR/bin, else the build
    next to this package (build/bin), else tidalc on PATH."""
    candidates = [os.environ.get("TIDAL_TIDALC")]
    if os.environ.get("TIDAL_BUILD_DIR"):
        candidates.append(os.path.join(os.environ["TIDAL_BUILD_DIR"], "bin", "tidalc"))
    here = os.path.dirname(os.path.abspath(__file__))
    candidates.append(os.path.join(here, "..", "..", "build", "bin", "tidalc"))
    candidates.append(shutil.which("tidalc"))
    for path in candidates:
        if path and os.path.isfile(path) and os.access(path, os.X_OK):
            return os.path.abspath(path)
    raise TidalError("cannot find tidalc: build it (README) or set TIDAL_TIDALC")


def _work_dir(work_dir: Optional[str]) -> str:
    if work_dir:
        os.makedirs(work_dir, exist_ok=True)
        return work_dir
    path = tempfile.mkdtemp(prefix="tidal-")
    atexit.register(shutil.rmtree, path, True)
    return path


def _export(module, example_inputs, path: str):
    """Exports `module` in training mode; returns ({state key: ONNX name or
    None}, {key: initial value}, [ONNX names to freeze])."""
    import onnx
    import torch
    from onnx import numpy_helper

    from tidal.export import _restore_initial_state, embedding_padding

    if not isinstance(example_inputs, (tuple, list)):
        example_inputs = (example_inputs,)
    names = ["input"] if len(example_inputs) == 1 else [f"input{i}" for i in range(len(example_inputs))]
    initial = {k: v.detach().clone() for k, v in module.state_dict().items()}
    was_training = module.training
    module.train()
    export = torch.onnx.export
    kwargs = {}
    import inspect
    if "dynamo" in inspect.signature(torch.onnx.export).parameters:
        kwargs["dynamo"] = False
    try:
        with torch.no_grad(), warnings.catch_warnings():
            # BatchNorm's num_batches_tracked += 1 has no ONNX form (state_dict
            # counts it instead), and the tracer warns about shape checks.
            warnings.filterwarnings("ignore", message=".*num_batches_tracked.*")
            warnings.filterwarnings("ignore", category=torch.jit.TracerWarning)
            export(module, tuple(example_inputs), path, export_params=True, opset_version=OPSET,
                   training=torch.onnx.TrainingMode.TRAINING, do_constant_folding=False, input_names=names,
                   output_names=["output"], dynamic_axes={n: {0: "N"} for n in names + ["output"]}, **kwargs)
    finally:
        module.load_state_dict(initial)
        module.train(was_training)
    proto = onnx.load(path)
    _restore_initial_state(proto, initial)
    onnx.save(proto, path)
    inits = {i.name: numpy_helper.to_array(i) for i in proto.graph.initializer}
    name_map = {}
    for key, value in initial.items():
        value = value.cpu().numpy()
        if key in inits:
            name_map[key] = key
            continue
        same = [n for n, v in inits.items() if v.shape == value.shape and np.array_equal(v, value)]
        name_map[key] = same[0] if len(same) == 1 else None
    initial_np = {k: v.cpu().numpy() for k, v in initial.items() if name_map.get(k) is None}
    # What PyTorch would not train, tidalc must not either (ONNX keeps no
    # requires_grad): frozen parameters (a fine-tuned model's backbone) and
    # float buffers other than BatchNorm's running statistics.
    trained = {name_map.get(k) for k, p in module.named_parameters() if p.requires_grad}
    trained |= {name_map.get(k) for k in initial if k.endswith(("running_mean", "running_var"))}
    freeze = [i.name for i in proto.graph.initializer
              if numpy_helper.to_array(i).dtype.kind == "f" and i.name not in trained]
    return name_map, initial_np, freeze, embedding_padding(module, proto, name_map)


def _run_tidalc(args: Sequence[str]) -> None:
    proc = subprocess.run([tidalc_path()] + list(args), capture_output=True, text=True)
    if proc.returncode != 0:
        raise TidalError(proc.stderr.strip() or f"tidalc failed with status {proc.returncode}")


def compile(module, example_inputs=None, loss: str = "cross-entropy", optimizer=None, target: str = "cpu",
            device_memory: Optional[str] = None, planner: Optional[str] = None, batch_size: Optional[int] = None,
            threads: int = 0, seed: int = 0, work_dir: Optional[str] = None, tidalc_flags: Sequence[str] = (),
            init: Optional[str] = None) -> Trainer:
    """Compiles `module` (an nn.Module, exported with PyTorch in training
    mode from `example_inputs`, or the path of an ONNX model) into a
    training step and returns its `Trainer`.

    loss: "cross-entropy" (labels are class indices), "mse", or "output"
    (the model's first output is its loss). optimizer: tidal.optim.SGD,
    Adam or AdamW (torch.optim's hyper-parameter names; default SGD).
    target: "cpu", "sim" (the simulated device) or "cuda"; device_memory:
    the device budget ("2GiB"); planner: tidalc's --planner. batch_size:
    defaults to the example inputs' first dimension. A module's parameters
    with requires_grad=False and its float buffers (other than BatchNorm's
    running statistics) are frozen (tidalc --freeze), as PyTorch leaves
    them; an nn.Embedding's padding_idx row is not trained through its
    lookups (tidalc --embedding-padding), as in PyTorch.
    """
    optimizer = optimizer or optim_module.SGD()
    work = _work_dir(work_dir)
    name_map, initial = None, {}
    if isinstance(module, (str, os.PathLike)):
        model_path = os.fspath(module)
        if not os.path.isfile(model_path):
            raise TidalError(f"{model_path}: no such file")
    else:
        if example_inputs is None:
            raise TidalError("tidal.compile needs example_inputs to export a module")
        model_path = os.path.join(work, "model.onnx")
        name_map, initial, freeze, padding = _export(module, example_inputs, model_path)
        if freeze:
            tidalc_flags = ["--freeze", ",".join(freeze)] + list(tidalc_flags)
        if padding:
            tidalc_flags = ["--embedding-padding", ",".join(padding)] + list(tidalc_flags)
        if batch_size is None:
            first = example_inputs[0] if isinstance(example_inputs, (tuple, list)) else example_inputs
            batch_size = int(first.shape[0])
    flags = ["--loss", loss, "--target", target] + optimizer.flags()
    if batch_size:
        flags += ["--batch-size", str(batch_size)]
    if device_memory:
        flags += ["--device-memory", str(device_memory)]
    if planner:
        flags += ["--planner", planner]
    flags += list(tidalc_flags)
    library = os.path.join(work, "libstep.so")
    plan = os.path.join(work, "plan.json")
    _run_tidalc([model_path, "-o", library, "--emit", "lib"] + flags)
    _run_tidalc([model_path, "-o", plan, "--emit", "plan"] + flags)
    options = {"loss": loss, "optimizer": repr(optimizer), "optimizer_flags": optimizer.flags(), "target": target,
               "device_memory": device_memory, "planner": planner, "batch_size": batch_size,
               "tidalc_flags": list(tidalc_flags)}
    return Trainer(library, name_map=name_map, plan_path=plan, compile_options=options, threads=threads, seed=seed,
                   init_path=init, initial_state=initial)


class _Flags(optim_module.Optimizer):
    """An optimizer given as the tidalc flags a saved trainer recorded."""

    def __init__(self, flags):
        self._flags = list(flags)

    def flags(self):
        return self._flags


def load(path: str, threads: int = 0, seed: int = 0, work_dir: Optional[str] = None, **overrides) -> Trainer:
    """A Trainer from a file `Trainer.save` wrote: compiled again with the
    options it was compiled with (`overrides`, e.g. target="sim" or
    device_memory="1MiB", replace them), starting from the saved weights,
    optimizer state and step count."""
    import onnx
    model = onnx.load(path, load_external_data=False)
    record = next((json.loads(p.value) for p in model.metadata_props if p.key == COMPILE_KEY), None)
    if record is None:
        raise TidalError(f"{path}: not written by Trainer.save (no {COMPILE_KEY} metadata); "
                         "use tidal.compile(path, ...) with its options")
    options = dict(record["options"])
    options.update(overrides)
    trainer = compile(path, loss=options["loss"], optimizer=_Flags(options["optimizer_flags"]),
                      target=options["target"], device_memory=options.get("device_memory"),
                      planner=options.get("planner"), batch_size=options.get("batch_size"), threads=threads,
                      seed=seed, work_dir=work_dir, tidalc_flags=options.get("tidalc_flags", ()), init=path)
    trainer.name_map = record.get("name_map") or {}
    trainer._initial_state = {k: np.asarray(v) for k, v in record.get("initial_state", {}).items()}
    trainer.compile_options = record["options"]
    return trainer
