"""The `nesyplan` command line (typer + rich): one module per room, each adding its commands to one app,
listed in `--help` in this order.

- `planning`: plan; `packs`: validate, domains, train-retriever, make-*-packs, import-sgd;
- `pack_store`: packs push, list, activate, rollback, export (the service's store, through its API);
- `evaluation`: eval, eval-retrieval, eval-sgd; `conversation`: chat, eval-sessions;
- `service`: serve-llm, worker, serve, submit, show; `bench`: bench.
"""

from nesyplan.cli import planning  # noqa: F401 (each room registers its commands on import)
from nesyplan.cli import packs  # noqa: F401
from nesyplan.cli import pack_store  # noqa: F401
from nesyplan.cli import evaluation  # noqa: F401
from nesyplan.cli import conversation  # noqa: F401
from nesyplan.cli import service  # noqa: F401
from nesyplan.cli import bench  # noqa: F401
from nesyplan.cli.common import app

__all__ = ["app"]
