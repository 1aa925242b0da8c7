"""The service: workers, the HTTP API, the model server, queued runs and their artifacts."""

from __future__ import annotations

from typing import Optional

import typer
from rich.markup import escape

from nesyplan.cli.common import app, err_console, read_ir, service_errors, wait_for
from nesyplan.show import console, show_run
from pipeline.packs.pack import PackError
from workers.auth import LOCAL


@app.command("serve-llm")
def serve_llm(host: str = typer.Option("127.0.0.1"), port: int = typer.Option(8001),
              model: Optional[str] = typer.Option(None, help="HF model id or path (default: packaged SmolLM2)"),
              gguf_file: Optional[str] = typer.Option(None, help="GGUF file inside --model")) -> None:
    """Serve the hf backend as an OpenAI-compatible endpoint (/v1/chat/completions, with `grammar`),
    so many workers share one loaded model, their requests decoded together. The API's keys guard it;
    without keys it serves only on a loopback address."""
    import signal
    import threading

    import uvicorn

    from pipeline.llm.backends import get_backend
    from workers.llm_server import make_app

    _refuse_an_open_public_address(host)
    backend = get_backend("hf", model=model, gguf_file=gguf_file)
    server = uvicorn.Server(uvicorn.Config(make_app(model, gguf_file), host=host, port=port))
    if backend.decoder is None:  # a model decoded one request at a time: nothing to drive
        server.run()
        return
    # The HTTP server on a thread, the forward passes on this one (the process's first thread: see
    # BatchDecoder.decode). SIGINT and SIGTERM stop both.
    stop = threading.Event()

    def shut_down(*_) -> None:
        server.should_exit = True
        stop.set()

    signal.signal(signal.SIGTERM, shut_down)
    signal.signal(signal.SIGINT, shut_down)
    serving = threading.Thread(target=lambda: (server.run(), stop.set()), name="serve-llm-http", daemon=True)
    serving.start()
    backend.decoder.drive(stop)
    server.should_exit = True
    serving.join(timeout=15)


METRICS_DIR_HELP = ("folder where this host's processes keep their metrics (prometheus_client's multiprocess "
                    "mode); `serve` and `worker` on one host share it, so the API's /metrics shows what the "
                    "workers did. Default: nesyplan-metrics-UID-DIGEST in the temporary directory, one per "
                    "Redis URL")


@app.command()
def worker(queues: str = typer.Option("llm,symbolic", help="queues to take work from (comma-separated)"),
           concurrency: int = typer.Option(1, min=1, help="worker processes"),
           name: Optional[str] = typer.Option(None, help="worker name (default: nesyplan-PID@host)"),
           loglevel: str = typer.Option("INFO"),
           metrics_dir: Optional[str] = typer.Option(None, envvar="PROMETHEUS_MULTIPROC_DIR", help=METRICS_DIR_HELP),
           metrics_port: Optional[int] = typer.Option(None, min=1, max=65535, envvar="NESYPLAN_WORKER_METRICS_PORT",
                                                      help="also serve this host's metrics at :PORT/metrics (a "
                                                           "worker on a host without the API; no key asked: "
                                                           "keep the port to your scraper's network)"),
           metrics_host: str = typer.Option("127.0.0.1", help="the address --metrics-port listens on")) -> None:
    """Run a Celery worker: GPU hosts take `llm`, CPU hosts `symbolic`; any number, against one Redis.
    Traces of its stages: NESYPLAN_TRACING (auto: exported over OTLP/HTTP when OTEL_EXPORTER_OTLP_ENDPOINT is
    set; otlp, console, off)."""
    import os

    from pipeline.observability.metrics import serve_metrics, use_multiprocess_dir

    _refuse_a_placeholder_redis_password()
    use_multiprocess_dir(metrics_dir)  # before any metric exists; the pool's processes inherit it
    if metrics_port is not None:
        serve_metrics(metrics_port, metrics_host)

    from workers.celery_app import app as celery_app
    from workers.tasks import WORKER_QUEUES_ENV

    os.environ[WORKER_QUEUES_ENV] = queues  # each worker process warms up what its queues need
    celery_app.worker_main(["worker", "-Q", queues, "-c", str(concurrency), "--loglevel", loglevel,
                            "-n", name or f"nesyplan-{os.getpid()}@%h", "--without-mingle", "--without-gossip"])


@app.command()
def serve(host: str = typer.Option("127.0.0.1"), port: int = typer.Option(8000),
          metrics_dir: Optional[str] = typer.Option(None, envvar="PROMETHEUS_MULTIPROC_DIR",
                                                    help=METRICS_DIR_HELP)) -> None:
    """Serve the HTTP API (OpenAPI at /docs) and Prometheus metrics at /metrics. Without API keys
    (NESYPLAN_API_KEYS or NESYPLAN_API_KEYS_FILE) it serves only on a loopback address; with keys,
    /metrics asks for one too. Traces of the runs it queues: NESYPLAN_TRACING (auto: exported over OTLP/HTTP
    when OTEL_EXPORTER_OTLP_ENDPOINT is set; otlp, console, off)."""
    import uvicorn

    from pipeline.observability.metrics import use_multiprocess_dir
    from pipeline.settings import settings

    _refuse_an_open_public_address(host)
    use_multiprocess_dir(metrics_dir)  # before the app (and its metrics) is imported
    s = settings()
    # Bounds on what a client can hold: idle keep-alive connections close after 5 s, past max_connections
    # new ones get 503, and SIGTERM ends the server within 10 s even with replies still being waited for.
    # (Headers over 16 KiB get 431 from BodyLimit, whichever HTTP parser uvicorn runs.)
    uvicorn.run("workers.app:app", host=host, port=port, timeout_keep_alive=5, limit_concurrency=s.max_connections,
                timeout_graceful_shutdown=10)


def _refuse_a_placeholder_redis_password() -> None:
    from pipeline.settings import settings
    from workers.auth import placeholder_problem

    problem = placeholder_problem(settings().redis_url)
    if problem:
        err_console.print(f"[red]{escape(problem)}[/]")
        raise typer.Exit(2)


def _refuse_an_open_public_address(host: str) -> None:
    """Exit 2 on a bad key file, a placeholder key or Redis password, or on an address other than loopback
    with no key configured."""
    import ipaddress

    from workers.auth import LOOPBACK_NAMES, KeyConfigError, allowed_hosts, key_digests

    try:
        keys = key_digests()
    except KeyConfigError as exc:
        err_console.print(f"[red]{escape(str(exc))}[/]")
        raise typer.Exit(2)
    _refuse_a_placeholder_redis_password()
    try:
        loopback = host == "localhost" or ipaddress.ip_address(host).is_loopback
    except ValueError:
        loopback = False
    if not keys and not loopback:
        err_console.print(f"[red]refusing to serve on {escape(host)} with no API key: set NESYPLAN_API_KEYS or "
                          f"NESYPLAN_API_KEYS_FILE, or serve on 127.0.0.1[/]")
        raise typer.Exit(2)
    if not loopback and set(allowed_hosts()) <= LOOPBACK_NAMES:  # fine behind a published port on this host
        err_console.print(f"[yellow]serving on {escape(host)} for the names {', '.join(allowed_hosts())} only: "
                          f"set NESYPLAN_ALLOWED_HOSTS to the names clients reach it by[/]")


@app.command()
@service_errors
def submit(query: str = typer.Argument(..., help="the request, in plain language"),
           domain: str = typer.Option("quickbooks"),
           today: Optional[str] = typer.Option(None, help="YYYY-MM-DD"),
           ir: Optional[str] = typer.Option(None, help="IR file, or - for standard input"),
           wait: bool = typer.Option(False, "--wait", help="wait for the plan and show it"),
           timeout: float = typer.Option(120.0, help="seconds to wait with --wait")) -> None:
    """Queue a request for the workers; prints its id (with --wait, the finished run)."""
    from pipeline.observability import tracing
    from pipeline.run import new_run
    from workers.tasks import enqueue

    from pipeline.packs.store import default_store, load_pack_version, stored_or_installed

    tracing.configure("nesyplan-cli")
    try:  # the version a local key's run would use: its own pack of that name in the store, else the installed one
        digest = stored_or_installed(default_store(), LOCAL, domain)
        load_pack_version(domain, digest)
    except PackError as exc:
        err_console.print(f"[red]{escape(str(exc))}[/]")
        raise typer.Exit(2)
    run = new_run(query, domain, today, read_ir(ir) if ir is not None else None, pack_digest=digest)
    enqueue(run)
    print(run.id)
    if wait:
        finished = wait_for([run.id], timeout).get(run.id)
        if finished is None:
            err_console.print(f"[yellow]run {run.id} is not finished after {timeout:g} s[/]")
            raise typer.Exit(3)
        show_run(finished)
        raise typer.Exit(0 if finished.status == "succeeded" else 1)


@app.command()
@service_errors
def show(run_id: str = typer.Argument(...),
         artifact: Optional[str] = typer.Argument(None, help="e.g. task.pddl, plan.txt (raw)"),
         json_out: bool = typer.Option(False, "--json")) -> None:
    """Show a stored run (status, every artifact) or one raw artifact."""
    from workers.api import ARTIFACTS
    from workers.tasks import store

    run = store().load(run_id)
    if run is None:
        err_console.print(f"[red]no run {escape(run_id)} (unknown, or expired from the store)[/]")
        raise typer.Exit(1)
    if artifact is not None:
        if artifact not in ARTIFACTS:
            err_console.print(f"[red]no artifact {escape(artifact)}[/] (artifacts: {', '.join(ARTIFACTS)})")
            raise typer.Exit(2)
        content = ARTIFACTS[artifact](run)
        if content is None:
            err_console.print(f"[yellow]run {run_id} has no {artifact} ({run.status})[/]")
            raise typer.Exit(1)
        print(content, end="" if content.endswith("\n") else "\n")
        return
    if json_out:
        print(run.model_dump_json(indent=2))
    else:
        console.print(f"status: {run.status}")
        show_run(run)
