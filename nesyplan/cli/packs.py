"""Packs: check, list, train and generate them (flows, workflows, SGD services, OpenAPI specs, the scale
catalog)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Optional

import typer
from rich.markup import escape

from nesyplan.cli.common import app, err_console
from nesyplan.show import console
from pipeline.authoring.writer import PackNotValid
from pipeline.packs.pack import PackError, load_pack, pack_names


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


def _trained(what: str, train):
    """A training run under a spinner that shows its progress; bad input is a clear error (exit 2)."""
    try:
        with err_console.status(f"training {what}...", spinner="dots") as status:
            return train(lambda message: status.update(message))
    except (ValueError, OSError) as exc:
        err_console.print(f"[red]{escape(str(exc))}[/]")
        raise typer.Exit(2)


@app.command("train-language")
def train_language_command(data: Path = typer.Option(Path("../shared/benchmark/sgd/train"), exists=True, file_okay=False,
                                                     help="SGD train (schema.json, dialogues_*.json[.gz]); its "
                                                          "SGD-X re-worded schemas are read from ../sgd_x/vK/"),
                           out: Optional[Path] = typer.Option(None, help="where the heads go (default: the "
                                                                          "package's weights/, what runs use)"),
                           max_dialogues: Optional[int] = typer.Option(None, min=1),
                           epochs: int = typer.Option(6, min=1),
                           exclude: list[str] = typer.Option([], help="services not learned from (to measure "
                                                                      "the heads on services they never saw)"),
                           tagger_examples: Optional[int] = typer.Option(
                               None, min=0, help="examples the argument tagger is fine-tuned on (0: none; default: "
                                                 "every one on a GPU, 12000 on a CPU)"),
                           rest: Optional[Path] = typer.Option(
                               None, exists=True, dir_okay=False,
                               help="requests to REST APIs the goal head also learns from (`nesyplan rest-corpus`, "
                                    "the package's: pipeline/language/data/rest_requests.json); default: SGD alone"),
                           json_out: bool = typer.Option(False, "--json")) -> None:
    """Train the language heads (which goal a text asks for; which span is which argument's value) on SGD
    train, and print how they do on the turns held out."""
    from dataclasses import asdict

    from pipeline.language.heads import WEIGHTS
    from pipeline.language.train import train_language

    report = _trained("the language heads", lambda progress: train_language(
        data, out or WEIGHTS, max_dialogues=max_dialogues, epochs=epochs, exclude_services=exclude,
        tagger_examples=tagger_examples, progress=progress, rest=rest))
    if json_out:
        print(json.dumps(asdict(report), indent=2))
        return
    console.print(f"{report.turns} turns in {report.seconds}s", markup=False)
    for name in ("goal", "slot", "span"):
        r = getattr(report, name)
        console.print(f"{name} head: learned from {r.pairs} pairs; held-out turns {r.held_out}; services "
                      f"not learned from {r.unseen_services or '-'}", markup=False)
    if report.tagger:
        console.print(f"argument tagger: {report.tagger['examples']} examples in {report.tagger['seconds']}s; "
                      f"measured on {report.tagger['held_out']}", markup=False)
    for path in report.written:
        console.print(f"wrote {path}", markup=False)


@app.command("rest-corpus")
def rest_corpus_command(documents: Path = typer.Option(..., exists=True, file_okay=False,
                                                       help="the OpenAPI documents, each saved as <api>.yaml, "
                                                            ".yml or .json"),
                        requests: Path = typer.Option(..., exists=True, dir_okay=False,
                                                      help="requests per API (YAML: specs: {api: [{request, "
                                                           "calls}]}; a call is \"METHOD /path\" or the "
                                                           "operation's name)"),
                        out: Optional[Path] = typer.Option(None, help="the corpus file (default: the package's)"),
                        add: bool = typer.Option(True, help="keep the APIs already in the corpus file")) -> None:
    """Pair requests written to REST APIs with the operations they need, as the goal head reads them
    (`train-language` learns from the file)."""
    from pipeline.authoring.request_corpus import corpus_from
    from pipeline.language.rest_corpus import REST_CORPUS, read_corpus
    from pipeline.packs.openapi_spec import OpenApiError

    path = out or REST_CORPUS
    try:
        made, left_out = corpus_from(documents, requests)
    except (ValueError, OSError, OpenApiError) as exc:
        err_console.print(f"[red]{escape(str(exc))}[/]")
        raise typer.Exit(2)
    corpus = read_corpus(path) if add else made
    if add:
        corpus.requests = [r for r in corpus.requests if r.api not in made.goals] + made.requests
        corpus.goals.update(made.goals)
    corpus.save(path)
    for line in left_out:
        console.print(f"left out: {line}", markup=False)
    console.print(f"{len(made.requests)} requests to {len(made.goals)} APIs; the corpus holds "
                  f"{len(corpus.requests)} requests to {len(corpus.goals)} -> {path}", markup=False)


@app.command("train-api-retriever")
def train_api_retriever_command(corpus: Optional[Path] = typer.Option(None, exists=True, dir_okay=False,
                                                                      help="requests to REST APIs (`rest-corpus`; "
                                                                           "default: the package's)"),
                                out: Optional[Path] = typer.Option(None, help="where the adapters go (default: "
                                                                              "the package's, what runs use)"),
                                epochs: Optional[int] = typer.Option(None, min=1, help="default: the shipped "
                                                                                        "encoder's"),
                                folds: int = typer.Option(3, min=0, help="cross-validation over the APIs first "
                                                                         "(0 or 1: none; the threshold is then "
                                                                         "the packaged model's)"),
                                exclude: list[str] = typer.Option([], help="APIs not learned from"),
                                rows: Optional[Path] = typer.Option(None, dir_okay=False,
                                                                    help="write each held-out request's ranking "
                                                                         "here (JSON)"),
                                json_out: bool = typer.Option(False, "--json")) -> None:
    """Train the retrieval encoder of imported APIs on requests to many APIs; print how it ranks the
    requests of APIs held out of its training, beside the packaged model."""
    from dataclasses import asdict

    from pipeline.language.rest_corpus import REST_CORPUS, read_corpus
    from pipeline.retrieval.api_encoder import ADAPTER, EPOCHS, train_api_retriever
    from pipeline.retrieval.retrievers import FIRST_THRESHOLD

    report = _trained("the retrieval encoder", lambda progress: train_api_retriever(
        read_corpus(corpus or REST_CORPUS), FIRST_THRESHOLD, out or ADAPTER, set(exclude),
        epochs=epochs or EPOCHS, folds=folds, rows_out=rows, progress=progress))
    if json_out:
        print(json.dumps(asdict(report), indent=2))
        return
    console.print(f"{report.triples} training triples of {report.apis} APIs in {report.seconds}s -> "
                  f"{report.saved_to}", markup=False)
    cv = report.cross_validation
    if cv:
        console.print(f"held-out APIs ({cv['apis']}; {cv['one_operation']} one-operation requests, "
                      f"{cv['out_of_scope']} out of scope): threshold raised {cv['dense_shift']}", markup=False)
        for name in ("packaged", "trained"):
            console.print(f"  {name:9} right operation first {cv[name]['top1']}, taken in {cv[name]['taken_in']}, "
                          f"out of scope refused {cv[name]['refused']}", markup=False)


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
    except (FlowSpecError, PackNotValid, OSError) as exc:
        err_console.print(f"[red]{escape(str(exc))}[/]")
        raise typer.Exit(2)


@app.command("make-workflow-packs")
def make_workflow_packs_command(specs: list[Path] = typer.Argument(..., exists=True, dir_okay=False,
                                                                  help="typed PDL workflows (YAML): each slot "
                                                                       "with the `type:` that reads it")) -> None:
    """Generate a conversation pack per typed PDL workflow: one goal giving the workflow's slots, expanded
    into its API calls, so a session asks only for what the user has not said."""
    from pipeline.authoring.workflow_packs import make_workflow_pack, read_workflow
    from pipeline.packs.flows import FlowSpecError
    from pipeline.packs.pack import packs_root

    try:
        workflows = [read_workflow(spec) for spec in specs]  # every workflow checked before any is written
        for workflow, spec in zip(workflows, specs):
            paths = make_workflow_pack(packs_root(), workflow, spec.name)
            console.print(f"{workflow.domain}: {len(workflow.slots)} slot(s), {len(workflow.apis)} API(s) -> "
                          f"{paths['yaml']}", markup=False)
    except (FlowSpecError, PackNotValid, OSError) as exc:
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
    from pipeline.packs.pack import packs_root
    from pipeline.packs.sgd_schema import SgdSchemaError

    try:
        written = import_services(schema, out or packs_root(), service)
    except SgdSchemaError as exc:
        err_console.print(f"[red]{escape(str(exc))}[/]")
        raise typer.Exit(2)
    for name, path in written.items():
        spec = load_pack_at(path)
        console.print(f"{name}: {len(spec.goals)} goal(s), {len(spec.arguments)} argument(s) -> {path}", markup=False)
    console.print(f"{len(written)} pack(s) imported and validated", markup=False)


@app.command("import-openapi")
def import_openapi_command(spec: Path = typer.Argument(..., exists=True, dir_okay=False,
                                                       help="an OpenAPI 3.0/3.1 or Swagger 2.0 document (YAML or JSON)"),
                           operations: Optional[list[str]] = typer.Option(None, "--operations",
                                                                          help="only this operation (operationId or "
                                                                               "API name; repeatable)"),
                           name: Optional[str] = typer.Option(None, help="the pack's name (default: the file's "
                                                                         "name, or the spec's title for openapi.json)"),
                           base_url: str = typer.Option("", "--base-url", help="where the API answers (default: "
                                                                                 "the spec's first server)"),
                           out: Optional[Path] = typer.Option(None, help="packs root to write into (domains/, "
                                                                         "asp_rules/, pddl/); default: the packs root"),
                           as_json: bool = typer.Option(False, "--json", help="print one JSON object")) -> None:
    """One call pack from an API spec: each operation a goal and an API, its parameters and body fields
    arguments (required ones asked for), its answer's identifier the output later calls can take, and HTTP
    bindings for --executor http. Validated before it is written; hand additions go in
    domains/<pack>/overlay.yaml and survive a re-import."""
    from pipeline.authoring.openapi_packs import import_openapi, import_summary
    from pipeline.packs.openapi_spec import OpenApiError
    from pipeline.packs.pack import packs_root

    try:
        path, pack, document, seconds = import_openapi(spec, out or packs_root(), name, base_url, operations)
    except OpenApiError as exc:
        err_console.print(f"[red]{escape(str(exc))}[/]", soft_wrap=True)
        raise typer.Exit(2)
    summary = import_summary(pack, document, seconds)
    left_out = summary.pop("left_out_parts")
    summary.update(path=str(path), left_out=left_out)  # the command names every part it left out
    if as_json:
        print(json.dumps(summary, indent=2))
        return
    for item in left_out:
        err_console.print(f"[yellow]left out[/] {escape(item)}", soft_wrap=True)
    console.print(f"{pack['name']}: {summary['operations']} operation(s), {summary['arguments']} argument(s), "
                  f"{summary['outputs']} output(s), {summary['dataflow_edges']} dataflow edge(s), "
                  f"{len(left_out)} part(s) left out, in {seconds:.1f} s -> {path}", markup=False)
    if summary["auth_env"]:
        console.print(f"credentials: set {summary['auth_env']} before running with --executor http", markup=False)


def load_pack_at(path: Path):
    """The spec of a pack.yaml wherever it lies (an --out folder is not the packs root)."""
    import yaml

    from pipeline.packs.pack import PackSpec

    return PackSpec.model_validate(yaml.safe_load(path.read_text(encoding="utf-8")))
