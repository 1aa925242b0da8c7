"""The layout's import rules (pyproject.toml [tool.importlinter]) hold, and break on a forbidden import."""

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10: pytest brings tomli
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[1]
LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")


def lint_imports(tree: Path) -> subprocess.CompletedProcess:
    return subprocess.run([str(LINT_IMPORTS), "--no-cache"], cwd=tree, env={"PYTHONPATH": str(tree), "PATH": ""},
                          capture_output=True, text=True, timeout=120)


def test_the_checkout_keeps_every_contract():
    result = lint_imports(ROOT)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 broken" in result.stdout


CONTRACTS = {c["name"]: c for c in tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]
             ["contracts"]}


def contract_named(start: str) -> str:
    return next(name for name in CONTRACTS if name.startswith(start))


@pytest.mark.parametrize("module, forbidden_import, contract", [
    ("pipeline/stages/plan.py", "import workers.tasks", contract_named("The CLI is on top")),
    ("pipeline/packs/pack.py", "import pipeline.stages.compile", contract_named("pipeline: tools on top")),
    ("pipeline/retrieval/metrics.py", "import pipeline.llm.prompt", contract_named("pipeline: tools on top")),
    ("pipeline/stages/compile.py", "import pipeline.stages.plan", contract_named("Stages do not call")),
    ("pipeline/values/dates.py", "import torch", contract_named("The symbolic half")),
    ("nesyplan/show.py", "import nesyplan.cli", contract_named("No import circles")),
])
def test_a_forbidden_import_breaks_its_contract(tmp_path, module, forbidden_import, contract):
    for package in ("nesyplan", "workers", "pipeline"):
        shutil.copytree(ROOT / package, tmp_path / package, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", tmp_path)
    assert lint_imports(tmp_path).returncode == 0  # the copy alone keeps them
    with open(tmp_path / module, "a", encoding="utf-8") as handle:
        handle.write(f"\n{forbidden_import}  # noqa\n")
    result = lint_imports(tmp_path)
    assert result.returncode != 0
    compact = "".join(result.stdout.split())  # the report wraps long contract names
    assert "".join(contract.split()) + "BROKEN" in compact, result.stdout
    imported = forbidden_import.split()[-1].rsplit(".", 1)[-1]
    report = result.stdout.split("Broken contracts")[-1]
    assert re.search(rf"-> \S*\b{imported}\b", report), result.stdout  # it names the import
