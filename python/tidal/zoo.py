"""The model zoo: small, deterministic PyTorch models that tidal compiles.

Every constructor seeds torch before building its parameters, so two calls
give bit-identical weights and therefore bit-identical ONNX files.
`MODELS[name]` maps a zoo name to a `ZooEntry` holding the constructor, the
example inputs (with their ONNX names) and the output names.
"""

import math
from dataclasses import dataclass
from typing import Callable, Dict, List, Tuple

import torch
import torch.nn as nn
import torch.nn.functional as F

SEED = 0


class MLP(nn.Module):
    """scikit-learn digits classifier: 64 -> 128 -> 64 -> 10 with ReLU."""

    def __init__(self, in_features=64, hidden=(128, 64), classes=10):
        super().__init__()
        self.fc1 = nn.Linear(in_features, hidden[0])
        self.fc2 = nn.Linear(hidden[0], hidden[1])
        self.fc3 = nn.Linear(hidden[1], classes)

    def forward(self, x):
        x = F.relu(self.fc1(x))
        x = F.relu(self.fc2(x))
        return self.fc3(x)


class LeNet5(nn.Module):
    """LeNet-5 on 1x28x28 (the first conv pads by 2, as for MNIST)."""

    def __init__(self, classes=10):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 6, kernel_size=5, padding=2)
        self.conv2 = nn.Conv2d(6, 16, kernel_size=5)
        self.fc1 = nn.Linear(16 * 5 * 5, 120)
        self.fc2 = nn.Linear(120, 84)
        self.fc3 = nn.Linear(84, classes)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv1(x)), 2)
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        x = torch.flatten(x, 1)
        x = F.relu(self.fc1(x))
        x = F.relu(self.fc2(x))
        return self.fc3(x)


def _conv_bn_relu(cin, cout):
    return [
        nn.Conv2d(cin, cout, kernel_size=3, padding=1, bias=False),
        nn.BatchNorm2d(cout),
        nn.ReLU(inplace=False),
    ]


class VGGBN(nn.Module):
    """A small VGG-style net on 3x32x32: conv3x3+BN+ReLU blocks, maxpools."""

    # Channels per conv layer; "M" is a 2x2 max pool.
    CONFIG = (16, 16, "M", 32, 32, "M", 64, "M")

    def __init__(self, classes=10):
        super().__init__()
        layers, cin = [], 3
        for item in self.CONFIG:
            if item == "M":
                layers.append(nn.MaxPool2d(2))
            else:
                layers += _conv_bn_relu(cin, item)
                cin = item
        self.features = nn.Sequential(*layers)
        self.classifier = nn.Sequential(nn.Flatten(), nn.Linear(cin * 4 * 4, classes))

    def forward(self, x):
        return self.classifier(self.features(x))


class BasicBlock(nn.Module):
    """ResNet basic block; option-B (1x1 conv + BN) shortcut when reshaping."""

    def __init__(self, cin, cout, stride):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride=stride, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, stride=1, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)
        self.shortcut = nn.Sequential()
        if stride != 1 or cin != cout:
            self.shortcut = nn.Sequential(
                nn.Conv2d(cin, cout, 1, stride=stride, bias=False),
                nn.BatchNorm2d(cout),
            )

    def forward(self, x):
        out = F.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        return F.relu(out + self.shortcut(x))


class ResNet20(nn.Module):
    """CIFAR ResNet-20 (He et al. 2016): 3 stages x 3 blocks, 16/32/64."""

    def __init__(self, classes=10, blocks_per_stage=3):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 16, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(16)
        stages, cin = [], 16
        for i, cout in enumerate((16, 32, 64)):
            for j in range(blocks_per_stage):
                stride = 2 if (i > 0 and j == 0) else 1
                stages.append(BasicBlock(cin, cout, stride))
                cin = cout
        self.layers = nn.Sequential(*stages)
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(64, classes)

    def forward(self, x):
        x = F.relu(self.bn1(self.conv1(x)))
        x = self.layers(x)
        x = torch.flatten(self.pool(x), 1)
        return self.fc(x)


class ResNet56(ResNet20):
    """CIFAR ResNet-56 (He et al. 2016): ResNet20 with 9 blocks per stage (6n+2, n=9)."""

    def __init__(self, classes=10):
        super().__init__(classes, blocks_per_stage=9)


class ResNet110(ResNet20):
    """CIFAR ResNet-110 (He et al. 2016): 18 blocks per stage (6n+2, n=18)."""

    def __init__(self, classes=10):
        super().__init__(classes, blocks_per_stage=18)


class ResNet1202(ResNet20):
    """CIFAR ResNet-1202 (He et al. 2016, section 4.2): 200 blocks per stage
    (6n+2, n=200): 1,202 layers, 19.4M parameters. A memory-planning stress
    case (600 blocks, 4,210 ONNX nodes, a 79 MB file). Its export is slow:
    torch 1.13's ONNX exporter is super-linear in the graph size (minutes
    on 2 cores, against ~2 s for ResNet-110)."""

    def __init__(self, classes=10):
        super().__init__(classes, blocks_per_stage=200)


class TransformerBlock(nn.Module):
    """One pre-norm encoder block with explicitly written attention.

    The reshapes take the batch (and sequence) size from `x.shape`, so the
    export carries a Shape -> Gather -> Unsqueeze -> Concat -> Reshape
    subgraph that the compiler must fold once the batch size is bound.
    """

    def __init__(self, d_model=64, heads=4, mlp_ratio=4):
        super().__init__()
        assert d_model % heads == 0
        self.heads = heads
        self.d_head = d_model // heads
        self.ln1 = nn.LayerNorm(d_model)
        self.q = nn.Linear(d_model, d_model)
        self.k = nn.Linear(d_model, d_model)
        self.v = nn.Linear(d_model, d_model)
        self.proj = nn.Linear(d_model, d_model)
        self.ln2 = nn.LayerNorm(d_model)
        self.fc1 = nn.Linear(d_model, mlp_ratio * d_model)
        self.gelu = nn.GELU(approximate="none")  # the exact erf form
        self.fc2 = nn.Linear(mlp_ratio * d_model, d_model)

    def _split_heads(self, t, n, s):
        return t.reshape(n, s, self.heads, self.d_head).transpose(1, 2)

    def attention(self, x):
        n, s, d = x.shape
        q = self._split_heads(self.q(x), n, s)
        k = self._split_heads(self.k(x), n, s)
        v = self._split_heads(self.v(x), n, s)
        scores = torch.matmul(q, k.transpose(-2, -1)) * (1.0 / math.sqrt(self.d_head))
        weights = torch.softmax(scores, dim=-1)
        out = torch.matmul(weights, v).transpose(1, 2).reshape(n, s, d)
        return self.proj(out)

    def forward(self, x):
        x = x + self.attention(self.ln1(x))
        return x + self.fc2(self.gelu(self.fc1(self.ln2(x))))


class Regressor(nn.Module):
    """A smooth-function regressor: 8 -> 64 -> 64 -> 1 with Tanh (MSE + Adam)."""

    def __init__(self, in_features=8, hidden=64):
        super().__init__()
        self.fc1 = nn.Linear(in_features, hidden)
        self.fc2 = nn.Linear(hidden, hidden)
        self.fc3 = nn.Linear(hidden, 1)

    def forward(self, x):
        x = torch.tanh(self.fc1(x))
        x = torch.tanh(self.fc2(x))
        return self.fc3(x)


class MLPWithLoss(nn.Module):
    """The digits MLP with its loss inside: forward(x, target) -> (loss, logits)."""

    def __init__(self):
        super().__init__()
        self.net = MLP()

    def forward(self, x, target):
        logits = self.net(x)
        return F.cross_entropy(logits, target), logits


class SqueezeExcite(nn.Module):
    """MobileNetV3's squeeze-and-excitation: x * hardsigmoid(W2 relu(W1 avg(x)))."""

    def __init__(self, channels, squeezed):
        super().__init__()
        self.fc1 = nn.Conv2d(channels, squeezed, 1)
        self.fc2 = nn.Conv2d(squeezed, channels, 1)

    def forward(self, x):
        s = F.adaptive_avg_pool2d(x, 1)
        return x * F.hardsigmoid(self.fc2(F.relu(self.fc1(s))))


class InvertedResidual(nn.Module):
    """MobileNetV2/V3's block: 1x1 expand, 3x3 depthwise, 1x1 project."""

    def __init__(self, cin, expand, cout, stride, act, se):
        super().__init__()
        self.expand = nn.Sequential(nn.Conv2d(cin, expand, 1, bias=False), nn.BatchNorm2d(expand), act())
        self.depthwise = nn.Sequential(
            nn.Conv2d(expand, expand, 3, stride, 1, groups=expand, bias=False), nn.BatchNorm2d(expand), act()
        )
        self.se = SqueezeExcite(expand, max(8, expand // 4)) if se else nn.Identity()
        self.project = nn.Sequential(nn.Conv2d(expand, cout, 1, bias=False), nn.BatchNorm2d(cout))
        self.residual = stride == 1 and cin == cout

    def forward(self, x):
        y = self.project(self.se(self.depthwise(self.expand(x))))
        return x + y if self.residual else y


class MobileNetMini(nn.Module):
    """A small MobileNetV2/V3 mix for 32x32 RGB: ReLU6 (Clip), Hardswish,
    depthwise convolutions and squeeze-excitation with Hardsigmoid."""

    def __init__(self, classes=10):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 16, 3, 2, 1, bias=False), nn.BatchNorm2d(16), nn.Hardswish())
        self.blocks = nn.Sequential(
            InvertedResidual(16, 32, 16, 1, nn.ReLU6, se=False),
            InvertedResidual(16, 48, 24, 2, nn.ReLU6, se=False),
            InvertedResidual(24, 64, 24, 1, nn.Hardswish, se=True),
        )
        self.head = nn.Sequential(nn.Linear(24, 32), nn.Hardswish(), nn.Linear(32, classes))

    def forward(self, x):
        x = self.blocks(self.stem(x))
        return self.head(torch.flatten(F.adaptive_avg_pool2d(x, 1), 1))


class ActivationMLP(nn.Module):
    """The digits MLP through every smooth activation PyTorch exports as an
    ONNX op of its own: ELU, SELU, CELU, Softplus, Softsign, Mish, Tanhshrink
    style abs, and Hardtanh (Clip)."""

    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList(nn.Linear(64 if i == 0 else 32, 32) for i in range(6))
        self.acts = nn.ModuleList(
            [nn.ELU(0.7), nn.SELU(), nn.CELU(1.5), nn.Softplus(), nn.Mish(), nn.Hardtanh(-2.0, 2.0)]
        )
        self.out = nn.Linear(32, 10)

    def forward(self, x):
        for layer, act in zip(self.layers, self.acts):
            x = act(layer(x))
        return self.out(F.softsign(x) + 0.1 * torch.abs(x))


class RecurrentClassifier(nn.Module):
    """A sequence classifier: nn.LSTM (2 layers, bidirectional) or nn.GRU
    (1 layer, bidirectional), batch first, over [8 steps, 6 features]; the
    last step's output through a linear layer. ONNX LSTM/GRU, unrolled by
    the importer."""

    def __init__(self, kind="lstm"):
        super().__init__()
        if kind == "lstm":
            self.rnn = nn.LSTM(6, 12, num_layers=2, bidirectional=True, batch_first=True)
        else:
            self.rnn = nn.GRU(6, 12, num_layers=1, bidirectional=True, batch_first=True)
        self.fc = nn.Linear(24, 10)

    def forward(self, x):
        y, _ = self.rnn(x)
        return self.fc(y[:, -1])


@dataclass(frozen=True)
class ZooEntry:
    build: Callable[[], nn.Module]
    # (ONNX input name, shape without the batch dimension, dtype); every
    # input's dim 0 is the batch.
    inputs: Tuple[Tuple[str, Tuple[int, ...], torch.dtype], ...]
    outputs: Tuple[str, ...]
    # Outputs without a batch dimension (a scalar loss).
    scalar_outputs: Tuple[str, ...] = ()
    # Classes for integer "target" inputs.
    classes: int = 10


MODELS: Dict[str, ZooEntry] = {
    "mlp": ZooEntry(MLP, (("input", (64,), torch.float32),), ("output",)),
    "lenet": ZooEntry(LeNet5, (("input", (1, 28, 28), torch.float32),), ("output",)),
    "vgg_bn": ZooEntry(VGGBN, (("input", (3, 32, 32), torch.float32),), ("output",)),
    "resnet20": ZooEntry(ResNet20, (("input", (3, 32, 32), torch.float32),), ("output",)),
    "transformer_block": ZooEntry(
        TransformerBlock, (("input", (16, 64), torch.float32),), ("output",)
    ),
    "mlp_with_loss": ZooEntry(
        MLPWithLoss,
        (("input", (64,), torch.float32), ("target", (), torch.int64)),
        ("loss", "output"),
        scalar_outputs=("loss",),
    ),
    "regressor": ZooEntry(Regressor, (("input", (8,), torch.float32),), ("output",)),
    # Deeper CIFAR ResNets (appended, so the earlier names keep their order).
    "resnet56": ZooEntry(ResNet56, (("input", (3, 32, 32), torch.float32),), ("output",)),
    "resnet110": ZooEntry(ResNet110, (("input", (3, 32, 32), torch.float32),), ("output",)),
    "resnet1202": ZooEntry(ResNet1202, (("input", (3, 32, 32), torch.float32),), ("output",)),
    "mobilenet_mini": ZooEntry(MobileNetMini, (("input", (3, 32, 32), torch.float32),), ("output",)),
    "activation_mlp": ZooEntry(ActivationMLP, (("input", (64,), torch.float32),), ("output",)),
    "lstm_classifier": ZooEntry(lambda: RecurrentClassifier("lstm"), (("input", (8, 6), torch.float32),), ("output",)),
    "gru_classifier": ZooEntry(lambda: RecurrentClassifier("gru"), (("input", (8, 6), torch.float32),), ("output",)),
}

# Names to leave out of loops over the whole zoo in tests: their export
# alone takes minutes (torch 1.13's exporter is super-linear in the graph
# size: resnet1202, 4,210 ONNX nodes, ~400 s on 2 shared cores).
DEEP = ("resnet1202",)


def names() -> List[str]:
    return list(MODELS)


def build(name: str) -> nn.Module:
    """A freshly seeded instance of zoo model `name`, in train mode."""
    if name not in MODELS:
        raise KeyError(f"unknown zoo model '{name}' (have: {', '.join(MODELS)})")
    torch.manual_seed(SEED)
    model = MODELS[name].build()
    model.train()
    return model


def example_inputs(name: str, batch: int = 2) -> Tuple[torch.Tensor, ...]:
    """Deterministic example inputs for tracing `name` with batch `batch`."""
    entry = MODELS[name]
    gen = torch.Generator().manual_seed(SEED + 1)
    tensors = []
    for _, shape, dtype in entry.inputs:
        if dtype.is_floating_point:
            tensors.append(torch.randn((batch,) + shape, generator=gen, dtype=dtype))
        else:
            tensors.append(
                torch.randint(0, entry.classes, (batch,) + shape, generator=gen, dtype=dtype)
            )
    return tuple(tensors)
