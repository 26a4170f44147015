"""ctypes binding of a `tidalc --emit lib` shared library: the trainer C
ABI (runtime/include/tidalrt/trainer.h, docs/library-abi.md).

`Library(path)` loads one compiled model; `Library.create()` returns a
`Handle` whose methods wrap the C calls one to one, taking and returning
NumPy arrays. Every failing call raises `TidalError` with the library's
message. Nothing here needs PyTorch.
"""

import ctypes
import json
from typing import Dict, List, Optional, Sequence, Tuple

import numpy as np

ABI_VERSION = 1

# tidalrt_element_type_t values (runtime/include/tidalrt/tidalrt.h).
DTYPES = {
    "float32": (1, np.float32),
    "uint8": (2, np.uint8),
    "int8": (3, np.int8),
    "uint16": (4, np.uint16),
    "int16": (5, np.int16),
    "int32": (6, np.int32),
    "int64": (7, np.int64),
    "bool": (9, np.bool_),
    "float16": (10, np.float16),
    "float64": (11, np.float64),
    "uint32": (12, np.uint32),
    "uint64": (13, np.uint64),
}
_CODE_OF = {np.dtype(t): code for code, t in DTYPES.values()}


# tidalrt/trainer.h TIDALRT_TRAINER_THREADS_AUTO.
THREADS_AUTO = -1

class TidalError(RuntimeError):
    """A status returned by the library: its message names the call and
    what was wrong."""


class _Options(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_size_t), ("threads", ctypes.c_int), ("seed", ctypes.c_uint64),
                ("init_path", ctypes.c_char_p)]


class _View(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p), ("type", ctypes.c_int), ("rank", ctypes.c_size_t),
                ("dims", ctypes.POINTER(ctypes.c_int64)), ("data", ctypes.c_void_p), ("bytes", ctypes.c_size_t)]


class _Buffer(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p), ("data", ctypes.c_void_p), ("bytes", ctypes.c_size_t)]


class _Counters(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_size_t), ("steps", ctypes.c_uint64), ("host_bytes", ctypes.c_uint64),
                ("device_peak_bytes", ctypes.c_uint64), ("bytes_to_host", ctypes.c_uint64),
                ("bytes_to_device", ctypes.c_uint64), ("last_step_seconds", ctypes.c_double),
                ("threads", ctypes.c_int)]


class Slot:
    """One argument or result of a compiled function (from the manifest)."""

    def __init__(self, desc: dict):
        self.name: str = desc["name"]
        self.role: str = desc["role"]
        self.dtype = np.dtype(DTYPES[desc["dtype"]][1])
        self.shape: Tuple[int, ...] = tuple(desc["shape"])

    @property
    def nbytes(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64)) * self.dtype.itemsize

    def __repr__(self):
        return f"Slot({self.name!r}, {self.role}, {self.dtype}, {list(self.shape)})"


class Library:
    """A loaded `tidalc --emit lib` library."""

    def __init__(self, path: str):
        self.path = path
        lib = ctypes.CDLL(path)
        status = ctypes.c_void_p
        handle = ctypes.c_uint64
        self._sig(lib.tidalrt_trainer_abi_version, ctypes.c_uint32, [])
        self._sig(lib.tidalrt_trainer_manifest, ctypes.c_char_p, [])
        self._sig(lib.tidalrt_trainer_create, status, [ctypes.POINTER(_Options), ctypes.POINTER(handle)])
        self._sig(lib.tidalrt_trainer_destroy, status, [handle])
        self._sig(lib.tidalrt_trainer_step, status,
                  [handle, ctypes.POINTER(_View), ctypes.c_size_t, ctypes.POINTER(ctypes.c_float)])
        self._sig(lib.tidalrt_trainer_predict, status,
                  [handle, ctypes.POINTER(_View), ctypes.c_size_t, ctypes.POINTER(_Buffer), ctypes.c_size_t])
        for name in ("tidalrt_trainer_read", "tidalrt_trainer_write"):
            self._sig(getattr(lib, name), status, [handle, ctypes.c_char_p, ctypes.c_void_p, ctypes.c_size_t])
        for name in ("tidalrt_trainer_save", "tidalrt_trainer_load"):
            self._sig(getattr(lib, name), status, [handle, ctypes.c_char_p])
        self._sig(lib.tidalrt_trainer_counters, status, [handle, ctypes.POINTER(_Counters)])
        self._sig(lib.tidalrt_status_message, ctypes.c_char_p, [status])
        self._sig(lib.tidalrt_status_free, None, [status])
        self._lib = lib
        version = lib.tidalrt_trainer_abi_version()
        if version != ABI_VERSION:
            raise TidalError(f"{path}: trainer ABI version {version}, this tidal package reads {ABI_VERSION}")
        self.manifest: dict = json.loads(lib.tidalrt_trainer_manifest().decode())
        functions = self.manifest["functions"]
        self.step_args = [Slot(a) for a in functions["step"]["args"]]
        self.step_results = [Slot(a) for a in functions["step"]["results"]]
        predict = functions.get("predict")
        self.predict_args = [Slot(a) for a in predict["args"]] if predict else []
        self.predict_results = [Slot(a) for a in predict["results"]] if predict else []
        self.batch_size: int = self.manifest["batch_size"]

    @staticmethod
    def _sig(fn, restype, argtypes):
        fn.restype = restype
        fn.argtypes = argtypes

    def check(self, status) -> None:
        if status:
            message = self._lib.tidalrt_status_message(status).decode(errors="replace")
            self._lib.tidalrt_status_free(status)
            raise TidalError(message)

    def data_inputs(self, predict: bool = False) -> List[Slot]:
        return [s for s in (self.predict_args if predict else self.step_args) if s.role == "input"]

    def persistent(self) -> List[Slot]:
        return [s for s in self.step_args if s.role in ("param", "state", "optimizer_state", "constant")]

    def create(self, threads=0, seed: int = 0, init_path: Optional[str] = None) -> "Handle":
        """`threads`: a count, 0 for OpenMP's default, or "auto" (adapt the
        count to the load after each step, as the executable's --threads
        auto)."""
        if threads == "auto":
            threads = THREADS_AUTO
        elif not isinstance(threads, int) or isinstance(threads, bool) or threads < 0:
            raise ValueError(f"threads must be a count >= 0 or 'auto', got {threads!r}")
        options = _Options(ctypes.sizeof(_Options), threads, seed, init_path.encode() if init_path else None)
        handle = ctypes.c_uint64(0)
        self.check(self._lib.tidalrt_trainer_create(ctypes.byref(options), ctypes.byref(handle)))
        return Handle(self, handle.value)


def _as_array(value, slot: Slot) -> np.ndarray:
    """`value` (a NumPy array, a CPU torch tensor, or anything np.asarray
    takes) as a C-contiguous array of the slot's dtype: no copy when it
    already is one."""
    if hasattr(value, "detach") and hasattr(value, "numpy"):  # a torch tensor
        value = value.detach()
        if getattr(value, "device", None) is not None and value.device.type != "cpu":
            value = value.cpu()
        value = value.numpy()
    array = np.asarray(value)
    if array.dtype != slot.dtype:
        if array.dtype.kind != slot.dtype.kind and not (array.dtype.kind in "iu" and slot.dtype.kind in "iu"):
            raise TypeError(f"input '{slot.name}' expects {slot.dtype}, got {array.dtype}")
        array = array.astype(slot.dtype)
    return np.ascontiguousarray(array)


class Handle:
    """One trainer of a Library (tidalrt_trainer_t)."""

    def __init__(self, library: Library, handle: int):
        self.library = library
        self.handle = handle

    def _views(self, inputs: Dict[str, object], slots: Sequence[Slot]):
        arrays, views = [], []
        missing = [s.name for s in slots if s.name not in inputs]
        unknown = [n for n in inputs if n not in {s.name for s in slots}]
        if missing or unknown:
            raise TidalError(f"inputs {sorted(inputs)} do not match the model's data inputs "
                             f"{[s.name for s in slots]}")
        for slot in slots:
            array = _as_array(inputs[slot.name], slot)
            arrays.append(array)
            dims = (ctypes.c_int64 * max(array.ndim, 1))(*array.shape)
            views.append(_View(slot.name.encode(), _CODE_OF[array.dtype], array.ndim, dims,
                               array.ctypes.data, array.nbytes))
            arrays.append(dims)
        return arrays, (_View * len(views))(*views)

    def step(self, inputs: Dict[str, object]) -> float:
        keep, views = self._views(inputs, self.library.data_inputs())
        loss = ctypes.c_float(0)
        self.library.check(self.library._lib.tidalrt_trainer_step(self.handle, views, len(views),
                                                                  ctypes.byref(loss)))
        return float(loss.value)

    def predict(self, inputs: Dict[str, object], outputs: Sequence[str]) -> Dict[str, np.ndarray]:
        keep, views = self._views(inputs, self.library.data_inputs(predict=True))
        by_name = {s.name: s for s in self.library.predict_results}
        arrays = {name: np.empty(by_name[name].shape, by_name[name].dtype) if name in by_name else None
                  for name in outputs}
        buffers = (_Buffer * len(outputs))(*[
            _Buffer(name.encode(), a.ctypes.data if a is not None else None, a.nbytes if a is not None else 0)
            for name, a in arrays.items()])
        self.library.check(self.library._lib.tidalrt_trainer_predict(self.handle, views, len(views), buffers,
                                                                     len(outputs)))
        return arrays

    def read(self, slot: Slot) -> np.ndarray:
        array = np.empty(slot.shape, slot.dtype)
        self.library.check(self.library._lib.tidalrt_trainer_read(self.handle, slot.name.encode(),
                                                                  array.ctypes.data, array.nbytes))
        return array

    def write(self, slot: Slot, value) -> None:
        array = _as_array(value, slot)
        if array.shape != slot.shape:
            raise TidalError(f"'{slot.name}' has shape {list(slot.shape)}, the value {list(array.shape)}")
        self.library.check(self.library._lib.tidalrt_trainer_write(self.handle, slot.name.encode(),
                                                                   array.ctypes.data, array.nbytes))

    def save(self, path: str) -> None:
        self.library.check(self.library._lib.tidalrt_trainer_save(self.handle, path.encode()))

    def load(self, path: str) -> None:
        self.library.check(self.library._lib.tidalrt_trainer_load(self.handle, path.encode()))

    def counters(self) -> dict:
        c = _Counters()
        c.struct_size = ctypes.sizeof(_Counters)
        self.library.check(self.library._lib.tidalrt_trainer_counters(self.handle, ctypes.byref(c)))
        return {name: getattr(c, name) for name, _ in _Counters._fields_ if name != "struct_size"}

    def close(self) -> None:
        if self.handle:
            self.library.check(self.library._lib.tidalrt_trainer_destroy(self.handle))
            self.handle = 0

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass
