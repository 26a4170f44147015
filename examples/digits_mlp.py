#!/usr/bin/env python3
"""Handwritten digits (scikit-learn's 8x8 set) with an MLP: a PyTorch
module trained by tidal from Python, its weights handed back to PyTorch.

    python3 examples/digits_mlp.py [--epochs 20] [--target sim --device-memory 64KiB]

tidal.compile exports the module and compiles its training step;
trainer.fit takes a torch DataLoader; trainer.state_dict() loads into the
module, which PyTorch then evaluates on the held-out digits.
"""
import argparse
import sys

import numpy as np
import torch
from sklearn.datasets import load_digits
from torch import nn

import tidal


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--epochs", type=int, default=20)
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--target", default="cpu")
    parser.add_argument("--device-memory", default=None)
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    args = parser.parse_args(argv)

    digits = load_digits()
    x = (digits.data / 16.0).astype(np.float32)
    y = digits.target.astype(np.int64)
    order = np.random.default_rng(0).permutation(len(x))
    test, train = order[:360], order[360:]

    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 64), nn.ReLU(), nn.Linear(64, 10))
    trainer = tidal.compile(model, (torch.zeros(args.batch, 64),), loss="cross-entropy",
                            optimizer=tidal.optim.SGD(lr=0.1, momentum=0.9), target=args.target,
                            device_memory=args.device_memory)
    loader = torch.utils.data.DataLoader(
        torch.utils.data.TensorDataset(torch.from_numpy(x[train]), torch.from_numpy(y[train])),
        batch_size=args.batch, shuffle=True, drop_last=True, generator=torch.Generator().manual_seed(0))
    history = trainer.fit(loader, epochs=args.epochs, eval_data=(x[test], y[test]), progress=not args.quiet)
    for epoch, (loss, acc) in enumerate(zip(history["loss"], history["eval_accuracy"]), 1):
        print(f"epoch {epoch} loss {loss:.4f} eval_accuracy {acc:.3f}")

    model.load_state_dict(trainer.state_dict())
    model.eval()
    with torch.no_grad():
        predicted = model(torch.from_numpy(x[test])).argmax(1).numpy()
    accuracy = float((predicted == y[test]).mean())
    print(f"PyTorch, with the weights tidal trained: test accuracy {accuracy:.3f}")
    counters = trainer.counters()
    print(f"{counters['steps']} steps; host memory {counters['host_bytes']} bytes"
          + (f"; device peak {counters['device_peak_bytes']} bytes" if counters["device_peak_bytes"] else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
