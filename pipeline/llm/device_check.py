"""The GPU check (`make gpu-check`): on a bare CUDA machine with torch and transformers, replay the LLM
inputs recorded from a dataset and report, as JSON:

- the same outputs: the batched CUDA-graph decoder against the one-request-at-a-time loop through
  transformers' own cache, against the same decoder without graphs, against itself with 32 requests at once,
  and (with the packaged model) against the outputs the CPU wrote;
- speed: p50/p90 per request of each, and requests/s at 32 concurrent requests.

What it needs beside the checkout (`make gpu-assets` writes it, a few MiB): the recorded inputs, the packaged
model's tokenizer and config, the CPU's outputs, and where the packaged model's GGUF fits in what may be
copied to the machine, the GGUF. Without the GGUF the check builds a model of the same shape there, with
seeded random weights: every comparison is then between the GPU paths (and the machine's own CPU), not with
the CPU outputs of the packaged model.

    python -m pipeline.llm.device_check --assets .gpu --out /tmp/gpu-check.json
"""

from __future__ import annotations

import argparse
import json
import platform
import time
from pathlib import Path

from pipeline.llm.load import differences, load_inputs, replay

SEED = 1234


def _model_source(assets: Path, work: Path) -> tuple[str, str | None, str]:
    """(model folder, GGUF file name or None, what it is)."""
    ggufs = sorted((assets / "gguf").glob("*.gguf")) if (assets / "gguf").is_dir() else []
    if ggufs:
        return str(ggufs[0].parent), ggufs[0].name, f"the packaged model ({ggufs[0].name})"
    import torch
    from transformers import AutoConfig, AutoModelForCausalLM, AutoTokenizer

    target = work / "same-shape"
    if not (target / "config.json").is_file():
        config = AutoConfig.from_pretrained(assets / "model")
        torch.manual_seed(SEED)
        model = AutoModelForCausalLM.from_config(config)
        model.save_pretrained(target)
        AutoTokenizer.from_pretrained(assets / "model").save_pretrained(target)
    return str(target), None, "a model of the packaged model's shape and tokenizer, seeded random weights"


def run_check(assets: Path, work: Path, limit: int | None, concurrency: int, baseline_limit: int) -> dict:
    import torch

    from pipeline.llm.backends import HFBackend

    if not torch.cuda.is_available():
        raise SystemExit("no CUDA device: this check is for a GPU machine (the CPU paths have their own tests)")
    inputs = load_inputs(assets / "inputs.jsonl")[:limit]
    model, gguf_file, what = _model_source(assets, work)
    report: dict = {"device": torch.cuda.get_device_name(0), "torch": torch.__version__, "model": what,
                    "python": platform.python_version(), "inputs": len(inputs)}
    started = time.perf_counter()
    backend = HFBackend(model=model, gguf_file=gguf_file, device="cuda")
    report["load_s"] = round(time.perf_counter() - started, 1)
    report["dtype"] = str(backend.model.dtype)
    backend.warm_up(inputs[0].system)
    backend.complete(inputs[0].system, inputs[0].user, inputs[0].grammar, 8)  # the first graphs

    # Before: one request at a time through transformers' own cache (the loop this decoder replaced).
    some = inputs[:baseline_limit]
    loop = replay(backend, some, 1, complete=backend._complete_alone)
    report["one_at_a_time_loop"] = loop.summary()

    # The batch decoder, one request at a time: CUDA graphs, then eager.
    graphed = replay(backend, inputs, 1)
    report["graphed_alone"] = {**graphed.summary(), "graph_error": backend.decoder.runner.graph_error}
    backend.decoder.runner.graphs = False
    eager = replay(backend, some, 1)
    backend.decoder.runner.graphs = True
    report["eager_alone"] = eager.summary()

    # Many at once: this thread runs the forward passes, `concurrency` clients wait for their answers.
    # The first pass captures the graphs of the batch shapes it meets; the second is measured.
    first = replay(backend, inputs, concurrency)
    together = replay(backend, inputs, concurrency)
    report["concurrent_first_pass"] = first.summary()
    report["concurrent"] = together.summary()
    report["graphs_captured"] = len(backend.decoder.runner._captured)

    report["same_outputs"] = {
        "graphed_vs_loop": _same(loop.outputs, graphed.outputs),
        "graphed_vs_eager": _same(eager.outputs, graphed.outputs),
        "concurrent_vs_alone": _same(graphed.outputs, together.outputs),
    }
    reference = assets / "cpu_outputs.json"
    if gguf_file and reference.is_file():
        cpu = {key: value for key, value in json.loads(reference.read_text()).items() if key in graphed.outputs}
        report["same_outputs"]["gpu_vs_cpu"] = _same(cpu, graphed.outputs)
        report["gpu_vs_cpu_differences"] = [{"id": key, "cpu": cpu.get(key), "gpu": graphed.outputs.get(key)}
                                            for key in differences(cpu, graphed.outputs)][:20]
    return report


def _same(reference: dict[str, str], other: dict[str, str]) -> dict:
    shared = {key: reference[key] for key in reference if key in other}
    differ = differences(shared, {key: other[key] for key in shared})
    return {"compared": len(shared), "same": len(shared) - len(differ), "different": differ[:20]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--assets", type=Path, default=Path(".gpu"))
    parser.add_argument("--work", type=Path, default=Path("/tmp/nesyplan-gpu-check"))
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--limit", type=int, default=None, help="only the first N inputs")
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--baseline-limit", type=int, default=40, help="inputs through the slower paths")
    args = parser.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    report = run_check(args.assets, args.work, args.limit, args.concurrency, args.baseline_limit)
    text = json.dumps(report, indent=2)
    print(text)
    if args.out:
        args.out.write_text(text)


if __name__ == "__main__":
    main()
