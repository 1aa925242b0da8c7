"""An OpenAPI document written to a test's folder and imported as a pack, whose packs root is the one in use
while the test runs."""

import json
from contextlib import contextmanager

from pipeline.authoring.openapi_packs import import_openapi
from pipeline.packs.pack import load_pack, using_packs_root


@contextmanager
def imported_pack(tmp_path, name: str, document: dict):
    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps(document), encoding="utf-8")
    root = tmp_path / "packs"
    import_openapi(path, root)
    with using_packs_root(root):
        yield load_pack(name)
