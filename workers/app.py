"""The served application: the HTTP API (`workers.api`) with the web page (`workers.ui`) and its static
files, and /metrics (`workers.metrics`); traces of the runs it queues when tracing is configured."""

from __future__ import annotations

from fastapi.staticfiles import StaticFiles

from pipeline.observability import tracing
from workers.api import app
from workers.metrics import router as metrics_router
from workers.ui import HERE, NeedsKey, needs_key, router

app.include_router(router)
app.include_router(metrics_router)
tracing.configure("nesyplan-api")
app.add_exception_handler(NeedsKey, needs_key)
app.mount("/ui/static", StaticFiles(directory=HERE / "static"), name="ui-static")

__all__ = ["app"]
