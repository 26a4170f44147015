#!/usr/bin/env python3
"""ResNet-20 trained on the simulated device with a third of the memory
its all-device plan needs, and a picture of what the planner did.

    python3 examples/resnet_sim.py [--steps 30] [--batch 16] [--fraction 0.333] [-o resnet_plan.png]

tidal.compile plans the step twice: once with unlimited device memory (its
peak is the reference), once with a budget of a third of that peak, where
tensors are offloaded to host memory and prefetched back, or recomputed,
and parameters may be streamed. Training on the sim device (device memory
is one allocation of exactly the budget) must give the same weights as the
cpu target, bit for bit, and never pass the budget. The plan's plot shows
device memory over the step with the budget line, each swap and each
recomputation.
"""
import argparse
import sys

import numpy as np
import torch

import tidal
from tidal import training, zoo


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--batch", type=int, default=16)
    parser.add_argument("--fraction", type=float, default=1 / 3)
    parser.add_argument("-o", "--output", default="resnet_plan.png", help="the plan's picture")
    args = parser.parse_args(argv)

    data, labels = training.digits_rgb32(n=max(4 * args.batch, 100))
    x, y = data["input"], labels.astype(np.int64)
    example = (torch.zeros(args.batch, 3, 32, 32),)
    optimizer = tidal.optim.SGD(lr=0.05, momentum=0.9)

    def model():
        torch.manual_seed(0)
        return zoo.build("resnet20")

    full = tidal.compile(model(), example, optimizer=optimizer, target="sim")
    peak = full.plan.device_peak
    budget = int(peak * args.fraction)
    print(f"all-device plan: peak {peak} bytes of device memory; budget {budget} bytes ({args.fraction:.0%})")
    small = tidal.compile(model(), example, optimizer=optimizer, target="sim", device_memory=str(budget))
    cpu = tidal.compile(model(), example, optimizer=optimizer, target="cpu")
    print(small.plan.summary())

    rng = np.random.default_rng(0)
    for step in range(args.steps):
        rows = rng.choice(len(x), args.batch, replace=False)
        loss = small.step(x[rows], y[rows])
        cpu.step(x[rows], y[rows])
        if (step + 1) % max(args.steps // 5, 1) == 0:
            print(f"step {step + 1} loss {loss:.4f}")
    counters = small.counters()
    print(f"measured device peak {counters['device_peak_bytes']} bytes (budget {budget}); "
          f"{counters['bytes_to_host']} bytes offloaded, {counters['bytes_to_device']} prefetched")
    same = all(np.array_equal(a.numpy(), b.numpy()) for a, b in zip(small.state_dict().values(),
                                                                   cpu.state_dict().values()))
    print(f"weights equal the cpu target's: {same}")
    small.plan.plot(args.output)
    print(f"plan drawn in {args.output}")
    return 0 if same and counters["device_peak_bytes"] <= budget else 1


if __name__ == "__main__":
    sys.exit(main())
