"""The documentation holds: the site builds with `mkdocs build --strict` (a broken link, a page left out of
the nav or a CLI reference that cannot be generated fails it), every command of the quickstart runs as
written, and the README stays short with its two commands on its first screen."""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
QUICKSTART = ROOT / "docs" / "quickstart.md"

# Quickstart commands the test does not run, each by how it begins, with why.
NOT_RUN = {
    "make demo": "sets everything up; the test suite itself runs under `make test`",
    "make test": "runs this very test: it would run itself",
    ". .venv/bin/activate": "the test puts the interpreter's own bin folder on PATH instead",
    # The only command that loads the packaged LLM: on 2 cores that alone takes longer than the rest of the
    # quickstart together. `make demo` plans with the same model, and the translate stage's tests cover it.
    'nesyplan plan "Show me expenses for Q3 2024 and set up a call about it"': "loads the language model",
}
EXIT_CODE = re.compile(r"#[^'\"]*\bexit code (\d+)\s*$")


def quickstart_commands() -> list[str]:
    """The commands of the quickstart's ```bash blocks, in order: comment lines dropped, a line ending in a
    backslash joined with the next."""
    commands = []
    for block in re.findall(r"^```bash\n(.*?)^```", QUICKSTART.read_text(encoding="utf-8"), re.M | re.S):
        pending = ""
        for line in block.splitlines():
            if not pending and (not line.strip() or line.lstrip().startswith("#")):
                continue
            if line.rstrip().endswith("\\"):
                pending += line.strip()[:-1].rstrip() + " "
                continue
            commands.append(pending + line.strip())
            pending = ""
        assert not pending, f"a ```bash block of the quickstart ends in a backslash: {pending}"
    return commands


def test_the_quickstart_names_every_command_it_does_not_run():
    commands = quickstart_commands()
    for start in NOT_RUN:
        assert any(c.startswith(start) for c in commands), f"not in the quickstart any more: {start}"
    assert not any("<<" in c for c in commands), "a here-document cannot be run line by line"


def test_every_quickstart_command_runs(tmp_path):
    assert (BIN / "nesyplan").exists(), f"no nesyplan command beside {sys.executable}"
    script = ["set -o pipefail"]
    for number, command in enumerate(quickstart_commands(), 1):
        if any(command.startswith(start) for start in NOT_RUN):
            continue
        match = EXIT_CODE.search(command)
        expected = int(match.group(1)) if match else 0
        # One shell for the whole page, as a reader types it: a variable set by one command is there for the
        # next. Each command's exit code is checked as it ends.
        script += [f"echo {quote(f'$ {command}')}", command, "rc=$?",
                   f'if [ "$rc" -ne {expected} ]; then echo "quickstart command {number} exited $rc, '
                   f'not {expected}"; exit 1; fi']
    env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}",
           "PYTHONPATH": str(ROOT), "TMPDIR": str(tmp_path), "COLUMNS": "100"}
    env = {k: v for k, v in env.items() if not k.startswith("NESYPLAN_")}
    result = subprocess.run(["bash", "-c", "\n".join(script)], cwd=ROOT, env=env, capture_output=True, text=True,
                            timeout=600)
    assert result.returncode == 0, (result.stdout + result.stderr)[-6000:]


def quote(text: str) -> str:
    return "'" + text.replace("'", "'\"'\"'") + "'"


@pytest.mark.timeout(300)
def test_the_site_builds_with_strict(tmp_path):
    result = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
                            cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)}, capture_output=True, text=True,
                            timeout=300)
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    assert "WARNING" not in output, output
    cli = (tmp_path / "site" / "cli" / "index.html").read_text(encoding="utf-8")
    for command in ("import-openapi", "validate", "--today"):  # generated from the commands themselves
        assert command in cli


def test_the_readme_is_short_and_starts_with_the_two_commands():
    lines = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 150
    first_screen = "\n".join(lines[:25])
    assert "make demo" in first_screen and "make test" in first_screen
