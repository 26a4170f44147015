"""scikit-learn's digits as .npy files for a tidal training executable.

    /usr/bin/python3 -m tidal.digits OUT_DIR [--test-fraction 0.2] [--seed 0]

Writes OUT_DIR/{train,test}_input.npy (float32 [N, 64], pixels scaled to
[0, 1]) and OUT_DIR/{train,test}_label.npy (int64 [N], classes 0-9): the
1,797 real 8x8 images that ship with scikit-learn, split once at random.
"""

import argparse
import os
from typing import Dict

import numpy as np
from sklearn.datasets import load_digits


def split(test_fraction: float = 0.2, seed: int = 0) -> Dict[str, np.ndarray]:
    """The digits data set split into train and test arrays."""
    digits = load_digits()
    x = (digits.data / 16.0).astype(np.float32)
    y = digits.target.astype(np.int64)
    order = np.random.default_rng(seed).permutation(len(x))
    n_test = int(round(len(x) * test_fraction))
    test, train = order[:n_test], order[n_test:]
    return {
        "train_input": x[train],
        "train_label": y[train],
        "test_input": x[test],
        "test_label": y[test],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out_dir")
    parser.add_argument("--test-fraction", type=float, default=0.2)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    os.makedirs(args.out_dir, exist_ok=True)
    for name, array in split(args.test_fraction, args.seed).items():
        np.save(os.path.join(args.out_dir, name + ".npy"), array)


if __name__ == "__main__":
    main()
