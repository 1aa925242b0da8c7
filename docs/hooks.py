"""mkdocs hooks (mkdocs.yml `hooks:`): the CLI reference documents this checkout's commands, and the web
page's screenshot comes from where the UI tests write it (workers/static/), not from a copy."""

import sys
from pathlib import Path

from mkdocs.structure.files import File

ROOT = Path(__file__).resolve().parents[1]
SCREENSHOT = ROOT / "workers" / "static" / "screenshot-run.png"


def on_config(config):
    # mkdocs-click imports nesyplan.cli.reference: from this checkout, not from a copy installed elsewhere.
    # (mkdocs puts back sys.path after loading this file, so this is done here, not at import.)
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    return config


def on_files(files, config):
    files.append(File.generated(config, "img/screenshot-run.png", abs_src_path=str(SCREENSHOT)))
    return files
