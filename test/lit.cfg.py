# lit configuration for tidal's FileCheck tests.
import os

import lit.formats
from lit.llvm import llvm_config
from lit.llvm.subst import ToolSubst

config.name = "TIDAL"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".test"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.tidal_obj_root, "test")
config.excludes = ["CMakeLists.txt", "lit.cfg.py", "lit.site.cfg.py", "Inputs"]

config.substitutions.append(("%models", config.tidal_models_dir))
# tidal-cuda: the runtime was built with nvcc, so tidalc links --target cuda
# executables.
if getattr(config, "tidal_have_cuda", "OFF").upper() in ("ON", "TRUE", "1"):
    config.available_features.add("tidal-cuda")
config.substitutions.append(("%python", config.python_executable))
config.substitutions.append(("%src", config.tidal_src_root))

# TIDAL_CXX: tidalc's C++ driver for linking executables (scripts/sanitize.sh
# points it at one that adds the sanitizer runtimes).
llvm_config.with_system_environment(["HOME", "TMPDIR", "TIDAL_CXX"])
llvm_config.use_default_substitutions()
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)

tools = [
    ToolSubst("tidal-opt", unresolved="fatal"),
    ToolSubst("tidalc", unresolved="fatal"),
    ToolSubst("tidal-eval", unresolved="fatal"),
    # Not in `ninja check`'s dependencies (test/CMakeLists.txt): a build
    # without it fails only test/tools/tidal-calibrate.test.
    ToolSubst("tidal-calibrate", unresolved="ignore"),
]
# The fuzz harnesses' replay binaries (test/fuzz/CMakeLists.txt).
tools += [
    ToolSubst("tidal-fuzz-" + name, unresolved="fatal")
    for name in ("importer", "npy", "checkpoint", "manifest-json",
                 "profile-json", "plan-json")
]
llvm_config.add_tool_substitutions(tools, [config.tidal_tools_dir])
