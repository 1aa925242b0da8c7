"""Speed: requests/s through the queue, and per-stage latency of streams in process."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Optional

import typer
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn
from rich.table import Table

from nesyplan.cli.common import app, err_console, wait_for
from nesyplan.show import console
from pipeline.packs.pack import PackError, load_pack

BENCH_PATHS = ("queue", "symbolic", "end-to-end", "llm")


@app.command()
def bench(path: str = typer.Option("queue", help="queue: requests/s through Redis with N workers; symbolic: the "
                                                 "symbolic stages in process over --dataset from gold IR, with the "
                                                 "naive planner path for the ratio; end-to-end: every stage from "
                                                 "the request's words; llm: the LLM stage alone, one request at a "
                                                 "time and --concurrency at once"),
          dataset: Optional[Path] = typer.Option(None, exists=True, dir_okay=False,
                                                 help="symbolic / end-to-end: the requests (.jsonl), in order"),
          requests: int = typer.Option(60, min=1, help="queue: IR requests per measurement"),
          workers: list[int] = typer.Option([1, 2], help="queue: worker process counts to compare"),
          domain: str = typer.Option("quickbooks", help="domain pack (records with `domain` choose their own)"),
          translator: str = typer.Option("hf", help="end-to-end: hf or openai"),
          naive: bool = typer.Option(True, "--naive/--no-naive", help="also run the naive path for the ratio "
                                     "(symbolic: no planner cache, FD per request; end-to-end: token-by-token "
                                     "decoding, no jump-forward)"),
          limit: Optional[int] = typer.Option(None, help="only the first N records"),
          concurrency: int = typer.Option(8, min=2, help="llm: requests sent at once in the second pass"),
          inputs: Optional[Path] = typer.Option(None, exists=True, dir_okay=False,
                                                help="llm: replay these recorded LLM inputs instead of --dataset"),
          save_inputs: Optional[Path] = typer.Option(None, dir_okay=False,
                                                     help="llm: write the LLM inputs recorded from --dataset here"),
          save_outputs: Optional[Path] = typer.Option(None, dir_okay=False,
                                                      help="llm: write the one-at-a-time outputs here (JSON, by id)"),
          json_out: bool = typer.Option(False, "--json", help="print one JSON object")) -> None:
    """Speed: p50/p90 per stage and requests/s over a stream of requests (symbolic, end-to-end), or the
    queue's throughput with N worker processes (queue)."""
    if path not in BENCH_PATHS:
        raise typer.BadParameter(f"unknown path {path!r} (available: {', '.join(BENCH_PATHS)})", param_hint="--path")
    if path == "llm":
        return _bench_llm(dataset, inputs, save_inputs, save_outputs, domain, translator, concurrency, limit,
                          json_out)
    if path != "queue":
        return _bench_stream(path, dataset, domain, translator, naive, limit, json_out)
    _bench_queue(requests, workers, domain)


def _bench_llm(dataset: Optional[Path], inputs_file: Optional[Path], save_inputs: Optional[Path],
               save_outputs: Optional[Path], domain: str, translator: str, concurrency: int, limit: Optional[int],
               json_out: bool) -> None:
    from pipeline.llm.load import differences, load_inputs, replay, save_inputs as save
    from pipeline.run import backend_for

    if (dataset is None) == (inputs_file is None):
        raise typer.BadParameter("give --dataset (requests to record the LLM inputs of) or --inputs (recorded)",
                                 param_hint="--dataset")
    try:
        if inputs_file is not None:
            llm_inputs = load_inputs(inputs_file)[:limit]
        else:
            from pipeline.evaluation.datasets import load_dataset
            from pipeline.evaluation.llm_inputs import record_llm_inputs

            records = load_dataset(dataset)[:limit]
            with err_console.status("recording the LLM inputs of the requests...", spinner="dots"):
                llm_inputs = record_llm_inputs(records, domain)
    except (PackError, ValueError) as exc:
        err_console.print(f"[red]{escape(str(exc))}[/]")
        raise typer.Exit(2)
    if save_inputs is not None:
        save(llm_inputs, save_inputs)
    with err_console.status(f"loading the {translator} backend...", spinner="dots"):
        backend = backend_for(translator)
        if llm_inputs:
            backend.warm_up(llm_inputs[0].system)
    with err_console.status(f"{len(llm_inputs)} requests one at a time...", spinner="dots"):
        alone = replay(backend, llm_inputs, 1)
    if save_outputs is not None:
        save_outputs.write_text(json.dumps(alone.outputs, indent=1))
    with err_console.status(f"{len(llm_inputs)} requests, {concurrency} at once...", spinner="dots"):
        together = replay(backend, llm_inputs, concurrency)
    differ = differences(alone.outputs, together.outputs)
    caps = backend.capabilities
    first, second = alone.summary(), together.summary()
    report = {"path": "llm", "device": caps.device, "batching": caps.batching, "one_at_a_time": first,
              "concurrent": second, "same_outputs": len(alone.outputs) - len(differ),
              "different_outputs": differ,
              "throughput_ratio": round(second["requests_per_s"] / first["requests_per_s"], 2)
              if first["requests_per_s"] and second["requests_per_s"] else None}
    if json_out:
        print(json.dumps(report, indent=2))
        return
    table = Table("pass", "requests", "requests/s", "p50 ms", "p90 ms", "errors",
                  title=f"llm stage on {caps.device} ({'batched' if caps.batching else 'one at a time'})")
    for label, summary in (("one at a time", report["one_at_a_time"]), (f"{concurrency} at once", report["concurrent"])):
        table.add_row(label, str(summary["requests"]), str(summary["requests_per_s"]), str(summary["p50_ms"]),
                      str(summary["p90_ms"]), str(summary["errors"]))
    console.print(table)
    console.print(f"throughput {report['throughput_ratio']}x one at a time; outputs the same as one at a time: "
                  f"{report['same_outputs']} of {len(alone.outputs)}"
                  + (f" (different: {', '.join(differ[:10])})" if differ else ""), markup=False, highlight=False)


def _bench_stream(path: str, dataset: Optional[Path], domain: str, translator: str, naive: bool,
                  limit: Optional[int], json_out: bool) -> None:
    from pipeline.evaluation.datasets import load_dataset
    from pipeline.evaluation.speed import end_to_end_stream, symbolic_stream

    if dataset is None:
        raise typer.BadParameter(f"--path {path} streams the requests of a dataset", param_hint="--dataset")
    try:
        records = load_dataset(dataset)[:limit]
        for name in sorted({r.get("domain") or domain for r in records}):
            load_pack(name)
    except (PackError, ValueError) as exc:
        err_console.print(f"[red]{escape(str(exc))}[/]")
        raise typer.Exit(2)

    def streamed(label, function, *args):
        with Progress(TextColumn(label), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn(),
                      console=err_console, transient=True) as progress:
            task = progress.add_task("", total=len(records))
            return function(records, domain, *args, progress=lambda: progress.advance(task)).summary()

    def with_naive(report: dict, slow: dict) -> dict:
        report.update(naive_p50_ms=slow["p50_ms"], naive_p90_ms=slow["p90_ms"], naive_stages_ms=slow["stages_ms"],
                      naive_requests_per_s=slow["requests_per_s"],
                      speedup=round(slow["p50_ms"] / report["p50_ms"], 1) if report["p50_ms"] else None)
        if "tokens" in slow:
            report["naive_tokens"] = slow["tokens"]
        return report

    if path == "symbolic":
        report = streamed("symbolic, fast path", symbolic_stream)
        if naive:
            report = with_naive(report, streamed("symbolic, naive path", symbolic_stream, False))
    else:
        from pipeline.run import backend_for, warm_up

        domains = sorted({r.get("domain") or domain for r in records})

        def warmed_up() -> None:  # each pass starts where a freshly started worker would
            backend = backend_for(translator)
            backend.forget_prompts()
            warm_up(domains, translator)

        with err_console.status(f"loading the {translator} backend and warming up...", spinner="dots"):
            warmed_up()
        report = streamed(f"end to end ({translator})", end_to_end_stream, translator)
        backend = backend_for(translator)
        if naive and backend.capabilities.jump_forward:  # the same stream, decoding every token
            warmed_up()
            backend.jump_forward = False
            try:
                report = with_naive(report, streamed("end to end, token by token", end_to_end_stream, translator))
            finally:
                backend.jump_forward = True
    report.update(path=path, dataset=str(dataset))
    if json_out:
        print(json.dumps(report, indent=2))
        return
    naive_columns = ("naive p50 ms", "naive p90 ms") if "naive_stages_ms" in report else ()
    table = Table("stage", "p50 ms", "p90 ms", *naive_columns,
                  title=f"{path}: {report['requests']} requests from {dataset}")
    for stage, q in report["stages_ms"].items():
        slow = report.get("naive_stages_ms", {}).get(stage)
        table.add_row(stage, f"{q['p50']:.2f}", f"{q['p90']:.2f}", *((f"{slow['p50']:.2f}", f"{slow['p90']:.2f}")
                                                                     if slow else ()))
    console.print(table)
    console.print(f"requests/s {report['requests_per_s']}   plan cache {report['plan_cache']}   "
                  f"outcomes {report['outcomes']}", markup=False, highlight=False)
    if "tokens" in report:
        console.print(f"tokens {report['tokens']}", markup=False, highlight=False)
    if "speedup" in report:
        console.print(f"naive p50 {report['naive_p50_ms']} ms vs fast p50 {report['p50_ms']} ms: "
                      f"{report['speedup']}x", markup=False, highlight=False)


def _bench_queue(requests: int, workers: list[int], domain: str) -> None:
    """Throughput of the symbolic path through the queue: requests/s with N worker processes."""
    import subprocess
    import time

    from pipeline.packs.pack import examples
    from pipeline.run import new_run
    from workers.celery_app import app as celery_app
    from workers.tasks import enqueue

    samples = [(q, t, Path(f).read_text(encoding="utf-8")) for q, t, f in examples(domain)]
    if not samples:
        err_console.print(f"[red]{domain} ships no example IR to benchmark with[/]")
        raise typer.Exit(2)
    results = {}
    for count in workers:
        names = [f"bench{count}-{i}-{time.time_ns()}@localhost" for i in range(count)]
        procs = [subprocess.Popen([sys.executable, "-m", "nesyplan.cli", "worker", "--queues", "symbolic",
                                   "--concurrency", "1", "--name", n, "--loglevel", "WARNING"])
                 for n in names]
        try:
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline:
                alive = celery_app.control.inspect(destination=names, timeout=0.5).ping() or {}
                if len(alive) == count:
                    break
            runs = [new_run(q, domain, t, ir) for q, t, ir in (samples[i % len(samples)] for i in range(requests))]
            started = time.perf_counter()
            for run in runs:
                enqueue(run)
            with Progress(TextColumn(f"{count} worker(s)"), BarColumn(), MofNCompleteColumn(),
                          console=err_console, transient=True) as progress:
                task = progress.add_task("", total=requests)
                done = wait_for([r.id for r in runs], 600, on_done=lambda: progress.advance(task))
            elapsed = time.perf_counter() - started
        finally:
            for proc in procs:
                proc.terminate()
            for proc in procs:
                proc.wait(timeout=30)
        results[count] = {"completed": len(done), "seconds": round(elapsed, 2),
                          "requests_per_s": round(len(done) / elapsed, 2)}
    table = Table("workers", "completed", "seconds", "requests/s", title=f"symbolic path, {requests} requests")
    for count, r in results.items():
        table.add_row(str(count), str(r["completed"]), f"{r['seconds']:.2f}", f"{r['requests_per_s']:.2f}")
    console.print(table)
    if len(results) >= 2:
        first, last = list(results.values())[0], list(results.values())[-1]
        console.print(f"ratio {workers[-1]} vs {workers[0]} workers: "
                      f"{last['requests_per_s'] / first['requests_per_s']:.2f}x")
