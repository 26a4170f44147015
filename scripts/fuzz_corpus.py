#!/usr/bin/python3
"""Regenerates the fuzz harnesses' seed corpora under test/fuzz/corpus/.

    /usr/bin/python3 scripts/fuzz_corpus.py [BUILD_DIR]

Needs Debian's python3 (onnx, numpy, torch) and a built tree (tidalc and
tidal-calibrate in BUILD_DIR/bin, default build/, and its test/Models).
The seeds are checked in (docs/fuzzing.md); this script records where they
come from. Outputs that depend on the machine (a measured profile) or on
torch's version differ between runs; everything else is reproducible.
"""
import io
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CORPUS = os.path.join(ROOT, "test", "fuzz", "corpus")
NODE_TESTS = "/usr/lib/python3/dist-packages/onnx/backend/test/data/node"
# ONNX node tests: one small model per operator tidal reads, and some that
# it rejects (an unsupported form, a missing input).
NODE_CASES = """basic_conv_with_padding convtranspose_1d gemm_default_no_bias
matmul_2d batchnorm_example lstm_defaults lstm_with_peepholes gru_defaults
einsum_sum einsum_batch_diagonal resize_upsample_sizes_cubic edge_pad
nllloss_NC_expanded slice_default_axes gather_negative_indices
gather_elements_0 gathernd_example_int32 scatternd scatternd_multiply
scatter_elements_without_axis sce_sum_expanded reshape_one_dim
transpose_default concat_1d_axis_0 split_equal_parts_2d
split_variable_parts_default_axis softmax_example logsoftmax_example_1
layer_normalization_2d_axis1 maxpool_1d_default averagepool_1d_default
softmax_axis_0_expanded reduce_mean_default_axes_keepdims_random
reduce_max_default_axes_keepdim_example argmax_default_axis_example
cast_DOUBLE_to_FLOAT cast_FLOAT_to_STRING castlike_DOUBLE_to_FLOAT
where_example clip_default_inbounds dropout_default dropout_default_old
shape top_k sce_sum nllloss_NC adam momentum adagrad depthtospace_example
globalaveragepool flatten_default_axis constant triu onehot_without_axis
pow_example erf instancenorm_example sum_one_input mean_one_input
max_one_input min_one_input simple_rnn_defaults bernoulli gridsample
hardmax_example mvn isnan isinf tan onehot_with_axis size eyelike_with_dtype""".split()
# Models the importer's lit tests write (test/Importer/Inputs): model-local
# functions, random draws, GridSample/AffineGrid, Loop, Scan, sequences,
# window sums, integer TopK/ScatterElements, an If on data, Einsum
# ellipses; {script: [files]}.
LIT_INPUTS = {
    "functions.py": ["calls.onnx", "branch.onnx", "recursive.onnx"],
    "random_nodes.py": ["draws.onnx"],
    "grid_sample.py": ["bilinear.onnx", "linear20.onnx", "affine.onnx"],
    "rnn_nodes.py": ["relu_bidirectional.onnx"],
    "loop_nodes.py": ["loop.onnx", "loop_cond.onnx", "embedding_bag.onnx", "embedding_bag_offsets.onnx",
                      "scan_reverse.onnx"],
    "sequence_nodes.py": ["unbind_loop.onnx", "list_ops.onnx", "sequence_map.onnx"],
    "window_nodes.py": ["lppool3.onnx", "lrn.onnx"],
    "integer_nodes.py": ["topk_int.onnx", "scatter_int.onnx"],
    "if_nodes.py": ["data_condition.onnx"],
    "einsum_nodes.py": ["ellipsis_one.onnx"],
    "spectral_nodes.py": ["dft_axis.onnx", "stft.onnx", "mel.onnx"],
    "col2im_nodes.py": ["fold_dilated.onnx"],
    "deform_conv_nodes.py": ["dcn.onnx"],
    "scatter_reduce_nodes.py": ["elements_max.onnx"],
    "masked_selection.py": ["rows_loss.onnx", "columns_max.onnx", "deberta_loss.onnx"],
    "det_nodes.py": ["det3.onnx"],
}
# tidal's own test models (python/tools/gen_test_models.py): the error
# cases, the training_info cases and the MLP with its loss.
TIDAL_MODELS = r"(bad_attr|cycle|dangling_edge|empty|no_graph_output|" \
    r"opset11_unsqueeze|opset23|symbolic_dim|unresolved_shape|" \
    r"unsupported_op|shape_subgraph|ti_.*|mlp_with_loss)\.onnx"


def target_dir(name):
    path = os.path.join(CORPUS, name)
    shutil.rmtree(path, ignore_errors=True)
    os.makedirs(path)
    return path


def write(directory, name, data):
    mode = "w" if isinstance(data, str) else "wb"
    with open(os.path.join(directory, name), mode) as f:
        f.write(data)


# Small training-mode exports (a few KiB each, unlike the zoo's).
def tiny_models():
    import torch
    import torch.nn as nn

    class CNN(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv2d(1, 2, 3, padding=1)
            self.bn = nn.BatchNorm2d(2)
            self.fc = nn.Linear(8, 3)

        def forward(self, x):
            y = nn.functional.max_pool2d(torch.relu(self.bn(self.conv(x))), 2)
            return self.fc(torch.flatten(y, 1))

    class Attention(nn.Module):
        def __init__(self):
            super().__init__()
            self.norm = nn.LayerNorm(4)
            self.attn = nn.MultiheadAttention(4, 1, batch_first=True)
            self.fc = nn.Linear(4, 3)

        def forward(self, x):
            y = self.norm(x)
            y, _ = self.attn(y, y, y)
            return self.fc(nn.functional.gelu(y + x).mean(1))

    class LSTM(nn.Module):
        def __init__(self):
            super().__init__()
            self.rnn = nn.LSTM(2, 3, batch_first=True)
            self.fc = nn.Linear(3, 3)

        def forward(self, x):
            return self.fc(self.rnn(x)[0][:, -1])

    cases = [("cnn", CNN, (1, 4, 4), 13), ("cnn17", CNN, (1, 4, 4), 17),
             ("attention", Attention, (3, 4), 13), ("lstm", LSTM, (3, 2), 13)]
    models = {}
    for name, cls, shape, opset in cases:
        torch.manual_seed(0)
        buf = io.BytesIO()
        torch.onnx.export(cls().train(), (torch.randn((2,) + shape),), buf,
                          opset_version=opset, do_constant_folding=False,
                          training=torch.onnx.TrainingMode.TRAINING,
                          input_names=["input"], output_names=["output"],
                          dynamic_axes={"input": {0: "N"},
                                        "output": {0: "N"}})
        models[name] = buf.getvalue()
    return models


def importer(build, tiny):
    out = target_dir("importer")
    for case in NODE_CASES:
        shutil.copy(os.path.join(NODE_TESTS, "test_" + case, "model.onnx"),
                    os.path.join(out, "node_" + case + ".onnx"))
    models = os.path.join(build, "test", "Models")
    for name in sorted(os.listdir(models)):
        if re.fullmatch(TIDAL_MODELS, name):
            shutil.copy(os.path.join(models, name),
                        os.path.join(out, "tidal_" + name))
    for name, data in tiny.items():
        write(out, "tiny_" + name + ".onnx", data)
    with tempfile.TemporaryDirectory() as tmp:
        for script, files in LIT_INPUTS.items():
            subprocess.run([sys.executable, os.path.join(ROOT, "test", "Importer", "Inputs", script), tmp],
                           check=True)
            for name in files:
                shutil.copy(os.path.join(tmp, name), os.path.join(out, "lit_" + script[:-3] + "_" + name))


def checkpoint(tiny):
    out = target_dir("checkpoint")
    f32 = np.arange(6, dtype=np.float32).reshape(2, 3)

    def model(inits, steps="42", extra=()):
        graph = helper.make_graph(
            [helper.make_node("Identity", ["w"], ["y"])], "g", [],
            [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])],
            inits)
        m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
        if steps is not None:
            m.metadata_props.add(key="tidal.steps_done", value=steps)
        for key, value in extra:
            m.metadata_props.add(key=key, value=value)
        return m.SerializeToString()

    raw = numpy_helper.from_array(f32, "w")
    typed = helper.make_tensor("w", TensorProto.FLOAT, [2, 3], f32.ravel())
    b = helper.make_tensor("b", TensorProto.INT64, [4], [1, -2, 3, -4])
    h = helper.make_tensor("h", TensorProto.FLOAT16, [], [15360])
    write(out, "raw_data.onnx", model([raw, b]))
    write(out, "typed_data.onnx", model([typed, b, h]))
    write(out, "no_steps.onnx", model([raw], steps=None))
    write(out, "bad_steps.onnx", model([raw], steps="12x"))
    write(out, "huge_steps.onnx", model([raw], steps="99999999999999999999"))
    write(out, "wrong_dtype.onnx", model([numpy_helper.from_array(
        f32.astype(np.float64), "w")]))
    short = numpy_helper.from_array(f32, "w")
    short.raw_data = short.raw_data[:20]
    write(out, "short_raw.onnx", model([short]))
    for dtype in (np.int8, np.uint8, np.int16, np.uint16, np.int32,
                  np.uint32, np.uint64, np.bool_, np.float16):
        t = numpy_helper.from_array(f32.astype(dtype), "w")
        write(out, "dtype_%s.onnx" % np.dtype(dtype).name, model([t]))
    for location, offset, length in (("weights.bin", "16", "24"),
                                     ("tidal:embedded", "64", "24"),
                                     ("weights.bin", "4090", "24"),
                                     ("../weights.bin", "0", "24"),
                                     ("missing.bin", "0", None)):
        t = TensorProto(name="w", data_type=TensorProto.FLOAT, dims=[2, 3])
        t.data_location = TensorProto.EXTERNAL
        entries = [("location", location), ("offset", offset)]
        if length:
            entries.append(("length", length))
        for k, v in entries:
            t.external_data.add(key=k, value=v)
        write(out, "external_%s_%s.onnx" % (location.replace(":", "_")
                                           .replace("/", "_").strip("._"),
                                           offset), model([t]))
    for name, data in tiny.items():
        m = onnx.load_from_string(data)
        m.metadata_props.add(key="tidal.steps_done", value="7")
        write(out, "tiny_" + name + ".onnx", m.SerializeToString())


def npy():
    out = target_dir("npy")
    for dtype in ("f2", "f4", "f8", "i1", "i2", "i4", "i8", "u1", "u2", "u4",
                  "u8", "b1"):
        a = (np.arange(6) % 3).astype("<" + dtype).reshape(2, 3)
        buf = io.BytesIO()
        np.save(buf, a)
        write(out, dtype + "_2x3.npy", buf.getvalue())
    shapes = {"scalar": (), "empty": (0,), "vector": (5,), "rank4": (1, 2, 1, 2),
              "zero_dim": (2, 0, 3)}
    for name, shape in shapes.items():
        buf = io.BytesIO()
        np.save(buf, np.ones(shape, dtype=np.float32))
        write(out, name + ".npy", buf.getvalue())
    variants = {
        "fortran": np.asfortranarray(np.arange(6, dtype="<f4").reshape(2, 3)),
        "big_endian": np.arange(4, dtype=">f4"),
        "complex": np.arange(2, dtype=np.complex64),
        "structured": np.zeros(2, dtype=[("a", "<i4"), ("b", "<f4")]),
        "unicode": np.array(["ab", "c"]),
    }
    for name, a in variants.items():
        buf = io.BytesIO()
        np.save(buf, a)
        write(out, name + ".npy", buf.getvalue())
    for version in ((2, 0), (3, 0)):
        buf = io.BytesIO()
        np.lib.format.write_array(buf, np.arange(3, dtype="<i8"),
                                  version=version)
        write(out, "version_%d.npy" % version[0], buf.getvalue())
    good = io.BytesIO()
    np.save(good, np.arange(6, dtype="<f4").reshape(2, 3))
    good = good.getvalue()
    header = good[10:good.index(b"\n", 10) + 1]
    bad = {
        "truncated_data": good[:-5],
        "extra_data": good + b"\0\0\0\0",
        "bad_magic": b"\x93NUMPZ" + good[6:],
        "version_9": good[:6] + b"\x09\x00" + good[8:],
        "truncated_header": good[:40],
        "negative_dim": good.replace(b"(2, 3)", b"(-2,3)"),
        "huge_dim": good.replace(b"(2, 3), }", b"(9223372036854775807,)}"),
        "overflow_dims": good.replace(b"(2, 3), }",
                                      b"(4294967296, 4294967296)}"),
        "no_comma": good.replace(b"(2, 3), }", b"(6), }    "),
        "python2_long": good.replace(b"(2, 3), }", b"(2L, 3L), }"),
        "header_garbage": good[:10] + b"{'descr': <f4}" + b" " * (
            len(header) - 15) + b"\n" + good[10 + len(header):],
        "empty": b"",
    }
    for name, data in bad.items():
        write(out, name + ".npy", data)


def profile_json(build):
    out = target_dir("profile-json")
    calibrate = os.path.join(build, "bin", "tidal-calibrate")
    subprocess.run([calibrate, "--quick", "--threads", "1", "-o",
                    os.path.join(out, "quick.json")], check=True,
                   stderr=subprocess.DEVNULL)
    with open(os.path.join(out, "quick.json")) as f:
        profile = json.load(f)
    minimal = {"format": "tidal-device-profile", "version": 1,
               "host": {"name": "h", "gflops": 1, "gbytes_per_s": 2,
                        "op_overhead_us": 0},
               "device": {"name": "d", "gflops": 3, "gbytes_per_s": 4,
                          "op_overhead_us": 5},
               "link": {"name": "l", "gbytes_per_s": 6, "latency_us": 7}}
    write(out, "minimal.json", json.dumps(minimal))
    ops = json.loads(json.dumps(minimal))
    ops["host"].update({"threads": 2, "isa": "avx2", "gflops_avx2": 1e300,
                        "gflops_avx512": 0,
                        "op_us": {"gemm f32 [2,3]x[3,4]": 1.25,
                                  "(sequence)": -0.5}})
    ops["device"]["memory_bytes"] = 9007199254740993
    write(out, "op_us.json", json.dumps(ops))
    for name, edit in (("negative", ("host", "gflops", -1)),
                       ("isa", ("host", "isa", "avx9")),
                       ("unknown", ("link", "speed", 1)),
                       ("string", ("device", "gflops", "1"))):
        p = json.loads(json.dumps(profile))
        p[edit[0]][edit[1]] = edit[2]
        write(out, name + ".json", json.dumps(p))
    write(out, "truncated.json", '{"format": "tidal-device-profile", ')
    write(out, "array.json", "[1, 2]")


def plans_and_manifests(build, tiny):
    plans = target_dir("plan-json")
    manifests = target_dir("manifest-json")
    tidalc = os.path.join(build, "bin", "tidalc")
    work = tempfile.mkdtemp()
    try:
        model = os.path.join(work, "cnn.onnx")
        write(work, "cnn.onnx", tiny["cnn"])
        base = [tidalc, model, "--batch-size", "2", "--loss", "cross-entropy"]
        runs = {"cpu": [], "sim": ["--target", "sim"],
                "sim_streamed": ["--target", "sim", "--momentum", "0.9",
                                 "--device-memory", "2000"],
                "sim_host_layers": ["--target", "sim",
                                    "--device-memory", "600"],
                "sim_recompute": ["--target", "sim", "--device-memory", "1500",
                                  "--host-layers", "off"]}
        texts = {}
        for name, args in runs.items():
            path = os.path.join(work, name + ".json")
            r = subprocess.run(base + args + ["--emit", "plan", "-o", path],
                               stderr=subprocess.PIPE, text=True)
            if r.returncode:
                print("plan %s: %s" % (name, r.stderr.strip()))
                continue
            with open(path) as f:
                texts[name] = json.dumps(json.load(f), separators=(",", ":"))
            write(plans, name + ".json", texts[name])
            ll = os.path.join(work, name + ".ll")
            subprocess.run(base + args + ["--emit", "llvm", "-o", ll],
                           check=True)
            with open(ll) as f:
                m = re.search(r'@tidal_program_manifest = .*? c"(.*?)\\00"',
                              f.read())
            text = re.sub(r"\\([0-9A-Fa-f]{2})",
                          lambda h: chr(int(h.group(1), 16)), m.group(1))
            write(manifests, name + ".json", text)
        if "sim" in texts:
            for name in ("sim_streamed", "sim_host_layers"):
                if name in texts:
                    write(plans, name + "_vs_all.json",
                          texts[name] + "\0" + texts["sim"])
        write(plans, "minimal.json", '{"predicted":{},"baseline":{},'
              '"schedule":[{"op":"tidal.wait","position":1}],"tensors":[]}')
        write(plans, "not_json.json", "{")
    finally:
        shutil.rmtree(work)


def main():
    build = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else
                            os.path.join(ROOT, "build"))
    tiny = tiny_models()
    importer(build, tiny)
    checkpoint(tiny)
    npy()
    profile_json(build)
    plans_and_manifests(build, tiny)
    total = 0
    for dirpath, _, names in os.walk(CORPUS):
        total += sum(os.path.getsize(os.path.join(dirpath, n)) for n in names)
    print("corpus: %d bytes under %s" % (total, CORPUS))


if __name__ == "__main__":
    main()
