"""The `nesyplan` command line (typer + rich)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Optional

import typer
from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn
from rich.table import Table

from nesyplan.show import console, show_run
from pipeline.packs.pack import PackError, load_pack, pack_names
from pipeline.records import Run

app = typer.Typer(add_completion=False, no_args_is_help=True,
                  help="nesyplan: plain-language requests -> inspectable plans of API calls.")
err_console = Console(stderr=True)


def _read_ir(source: str) -> str:
    if source == "-":
        return sys.stdin.read()
    path = Path(source)
    if not path.is_file():
        raise typer.BadParameter(f"no such IR file: {source}", param_hint="--ir")
    return path.read_text(encoding="utf-8")


@app.command()
def plan(query: str = typer.Argument(..., help="the request, in plain language"),
         domain: str = typer.Option("quickbooks", help="domain pack"),
         today: Optional[str] = typer.Option(None, help="date to resolve relative dates against (YYYY-MM-DD)"),
         ir: Optional[str] = typer.Option(None, help="IR file, or - for standard input: skips translation"),
         translator: Optional[str] = typer.Option(None, help="hf (local model) or openai (a server); "
                                                              "default from NESYPLAN_TRANSLATOR, else hf"),
         constrain: bool = typer.Option(True, "--constrain/--no-constrain", help="grammar-constrained decoding"),
         goal_choice: str = typer.Option("retrieve", help="retrieve: goals by retrieval; shortlist: the LLM picks among "
                                                           "the top NESYPLAN_SHORTLIST_K; llm: among all"),
         json_out: bool = typer.Option(False, "--json", help="print the Run record as JSON")) -> None:
    """Plan one request. Exit code 0: a plan; 1: no plan (the reason is in the output)."""
    from pipeline.run import run_pipeline

    ir_text = _read_ir(ir) if ir is not None else None
    with err_console.status("translating (the first request loads the model)...", spinner="dots") \
            if ir_text is None and not json_out else _nothing():
        run = run_pipeline(query, domain, today, ir_text, translator, constrain, goal_choice)
    if json_out:
        print(run.model_dump_json(indent=2))
    else:
        show_run(run)
    raise typer.Exit(0 if run.status == "succeeded" else 1)


def _nothing():
    import contextlib

    return contextlib.nullcontext()


@app.command()
def validate(domain: str = typer.Argument(..., help="domain pack to check")) -> None:
    """Load a pack and report every inconsistency with its file and line."""
    from pipeline.authoring.validate import validate_pack

    problems = validate_pack(domain)
    for problem in problems:
        err_console.print(f"[red]{problem}[/]", highlight=False, soft_wrap=True)
    if problems:
        err_console.print(f"{domain}: {len(problems)} problem(s)")
        raise typer.Exit(1)
    console.print(f"{domain}: ok")


@app.command()
def domains() -> None:
    """List the installed domain packs."""
    for name in pack_names():
        try:
            console.print(f"{name}: {load_pack(name).spec.description}")
        except PackError as exc:
            console.print(f"{name}: [red]cannot load: {exc}[/]")


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
    figures.update(domain=domain, dataset=str(dataset), model=model or ("trained" if _trained(pack) else "packaged"))
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


def _trained(pack) -> bool:
    from pipeline.retrieval.retrievers import trained_model

    return trained_model(pack) is not None


@app.command("train-retriever")
def train_retriever_command(domain: str = typer.Option(..., help="domain pack"),
                            train_file: Optional[Path] = typer.Option(None, exists=True, dir_okay=False,
                                                                      help="extra labelled requests (.jsonl); "
                                                                           "never an evaluation set"),
                            epochs: int = typer.Option(3, min=1),
                            json_out: bool = typer.Option(False, "--json")) -> None:
    """Fine-tune the embedding model on the pack's own examples; save it inside the pack; print Recall@k
    on held-out examples before and after."""
    from pipeline.retrieval.train import train_retriever

    try:
        pack = load_pack(domain)
        with err_console.status(f"training the {domain} retriever...", spinner="dots"):
            report = train_retriever(pack, train_file, epochs=epochs)
    except (PackError, ValueError, OSError) as exc:
        err_console.print(f"[red]{escape(str(exc))}[/]")
        raise typer.Exit(2)
    if json_out:
        print(json.dumps(report.__dict__, indent=2))
        return
    console.print(f"trained on {report.pairs} pairs in {report.seconds}s; held out {report.held_out}; "
                  f"saved to {report.saved_to}", markup=False)
    for key in report.before:
        console.print(f"{key:14} before {report.before[key]}  after {report.after[key]}", markup=False)


@app.command("make-scale-pack")
def make_scale_pack_command(requests: Path = typer.Option(Path("domains/catalog500/requests.jsonl"),
                                                          help="where to write the benchmark requests")) -> None:
    """Generate the 500-goal scale-benchmark pack (catalog500) and its requests."""
    from pipeline.authoring.scale_pack import make_scale_pack
    from pipeline.packs.pack import packs_root

    result = make_scale_pack(packs_root(), requests)
    console.print(f"{result['goals']} goals -> {result['pack']}; requests -> {result['requests']}", markup=False)


@app.command("make-flow-packs")
def make_flow_packs_command(spec: Path = typer.Argument(..., exists=True, dir_okay=False,
                                                        help="flow spec (YAML: domains: {name: {apis, intents}}) "
                                                             "or a FlowAgent-style PDL workflow (YAML)"),
                            intents: Optional[Path] = typer.Option(None, exists=True, dir_okay=False,
                                                                   help="intent descriptions and example requests"),
                            ) -> None:
    """Generate one pack per flow domain of the spec: the planner then follows every flow and data
    dependency by construction. A spec with a cycle or an input nothing produces is rejected."""
    from pipeline.authoring.flow_packs import load_any_spec, make_flow_pack
    from pipeline.packs.flows import FlowSpecError, check_flow_domain
    from pipeline.packs.pack import packs_root

    try:
        domains = load_any_spec(spec, intents)
        for domain in domains:  # every domain checked before any is written
            check_flow_domain(domain)
        for domain in domains:
            paths = make_flow_pack(packs_root(), domain, spec.name)
            console.print(f"{domain.name}: {len(domain.intents)} intent(s), {len(domain.apis)} API(s) -> "
                          f"{paths['yaml']}", markup=False)
    except (FlowSpecError, OSError) as exc:
        err_console.print(f"[red]{escape(str(exc))}[/]")
        raise typer.Exit(2)


@app.command("make-workflow-packs")
def make_workflow_packs_command(specs: list[Path] = typer.Argument(..., exists=True, dir_okay=False,
                                                                  help="typed PDL workflows (YAML): each slot "
                                                                       "with the `type:` that reads it")) -> None:
    """Generate a conversation pack per typed PDL workflow: one goal giving the workflow's slots, expanded
    into its API calls, so a session asks only for what the user has not said."""
    import yaml
    from pydantic import ValidationError

    from pipeline.authoring.flow_packs import PdlWorkflow
    from pipeline.authoring.workflow_packs import make_workflow_pack, workflow_pack_spec
    from pipeline.packs.flows import FlowSpecError
    from pipeline.packs.pack import packs_root

    try:
        workflows = [PdlWorkflow.model_validate(yaml.safe_load(spec.read_text(encoding="utf-8"))) for spec in specs]
        for workflow in workflows:  # every workflow checked before any is written
            workflow_pack_spec(workflow)
        for workflow, spec in zip(workflows, specs):
            paths = make_workflow_pack(packs_root(), workflow, spec.name)
            console.print(f"{workflow.domain}: {len(workflow.slots)} slot(s), {len(workflow.apis)} API(s) -> "
                          f"{paths['yaml']}", markup=False)
    except (FlowSpecError, ValidationError, yaml.YAMLError, OSError) as exc:
        err_console.print(f"[red]{escape(str(exc))}[/]")
        raise typer.Exit(2)


@app.command("import-sgd")
def import_sgd_command(schema: Path = typer.Argument(..., exists=True, dir_okay=False,
                                                     help="an SGD schema (schema.json: a list of services)"),
                       service: Optional[list[str]] = typer.Option(None, "--service",
                                                                   help="only this service (repeatable)"),
                       out: Optional[Path] = typer.Option(None, help="packs root to write into (domains/, "
                                                                     "asp_rules/, pddl/); default: the packs root")) -> None:
    """One pack per service of a Schema-Guided Dialogue schema: intents become goals and APIs, required
    slots are asked for, optional ones carry their defaults; each pack is validated before it is written.
    Hand additions go in domains/<pack>/overlay.yaml and survive a re-import."""
    from pipeline.authoring.sgd_packs import import_services
    from pipeline.packs.sgd_schema import SgdSchemaError
    from pipeline.packs.pack import packs_root

    try:
        written = import_services(schema, out or packs_root(), service)
    except SgdSchemaError as exc:
        err_console.print(f"[red]{escape(str(exc))}[/]")
        raise typer.Exit(2)
    for name, path in written.items():
        spec = load_pack_at(path)
        console.print(f"{name}: {len(spec.goals)} goal(s), {len(spec.arguments)} argument(s) -> {path}", markup=False)
    console.print(f"{len(written)} pack(s) imported and validated", markup=False)


def load_pack_at(path: Path):
    """The spec of a pack.yaml wherever it lies (an --out folder is not the packs root)."""
    import yaml

    from pipeline.packs.pack import PackSpec

    return PackSpec.model_validate(yaml.safe_load(path.read_text(encoding="utf-8")))


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
                     packs_dir: Optional[Path] = typer.Option(None, help="where the imported packs go "
                                                                         "(default: a scratch folder)"),
                     json_out: bool = typer.Option(False, "--json", help="print one JSON object")) -> None:
    """Openings, out-of-domain probes and simulated conversations of SGD dialogues against packs imported
    from their schema: figures per service, for services seen in train and not, and overall."""
    import tempfile

    from pipeline.authoring.sgd_packs import import_services
    from pipeline.packs.sgd_schema import SgdSchemaError
    from pipeline.evaluation.sgd import evaluate_sgd, services_to_import

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
                                   conversations, probes, progress=progress)
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


# --- the service ------------------------------------------------------------------------------------

@app.command("serve-llm")
def serve_llm(host: str = typer.Option("127.0.0.1"), port: int = typer.Option(8001),
              model: Optional[str] = typer.Option(None, help="HF model id or path (default: packaged SmolLM2)"),
              gguf_file: Optional[str] = typer.Option(None, help="GGUF file inside --model")) -> None:
    """Serve the hf backend as an OpenAI-compatible endpoint (/v1/chat/completions, with `grammar`),
    so many workers share one loaded model."""
    import uvicorn

    from workers.llm_server import make_app

    uvicorn.run(make_app(model, gguf_file), host=host, port=port)


def _service_errors(function):
    """Redis or the broker being down is a clear message and exit code 2, not a traceback."""
    import functools

    @functools.wraps(function)
    def wrapper(*args, **kwargs):
        import kombu.exceptions
        import redis

        try:
            return function(*args, **kwargs)
        except (redis.exceptions.RedisError, kombu.exceptions.OperationalError) as exc:
            from pipeline.settings import settings

            err_console.print(f"[red]the queue (Redis at {escape(settings().redis_url)}) is unavailable: "
                              f"{escape(str(exc))}[/]")
            raise typer.Exit(2)

    return wrapper


@app.command()
def chat(domain: str = typer.Option("quickbooks", help="domain pack"),
         today: Optional[str] = typer.Option(None, help="date to resolve relative dates against (YYYY-MM-DD)"),
         translator: str = typer.Option("hf", help="hf or openai"),
         executor: str = typer.Option("simulated", help="how APIs are carried out: simulated (offline "
                                                        "outputs) or http (the pack's http bindings)"),
         jsonl: bool = typer.Option(False, "--jsonl", help="each stdin line a JSON string (a user message), "
                                                           "each stdout line one reply object; exits at EOF")) -> None:
    """A conversation that carries the plan out: asks for what is missing, calls the APIs, replans after
    every message."""
    from datetime import date

    from pipeline.sessions.engine import SessionEngine

    engine = SessionEngine(translator, executor)
    try:
        state = engine.open(domain, today or date.today().isoformat())
    except PackError as exc:
        err_console.print(f"[red]{escape(str(exc))}[/]")
        raise typer.Exit(2)
    if not jsonl:
        console.print(f"[bold]{domain}[/] session (today {state.today}); an empty line or Ctrl-D ends it.")
    for line in sys.stdin:
        if jsonl:
            try:
                message = json.loads(line)
            except json.JSONDecodeError as exc:
                err_console.print(f"[red]not a JSON string: {escape(str(exc))}[/]")
                continue
            if not isinstance(message, str):
                err_console.print("[red]each line must be a JSON string[/]")
                continue
            print(engine.reply(state, message).model_dump_json(exclude_none=True), flush=True)
            continue
        if not line.strip():
            break
        before = len(state.executed)
        reply = engine.reply(state, line.strip())
        for call in state.executed[before:]:
            console.print(f"  [dim]called[/] {call.api}({', '.join(f'{k}={v}' for k, v in call.args.items())})"
                          f" -> {call.output}", highlight=False)
        colour = {"ask": "cyan", "done": "green", "fail": "red"}[reply.kind]
        console.print(f"[{colour}]{reply.kind}[/] {escape(reply.text)}")
        if state.ended:
            break


@app.command("eval-sessions")
def eval_sessions(dataset: Path = typer.Option(..., exists=True, dir_okay=False, help="scenarios (.jsonl)"),
                  translator: str = typer.Option("hf", help="hf or openai"),
                  limit: Optional[int] = typer.Option(None, help="only the first N scenarios"),
                  agent: str = typer.Option("pipeline", help="pipeline (planner and controllers) or llm (the "
                                                             "same model choosing each action, ReAct-style)"),
                  json_grammar: bool = typer.Option(True, help="--agent llm: constrain its actions to JSON "
                                                               "with the pack's API and parameter names"),
                  json_out: bool = typer.Option(False, "--json", help="print one JSON object")) -> None:
    """Play the sessions benchmark's simulated user against the agent; print its metrics by domain and by
    event kind."""
    from pipeline.evaluation.datasets import load_dataset
    from pipeline.evaluation.sessions import report, score_session, simulate
    from pipeline.sessions.engine import SessionEngine
    from pipeline.sessions.react import ReactAgent

    scenarios = load_dataset(dataset)[:limit]
    if agent not in ("pipeline", "llm"):
        err_console.print(f"[red]unknown agent {escape(agent)!r} (pipeline, llm)[/]")
        raise typer.Exit(2)
    engine = SessionEngine(translator) if agent == "pipeline" else ReactAgent(translator, json_grammar=json_grammar)
    results = []
    with Progress(TextColumn("sessions"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn(),
                  console=err_console, transient=True) as progress:
        task = progress.add_task("", total=len(scenarios))
        for scenario in scenarios:
            try:
                state = engine.open(scenario["domain"], scenario["today"])
            except PackError as exc:
                err_console.print(f"[red]{escape(scenario['id'])}: {escape(str(exc))}[/]")
                raise typer.Exit(2)
            transcript = simulate(scenario, lambda m: engine.reply(state, m).model_dump(exclude_none=True))
            preconditions = {name: api.after for name, api in load_pack(scenario["domain"]).spec.apis.items()}
            results.append(score_session(scenario, transcript, preconditions))
            progress.advance(task)
    summary = {**report(results), "dataset": str(dataset), "agent": agent, "translator": translator,
               **({"json_grammar": json_grammar} if agent == "llm" else {})}
    if json_out:
        print(json.dumps(summary, indent=2))
        return
    table = Table("set", "sessions", "success", "progress", "tool F1", "violations", "redundant asks", "turns",
                  title=f"sessions: {dataset}")
    rows = [("all", summary)] + [(f"domain {k}", v) for k, v in summary["by_domain"].items()] + \
        [(f"event {k}", v) for k, v in summary["by_event"].items()]
    for name, m in rows:
        table.add_row(name, str(m["sessions"]), f"{m['success_rate']:.1%}", f"{m['task_progress']:.1%}",
                      f"{m['tool_f1']:.3f}", str(m["flow_violations"]), str(m["redundant_asks"]),
                      str(m["turns_per_session"]))
    console.print(table)
    console.print(f"turn latency {summary['turn_latency_ms']}", markup=False, highlight=False)
    for failure in summary["failures"]:
        console.print(f"  {failure['id']}: {failure['reason']}", markup=False, highlight=False)


@app.command()
def worker(queues: str = typer.Option("llm,symbolic", help="queues to take work from (comma-separated)"),
           concurrency: int = typer.Option(1, min=1, help="worker processes"),
           name: Optional[str] = typer.Option(None, help="worker name (default: nesyplan-PID@host)"),
           loglevel: str = typer.Option("INFO")) -> None:
    """Run a Celery worker: GPU hosts take `llm`, CPU hosts `symbolic`; any number, against one Redis."""
    import os

    from workers.celery_app import app as celery_app
    from workers.tasks import WORKER_QUEUES_ENV

    os.environ[WORKER_QUEUES_ENV] = queues  # each worker process warms up what its queues need
    celery_app.worker_main(["worker", "-Q", queues, "-c", str(concurrency), "--loglevel", loglevel,
                            "-n", name or f"nesyplan-{os.getpid()}@%h", "--without-mingle", "--without-gossip"])


@app.command()
def serve(host: str = typer.Option("127.0.0.1"), port: int = typer.Option(8000)) -> None:
    """Serve the HTTP API (OpenAPI at /docs). Without API keys (NESYPLAN_API_KEYS or
    NESYPLAN_API_KEYS_FILE) it serves only on a loopback address."""
    import ipaddress

    import uvicorn

    from workers.auth import KeyConfigError, key_digests

    try:
        keys = key_digests()
    except KeyConfigError as exc:
        err_console.print(f"[red]{escape(str(exc))}[/]")
        raise typer.Exit(2)
    try:
        loopback = host == "localhost" or ipaddress.ip_address(host).is_loopback
    except ValueError:
        loopback = False
    if not keys and not loopback:
        err_console.print(f"[red]refusing to serve on {escape(host)} with no API key: set NESYPLAN_API_KEYS or "
                          f"NESYPLAN_API_KEYS_FILE, or serve on 127.0.0.1[/]")
        raise typer.Exit(2)
    uvicorn.run("workers.app:app", host=host, port=port)


def _wait_for(run_ids: list[str], timeout_s: float, on_done=None) -> dict[str, Run]:
    import time

    from workers.tasks import store

    pending, done = set(run_ids), {}
    deadline = time.monotonic() + timeout_s
    while pending and time.monotonic() < deadline:
        for run_id in list(pending):
            run = store().load(run_id)
            if run is not None and run.status in ("succeeded", "failed"):
                done[run_id] = run
                pending.discard(run_id)
                if on_done:
                    on_done()
        if pending:
            time.sleep(0.05)
    return done


@app.command()
@_service_errors
def submit(query: str = typer.Argument(..., help="the request, in plain language"),
           domain: str = typer.Option("quickbooks"),
           today: Optional[str] = typer.Option(None, help="YYYY-MM-DD"),
           ir: Optional[str] = typer.Option(None, help="IR file, or - for standard input"),
           wait: bool = typer.Option(False, "--wait", help="wait for the plan and show it"),
           timeout: float = typer.Option(120.0, help="seconds to wait with --wait")) -> None:
    """Queue a request for the workers; prints its id (with --wait, the finished run)."""
    from pipeline.run import new_run
    from workers.tasks import enqueue

    try:
        load_pack(domain)
    except PackError as exc:
        err_console.print(f"[red]{escape(str(exc))}[/]")
        raise typer.Exit(2)
    run = new_run(query, domain, today, _read_ir(ir) if ir is not None else None)
    enqueue(run)
    print(run.id)
    if wait:
        finished = _wait_for([run.id], timeout).get(run.id)
        if finished is None:
            err_console.print(f"[yellow]run {run.id} is not finished after {timeout:g} s[/]")
            raise typer.Exit(3)
        show_run(finished)
        raise typer.Exit(0 if finished.status == "succeeded" else 1)


@app.command()
@_service_errors
def show(run_id: str = typer.Argument(...),
         artifact: Optional[str] = typer.Argument(None, help="e.g. task.pddl, plan.txt (raw)"),
         json_out: bool = typer.Option(False, "--json")) -> None:
    """Show a stored run (status, every artifact) or one raw artifact."""
    from workers.api import ARTIFACTS
    from workers.tasks import store

    run = store().load(run_id)
    if run is None:
        err_console.print(f"[red]no run {escape(run_id)} (unknown, or expired from the store)[/]")
        raise typer.Exit(1)
    if artifact is not None:
        if artifact not in ARTIFACTS:
            err_console.print(f"[red]no artifact {escape(artifact)}[/] (artifacts: {', '.join(ARTIFACTS)})")
            raise typer.Exit(2)
        content = ARTIFACTS[artifact](run)
        if content is None:
            err_console.print(f"[yellow]run {run_id} has no {artifact} ({run.status})[/]")
            raise typer.Exit(1)
        print(content, end="" if content.endswith("\n") else "\n")
        return
    if json_out:
        print(run.model_dump_json(indent=2))
    else:
        console.print(f"status: {run.status}")
        show_run(run)


BENCH_PATHS = ("queue", "symbolic", "end-to-end")


@app.command()
def bench(path: str = typer.Option("queue", help="queue: requests/s through Redis with N workers; symbolic: the "
                                                 "symbolic stages in process over --dataset from gold IR, with the "
                                                 "naive planner path for the ratio; end-to-end: every stage from "
                                                 "the request's words"),
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
          json_out: bool = typer.Option(False, "--json", help="print one JSON object")) -> None:
    """Speed: p50/p90 per stage and requests/s over a stream of requests (symbolic, end-to-end), or the
    queue's throughput with N worker processes (queue)."""
    if path not in BENCH_PATHS:
        raise typer.BadParameter(f"unknown path {path!r} (available: {', '.join(BENCH_PATHS)})", param_hint="--path")
    if path != "queue":
        return _bench_stream(path, dataset, domain, translator, naive, limit, json_out)
    _bench_queue(requests, workers, domain)


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
            if hasattr(backend, "forget_prompts"):
                backend.forget_prompts()
            warm_up(domains, translator)

        with err_console.status(f"loading the {translator} backend and warming up...", spinner="dots"):
            warmed_up()
        report = streamed(f"end to end ({translator})", end_to_end_stream, translator)
        backend = backend_for(translator)
        if naive and hasattr(backend, "jump_forward"):  # the same stream, decoding every token
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
                done = _wait_for([r.id for r in runs], 600, on_done=lambda: progress.advance(task))
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


if __name__ == "__main__":
    app()
