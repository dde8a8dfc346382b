"""tinynet defined in Python: the graph of examples/tinynet/tinynet.cpp, layer for layer, with the
element type as a parameter (the types placed in the graph decide each layer's precision).

    build = tensoracle.EngineBuild(name="tinynet", graph=tinynet.graph("fp16"), ...)

In fp32 it is the C++ graph exactly (same structural hash, bit-equal outputs on the cpu backend);
in fp16 or bf16 the input and every weight are cast to that type after they enter the graph and
the probabilities are cast back to fp32, so the engine's I/O stays fp32."""

import tensoracle


def graph(dtype: str = "fp32", composed_softmax: bool = False):
    """The graph function (network, weights) -> None of tinynet computing in `dtype`; with
    `composed_softmax`, its softmax written as exp(x - max) / sum(exp(x - max)) (a replacement
    made of standard layers, for stage 3)."""

    def define(net: tensoracle.Network, w: tensoracle.Weights) -> None:
        def typed(t: tensoracle.Tensor) -> tensoracle.Tensor:
            return t if dtype == "fp32" else net.cast(t, output_type=dtype)

        def weight(name: str) -> tensoracle.Tensor:
            return typed(net.weight(w, name))

        def conv_bn(x, conv, bn):  # conv (no bias) -> batch norm, with PyTorch's module names
            y = net.convolution(x, weight(conv + ".weight"), None, pre_padding=[1, 1], post_padding=[1, 1], name=conv)
            return net.batch_norm(y, weight(bn + ".weight"), weight(bn + ".bias"), weight(bn + ".running_mean"),
                                  weight(bn + ".running_var"), epsilon=1e-5, name=bn)

        x = typed(net.add_input("image", "fp32", (-1, 3, -1, -1)))
        x = net.relu(conv_bn(x, "conv1", "bn1"))
        x = net.pooling(x, kind="max", window=[2, 2], name="pool")
        y = net.relu(conv_bn(x, "block.conv1", "block.bn1"))
        y = conv_bn(y, "block.conv2", "block.bn2")
        x = net.relu(net.add(x, y))
        x = net.pooling(x, kind="average", global_=True, name="gap")
        x = net.reshape(x, shape=[0, -1])
        logits = net.add(net.matmul(x, weight("fc.weight"), transpose_b=True, name="fc"), weight("fc.bias"))
        if composed_softmax:
            shifted = net.sub(logits, net.reduce(logits, op="max", axes=[-1], keep_dims=True))
            exp = net.unary(shifted, op="exp")
            probs = net.div(exp, net.reduce(exp, op="sum", axes=[-1], keep_dims=True))
        else:
            probs = net.softmax(logits, axis=-1)
        net.mark_output(probs if dtype == "fp32" else net.cast(probs, output_type="fp32"), "probs")

    define.__name__ = f"tinynet_{dtype}" + ("_composed_softmax" if composed_softmax else "")
    return define
