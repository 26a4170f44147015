"""The importer's operator-version table (`tidalc --list-ops`,
lib/Importer/OpVersions.cpp) against the code and against ONNX.

- every operator a converter, the shape folder or the training importer
  handles has a row, and every row has one of them;
- tidal.ops (the Python tests' view of the op set) agrees with it;
- the since-versions up to opset 17 equal those of onnx 1.12's schema
  registry (the newer ones come from ONNX's docs/Changelog.md, which this
  machine's onnx predates).
"""

import glob
import os
import re
import unittest

import support

from onnx import defs

from tidal import ops

IMPORTER = os.path.join(support.REPO_ROOT, "lib", "Importer")
TRAINING_DOMAIN = "ai.onnx.preview.training"


def _read(name):
    with open(os.path.join(IMPORTER, name)) as f:
        return f.read()


def converter_ops():
    """Op types with a converter: the map in OpConverters.cpp's convertNode,
    `map["Op"] = ...` in the files that add to it, and NonZero
    (MaskedSelection.cpp, ahead of the map)."""
    found = set(re.findall(r'op_type\(\) == "([A-Z][A-Za-z0-9]*)"', _read("MaskedSelection.cpp")))
    text = _read("OpConverters.cpp")
    found |= set(re.findall(r'\{"([A-Z][A-Za-z0-9]*)",', text[text.index("StringMap<Converter> converters"):]))
    for path in glob.glob(os.path.join(IMPORTER, "*.cpp")):
        with open(path) as f:
            found |= set(re.findall(r'\bmap\["([A-Z][A-Za-z0-9]*)"\]\s*=', f.read()))
    return found


def folded_ops():
    """Op types evaluated at compile time: ShapeFolding.cpp's (the foldable
    set, and the folds it tests for by name: Constant, Shape, Size, EyeLike,
    the window functions and MelWeightMatrix)."""
    text = _read("ShapeFolding.cpp")
    start = text.index("foldable = {")
    found = set(re.findall(r'"([A-Z][A-Za-z]*)"', text[start:text.index("};", start)]))
    found |= set(re.findall(r'op == "([A-Z][A-Za-z]*)"', text))
    return found


def training_ops():
    return set(re.findall(r'op == "([A-Z][A-Za-z]*)"', _read("TrainingOps.cpp")))


INF = 2147483647
# The newest opset tidal reads (kMaxOpset, include/tidal/Importer/OpVersions.h).
MAX_OPSET = 22


def schema_rows():
    """{(domain, op, version): row} from lib/Importer/OnnxSchemas.inc."""
    rows = {}
    for line in _read("OnnxSchemas.inc").splitlines():
        m = re.match(r'\{"([a-z.]*)", "(\w+)", (\d+), (\d+), (\d+), (\d+), (\d+), "[SOV]*", "[SOV]*", \{(.*)\}\},$',
                     line)
        if not m:
            continue
        attrs = {a: (t, r == "true") for a, t, r in
                 re.findall(r'\{"(\w+)", onnx::AttributeProto::(\w+), (true|false)\}', m.group(8))}
        rows[m.group(1), m.group(2), int(m.group(3))] = dict(arity=tuple(int(m.group(i)) for i in range(4, 8)),
                                                            attrs=attrs)
    return rows


def parse_listing(text):
    """{(domain, op): row} from the Markdown tables."""
    rows, domain = {}, None
    for line in text.splitlines():
        if line.startswith("## "):
            domain = line[3:].split()[0]
        elif line.startswith("| ") and domain and not line.startswith("| Operator"):
            cells = [c.strip() for c in line.strip("|").split("|")]
            versions = lambda s: [int(v) for v in s.split(", ")]  # noqa: E731
            rows[domain, cells[0]] = dict(since=versions(cells[1]), reads=versions(cells[2]), opsets=cells[3],
                                          how=cells[4], notes=cells[5])
    return rows


@unittest.skipIf(support.skip_reason("tidalc"), support.skip_reason("tidalc"))
class OpVersionTableTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        proc = support.run_tidalc(["--list-ops"])
        assert proc.returncode == 0, support.describe(proc)
        cls.rows = parse_listing(proc.stdout)
        cls.default = {op: r for (d, op), r in cls.rows.items() if d == "ai.onnx"}
        cls.training = {op: r for (d, op), r in cls.rows.items() if d == TRAINING_DOMAIN}

    def test_every_converter_has_a_row_and_every_row_a_converter(self):
        converted = converter_ops()
        self.assertGreater(len(converted), 50)
        as_ops = {op for op, r in self.default.items() if r["how"] == "tidal ops"}
        self.assertEqual(sorted(converted - set(self.default)), [],
                         "converters without a row in OpVersions.cpp: their models are rejected")
        self.assertEqual(sorted(as_ops - converted), [], "rows marked 'tidal ops' without a converter")

    def test_folded_and_training_ops(self):
        folded = folded_ops()
        self.assertTrue({"Shape", "Constant", "Cast", "ConstantOfShape", "Range"} <= folded, sorted(folded))
        self.assertEqual(sorted(folded - set(self.default)), [])
        compile_time = {op for op, r in self.default.items() if r["how"] == "compile-time constants only"}
        self.assertEqual(sorted(compile_time - folded), [])
        self.assertEqual(sorted(compile_time & converter_ops()), [], "an op both converted and folded-only")
        self.assertEqual(set(self.training), training_ops())

    def test_inlined_subgraph_ops(self):
        """Rows marked 'subgraphs imported inline' are the node types
        OnnxImporter.cpp hands to IfInlining.cpp (If) and LoopUnrolling.cpp
        (Loop, Scan), and tidal.ops lists them."""
        inlined = {op for op, r in self.default.items() if r["how"] == "subgraphs imported inline"}
        dispatched = set(re.findall(r'node\.op_type\(\) == "(\w+)"', _read("OnnxImporter.cpp"))) - {"Gradient"}
        self.assertEqual(inlined, {"If", "Loop", "Scan"})
        self.assertEqual(dispatched, inlined)
        self.assertIn("ModelImporter::inlineIf", _read("IfInlining.cpp"))
        self.assertIn("ModelImporter::selectIf", _read("IfInlining.cpp"))
        for op in ("Loop", "Scan"):
            self.assertIn(f"ModelImporter::unroll{op}", _read("LoopUnrolling.cpp"))
        self.assertEqual(ops.UNROLLED_OPS, inlined)

    def test_sequence_ops(self):
        """Rows marked 'list of tensors at import' are SequenceOps.cpp's set,
        and tidal.ops lists them."""
        rows = {op for op, r in self.default.items() if r["how"] == "list of tensors at import"}
        text = _read("SequenceOps.cpp")
        start = text.index("static const llvm::StringSet<> ops = {")
        handled = set(re.findall(r'"([A-Z][A-Za-z]*)"', text[start:text.index("};", start)]))
        self.assertEqual(rows, handled)
        self.assertEqual(ops.SEQUENCE_OPS, rows)

    def test_python_op_sets_agree(self):
        self.assertEqual(sorted(ops.SUPPORTED_OPS - set(self.default)), [])
        self.assertEqual(sorted(ops.FOLDED_SHAPE_OPS - set(self.default)), [])
        self.assertEqual(sorted(ops.TRAINING_OPTIMIZER_OPS - set(self.training)), [])
        as_ops = {op for op, r in self.default.items() if r["how"] == "tidal ops"}
        self.assertEqual(sorted(as_ops - ops.SUPPORTED_OPS), [], "tidal/ops.py lacks supported ops")

    def test_since_versions_match_onnx_registry_up_to_17(self):
        registry = {}
        for schema in defs.get_all_schemas_with_history():
            registry.setdefault((schema.domain or "ai.onnx", schema.name), set()).add(schema.since_version)
        known = max(defs.onnx_opset_version(), 1)
        for (domain, op), row in self.rows.items():
            with self.subTest(op=op):
                want = sorted(v for v in registry.get((domain, op), ()) if v <= known)
                self.assertEqual([v for v in row["since"] if v <= known], want)

    def test_reads_every_version_from_opset_13_on(self):
        """No version between a row's opset-13 form and MAX_OPSET is left
        unread: what changed in each is handled or rejected by name."""
        for op, row in self.default.items():
            with self.subTest(op=op):
                first = max([v for v in row["since"] if v <= 13] or [min(row["since"])])
                self.assertEqual(row["reads"], [v for v in row["since"] if v >= first])
                self.assertTrue(row["opsets"].endswith(f"-{MAX_OPSET}"), row["opsets"])

    def test_every_version_read_has_a_schema(self):
        """OnnxSchemas.inc (scripts/gen_onnx_schemas.py) has a row for every
        version the importer reads, or its nodes fail to import."""
        schemas = schema_rows()
        for (domain, op), row in self.rows.items():
            for version in row["reads"]:
                key = ("" if domain == "ai.onnx" else domain, op, version)
                with self.subTest(op=op, version=version):
                    self.assertIn(key, schemas)

    def test_schemas_match_onnx_registry_up_to_17(self):
        """The checked-in arity and attributes equal what this machine's onnx
        says for the versions it knows, so the generator read them right."""
        schemas = schema_rows()
        known = defs.onnx_opset_version()
        checked = 0
        for (domain, op, version), row in schemas.items():
            if version > known:
                continue
            s = defs.get_schema(op, version, domain)
            if s.since_version != version:
                continue
            with self.subTest(op=op, version=version):
                self.assertEqual(row["arity"], (s.min_input, min(s.max_input, INF), s.min_output,
                                                min(s.max_output, INF)))
                self.assertEqual(row["attrs"], {a.name: (a.type.name, a.required) for a in s.attributes.values()})
                checked += 1
        self.assertGreater(checked, 250)

    def test_known_rows(self):
        self.assertEqual(self.default["ReduceMean"]["since"], [1, 11, 13, 18])
        self.assertEqual(self.default["ReduceMean"]["reads"], [13, 18])
        self.assertEqual(self.default["Split"]["reads"], [13, 18])
        self.assertEqual(self.default["BatchNormalization"]["reads"], [9, 14, 15])
        self.assertEqual(self.default["BatchNormalization"]["opsets"], f"9-{MAX_OPSET}")
        self.assertEqual(self.default["LayerNormalization"]["opsets"], f"17-{MAX_OPSET}")
        self.assertEqual(self.default["Softmax"]["opsets"], f"13-{MAX_OPSET}")
        self.assertEqual(self.default["Conv"]["opsets"], f"11-{MAX_OPSET}")


if __name__ == "__main__":
    unittest.main()
