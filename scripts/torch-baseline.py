#!/usr/bin/env python3
"""PyTorch fp16 latency baselines for the ResNet-50 and BERT-base engines (docs/models.md).

For ResNet-50 (torchvision, [N, 3, 224, 224]) and the BERT-base encoder (transformers BertModel,
last hidden state, 128 tokens) at batch 1 and 32, in fp16 (model.half()):
  eager            the module as is
  reduce-overhead  torch.compile(mode="reduce-overhead") (CUDA graphs)
  max-autotune     torch.compile(mode="max-autotune"), only with --max-autotune (slow to compile)
Each is timed with CUDA events around every call after warm-up: median and p90 over
--iterations calls, in ms; compile_s is the wall time of the warm-up calls that compile.

The inputs are the ones bench/gpu/model_bench.cpp feeds our engines (the same formula):
  h(i, seed)      = ((i + seed * 1000003) * 2654435761) mod 2^32, i the flat element index
  image           = h(i, 1) / 2^32 * 2 - 1 (fp32, cast to fp16 by the module's first layer)
  input_ids       = h(i, 2) mod 30522
  attention_mask  = 1, except 0 on the last 16 positions of every odd-numbered sequence
Weights are seeded (torch.manual_seed(0) init); their values do not affect the speed.
BERT runs with transformers' default attention ("sdpa", PyTorch's fused kernels), the fastest
it offers; the fp32 references use "eager" only to match the graph's formula exactly.

Run on the GPU machine from the repository root:
    python3 scripts/torch-baseline.py --out torch_baseline.json [--max-autotune]
Without --max-autotune it finishes in under five minutes on an H200.
"""
import argparse
import json
import statistics
import sys
import time

import numpy as np
import torch

SEQ = 128
VOCAB = 30522


def hashed(count, seed):
    i = np.arange(count, dtype=np.uint64)
    return ((i + np.uint64(seed * 1000003)) * np.uint64(2654435761)) & np.uint64(0xFFFFFFFF)


def image_input(batch):
    values = hashed(batch * 3 * 224 * 224, 1).astype(np.float64) / 2.0**32 * 2.0 - 1.0
    return torch.from_numpy(values.astype(np.float32).reshape(batch, 3, 224, 224))


def bert_inputs(batch):
    ids = torch.from_numpy((hashed(batch * SEQ, 2) % np.uint64(VOCAB)).astype(np.int64).reshape(batch, SEQ))
    mask = torch.ones(batch, SEQ, dtype=torch.int64)
    mask[1::2, SEQ - 16:] = 0
    return ids, mask


class ResNet(torch.nn.Module):
    """fp32 image in, fp16 network, as our engine's I/O (the cast is part of the timed work)."""

    def __init__(self):
        super().__init__()
        import torchvision

        torch.manual_seed(0)
        self.net = torchvision.models.resnet50().eval().half()

    def forward(self, image):
        return self.net(image.half())


class Bert(torch.nn.Module):
    def __init__(self):
        super().__init__()
        from transformers import BertConfig, BertModel

        torch.manual_seed(0)
        self.net = BertModel(BertConfig(), add_pooling_layer=False).eval().half()

    def forward(self, input_ids, attention_mask):
        return self.net(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state


def time_calls(fn, args, warmup, iterations):
    """Median and p90 (ms) of `iterations` calls, each between two CUDA events; `warmup` calls first."""
    for _ in range(warmup):
        fn(*args)
    torch.cuda.synchronize()
    events = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for _ in range(iterations)]
    for start, end in events:
        start.record()
        fn(*args)
        end.record()
    torch.cuda.synchronize()
    times = sorted(start.elapsed_time(end) for start, end in events)
    return statistics.median(times), times[min(len(times) - 1, int(0.9 * len(times)))]


def measure(model_name, module, args, batch, mode, warmup, iterations):
    torch._dynamo.reset()
    compile_s = 0.0
    fn = module
    if mode != "eager":
        fn = torch.compile(module, mode=mode, dynamic=False)
        started = time.time()
        for _ in range(3):  # compile, then the CUDA graph recordings of reduce-overhead
            fn(*args)
        torch.cuda.synchronize()
        compile_s = time.time() - started
    median, p90 = time_calls(fn, args, warmup, iterations)
    result = {"model": model_name, "batch": batch, "mode": mode, "precision": "fp16", "median_ms": median,
              "p90_ms": p90, "iterations": iterations, "compile_s": compile_s}
    print(f"  {model_name} b{batch} {mode:16s} median {median:8.3f} ms  p90 {p90:8.3f} ms  compile {compile_s:6.1f} s",
          flush=True)
    return result


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", required=True, help="JSON file to write")
    parser.add_argument("--max-autotune", action="store_true", help="also time torch.compile(mode='max-autotune')")
    parser.add_argument("--models", default="resnet50,bert_encoder")
    parser.add_argument("--batches", default="1,32")
    parser.add_argument("--warmup", type=int, default=20)
    parser.add_argument("--iterations", type=int, default=100)
    args = parser.parse_args()
    if args.iterations < 50:
        sys.exit("--iterations must be at least 50")
    modes = ["eager", "reduce-overhead"] + (["max-autotune"] if args.max_autotune else [])
    batches = [int(b) for b in args.batches.split(",")]
    started = time.time()
    device = torch.device("cuda")
    print(f"torch {torch.__version__} on {torch.cuda.get_device_name(0)}; modes {', '.join(modes)}", flush=True)

    results = []
    attn_implementation = None
    with torch.no_grad():
        for model_name in args.models.split(","):
            if model_name == "resnet50":
                module = ResNet().to(device)
                inputs = {b: (image_input(b).to(device),) for b in batches}
            elif model_name == "bert_encoder":
                module = Bert().to(device)
                attn_implementation = module.net.config._attn_implementation
                inputs = {b: tuple(t.to(device) for t in bert_inputs(b)) for b in batches}
            else:
                sys.exit(f"unknown model '{model_name}' (resnet50, bert_encoder)")
            print(f"{model_name} ({time.time() - started:.0f} s)", flush=True)
            for batch in batches:
                for mode in modes:
                    results.append(measure(model_name, module, inputs[batch], batch, mode, args.warmup, args.iterations))
            del module, inputs
            torch.cuda.empty_cache()

    report = {
        "torch": torch.__version__,
        "device": torch.cuda.get_device_name(0),
        "bert_attn_implementation": attn_implementation,
        "warmup": args.warmup,
        "results": results,
        "seconds": time.time() - started,
    }
    with open(args.out, "w") as f:
        json.dump(report, f, indent=2)
    print(f"wrote {args.out} in {time.time() - started:.0f} s", flush=True)


if __name__ == "__main__":
    main()
