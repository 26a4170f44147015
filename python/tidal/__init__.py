"""tidal's Python side: the model zoo and its ONNX export.

The compiler itself is C++ (tools/tidalc); this package only produces the
ONNX training graphs it consumes: `tidal.zoo` defines the models,
`tidal.export` writes them as ONNX in training mode.
"""

__all__ = ["zoo", "export"]
