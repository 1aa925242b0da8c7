"""`make demo`: plan the example requests shipped with each pack from their plain-language text, with the
packaged local model (no server), showing every artifact."""

from __future__ import annotations

import re
import sys

from rich.console import Console

from pipeline.pack import load_pack, pack_names


def examples(domain: str) -> list[tuple[str, str, str]]:
    """(query, today, IR file) from the `% query:` / `% today:` header of each example."""
    found = []
    for file in sorted(load_pack(domain).examples_dir.glob("*.lp")):
        text = file.read_text(encoding="utf-8")
        query = re.search(r"^% query: (.*)$", text, re.MULTILINE)
        today = re.search(r"^% today: (.*)$", text, re.MULTILINE)
        if query and today:
            found.append((query[1].strip(), today[1].strip(), str(file)))
    return found


def main() -> int:
    from pipeline.cli import show_run
    from pipeline.run import backend_for, run_pipeline

    console = Console()
    with console.status("loading the packaged model (SmolLM2-135M, CPU unless CUDA is present)..."):
        backend_for("hf")
    for domain in pack_names():
        for query, today, _ir_file in examples(domain):
            show_run(run_pipeline(query, domain, today, translator="hf"), console)
    return 0


if __name__ == "__main__":
    sys.exit(main())
