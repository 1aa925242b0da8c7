"""The conversation cases shipped in tests/conversations (every repair move on every workflow pack), run
with the real model, clingo and Fast Downward; and the case runner's own failures."""

from pathlib import Path

import pytest

from pipeline.evaluation.conversations import case_files, load_cases, run_case, run_cases
from pipeline.sessions.engine import SessionEngine

FOLDER = Path(__file__).parents[1] / "conversations"
CASES = [(path, case) for path in case_files(FOLDER) for case in load_cases(path).cases]


@pytest.fixture(scope="module")
def engine():
    return SessionEngine("hf")


@pytest.mark.parametrize("path, case", CASES, ids=[f"{p.stem}: {c.name}" for p, c in CASES])
def test_a_shipped_conversation_case_passes(engine, path, case):
    cases = load_cases(path)
    result = run_case(engine, cases.domain, cases.today, case, path.name)
    assert result.passed, f"{result.failure}\n" + "\n".join(f"  {u!r} -> {k}: {t}" for u, k, t in result.transcript)


def test_every_workflow_pack_has_a_case_for_every_repair_move():
    moves = ("yes", "correct", "bare no", "cancel", "person", "know")
    for domain in ("restaurant_reservation", "bank_transfer"):
        names = " | ".join(c.name for p, c in CASES if load_cases(p).domain == domain).lower()
        assert all(move in names for move in moves), (domain, names)


def test_the_runner_reports_the_step_that_differs_and_a_file_it_cannot_read(engine, tmp_path):
    (tmp_path / "wrong.yaml").write_text(
        'domain: restaurant_reservation\ntoday: "2025-06-02"\ncases:\n'
        '  - name: expects the wrong kind\n    steps:\n'
        '      - {user: "book Bistro Lune for 5 on June 21 at 6pm", expect: done}\n')
    (tmp_path / "broken.yaml").write_text("domain: restaurant_reservation\ncases: [{name: x, steps: []}]\n")
    results = {r.file: r for r in run_cases(engine, tmp_path)}
    assert not results["wrong.yaml"].passed and "step 1: expected done, got ask" in results["wrong.yaml"].failure
    assert not results["broken.yaml"].passed and "today" in results["broken.yaml"].failure
