"""The served application: the HTTP API (`workers.api`) with the web page (`workers.ui`) and its static
files."""

from __future__ import annotations

from fastapi.staticfiles import StaticFiles

from workers.api import app
from workers.ui import HERE, NeedsKey, needs_key, router

app.include_router(router)
app.add_exception_handler(NeedsKey, needs_key)
app.mount("/ui/static", StaticFiles(directory=HERE / "static"), name="ui-static")

__all__ = ["app"]
