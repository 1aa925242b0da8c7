"""OpenTelemetry traces: one trace per run, its `nesyplan.run` span where the run starts (the API's
submission, inside the request's own span where FastAPI makes one; or `run_pipeline`) and a span per stage,
in whichever process runs the stage.

A stage of a queued run runs in a worker, maybe on another host, long after the submission: the root span's
W3C trace context (`traceparent`) is stored on the Run record (`Run.trace_context`) and each stage's span
is its child. A run stored without one (submitted where tracing is off) gets one from the first stage
that runs where tracing is on, so its stages still share a trace.

Off unless configured (`configure`, settings().tracing): without a tracer provider the OpenTelemetry API is
a no-op, no span is recorded and no context is stored.
"""

from __future__ import annotations

import functools
import logging
import os
from contextlib import contextmanager
from typing import Literal, get_args

from opentelemetry import propagate, trace
from opentelemetry.trace import Span, SpanKind, Status, StatusCode

from pipeline.settings import settings

log = logging.getLogger(__name__)
TRACER = "nesyplan"
Mode = Literal["auto", "otlp", "console", "off"]
MODES = get_args(Mode)
_provider = None


def mode() -> str:
    """What settings().tracing means here: otlp, console or off."""
    wanted = settings().tracing.strip().lower()
    if wanted not in MODES:
        raise ValueError(f"NESYPLAN_TRACING must be one of {', '.join(MODES)}, not {wanted!r}")
    if os.environ.get("OTEL_SDK_DISABLED", "").strip().lower() == "true":
        return "off"
    if wanted == "auto":
        endpoint = os.environ.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") or os.environ.get("OTEL_EXPORTER_OTLP_ENDPOINT")
        return "otlp" if endpoint else "off"
    return wanted


def configure(service: str) -> bool:
    """Install this process's tracer provider, exporting in batches as settings().tracing says; whether
    ours is installed (now or before). The exporter reads the standard OTEL_* variables (endpoint, headers, sampler);
    OTEL_SERVICE_NAME overrides `service`. Once per process: call it in the process that runs the spans
    (each worker process after its fork)."""
    global _provider
    chosen = mode()
    if chosen == "off" or _provider is not None:
        return _provider is not None
    from opentelemetry.sdk.resources import SERVICE_NAME, Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor, ConsoleSpanExporter

    if chosen == "otlp":
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

        exporter = OTLPSpanExporter()
    else:
        exporter = ConsoleSpanExporter()
    sampler = TracerProvider(shutdown_on_exit=False).sampler  # OTEL_TRACES_SAMPLER's, else parent-based
    provider = TracerProvider(sampler=_without_probes(sampler),
                              resource=Resource.create({} if os.environ.get("OTEL_SERVICE_NAME")
                                                       else {SERVICE_NAME: service}))
    provider.add_span_processor(BatchSpanProcessor(exporter))
    trace.set_tracer_provider(provider)
    if trace.get_tracer_provider() is not provider:  # the process had one already: its exporters are used
        provider.shutdown()
        log.warning("a tracer provider was installed before nesyplan's: spans go to its exporters")
        return False
    _provider = provider
    log.info("tracing on: %s spans of %s", chosen, service)
    return True


# Requests that would each start a trace of their own every few seconds, telling nothing: health checks and
# scrapes (an HTTP server span's `url.path`, as FastAPI's own spans and OpenTelemetry's ASGI ones record it).
PROBES = frozenset({"/healthz", "/livez", "/metrics"})


def _without_probes(sampler):
    """`sampler`, but a probe's request span that would start a trace is dropped (and so, its children)."""
    from opentelemetry.sdk.trace.sampling import Decision, Sampler, SamplingResult

    class WithoutProbes(Sampler):
        def should_sample(self, parent_context, trace_id, name, kind=None, attributes=None, links=None,
                          trace_state=None):
            if (kind == SpanKind.SERVER and (attributes or {}).get("url.path") in PROBES
                    and not trace.get_current_span(parent_context).get_span_context().is_valid):
                return SamplingResult(Decision.DROP)
            return sampler.should_sample(parent_context, trace_id, name, kind, attributes, links, trace_state)

        def get_description(self) -> str:
            return f"WithoutProbes{{{sampler.get_description()}}}"

    return WithoutProbes()


def flush() -> None:
    """Export what is still buffered (a worker process about to exit)."""
    if _provider is not None:
        _provider.force_flush()


def _tracer() -> trace.Tracer:
    return trace.get_tracer(TRACER)


def _attributes(run) -> dict:
    return {"nesyplan.run.id": run.id, "nesyplan.domain": run.domain,
            "nesyplan.pack_digest": run.pack_digest or "", "nesyplan.translator": run.translator or "none"}


def _mark(span: Span, run) -> None:
    span.set_attribute("nesyplan.run.status", run.status)
    if run.status == "failed" and run.failure is not None:
        span.set_attribute("nesyplan.failure.kind", run.failure.kind)
        span.set_attribute("nesyplan.failure.stage", run.failure.stage)
        span.set_status(Status(StatusCode.ERROR, f"{run.failure.kind}: {run.failure.message}"[:500]))


@contextmanager
def run_span(run, entry: str):
    """The run's span around its start (`entry`: queue, where it is sent to the workers; embedded,
    around all its stages; stage, where a stored run had none), current inside the block; its context is
    stored on the record for the stages (an empty dict when tracing is off)."""
    kind = SpanKind.PRODUCER if entry == "queue" else SpanKind.INTERNAL
    with _tracer().start_as_current_span("nesyplan.run", kind=kind,
                                         attributes={**_attributes(run), "nesyplan.entry": entry}) as span:
        run.trace_context = {}
        propagate.inject(run.trace_context)
        yield span
        _mark(span, run)


def traced_run(entry: str):
    """Decorate a function that makes a run and runs its stages: a root span around the call (current, so
    the stages' spans are its children), named for the run it returns."""
    def decorate(function):
        @functools.wraps(function)
        def traced(*args, **kwargs):
            with _tracer().start_as_current_span("nesyplan.run", attributes={"nesyplan.entry": entry}) as span:
                run = function(*args, **kwargs)
                span.set_attributes(_attributes(run))
                if not run.trace_context:  # it ended before any stage: the record still names its trace
                    propagate.inject(run.trace_context)
                _mark(span, run)
                return run
        return traced
    return decorate


def _parent(run):
    """The context a stage's span is the child of: the run's stored one; else the span around the run
    (the current one: `traced_run`, a session's), stored now; else the run's trace starts here."""
    if not run.trace_context:
        if trace.get_current_span().get_span_context().is_valid:
            propagate.inject(run.trace_context)
        else:
            with run_span(run, "stage"):  # a root span only to give the run its trace (empty when tracing is off)
                pass
    return propagate.extract(run.trace_context) if run.trace_context else None


def stage_started(run, stage: str) -> Span:
    """A span for a stage of the run, started now (ended by `stage_ended`). Not made current: nothing a
    stage calls makes spans of its own."""
    return _tracer().start_span(f"nesyplan.stage.{stage}", context=_parent(run), kind=SpanKind.INTERNAL,
                                attributes={**_attributes(run), "nesyplan.stage": stage})


def stage_ended(span: Span, run, stage: str) -> None:
    if stage == "translate" and run.llm_stats:
        for key in ("prompt_tokens", "prompt_tokens_computed", "new_tokens", "attempts"):
            if key in run.llm_stats:
                span.set_attribute(f"nesyplan.llm.{key}", run.llm_stats[key])
    if stage == "plan" and run.plan is not None:
        span.set_attribute("nesyplan.plan.cached", run.plan.cached)
        span.set_attribute("nesyplan.plan.calls", len(run.plan.calls))
    if run.status in ("succeeded", "failed"):  # the run ended at this stage
        _mark(span, run)
    span.end()
