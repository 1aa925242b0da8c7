"""Metrics and traces (issue 53): /metrics of a real API and real workers, parsed by prometheus_client's
own parser; traces of runs, in this process (in-memory exporter) and across the API and a worker (a small
OTLP/HTTP receiver); the compose profile that scrapes and shows them."""

import gzip
import http.server
import importlib.util
import json
import os
import shutil
import subprocess
import threading

import pytest
import redis
import yaml
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import StatusCode
from prometheus_client.parser import text_string_to_metric_families
from typer.testing import CliRunner

from nesyplan.cli import app as cli
from pipeline.observability import metrics, tracing
from pipeline.packs.pack import PROJECT_ROOT
from pipeline.records import Run
from pipeline.run import SYMBOLIC_STAGES, new_run, run_pipeline, run_stage
from pipeline.sessions.engine import SessionEngine
from pipeline.sessions.commands import Cancel, TurnInput
from pipeline.settings import settings
from tests.harness import DATAFLOW_IR, EXAMPLES, PrivateRedis, Service, free_port, wait_until

ERROR_IR = (EXAMPLES / "4_error.lp").read_text()  # ends before it starts: a domain error at materialize
KEY = "metrics-key-5be1"


def scrape(service, **headers) -> dict:
    """GET /metrics, parsed: (sample name, labels) -> value."""
    response = service.http.get("/metrics", headers=headers)
    assert response.status_code == 200, response.text
    assert response.headers["content-type"].startswith("text/plain")
    return {(sample.name, tuple(sorted(sample.labels.items()))): sample.value
            for family in text_string_to_metric_families(response.text) for sample in family.samples}


def value(samples: dict, name: str, **labels) -> float | None:
    return samples.get((name, tuple(sorted(labels.items()))))


@pytest.fixture
def fresh_redis():
    url = os.environ["NESYPLAN_REDIS_URL"]
    redis.Redis.from_url(url).flushdb()
    return url


def test_metrics_of_the_api_and_its_workers_parse_and_count_the_runs(fresh_redis, tmp_path):
    # The API and the worker share a metrics folder, as `serve` and `worker` on one host do by default.
    service = Service(fresh_redis, tmp_path, env={"PROMETHEUS_MULTIPROC_DIR": str(tmp_path / "metrics")})
    try:
        first = service.submit()  # no worker yet: it waits in its queue, which /metrics reads from Redis
        assert wait_until(lambda: value(scrape(service), "nesyplan_queue_depth", queue="symbolic") == 1, 10)
        assert value(scrape(service), "nesyplan_queue_depth", queue="llm") == 0
        service.start_worker("w1")
        ids = [first, service.submit(), service.submit(ir=ERROR_IR)]
        assert service.wait_all(ids, 120), (tmp_path / "w1.log").read_text()[-3000:]
        statuses = [service.http.get(f"/v1/plans/{i}").json()["status"] for i in ids]
        assert statuses == ["succeeded", "succeeded", "failed"]

        samples = scrape(service)
        assert value(samples, "nesyplan_runs_submitted_total") == 3  # counted by the API process
        assert value(samples, "nesyplan_runs_ended_total", status="succeeded", kind="none", stage="plan") == 2
        assert value(samples, "nesyplan_runs_ended_total", status="failed", kind="domain_error",
                     stage="materialize") == 1
        ended = sum(v for (name, _), v in samples.items() if name == "nesyplan_runs_ended_total")
        assert ended == 3  # nothing counted twice
        for stage, count in (("check", 3), ("materialize", 3), ("compile", 2), ("plan", 2)):
            assert value(samples, "nesyplan_stage_duration_seconds_count", stage=stage) == count, stage
            assert value(samples, "nesyplan_stage_duration_seconds_bucket", stage=stage, le="+Inf") == count
            assert value(samples, "nesyplan_stage_duration_seconds_sum", stage=stage) > 0
        assert value(samples, "nesyplan_stage_duration_seconds_count", stage="translate") is None  # IR given
        # The second run of the same task was planned from the worker's plan cache.
        assert value(samples, "nesyplan_plan_cache_lookups_total", result="miss") == 1
        assert value(samples, "nesyplan_plan_cache_lookups_total", result="hit") == 1
        assert value(samples, "nesyplan_redis_up") == 1
        assert value(samples, "nesyplan_queue_depth", queue="symbolic") == 0
        assert wait_until(lambda: value(scrape(service), "nesyplan_workers_alive") == 1, 30)
        # Prometheus asks for OpenMetrics: it gets it.
        response = service.http.get("/metrics", headers={"Accept": "application/openmetrics-text; version=1.0.0"})
        assert response.headers["content-type"].startswith("application/openmetrics-text")
        assert response.text.rstrip().endswith("# EOF")
    finally:
        service.close()


def test_metrics_ask_for_a_key_when_keys_are_configured_and_answer_with_redis_down(tmp_path):
    private = PrivateRedis(tmp_path)
    service = Service(private.url(), tmp_path, env={"NESYPLAN_API_KEYS": KEY,
                                                   "PROMETHEUS_MULTIPROC_DIR": str(tmp_path / "metrics")})
    try:
        assert service.http.get("/metrics").status_code == 401
        assert service.http.get("/metrics", headers={"Authorization": "Bearer not-the-key"}).status_code == 401
        assert value(scrape(service, Authorization=f"Bearer {KEY}"), "nesyplan_redis_up") == 1
        private.stop()
        down = scrape(service, Authorization=f"Bearer {KEY}")  # when it is wanted most
        assert value(down, "nesyplan_redis_up") == 0 and value(down, "nesyplan_queue_depth", queue="symbolic") is None
        assert service.http.get("/metrics").status_code == 401
    finally:
        service.close()
        private.stop()


# --- traces ------------------------------------------------------------------------------------------
@pytest.fixture
def spans(monkeypatch):
    """Spans of this process, in memory (the tracer is the test's own: no global provider is set)."""
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    monkeypatch.setattr(tracing, "_tracer", lambda: provider.get_tracer(tracing.TRACER))
    yield exporter
    provider.shutdown()


def test_an_embedded_run_is_one_trace_with_a_span_per_stage_under_one_root(spans):
    run = run_pipeline("a test request", "quickbooks", "2024-10-15", ir=DATAFLOW_IR)
    assert run.status == "succeeded"
    finished = spans.get_finished_spans()
    assert len({span.context.trace_id for span in finished}) == 1
    roots = [span for span in finished if span.parent is None]
    assert [root.name for root in roots] == ["nesyplan.run"]
    root = roots[0]
    assert root.attributes["nesyplan.run.id"] == run.id and root.attributes["nesyplan.run.status"] == "succeeded"
    children = [span for span in finished if span.parent is not None]
    assert [span.name for span in children] == [f"nesyplan.stage.{stage}" for stage in SYMBOLIC_STAGES]
    assert all(span.parent.span_id == root.context.span_id for span in children)
    assert all(span.end_time <= root.end_time for span in children)
    assert children[-1].attributes["nesyplan.plan.cached"] in (True, False)
    # The record names its trace (W3C traceparent: version-trace id-parent id-flags).
    assert run.trace_context["traceparent"].split("-")[1] == f"{root.context.trace_id:032x}"


def test_a_failed_stage_marks_its_span_and_the_root_with_the_failure(spans):
    run = run_pipeline("a test request", "quickbooks", "2024-10-15", ir=ERROR_IR)
    assert run.status == "failed"
    by_name = {span.name: span for span in spans.get_finished_spans()}
    assert set(by_name) == {"nesyplan.run", "nesyplan.stage.check", "nesyplan.stage.materialize"}
    for name in ("nesyplan.stage.materialize", "nesyplan.run"):
        assert by_name[name].status.status_code == StatusCode.ERROR
        assert by_name[name].attributes["nesyplan.failure.kind"] == "domain_error"
    assert by_name["nesyplan.stage.check"].status.status_code == StatusCode.UNSET


def test_a_stored_trace_context_is_continued_by_each_stage_wherever_it_runs(spans):
    run = new_run("a test request", "quickbooks", "2024-10-15", DATAFLOW_IR)
    with tracing.run_span(run, "queue"):  # as `enqueue` does in the API, before the run is stored
        pass
    (root,) = spans.get_finished_spans()
    for stage in SYMBOLIC_STAGES:  # each stage in "another process": the record read back from its JSON
        run = run_stage(Run.model_validate_json(run.model_dump_json()), stage)
    assert run.status == "succeeded"
    stages = spans.get_finished_spans()[1:]
    assert [span.name for span in stages] == [f"nesyplan.stage.{stage}" for stage in SYMBOLIC_STAGES]
    assert {span.context.trace_id for span in stages} == {root.context.trace_id}
    assert {span.parent.span_id for span in stages} == {root.context.span_id}
    assert all(span.parent.is_remote for span in stages)


def test_a_run_stored_without_a_trace_gets_one_from_its_first_stage(spans):
    run = new_run("a test request", "quickbooks", "2024-10-15", DATAFLOW_IR)  # queued where tracing was off
    for stage in SYMBOLIC_STAGES:
        run = run_stage(Run.model_validate_json(run.model_dump_json()), stage)
    finished = spans.get_finished_spans()
    assert len({span.context.trace_id for span in finished}) == 1
    (root,) = [span for span in finished if span.parent is None]
    assert root.attributes["nesyplan.entry"] == "stage"
    assert all(span.parent.span_id == root.context.span_id for span in finished if span is not root)


def test_with_tracing_off_nothing_is_recorded_or_stored():
    run = run_pipeline("a test request", "quickbooks", "2024-10-15", ir=DATAFLOW_IR)
    assert run.status == "succeeded" and run.trace_context == {}


@pytest.mark.parametrize("tracing_setting, environment, expected", [
    ("auto", {}, "off"),
    ("auto", {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318"}, "otlp"),
    ("auto", {"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://collector:4318/v1/traces"}, "otlp"),
    ("console", {}, "console"),
    ("otlp", {"OTEL_SDK_DISABLED": "true"}, "off"),
    ("off", {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318"}, "off"),
])
def test_tracing_is_off_unless_configured(monkeypatch, tracing_setting, environment, expected):
    for name in ("OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_SDK_DISABLED"):
        monkeypatch.delenv(name, raising=False)
    for name, setting in {"NESYPLAN_TRACING": tracing_setting, **environment}.items():
        monkeypatch.setenv(name, setting)
    settings.cache_clear()
    try:
        assert tracing.mode() == expected
    finally:
        monkeypatch.undo()
        settings.cache_clear()


class Receiver(http.server.ThreadingHTTPServer):
    """An OTLP/HTTP trace receiver: every span exported to it, with its service's name."""

    def __init__(self):
        self.spans: list[tuple[str, object]] = []
        super().__init__(("127.0.0.1", free_port()), self.Handler)

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_POST(self):
            body = self.rfile.read(int(self.headers["Content-Length"]))
            if self.headers.get("Content-Encoding") == "gzip":
                body = gzip.decompress(body)
            request = ExportTraceServiceRequest.FromString(body)
            for resource_spans in request.resource_spans:
                service = next(a.value.string_value for a in resource_spans.resource.attributes
                               if a.key == "service.name")
                for scope in resource_spans.scope_spans:
                    self.server.spans.extend((service, span) for span in scope.spans)
            self.send_response(200)
            self.send_header("Content-Type", "application/x-protobuf")
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *_):
            pass


def test_a_queued_run_is_one_trace_from_the_api_to_each_stage_in_the_worker(fresh_redis, tmp_path):
    receiver = Receiver()
    threading.Thread(target=receiver.serve_forever, daemon=True).start()
    endpoint = f"http://127.0.0.1:{receiver.server_address[1]}"
    service = Service(fresh_redis, tmp_path, env={"OTEL_EXPORTER_OTLP_ENDPOINT": endpoint,
                                                 "OTEL_BSP_SCHEDULE_DELAY": "100",
                                                 "PROMETHEUS_MULTIPROC_DIR": str(tmp_path / "metrics")})
    try:
        service.start_worker("w1")
        run_id = service.submit()
        assert service.wait_all([run_id], 120), (tmp_path / "w1.log").read_text()[-3000:]
        run = service.http.get(f"/v1/plans/{run_id}").json()
        trace_id = bytes.fromhex(run["trace_context"]["traceparent"].split("-")[1])

        def of_the_run():
            return {span.name: (service_name, span) for service_name, span in receiver.spans
                    if span.trace_id == trace_id}
        names = {"nesyplan.run", *(f"nesyplan.stage.{stage}" for stage in SYMBOLIC_STAGES)}
        assert wait_until(lambda: names <= set(of_the_run()), 30), [span.name for _, span in receiver.spans]
        by_name = of_the_run()
        api, queued = by_name["nesyplan.run"]
        assert api == "nesyplan-api"
        for stage in SYMBOLIC_STAGES:
            worker, span = by_name[f"nesyplan.stage.{stage}"]
            assert worker == "nesyplan-worker" and span.parent_span_id == queued.span_id, stage
        # One root: the API's (FastAPI's span of the POST where it makes them, else the run's own).
        roots = [(service_name, span.name) for service_name, span in by_name.values() if not span.parent_span_id]
        assert len(roots) == 1 and roots[0][0] == "nesyplan-api", roots
        if importlib.util.find_spec("fastapi.telemetry") is None:
            return  # a FastAPI that makes no request spans of its own: nothing more to see
        # Health checks and scrapes start no trace (FastAPI's request spans of them are not sampled).
        service.http.get("/healthz")
        service.http.get("/metrics")
        service.http.get("/livez")
        service.http.get("/v1/domains")  # a request that does, sent last: once it is in, the others would be
        assert wait_until(lambda: any(s.name.startswith("GET /v1/domains") for _, s in receiver.spans), 30)
        paths = {a.value.string_value for _, span in receiver.spans for a in span.attributes if a.key == "url.path"}
        assert not paths & {"/healthz", "/metrics", "/livez"}, paths
    finally:
        service.close()
        receiver.shutdown()


# --- metrics in this process -----------------------------------------------------------------------
def counted(name: str, **labels) -> float:
    return metrics.registry().get_sample_value(name, labels) or 0.0


def test_a_session_end_is_counted_by_how_and_why():
    engine = SessionEngine("hf", "simulated")  # no message is translated: the LLM is not loaded
    state = engine.open("quickbooks", "2024-10-15")
    before = counted("nesyplan_sessions_ended_total", end="fail", reason="cancelled")
    reply, _ = engine.advance(state, TurnInput(turn=0, message="cancel", commands=[Cancel()]))
    assert reply.kind == "fail" and state.end_reason == "cancelled by the user"
    assert counted("nesyplan_sessions_ended_total", end="fail", reason="cancelled") == before + 1


def test_translation_tokens_and_llm_time_are_counted_for_tokens_per_second():
    labels = {"translator": "openai"}
    before = {kind: counted("nesyplan_llm_tokens_total", kind=kind, **labels)
              for kind in ("prompt", "prompt_computed", "generated")}
    seconds = counted("nesyplan_llm_generation_seconds_total", **labels)
    metrics.translated("openai", {"prompt_tokens": 300, "prompt_tokens_computed": 40, "new_tokens": 25,
                                  "llm_s": 0.5, "retry_llm_s": 0.25})
    assert counted("nesyplan_llm_tokens_total", kind="prompt", **labels) == before["prompt"] + 300
    assert counted("nesyplan_llm_tokens_total", kind="prompt_computed", **labels) == before["prompt_computed"] + 40
    assert counted("nesyplan_llm_tokens_total", kind="generated", **labels) == before["generated"] + 25
    assert counted("nesyplan_llm_generation_seconds_total", **labels) == pytest.approx(seconds + 0.75)


def test_serve_and_worker_say_where_metrics_are_kept():
    for command in ("serve", "worker"):
        result = CliRunner().invoke(cli, [command, "--help"], env={"COLUMNS": "200"})
        assert result.exit_code == 0 and "PROMETHEUS_MULTIPROC_DIR" in result.output, result.output
    assert "--metrics-port" in CliRunner().invoke(cli, ["worker", "--help"], env={"COLUMNS": "200"}).output


def test_the_model_server_serves_its_own_metrics():
    from fastapi.testclient import TestClient

    from workers.llm_server import make_app

    response = TestClient(make_app()).get("/metrics")  # the model is loaded by the first completion, not here
    assert response.status_code == 200
    samples = {(s.name, tuple(sorted(s.labels.items()))): s.value
               for family in text_string_to_metric_families(response.text) for s in family.samples}
    assert value(samples, "nesyplan_prompt_cache_lookups_total", result="hit") is not None


# --- the compose profile -----------------------------------------------------------------------------
def test_the_monitoring_profile_scrapes_the_api_and_workers_and_shows_the_dashboard(tmp_path):
    compose = yaml.safe_load((PROJECT_ROOT / "docker-compose.yml").read_text())["services"]
    for name in ("prometheus", "grafana"):
        assert compose[name]["profiles"] == ["monitoring"]
        assert all(str(port).startswith("127.0.0.1:") for port in compose[name]["ports"])  # localhost only
        assert "change-me" in compose[name]["entrypoint"][-1]  # the placeholder secret is refused
    scrape_configs = {job["job_name"]: job for job in
                      yaml.safe_load((PROJECT_ROOT / "deploy" / "prometheus.yml").read_text())["scrape_configs"]}
    api = scrape_configs["nesyplan-api"]
    assert api["static_configs"][0]["targets"] == ["api:8000"] and api["metrics_path"] == "/metrics"
    assert api["authorization"]["credentials_file"] in compose["prometheus"]["entrypoint"][-1]
    assert scrape_configs["nesyplan-llm-server"]["static_configs"][0]["targets"] == [
        f"llm-server:{compose['llm-server']['command'][-1]}"]
    workers = scrape_configs["nesyplan-workers"]["dns_sd_configs"][0]
    for name in workers["names"]:  # every worker serves its metrics on the port Prometheus looks at
        command = compose[name]["command"]
        assert command[command.index("--metrics-port") + 1] == str(workers["port"]), name
    hosts = (PROJECT_ROOT / ".env.example").read_text().split("NESYPLAN_ALLOWED_HOSTS=")[1].split()[0].split(",")
    assert {"api", "llm-server"} <= set(hosts)  # the names Prometheus (and the llm workers) send
    dashboard = json.loads((PROJECT_ROOT / "deploy" / "grafana" / "dashboards" / "nesyplan.json").read_text())
    queries = " ".join(t["expr"] for panel in dashboard["panels"] for t in panel["targets"])
    for name in ("nesyplan_runs_ended_total", "nesyplan_stage_duration_seconds_bucket", "nesyplan_queue_depth",
                 "nesyplan_llm_tokens_total", "nesyplan_llm_generation_seconds_total",
                 "nesyplan_plan_cache_lookups_total", "nesyplan_prompt_cache_lookups_total",
                 "nesyplan_sessions_ended_total"):
        assert name in queries, name
    if not shutil.which("docker-compose"):
        return  # what compose itself makes of it: where it is installed (.ci/run installs it)
    shutil.copy(PROJECT_ROOT / "docker-compose.yml", tmp_path)
    shutil.copy(PROJECT_ROOT / ".env.example", tmp_path / ".env")
    result = subprocess.run(["docker-compose", "-f", str(tmp_path / "docker-compose.yml"), "--profile", "monitoring",
                             "config"], capture_output=True, text=True, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    services = yaml.safe_load(result.stdout)["services"]
    assert {"prometheus", "grafana", "api", "worker-symbolic"} <= set(services)
    assert services["prometheus"]["environment"]["NESYPLAN_METRICS_KEY"] == "change-me"  # which it refuses
