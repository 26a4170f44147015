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
import shutil
import tempfile
import subprocess
import unittest

import support
from tidal import training
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
    # Dense activations, as the cuda target's: the emulations are the CUDA
    # kernels' arithmetic (a channel-blocked program is refused, below).
    TIDALC_FLAGS = ["--target", "sim", "--placement", "device", "--block-channels", "off"]
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

    def test_a_channel_blocked_program_is_refused(self):
        # The sim target blocks ResNet-20's activations by default; the
        # emulations take the cuda target's dense tensors, so the run stops
        # at the first such call, naming the op and the fix.
        tmp = tempfile.mkdtemp(prefix="tidal-emu-blocked-")
        try:
            case = training.CASES_BY_NAME["resnet20_momentum"]
            model = os.path.join(tmp, "m.onnx")
            training.export_case(case, model)
            exe = os.path.join(tmp, "train")
            proc = support.run_tidalc([model, "-o", exe, "--target", "sim", "--placement", "device"] +
                                      training.tidalc_flags(case), timeout=300)
            self.assertEqual(proc.returncode, 0, support.describe(proc))
            inputs = training.write_inputs(case, tmp)
            proc = support.run([exe] + inputs + ["--steps", "1", "--quiet"], timeout=120,
                               env={"TIDAL_SIM_KERNELS": "emulated"})
            self.assertNotEqual(proc.returncode, 0)
            self.assertIn("compile it with --block-channels off", proc.stderr)
            self.assertRegex(proc.stderr, r"op \d+ \('\w+'\)")
        finally:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    unittest.main()
