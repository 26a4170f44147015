#!/usr/bin/env python3
"""A small character-level GPT, trained with tidal on the GNU GPL v3 text
that Debian's base-files package installs (/usr/share/common-licenses/GPL-3),
then asked to write some text of its own from the trained weights.

    python3 examples/char_gpt.py [--steps 600] [--target sim --device-memory 4MiB]

The model is a PyTorch nn.Module (token and position embeddings, causal
nn.TransformerEncoder layers, a linear head); tidal.compile exports it and
compiles its training step; sampling runs the compiled eval-mode forward
pass (trainer.predict) one character at a time.
"""
import argparse
import sys
import time

import numpy as np
import torch
from torch import nn

import tidal

TEXT = "/usr/share/common-licenses/GPL-3"


class CharGPT(nn.Module):
    def __init__(self, vocab: int, context: int, width: int, layers: int, heads: int):
        super().__init__()
        self.tokens = nn.Embedding(vocab, width)
        self.positions = nn.Parameter(torch.randn(1, context, width) * 0.02)
        layer = nn.TransformerEncoderLayer(width, heads, 4 * width, dropout=0.0, batch_first=True,
                                           norm_first=True)
        self.blocks = nn.TransformerEncoder(layer, layers)
        self.norm = nn.LayerNorm(width)
        self.head = nn.Linear(width, vocab)
        mask = torch.triu(torch.full((context, context), float("-inf")), diagonal=1)
        self.register_buffer("mask", mask, persistent=False)

    def forward(self, x):
        h = self.tokens(x) + self.positions
        h = self.blocks(h, mask=self.mask)
        # [B, T, V] -> [B, V, T]: cross-entropy takes the classes on dim 1.
        return self.head(self.norm(h)).transpose(1, 2)


def batches(data: np.ndarray, batch: int, context: int, rng):
    while True:
        starts = rng.integers(0, len(data) - context - 1, batch)
        x = np.stack([data[s:s + context] for s in starts])
        y = np.stack([data[s + 1:s + context + 1] for s in starts])
        yield x.astype(np.int64), y.astype(np.int64)


def sample(trainer, prompt: str, stoi, itos, context: int, length: int, temperature: float, rng) -> str:
    ids = [stoi.get(c, 0) for c in prompt]
    out = []
    batch = np.zeros((trainer.batch_size, context), np.int64)
    for _ in range(length):
        window = ids[-context:]
        batch[0, :] = stoi[" "]
        batch[0, context - len(window):] = window
        logits = trainer.predict(batch)[0, :, context - 1].astype(np.float64) / temperature
        p = np.exp(logits - logits.max())
        nxt = int(rng.choice(len(p), p=p / p.sum()))
        ids.append(nxt)
        out.append(itos[nxt])
    return "".join(out)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=600)
    parser.add_argument("--batch", type=int, default=16)
    parser.add_argument("--context", type=int, default=64)
    parser.add_argument("--width", type=int, default=96)
    parser.add_argument("--layers", type=int, default=2)
    parser.add_argument("--heads", type=int, default=4)
    parser.add_argument("--target", default="cpu")
    parser.add_argument("--device-memory", default=None)
    parser.add_argument("--sample", type=int, default=300, help="characters to write after training")
    parser.add_argument("--text", default=TEXT)
    args = parser.parse_args(argv)

    text = open(args.text, encoding="utf-8").read()
    chars = sorted(set(text))
    stoi = {c: i for i, c in enumerate(chars)}
    itos = {i: c for c, i in stoi.items()}
    data = np.array([stoi[c] for c in text], np.int64)
    print(f"{args.text}: {len(text)} characters, {len(chars)} distinct")

    torch.manual_seed(0)
    model = CharGPT(len(chars), args.context, args.width, args.layers, args.heads)
    example = torch.zeros(args.batch, args.context, dtype=torch.int64)
    start = time.monotonic()
    trainer = tidal.compile(model, (example,), loss="cross-entropy", optimizer=tidal.optim.AdamW(lr=3e-3),
                            target=args.target, device_memory=args.device_memory)
    print(f"compiled in {time.monotonic() - start:.1f} s for {args.target}")

    rng = np.random.default_rng(0)
    stream = batches(data, args.batch, args.context, rng)
    start, losses = time.monotonic(), []
    for step in range(args.steps):
        x, y = next(stream)
        losses.append(trainer.step(x, y))
        if (step + 1) % max(args.steps // 10, 1) == 0 or step + 1 == args.steps:
            print(f"step {step + 1}/{args.steps} loss {np.mean(losses[-20:]):.3f}", flush=True)
    seconds = time.monotonic() - start
    print(f"trained {args.steps} steps in {seconds:.1f} s "
          f"({args.steps * args.batch * args.context / max(seconds, 1e-9):.0f} tokens/s)")
    print(f"first loss {losses[0]:.3f}, last loss {np.mean(losses[-20:]):.3f}")
    print("--- sample ---")
    print("GNU " + sample(trainer, "GNU ", stoi, itos, args.context, args.sample, 0.8, rng))
    return 0


if __name__ == "__main__":
    sys.exit(main())
