"""`Trainer`: a compiled training step driven from Python (what
`tidal.compile` returns).

    trainer.step(x, y) -> float            one step on one batch
    trainer.fit(data, epochs=..., eval_data=...) -> history
    trainer.evaluate(data) -> {"loss": ..., "accuracy": ...}
    trainer.predict(x) -> np.ndarray        the eval-mode forward pass
    trainer.state_dict() / load_state_dict(sd)   PyTorch's names
    trainer.save(path); tidal.load(path)
    trainer.plan                             the memory/time plan (tidal.plan)

Batches have the compiled batch size (static shapes); `fit` skips a
smaller last batch, as the executable drops it.
"""

import json
import math
import os
import time
from collections import OrderedDict
from typing import Dict, Iterable, Optional

import numpy as np

from tidal._library import Handle, Library, TidalError

COMPILE_KEY = "tidal.compile"


class Trainer:
    def __init__(self, library_path: str, name_map: Optional[Dict[str, str]] = None, plan_path: Optional[str] = None,
                 compile_options: Optional[dict] = None, threads: int = 0, seed: int = 0,
                 init_path: Optional[str] = None, initial_state: Optional[dict] = None):
        self.library = Library(library_path)
        self._handle: Handle = self.library.create(threads=threads, seed=seed, init_path=init_path)
        self.batch_size = self.library.batch_size
        # {PyTorch state_dict key: ONNX initializer name}; None for keys
        # with no ONNX tensor (BatchNorm's num_batches_tracked).
        self.name_map = dict(name_map or {})
        self._initial_state = initial_state or {}
        self.compile_options = compile_options or {}
        self._plan_path = plan_path
        self._plan = None
        self.loss_kind = self.library.manifest.get("loss", "")
        self._inputs = [s.name for s in self.library.data_inputs() if s.name != "label"]
        outputs = [s for s in self.library.predict_results if s.role == "output"]
        self._output = outputs[0].name if outputs else None

    # --- one batch ---------------------------------------------------------

    def _feed(self, x, y=None, predict: bool = False) -> dict:
        if isinstance(x, dict):
            inputs = dict(x)
        else:
            xs = x if isinstance(x, (tuple, list)) else (x,)
            if len(xs) != len(self._inputs):
                raise TidalError(f"the model takes {len(self._inputs)} inputs ({', '.join(self._inputs)}), "
                                 f"got {len(xs)}")
            inputs = dict(zip(self._inputs, xs))
        names = {s.name for s in self.library.data_inputs(predict)}
        if y is not None and "label" in names:
            inputs["label"] = y
        return inputs

    def step(self, x, y=None) -> float:
        """One training step on one batch; returns its loss. `x` is an
        array or tensor (a tuple or dict of them for several inputs), `y`
        the labels (class indices for cross-entropy, targets for mse)."""
        return self._handle.step(self._feed(x, y))

    def predict(self, x) -> np.ndarray:
        """The eval-mode forward pass on one batch: the model's output."""
        if not self._output:
            raise TidalError("this model has no output to predict")
        return self._handle.predict(self._feed(x, predict=True), [self._output])[self._output]

    # --- loops --------------------------------------------------------------

    def _batches(self, data, shuffle: bool = False, seed: int = 0, epoch: int = 0) -> Iterable:
        """(x, y) batches of `data`: a pair of arrays (cut into batches, the
        partial last one dropped) or any iterable of batches."""
        if isinstance(data, tuple) and len(data) == 2 and hasattr(data[0], "shape") and hasattr(data[1], "shape"):
            x, y = data
            n = len(x)
            order = np.arange(n)
            if shuffle:
                order = np.random.default_rng(seed + epoch).permutation(n)
            for first in range(0, n - self.batch_size + 1, self.batch_size):
                rows = order[first:first + self.batch_size]
                yield np.asarray(x)[rows], np.asarray(y)[rows]
            return
        for batch in data:
            if isinstance(batch, dict):
                yield batch, batch.pop("label", None)
            else:
                yield batch[0], batch[1]

    def _size(self, x) -> int:
        first = next(iter(x.values())) if isinstance(x, dict) else (x[0] if isinstance(x, (tuple, list)) else x)
        return int(first.shape[0])

    def fit(self, data, epochs: int = 1, eval_data=None, progress: bool = True, shuffle: bool = False,
            seed: int = 0) -> dict:
        """Trains `epochs` epochs over `data` (a (X, Y) pair of arrays, or
        any iterable of (x, y) batches such as a torch DataLoader); with a
        tqdm progress bar showing the loss and samples/s. Returns the
        history: per-epoch mean loss (and eval loss/accuracy)."""
        history = {"loss": [], "step_loss": [], "eval_loss": [], "eval_accuracy": [], "skipped_batches": 0}
        total = None
        if isinstance(data, tuple) and len(data) == 2 and hasattr(data[0], "shape"):
            total = len(data[0]) // self.batch_size
        elif hasattr(data, "__len__"):
            total = len(data)
        bar = None
        if progress:
            from tqdm import tqdm
            bar = tqdm(total=total * epochs if total is not None else None, unit="step", dynamic_ncols=True)
        try:
            for epoch in range(epochs):
                losses, start, samples = [], time.monotonic(), 0
                for x, y in self._batches(data, shuffle, seed, epoch):
                    if self._size(x) != self.batch_size:
                        history["skipped_batches"] += 1
                        continue
                    loss = self.step(x, y)
                    losses.append(loss)
                    samples += self.batch_size
                    if bar is not None:
                        rate = samples / max(time.monotonic() - start, 1e-9)
                        bar.set_postfix(epoch=epoch + 1, loss=f"{loss:.4g}", samples_s=f"{rate:.0f}")
                        bar.update(1)
                history["step_loss"] += losses
                history["loss"].append(float(np.mean(losses)) if losses else math.nan)
                if eval_data is not None:
                    result = self.evaluate(eval_data)
                    history["eval_loss"].append(result["loss"])
                    history["eval_accuracy"].append(result["accuracy"])
        finally:
            if bar is not None:
                bar.close()
        return history

    def evaluate(self, data) -> dict:
        """Mean loss (and, for cross-entropy, accuracy) of the eval-mode
        forward pass over `data`; a partial last batch is padded and only
        its real rows counted."""
        loss_sum, correct, count = 0.0, 0, 0
        for x, y in self._batches(data):
            n = self._size(x)
            xs = x if isinstance(x, (tuple, list)) else (x,)
            if n < self.batch_size:
                pad = self.batch_size - n
                xs = tuple(np.concatenate([np.asarray(v), np.zeros((pad,) + tuple(np.shape(v)[1:]),
                                                                   np.asarray(v).dtype)]) for v in xs)
            out = self.predict(tuple(xs) if len(xs) > 1 else xs[0])[:n].astype(np.float64)
            y = np.asarray(y.numpy() if hasattr(y, "numpy") else y)[:n]
            if self.loss_kind == "cross-entropy":
                shifted = out - out.max(axis=1, keepdims=True)
                logp = shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))
                picked = np.take_along_axis(logp, y.astype(np.int64)[:, None], axis=1)
                loss_sum += float(-picked.sum())
                correct += int((out.argmax(axis=1) == y).sum())
            else:
                loss_sum += float(((out - y) ** 2).reshape(n, -1).mean(axis=1).sum())
            count += n
        if not count:
            return {"loss": math.nan, "accuracy": math.nan}
        accuracy = correct / count if self.loss_kind == "cross-entropy" else math.nan
        return {"loss": loss_sum / count, "accuracy": accuracy}

    # --- state --------------------------------------------------------------

    @property
    def steps(self) -> int:
        return self._handle.counters()["steps"]

    def counters(self) -> dict:
        """Global step count, host bytes, device peak and bytes moved."""
        return self._handle.counters()

    def _slot(self, onnx_name: str):
        for slot in self.library.persistent():
            if slot.name == onnx_name:
                return slot
        raise TidalError(f"the compiled model has no tensor '{onnx_name}'")

    def state_dict(self) -> "OrderedDict":
        """The trained values under the module's state_dict names, as CPU
        torch tensors (NumPy arrays without PyTorch): loadable by
        `module.load_state_dict`."""
        try:
            import torch
            wrap = torch.from_numpy
        except ImportError:  # pragma: no cover
            wrap = np.asarray
        state = OrderedDict()
        keys = self.name_map or {s.name: s.name for s in self.library.persistent() if s.role in ("param", "state")}
        for key, onnx_name in keys.items():
            if onnx_name is None:
                initial = self._initial_state.get(key, 0)
                # BatchNorm's num_batches_tracked: PyTorch counts the
                # training forward passes.
                value = np.asarray(initial, dtype=np.int64) + (self.steps if key.endswith("num_batches_tracked")
                                                              else 0)
                state[key] = wrap(np.array(value))
            else:
                state[key] = wrap(self._handle.read(self._slot(onnx_name)))
        return state

    def load_state_dict(self, state: dict) -> None:
        """Writes values (by state_dict name, or ONNX name) into the trainer."""
        for key, value in state.items():
            onnx_name = self.name_map.get(key, key)
            if onnx_name is None:
                continue
            self._handle.write(self._slot(onnx_name), value)

    def save(self, path: str) -> None:
        """Writes the model with the trained weights and optimizer state as
        ONNX (any ONNX tool reads it); `tidal.load(path)` resumes from it."""
        self._handle.save(path)
        import onnx
        model = onnx.load(path)
        meta = {p.key: p for p in model.metadata_props}
        record = {"options": self.compile_options, "name_map": self.name_map,
                  "initial_state": {k: np.asarray(v).tolist() for k, v in self._initial_state.items()}}
        entry = meta.get(COMPILE_KEY) or model.metadata_props.add()
        entry.key, entry.value = COMPILE_KEY, json.dumps(record)
        temp = f"{path}.tmp.{os.getpid()}"
        onnx.save(model, temp)
        os.replace(temp, path)

    @property
    def plan(self):
        """The plan tidalc made for this step (tidal.plan.Plan)."""
        if self._plan is None:
            if not self._plan_path:
                raise TidalError("no plan was written for this trainer")
            from tidal import plan
            self._plan = plan.load(self._plan_path)
        return self._plan

    def close(self) -> None:
        self._handle.close()
