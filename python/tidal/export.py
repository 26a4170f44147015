"""Export zoo models to ONNX training graphs.

    /usr/bin/python3 -m tidal.export NAME OUT.onnx [--opset N] [--batch N]

The export keeps training semantics: TrainingMode.TRAINING with constant
folding off, so BatchNormalization stays unfused and in its training form
(5 outputs at opset < 14 [PyTorch emits the opset-9 form], 3 outputs and
training_mode=1 from opset 15). The batch dimension (dim 0 of every input
and of every non-scalar output) is symbolic ("N") unless `batch` is given.
"""

import argparse
import contextlib
import functools
import inspect
import io
import os
import shutil
import sys
import warnings
from typing import Optional

import onnx
import torch

from tidal import current_exporter, zoo

DEFAULT_OPSET = 13
# torch 1.13's exporter stops at opset 17.
MAX_OPSET = 17
TRACE_BATCH = 2  # not 1: tracing with 1 invites size-1 specialisation
# Exported without torch's ONNX shape inference (see export_model).
SHAPE_INFERENCE_OFF = ("resnet56", "resnet110", "resnet1202")


# Extra torch.onnx.export arguments, set by export_options().
_EXTRA_ARGS: dict = {}


@contextlib.contextmanager
def export_options(**kwargs):
    """Adds torch.onnx.export arguments (e.g. export_modules_as_functions,
    opset 15 and up) to the exports made inside the block."""
    saved = dict(_EXTRA_ARGS)
    _EXTRA_ARGS.update(kwargs)
    try:
        yield
    finally:
        _EXTRA_ARGS.clear()
        _EXTRA_ARGS.update(saved)


def export_model(name: str, opset: int = DEFAULT_OPSET, batch: Optional[int] = None) -> onnx.ModelProto:
    """Export zoo model `name` and return the checked ModelProto."""
    if not 7 <= opset <= MAX_OPSET:
        raise ValueError(f"opset {opset} outside the range torch can export (7..{MAX_OPSET})")
    model = zoo.build(name)  # raises KeyError for an unknown name
    entry = zoo.MODELS[name]
    args = zoo.example_inputs(name, batch or TRACE_BATCH)
    input_names = [n for n, _, _ in entry.inputs]
    output_names = list(entry.outputs)
    dynamic_axes = None
    if batch is None:
        dynamic_axes = {n: {0: "N"} for n in input_names}
        dynamic_axes.update({n: {0: "N"} for n in output_names if n not in entry.scalar_outputs})

    # Tracing in train mode runs BatchNorm forward, which would move the
    # running statistics; export the freshly initialised values instead.
    initial_state = {k: v.clone() for k, v in model.state_dict().items()}

    buf = io.BytesIO()
    with torch.no_grad(), warnings.catch_warnings():
        # BatchNorm's num_batches_tracked += 1 has no ONNX form; PyTorch
        # warns once per layer that it drops it. It does not affect
        # training with a fixed momentum, so keep the output quiet.
        warnings.filterwarnings("ignore", message=".*num_batches_tracked.*")
        # batch_norm checks that a batch holds more than one value per
        # channel; the tracer warns that the check is not recorded.
        warnings.filterwarnings("ignore", category=torch.jit.TracerWarning, module=r"torch\.nn\.functional")
        # torch 1.13's ONNX shape inference (per node while converting, then
        # twice over the whole graph) is super-linear in the graph size: it
        # takes ~70% of resnet1202's ~400 s export. None of the zoo's conv
        # nets needs it (their exports are byte-identical without it:
        # resnet20, vgg_bn, resnet1202 checked); the transformer's reshapes
        # do, so it stays on for the rest.
        export_fn = torch.onnx.export
        # torch >= 2.9 exports through dynamo by default, which has no
        # training mode: ask for the TorchScript exporter (the `dynamo`
        # argument exists since 2.5).
        if "dynamo" in inspect.signature(torch.onnx.export).parameters:
            export_fn = functools.partial(torch.onnx.export, dynamo=False)
        elif name in SHAPE_INFERENCE_OFF:
            export_fn = functools.partial(torch.onnx.utils._export, onnx_shape_inference=False)
        export_fn(
            model,
            args,
            buf,
            export_params=True,
            opset_version=opset,
            training=torch.onnx.TrainingMode.TRAINING,
            do_constant_folding=False,
            input_names=input_names,
            output_names=output_names,
            dynamic_axes=dynamic_axes,
            **_EXTRA_ARGS,
        )
    proto = onnx.load_from_string(buf.getvalue())
    _restore_initial_state(proto, initial_state)
    onnx.checker.check_model(proto)  # before finish(): at the exported opset, which onnx knows
    # Ops torch 1.13 writes only through tidal.current_exporter's symbolics
    # (F.fold, scatter_reduce amax) need opset 18: rewrite such a model.
    proto = current_exporter.finish(proto)
    proto.producer_name = "tidal.export"
    proto.doc_string = f"tidal zoo model '{name}', opset {opset}, training mode"
    return proto


def _check(proto: onnx.ModelProto) -> None:
    """onnx.checker, where this onnx knows the model's opset (Debian's 1.12
    stops at 17 and would check newer operator versions against older
    schemas)."""
    versions = [o.version for o in proto.opset_import if o.domain in ("", "ai.onnx")]
    if not versions or max(versions) <= onnx.defs.onnx_opset_version():
        onnx.checker.check_model(proto)


def _restore_initial_state(proto: onnx.ModelProto, state) -> None:
    """Overwrite initializers that name a module tensor with its initial value."""
    from onnx import numpy_helper

    for i, init in enumerate(proto.graph.initializer):
        if init.name in state:
            value = state[init.name].detach().cpu().numpy()
            current = numpy_helper.to_array(init)
            if current.shape == value.shape and current.dtype == value.dtype:
                proto.graph.initializer[i].CopyFrom(numpy_helper.from_array(value, init.name))


def embedding_padding(module: torch.nn.Module, proto: onnx.ModelProto, name_map) -> list:
    """tidalc --embedding-padding entries ("NAME:ROW") for the module's
    nn.Embedding layers with a padding_idx: ONNX keeps no padding_idx, so
    without them tidal would train the padding row where PyTorch does not.
    `name_map` maps state_dict keys to ONNX initializer names; an embedding
    whose weight no Gather reads (unused, or read only by a tied head) is
    left out."""
    gathered = {n.input[0] for n in proto.graph.node if n.op_type == "Gather" and n.input}
    entries = []
    for prefix, layer in module.named_modules():
        if isinstance(layer, torch.nn.Embedding) and layer.padding_idx is not None:
            onnx_name = name_map.get(f"{prefix}.weight" if prefix else "weight")
            if onnx_name in gathered:
                entries.append(f"{onnx_name}:{layer.padding_idx % layer.num_embeddings}")
    return sorted(set(entries))


def export(name: str, path: str, opset: int = DEFAULT_OPSET, batch: Optional[int] = None) -> onnx.ModelProto:
    """Export zoo model `name` to `path`; returns the ModelProto written.

    The file is checked with onnx.checker and reloaded from disk.

    With TIDAL_EXPORT_CACHE=DIR set, DIR/NAME.opsetN[.bB].onnx is used when
    it exists, and written after an export when it does not: the same bytes
    on a machine whose torch exports differently or not at all (how
    scripts/gpu_pack.sh carries models to a GPU machine).
    """
    cache = os.environ.get("TIDAL_EXPORT_CACHE")
    cached = None
    if cache:
        cached = os.path.join(cache, f"{name}.opset{opset}" + (f".b{batch}" if batch else "") + ".onnx")
        if os.path.isfile(cached):
            shutil.copyfile(cached, path)
            reloaded = onnx.load(path)
            _check(reloaded)
            return reloaded
    proto = export_model(name, opset=opset, batch=batch)
    onnx.save(proto, path)
    if cached:
        os.makedirs(cache, exist_ok=True)
        tmp = f"{cached}.tmp.{os.getpid()}"
        shutil.copyfile(path, tmp)
        os.replace(tmp, cached)
    reloaded = onnx.load(path)
    _check(reloaded)
    return reloaded


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python3 -m tidal.export", description=__doc__.split("\n")[0])
    parser.add_argument("name", choices=zoo.names(), help="zoo model")
    parser.add_argument("out", help="output .onnx path")
    parser.add_argument("--opset", type=int, default=DEFAULT_OPSET, help=f"ONNX opset (default {DEFAULT_OPSET})")
    parser.add_argument("--batch", type=int, default=None, help="static batch size (default: symbolic 'N')")
    args = parser.parse_args(argv)
    try:
        export(args.name, args.out, opset=args.opset, batch=args.batch)
    except (ValueError, onnx.checker.ValidationError) as err:
        print(f"{args.out}: error: {err}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
