"""A mock server made from an OpenAPI document itself: Stoplight's Prism (`@stoplight/prism-cli`, installed
by `make test` into .venv/prism with npm). It answers each operation with the document's examples and checks
every request against the document (path, query, headers, credentials, body): a request that breaks it is
answered 4xx and logged as a violation. So a plan carried out against it is checked as the API would check
it, for any spec, with no server written by hand."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import httpx
import pytest
import yaml

from pipeline.packs.pack import PROJECT_ROOT
from tests.harness import free_port, stop, wait_until

PRISM = PROJECT_ROOT / ".venv" / "prism" / "node_modules" / ".bin" / "prism"
_REQUEST = re.compile(r"\[HTTP SERVER\] (\w+) (\S+) ℹ\s+info\s+Request received")
_VIOLATION = re.compile(r"Violation: (request.*)")  # a request's; its answer is Prism's own


def prism_or_skip() -> Path:
    if not PRISM.exists():
        pytest.skip("Prism is not installed (make test installs it with npm; no npm on this machine)")
    if shutil.which("node") is None:
        pytest.skip("Prism needs Node.js, which this machine lacks")
    return PRISM


def servable(spec: Path, folder: Path) -> Path:
    """The spec as Prism can serve it: a `$ref` inside the document that points nowhere (a published spec's
    defect, which the importer reports and leaves out) becomes an empty schema, as the importer reads it."""
    raw = yaml.safe_load(spec.read_text(encoding="utf-8"))

    def resolves(pointer: str) -> bool:
        node = raw
        for part in pointer.lstrip("#/").split("/"):
            part = part.replace("~1", "/").replace("~0", "~")
            if not isinstance(node, dict) or part not in node:
                return False
            node = node[part]
        return True

    def mend(node):
        if isinstance(node, dict):
            ref = node.get("$ref")
            if isinstance(ref, str) and ref.startswith("#/") and not resolves(ref):
                return {}
            return {key: mend(value) for key, value in node.items()}
        return [mend(item) for item in node] if isinstance(node, list) else node
    mended = folder / f"{spec.stem}.json"
    mended.write_text(json.dumps(mend(raw), default=str), encoding="utf-8")
    return mended


class PrismMock:
    """`prism mock SPEC` on a free port of loopback, its log in `log_path`."""

    def __init__(self, spec: Path, log_path: Path):
        self.log_path = log_path
        self.url = f"http://127.0.0.1:{free_port()}"
        self.process = subprocess.Popen(
            [str(prism_or_skip()), "mock", "--host", "127.0.0.1", "--port", self.url.rsplit(":", 1)[1], str(spec)],
            stdout=log_path.open("w"), stderr=subprocess.STDOUT, start_new_session=True)
        assert wait_until(lambda: self.process.poll() is not None or self._up(), 90) and self.process.poll() is None, \
            f"Prism did not start: {log_path.read_text()[-2000:]}"
        self.mark()

    def _up(self):
        try:
            httpx.get(self.url + "/", timeout=2)
            return True
        except httpx.TransportError:
            return False

    def mark(self) -> None:
        """Forget what was logged so far: `requests` and `violations` report only what comes after."""
        self._seen = len(self.log_path.read_text(encoding="utf-8"))

    def _log(self) -> str:
        return self.log_path.read_text(encoding="utf-8")[self._seen:]

    def requests(self) -> list[tuple[str, str]]:
        """(method, path with its query) of each request received since the mark."""
        return [(m[1].upper(), m[2]) for m in _REQUEST.finditer(self._log())]

    def violations(self) -> list[str]:
        """What Prism found wrong in the requests since the mark (empty: every one kept to the document)."""
        return _VIOLATION.findall(self._log())

    def close(self) -> None:
        stop(self.process)
