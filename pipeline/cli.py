"""The `nesyplan` command line (typer + rich)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Optional

import typer
from rich.console import Console
from rich.markup import escape
from rich.panel import Panel
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn
from rich.syntax import Syntax
from rich.table import Table

from pipeline.pack import PackError, load_pack, pack_names
from pipeline.records import Run

app = typer.Typer(add_completion=False, no_args_is_help=True,
                  help="nesyplan: plain-language requests -> inspectable plans of API calls.")
console = Console()
err_console = Console(stderr=True)


def _read_ir(source: str) -> str:
    if source == "-":
        return sys.stdin.read()
    path = Path(source)
    if not path.is_file():
        raise typer.BadParameter(f"no such IR file: {source}", param_hint="--ir")
    return path.read_text(encoding="utf-8")


def show_run(run: Run, out: Console = console) -> None:
    """Every artifact of a run, in stage order, then the timings and the outcome."""
    out.rule(f"[bold]{escape(run.query or '(no query)')}[/]  domain={escape(run.domain)} today={escape(run.today)}")
    if run.ir is not None:
        out.print(Panel(Syntax(run.ir.strip() or "% (empty)", "prolog"), title="IR", title_align="left"))
    if run.materialized is not None:
        m = run.materialized
        out.print(Panel(Syntax(m.atoms.strip() or "% (no atoms)", "prolog"), title="materialized",
                        title_align="left"))
        if m.unreadable:
            out.print(Panel(escape("\n".join(m.unreadable)), title="words the normalisers could not read (asked for)",
                            title_align="left", border_style="yellow"))
    if run.task_pddl is not None:
        out.print(Panel(Syntax(run.task_pddl.text.strip(), "lisp"), title="task PDDL", title_align="left"))
    if run.plan is not None:
        out.print(Panel(escape(run.plan.text), title="plan", title_align="left", border_style="green"))
    timings = Table("stage", "ms", title="stage wall time", title_justify="left")
    for stage, ms in run.timings_ms.items():
        timings.add_row(stage, f"{ms:.1f}")
    out.print(timings)
    if run.failure:
        f = run.failure
        out.print(Panel(f"[bold]{f.kind}[/] at stage {f.stage}: {escape(f.message)}", title="no plan",
                        title_align="left", border_style="red"))
    else:
        out.print(f"[green]{run.status}[/]")


@app.command()
def plan(query: str = typer.Argument(..., help="the request, in plain language"),
         domain: str = typer.Option("quickbooks", help="domain pack"),
         today: Optional[str] = typer.Option(None, help="date to resolve relative dates against (YYYY-MM-DD)"),
         ir: Optional[str] = typer.Option(None, help="IR file, or - for standard input"),
         json_out: bool = typer.Option(False, "--json", help="print the Run record as JSON")) -> None:
    """Plan one request. Exit code 0: a plan; 1: no plan (the reason is in the output)."""
    from pipeline.run import run_pipeline

    if ir is None:
        raise typer.BadParameter("the translator arrives with the LLM stage; until then give --ir FILE|-",
                                 param_hint="--ir")
    run = run_pipeline(query, domain, today, _read_ir(ir))
    if json_out:
        print(run.model_dump_json(indent=2))
    else:
        show_run(run)
    raise typer.Exit(0 if run.status == "succeeded" else 1)


@app.command()
def validate(domain: str = typer.Argument(..., help="domain pack to check")) -> None:
    """Load a pack and report every inconsistency with its file and line."""
    from pipeline.validate import validate_pack

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


@app.command("eval")
def eval_command(dataset: Path = typer.Option(..., exists=True, dir_okay=False, help="gold records (.jsonl)"),
                 domain: str = typer.Option("quickbooks", help="domain pack"),
                 translator: str = typer.Option("oracle", help="oracle: gold -> IR (the symbolic half alone)"),
                 limit: Optional[int] = typer.Option(None, help="only the first N records"),
                 json_out: bool = typer.Option(False, "--json", help="print one JSON object")) -> None:
    """Score plans against gold records as the benchmark SPEC defines success."""
    from pipeline.evaluate import evaluate, load_dataset, markdown_report, oracle_ir, summarize
    from pipeline.run import run_pipeline

    if translator != "oracle":
        raise typer.BadParameter(f"unknown translator {translator!r} (available: oracle)",
                                 param_hint="--translator")
    try:
        pack = load_pack(domain)
        records = load_dataset(dataset)[:limit]
    except (PackError, ValueError) as exc:
        err_console.print(f"[red]{exc}[/]")
        raise typer.Exit(2)
    with Progress(TextColumn("[progress.description]{task.description}"), BarColumn(), MofNCompleteColumn(),
                  TimeRemainingColumn(), console=err_console, transient=True) as progress:
        task = progress.add_task(f"eval {translator}", total=len(records))
        results = evaluate(records, lambda r: oracle_ir(r, pack),
                           lambda r, ir: run_pipeline(r.get("query", ""), domain, r.get("today"), ir),
                           progress=lambda: progress.advance(task))
    summary = summarize(results)
    summary.update(domain=domain, translator=translator, dataset=str(dataset))
    if json_out:
        print(json.dumps(summary, indent=2))
        return
    console.print(markdown_report(summary), markup=False, highlight=False)
    if summary["failures"]:
        console.print("\nfailed records:", style="bold")
        for failure in summary["failures"]:
            console.print(f"- {failure['id']}: {failure['reason']}", markup=False, highlight=False)


if __name__ == "__main__":
    app()
