"""No dev-set text in the repository: the dev sets measure how the product does on requests nobody tuned it
for, and a wording copied from one (into a rule, a comment, an example or a test) makes that measure lie.

Every run of seven words of a dev text (the quickbooks, flows and sessions dev sets, and SGD dev's user
turns) is looked for in every file git tracks. A run found in twenty dev texts or more is a stock phrase
of plain English, not a record, and is not looked for. Skipped without the benchmarks beside the
checkout.
"""

import gzip
import json
import re
import subprocess
from collections import defaultdict
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BENCHMARK = ROOT.parent / "shared" / "benchmark"
RUN = 7
COMMON = 20
TEXT_FILES = (".py", ".md", ".yaml", ".yml", ".j2", ".lp", ".txt", ".json", ".jsonl", ".html", ".js", ".pddl", ".toml")


def _words(text: str) -> list[str]:
    return re.findall(r"[a-z0-9']+", text.lower())


def _strings(value) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []


def _dev_texts() -> list[str]:
    texts = []
    for name in ("quickbooks/dev.jsonl", "quickbooks/dev_realistic.jsonl", "flows/dev.jsonl", "sessions/dev.jsonl"):
        path = BENCHMARK / name
        if path.is_file():
            for line in path.read_text(encoding="utf-8").splitlines():
                if line.strip():
                    texts += [s for s in _strings(json.loads(line)) if len(s.split()) >= RUN]
    for path in sorted((BENCHMARK / "sgd" / "dev").glob("dialogues_*.json.gz")):
        with gzip.open(path, "rt", encoding="utf-8") as handle:
            texts += [t["utterance"] for d in json.load(handle) for t in d["turns"] if t["speaker"] == "USER"]
    return texts


def _runs(words: list[str]) -> set[tuple[str, ...]]:
    return {tuple(words[i:i + RUN]) for i in range(len(words) - RUN + 1)}


@pytest.mark.skipif(not BENCHMARK.is_dir(), reason="the benchmarks are not beside the checkout")
def test_no_file_repeats_seven_words_of_a_dev_text():
    seen_in: dict[tuple[str, ...], int] = defaultdict(int)
    for text in _dev_texts():
        for run in _runs(_words(text)):
            seen_in[run] += 1
    records = {run for run, count in seen_in.items() if count < COMMON}
    assert records, "no dev text was read"
    tracked = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True).stdout.split()
    found = []
    for name in tracked:
        if not name.endswith(TEXT_FILES) or not (ROOT / name).is_file():
            continue
        hits = _runs(_words((ROOT / name).read_text(encoding="utf-8", errors="ignore"))) & records
        found += [f"{name}: {' '.join(run)}" for run in sorted(hits)]
    assert not found, "dev-set wording in the repository:\n" + "\n".join(found)
