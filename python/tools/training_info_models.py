"""The training_info test models of gen_test_models.py (its MODELS rows
named ti_*): an MLP whose ONNX training_info algorithm asks for Gradient and
a Momentum, Adam or Adagrad update, and the broken algorithms the importer
must reject with one line each (docs/training-info.md)."""

from gen_test_models import IR_VERSION, SEED, _float, _h

TRAINING_DOMAIN = "ai.onnx.preview.training"
TI_PARAMS = ("W1", "B1", "W2", "B2")


def _ti_tensor(name, array):
    from onnx import numpy_helper

    return numpy_helper.from_array(array, name)


def _ti_params():
    import numpy as np

    rng = np.random.RandomState(SEED)
    return {
        "W1": (rng.standard_normal((4, 8)) * 0.5).astype(np.float32),
        "B1": np.zeros(8, np.float32),
        "W2": (rng.standard_normal((8, 3)) * 0.5).astype(np.float32),
        "B2": np.zeros(3, np.float32),
    }


def _ti_model(optimizer="momentum", loss="sce", per_tensor=False, state_in_graph=False):
    """The MLP with a training_info; see the module docstring."""
    import numpy as np

    helper, TensorProto = _h()
    params = _ti_params()
    nodes = [
        helper.make_node("Gemm", ["x", "W1", "B1"], ["z"], name="fc1"),
        helper.make_node("Relu", ["z"], ["h"], name="relu0"),
        helper.make_node("Gemm", ["h", "W2", "B2"], ["y"], name="fc2"),
    ]
    inputs = [_float("x", ["N", 4])]
    outputs = [_float("y", ["N", 3])]
    alg_nodes, alg_inputs = [], []
    if loss == "sce":
        alg_inputs.append(helper.make_tensor_value_info("label", TensorProto.INT64, ["N"]))
        alg_nodes.append(helper.make_node("SoftmaxCrossEntropyLoss", ["y", "label"], ["loss"], name="loss0"))
    elif loss == "mse":
        alg_inputs.append(_float("target", ["N", 3]))
        alg_nodes += [
            helper.make_node("Sub", ["y", "target"], ["diff"], name="sub0"),
            helper.make_node("Mul", ["diff", "diff"], ["sq"], name="sq0"),
            helper.make_node("ReduceMean", ["sq"], ["loss"], name="mean0", keepdims=0),
        ]
    else:  # the inference graph computes the loss and outputs it first
        inputs.append(helper.make_tensor_value_info("label", TensorProto.INT64, ["N"]))
        nodes.append(helper.make_node("SoftmaxCrossEntropyLoss", ["y", "label"], ["loss"], name="loss0"))
        outputs.insert(0, helper.make_tensor_value_info("loss", TensorProto.FLOAT, []))

    grads = ["G_" + p for p in TI_PARAMS]
    alg_nodes.append(
        helper.make_node("Gradient", list(TI_PARAMS), grads, name="grad0", domain=TRAINING_DOMAIN, xs=list(TI_PARAMS), y="loss")
    )
    states = {"momentum": ("V",), "adagrad": ("H",), "adam": ("V", "H")}[optimizer]
    attrs = {
        "momentum": dict(alpha=0.9, beta=1.0, norm_coefficient=0.0, mode="nesterov" if per_tensor else "standard"),
        "adagrad": dict(decay_factor=0.0, epsilon=1e-6, norm_coefficient=0.0),
        "adam": dict(alpha=0.9, beta=0.999, epsilon=1e-8, norm_coefficient=0.0),
    }[optimizer]
    op_type = optimizer.capitalize()
    groups = [[p] for p in TI_PARAMS] if per_tensor else [list(TI_PARAMS)]
    for k, group in enumerate(groups):
        ins = ["R", "T"] + group + ["G_" + p for p in group] + [s + "_" + p for s in states for p in group]
        outs = [p + "_new" for p in group] + [s + "_" + p + "_new" for s in states for p in group]
        alg_nodes.append(helper.make_node(op_type, ins, outs, name=f"opt{k}", domain=TRAINING_DOMAIN, **attrs))
    alg_nodes.append(helper.make_node("Add", ["T", "one"], ["T_new"], name="step0"))

    state_inits = [_ti_tensor("R", np.array(0.1 if optimizer != "adam" else 0.01, np.float32))]
    state_inits += [_ti_tensor("T", np.array(0, np.int64)), _ti_tensor("one", np.array(1, np.int64))]
    state_inits += [_ti_tensor(s + "_" + p, np.zeros_like(params[p])) for s in states for p in TI_PARAMS]
    bindings = [(p, p + "_new") for p in TI_PARAMS]
    bindings += [(s + "_" + p, s + "_" + p + "_new") for s in states for p in TI_PARAMS]
    bindings.append(("T", "T_new"))
    alg_outputs = [helper.make_tensor_value_info(v, TensorProto.FLOAT, None) for _, v in bindings[:-1]]
    alg_outputs.append(helper.make_tensor_value_info("T_new", TensorProto.INT64, []))

    inits = [_ti_tensor(p, params[p]) for p in TI_PARAMS]
    alg_inits = []
    if state_in_graph:
        inits += state_inits
    else:
        alg_inits = state_inits
    graph = helper.make_graph(nodes, "tidal_ti", inputs, outputs, initializer=inits)
    algorithm = helper.make_graph(alg_nodes, "tidal_ti_step", alg_inputs, alg_outputs, initializer=alg_inits)
    model = helper.make_model(
        graph,
        producer_name="tidal.gen_test_models",
        opset_imports=[helper.make_opsetid("", 13), helper.make_opsetid(TRAINING_DOMAIN, 1)],
    )
    model.ir_version = IR_VERSION
    model.training_info.append(helper.make_training_info(algorithm, bindings, None, None))
    return model


def _ti_node(model, name):
    return next(n for n in model.training_info[0].algorithm.node if n.name == name)


def _ti_set_attr(node, name, value):
    helper, _ = _h()
    for a in list(node.attribute):
        if a.name == name:
            node.attribute.remove(a)
    if value is not None:
        node.attribute.append(helper.make_attribute(name, value))


def build_ti_momentum():
    return _ti_model("momentum", "sce")


def build_ti_nesterov():
    return _ti_model("momentum", "mse", per_tensor=True, state_in_graph=True)


def build_ti_adam():
    return _ti_model("adam", "mse")


def build_ti_adagrad():
    return _ti_model("adagrad", "output")


def build_ti_two_entries():
    model = build_ti_momentum()
    model.training_info.append(model.training_info[0])
    return model


def build_ti_initialization():
    import numpy as np

    helper, _ = _h()
    model = build_ti_momentum()
    init = helper.make_graph(
        [helper.make_node("Constant", [], ["T0"], name="zero", value=_ti_tensor("T0", np.array(0, np.int64)))],
        "tidal_ti_init",
        [],
        [helper.make_tensor_value_info("T0", 7, [])],
    )
    ti = model.training_info[0]
    ti.initialization.CopyFrom(init)
    ti.initialization_binding.add(key="T", value="T0")
    return model


def build_ti_unknown_op():
    helper, _ = _h()
    model = build_ti_momentum()
    alg = model.training_info[0].algorithm
    alg.node.append(helper.make_node("Unique", ["y"], ["y_det"], name="unique_alg"))
    return model


def build_ti_unknown_domain():
    helper, _ = _h()
    model = build_ti_momentum()
    model.opset_import.append(helper.make_opsetid("com.example", 1))
    alg = model.training_info[0].algorithm
    alg.node.append(helper.make_node("Scale", ["y"], ["y_scaled"], name="custom0", domain="com.example"))
    return model


def build_ti_no_gradient():
    """Gradient replaced by Identity copies of the parameters, so that every
    edge still has a producer."""
    helper, _ = _h()
    model = build_ti_momentum()
    alg = model.training_info[0].algorithm
    grad = _ti_node(model, "grad0")
    alg.node.remove(grad)
    for p in TI_PARAMS:
        alg.node.insert(0, helper.make_node("Identity", [p], ["G_" + p], name="copy_" + p))
    return model


def build_ti_y_not_scalar():
    model = build_ti_momentum()
    _ti_set_attr(_ti_node(model, "grad0"), "y", "y")
    return model


def build_ti_y_not_computed():
    model = build_ti_momentum()
    _ti_set_attr(_ti_node(model, "grad0"), "y", "nowhere")
    return model


def build_ti_xs_intermediate():
    model = build_ti_momentum()
    grad = _ti_node(model, "grad0")
    xs = ["h", "B1", "W2", "B2"]
    _ti_set_attr(grad, "xs", xs)
    del grad.input[:]
    grad.input.extend(xs)
    return model


def build_ti_key_not_initializer():
    model = build_ti_momentum()
    model.training_info[0].update_binding.add(key="h", value="W1_new")
    return model


def build_ti_value_not_produced():
    model = build_ti_momentum()
    model.training_info[0].update_binding[0].value = "ghost"
    return model


def build_ti_binding_type():
    model = build_ti_momentum()
    model.training_info[0].update_binding[0].value = "W2_new"
    return model


def build_ti_duplicate_key():
    model = build_ti_momentum()
    model.training_info[0].update_binding.add(key="W1", value="W1_new")
    return model


def build_ti_momentum_no_mode():
    model = build_ti_momentum()
    _ti_set_attr(_ti_node(model, "opt0"), "mode", None)
    return model


def build_ti_momentum_count():
    model = build_ti_momentum()
    opt = _ti_node(model, "opt0")
    del opt.input[-1]
    return model


def build_ti_no_training_opset():
    model = build_ti_momentum()
    del model.opset_import[1]
    return model


def build_ti_gradient_inputs():
    model = build_ti_momentum()
    grad = _ti_node(model, "grad0")
    grad.input[0] = "x"
    return model


def build_ti_gradient_in_graph():
    helper, TensorProto = _h()
    model = build_ti_momentum()
    model.graph.node.append(
        helper.make_node("Gradient", ["W1"], ["G_inf"], name="grad_inf", domain=TRAINING_DOMAIN, xs=["W1"], y="y")
    )
    model.graph.output.append(_float("G_inf", [4, 8]))
    return model


# Builders that return bytes rather than a ModelProto.
