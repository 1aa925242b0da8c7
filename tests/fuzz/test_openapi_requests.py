"""Every real spec we have (../shared/openapi and RestBench's TMDB) imports, and requests made from its own
words, values and noise plan or fail with a named kind: never `internal` (the packaged model translates).
`make test` runs a few requests a spec; `make fuzz` (HYPOTHESIS_PROFILE=long) 200 a spec."""

import os
import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from pipeline.authoring.openapi_packs import import_openapi
from pipeline.packs.pack import using_packs_root

SHARED = Path(__file__).resolve().parents[2].parent / "shared"
SPECS = sorted((SHARED / "openapi").glob("*.yaml")) + [SHARED / "benchmark" / "restbench" / "tmdb_oas.json"]
EXAMPLES = 200 if os.environ.get("HYPOTHESIS_PROFILE") == "long" else 6

pytestmark = pytest.mark.skipif(not (SHARED / "openapi").is_dir(), reason="the shared specs are not beside the checkout")


@pytest.fixture(scope="module")
def packs(tmp_path_factory):
    root = tmp_path_factory.mktemp("packs")
    imported = {}
    for spec in SPECS:
        _, pack, _, _ = import_openapi(spec, root)
        imported[spec.stem] = pack
    return root, imported


def _requests(pack: dict):
    """A request from the pack's own words: a goal's description, argument values it lists, and noise."""
    phrases = [g["description"] for g in pack["goals"].values()]
    values = [v for a in pack["arguments"].values() for v in a.get("values", [])] or ["x"]
    words = sorted({w for p in phrases for w in re.findall(r"[A-Za-z]+", p)}) or ["show"]
    noise = st.one_of(st.text(max_size=40), st.sampled_from(["#1183", "550e8400-e29b-41d4-a716-446655440000",
                                                             "INV2-7F3K", "tomorrow at 9", "\"\"", "-", "{}",
                                                             "Star Wars", "for 3 people", "%", "?", "'"]))
    parts = st.one_of(st.sampled_from(phrases), st.sampled_from(values), st.sampled_from(words), noise)
    return st.lists(parts, min_size=1, max_size=6).map(" ".join)


@pytest.mark.parametrize("spec", [s.stem for s in SPECS])
def test_requests_made_from_a_spec_plan_or_fail_by_name(packs, spec):
    from pipeline.run import run_pipeline, warm_up

    root, imported = packs
    pack = imported[spec]
    with using_packs_root(root):
        warm_up([pack["name"]], "hf")

        @settings(max_examples=EXAMPLES, deadline=None, derandomize=True,
                  suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
        @given(_requests(pack))
        def plans_or_fails_by_name(request):
            run = run_pipeline(request, pack["name"], "2026-05-04", translator="hf")
            assert run.status in ("succeeded", "failed")
            assert run.plan is not None or run.failure is not None
            if run.failure is not None:
                assert run.failure.kind != "internal", (request, run.failure)

        plans_or_fails_by_name()
