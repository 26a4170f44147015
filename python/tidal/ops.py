"""The ONNX op types tidal imports, as the Python tests see them.

Keep in step with the importer (lib/Importer): a test fails when a zoo
export steps outside these sets, and the ONNX node-test sweep uses them to
decide which official test models tidalc must accept.
"""

# Ops with a tidal lowering.
SUPPORTED_OPS = frozenset(
    """
    Conv Gemm MatMul Add Sub Mul Div Relu LeakyRelu Sigmoid Tanh MaxPool
    AveragePool GlobalAveragePool BatchNormalization Flatten Reshape Transpose
    Concat Softmax LogSoftmax SoftmaxCrossEntropyLoss NegativeLogLikelihoodLoss
    ReduceMean ReduceSum Identity Constant Dropout Pow Sqrt Erf Exp Log Neg
    Gather Slice Split Squeeze Unsqueeze LayerNormalization
    Clip HardSigmoid HardSwish Elu Selu Celu Softplus Softsign Mish Abs
    Reciprocal Sin Cos Tan Asin Acos Atan Sinh Cosh Asinh Acosh Atanh
    Sign Floor Ceil Round
    Equal Less LessOrEqual Greater GreaterOrEqual And Or Xor Not Where Expand
    Max Min Sum Mean Pad InstanceNormalization GroupNormalization Gelu PRelu
    Trilu Tile ReduceL1 ReduceL2 ReduceSumSquare LSTM GRU RNN
    RandomNormal RandomNormalLike RandomUniform RandomUniformLike Bernoulli
    Einsum Cast CastLike ConvTranspose Resize
    GatherElements GatherND ScatterElements ScatterND CumSum
    DepthToSpace SpaceToDepth GlobalMaxPool Shrink ThresholdedRelu
    ReduceMax ReduceMin ReduceProd ReduceLogSum ReduceLogSumExp ArgMax ArgMin
    TopK OneHot GridSample AffineGrid LpNormalization MeanVarianceNormalization Hardmax
    IsNaN IsInf LpPool GlobalLpPool LRN Mod DFT STFT Col2Im DeformConv
    NonZero Det
    """.split()
)

# Ops whose result has a data-dependent shape, imported only as boolean-mask
# indexing (x[mask]) that a reduction or loss sums away
# (lib/Importer/MaskedSelection.cpp); a NonZero whose indices are a graph
# output is refused.
MASK_SELECTION_OPS = frozenset({"NonZero"})

# Shape computations that tidal evaluates at compile time once the batch
# size is bound; they never reach the runtime.
FOLDED_SHAPE_OPS = frozenset("Shape Size EyeLike Cast ConstantOfShape Range Expand Equal Where".split())

# Constants of their (compile-time) scalar inputs: window functions and the
# mel filter bank (lib/Importer/FoldSpectral.cpp).
FOLDED_SPECTRAL_OPS = frozenset("HannWindow HammingWindow BlackmanWindow MelWeightMatrix".split())

# Control flow imported inline: Loop and Scan bodies once per iteration
# (lib/Importer/LoopUnrolling.cpp), If's branch taken, or both branches and
# a selection on a data condition (lib/Importer/IfInlining.cpp).
UNROLLED_OPS = frozenset("If Loop Scan".split())

# Sequence operators: a sequence is a list of tensors at import, never IR
# (lib/Importer/SequenceOps.cpp).
SEQUENCE_OPS = frozenset("""SequenceEmpty SequenceConstruct SequenceAt SequenceLength SequenceInsert SequenceErase
    SplitToSequence ConcatFromSequence SequenceMap""".split())

# The ai.onnx.preview.training optimizers, imported one tidal.onnx_* op per
# tensor wherever they appear. Gradient is imported only inside a
# training_info algorithm graph (docs/training-info.md).
TRAINING_OPTIMIZER_OPS = frozenset("Momentum Adagrad Adam".split())

# What the ONNX node-test sweep counts as "in set": the supported ops plus
# Shape, Size, EyeLike and ConstantOfShape (they fold once the shapes are
# static), Loop and Scan (unrolled), the sequence operators, and the
# training optimizers
# (test_adam, test_momentum, ... are plain graphs of one optimizer node).
NODE_TEST_OPS = (SUPPORTED_OPS | {"Shape", "Size", "EyeLike", "ConstantOfShape"} | FOLDED_SPECTRAL_OPS | UNROLLED_OPS | SEQUENCE_OPS
                 | TRAINING_OPTIMIZER_OPS)


def op_types(graph):
    """The op types used by `graph` (an onnx.GraphProto), subgraphs included."""
    found = set()
    for node in graph.node:
        found.add(node.op_type)
        for attr in node.attribute:
            if attr.g is not None and attr.HasField("g"):
                found |= op_types(attr.g)
            for sub in attr.graphs:
                found |= op_types(sub)
    return found
