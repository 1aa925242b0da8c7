"""`make demo`: plan the example requests shipped with each pack, through `nesyplan plan`."""

from __future__ import annotations

import re
import subprocess
import sys

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
    for domain in pack_names():
        for query, today, ir_file in examples(domain):
            subprocess.run([sys.executable, "-m", "pipeline.cli", "plan", query, "--domain", domain,
                            "--today", today, "--ir", ir_file], check=False)
    return 0


if __name__ == "__main__":
    sys.exit(main())
