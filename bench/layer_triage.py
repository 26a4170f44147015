#!/usr/bin/python3
"""Layer kinds and tensor idioms from research code: does tidal compute them
as PyTorch does?

    /usr/bin/python3 bench/layer_triage.py [--opset 17] [--only a,b,...]
        [--tidalc PATH] [--workdir DIR]

Each case is a tiny module: a Linear(8, 8) and one idiom (torch.sort,
torch.diagonal, repeat_interleave, T5's relative-position buckets, a
diffusion timestep embedding, index_add, F.unfold, ...). It is exported
from PyTorch with a symbolic batch, compiled with `tidalc --mode forward
--batch-size 4`, run on a fixed [4, 8] input, and its output compared with
PyTorch's (max absolute difference; `ok` below 1e-4). One line per case:
`ok`, `MISMATCH`, the export's error (PyTorch's own limits at that opset),
or tidalc's one-line error naming the node that stops it. Forms torch
1.13 cannot export but PyTorch 2.x does (torch.stft, fft2(x).real, F.fold)
are exported as PyTorch 2.x writes them (tidal.current_exporter; F.fold's
model rewritten to opset 18). This is a
benchmark, not a test: it finds what to fix next (bench/model_triage.py
does the same for whole torchvision families).
"""

import argparse
import math
import os
import subprocess
import sys
import tempfile
import warnings

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(REPO, "python"))
import onnx  # noqa: E402

from tidal import current_exporter  # noqa: E402

BAGS = torch.tensor([[0, 1, 1, 0, 2, 2, 1, 0]])


def t5_buckets(s, x):
    """T5's bidirectional=False relative-position buckets, an Embedding bias."""
    rel = torch.arange(8)[None, :] - torch.arange(8)[:, None]
    n = torch.max(-rel, torch.zeros_like(rel))
    large = 4 + (torch.log(n.float() / 4 + 1e-6) / math.log(32 / 4) * 12).to(torch.long)
    bucket = torch.where(n < 4, n, torch.min(large, torch.full_like(large, 15)))
    return s.lin(x) + s.emb(bucket).sum(-1).sum(0)[None, :]


def timestep_embedding(s, x):
    """A diffusion model's sinusoidal timestep embedding."""
    freqs = torch.exp(-math.log(10000) * torch.arange(4, dtype=torch.float32) / 4)
    args = (x[:, 0] * 100)[:, None] * freqs[None]
    return s.lin(torch.cat([torch.cos(args), torch.sin(args)], -1))


def causal_softmax(s, x):
    mask = torch.triu(torch.ones(8, 8, dtype=torch.bool), 1)
    return F.softmax(s.lin(x)[:, None, :].expand(-1, 8, 8).masked_fill(mask, float("-inf")), -1).sum(1)


def position_ids(s, x):
    """HuggingFace's position_ids from a padding mask: an integer CumSum."""
    mask = (x > 0).long()
    return s.lin(x) + s.emb((mask.cumsum(-1) - 1).clamp(min=0) * mask).sum(-1)


def embedding_bag_offsets(s, x):
    """EmbeddingBag over bags of data-dependent sizes (DLRM's form)."""
    lens = (x[:, :4] > 0).long().sum(1)
    ids = ((x.abs() * 10).long() % 32).reshape(-1)
    return s.lin(x) + s.bags(ids, torch.cumsum(lens, 0) - lens)


CASES = {
    "flip": lambda s, x: torch.flip(s.lin(x), [1]),
    "roll": lambda s, x: torch.roll(s.lin(x), 2, 1),
    "argsort_gather": lambda s, x: torch.gather(s.lin(x), 1, torch.argsort(x, 1)),
    "sort": lambda s, x: torch.sort(s.lin(x), 1)[0],
    "sort_104": lambda s, x: torch.sort(s.lin(x).repeat(1, 13), 1)[0],
    "topk_80": lambda s, x: torch.topk(s.lin(x).repeat(1, 13), 80, 1)[0],
    "cumsum_exp": lambda s, x: torch.exp(torch.cumsum(s.lin(x) * 0.1, 1)),
    "unfold": lambda s, x: F.unfold(s.lin(x).view(-1, 2, 2, 2), 2, padding=1).sum(1),
    "glu": lambda s, x: F.glu(s.lin(x), 1),
    "diagonal": lambda s, x: torch.diagonal(s.lin(x).view(-1, 2, 4)[:, :, :2], dim1=1, dim2=2),
    "normalize": lambda s, x: F.normalize(s.lin(x), dim=1),
    "std": lambda s, x: torch.std(s.lin(x), 1, keepdim=True) * x,
    "logsumexp": lambda s, x: torch.logsumexp(s.lin(x), 1),
    "max_min_index": lambda s, x: torch.max(s.lin(x), 1)[0] + torch.min(s.lin(x), 1)[1].float(),
    "index_put": lambda s, x: s.lin(x).index_put((torch.tensor([0, 2]),), torch.ones(2, 8)),
    "index_add": lambda s, x: torch.zeros(3, 8).index_add(0, torch.tensor([0, 2, 2, 1]), s.lin(x)).sum(0) + x,
    "clamp_by_tensor": lambda s, x: torch.clamp(s.lin(x), min=x),
    "pixel_unshuffle": lambda s, x: F.pixel_unshuffle(s.lin(x).view(-1, 2, 2, 2), 2).flatten(1),
    "interpolate_linear": lambda s, x: F.interpolate(s.lin(x).view(-1, 1, 8), scale_factor=2,
                                                     mode="linear").flatten(1),
    "remainder": lambda s, x: torch.remainder(s.lin(x), 1.5),
    "fmod": lambda s, x: torch.fmod(s.lin(x), 1.5),
    "int_modulo": lambda s, x: s.lin(x) * (x.argmax(1, keepdim=True) % 3).float(),
    "baddbmm": lambda s, x: torch.baddbmm(x.view(-1, 2, 4)[:, :, :2], s.lin(x).view(-1, 2, 4),
                                          x.view(-1, 4, 2)).flatten(1),
    "t5_buckets": t5_buckets,
    "timestep_embedding": timestep_embedding,
    "group_norm_silu": lambda s, x: F.silu(F.group_norm(s.lin(x).view(-1, 4, 2), 2)).flatten(1),
    "mish_softplus": lambda s, x: F.mish(s.lin(x)) + F.softplus(x, beta=2),
    "causal_softmax": causal_softmax,
    "repeat_interleave": lambda s, x: torch.repeat_interleave(s.lin(x), 2, dim=1),
    "chunk_gate": lambda s, x: torch.cat([s.lin(x).chunk(2, 1)[1], torch.sigmoid(s.lin(x).chunk(2, 1)[0])], 1),
    "einsum_ellipsis": lambda s, x: torch.einsum("...i,ij->...j", s.lin(x), s.lin.weight),
    "einsum_bilinear": lambda s, x: torch.einsum("bi,ij,bj->b", s.lin(x), s.lin.weight, x)[:, None] * x,
    "argmax_gather": lambda s, x: s.lin(x).gather(1, s.lin(x).argmax(1, keepdim=True)) * x,
    "nan_to_num": lambda s, x: torch.nan_to_num(s.lin(x)),
    "where_python_scalar": lambda s, x: torch.where(x > 0, s.lin(x), 0.0),
    "scatter_reduce_amax": lambda s, x: torch.zeros(x.shape[0], 3).scatter_reduce(
        1, BAGS.expand(x.shape[0], 8), s.lin(x), "amax", include_self=False),
    "atan2": lambda s, x: torch.atan2(s.lin(x), x),
    "fold": lambda s, x: F.fold(s.lin(x).view(-1, 4, 2), (3, 2), (2, 2)).flatten(1),
    "stft_power": lambda s, x: torch.stft(s.lin(x).repeat(1, 4), 16, 4, window=torch.hann_window(16),
                                          return_complex=False).pow(2).sum(-1).flatten(1),
    "fft2_real": lambda s, x: torch.fft.fft2(s.lin(x).view(-1, 2, 4)).real.flatten(1),
    "masked_mean": lambda s, x: s.lin(x)[x > 0].mean() + x,
    "masked_select_sum": lambda s, x: torch.masked_select(s.lin(x), x > 0.5).sum() * x,
    "column_mask_sum": lambda s, x: s.lin(x)[:, x[0] > 0].sum(1, keepdim=True) + x,
    "position_ids": position_ids,
    "embedding_bag_offsets": embedding_bag_offsets,
}


class Case(nn.Module):
    def __init__(self, fn):
        super().__init__()
        self.fn, self.lin, self.emb = fn, nn.Linear(8, 8), nn.Embedding(32, 2)
        self.bags = nn.EmbeddingBag(32, 8)

    def forward(self, x):
        return self.fn(self, x)


def run_case(name, fn, tidalc, work, opset):
    torch.manual_seed(0)
    model, x = Case(fn), torch.randn(4, 8)
    path = os.path.join(work, name + ".onnx")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            torch.onnx.export(model, (x,), path, opset_version=opset, input_names=["x"],
                              dynamic_axes={"x": {0: "N"}})
    except Exception as err:  # PyTorch's exporter refuses the idiom
        return "export: " + str(err).split("\n")[0][:110]
    onnx.save(current_exporter.finish(onnx.load(path)), path)  # F.fold's Col2Im: opset 18
    exe = os.path.join(work, name)
    proc = subprocess.run([tidalc, path, "--mode", "forward", "--batch-size", "4", "-o", exe],
                          capture_output=True, text=True)
    if proc.returncode:
        return "tidalc: " + proc.stderr.strip().split("\n")[0].replace(path + ": error: ", "")[:200]
    np.save(os.path.join(work, "x.npy"), x.numpy())
    out = os.path.join(work, name + "_out")
    proc = subprocess.run([exe, "--input", "x=" + os.path.join(work, "x.npy"), "--output-dir", out, "--quiet"],
                          capture_output=True, text=True)
    if proc.returncode:
        return "run: " + proc.stderr.strip().split("\n")[0][:200]
    got = np.load(os.path.join(out, os.listdir(out)[0]))
    err = float(np.max(np.abs(got - model(x).detach().numpy())))
    return f"ok ({err:.1e})" if err < 1e-4 else f"MISMATCH (max |difference| {err:.2e})"


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--opset", type=int, default=17)
    p.add_argument("--only", default="", help="comma-separated case names")
    p.add_argument("--tidalc", default=os.path.join(REPO, "build", "bin", "tidalc"))
    p.add_argument("--workdir", default=None)
    args = p.parse_args(argv)
    current_exporter.register()
    names = [n for n in args.only.split(",") if n] or list(CASES)
    work = args.workdir or tempfile.mkdtemp(prefix="tidal-layer-triage-")
    os.makedirs(work, exist_ok=True)
    outcomes = {n: run_case(n, CASES[n], args.tidalc, work, args.opset) for n in names}
    for n, o in outcomes.items():
        print(f"{n:22s} {o}")
    ok = sum(o.startswith("ok") for o in outcomes.values())
    exported = sum(not o.startswith("export") for o in outcomes.values())
    print(f"{ok} of {exported} exported cases match PyTorch ({len(outcomes) - exported} not exportable at opset "
          f"{args.opset}); torch {torch.__version__}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
