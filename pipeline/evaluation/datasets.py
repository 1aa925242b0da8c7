"""Benchmark datasets: JSON lines, one gold record each (the record formats are the benchmarks' SPECs)."""

from __future__ import annotations

import json
from pathlib import Path


def load_dataset(path: str | Path) -> list[dict]:
    records = []
    for number, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), 1):
        if line.strip():
            try:
                records.append(json.loads(line))
            except json.JSONDecodeError as exc:
                raise ValueError(f"{path}:{number}: not JSON: {exc}") from None
    return records
