#!/usr/bin/env python3
"""Quality of tensoracle's lower-precision engines on a real trained model: all-MiniLM-L6-v2
(examples/minilm, docs/models.md), on fixed English sentences.

    python3 scripts/minilm-quality.py --cli build/gpu/tools/tensoracle/tensoracle \\
        --package build/gpu/examples/libtensoracle_example_minilm.so --minilm .deps/minilm \\
        --out OUT [--backend cuda] [--optimization-level 0] [--time] [--no-torch]

--minilm is scripts/fetch-minilm's folder (fp16 weights, tokenizer, configs); nothing is fetched.
Rows, each against the fp32 engine on the same tokens: the fp16 and bf16 engines, and the int8
and fp8 engines for every calibration method (scales from `tensoracle calibrate` on calibration
sentences that are not the evaluation sentences); plus the fp32 engine against PyTorch fp32
(transformers' BertModel, eager attention, TF32 off, on CUDA when there is one) unless --no-torch.
Metrics: relative L2, max abs and cosine of the last hidden state over the tokens the mask keeps;
the cosine of each sentence's embedding (mean pooling over the mask, L2-normalized as the model's
modules.json says) to the reference's, worst and mean; how many sentences' nearest other sentence
changed. Writes OUT/minilm-quality.md and .json, and each tensoracle call's log under OUT/logs/.
A row that fails is recorded with its message; the others still run.
"""
import argparse
import json
import pathlib
import shutil
import sys
import tempfile

import numpy as np
from safetensors.numpy import load_file, save_file
from tokenizers import Tokenizer

from precision_rows import METHODS, Cli, Table, plan_rows, latency_line, write_report

LENGTH = 128  # examples/minilm: minilm::kLength
MAX_BATCH = 32  # the package's profile: 1 / 8 / 32

# Evaluated: varied topics, lengths and near-duplicates (so nearest neighbours are meaningful).
SENTENCES = [
    "A man is playing a guitar on the street corner.",
    "Someone plays an acoustic guitar outside for passers-by.",
    "The stock market fell sharply after the interest rate announcement.",
    "Shares dropped when the central bank raised rates.",
    "How do I reset my password if I no longer have access to my email?",
    "I forgot my login details and cannot reach my inbox.",
    "The cat slept on the warm windowsill all afternoon.",
    "A kitten is napping in the sun by the window.",
    "Photosynthesis converts light energy into chemical energy stored in glucose.",
    "Plants use sunlight to make sugar from carbon dioxide and water.",
    "The recipe calls for two cups of flour, one egg and a pinch of salt.",
    "Mix the flour with an egg and some salt to make the dough.",
    "Our flight was delayed by three hours because of a snowstorm.",
    "Bad weather grounded the plane and we waited at the gate until evening.",
    "The new smartphone has a larger battery and a faster processor.",
    "This phone model lasts longer on a charge and runs apps more quickly.",
    "She won the marathon in under two and a half hours.",
    "The runner crossed the finish line first, setting a personal record.",
    "Quantum computers exploit superposition and entanglement to solve certain problems faster.",
    "The museum's new exhibition features paintings from the early Renaissance.",
    "Please submit your expense reports by Friday at noon.",
    "The children built a sandcastle at the beach while their parents read.",
    "Regular exercise and a balanced diet reduce the risk of heart disease.",
    "The committee postponed its decision until more data becomes available.",
    "He fixed the leaking tap with a new washer and a wrench.",
    "Volcanic eruptions can inject ash high into the stratosphere and cool the climate for years.",
    "The library is closed on public holidays.",
    "What time does the last train to the airport leave?",
    "Translation models learn to map sentences between languages from parallel text.",
    "It rained all weekend, so we stayed in and played board games.",
    "The defendant's lawyer argued that the evidence had been obtained unlawfully, and the judge agreed "
    "to review the search warrant before the trial continued next month.",
    "ok",
]

# Only for calibration: none of them is evaluated.
CALIBRATION_SENTENCES = [
    "The orchestra rehearsed the symphony twice before the concert.",
    "Our team deployed the update to production late on Tuesday night.",
    "A heavy fog rolled in from the harbour early in the morning.",
    "Is there a pharmacy open near the station on Sundays?",
    "The novel follows three generations of a family in a small fishing village.",
    "Electric cars are becoming cheaper as battery prices fall.",
    "He apologised for missing the meeting and asked for the minutes.",
    "The bridge was closed for repairs after inspectors found cracks in its supports.",
    "Tomatoes grow best in full sun with regular watering.",
    "The researchers published their findings in a peer-reviewed journal.",
    "Two dogs chased each other around the park.",
    "The hotel offers free breakfast and late checkout for members.",
    "Inflation eased slightly last quarter, according to government figures.",
    "She learned to play the piano by ear as a child.",
    "The software crashes whenever I open a file larger than two gigabytes.",
    "Mountain climbers must acclimatise slowly to avoid altitude sickness.",
    "The city council approved a new bicycle lane along the river.",
    "Can you recommend a good book about the history of mathematics?",
    "The chef seared the fish and served it with lemon butter.",
    "A sudden power cut left the whole neighbourhood in darkness.",
    "Students must register for exams at least two weeks in advance.",
    "The telescope captured images of a galaxy billions of light years away.",
    "Thank you for your help, I really appreciate it.",
    "The factory reduced its emissions by switching to renewable energy.",
    "He scored the winning goal in the final minute of the match.",
    "The garden was full of roses, lavender and buzzing bees.",
    "Customers complained that the app logs them out too often.",
    "Ancient Romans built aqueducts to carry water into their cities.",
    "The meeting has been moved to the larger conference room.",
    "Vaccines train the immune system to recognise a pathogen.",
    "We hiked along the coast and watched the sunset from the cliffs.",
    "The printer on the third floor is out of toner again.",
]


def tokenize(minilm, sentences):
    tok = Tokenizer.from_file(str(minilm / "tokenizer.json"))
    tok.enable_truncation(max_length=LENGTH)
    tok.enable_padding(length=LENGTH, pad_id=tok.token_to_id("[PAD]"), pad_token="[PAD]")
    enc = tok.encode_batch(sentences)
    return {"input_ids": np.array([e.ids for e in enc], dtype=np.int64),
            "attention_mask": np.array([e.attention_mask for e in enc], dtype=np.int64)}


def upcast_weights(minilm, path):
    """The fp16 weights as fp32 under their own names (BertModel's state_dict names, which the graph reads)."""
    tensors = load_file(str(minilm / "model-fp16.safetensors"))
    if "embeddings.word_embeddings.weight" not in tensors:
        sys.exit(f"{minilm}: not BertModel state_dict names (no embeddings.word_embeddings.weight)")
    save_file({k: v.astype(np.float32) if v.dtype == np.float16 else v for k, v in tensors.items()}, str(path))


def normalizes(minilm):
    modules = json.loads((minilm / "modules.json").read_text())
    return any(m["type"].endswith(".Normalize") for m in modules)


def embed(hidden, mask, normalize):
    """sentence-transformers' mean pooling over the mask, then L2 normalization when the model has it."""
    m = mask[..., None].astype(np.float64)
    pooled = (hidden.astype(np.float64) * m).sum(1) / np.maximum(m.sum(1), 1e-9)
    return pooled / np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12) if normalize else pooled


def nearest(embeddings):
    unit = embeddings / np.linalg.norm(embeddings, axis=1, keepdims=True)
    sim = unit @ unit.T
    np.fill_diagonal(sim, -np.inf)
    return sim.argmax(1)


def metrics(candidate, reference, mask, normalize):
    keep = mask.astype(bool)
    c, r = candidate[keep].astype(np.float64), reference[keep].astype(np.float64)
    ec, er = embed(candidate, mask, normalize), embed(reference, mask, normalize)
    cos = (ec * er).sum(1) / (np.linalg.norm(ec, axis=1) * np.linalg.norm(er, axis=1))
    return {"rel_l2": float(np.linalg.norm(c - r) / np.linalg.norm(r)), "max_abs": float(np.abs(c - r).max()),
            "cosine": float((c * r).sum() / (np.linalg.norm(c) * np.linalg.norm(r))),
            "embedding_cosine_worst": float(cos.min()), "embedding_cosine_mean": float(cos.mean()),
            "nearest_changed": int((nearest(ec) != nearest(er)).sum()),
            "non_finite": int((~np.isfinite(candidate[keep])).sum())}


def torch_reference(minilm, weights, inputs):
    import torch
    from safetensors.torch import load_file as load_torch
    from transformers import BertConfig, BertModel
    torch.backends.cuda.matmul.allow_tf32 = torch.backends.cudnn.allow_tf32 = False
    device = "cuda" if torch.cuda.is_available() else "cpu"
    config = BertConfig.from_json_file(str(minilm / "config.json"))
    config._attn_implementation = "eager"  # the mask formula bert_encoder copies (docs/models.md)
    model = BertModel(config)
    if model.config._attn_implementation != "eager":
        model.set_attn_implementation("eager")
    missing, unexpected = model.load_state_dict(load_torch(str(weights)), strict=False)
    # Buffers (position_ids, token_type_ids) may be persistent or not, depending on the version.
    parameters = dict(model.named_parameters())
    missing = [k for k in missing if k in parameters]
    unexpected = [k for k in unexpected if not k.endswith(("position_ids", "token_type_ids"))]
    if missing or unexpected:
        raise RuntimeError(f"state_dict mismatch: missing {missing}, unexpected {unexpected}")
    model = model.to(device).eval()
    with torch.no_grad():
        out = model(input_ids=torch.from_numpy(inputs["input_ids"]).to(device),
                    attention_mask=torch.from_numpy(inputs["attention_mask"]).to(device))
    return out.last_hidden_state.float().cpu().numpy(), f"PyTorch {torch.__version__} fp32 ({device}, eager, TF32 off)"


def markdown(report):
    lines = [f"# all-MiniLM-L6-v2: engines vs the fp32 engine ({report['sentences']} sentences, "
             f"{report['backend']} backend, optimization level {report['optimization_level'] if report['optimization_level'] is not None else 'default'})", "",
             "Hidden-state metrics over the tokens the mask keeps; embeddings mean-pooled"
             + (" and L2-normalized" if report["normalize"] else "") + "; s: the `tensoracle run` call, build included.",
             "",
             "| row | rel L2 | max abs | cosine | emb. cosine worst | emb. cosine mean | nearest changed | s |",
             "|---|---|---|---|---|---|---|---|"]
    for row in report["rows"]:
        if "error" in row:
            lines.append(f"| {row['name']} | FAILED: {row['error'][:200]} |||||||")
            continue
        seconds = f"{row['seconds']:.1f}" if "seconds" in row else ""  # the PyTorch row has none
        lines.append(f"| {row['name']} | {row['rel_l2']:.3e} | {row['max_abs']:.3e} | {row['cosine']:.7f} | "
                     f"{row['embedding_cosine_worst']:.7f} | {row['embedding_cosine_mean']:.7f} | "
                     f"{row['nearest_changed']} / {report['sentences']} | {seconds} |")
    if report.get("torch"):
        lines += ["", f"PyTorch side: {report['torch']}; fp32 engine vs PyTorch rel L2 bar {report['torch_bar']:g}: "
                  + report["torch_verdict"]]
    lines += latency_line(report, MAX_BATCH)
    return "\n".join(lines) + "\n"


def write(out, report):
    return write_report(out, "minilm-quality", report, markdown)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--cli", required=True)
    p.add_argument("--package", required=True)
    p.add_argument("--minilm", required=True, type=pathlib.Path)
    p.add_argument("--out", required=True, type=pathlib.Path)
    p.add_argument("--backend", default="cuda")
    p.add_argument("--optimization-level", type=int, help="for every engine built (default: the builder's)")
    p.add_argument("--sentences", type=int, default=len(SENTENCES), help="evaluate the first N (local checks)")
    p.add_argument("--calibration-batches", type=int, default=4, help="batches of 8 calibration sentences")
    p.add_argument("--precisions", default="fp16,bf16,int8,int8_mixed,fp8",
                   help="the rows beside fp32 (int8_mixed: int8 with the feed-forward layers unquantized)")
    p.add_argument("--methods", default=",".join(METHODS), help="calibration methods for int8 / fp8")
    p.add_argument("--fp16-between", action="store_true", help="also the _int8_fp16 / _fp8_fp16 graphs")
    p.add_argument("--no-torch", action="store_true", help="skip the PyTorch row (where torch is missing)")
    p.add_argument("--time", action="store_true", help=f"time each engine at batch {MAX_BATCH} with tensoracle bench")
    args = p.parse_args()
    if not 1 <= args.sentences <= min(MAX_BATCH, len(SENTENCES)):
        sys.exit(f"--sentences {args.sentences}: 1..{min(MAX_BATCH, len(SENTENCES))}")
    (args.out / "logs").mkdir(parents=True, exist_ok=True)
    work = pathlib.Path(tempfile.mkdtemp(prefix="minilm-quality-"))
    try:
        return measure(args, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def measure(args, work):
    logs = args.out / "logs"

    weights = work / "weights.safetensors"
    upcast_weights(args.minilm, weights)
    inputs = tokenize(args.minilm, SENTENCES[:args.sentences])
    np.savez(work / "eval.npz", **inputs)
    batches = []
    for b in range(args.calibration_batches):
        batches.append(work / f"calib{b}.npz")
        np.savez(batches[-1], **tokenize(args.minilm, CALIBRATION_SENTENCES[8 * b:8 * b + 8]))
    mask, normalize = inputs["attention_mask"], normalizes(args.minilm)
    cli = Cli(args, weights, "last_hidden_state", logs, work / "cache")
    report = {"sentences": args.sentences, "backend": args.backend, "optimization_level": args.optimization_level,
              "kept_tokens": int(mask.sum()), "normalize": normalize, "rows": []}

    try:
        reference, seconds = cli.run("fp32", "minilm", work / "eval.npz", work / "fp32.npz")
    except RuntimeError as e:  # every row compares with it
        report["rows"].append({"name": "fp32", "graph": "minilm", "error": str(e)})
        print(write(args.out, report))
        return 1
    print(f"fp32 engine: {reference.shape} in {seconds:.1f} s", flush=True)
    if not args.no_torch:
        try:
            torch_out, report["torch"] = torch_reference(args.minilm, weights, inputs)
            row = {"name": "fp32 engine vs PyTorch fp32"} | metrics(reference, torch_out, mask, normalize)
            report["torch_bar"] = 1e-5  # the fp32 bar of gpu_models_test (docs/models.md)
            report["torch_verdict"] = "pass" if row["rel_l2"] <= report["torch_bar"] else "FAIL"
        except Exception as e:  # noqa: BLE001 -- recorded, the engine rows still run
            row = {"name": "fp32 engine vs PyTorch fp32", "error": f"{type(e).__name__}: {e}"}
        report["rows"].append(row)

    def compare(out):
        return metrics(out, reference, mask, normalize)

    def on_row(row):
        report["rows"].append(row)
        write(args.out, report)
        print(f"{row['name']}: " + (row.get("error") or f"rel L2 {row['rel_l2']:.3e}, embedding cosine worst "
                                                         f"{row['embedding_cosine_worst']:.7f}"), flush=True)

    rows = plan_rows("minilm", args.precisions, args.methods, args.fp16_between)
    table = Table(cli, work, "minilm", batches)
    table.run_rows(rows, work / "eval.npz", compare, on_row)
    if args.time:
        report["latency_ms"] = table.latencies(rows, work / "eval.npz", MAX_BATCH)

    text = write(args.out, report)
    print(text)
    return 0 if all("error" not in r for r in report["rows"]) else 1


if __name__ == "__main__":
    sys.exit(main())
