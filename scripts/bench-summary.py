#!/usr/bin/env python3
"""One-line summaries of `tensoracle bench --json` results for scripts/gpu-check's workflow stage.

    bench-summary.py vs-workflow BENCH.json REPORT.json CANDIDATE   bench's median vs the workflow's stage-4 median
    bench-summary.py vs-model-bench BENCH.json MODEL [OURS.json...] bench's median vs model_bench's at batch 32
    bench-summary.py self-ab BENCH.json                             an engine against itself: does the interval hold 1?
    bench-summary.py load BENCH.json                                the load check's verdict
"""
import json
import sys


def load(path):
    with open(path) as f:
        return json.load(f)


def main():
    kind, args = sys.argv[1], sys.argv[2:]
    if kind == "vs-workflow":
        run = load(args[0])["runs"][0]
        report = load(args[1])
        stage4 = [c for s in report["stages"] if s["stage"] == 4 and s["ran"] for c in s["candidates"] if c["name"] == args[2]]
        theirs = f"{stage4[0]['timing']['runs'][0]['candidate']['stats']['median_ms']:.4f} ms" if stage4 else "not timed"
        print(f"bench median {run['stats']['median_ms']:.4f} ms ({run['execution']}), workflow stage 4 {theirs}")
    elif kind == "vs-model-bench":
        median = load(args[0])["runs"][0]["stats"]["median_ms"]
        ours = [e["median_ms"] for p in args[2:] for e in load(p).get("models", {}).get(args[1], {}).get("latency", [])
                if e.get("batch") == 32]
        print(f"bench {median:.4f} ms, model_bench {ours[0]:.4f} ms" if ours else f"bench {median:.4f} ms, no model_bench JSON")
    elif kind == "self-ab":
        r = load(args[0])["runs"][0]["ratio"]
        verdict = "contains 1.0" if r["low"] <= 1.0 <= r["high"] else "DOES NOT contain 1.0"
        print(f"ratio {r['estimate']:.4f} [{r['low']:.4f}, {r['high']:.4f}] {verdict}")
    elif kind == "load":
        check = load(args[0])["load_check"]
        reasons = "; ".join(check["invalid_reasons"])
        print(f"{check['status']}: " + (f"INVALID: {reasons}" if reasons else f"isolated ({check['reason']})")[:160])
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
