"""`make demo`: plan the example requests shipped with each pack from their plain-language text, with the
packaged local model (no server), showing every artifact."""

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
    return 0


if __name__ == "__main__":
    sys.exit(main())
