"""Evaluation: the benchmarks' scores (calls, flows, retrieval, SGD)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Optional

import typer
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn
from rich.table import Table

from nesyplan.cli.common import app, err_console, trained
from nesyplan.show import console
from pipeline.packs.pack import PackError, load_pack

TRANSLATORS = ("oracle", "hf", "openai", "baseline-hf", "baseline-openai")


@app.command("eval")
def eval_command(dataset: Path = typer.Option(..., exists=True, dir_okay=False, help="gold records (.jsonl)"),
                 domain: str = typer.Option("quickbooks", help="domain pack"),
                 translator: str = typer.Option("oracle", help="oracle (gold -> IR: the symbolic half alone), "
                                                               "hf, openai, baseline-hf, baseline-openai"),
                 constrain: bool = typer.Option(True, "--constrain/--no-constrain"),
                 goal_choice: str = typer.Option("retrieve", help="retrieve, shortlist or llm"),
                 limit: Optional[int] = typer.Option(None, help="only the first N records"),
                 json_out: bool = typer.Option(False, "--json", help="print one JSON object")) -> None:
    """Score plans against gold records as the benchmark SPEC defines success."""
    from pipeline.evaluation.calls import evaluate, markdown_report, oracle_ir, summarize
    from pipeline.evaluation.datasets import load_dataset
    from pipeline.run import backend_for, run_pipeline

    if translator not in TRANSLATORS:
        raise typer.BadParameter(f"unknown translator {translator!r} (available: {', '.join(TRANSLATORS)})",
                                 param_hint="--translator")
    try:
        records = load_dataset(dataset)[:limit]
        from pipeline.evaluation.flows import is_flow_dataset

        if is_flow_dataset(records):  # each record's `domain` picks its (flow) pack
            for name in sorted({r.get("domain", domain) for r in records}):
                load_pack(name)
            return _eval_flows(records, dataset, translator, constrain, goal_choice, json_out)
        pack = load_pack(domain)
    except (PackError, ValueError) as exc:
        err_console.print(f"[red]{escape(str(exc))}[/]")
        raise typer.Exit(2)
    if translator == "oracle":
        def execute(r, ir):
            return run_pipeline(r.get("query", ""), domain, r.get("today"), ir)
    elif translator.startswith("baseline-"):
        from pipeline.llm.baseline import run_baseline

        backend = backend_for(translator.removeprefix("baseline-"))

        def execute(r, _ir):
            return run_baseline(r.get("query", ""), r.get("today"), pack, backend, constrain)
    else:
        with err_console.status(f"loading the {translator} backend...", spinner="dots"):
            backend_for(translator)

        def execute(r, _ir):
            return run_pipeline(r.get("query", ""), domain, r.get("today"), None, translator, constrain, goal_choice)
    with Progress(TextColumn("[progress.description]{task.description}"), BarColumn(), MofNCompleteColumn(),
                  TimeRemainingColumn(), console=err_console, transient=True) as progress:
        task = progress.add_task(f"eval {translator}", total=len(records))
        results = evaluate(records, (lambda r: oracle_ir(r, pack)) if translator == "oracle" else (lambda r: None),
                           execute, progress=lambda: progress.advance(task))
    summary = summarize(results)
    summary.update(domain=domain, translator=translator, dataset=str(dataset),
                   constrain=constrain if translator != "oracle" else None,
                   goal_choice=goal_choice if translator in ("hf", "openai") else None)
    if json_out:
        print(json.dumps(summary, indent=2))
        return
    console.print(markdown_report(summary), markup=False, highlight=False)
    if summary["failures"]:
        console.print("\nfailed records:", style="bold")
        for failure in summary["failures"]:
            console.print(f"- {failure['id']}: {failure['reason']}", markup=False, highlight=False)


def _eval_flows(records: list[dict], dataset: Path, translator: str, constrain: bool, goal_choice: str,
                json_out: bool) -> None:
    """Flow datasets: intent accuracy and FLAP's plan metrics (pipeline/evaluation/flows.py)."""
    from pipeline.evaluation.flows import evaluate_flows, flow_oracle_ir, flow_report, summarize_flows
    from pipeline.run import backend_for, run_pipeline

    if translator.startswith("baseline-"):
        raise typer.BadParameter("the JSON function-calling baseline is defined for call packs, not flows",
                                 param_hint="--translator")
    if translator == "oracle":
        def execute(r):
            return run_pipeline(r["query"], r["domain"], r.get("today"), flow_oracle_ir(r))
    else:
        with err_console.status(f"loading the {translator} backend...", spinner="dots"):
            backend_for(translator)

        def execute(r):
            return run_pipeline(r["query"], r["domain"], r.get("today"), None, translator, constrain, goal_choice)
    with Progress(TextColumn("[progress.description]{task.description}"), BarColumn(), MofNCompleteColumn(),
                  TimeRemainingColumn(), console=err_console, transient=True) as progress:
        task = progress.add_task(f"eval flows {translator}", total=len(records))
        rows = evaluate_flows(records, execute, progress=lambda: progress.advance(task))
    summary = summarize_flows(rows)
    summary.update(translator=translator, dataset=str(dataset),
                   goal_choice=goal_choice if translator in ("hf", "openai") else None)
    if json_out:
        print(json.dumps(summary, indent=2))
        return
    console.print(flow_report(summary), markup=False, highlight=False)
    for failure in summary["failures"]:
        console.print(f"- {failure}", markup=False, highlight=False)


@app.command("eval-retrieval")
def eval_retrieval(dataset: Path = typer.Option(..., exists=True, dir_okay=False, help="gold records (.jsonl)"),
                   domain: str = typer.Option("quickbooks", help="domain pack"),
                   method: str = typer.Option("dense", help="dense, sparse or hybrid"),
                   progressive: bool = typer.Option(False, "--progressive",
                                                    help="ProTIP progressive retrieval instead of the top k"),
                   by_clause: bool = typer.Option(False, "--by-clause",
                                                  help="one goal per clause (what translate uses)"),
                   k: int = typer.Option(5, min=1, help="shortlist size of single-step retrieval"),
                   model: Optional[str] = typer.Option(None, help="embedding model folder; 'packaged' for the "
                                                                  "packaged MiniLM (default: the pack's trained "
                                                                  "model when there is one)"),
                   tokens: bool = typer.Option(False, "--prompt-tokens",
                                               help="also count prompt tokens with and without retrieval "
                                                    "(packaged model's tokenizer; shortlist of --k goals)"),
                   json_out: bool = typer.Option(False, "--json", help="print one JSON object")) -> None:
    """Recall of goal retrieval: recall_at_1/5/10 (single-goal requests) and goal_set_recall."""
    from pipeline.evaluation.datasets import load_dataset
    from pipeline.retrieval.metrics import evaluate_retrieval
    from pipeline.retrieval.retrievers import build_retriever

    if progressive and by_clause:
        raise typer.BadParameter("choose --progressive or --by-clause, not both")
    strategy = "progressive" if progressive else "clause" if by_clause else "topk"
    try:
        pack = load_pack(domain)
        records = [r for r in load_dataset(dataset) if r.get("domain", domain) == domain]
        with err_console.status(f"indexing {domain} ({method})...", spinner="dots"):
            retriever = build_retriever(pack, method, model)
    except (PackError, ValueError, OSError) as exc:
        err_console.print(f"[red]{escape(str(exc))}[/]")
        raise typer.Exit(2)
    with Progress(TextColumn("[progress.description]{task.description}"), BarColumn(), MofNCompleteColumn(),
                  console=err_console, transient=True) as progress:
        task = progress.add_task(f"retrieve {method}/{strategy}", total=len(records))
        figures = evaluate_retrieval(records, retriever, strategy, k, progress=lambda: progress.advance(task))
    figures.update(domain=domain, dataset=str(dataset), model=model or ("trained" if trained(pack) else "packaged"))
    if tokens:
        from pipeline.evaluation.prompt_size import prompt_tokens
        from pipeline.llm.backends import packaged_tokenizer

        figures["prompt_tokens"] = prompt_tokens(pack, retriever, records, k, packaged_tokenizer())
    if json_out:
        print(json.dumps(figures, indent=2))
        return
    for key in ("method", "strategy", "k", "model", "requests", "single_goal_requests", "recall_at_1",
                "recall_at_5", "recall_at_10", "goal_set_recall", "exact_goal_set", "ood_rejected",
                "mean_shortlist", "prompt_tokens"):
        if key in figures:
            console.print(f"{key:22} {figures[key]}", markup=False, highlight=False)


@app.command("eval-openapi")
def eval_openapi_command(specs: Path = typer.Option(..., exists=True, file_okay=False,
                                                    help="a folder of OpenAPI / Swagger specs (.yaml, .yml, .json)"),
                         requests: Optional[Path] = typer.Option(None, exists=True, dir_okay=False,
                                                                 help="requests with expected plans, per spec "
                                                                      "(default: the packaged ones for ../shared/openapi)"),
                         translator: str = typer.Option("hf", help="hf or openai"),
                         packs_dir: Optional[Path] = typer.Option(None, help="where the imported packs go "
                                                                             "(default: a scratch folder)"),
                         json_out: bool = typer.Option(False, "--json", help="print one JSON object")) -> None:
    """Import and validate every spec of a folder (a table of what each holds), then plan requests written
    for them with the model and score each against its expected plan: rate and latency."""
    import tempfile

    from pipeline.authoring.openapi_packs import import_folder
    from pipeline.evaluation.openapi import evaluate_requests, packaged_requests

    with tempfile.TemporaryDirectory(prefix="nesyplan-openapi-") as scratch, \
            Progress(TextColumn("[progress.description]{task.description}"), console=err_console,
                     transient=True) as bar:
        task = bar.add_task("importing", total=None)

        def progress(what: str) -> None:
            bar.update(task, description=what[:70])
        root = packs_dir or Path(scratch)
        rows, packs = import_folder(specs, root, progress)
        summary = {"specs": rows, **evaluate_requests(packs, requests or packaged_requests(), root, translator, progress)}
    if json_out:
        print(json.dumps(summary, indent=2))
        return
    table = Table("spec", "ops", "args", "required", "outputs", "edges", "left out", "import s", title="eval-openapi: specs")
    for row in summary["specs"]:
        if not row["imported"]:
            table.add_row(row["spec"], "[red]refused[/]", escape(row["error"][:60]), "", "", "", "", "")
            continue
        table.add_row(row["spec"], f"{row['operations']}/{row['operations_in_spec']}", str(row["arguments"]),
                      str(row["required_arguments"]), str(row["outputs"]), str(row["dataflow_edges"]),
                      str(row["left_out"]), f"{row['import_s']:.1f}")
    console.print(table)
    for result in summary["requests"]:
        if not result["passed"]:
            console.print(f"[red]fail[/] {result['spec']}: {escape(result['request'])}: "
                          f"{escape('; '.join(result['problems']))}", soft_wrap=True)
    figures = Table("", "requests", "passed", "rate", "p50 ms", "p90 ms", title="eval-openapi: requests")
    for key, m in summary["summary"].items():
        lat = m["latency_ms"] or {"p50": "-", "p90": "-"}
        figures.add_row(key, str(m["requests"]), str(m["passed"]), f"{m['rate']:.1%}" if m["rate"] is not None else "-",
                        str(lat["p50"]), str(lat["p90"]))
    console.print(figures)


@app.command("corpus-requests")
def corpus_requests_command(documents: Path = typer.Option(..., exists=True, file_okay=False,
                                                           help="the corpus APIs' documents, each saved as "
                                                                "<api>.yaml, .yml or .json"),
                            out: Path = typer.Option(..., dir_okay=False, help="the request set to write (YAML)"),
                            api: Optional[list[str]] = typer.Option(None, help="only these APIs (default: those "
                                                                               "whose requests carry values)"),
                            today: str = typer.Option("2026-05-04", help="the day relative dates are read on"),
                            json_out: bool = typer.Option(False, "--json", help="print one JSON object")) -> None:
    """Write the request corpus's requests to APIs no shipped part learned from as an `eval-openapi`
    request set (calls and values judged): a development measure of imported APIs."""
    import yaml

    from pipeline.authoring.corpus_requests import corpus_set
    from pipeline.language.rest_corpus import read_corpus

    made = corpus_set(read_corpus(), documents, api or None, today)
    out.write_text(yaml.safe_dump(made.as_requests(), sort_keys=False, allow_unicode=True, width=200),
                   encoding="utf-8")
    figures = {"out": str(out), "apis": len(made.specs), "requests": sum(map(len, made.specs.values())),
               "values": sum(len(c.get("values", {})) for cases in made.specs.values() for c in cases),
               "values_left_out": made.values_left_out, "apis_left_out": made.apis_left_out}
    if json_out:
        print(json.dumps(figures, indent=2))
        return
    console.print(f"wrote {out}: {figures['requests']} requests to {figures['apis']} APIs, {figures['values']} "
                  f"values ({len(made.values_left_out)} left out: no argument takes their name)", markup=False)
    for line in made.apis_left_out:
        console.print(f"left out {line}", markup=False)


@app.command("eval-restbench")
def eval_restbench_command(spec: Path = typer.Option(..., exists=True, dir_okay=False, help="the OpenAPI spec"),
                           queries: Path = typer.Option(..., exists=True, dir_okay=False,
                                                        help="RestBench queries: a JSON list of {query, solution}"),
                           limit: Optional[int] = typer.Option(None, min=1, help="only the first N queries"),
                           translator: str = typer.Option("hf", help="hf or openai"),
                           packs_dir: Optional[Path] = typer.Option(None, help="where the imported pack goes "
                                                                               "(default: a scratch folder)"),
                           json_out: bool = typer.Option(False, "--json", help="print one JSON object")) -> None:
    """Import a spec and plan RestBench's queries for it: correct path (the gold calls in order, the paper's
    measure), exact sequence, right first call, no plan, latency."""
    import tempfile

    from pipeline.authoring.openapi_packs import OpenApiError, import_openapi, import_summary, operations_of
    from pipeline.evaluation.restbench import evaluate_restbench, load_queries

    try:
        cases = load_queries(queries)[:limit]
    except ValueError as exc:
        raise typer.BadParameter(f"{queries}: not RestBench queries: {str(exc).splitlines()[0]}",
                                 param_hint="--queries") from None
    with tempfile.TemporaryDirectory(prefix="nesyplan-restbench-") as scratch, \
            Progress(TextColumn("[progress.description]{task.description}"), BarColumn(), MofNCompleteColumn(),
                     console=err_console, transient=True) as bar:
        task = bar.add_task("importing", total=len(cases) + 2)

        def progress(what: str) -> None:
            bar.update(task, description=what[:60], advance=1)
        root = packs_dir or Path(scratch)
        progress(f"importing {spec.name}")
        try:
            _, pack, document, seconds = import_openapi(spec, root)
        except OpenApiError as exc:
            raise typer.BadParameter(str(exc), param_hint="--spec") from None
        report = {"spec": import_summary(pack, document, seconds),
                  **evaluate_restbench(pack["name"], operations_of(pack, document), cases, root, translator, progress)}
    if json_out:
        print(json.dumps(report, indent=2))
        return
    for result in report["queries"]:
        if not result["correct_path"]:
            got = " -> ".join(result["planned"]) or f"no plan ({result['failure']}: {result['message'][:80]})"
            console.print(f"[red]miss[/] {escape(result['query'])}\n  gold    {' -> '.join(result['gold'])}\n"
                          f"  planned {escape(got)}", soft_wrap=True, highlight=False)
    summary = report["summary"]
    table = Table("queries", "correct path", "exact", "first call", "no plan", "p50 ms", "p90 ms",
                  title=f"eval-restbench: {report['spec']['pack']} ({report['spec']['dataflow_edges']} dataflow edges)")
    table.add_row(str(summary["queries"]), f"{summary['correct_path']:.1%}", f"{summary['exact']:.1%}",
                  f"{summary['first_call']:.1%}", f"{summary['no_plan']:.1%}",
                  str(summary["latency_ms"]["p50"]), str(summary["latency_ms"]["p90"]))
    console.print(table)
    if summary["failures"]:
        console.print("no plan, by kind: " + ", ".join(f"{k} {v}" for k, v in summary["failures"].items()))


@app.command("eval-sgd-cv")
def eval_sgd_cv_command(data: Path = typer.Option(Path("../shared/benchmark/sgd/train"), exists=True, file_okay=False,
                                                  help="the SGD split to cross-validate on (train)"),
                        folds: int = typer.Option(3, min=2, help="folds of whole domains"),
                        fold: Optional[list[int]] = typer.Option(None, "--fold", help="play only these folds "
                                                                                      "(numbered from 0)"),
                        limit: Optional[int] = typer.Option(15, min=1, help="openings and conversations per service"),
                        probes: Optional[int] = typer.Option(10, min=0, help="out-of-domain probes per service"),
                        conversations: bool = typer.Option(True, "--conversations/--no-conversations"),
                        translator: str = typer.Option("hf", help="hf or openai"),
                        epochs: int = typer.Option(6, min=1),
                        work: Optional[Path] = typer.Option(None, file_okay=False,
                                                            help="keep each fold's heads here (foldN/) and reuse "
                                                                 "them when trained with the same settings"),
                        max_dialogues: Optional[int] = typer.Option(None, min=1, help="train on the first N "
                                                                                      "dialogues only (a smoke run)"),
                        tagger_examples: int = typer.Option(0, min=0, help="train each fold's argument tagger on "
                                                                           "this many examples (0: none)"),
                        json_out: bool = typer.Option(False, "--json", help="print one JSON object")) -> None:
    """Leave-services-out cross-validation on SGD train: the learned parts trained without a fold of whole
    domains, its services imported and played as `eval-sgd` plays them. The figure to steer by; SGD dev is
    the final check."""
    from pipeline.authoring.sgd_packs import import_services
    from pipeline.evaluation.cross_validation import cross_validate
    from pipeline.packs.sgd_schema import SgdSchemaError

    options = {"limit": limit, "probes": probes, "conversations": conversations, "translator": translator}
    with err_console.status("cross-validating") as status:
        try:
            result = cross_validate(data, import_services, folds, fold, work, epochs, max_dialogues=max_dialogues,
                                    options=options, progress=lambda m: status.update(m),
                                    tagger_examples=tagger_examples)
        except (SgdSchemaError, ValueError, FileNotFoundError) as exc:
            err_console.print(f"[red]{escape(str(exc))}[/]")
            raise typer.Exit(2)
    if json_out:
        print(json.dumps(result, indent=2))
        return

    def pct(x):
        return "-" if x is None else f"{x:.1%}"
    table = Table("set", "held out", "openings", "exact", "goal", "slot P", "slot R", "probes", "refused", "convs",
                  "success", title=f"eval-sgd-cv: {folds} folds of domains, {data}")
    rows = [(f"fold {r['fold']}", ", ".join(r["held_out"]), r["summary"]["by"].get("all", {})) for r in result["per_fold"]]
    for name, held, m in [("CV (pooled)", f"{len(result['played'])} folds", result["cv"]), *rows]:
        table.add_row(name, held, str(m.get("openings", 0)), pct(m.get("openings_exact")), pct(m.get("goal_accuracy")),
                      pct(m.get("slot_precision")), pct(m.get("slot_recall")), str(m.get("probes", 0)),
                      pct(m.get("ood_refused")), str(m.get("conversations", 0)), pct(m.get("conversation_success")))
    console.print(table)


@app.command("eval-sgd")
def eval_sgd_command(data: Path = typer.Option(..., exists=True, file_okay=False,
                                               help="an SGD split: schema.json and dialogues_*.json[.gz]"),
                     schema: Optional[Path] = typer.Option(None, exists=True, dir_okay=False,
                                                           help="another schema for the same services "
                                                                "(SGD-X: sgd_x/vK/dev.schema.json)"),
                     services: Optional[list[str]] = typer.Option(None, "--services", help="only these services"),
                     limit: Optional[int] = typer.Option(None, min=1, help="openings and conversations per service"),
                     probes: Optional[int] = typer.Option(None, min=0, help="out-of-domain probes per service "
                                                                             "(default: as many as its openings)"),
                     agent: str = typer.Option("pipeline", help="pipeline (planner and controllers) or llm (the "
                                                                "same model alone: function calls, then ReAct)"),
                     translator: str = typer.Option("hf", help="hf or openai"),
                     conversations: bool = typer.Option(True, "--conversations/--no-conversations"),
                     user: str = typer.Option("turns", help="the simulated user, asked for a slot: turns (the "
                                                            "dialogue's own turn that gave it, then its words) or "
                                                            "words (the value's words alone)"),
                     packs_dir: Optional[Path] = typer.Option(None, help="where the imported packs go "
                                                                         "(default: a scratch folder)"),
                     json_out: bool = typer.Option(False, "--json", help="print one JSON object")) -> None:
    """Openings, out-of-domain probes and simulated conversations of SGD dialogues against packs imported
    from their schema: figures per service, for services seen in train and not, and overall."""
    import tempfile

    from pipeline.authoring.sgd_packs import import_services
    from pipeline.evaluation.sgd import evaluate_sgd, services_to_import
    from pipeline.packs.sgd_schema import SgdSchemaError

    with tempfile.TemporaryDirectory(prefix="nesyplan-sgd-") as scratch, \
            Progress(TextColumn("[progress.description]{task.description}"), BarColumn(), MofNCompleteColumn(),
                     TimeRemainingColumn(), console=err_console, transient=True) as bar:
        task = bar.add_task("importing", total=None)

        def progress(what: str, total: int) -> None:
            if what:
                bar.reset(task, description=what, total=total)
            else:
                bar.advance(task)

        try:
            import_services(schema or data / "schema.json", packs_dir or Path(scratch),
                            services_to_import(data, schema, services))
            summary = evaluate_sgd(data, packs_dir or Path(scratch), schema, services, limit, agent, translator,
                                   conversations, probes, user=user, progress=progress)
        except (SgdSchemaError, ValueError, FileNotFoundError) as exc:
            err_console.print(f"[red]{escape(str(exc))}[/]")
            raise typer.Exit(2)
    if json_out:
        print(json.dumps(summary, indent=2))
        return
    table = Table("set", "openings", "exact", "goal", "slot P", "slot R", "probes", "refused", "convs", "success",
                  "p50 ms", "p90 ms", title=f"eval-sgd {agent}: {summary['schema']}")

    def pct(x):
        return "-" if x is None else f"{x:.1%}"
    for key, m in summary["by"].items():
        lat = m["latency_ms"] or {"p50": "-", "p90": "-"}
        table.add_row(key, str(m["openings"]), pct(m["openings_exact"]), pct(m["goal_accuracy"]),
                      pct(m["slot_precision"]), pct(m["slot_recall"]), str(m["probes"]), pct(m["ood_refused"]),
                      str(m["conversations"]), pct(m["conversation_success"]), str(lat["p50"]), str(lat["p90"]))
    console.print(table)
    loaded = summary.get("warm_up_s") or {}
    if loaded:  # paid once per process, before any request: not in the latencies above
        console.print(f"loaded before timing: {sum(loaded.values()):.1f} s ("
                      + ", ".join(f"{k} {v:.1f} s" for k, v in loaded.items()) + ")")
