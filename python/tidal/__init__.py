"""tidal's Python side.

The front end (docs/python.md):

    import tidal
    trainer = tidal.compile(module, example_inputs, loss="cross-entropy",
                            optimizer=tidal.optim.AdamW(lr=1e-3))
    history = trainer.fit(loader, epochs=3)
    module.load_state_dict(trainer.state_dict())

`tidal.compile` exports the module with PyTorch, runs the compiler
(tools/tidalc) to a shared library with the trainer C ABI, and drives it
through ctypes (`tidal.trainer.Trainer`). `tidal.plan` reads plans,
`tidal.plot` draws them. The rest is the test and benchmark side:
`tidal.zoo` defines the models, `tidal.export` writes them as ONNX in
training mode.
"""

from tidal import optim, plan
from tidal._library import TidalError
from tidal.api import compile, load
from tidal.trainer import Trainer

__all__ = ["compile", "load", "Trainer", "TidalError", "optim", "plan", "zoo", "export"]
