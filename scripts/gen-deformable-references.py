#!/usr/bin/env python3
"""torchvision references for tensoracle::dcnv2 (plugins/dcnv2) and the deformable example.

Writes, under --out (the repository's tests/fixtures):
  plugins/dcnv2/cases.safetensors
      per case C: C.x, C.offset, C.mask, C.weight, C.bias (the plugin's inputs), C.parameters
      (int32 [8]: stride h, w; padding h, w; dilation h, w; groups; deformable groups) and
      C.y, torchvision.ops.deform_conv2d's output. fp32 cases also hold C.y_fp64 (the same inputs
      in fp64); fp16 cases (names ending in _fp16) hold fp16 inputs, C.y_fp16 (torchvision's fp16
      output) and C.y (its fp32 output of the same fp16 values).
  examples/deformable/weights.safetensors   DeformableNet's state_dict (fp32)
  examples/deformable/io.safetensors        "image", PyTorch's fp32 "out" and fp64 "out_fp64"
The metadata records the command line and the torch and torchvision versions.

Run from the repository root where torch and torchvision are installed:
    python3 scripts/gen-deformable-references.py --out tests/fixtures
"""
import argparse
import os
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F
import torchvision
from safetensors.torch import save_file
from torchvision.ops import DeformConv2d, deform_conv2d


class DeformableNet(nn.Module):
    """examples/deformable/deformable.cpp mirrors this module: a conv stem, one modulated
    deformable convolution whose offsets and mask come from convolutions of the stem's output
    (mask = sigmoid), and a 1x1 convolution head."""

    def __init__(self):
        super().__init__()
        self.stem = nn.Conv2d(8, 16, 3, padding=1)
        self.offset = nn.Conv2d(16, 2 * 3 * 3, 3, padding=1)
        self.mask = nn.Conv2d(16, 3 * 3, 3, padding=1)
        self.dcn = DeformConv2d(16, 16, 3, padding=1)
        self.head = nn.Conv2d(16, 4, 1)

    def forward(self, x):
        x = F.relu(self.stem(x))
        offset = self.offset(x)
        mask = torch.sigmoid(self.mask(x))
        x = F.relu(self.dcn(x, offset, mask))
        return self.head(x)


# name: (N, C, H, W, K, (kh, kw), stride, padding, dilation, groups, deformable groups, offset scale)
CASES = {
    "basic": (2, 4, 7, 7, 6, (3, 3), (1, 1), (1, 1), (1, 1), 1, 1, 1.0),
    "stride2_padding": (1, 4, 9, 8, 4, (3, 3), (2, 2), (1, 1), (1, 1), 1, 1, 1.0),
    "dilation": (1, 3, 10, 10, 5, (3, 3), (1, 1), (2, 2), (2, 2), 1, 1, 1.0),
    "groups2": (1, 4, 6, 6, 6, (3, 3), (1, 1), (1, 1), (1, 1), 2, 1, 1.0),
    "deformable_groups2": (1, 4, 6, 6, 3, (3, 3), (1, 1), (1, 1), (1, 1), 1, 2, 1.0),
    "nonsquare": (1, 3, 8, 9, 4, (2, 3), (1, 2), (0, 1), (2, 1), 1, 1, 1.0),
    # Offsets up to several pixels, on a quarter-pixel grid so that some samples land exactly on
    # the boundaries (h = -1, h = H - 1, h = H) as well as beyond them.
    "outside": (1, 2, 5, 5, 3, (3, 3), (1, 1), (1, 1), (1, 1), 1, 1, 6.0),
    "everything": (2, 4, 9, 10, 6, (3, 2), (2, 1), (1, 0), (1, 2), 2, 2, 3.0),
}
FP16_CASES = ["basic", "outside", "everything"]


def case_inputs(spec, gen):
    n, c, h, w, k, (kh, kw), stride, padding, dilation, groups, dg, scale = spec
    ho = (h + 2 * padding[0] - dilation[0] * (kh - 1) - 1) // stride[0] + 1
    wo = (w + 2 * padding[1] - dilation[1] * (kw - 1) - 1) // stride[1] + 1
    offset = torch.randn(n, 2 * dg * kh * kw, ho, wo, generator=gen) * scale
    if scale > 1:
        offset = torch.round(offset * 4) / 4
    return {
        "x": torch.randn(n, c, h, w, generator=gen),
        "offset": offset,
        "mask": torch.sigmoid(torch.randn(n, dg * kh * kw, ho, wo, generator=gen)),
        "weight": torch.randn(k, c // groups, kh, kw, generator=gen) * 0.5,
        "bias": torch.randn(k, generator=gen),
    }


def run_case(inputs, spec):
    stride, padding, dilation = spec[6], spec[7], spec[8]
    return deform_conv2d(inputs["x"], inputs["offset"], inputs["weight"], inputs["bias"], stride=stride,
                         padding=padding, dilation=dilation, mask=inputs["mask"])


def plugin_cases(out_dir, metadata):
    gen = torch.Generator().manual_seed(15)
    tensors = {}
    for name, spec in CASES.items():
        inputs = case_inputs(spec, gen)
        parameters = torch.tensor([*spec[6], *spec[7], *spec[8], spec[9], spec[10]], dtype=torch.int32)
        for key, value in inputs.items():
            tensors[f"{name}.{key}"] = value.contiguous()
        tensors[f"{name}.parameters"] = parameters
        tensors[f"{name}.y"] = run_case(inputs, spec).contiguous()
        tensors[f"{name}.y_fp64"] = run_case({k: v.double() for k, v in inputs.items()}, spec).contiguous()
        if name in FP16_CASES:
            half = {k: v.half() for k, v in inputs.items()}
            for key, value in half.items():
                tensors[f"{name}_fp16.{key}"] = value.contiguous()
            tensors[f"{name}_fp16.parameters"] = parameters.clone()
            tensors[f"{name}_fp16.y_fp16"] = run_case(half, spec).contiguous()
            tensors[f"{name}_fp16.y"] = run_case({k: v.float() for k, v in half.items()}, spec).contiguous()
    path = os.path.join(out_dir, "plugins", "dcnv2")
    os.makedirs(path, exist_ok=True)
    save_file(tensors, os.path.join(path, "cases.safetensors"), metadata=metadata)
    print(f"{path}: {len(CASES)} fp32 cases, {len(FP16_CASES)} fp16 cases")


def example(out_dir, metadata):
    torch.manual_seed(16)
    gen = torch.Generator().manual_seed(17)
    net = DeformableNet().eval()
    with torch.no_grad():
        # Offsets of a few pixels (a fresh conv gives a fraction of one), so that some samples
        # fall between pixels far from their tap and some outside the image.
        net.offset.weight.mul_(8.0)
        net.dcn.bias.copy_(torch.randn(16, generator=gen) * 0.1)
    image = torch.randn(1, 8, 16, 16, generator=gen)
    path = os.path.join(out_dir, "examples", "deformable")
    os.makedirs(path, exist_ok=True)
    state = {k: v.detach().contiguous().clone() for k, v in net.state_dict().items()}
    save_file(state, os.path.join(path, "weights.safetensors"), metadata=metadata)
    with torch.no_grad():
        out = net(image)
        out_fp64 = net.double()(image.double())
    save_file({"image": image.contiguous(), "out": out.contiguous(), "out_fp64": out_fp64.contiguous()},
              os.path.join(path, "io.safetensors"), metadata=metadata)
    print(f"{path}: {len(state)} weights, output {tuple(out.shape)}")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", default="tests/fixtures")
    args = parser.parse_args()
    torch.use_deterministic_algorithms(True)
    command = "python3 scripts/gen-deformable-references.py " + " ".join(sys.argv[1:])
    metadata = {"command": command.strip(), "torch": torch.__version__, "torchvision": torchvision.__version__}
    plugin_cases(args.out, metadata)
    example(args.out, metadata)


if __name__ == "__main__":
    main()
