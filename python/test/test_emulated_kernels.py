"""The CUDA kernels' arithmetic, end to end, without a GPU (issue 7).

tidal's own CUDA kernels (runtime/src/cuda/elementwise and other: every op
that cuDNN or cuBLAS does not run) are written once over a launcher and
also compiled for the host (tidalrt_emu_k_<op>, runtime/src/cuda/launch.h).
With TIDAL_SIM_KERNELS=emulated the sim device runs those emulations in
place of the CPU kernels, so every training case of tidal.training.CASES
trains through the CUDA kernels' index arithmetic and maths, and is held
to PyTorch exactly as the cpu target is (test_train_e2e.CaseTests; SPEC
section 5). Convolution, pooling, batch norm and matmul stay on oneDNN
here: their CUDA kernels call cuDNN and cuBLAS and need a GPU
(test_cuda_e2e.py).

Also checks that every op of the runtime's kernel list has an emulated
CUDA kernel unless it is one of the library ops.

Needs TIDAL_BUILD_DIR with bin/tidalc; skips otherwise.
"""

import os
import re
import subprocess
import unittest

import support
from test_train_e2e import CaseTests

_SKIP = support.skip_reason("tidalc")
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# The ops whose CUDA kernels call cuDNN or cuBLAS (TIDALRT_DNNL_KERNEL_LIST).
LIBRARY_LIST = "TIDALRT_DNNL_KERNEL_LIST"


def kernel_names(list_macro):
    """The op names of an X-macro list in runtime/include/tidalrt/kernel_list.h."""
    with open(os.path.join(ROOT, "runtime", "include", "tidalrt", "kernel_list.h")) as f:
        text = f.read()
    body = re.search(r"#define " + list_macro + r"\(X\)(.*?)\n\n", text, re.S).group(1)
    return re.findall(r"X\((\w+)\)", body)


@unittest.skipIf(_SKIP, _SKIP)
class EmulatedKernelsE2ETest(CaseTests, unittest.TestCase):
    TIDALC_FLAGS = ["--target", "sim", "--placement", "device"]
    ENV = {"TIDAL_SIM_KERNELS": "emulated"}
    LABEL = "emulated CUDA kernels"

    def test_every_own_op_has_an_emulated_kernel(self):
        library = os.path.join(support.BUILD_DIR, "lib", "libtidalrt.a")
        symbols = subprocess.run(["nm", "--defined-only", library], capture_output=True, text=True).stdout
        emulated = set(re.findall(r" T tidalrt_emu_k_(\w+)$", symbols, re.M))
        own = [n for m in ("TIDALRT_ELEMENTWISE_KERNEL_LIST", "TIDALRT_ACTIVATION_KERNEL_LIST", "TIDALRT_LOGIC_KERNEL_LIST", "TIDALRT_OTHER_KERNEL_LIST") for n in kernel_names(m)]
        self.assertGreater(len(own), 40)
        missing = [n for n in own if n not in emulated]
        self.assertFalse(missing, f"ops without an emulated CUDA kernel: {missing}")
        self.assertFalse(emulated & set(kernel_names(LIBRARY_LIST)), "library ops are not emulated")


if __name__ == "__main__":
    unittest.main()
