"""ImageNet bottleneck ResNets of any depth, and a fast ONNX writer for them.

    /usr/bin/python3 -m tidal.imagenet STAGE3_BLOCKS OUT.onnx [--stage2-blocks N]
        [--batch N] [--seed S] [--external-data auto|always|never]

`bottleneck_resnet(n)` is torchvision's ResNet (v1.5: the stride sits on the
3x3 conv): a 7x7/2 stem conv with 64 channels, BatchNorm, ReLU and a 3x3/2
max pool; four stages of bottleneck blocks (1x1, 3x3, 1x1 convs, widths
64/128/256/512, expansion 4, a 1x1 conv + BN projection on the first block
of a stage); global average pool and a 1000-way fc. Depth = 3 x blocks + 2.
`stage_blocks(n)` gives [3, 4, n, 3] up to ResNet-101 (n = 6: ResNet-50,
n = 23: ResNet-101) and [3, 8, n, 3] from n = 36 (ResNet-152) on, the way
the memory papers grow ResNets to 1,000+ layers by deepening stage 3.

torch 1.13's ONNX exporter is super-linear in the graph size (ResNet-1202
on CIFAR takes minutes), so `write_onnx` builds the graph with onnx.helper
instead. It writes what `tidal.export` would write for the module, node for
node (the same op types, attributes, node and value names, input and output
names, symbolic batch "N", initializer names and order, opset 13, training
mode: BatchNormalization in its five-output form); only the weights differ.
They are random (seeded, torch's default scales) and real float32 data,
streamed to disk one tensor at a time. A model whose weights exceed
protobuf's 2 GiB limit stores them as ONNX external data (one file next to
the model, `<model>.data`), which tidalc reads.
"""

import argparse
import os
import sys
import time
from dataclasses import dataclass
from typing import Dict, List, Optional, Sequence, Tuple

import numpy as np

WIDTHS = (64, 128, 256, 512)
EXPANSION = 4
CLASSES = 1000
IMAGE = (3, 224, 224)
OPSET = 13
SEED = 0
# BatchNorm as torch 1.13 writes it: float32(1e-5) and ONNX momentum
# 1 - 0.1, both as float attributes.
BN_EPSILON = 1e-5
BN_MOMENTUM = 0.9
# Inline weights up to this many bytes; protobuf cannot hold a message of
# 2 GiB, and the graph itself needs some room.
INLINE_LIMIT = (2 << 30) - (64 << 20)


def stage_blocks(stage3_blocks: int, stage2_blocks: Optional[int] = None) -> Tuple[int, int, int, int]:
    """Blocks per stage: [3, 4, n, 3] below n = 36, [3, 8, n, 3] from there."""
    if stage3_blocks < 1:
        raise ValueError(f"stage 3 needs at least one block, got {stage3_blocks}")
    if stage2_blocks is None:
        stage2_blocks = 4 if stage3_blocks < 36 else 8
    return (3, stage2_blocks, stage3_blocks, 3)


def depth(layers: Sequence[int]) -> int:
    """Weighted layers: three convs per block, the stem conv and the fc."""
    return 3 * sum(layers) + 2


def stage3_for_depth(target_depth: int, stage2_blocks: int = 8) -> int:
    """The stage-3 block count whose [3, stage2, n, 3] net is closest to (not
    below) `target_depth` layers: 491 for ResNet-1517, 819 for ~2500."""
    return max(1, -(-(target_depth - 2 - 3 * (6 + stage2_blocks)) // 3))


# --- the module ---------------------------------------------------------------


def bottleneck_resnet(stage3_blocks: int, stage2_blocks: Optional[int] = None, classes: int = CLASSES):
    """A freshly seeded torchvision-style bottleneck ResNet, in train mode."""
    import torch

    torch.manual_seed(SEED)
    model = _module_classes()[1](stage_blocks(stage3_blocks, stage2_blocks), classes)
    model.train()
    return model


_CLASSES = None


def _module_classes():
    """(Bottleneck, ResNet), defined on first use so that the ONNX writer does
    not import torch."""
    global _CLASSES
    if _CLASSES is not None:
        return _CLASSES
    import torch
    import torch.nn as nn

    class Bottleneck(nn.Module):
        """torchvision's Bottleneck: one ReLU module used three times."""

        expansion = EXPANSION

        def __init__(self, inplanes, planes, stride=1, downsample=None):
            super().__init__()
            self.conv1 = nn.Conv2d(inplanes, planes, 1, bias=False)
            self.bn1 = nn.BatchNorm2d(planes)
            self.conv2 = nn.Conv2d(planes, planes, 3, stride=stride, padding=1, bias=False)
            self.bn2 = nn.BatchNorm2d(planes)
            self.conv3 = nn.Conv2d(planes, planes * EXPANSION, 1, bias=False)
            self.bn3 = nn.BatchNorm2d(planes * EXPANSION)
            self.relu = nn.ReLU(inplace=True)
            self.downsample = downsample

        def forward(self, x):
            identity = x
            out = self.relu(self.bn1(self.conv1(x)))
            out = self.relu(self.bn2(self.conv2(out)))
            out = self.bn3(self.conv3(out))
            if self.downsample is not None:
                identity = self.downsample(x)
            out += identity
            return self.relu(out)

    class ResNet(nn.Module):
        """torchvision's ResNet with Bottleneck blocks and `layers` per stage."""

        def __init__(self, layers, classes=CLASSES):
            super().__init__()
            self.inplanes = WIDTHS[0]
            self.conv1 = nn.Conv2d(3, self.inplanes, 7, stride=2, padding=3, bias=False)
            self.bn1 = nn.BatchNorm2d(self.inplanes)
            self.relu = nn.ReLU(inplace=True)
            self.maxpool = nn.MaxPool2d(3, stride=2, padding=1)
            for i, (width, blocks) in enumerate(zip(WIDTHS, layers)):
                setattr(self, f"layer{i + 1}", self._make_layer(width, blocks, 1 if i == 0 else 2))
            self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
            self.fc = nn.Linear(WIDTHS[-1] * EXPANSION, classes)
            for m in self.modules():  # torchvision's initialisation
                if isinstance(m, nn.Conv2d):
                    nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")

        def _make_layer(self, planes, blocks, stride):
            downsample = None
            if stride != 1 or self.inplanes != planes * EXPANSION:
                downsample = nn.Sequential(
                    nn.Conv2d(self.inplanes, planes * EXPANSION, 1, stride=stride, bias=False),
                    nn.BatchNorm2d(planes * EXPANSION),
                )
            layers = [Bottleneck(self.inplanes, planes, stride, downsample)]
            self.inplanes = planes * EXPANSION
            layers += [Bottleneck(self.inplanes, planes) for _ in range(1, blocks)]
            return nn.Sequential(*layers)

        def forward(self, x):
            x = self.maxpool(self.relu(self.bn1(self.conv1(x))))
            x = self.layer4(self.layer3(self.layer2(self.layer1(x))))
            return self.fc(torch.flatten(self.avgpool(x), 1))

    _CLASSES = (Bottleneck, ResNet)
    return _CLASSES


def export_torch(stage3_blocks: int, path: str, stage2_blocks: Optional[int] = None, batch: Optional[int] = None):
    """torch's own export of `bottleneck_resnet`, with tidal.export's settings
    (training mode, no constant folding, opset 13, symbolic batch "N", torch's
    ONNX shape inference off as for the zoo's deep ResNets). Slow for deep
    nets; the reference that `write_onnx` is checked against."""
    import functools
    import io
    import warnings

    import onnx
    import torch

    from tidal.export import TRACE_BATCH, _restore_initial_state

    model = bottleneck_resnet(stage3_blocks, stage2_blocks)
    initial_state = {k: v.clone() for k, v in model.state_dict().items()}
    gen = torch.Generator().manual_seed(SEED + 1)
    x = torch.randn((batch or TRACE_BATCH,) + IMAGE, generator=gen)
    dynamic_axes = None if batch else {"input": {0: "N"}, "output": {0: "N"}}
    buf = io.BytesIO()
    with torch.no_grad(), warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*num_batches_tracked.*")
        warnings.filterwarnings("ignore", category=torch.jit.TracerWarning, module=r"torch\.nn\.functional")
        # torch warns once per in-place ReLU/add that it rewrites them.
        warnings.filterwarnings("ignore", category=UserWarning, module=r"torch\.onnx")
        export_fn = functools.partial(torch.onnx.utils._export, onnx_shape_inference=False)
        export_fn(model, (x,), buf, export_params=True, opset_version=OPSET,
                  training=torch.onnx.TrainingMode.TRAINING, do_constant_folding=False,
                  input_names=["input"], output_names=["output"], dynamic_axes=dynamic_axes)
    proto = onnx.load_from_string(buf.getvalue())
    _restore_initial_state(proto, initial_state)
    onnx.save(proto, path)
    return proto


# --- the direct ONNX writer -----------------------------------------------------


@dataclass
class Initializer:
    name: str
    shape: Tuple[int, ...]
    # How to fill it: "kaiming" (conv, fan_out, ReLU gain), "ones", "zeros",
    # ("uniform", bound) for the fc (torch's nn.Linear default).
    fill: object


@dataclass
class WriteInfo:
    path: str
    layers: Tuple[int, int, int, int]
    depth: int
    params: int  # trainable parameters (BN running statistics excluded)
    initializer_bytes: int  # every initializer, running statistics included
    nodes: int
    external_data: Optional[str]  # the data file's path, or None when inline
    file_bytes: int  # the model file plus its data file
    seconds: float


class _GraphBuilder:
    """Emits nodes, values and initializers with torch 1.13's exporter names."""

    def __init__(self):
        self.nodes = []
        self.inits: List[Initializer] = []

    def conv(self, scope, x, name, cin, cout, k, stride, pad):
        from onnx import helper

        weight = f"{name}.weight"
        self.inits.append(Initializer(weight, (cout, cin, k, k), "kaiming"))
        out = f"{scope}/Conv_output_0"
        self.nodes.append(helper.make_node(
            "Conv", [x, weight], [out], name=f"{scope}/Conv", dilations=[1, 1], group=1,
            kernel_shape=[k, k], pads=[pad] * 4, strides=[stride, stride]))
        return out

    def batchnorm(self, scope, x, name, channels):
        from onnx import helper

        params = [f"{name}.{p}" for p in ("weight", "bias", "running_mean", "running_var")]
        for p, fill in zip(params, ("ones", "zeros", "zeros", "ones")):
            self.inits.append(Initializer(p, (channels,), fill))
        outs = [f"{scope}/BatchNormalization_output_{i}" for i in range(5)]
        self.nodes.append(helper.make_node(
            "BatchNormalization", [x] + params, outs, name=f"{scope}/BatchNormalization",
            epsilon=BN_EPSILON, momentum=BN_MOMENTUM))
        return outs[0]

    def simple(self, op, scope, inputs, **attrs):
        from onnx import helper

        out = f"{scope}/{op}_output_0"
        self.nodes.append(helper.make_node(op, list(inputs), [out], name=f"{scope}/{op}", **attrs))
        return out


def _graph(layers: Sequence[int], classes: int):
    """The nodes and initializers of the net, in torch's export order."""
    from onnx import helper

    g = _GraphBuilder()
    x = g.conv("/conv1", "input", "conv1", 3, WIDTHS[0], 7, 2, 3)
    x = g.batchnorm("/bn1", x, "bn1", WIDTHS[0])
    x = g.simple("Relu", "/relu", [x])
    x = g.simple("MaxPool", "/maxpool", [x], ceil_mode=0, kernel_shape=[3, 3], pads=[1, 1, 1, 1], strides=[2, 2])
    cin = WIDTHS[0]
    for s, (width, blocks) in enumerate(zip(WIDTHS, layers)):
        layer = f"layer{s + 1}"
        for b in range(blocks):
            stride = 2 if (s > 0 and b == 0) else 1
            mod = f"{layer}.{b}"
            scope = f"/{layer}/{mod}"
            identity = x
            out = g.conv(f"{scope}/conv1", x, f"{mod}.conv1", cin, width, 1, 1, 0)
            out = g.batchnorm(f"{scope}/bn1", out, f"{mod}.bn1", width)
            out = g.simple("Relu", f"{scope}/relu", [out])
            out = g.conv(f"{scope}/conv2", out, f"{mod}.conv2", width, width, 3, stride, 1)
            out = g.batchnorm(f"{scope}/bn2", out, f"{mod}.bn2", width)
            out = g.simple("Relu", f"{scope}/relu_1", [out])
            out = g.conv(f"{scope}/conv3", out, f"{mod}.conv3", width, width * EXPANSION, 1, 1, 0)
            out = g.batchnorm(f"{scope}/bn3", out, f"{mod}.bn3", width * EXPANSION)
            if b == 0:  # stride 2, or 64 -> 256 channels in stage 1
                ds = f"{scope}/downsample"
                identity = g.conv(f"{ds}/downsample.0", x, f"{mod}.downsample.0", cin, width * EXPANSION, 1,
                                  stride, 0)
                identity = g.batchnorm(f"{ds}/downsample.1", identity, f"{mod}.downsample.1", width * EXPANSION)
            out = g.simple("Add", scope, [out, identity])
            x = g.simple("Relu", f"{scope}/relu_2", [out])
            cin = width * EXPANSION
    x = g.simple("GlobalAveragePool", "/avgpool", [x])
    x = g.simple("Flatten", "", [x], axis=1)
    g.inits.append(Initializer("fc.weight", (classes, cin), ("uniform", 1.0 / np.sqrt(cin))))
    g.inits.append(Initializer("fc.bias", (classes,), ("uniform", 1.0 / np.sqrt(cin))))
    g.nodes.append(helper.make_node("Gemm", [x, "fc.weight", "fc.bias"], ["output"], name="/fc/Gemm",
                                    alpha=1.0, beta=1.0, transB=1))
    return g.nodes, g.inits


def _values(init: Initializer, rng) -> np.ndarray:
    count = int(np.prod(init.shape))
    if init.fill == "ones":
        return np.ones(init.shape, np.float32)
    if init.fill == "zeros":
        return np.zeros(init.shape, np.float32)
    if init.fill == "kaiming":  # kaiming_normal_(mode="fan_out", nonlinearity="relu")
        fan_out = init.shape[0] * init.shape[2] * init.shape[3]
        v = rng.standard_normal(count, dtype=np.float32)
        v *= np.float32(np.sqrt(2.0 / fan_out))
        return v.reshape(init.shape)
    kind, bound = init.fill
    assert kind == "uniform"
    v = rng.random(count, dtype=np.float32)
    v *= np.float32(2 * bound)
    v -= np.float32(bound)
    return v.reshape(init.shape)


def _varint(n: int) -> bytes:
    out = bytearray()
    while True:
        low = n & 0x7F
        n >>= 7
        if n:
            out.append(low | 0x80)
        else:
            out.append(low)
            return bytes(out)


def _field_header(field: int, length: int) -> bytes:
    """The key and length of a length-delimited protobuf field."""
    return _varint(field << 3 | 2) + _varint(length)


_GRAPH = 7  # ModelProto.graph
_INITIALIZER = 5  # GraphProto.initializer
_RAW_DATA = 9  # TensorProto.raw_data


def param_count(layers: Sequence[int], classes: int = CLASSES) -> int:
    """Trainable parameters (conv weights, BN scale and shift, fc)."""
    _, inits = _graph(layers, classes)
    return sum(int(np.prod(i.shape)) for i in inits if not i.name.endswith(("running_mean", "running_var")))


def write_onnx(path: str, stage3_blocks: int, stage2_blocks: Optional[int] = None, *, batch: Optional[int] = None,
               seed: int = SEED, weights: Optional[Dict[str, np.ndarray]] = None, external_data: str = "auto",
               classes: int = CLASSES) -> WriteInfo:
    """Writes the ResNet with `stage_blocks(stage3_blocks, stage2_blocks)` to
    `path` without torch.

    `weights` (name -> array, e.g. a module's state_dict as numpy) overrides
    the seeded random initializers it names. `external_data`: "auto" keeps
    the weights inline when they fit protobuf's limit and otherwise writes
    them to `path + ".data"`; "always" or "never" force the choice ("never"
    raises ValueError for a model over the limit).
    """
    import onnx
    from onnx import TensorProto, helper

    assert (_GRAPH, _INITIALIZER, _RAW_DATA) == (
        onnx.ModelProto.DESCRIPTOR.fields_by_name["graph"].number,
        onnx.GraphProto.DESCRIPTOR.fields_by_name["initializer"].number,
        TensorProto.DESCRIPTOR.fields_by_name["raw_data"].number)

    if external_data not in ("auto", "always", "never"):
        raise ValueError(f"external_data must be auto, always or never, not {external_data!r}")
    start = time.perf_counter()
    layers = stage_blocks(stage3_blocks, stage2_blocks)
    nodes, inits = _graph(layers, classes)
    init_bytes = sum(4 * int(np.prod(i.shape)) for i in inits)
    external = external_data == "always" or (external_data == "auto" and init_bytes > INLINE_LIMIT)
    if not external and init_bytes > INLINE_LIMIT:
        raise ValueError(f"{init_bytes} bytes of weights do not fit one protobuf message (2 GiB); "
                         "use external data")

    rng = np.random.default_rng(seed)
    weights = weights or {}
    data_path = path + ".data" if external else None

    batch_dim = batch if batch else "N"
    graph = helper.make_graph(
        nodes, "torch_jit",
        [helper.make_tensor_value_info("input", TensorProto.FLOAT, [batch_dim, *IMAGE])],
        [helper.make_tensor_value_info("output", TensorProto.FLOAT, [batch_dim, classes])])
    model = helper.make_model(onnx.GraphProto(), producer_name="tidal.imagenet", ir_version=7, opset_imports=[])
    model.ClearField("graph")
    model.opset_import.add().version = OPSET  # no domain field, as torch writes it
    model.doc_string = f"ImageNet bottleneck ResNet-{depth(layers)} {list(layers)}, opset {OPSET}, training mode"

    # Protobuf fields may come in any order and a message may be written in
    # pieces, so the file is streamed: the model's own fields, the graph's
    # header, its nodes and inputs, then one initializer at a time. Building
    # the ModelProto in Python would copy the weights four times.
    def values(init):
        value = weights.get(init.name)
        if value is None:
            value = _values(init, rng)
        value = np.ascontiguousarray(value, dtype=np.float32)
        if tuple(value.shape) != init.shape:
            raise ValueError(f"weight '{init.name}' has shape {value.shape}, the net needs {init.shape}")
        return value.reshape(-1)

    # Each initializer: its TensorProto without the data (serialized), where
    # its bytes go in the data file (external) and how many bytes of raw_data
    # follow the head in the model file (inline).
    entries, offset = [], 0
    for init in inits:
        nbytes = 4 * int(np.prod(init.shape))
        t = TensorProto(name=init.name, data_type=TensorProto.FLOAT, dims=init.shape)
        if external:
            offset += -offset % 4096  # page-aligned, as onnx's external data helper writes large tensors
            t.data_location = TensorProto.EXTERNAL
            for key, val in (("location", os.path.basename(data_path)), ("offset", str(offset)),
                             ("length", str(nbytes))):
                entry = t.external_data.add()
                entry.key, entry.value = key, val
            entries.append((t.SerializeToString(), offset, 0))
            offset += nbytes
        else:
            entries.append((t.SerializeToString() + _field_header(_RAW_DATA, nbytes), None, nbytes))
    graph_bytes = graph.SerializeToString()
    graph_len = len(graph_bytes) + sum(
        len(_field_header(_INITIALIZER, len(head) + inline)) + len(head) + inline for head, _, inline in entries)
    tmp = path + ".tmp"
    with open(tmp, "wb") as f, open(data_path + ".tmp" if external else os.devnull, "wb") as data:
        f.write(model.SerializeToString())
        f.write(_field_header(_GRAPH, graph_len))
        f.write(graph_bytes)
        for (head, at, inline), init in zip(entries, inits):
            value = memoryview(values(init)).cast("B")
            f.write(_field_header(_INITIALIZER, len(head) + inline))
            f.write(head)
            if external:
                data.write(b"\0" * (at - data.tell()))
                data.write(value)
            else:
                f.write(value)
    if external:
        os.replace(data_path + ".tmp", data_path)
    os.replace(tmp, path)
    size = os.path.getsize(path) + (os.path.getsize(data_path) if external else 0)
    params = sum(int(np.prod(i.shape)) for i in inits if not i.name.endswith(("running_mean", "running_var")))
    return WriteInfo(path=path, layers=layers, depth=depth(layers), params=params, initializer_bytes=init_bytes,
                     nodes=len(nodes), external_data=data_path, file_bytes=size,
                     seconds=time.perf_counter() - start)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python3 -m tidal.imagenet", description=__doc__.split("\n")[0])
    parser.add_argument("stage3_blocks", type=int, help="bottleneck blocks in stage 3 (6: ResNet-50)")
    parser.add_argument("out", help="output .onnx path")
    parser.add_argument("--stage2-blocks", type=int, default=None, help="default: 4 below 36 stage-3 blocks, else 8")
    parser.add_argument("--batch", type=int, default=None, help="static batch size (default: symbolic 'N')")
    parser.add_argument("--seed", type=int, default=SEED)
    parser.add_argument("--external-data", choices=("auto", "always", "never"), default="auto")
    args = parser.parse_args(argv)
    try:
        info = write_onnx(args.out, args.stage3_blocks, args.stage2_blocks, batch=args.batch, seed=args.seed,
                          external_data=args.external_data)
    except ValueError as err:
        print(f"{args.out}: error: {err}", file=sys.stderr)
        return 1
    print(f"ResNet-{info.depth} {list(info.layers)}: {info.params:,} parameters, {info.nodes} nodes, "
          f"{info.file_bytes / 2**20:.1f} MiB{' (external data)' if info.external_data else ''}, "
          f"{info.seconds:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
