"""`make demo`: plan the example requests shipped with each pack from their plain-language text, with the
packaged local model (no server), showing every artifact; then a short scripted conversation that carries
a plan out (simulated APIs)."""

from __future__ import annotations

import sys

from rich.console import Console

from nesyplan.show import show_run
from pipeline.packs.pack import examples, pack_names
from pipeline.run import backend_for, run_pipeline


def main() -> int:
    console = Console()
    with console.status("loading the packaged model (SmolLM2-135M, CPU unless CUDA is present)..."):
        backend_for("hf")
    for domain in pack_names():
        for query, today, _ir_file in examples(domain):
            show_run(run_pipeline(query, domain, today, translator="hf"), console)
    conversation(console)
    return 0


# A conversation with an unrelated question, details given before they are asked for, and the booking
# read back before it is made.
SCRIPT = ("restaurant_reservation", "2025-03-12", [
    "can you book a table for 4 this Friday at 8pm",
    "oh, do you know if they have parking there?",
    "put it under Sam Patel, 415 555 0199",
    "The Blue Door",
    "yes, please book it",
])


def conversation(console: Console) -> None:
    from pipeline.sessions.engine import SessionEngine

    domain, today, messages = SCRIPT
    engine = SessionEngine("hf")
    state = engine.open(domain, today)
    console.rule(f"a conversation ({domain}, today {today}, simulated APIs)")
    for message in messages:
        before = len(state.executed)
        reply = engine.reply(state, message)
        console.print(f"[bold]user[/]  {message}", highlight=False)
        for call in state.executed[before:]:
            console.print(f"      [dim]called[/] {call.api}({', '.join(f'{k}={v}' for k, v in call.args.items())})"
                          f" -> {call.output}", highlight=False)
        console.print(f"[bold]agent[/] [{'green' if reply.kind == 'done' else 'cyan'}]{reply.kind}[/] {reply.text}",
                      highlight=False)
        if state.ended:
            break


if __name__ == "__main__":
    sys.exit(main())
