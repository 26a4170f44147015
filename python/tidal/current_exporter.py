"""Export forms torch 1.13 (Debian's) lacks, written as current PyTorch
writes them, so that models using them can be exported here as a PyTorch
2.x user's would be:

- torch.stft -> ONNX STFT (opset 17), as PyTorch 2.x's TorchScript exporter
  writes it: the [batch, length] signal, the window cast to the signal's
  type, transposed to torch's [batch, frequencies, frames, 2];
- torch.fft.fft2 of a real tensor and .real -> one DFT per transformed axis
  on the signal unsqueezed to [..., 1], the real part gathered from the
  last axis (the dynamo exporter's _fft_r2c and real);
- Tensor.scatter_reduce (amax, amin, sum, prod) -> ONNX ScatterElements
  with that reduction (max and min: opset 18, so written in the pending
  domain below); include_self=False (PyTorch Geometric's max aggregation)
  first scatters the reduction's identity (-inf for amax) to the indexed
  positions, as the dynamo exporter's torchlib does;
- torchvision.ops.deform_conv2d -> ONNX DeformConv (opset 19), as
  torchvision's own symbolic (0.17 on) writes it, in the pending domain
  from opset 13 (finish() rewrites the model to 19);
- F.grid_sample on a volume (5-D; VoxelMorph-style registration) -> ONNX
  GridSample-20 in the pending domain (torch 1.13 refuses 5-D); a 4-D
  one as torch 1.13 writes it;
- torch.atan2 -> Atan of the quotient corrected by pi with Where, as
  PyTorch 2.x's symbolic_opset9 writes it;
- F.fold (aten::col2im) -> ONNX Col2Im, as symbolic_opset18 writes it.
  torch 1.13 exports at most opset 17, where Col2Im is not defined: the
  symbolic writes it in a pending domain, and `finish(model)` moves it
  to ONNX's and rewrites the model to opset 18 (tidal.opset_upgrade; also
  for ScatterElements max and min).

`register()` adds them to torch.onnx's registry (once).
"""
import math

import torch

_REGISTERED = False
# Where ops of a newer opset wait for finish() (the exporter's shape
# inference skips unknown domains).
PENDING = "tidal.pending"
# The opset each pending op needs.
_PENDING_OPSET = {"Col2Im": 18, "ScatterElements": 18, "DeformConv": 19, "GridSample": 20}


def _stft_symbolic(g, signal, n_fft, hop_length, win_length, window, normalized, onesided, return_complex):
    """aten::stft -> ONNX STFT, as PyTorch 2.x's symbolic_opset17 writes it
    for a [batch, length] signal and a window of n_fft samples."""
    from torch.onnx import symbolic_helper as sh

    n_fft = sh._get_const(n_fft, "i", "n_fft")
    hop = sh._maybe_get_const(hop_length, "i")
    hop = hop if isinstance(hop, int) else n_fft // 4
    if sh._maybe_get_const(return_complex, "b") is True:
        raise RuntimeError("STFT export needs return_complex=False")
    if sh._is_none(window):
        window = g.op("Constant", value_t=torch.ones(n_fft))
    from torch.onnx import _type_utils
    to = _type_utils.JitScalarType.from_name(signal.type().scalarType()).onnx_type()
    window = g.op("Cast", window, to_i=to)
    side = sh._maybe_get_const(onesided, "b")
    out = g.op("STFT", signal, g.op("Constant", value_t=torch.tensor(hop, dtype=torch.int64)), window,
               g.op("Constant", value_t=torch.tensor(n_fft, dtype=torch.int64)),
               onesided_i=0 if side is False else 1)
    out = g.op("Transpose", out, perm_i=[0, 2, 1, 3])
    if sh._maybe_get_const(normalized, "b") is True:
        out = g.op("Div", out, g.op("Constant", value_t=torch.tensor(math.sqrt(n_fft))))
    return out


def _fft2_symbolic(g, x, s, dim, norm):
    """aten::fft_fft2 of a real tensor (no s, no norm) -> one DFT per axis."""
    from torch.onnx import symbolic_helper as sh

    if not sh._is_none(s) or not (sh._is_none(norm) or sh._maybe_get_const(norm, "s") == "backward"):
        raise RuntimeError("fft2 export: only the default s and norm")
    dims = sh._get_const(dim, "is", "dim")
    y = g.op("Unsqueeze", x, g.op("Constant", value_t=torch.tensor([-1])))
    for d in dims:  # counted from the back, the parts axis shifts them by one
        y = g.op("DFT", y, axis_i=d - 1 if d < 0 else d, onesided_i=0)
    return y


def _real_symbolic(g, x):
    """aten::real of a [..., 2] (real, imaginary) tensor."""
    return g.op("Gather", x, g.op("Constant", value_t=torch.tensor(0)), axis_i=-1)


def _col2im_symbolic(g, x, output_size, kernel_size, dilation, padding, stride):
    """aten::col2im (F.fold) -> ONNX Col2Im with the image and block shapes
    as int64 constants."""
    from torch.onnx import symbolic_helper as sh

    size = sh._get_const(output_size, "is", "output_size")
    kernel = sh._get_const(kernel_size, "is", "kernel_size")
    dilation = sh._get_const(dilation, "is", "dilation")
    padding = sh._get_const(padding, "is", "padding")
    stride = sh._get_const(stride, "is", "stride")
    return g.op(f"{PENDING}::Col2Im", x, g.op("Constant", value_t=torch.tensor(size, dtype=torch.int64)),
                g.op("Constant", value_t=torch.tensor(kernel, dtype=torch.int64)),
                dilations_i=dilation, pads_i=list(padding) * 2, strides_i=stride)


def _atan2_symbolic(g, y, x):
    """aten::atan2(y, x): atan(y / x), plus or minus pi where x < 0."""
    atan = g.op("Atan", g.op("Div", y, x))
    zero = g.op("Constant", value_t=torch.tensor(0.0))
    pi = g.op("Constant", value_t=torch.tensor(math.pi))
    upper = g.op("Where", g.op("Greater", y, zero), g.op("Add", atan, pi), g.op("Sub", atan, pi))
    return g.op("Where", g.op("Less", x, zero), upper, atan)


def _scatter_reduce_symbolic(g, self, dim, index, src, reduce, include_self):
    """aten::scatter_reduce -> ScatterElements(reduction), include_self=False
    as a scatter of the reduction's identity first."""
    from torch.onnx import symbolic_helper as sh

    dim = sh._get_const(dim, "i", "dim")
    reduce = sh._get_const(reduce, "s", "reduce")
    modes = {"amax": ("max", -math.inf), "amin": ("min", math.inf), "sum": ("add", 0.0), "prod": ("mul", 1.0)}
    if reduce not in modes:
        raise RuntimeError(f"scatter_reduce export: reduce '{reduce}' has no ONNX form")
    mode, identity = modes[reduce]
    if not sh._get_const(include_self, "b", "include_self"):
        fill = g.op("Expand", g.op("Constant", value_t=torch.tensor(identity)), g.op("Shape", index))
        self = g.op(f"{PENDING}::ScatterElements", self, index, fill, axis_i=dim)
    return g.op(f"{PENDING}::ScatterElements", self, index, src, axis_i=dim, reduction_s=mode)


def _deform_conv2d_symbolic(g, x, weight, offset, mask, bias, stride_h, stride_w, pad_h, pad_w, dil_h, dil_w,
                            groups, offset_groups, use_mask):
    """torchvision::deform_conv2d -> DeformConv (bias always given, the
    mask when used)."""
    from torch.onnx import symbolic_helper as sh

    i = lambda v, what: sh._get_const(v, "i", what)  # noqa: E731
    args = [x, weight, offset, bias]
    if sh._get_const(use_mask, "b", "use_mask"):
        args.append(mask)
    return g.op(f"{PENDING}::DeformConv", *args,
                dilations_i=[i(dil_h, "dilation"), i(dil_w, "dilation")], group_i=i(groups, "groups"),
                offset_group_i=i(offset_groups, "offset_groups"),
                pads_i=[i(pad_h, "padding"), i(pad_w, "padding")] * 2,
                strides_i=[i(stride_h, "stride"), i(stride_w, "stride")])


def _grid_sampler_symbolic(g, x, grid, mode, padding, align_corners):
    """aten::grid_sampler: GridSample-16 for an image at opset 16 or later
    (torch's own form), GridSample-20 (pending) otherwise and for volumes."""
    from torch.onnx import symbolic_helper as sh

    mode = sh._get_const(mode, "i", "interpolation_mode")
    padding = sh._get_const(padding, "i", "padding_mode")
    align = int(sh._get_const(align_corners, "b", "align_corners"))
    pad_name = ("zeros", "border", "reflection")[padding]
    if sh._get_tensor_rank(x) == 4 and g.opset >= 16:
        return g.op("GridSample", x, grid, align_corners_i=align,
                    mode_s=("bilinear", "nearest", "bicubic")[mode], padding_mode_s=pad_name)
    return g.op(f"{PENDING}::GridSample", x, grid, align_corners_i=align,
                mode_s=("linear", "nearest", "cubic")[mode], padding_mode_s=pad_name)


def register():
    """Lets torch.onnx.export (torch 1.13) export torch.stft,
    torch.fft.fft2 of a real tensor, .real and torch.atan2 at opset 17, and
    F.fold, scatter_reduce, torchvision's deform_conv2d and a volume's
    grid_sample from opset 13 (a model that finish() rewrites to opset 18,
    19 or 20)."""
    global _REGISTERED
    if not _REGISTERED:
        torch.onnx.register_custom_op_symbolic("aten::stft", _stft_symbolic, 17)
        torch.onnx.register_custom_op_symbolic("aten::fft_fft2", _fft2_symbolic, 17)
        torch.onnx.register_custom_op_symbolic("aten::real", _real_symbolic, 17)
        torch.onnx.register_custom_op_symbolic("aten::col2im", _col2im_symbolic, 13)
        torch.onnx.register_custom_op_symbolic("aten::atan2", _atan2_symbolic, 17)
        # Pending-domain ops need no particular opset: from 13 on.
        torch.onnx.register_custom_op_symbolic("aten::scatter_reduce", _scatter_reduce_symbolic, 13)
        torch.onnx.register_custom_op_symbolic("torchvision::deform_conv2d", _deform_conv2d_symbolic, 13)
        torch.onnx.register_custom_op_symbolic("aten::grid_sampler", _grid_sampler_symbolic, 13)
        _REGISTERED = True




def finish(model):
    """`model` (an onnx.ModelProto exported with these symbolics) with its
    pending ops moved to ONNX's domain, rewritten to the opset they need."""
    from tidal import opset_upgrade

    pending = [n for n in model.graph.node if n.domain == PENDING]
    if not pending:
        return model
    for n in pending:
        n.domain = ""
    kept = [o for o in model.opset_import if o.domain != PENDING]
    del model.opset_import[:]
    model.opset_import.extend(kept)
    need = max(_PENDING_OPSET[n.op_type] for n in pending)
    return opset_upgrade.upgrade(model, need) if opset_upgrade.default_opset(model) < need else model
