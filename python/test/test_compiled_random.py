"""Random ONNX graphs: the compiled executable against the reference evaluator.

GRAPHS seeded graphs are built with onnx.helper from the ops tidal imports
(element-wise ops with NumPy broadcasting, MatMul/Gemm, Conv, pooling,
Batch/LayerNormalization, Softmax, reductions, shape ops, Dropout with
ratio 0), small static shapes, float initializers as parameters. Each is
checked twice:

- forward: `tidalc G.onnx --mode forward -o EXE`, run on random inputs;
  every output against `tidal-eval` on `tidalc --emit mlir --stop-after
  import` of the same model with the same inputs;
- training: the graph ends in a scalar loss (ReduceMean of its outputs
  squared, or --loss mse / cross-entropy with a `label`), compiled with
  plain SGD and run for exactly one step with `--steps 1 --save out.onnx
  --log log.jsonl`; every updated initializer of out.onnx (parameters and
  BatchNorm running statistics) and the logged loss against tidal-eval's
  train_step of `tidalc --emit mlir` with the same options.

Each tensor must agree to RTOL in the L2 norm (||a - e|| / ||e||), and
each updated weight also to STEP_RTOL of its update (new - initial), unless
the difference is within NOISE times the reference's own float32 error:
the distance between tidal-eval's results for the model and for its
float64 copy (what is zero in exact arithmetic, e.g. the gradient of a bias
that a normalization cancels, or ill-conditioned, is rounding noise in
both). A failure names the seed,
the op list, the tensor and the error. One graph again:
`python3 python/test/test_compiled_random.py --check SEED`; its models,
inputs and commands: `... --write SEED DIR`.

Needs TIDAL_BUILD_DIR with bin/tidalc and bin/tidal-eval.
"""

import collections
import json
import os
import sys
import tempfile
import time
import unittest
from multiprocessing.pool import ThreadPool

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

import compiled_support as cs
import support
from test_eval_grad_ops import window_out

GRAPHS = 48
FIRST_SEED = 1000
THREADS = 2
RTOL = 1e-4
STEP_RTOL = 1e-3  # the update is small next to the weight: looser
NOISE = 10.0  # ... unless within this many times the reference's float32 error
LR = 0.1

# Every op the generator can emit; the test checks that GRAPHS graphs use
# them all.
OPS = frozenset(
    """Add Sub Mul Div Relu Sigmoid Tanh Exp Log Sqrt Erf LeakyRelu Neg Pow
    MatMul Gemm Conv MaxPool AveragePool GlobalAveragePool BatchNormalization
    LayerNormalization Softmax LogSoftmax ReduceSum ReduceMean Reshape Flatten
    Transpose Concat Split Slice Gather Unsqueeze Squeeze Dropout""".split()
)


class T:
    """A value of the graph being built: its name and (static) shape."""

    def __init__(self, name, shape):
        self.name, self.shape = name, tuple(int(d) for d in shape)

    @property
    def rank(self):
        return len(self.shape)


class Builder:
    """Accumulates nodes, initializers, inputs and input data."""

    def __init__(self, seed):
        self.seed = seed
        self.rng = np.random.default_rng(seed)
        self.nodes, self.inits, self.inputs, self.side = [], [], [], []
        self.data = {}
        self.ops = []
        self.opset = self.pick([13, 15, 17])
        # A third of the graphs are wider (full SIMD vectors, oneDNN's
        # blocked layouts).
        self.scale = self.pick([1, 1, 3])
        self.count = 0

    def fresh(self, stem):
        self.count += 1
        return f"{stem}{self.count}"

    def pick(self, options):
        return options[int(self.rng.integers(len(options)))]

    def dim(self, low, high):
        """A size in [low, high), times the graph's scale."""
        return int(self.rng.integers(low * self.scale, (high - 1) * self.scale + 1))

    def node(self, op, inputs, outputs=1, **attrs):
        names = [self.fresh(op.lower() + "_") for _ in range(outputs)]
        self.nodes.append(helper.make_node(op, inputs, names, name=self.fresh(op), **attrs))
        self.ops.append(op)
        return names[0] if outputs == 1 else names

    def init(self, array, stem="w"):
        name = self.fresh(stem)
        self.inits.append(numpy_helper.from_array(np.asarray(array), name))
        return name

    def param(self, shape, low=None, high=None, fan_in=None):
        """A float32 parameter: uniform in [low, high], by default with
        variance 1/fan_in (fan_in: the last dimension)."""
        if low is None:
            bound = np.sqrt(3.0 / max(1, fan_in or (shape[-1] if shape else 1)))
            low, high = -bound, bound
        return self.init(self.rng.uniform(low, high, shape).astype(np.float32))

    def ints(self, values):
        return self.init(np.array(values, np.int64), "c")

    def constant(self, value, dtype=np.float32):
        name = self.fresh("k")
        value = numpy_helper.from_array(np.array(value, dtype))
        self.nodes.append(helper.make_node("Constant", [], [name], value=value))
        return name

    def input(self, shape, dtype=np.float32, high=None):
        name = f"x{len(self.inputs)}"
        if dtype == np.int64:
            self.data[name] = self.rng.integers(0, high, shape).astype(np.int64)
        else:
            self.data[name] = self.rng.standard_normal(shape).astype(np.float32)
        elem = TensorProto.INT64 if dtype == np.int64 else TensorProto.FLOAT
        self.inputs.append(helper.make_tensor_value_info(name, elem, list(shape)))
        return T(name, shape)

    def model(self, outputs):
        graph = helper.make_graph(
            self.nodes, f"random_{self.seed}", self.inputs,
            [helper.make_tensor_value_info(o.name, TensorProto.FLOAT, list(o.shape)) for o in outputs],
            self.inits,
        )
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", self.opset)])
        model.ir_version = 8
        return model


def size(shape):
    return int(np.prod(shape)) if shape else 1


def non_batch_axes(b, x, most=None):
    """A random non-empty sorted subset of the axes 1..rank-1."""
    k = int(b.rng.integers(1, (most or x.rank - 1) + 1))
    return sorted(int(a) for a in b.rng.choice(np.arange(1, x.rank), k, replace=False))


# --- blocks: each takes the builder and a value, returns a new value --------
# Dim 0 is the batch everywhere: no block moves or resizes it.


def unary(b, x):
    op = b.pick(["Relu", "Sigmoid", "Tanh", "Erf", "Neg", "LeakyRelu", "Exp", "Log", "Sqrt", "Pow"])
    if op == "LeakyRelu":
        return T(b.node(op, [x.name], alpha=float(b.rng.uniform(0.01, 0.3))), x.shape)
    if op == "Exp":  # of a bounded value
        return T(b.node("Exp", [b.node("Tanh", [x.name])]), x.shape)
    if op in ("Log", "Sqrt"):  # of x^2 + c, c > 0 a parameter
        square = b.node("Mul", [x.name, x.name])
        return T(b.node(op, [b.node("Add", [square, b.param((), 0.5, 1.5)])]), x.shape)
    if op == "Pow":
        return T(b.node(op, [x.name, b.constant(float(b.pick([2.0, 3.0])))]), x.shape)
    return T(b.node(op, [x.name]), x.shape)


def binary_param(b, x):
    """x op w, w broadcast: leading dims dropped, others set to 1."""
    op = b.pick(["Add", "Sub", "Mul", "Div"])
    drop = int(b.rng.integers(0, x.rank))
    shape = [d if b.rng.random() < 0.5 else 1 for d in x.shape[drop:]]
    w = b.param(shape, 0.5, 2.0) if op == "Div" else b.param(shape, -1.0, 1.0)
    operands = [x.name, w] if op == "Div" or b.rng.random() < 0.5 else [w, x.name]
    return T(b.node(op, operands), x.shape)


def binary_data(b, x):
    """x op (a reduction of x), broadcast back; or x * sigmoid(x)."""
    if b.rng.random() < 0.3:
        return T(b.node("Mul", [x.name, b.node("Sigmoid", [x.name])]), x.shape)
    axes = non_batch_axes(b, x)
    op = b.pick(["Add", "Sub", "Mul", "Div"])
    other = reduce_(b, x, axes=axes, keepdims=1, op="ReduceMean" if op == "Div" else None)
    if op == "Div":
        other = T(b.node("Sigmoid", [other.name]), other.shape)
    return T(b.node(op, [x.name, other.name]), x.shape)


def reduce_(b, x, axes=None, keepdims=None, op=None):
    op = op or b.pick(["ReduceSum", "ReduceMean"])
    if axes is None:
        axes = non_batch_axes(b, x, most=x.rank - 2 if x.rank > 2 else 1)
    if keepdims is None:
        keepdims = int(x.rank - len(axes) < 2 or b.rng.random() < 0.5)
    if keepdims:
        shape = [1 if a in axes else d for a, d in enumerate(x.shape)]
    else:
        shape = [d for a, d in enumerate(x.shape) if a not in axes]
    spelled = [a - x.rank if b.rng.random() < 0.3 else a for a in axes]
    if op == "ReduceSum":
        return T(b.node(op, [x.name, b.ints(spelled)], keepdims=keepdims), shape)
    return T(b.node(op, [x.name], axes=spelled, keepdims=keepdims), shape)


def softmax(b, x):
    axis = int(b.rng.integers(1, x.rank))
    if b.rng.random() < 0.5:
        axis -= x.rank
    return T(b.node(b.pick(["Softmax", "LogSoftmax"]), [x.name], axis=axis), x.shape)


def matmul(b, x):
    d = x.shape[-1]
    if x.rank == 3 and b.rng.random() < 0.3:  # W @ x, W broadcast over the batch
        m = b.dim(2, 6)
        w = b.param((m, x.shape[1]), fan_in=x.shape[1])
        return T(b.node("MatMul", [w, x.name]), (x.shape[0], m, d))
    n = b.dim(2, 9)
    return T(b.node("MatMul", [x.name, b.param((d, n), fan_in=d)]), x.shape[:-1] + (n,))


def attention(b, x):
    """softmax(x x^T) x over the batch: MatMul of two data values."""
    xt = b.node("Transpose", [x.name], perm=[0, 2, 1])
    scores = b.node("Softmax", [b.node("MatMul", [x.name, xt])], axis=-1)
    return T(b.node("MatMul", [scores, x.name]), x.shape)


def gemm(b, x):
    k, n = x.shape[1], b.dim(2, 9)
    trans_a, trans_b = int(b.rng.random() < 0.3), int(b.rng.random() < 0.5)
    a = b.node("Transpose", [x.name], perm=[1, 0]) if trans_a else x.name
    w = b.param((n, k) if trans_b else (k, n), fan_in=k)
    attrs = dict(transA=trans_a, transB=trans_b)
    if b.rng.random() < 0.5:
        attrs.update(alpha=float(b.rng.uniform(0.5, 2.0)), beta=float(b.rng.uniform(0.5, 2.0)))
    inputs = [a, w]
    if b.rng.random() < 0.8:
        inputs.append(b.param(b.pick([(n,), (1, n), (x.shape[0], n), (1,)]), -0.5, 0.5))
    return T(b.node("Gemm", inputs, **attrs), (x.shape[0], n))


def layer_norm(b, x):
    b.opset = 17
    # Over 4 values or more: over 2, the output is +-1 whatever the input,
    # and the gradient is all rounding noise.
    axes = [a for a in range(1, x.rank) if size(x.shape[a:]) >= 4]
    axis = b.pick(axes)
    shape = x.shape[axis:]
    inputs = [x.name, b.param(shape, 0.5, 1.5)]
    if b.rng.random() < 0.7:
        inputs.append(b.param(shape, -0.5, 0.5))
    spelled = axis - x.rank if b.rng.random() < 0.5 else axis
    return T(b.node("LayerNormalization", inputs, axis=spelled, epsilon=b.pick([1e-5, 1e-3])), x.shape)


def batch_norm(b, x):
    c = x.shape[1]
    params = [b.param((c,), 0.5, 1.5), b.param((c,), -0.5, 0.5),
              b.param((c,), -0.2, 0.2), b.param((c,), 0.5, 1.5)]
    eps = b.pick([1e-5, 1e-3])
    b.opset = max(b.opset, 15)
    if b.rng.random() < 0.6:  # as PyTorch exports train mode at opset 15
        y = b.node("BatchNormalization", [x.name] + params, outputs=3, epsilon=eps,
                   momentum=float(b.pick([0.9, 0.8])), training_mode=1)[0]
    else:
        y = b.node("BatchNormalization", [x.name] + params, epsilon=eps)
    return T(y, x.shape)


def conv(b, x):
    spatial = x.rank - 2
    c = x.shape[1]
    groups = b.pick([g for g in (1, 2, 3) if c % g == 0])
    m = groups * b.dim(1, 4)
    kernel = [int(b.rng.integers(1, min(3, s) + 1)) for s in x.shape[2:]]
    strides = [int(b.pick([1, 1, 2])) for _ in kernel]
    dilations = [2 if k > 1 and s >= 2 * k + 1 and b.rng.random() < 0.2 else 1 for k, s in zip(kernel, x.shape[2:])]
    pads = [int(b.rng.integers(0, k)) for k in kernel] * 2
    if b.rng.random() < 0.2:
        pads = [int(b.rng.integers(0, k)) for k in kernel + kernel]
    out = [window_out(s, k, st, pads[i], pads[spatial + i], d)
           for i, (s, k, st, d) in enumerate(zip(x.shape[2:], kernel, strides, dilations))]
    inputs = [x.name, b.param([m, c // groups] + kernel, fan_in=c // groups * size(kernel))]
    if b.rng.random() < 0.7:
        inputs.append(b.param((m,), -0.5, 0.5))
    y = b.node("Conv", inputs, kernel_shape=kernel, strides=strides, pads=pads, dilations=dilations, group=groups)
    return T(y, (x.shape[0], m, *out))


def pool(b, x):
    spatial = x.rank - 2
    if b.rng.random() < 0.2:
        return T(b.node("GlobalAveragePool", [x.name]), x.shape[:2] + (1,) * spatial)
    op = b.pick(["MaxPool", "AveragePool"])
    kernel = [int(b.rng.integers(1, min(3, s) + 1)) for s in x.shape[2:]]
    strides = [int(b.pick([1, 2])) for _ in kernel]
    pads = [int(b.rng.integers(0, k // 2 + 1)) for k in kernel] * 2
    windows = list(zip(x.shape[2:], kernel, strides, pads[:spatial], pads[spatial:]))
    # ceil_mode where ONNX's output size (the plain ceiling) and PyTorch's
    # (no window starting past the input) agree.
    ceil = int(b.rng.random() < 0.3 and all(
        window_out(n, k, st, pb, pe, 1, True) == -(-(n + pb + pe - k) // st) + 1 for n, k, st, pb, pe in windows))
    attrs = dict(kernel_shape=kernel, strides=strides, pads=pads, ceil_mode=ceil)
    if op == "AveragePool":
        attrs["count_include_pad"] = int(b.rng.random() < 0.5)
    out = [window_out(n, k, st, pb, pe, 1, bool(ceil)) for n, k, st, pb, pe in windows]
    return T(b.node(op, [x.name], **attrs), (*x.shape[:2], *out))


def flatten(b, x):
    return T(b.node("Flatten", [x.name], axis=1), (x.shape[0], size(x.shape[1:])))


def reshape(b, x):
    n = size(x.shape[1:])
    divisors = [d for d in range(1, n + 1) if n % d == 0]
    dims = [b.pick(divisors)]
    if b.rng.random() < 0.5 and n // dims[0] > 1:
        dims.append(b.pick([d for d in divisors if (n // dims[0]) % d == 0]))
    dims.append(n // size(dims))
    spec = [0 if b.rng.random() < 0.5 else x.shape[0]] + dims
    spec[1 + int(b.rng.integers(len(dims)))] = -1
    return T(b.node("Reshape", [x.name, b.ints(spec)]), (x.shape[0], *dims))


def transpose(b, x):
    perm = [0] + [int(a) + 1 for a in b.rng.permutation(x.rank - 1)]
    if perm == sorted(perm):
        perm[1], perm[2] = perm[2], perm[1]
    return T(b.node("Transpose", [x.name], perm=perm), [x.shape[a] for a in perm])


def concat(b, x):
    axis = int(b.rng.integers(1, x.rank))
    other = unary(b, x) if b.rng.random() < 0.7 else x
    shape = list(x.shape)
    shape[axis] *= 2
    spelled = axis - x.rank if b.rng.random() < 0.3 else axis
    pair = [other.name, x.name] if b.rng.random() < 0.5 else [x.name, other.name]
    return T(b.node("Concat", pair, axis=spelled), shape)


def split(b, x):
    axis = b.pick([a for a in range(1, x.rank) if x.shape[a] >= 2])
    n = x.shape[axis]
    cuts = sorted(int(c) for c in b.rng.choice(np.arange(1, n), min(n - 1, int(b.rng.integers(1, 3))), replace=False))
    sizes = [e - s for s, e in zip([0] + cuts, cuts + [n])]
    parts = b.node("Split", [x.name, b.ints(sizes)], outputs=len(sizes), axis=axis)
    shapes = [x.shape[:axis] + (s,) + x.shape[axis + 1:] for s in sizes]
    if len(set(sizes)) == 1 and b.rng.random() < 0.5:
        return T(b.node(b.pick(["Add", "Mul"]), parts[:2]), shapes[0]) if len(parts) == 2 else T(parts[0], shapes[0])
    if b.rng.random() < 0.5:  # the first part goes on, the others are outputs
        b.side += [T(p, s) for p, s in zip(parts[1:], shapes[1:])]
        return T(parts[0], shapes[0])
    return T(b.node("Concat", parts[::-1], axis=axis), x.shape)


def slice_(b, x):
    axes = non_batch_axes(b, x, most=min(2, x.rank - 1))
    starts, ends, steps, shape = [], [], [], list(x.shape)
    for a in axes:
        n = x.shape[a]
        step = int(b.pick([1, 1, 2, -1, -2]))
        start = int(b.rng.integers(-n, n))
        end = int(b.pick([b.rng.integers(-n - 1, n + 1), 2**62 if step > 0 else -(2**62)]))
        length = len(range(*slice(start, end, step).indices(n)))
        if length == 0:
            start, end = (0, n) if step > 0 else (n - 1, -(2**62))
            length = len(range(*slice(start, end, step).indices(n)))
        starts.append(start), ends.append(end), steps.append(step)
        shape[a] = length
    spelled = [a - x.rank if b.rng.random() < 0.3 else a for a in axes]
    y = b.node("Slice", [x.name, b.ints(starts), b.ints(ends), b.ints(spelled), b.ints(steps)])
    return T(y, shape)


def gather(b, x):
    axis = int(b.rng.integers(1, x.rank))
    n = x.shape[axis]
    shapes = [(int(b.rng.integers(1, 5)),), (2, 2)] + ([()] if x.rank >= 3 else [])  # () drops the axis
    shape = b.pick(shapes)
    indices = b.ints(b.rng.integers(-n, n, shape))
    return T(b.node("Gather", [x.name, indices], axis=axis), x.shape[:axis] + shape + x.shape[axis + 1:])


def squeeze(b, x):
    ones = [a for a in range(1, x.rank) if x.shape[a] == 1]
    if ones and x.rank - len(ones) >= 2:
        return T(b.node("Squeeze", [x.name, b.ints(ones)]), [d for a, d in enumerate(x.shape) if a not in ones])
    axis = int(b.rng.integers(1, x.rank + 1))
    y = T(b.node("Unsqueeze", [x.name, b.ints([axis])]), x.shape[:axis] + (1,) + x.shape[axis:])
    if b.rng.random() < 0.5:
        y = T(b.node("Squeeze", [unary(b, y).name, b.ints([axis - y.rank])]), x.shape)
    return y


def dropout(b, x):
    if b.rng.random() < 0.6:  # training mode, as PyTorch exports it: with the mask
        y = b.node("Dropout", [x.name, b.constant(0.0), b.constant(True, np.bool_)], outputs=2)[0]
    else:
        y = b.node("Dropout", [x.name, b.constant(0.0)])
    return T(y, x.shape)


# (block, weight, applies to x): the layers of a network more often than
# the shape ops between them.
BLOCKS = [
    (unary, 3, lambda x: True),
    (binary_param, 2, lambda x: True),
    (binary_data, 1, lambda x: x.rank >= 2),
    (reduce_, 1, lambda x: x.rank >= 3),
    (softmax, 1, lambda x: x.rank >= 2),
    (matmul, 2, lambda x: x.rank in (2, 3)),
    (attention, 1, lambda x: x.rank == 3 and x.shape[1] >= 2),
    (gemm, 3, lambda x: x.rank == 2),
    (layer_norm, 1, lambda x: x.rank >= 2 and size(x.shape[1:]) >= 4),
    (batch_norm, 2, lambda x: x.rank in (2, 3, 4) and size(x.shape) // x.shape[1] >= 4),
    (conv, 4, lambda x: x.rank in (3, 4)),
    (pool, 3, lambda x: x.rank in (3, 4)),
    (flatten, 1, lambda x: x.rank >= 3),
    (reshape, 1, lambda x: x.rank >= 2 and size(x.shape[1:]) >= 4),
    (transpose, 1, lambda x: x.rank >= 3),
    (concat, 1, lambda x: x.rank >= 2 and size(x.shape) <= 8000),
    (split, 1, lambda x: x.rank >= 2 and max(x.shape[1:]) >= 2),
    (slice_, 1, lambda x: x.rank >= 2),
    (gather, 1, lambda x: x.rank >= 2),
    (squeeze, 1, lambda x: x.rank <= 4),
    (dropout, 1, lambda x: True),
]


def start(b):
    """The graph's data input(s) and the first value, by family."""
    dim = b.dim
    batch = int(b.rng.integers(2, 5))
    family = b.pick(["image", "image", "signal", "sequence", "vector", "embedding", "two_inputs"])
    if family == "image":
        return family, b.input((batch, dim(1, 5), dim(4, 6), dim(4, 6)))
    if family == "signal":
        return family, b.input((batch, dim(1, 5), dim(5, 12)))
    if family == "sequence":
        return family, b.input((batch, dim(2, 6), dim(3, 9)))
    if family == "vector":
        return family, b.input((batch, dim(3, 11)))
    if family == "embedding":
        vocab, width = dim(4, 10), dim(3, 7)
        ids = b.input((batch, dim(2, 6)), np.int64, high=vocab)
        return family, T(b.node("Gather", [b.param((vocab, width), -1.0, 1.0), ids.name], axis=0), ids.shape + (width,))
    x, z = b.input((batch, dim(3, 9))), b.input((batch, dim(3, 9)))
    projected = b.node("MatMul", [z.name, b.param((z.shape[1], x.shape[1]), fan_in=z.shape[1])])
    return family, T(b.node("Add", [x.name, projected]), x.shape)


class RandomGraph:
    """Graph number `seed`: the forward model, the training model, its loss
    option and the data inputs."""

    def __init__(self, seed):
        b = Builder(seed)
        self.seed = seed
        self.family, x = start(b)
        for _ in range(int(b.rng.integers(3, 8))):
            blocks = [(f, w) for f, w, ok in BLOCKS if ok(x) and size(x.shape) <= 20000]
            weights = np.array([w for _, w in blocks], np.float64)
            x = blocks[int(b.rng.choice(len(blocks), p=weights / weights.sum()))][0](b, x)
        # A last bias, so that some parameter always gets a gradient.
        x = T(b.node("Add", [x.name, b.param(x.shape[-1:], -0.5, 0.5)]), x.shape)
        outputs = [x] + b.side
        self.ops = list(b.ops)
        self.forward = b.model(outputs)
        self.inputs = dict(b.data)
        self.loss = "output"
        if not b.side and b.rng.random() < 0.5:
            self.loss = "cross-entropy" if x.rank == 2 and x.shape[1] >= 2 and b.rng.random() < 0.5 else "mse"
        if self.loss == "output":  # loss = sum of mean(o^2) over the outputs
            terms = [b.node("ReduceMean", [b.node("Mul", [o.name, o.name])], keepdims=0) for o in outputs]
            while len(terms) > 1:
                terms = [b.node("Add", terms[:2])] + terms[2:]
            self.train = b.model([T(terms[0], ())])
        else:
            self.train = b.model([x])
            if self.loss == "mse":
                label = b.rng.standard_normal(x.shape).astype(np.float32)
            else:
                label = b.rng.integers(0, x.shape[1], x.shape[0]).astype(np.int64)
            b.data["label"] = label
        self.train_inputs = dict(b.data)
        for model in (self.forward, self.train):  # the shapes declared are ONNX's
            onnx.checker.check_model(model, full_check=True)

    def describe(self):
        opset = self.forward.opset_import[0].version
        outputs = len(self.forward.graph.output)
        return (f"seed {self.seed} ({self.family}, opset {opset}, {outputs} output(s), loss {self.loss}): "
                + " ".join(self.ops))

    def train_options(self):
        return ["--optimizer", "sgd", "--lr", str(LR)] + ([] if self.loss == "output" else ["--loss", self.loss])


def initializers(model):
    return {i.name: numpy_helper.to_array(i) for i in model.graph.initializer}


def to_double(model):
    """A float64 copy of `model`: every float32 input, output, initializer
    and Constant becomes float64."""
    m = onnx.ModelProto()
    m.CopyFrom(model)
    for vi in list(m.graph.input) + list(m.graph.output):
        if vi.type.tensor_type.elem_type == TensorProto.FLOAT:
            vi.type.tensor_type.elem_type = TensorProto.DOUBLE
    tensors = list(m.graph.initializer) + [a.t for n in m.graph.node for a in n.attribute if a.HasField("t")]
    for t in tensors:
        if t.data_type == TensorProto.FLOAT:
            t.CopyFrom(numpy_helper.from_array(numpy_helper.to_array(t).astype(np.float64), t.name))
    return m


def references(model, options, function, values, work):
    """tidal-eval's results of `function` of `tidalc --emit mlir OPTIONS`
    for the model in float32 and in float64: (None or the error,
    {name: (role, float32 result, float64 result)})."""
    found = []
    for tag, m, vals in (("f32", model, values),
                         ("f64", to_double(model), {k: v.astype(np.float64) if v.dtype == np.float32 else v
                                                    for k, v in values.items()})):
        path, mlir = os.path.join(work, f"{tag}.onnx"), os.path.join(work, f"{tag}.mlir")
        onnx.save(m, path)
        error = cs.tidalc(path, mlir, "--emit", "mlir", *options)
        error, results = (error, []) if error else cs.evaluate(mlir, function, vals, os.path.join(work, tag))
        if error:
            return f"{tag}: {error}", {}
        found.append(results)
    return None, {name: (role, r32, r64) for (name, role, r32), (_, _, r64) in zip(*found)}


class Problems(list):
    """The problems found, and the largest error seen as a multiple of its
    tolerance."""

    worst = 0.0


def check_tensor(what, actual, ref, ref64, problems, initial=None):
    """Appends a problem when `actual` is absent or off the float32
    reference `ref` by more than RTOL of it in the L2 norm (and, for a new
    weight, STEP_RTOL of the update ref - initial), unless that is within
    NOISE times the reference's own float32 error (against `ref64`) or an
    ulp of the weights."""
    if actual is None or np.shape(actual) != np.shape(ref):
        problems.append(f"{what}: {'missing' if actual is None else f'shape {np.shape(actual)}'},"
                        f" expected {np.shape(ref)}")
        return
    a, e, e64 = (np.asarray(v, np.float64) for v in (actual, ref, ref64))
    diff, norm, noise = (float(np.linalg.norm(v)) for v in (a - e, e, e - e64))
    bound = RTOL * norm
    update = None if initial is None else float(np.linalg.norm(e - initial))
    if update is not None:
        bound = min(bound, STEP_RTOL * update)
    allowed = max(bound, NOISE * noise, 2.0**-22 * norm)
    problems.worst = max(problems.worst, diff / allowed if allowed else float(diff > 0) * np.inf)
    if not diff <= allowed:
        text = f"{what}: relative L2 error {diff / norm if norm else diff:.3g}"
        if update is not None:
            text += f", of the update {diff / update if update else diff:.3g}"
        problems.append(text + f" (tolerance {RTOL:g}{f', update {STEP_RTOL:g}' if update is not None else ''};"
                        f" the reference's float32 error {noise / norm if norm else noise:.2g})")


def check_forward(g, work):
    """Problems of the forward pass: the executable vs tidal-eval."""
    exe = os.path.join(work, "forward")
    onnx.save(g.forward, exe + ".onnx")
    error = cs.tidalc(exe + ".onnx", exe, "--mode", "forward")
    if error:
        return [error]
    error, expected = references(g.forward, ["--stop-after", "import"], "main",
                                 dict(g.inputs, **initializers(g.forward)), work)
    if error:
        return [error]
    error, actual = cs.run_forward(exe, g.inputs, [o.name for o in g.forward.graph.output], work)
    if error:
        return [error]
    problems = Problems()
    for name in actual:
        if name not in expected:
            problems.append(f"output {name!r}: tidal-eval has no result of that name")
        else:
            check_tensor(f"output {name!r}", actual[name], *expected[name][1:], problems)
    return problems


def check_training(g, work):
    """Problems of one SGD step: the executable's --save and --log vs
    tidal-eval's train_step."""
    exe = os.path.join(work, "train")
    onnx.save(g.train, exe + ".onnx")
    options = g.train_options()
    error = cs.tidalc(exe + ".onnx", exe, *options)
    if error:
        return [error]
    initial = initializers(g.train)
    error, expected = references(g.train, options, "train_step", dict(g.train_inputs, **initial), work)
    if error:
        return [error]
    saved, log = os.path.join(work, "out.onnx"), os.path.join(work, "log.jsonl")
    flags = ["--steps", "1", "--save", saved, "--log", log, "--quiet"]
    status, err = cs.run([exe] + cs.save_inputs(g.train_inputs, work) + flags)
    if status != 0:
        return [f"executable exit {status}: {cs.first_line(err)}"]
    new = initializers(onnx.load(saved))
    with open(log) as f:
        logged = [np.float32(json.loads(line)["loss"]) for line in f if line.strip()]
    problems, updated = Problems(), 0
    for name, (role, ref, ref64) in expected.items():
        if role == "loss":
            check_tensor("loss", logged[-1] if logged else None, ref, ref64, problems)
        elif name in initial:
            check_tensor(f"{role} {name!r}", new.get(name), ref, ref64, problems, initial[name].astype(np.float64))
            updated += bool(np.any(ref != initial[name]))
    for name in sorted(set(new) & set(initial) - set(expected)):
        if new[name].tobytes() != initial[name].tobytes():
            problems.append(f"{name!r} changed, but train_step does not update it")
    if not updated and not problems:
        problems.append("no initializer changed in the reference step: a vacuous check")
    return problems


def check_graph(seed):
    """(graph description, forward problems, training problems, op list)."""
    g = RandomGraph(seed)
    with tempfile.TemporaryDirectory(prefix=f"tidal-random-{seed}-") as work:
        os.makedirs(os.path.join(work, "f"))
        os.makedirs(os.path.join(work, "t"))
        forward = check_forward(g, os.path.join(work, "f"))
        training = check_training(g, os.path.join(work, "t"))
    return g.describe(), forward, training, g.ops


_SKIP = support.skip_reason("tidalc", "tidal-eval")


@unittest.skipIf(_SKIP, _SKIP)
class CompiledRandomTest(unittest.TestCase):
    def test_random_graphs(self):
        seeds = list(range(FIRST_SEED, FIRST_SEED + GRAPHS))
        start_time = time.monotonic()
        with ThreadPool(THREADS) as pool:
            results = pool.map(check_graph, seeds)
        seconds = time.monotonic() - start_time
        used = collections.Counter(op for _, _, _, ops in results for op in set(ops))
        failures = []
        for seed, (desc, forward, training, _) in zip(seeds, results):
            for kind, problems in (("forward", forward), ("training", training)):
                if problems:
                    failures.append(f"{kind} {desc}\n      " + "\n      ".join(problems[:6]))
        counts = {k: sum(1 for r in results if not r[i]) for k, i in (("forward", 1), ("training", 2))}
        worst = {k: max(getattr(r[i], "worst", 0.0) for r in results) for k, i in (("forward", 1), ("training", 2))}
        print(
            f"\n[compiled random graphs] {GRAPHS} graphs (seeds {seeds[0]}..{seeds[-1]}), "
            f"forward passed {counts['forward']} failed {GRAPHS - counts['forward']}, "
            f"training passed {counts['training']} failed {GRAPHS - counts['training']}, "
            f"rtol {RTOL:g} (updates {STEP_RTOL:g}), largest error {worst['forward']:.2g} (forward) and"
            f" {worst['training']:.2g} (training) x tolerance, {seconds:.0f} s with {THREADS} threads",
            file=sys.stderr,
        )
        print("  graphs per op: " + ", ".join(f"{op} {n}" for op, n in sorted(used.items())), file=sys.stderr)
        for f in failures:
            print("  FAIL " + f, file=sys.stderr)
        if failures:
            print("  reproduce one: TIDAL_BUILD_DIR=build PYTHONPATH=python /usr/bin/python3"
                  " python/test/test_compiled_random.py --check SEED (or --write SEED DIR: the models,"
                  " inputs and commands)", file=sys.stderr)
        self.assertFalse(sorted(OPS - set(used)), "ops the random graphs never used")
        self.assertFalse(failures, f"{len(failures)} random-graph checks failed (listed above)")


def write(seed, out_dir):
    """Writes graph `seed`'s models and inputs to out_dir and prints the
    commands that check it by hand."""
    g = RandomGraph(seed)
    os.makedirs(out_dir, exist_ok=True)
    onnx.save(g.forward, os.path.join(out_dir, "forward.onnx"))
    onnx.save(g.train, os.path.join(out_dir, "train.onnx"))
    for name, value in g.train_inputs.items():
        np.save(os.path.join(out_dir, f"{name}.npy"), value)
    inputs = lambda names: " ".join(f"--input {n}={out_dir}/{n}.npy" for n in names)  # noqa: E731
    tidalc = support.tool("tidalc") or "build/bin/tidalc"
    print(g.describe())
    print(f"{tidalc} {out_dir}/forward.onnx --mode forward -o {out_dir}/forward && "
          f"{out_dir}/forward {inputs(g.inputs)} --output-dir {out_dir}/out --quiet")
    print(f"{tidalc} {out_dir}/train.onnx {' '.join(g.train_options())} -o {out_dir}/train && "
          f"{out_dir}/train {inputs(g.train_inputs)} --steps 1 --save {out_dir}/out.onnx --quiet")


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "--write":
        write(int(sys.argv[2]), sys.argv[3])
    elif len(sys.argv) == 3 and sys.argv[1] == "--check":
        desc, forward, training, _ = check_graph(int(sys.argv[2]))
        print(f"{desc}\nforward: {forward or 'ok'}\ntraining: {training or 'ok'}")
        sys.exit(1 if forward or training else 0)
    else:
        unittest.main()
