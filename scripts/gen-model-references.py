#!/usr/bin/env python3
"""Weights, seeded inputs and PyTorch outputs for the ResNet-50 and BERT-base model packages.

Too big to commit (about 100 MB and 440 MB of weights), so the GPU script makes them on the spot.
For each model it writes, under --out:
  <model>/weights.safetensors  the state_dict (fp32; torchvision / Hugging Face names)
  <model>/io.safetensors       the seeded inputs at batch 2, the fp32 PyTorch output computed on
                               CUDA with TF32 off under the output's name, and the fp64 output of
                               the same weights and inputs under "<output>_fp64"

  resnet50      torchvision.models.resnet50() (v1.5), torch.manual_seed(0) init, eval mode;
                input "image" fp32 [2, 3, 224, 224], output "logits" [2, 1000].
  bert_encoder  transformers BertModel(BertConfig()) (bert-base), torch.manual_seed(0) init,
                eager attention, eval mode; inputs "input_ids" int64 [2, 128] and
                "attention_mask" int64 [2, 128] (sequence 1 padded after 100 tokens), output
                "last_hidden_state" [2, 128, 768] (the pooler is not compared).

A freshly initialized model has identity batch norms (mean 0, variance 1, scale 1, shift 0), zero
Linear biases and identity layer norms, which would hide a swapped or missing parameter. So after
the seeded init, norm scales and shifts and BERT's Linear biases get seeded random values, and
ResNet's batch-norm running statistics are measured on one seeded calibration batch (what
training leaves behind, keeping activations O(1) so fp16 engines stay in range).

Run from the repository root where torch, torchvision and transformers are installed (CUDA GPU):
    python3 scripts/gen-model-references.py --out /tmp/model-fixtures
then point the GPU tests and benchmark at it:
    TENSORACLE_MODEL_FIXTURES=/tmp/model-fixtures build/gpu/tests/gpu/gpu_models_test
    build/gpu/bench/gpu/model_bench --fixtures /tmp/model-fixtures --json model_bench.json
"""
import argparse
import os
import sys
import time

import torch
import torch.nn as nn
from safetensors.torch import save_file

BATCH = 2
SEQ = 128
PADDED_FROM = 100  # sequence 1 of the BERT input is padding from this position on


def uniform_(t, lo, hi, gen):
    t.copy_(torch.rand(t.shape, generator=gen) * (hi - lo) + lo)


def randomize_norms(model, gen):
    """Non-trivial affine parameters for every batch norm and layer norm."""
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, (nn.BatchNorm2d, nn.LayerNorm)):
                uniform_(m.weight, 0.5, 1.5, gen)
                uniform_(m.bias, -0.5, 0.5, gen)


def resnet50_model(device, gen):
    import torchvision

    torch.manual_seed(0)
    model = torchvision.models.resnet50()
    randomize_norms(model, gen)
    # Running statistics of one calibration batch: train mode with a cumulative average
    # (momentum None) over a single batch stores exactly that batch's mean and unbiased variance.
    for m in model.modules():
        if isinstance(m, nn.BatchNorm2d):
            m.reset_running_stats()
            m.momentum = None
    model.to(device).train()
    with torch.no_grad():
        model(torch.randn(8, 3, 224, 224, generator=gen).to(device))
    return model.eval()


def resnet50_inputs(gen):
    return {"image": torch.randn(BATCH, 3, 224, 224, generator=gen)}


def bert_model(device, gen):
    from transformers import BertConfig, BertModel

    config = BertConfig()
    config._attn_implementation = "eager"
    torch.manual_seed(0)
    model = BertModel(config)
    if model.config._attn_implementation != "eager":
        model.set_attn_implementation("eager")
    assert model.config._attn_implementation == "eager", model.config._attn_implementation
    randomize_norms(model, gen)
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, nn.Linear) and m.bias is not None:
                uniform_(m.bias, -0.1, 0.1, gen)
    return model.to(device).eval()


def bert_inputs(gen):
    ids = torch.randint(1, 30522, (BATCH, SEQ), generator=gen, dtype=torch.int64)
    mask = torch.ones(BATCH, SEQ, dtype=torch.int64)
    mask[1, PADDED_FROM:] = 0
    ids[1, PADDED_FROM:] = 0  # [PAD], as a tokenizer would write
    return {"input_ids": ids, "attention_mask": mask}


class LastHiddenState(nn.Module):
    """BertModel's last_hidden_state as a plain tensor-in, tensor-out module."""

    def __init__(self, bert):
        super().__init__()
        self.bert = bert

    def forward(self, input_ids, attention_mask):
        return self.bert(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state


def export(name, model, state_module, inputs, output_name, out_dir, device, command):
    """Writes state_module's state_dict and model's outputs on `inputs` (model wraps state_module)."""
    start = time.time()
    path = os.path.join(out_dir, name)
    os.makedirs(path, exist_ok=True)
    # Floating-point tensors only: num_batches_tracked and index buffers are bookkeeping.
    state = {k: v.detach().to("cpu").contiguous().clone() for k, v in state_module.state_dict().items()
             if v.is_floating_point()}
    save_file(state, os.path.join(path, "weights.safetensors"), metadata={"command": command})
    with torch.no_grad():
        fp32 = model.to(device).float()(*[t.to(device) for t in inputs.values()]).cpu()
        as_fp64 = [t.to(device).double() if t.is_floating_point() else t.to(device) for t in inputs.values()]
        fp64 = model.double()(*as_fp64).cpu()
    model.float()
    io = {k: v.contiguous() for k, v in inputs.items()}
    io[output_name] = fp32.contiguous()
    io[output_name + "_fp64"] = fp64.contiguous()
    save_file(io, os.path.join(path, "io.safetensors"),
              metadata={"command": command, "torch": torch.__version__})
    rel = ((fp32.double() - fp64).norm() / fp64.norm()).item()
    print(f"{path}: {len(state)} weights, {output_name} {tuple(fp32.shape)}, "
          f"|fp32| {fp32.abs().max().item():.3g}, rel L2 fp32 vs fp64 {rel:.3g} ({time.time() - start:.1f} s)",
          flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", required=True)
    parser.add_argument("--models", default="resnet50,bert_encoder", help="comma-separated subset")
    parser.add_argument("--device", default="cuda")
    args = parser.parse_args()
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    command = "python3 scripts/gen-model-references.py " + " ".join(sys.argv[1:])
    started = time.time()
    models = args.models.split(",")
    for name in models:
        if name not in ("resnet50", "bert_encoder"):
            sys.exit(f"unknown model '{name}' (resnet50, bert_encoder)")
    if "resnet50" in models:
        gen = torch.Generator().manual_seed(1)
        model = resnet50_model(args.device, gen)
        export("resnet50", model, model, resnet50_inputs(gen), "logits", args.out, args.device, command)
    if "bert_encoder" in models:
        gen = torch.Generator().manual_seed(2)
        bert = bert_model(args.device, gen)
        export("bert_encoder", LastHiddenState(bert), bert, bert_inputs(gen), "last_hidden_state", args.out,
               args.device, command)
    print(f"done in {time.time() - started:.1f} s")


if __name__ == "__main__":
    main()
