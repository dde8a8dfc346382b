#!/usr/bin/env python3
"""A small Hugging Face BERT exported by torch.onnx's TorchScript exporter with batch and sequence
dynamic, and how far onnxruntime's output of that export is from PyTorch's.

The question it answers (docs/onnx.md): is the TorchScript exporter's BERT with dynamic axes a
correct model to import? On the GPU machine (torch 2.11, its transformers) it is not: onnxruntime
computes 0.28-0.33 relative L2 from PyTorch at every shape, unpadded positions included, so the
importer does not aim at it (the dynamo exporter's export is the one with dynamic axes).

Writes, under --out:
  onnx/bert_dynamic/model.onnx        BertModel(BertConfig(hidden 32, 2 layers, 2 heads,
                                      intermediate 64, vocab 100, 64 positions)), seeded init,
                                      exported at 2 x 16, opset 20
  onnx/bert_dynamic/io.safetensors    for each shape S in 2x16, 3x40, 1x7: S.input_ids (int64),
                                      S.attention_mask (int64; the last sequence padded),
                                      S.last_hidden_state (PyTorch fp32, CPU) and
                                      S.last_hidden_state_ort (onnxruntime, CPU)
and prints the relative L2 between the two per shape. The metadata records the command line and
the torch, transformers and onnxruntime versions.

Run where torch, transformers and onnxruntime are installed (the GPU machine):
    python3 scripts/gen-onnx-bert-dynamic.py --out /tmp/bert-dynamic
"""
import argparse
import os
import sys

import numpy as np
import onnxruntime
import torch
import transformers
from safetensors.numpy import save_file

SHAPES = ((2, 16), (3, 40), (1, 7))


class LastHiddenState(torch.nn.Module):
    """BertModel's last_hidden_state from (input_ids, attention_mask), called by keyword (its
    positional arguments are not these two in every transformers version)."""

    def __init__(self, bert):
        super().__init__()
        self.bert = bert

    def forward(self, input_ids, attention_mask):
        return self.bert(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state


def seeded_bert():
    torch.manual_seed(7)
    config = transformers.BertConfig(vocab_size=100, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                                     intermediate_size=64, max_position_embeddings=64)
    model = transformers.BertModel(config, add_pooling_layer=False).eval()
    # Non-trivial norms and biases: a fresh BertModel has LayerNorm weight 1 and every bias 0,
    # which would hide a misplaced bias or norm weight.
    with torch.no_grad():
        for name, p in model.named_parameters():
            if name.endswith("bias") or "LayerNorm" in name:
                p.add_(0.1 * torch.randn_like(p))
    return LastHiddenState(model)


def inputs_of(batch, seq, generator):
    ids = torch.randint(1, 100, (batch, seq), generator=generator, dtype=torch.int64)
    mask = torch.ones(batch, seq, dtype=torch.int64)
    mask[-1, seq - max(1, seq // 4):] = 0
    return ids, mask


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", required=True, help="the output folder")
    args = parser.parse_args()
    out = os.path.join(args.out, "onnx", "bert_dynamic")
    os.makedirs(out, exist_ok=True)
    model = seeded_bert()
    generator = torch.Generator().manual_seed(11)
    ids, mask = inputs_of(*SHAPES[0], generator)
    path = os.path.join(out, "model.onnx")
    axes = {0: "batch", 1: "sequence"}
    torch.onnx.export(model, (ids, mask), path, input_names=["input_ids", "attention_mask"],
                      output_names=["last_hidden_state"], opset_version=20, dynamo=False,
                      dynamic_axes={"input_ids": axes, "attention_mask": axes, "last_hidden_state": axes})
    session = onnxruntime.InferenceSession(path, providers=["CPUExecutionProvider"])
    tensors = {}
    for batch, seq in SHAPES:
        ids, mask = inputs_of(batch, seq, generator)
        with torch.no_grad():
            want = model(ids, mask).numpy()
        ort = session.run(None, {"input_ids": ids.numpy(), "attention_mask": mask.numpy()})[0]
        key = f"{batch}x{seq}"
        tensors[f"{key}.input_ids"] = ids.numpy()
        tensors[f"{key}.attention_mask"] = mask.numpy()
        tensors[f"{key}.last_hidden_state"] = np.ascontiguousarray(want)
        tensors[f"{key}.last_hidden_state_ort"] = np.ascontiguousarray(ort)
        rel = float(np.linalg.norm(ort - want) / np.linalg.norm(want))
        print(f"{key}: onnxruntime vs PyTorch rel L2 {rel:.3g}")
    save_file(tensors, os.path.join(out, "io.safetensors"),
              metadata={"command": " ".join(["scripts/gen-onnx-bert-dynamic.py"] + sys.argv[1:]),
                        "torch": torch.__version__, "transformers": transformers.__version__,
                        "onnxruntime": onnxruntime.__version__})
    print(f"wrote {path} ({os.path.getsize(path)} bytes) and io.safetensors")


if __name__ == "__main__":
    main()
