"""Schemas of our own as packs: a test writes its services in SGD's schema format, imports them into a
folder of its own and plans with them there."""

import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from pipeline.authoring.sgd_packs import import_services
from pipeline.packs.pack import using_packs_root


@contextmanager
def packs_of(root: Path, services: list[dict]) -> Iterator[Path]:
    """`services` imported as packs under `root`, which is the packs root while the block runs."""
    (root / "schema.json").write_text(json.dumps(services))
    import_services(root / "schema.json", root)
    with using_packs_root(root):
        yield root
