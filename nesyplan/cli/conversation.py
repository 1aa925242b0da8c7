"""Conversations: chat with a pack, and the sessions benchmark."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Optional

import typer
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn
from rich.table import Table

from nesyplan.cli.common import app, err_console
from nesyplan.show import console
from pipeline.packs.pack import PackError, load_pack


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
        colour = {"ask": "cyan", "confirm": "yellow", "done": "green", "fail": "red", "handoff": "magenta"}[reply.kind]
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
    table = Table("set", "sessions", "success", "progress", "tool F1", "violations", "wrong calls", "redundant asks",
                  "turns", title=f"sessions: {dataset}")
    rows = [("all", summary)] + [(f"domain {k}", v) for k, v in summary["by_domain"].items()] + \
        [(f"event {k}", v) for k, v in summary["by_event"].items()]
    for name, m in rows:
        table.add_row(name, str(m["sessions"]), f"{m['success_rate']:.1%}", f"{m['task_progress']:.1%}",
                      f"{m['tool_f1']:.3f}", str(m["flow_violations"]), str(m["wrong_calls_executed"]),
                      str(m["redundant_asks"]),
                      str(m["turns_per_session"]))
    console.print(table)
    console.print(f"turn latency {summary['turn_latency_ms']}", markup=False, highlight=False)
    for failure in summary["failures"]:
        console.print(f"  {failure['id']}: {failure['reason']}", markup=False, highlight=False)


@app.command("test-conversations")
def test_conversations(folder: Path = typer.Argument(..., exists=True, file_okay=False,
                                                    help="a folder of conversation cases (*.yaml)"),
                       translator: str = typer.Option("hf", help="hf or openai"),
                       json_out: bool = typer.Option(False, "--json", help="print one JSON object")) -> None:
    """Run conversation test cases (user steps, the reply expected after each, how the session ends);
    exit 1 when one fails."""
    from pipeline.evaluation.conversations import run_cases
    from pipeline.sessions.engine import SessionEngine

    try:
        results = run_cases(SessionEngine(translator), folder)
    except PackError as exc:
        err_console.print(f"[red]{escape(str(exc))}[/]")
        raise typer.Exit(2)
    failed = [r for r in results if not r.passed]
    if json_out:
        print(json.dumps({"cases": len(results), "passed": len(results) - len(failed),
                          "failures": [r.model_dump() for r in failed]}, indent=2))
    else:
        for r in results:
            mark = "[green]pass[/]" if r.passed else "[red]FAIL[/]"
            console.print(f"{mark} {escape(r.file)}: {escape(r.name)}" + (f"\n     {escape(r.failure)}" if r.failure else ""))
        console.print(f"{len(results) - len(failed)}/{len(results)} cases passed")
    if failed or not results:
        raise typer.Exit(1)
