"""Optimizers for `tidal.compile`, with torch.optim's names and defaults.

Each becomes tidalc flags (`--optimizer`, `--lr`, ...); the update itself
is compiled into the training step (docs/optimizers.md).
"""

from typing import List, Tuple


class Optimizer:
    name = ""

    def flags(self) -> List[str]:
        raise NotImplementedError

    def __repr__(self):
        fields = ", ".join(f"{k}={v!r}" for k, v in vars(self).items())
        return f"{type(self).__name__}({fields})"


class SGD(Optimizer):
    """torch.optim.SGD: lr, momentum, dampening, weight_decay, nesterov."""

    name = "sgd"

    def __init__(self, lr: float = 0.01, momentum: float = 0.0, dampening: float = 0.0,
                 weight_decay: float = 0.0, nesterov: bool = False):
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening (as torch.optim.SGD)")
        self.lr, self.momentum, self.dampening = lr, momentum, dampening
        self.weight_decay, self.nesterov = weight_decay, nesterov

    def flags(self) -> List[str]:
        flags = ["--optimizer", "sgd", "--lr", repr(self.lr), "--momentum", repr(self.momentum),
                 "--dampening", repr(self.dampening), "--weight-decay", repr(self.weight_decay)]
        return flags + (["--nesterov"] if self.nesterov else [])


class Adam(Optimizer):
    """torch.optim.Adam: lr, betas, eps, weight_decay."""

    name = "adam"
    default_weight_decay = 0.0

    def __init__(self, lr: float = 0.001, betas: Tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = None):
        self.lr, self.betas, self.eps = lr, tuple(betas), eps
        self.weight_decay = self.default_weight_decay if weight_decay is None else weight_decay

    def flags(self) -> List[str]:
        return ["--optimizer", self.name, "--lr", repr(self.lr), "--beta1", repr(self.betas[0]), "--beta2",
                repr(self.betas[1]), "--eps", repr(self.eps), "--weight-decay", repr(self.weight_decay)]


class AdamW(Adam):
    """torch.optim.AdamW: decoupled weight decay, 0.01 by default."""

    name = "adamw"
    default_weight_decay = 0.01
