#!/usr/bin/env python3
"""Weights, seeded inputs and PyTorch outputs for the example model packages.

For each example (examples/tinynet, examples/tiny_transformer) it writes, under --out:
  <example>/weights.safetensors  the module's state_dict (PyTorch names, fp32)
  <example>/io.safetensors       the seeded input, the fp32 PyTorch output (TF32 off) under the
                                 output's name, and the fp64 PyTorch output of the same weights
                                 and input under "<output>_fp64"
The metadata of io.safetensors records the command line and the torch version.

Run from the repository root where torch is installed:
    python3 scripts/gen-example-models.py --out tests/fixtures/examples
(--device cuda computes the fp32 outputs on the GPU instead of the CPU; TF32 stays off.)
"""
import argparse
import os
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F
from safetensors.torch import save_file


class TinyNet(nn.Module):
    """examples/tinynet/tinynet.cpp mirrors this module."""

    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 8, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(8)
        self.pool = nn.MaxPool2d(2)
        self.block = nn.Module()
        self.block.conv1 = nn.Conv2d(8, 8, 3, padding=1, bias=False)
        self.block.bn1 = nn.BatchNorm2d(8)
        self.block.conv2 = nn.Conv2d(8, 8, 3, padding=1, bias=False)
        self.block.bn2 = nn.BatchNorm2d(8)
        self.fc = nn.Linear(8, 10)

    def forward(self, x):
        x = self.pool(F.relu(self.bn1(self.conv1(x))))
        y = F.relu(self.block.bn1(self.block.conv1(x)))
        y = self.block.bn2(self.block.conv2(y))
        x = F.relu(x + y)
        x = F.adaptive_avg_pool2d(x, 1).flatten(1)
        return torch.softmax(self.fc(x), dim=-1)


class Block(nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.heads = heads
        self.ln1 = nn.LayerNorm(d)
        self.attn = nn.Module()
        self.attn.qkv = nn.Linear(d, 3 * d)
        self.attn.proj = nn.Linear(d, d)
        self.ln2 = nn.LayerNorm(d)
        self.fc1 = nn.Linear(d, 4 * d)
        self.fc2 = nn.Linear(4 * d, d)

    def attention(self, x):
        n, length, d = x.shape
        q, k, v = self.attn.qkv(x).split(d, dim=-1)
        split = lambda t: t.reshape(n, length, self.heads, d // self.heads).transpose(1, 2)
        y = F.scaled_dot_product_attention(split(q), split(k), split(v), is_causal=True)
        return self.attn.proj(y.transpose(1, 2).reshape(n, length, d))

    def forward(self, x):
        x = x + self.attention(self.ln1(x))
        return x + self.fc2(F.gelu(self.fc1(self.ln2(x))))


class TinyTransformer(nn.Module):
    """examples/tiny_transformer/tiny_transformer.cpp mirrors this module."""

    def __init__(self, vocab=50, max_len=16, d=32, heads=4, blocks=2):
        super().__init__()
        self.embed = nn.Embedding(vocab, d)
        self.pos = nn.Embedding(max_len, d)
        self.blocks = nn.ModuleList(Block(d, heads) for _ in range(blocks))
        self.ln_f = nn.LayerNorm(d)
        self.head = nn.Linear(d, vocab)

    def forward(self, tokens):
        x = self.embed(tokens) + self.pos.weight[: tokens.shape[1]]
        for block in self.blocks:
            x = block(x)
        return self.head(self.ln_f(x))


def randomize_norms(module, gen):
    """Non-trivial affine parameters and running statistics (fresh ones are identities)."""
    with torch.no_grad():
        for m in module.modules():
            if isinstance(m, (nn.BatchNorm2d, nn.LayerNorm)):
                m.weight.copy_(torch.rand(m.weight.shape, generator=gen) + 0.5)
                m.bias.copy_(torch.rand(m.bias.shape, generator=gen) - 0.5)
            if isinstance(m, nn.BatchNorm2d):
                m.running_mean.copy_(torch.rand(m.running_mean.shape, generator=gen) - 0.5)
                m.running_var.copy_(torch.rand(m.running_var.shape, generator=gen) + 0.5)


def export(name, model, input_name, example_input, output_name, out_dir, device, command):
    model.eval()
    path = os.path.join(out_dir, name)
    os.makedirs(path, exist_ok=True)
    # fp32 parameters only: running statistics and weights; num_batches_tracked is bookkeeping.
    state = {k: v.detach().contiguous().clone() for k, v in model.state_dict().items() if v.is_floating_point()}
    save_file(state, os.path.join(path, "weights.safetensors"), metadata={"command": command})
    with torch.no_grad():
        fp32 = model.to(device)(example_input.to(device)).cpu()
        fp64 = model.to("cpu").double()(example_input if not example_input.is_floating_point()
                                        else example_input.double())
    io = {input_name: example_input.contiguous(), output_name: fp32.contiguous(),
          output_name + "_fp64": fp64.contiguous()}
    save_file(io, os.path.join(path, "io.safetensors"), metadata={"command": command, "torch": torch.__version__})
    print(f"{path}: {len(state)} weights, output {tuple(fp32.shape)}")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", default="tests/fixtures/examples")
    parser.add_argument("--device", default="cpu")
    args = parser.parse_args()
    os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")  # cuBLAS determinism
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    torch.use_deterministic_algorithms(True)
    command = "python3 scripts/gen-example-models.py " + " ".join(sys.argv[1:])

    torch.manual_seed(1)
    gen = torch.Generator().manual_seed(2)
    net = TinyNet()
    randomize_norms(net, gen)
    image = torch.randn(2, 3, 16, 16, generator=gen)
    export("tinynet", net, "image", image, "probs", args.out, args.device, command.strip())

    torch.manual_seed(3)
    gen = torch.Generator().manual_seed(4)
    model = TinyTransformer()
    randomize_norms(model, gen)
    tokens = torch.randint(0, 50, (2, 8), generator=gen, dtype=torch.int64)
    export("tiny_transformer", model, "tokens", tokens, "logits", args.out, args.device, command.strip())


if __name__ == "__main__":
    main()
