"""Long functions are where rules pile up (a loop over parallel lists of state, one more case per wave): a
function longer than `LONG` lines is split into typed steps. This counts the functions in the product's
code that are longer and fails when there are more than there were. Lower `LONG_FUNCTIONS` when one is
split; `python tests/test_function_size.py` lists them."""

import ast
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SCANNED = ("pipeline", "nesyplan", "workers")
LONG = 100
LONG_FUNCTIONS = 0  # 2026-12-07: ir_grammar, pack_spec, _by_clause and _slots_in split into steps; only ever lowered


def long_functions() -> list[tuple[int, str]]:
    """(lines, where) of each function longer than LONG lines, longest first."""
    found = []
    for folder in SCANNED:
        for path in sorted((ROOT / folder).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    lines = node.end_lineno - node.lineno + 1
                    if lines > LONG:
                        found.append((lines, f"{path.relative_to(ROOT)}:{node.lineno} {node.name}"))
    return sorted(found, reverse=True)


def test_no_new_long_function():
    found = long_functions()
    assert len(found) <= LONG_FUNCTIONS, "functions over %d lines: split the new one into steps\n%s" % (
        LONG, "\n".join(f"{n} {where}" for n, where in found))


def test_the_count_sees_a_long_function(tmp_path, monkeypatch):
    body = "\n".join(f"    x{i} = {i}" for i in range(LONG + 1))
    (tmp_path / "pipeline").mkdir()
    (tmp_path / "pipeline" / "long.py").write_text(f"def long():\n{body}\n", encoding="utf-8")
    monkeypatch.setattr(sys.modules[__name__], "ROOT", tmp_path)
    assert [where for _, where in long_functions()] == ["pipeline/long.py:1 long"]


if __name__ == "__main__":
    for lines, where in long_functions():
        print(lines, where)
