"""Property-based fuzzing (hypothesis) of what takes outside input: the IR check, every normaliser, the
symbolic stages end to end (IR values -> materialize -> compile -> Fast Downward), and the pack loader.
`make test` runs a short budget (profile `ci`); `make fuzz` a long one (HYPOTHESIS_PROFILE=long)."""

import copy
from datetime import date

import pytest
import yaml
from hypothesis import HealthCheck, given, settings, strategies as st

from pipeline.authoring.validate import validate_pack
from pipeline.packs import pack as pack_module
from pipeline.packs.pack import PROJECT_ROOT, PackError, load_pack
from pipeline.records import StageError
from pipeline.run import run_pipeline
from pipeline.stages.check import check_ir
from pipeline.values import dates
from pipeline.values.normalizers import NORMALIZERS

QUICKBOOKS = load_pack("quickbooks")
PACKS = ["quickbooks", "restaurant_reservation", "bank_transfer"]
TODAY = date(2024, 10, 15)

# Text that is hard on a parser: any unicode, ASP syntax, directives, huge numbers, deep terms.
_ASP_BITS = st.sampled_from(["#script (python) import os #end.", "#include \"/etc/passwd\".", "#const n=1.",
                             "#show.", ":-", "not ", "%*", "*%", "%", "\"", "\\", ".", ",", "(", ")", "_goal",
                             "_invoice_amount", "g1", "\n", " ", "#", "1..9", "X", "{", "}", ";", "@f(1)"])
_huge_int = st.integers(min_value=-(10 ** 40), max_value=10 ** 40).map(str)
_quoted = st.text(max_size=400).map(lambda s: '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"')


@st.composite
def _term(draw, depth=0):
    options = [_quoted, _huge_int, st.from_regex(r"[a-z][a-zA-Z0-9_]{0,20}", fullmatch=True)]
    if depth < 4:
        options.append(st.tuples(st.from_regex(r"[a-z]{1,5}", fullmatch=True),
                                 st.lists(_term(depth + 1), min_size=1, max_size=3))
                       .map(lambda t: f"{t[0]}({', '.join(t[1])})"))
    return draw(st.one_of(options))


_predicate = st.one_of(st.sampled_from(sorted(QUICKBOOKS.ir_predicates())), st.from_regex(r"_?[a-z]{1,12}", fullmatch=True))
_fact = st.tuples(_predicate, st.lists(_term(), max_size=4)).map(lambda t: f"{t[0]}({', '.join(t[1])}).")
IR_TEXT = st.one_of(st.text(max_size=3000),
                    st.lists(st.one_of(_fact, _ASP_BITS, st.text(max_size=30)), max_size=40).map(" ".join),
                    st.lists(_fact, max_size=250).map("\n".join))


@settings(suppress_health_check=[HealthCheck.too_slow])
@given(IR_TEXT)
def test_the_ir_check_rejects_with_a_reason_or_passes_only_plain_known_facts(text):
    try:
        checked = check_ir(text, QUICKBOOKS)
    except StageError as exc:
        assert exc.stage == "check" and exc.kind == "ir_rejected" and exc.message
        return
    known = QUICKBOOKS.ir_predicates()
    for fact in checked.facts:
        assert fact.predicate in known and len(fact.arguments) == known[fact.predicate]
        assert all(isinstance(a, (str, int)) for a in fact.arguments)
    assert "#" not in "".join(f.render() for f in checked.facts if not any("#" in str(a) for a in f.arguments))


_values = st.one_of(st.text(max_size=200), st.text(alphabet="0123456789/-.:,$ apmAPM", max_size=30),
                    st.from_regex(r"(next|last|this)? ?(monday|q[1-4]|march|week|year)( \d{1,4})?", fullmatch=True))


@pytest.mark.parametrize("name", sorted(NORMALIZERS))
@settings(suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(text=_values)
def test_every_normaliser_reads_any_string_without_raising(name, text):
    values = {"values": ["chat", "phone", "email"], "synonyms": {"chat": ["live chat"]}}
    result = NORMALIZERS[name](text, **values)
    assert result is None or isinstance(result, (str, tuple))


@settings(suppress_health_check=[HealthCheck.too_slow])
@given(text=_values)
def test_the_date_readers_read_any_string_without_raising(text):
    period = dates.resolve_period(text, TODAY)
    assert period is None or period.start <= period.end or period.start > period.end  # a value, not a crash
    dates.resolve_future_day(text, TODAY)


@st.composite
def _request_ir(draw):
    """Valid IR facts for a pack's goal with any words as values: what a translator may write."""
    name = draw(st.sampled_from(PACKS))
    pack = load_pack(name)
    goal = draw(st.sampled_from(pack.requestable_goals()))
    lines = [f"_goal(g1, {goal})."]
    for predicate in draw(st.lists(st.sampled_from(pack.goal_takes(goal) or ["_goal"]), max_size=6, unique=True)):
        if predicate != "_goal":
            lines.append(f"{predicate}(g1, {draw(_quoted)}).")
    return name, "\n".join(lines)


@settings(max_examples=settings().max_examples // 2 or 1, deadline=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(_request_ir())
def test_any_values_go_through_the_symbolic_stages_and_fast_downward_without_an_internal_error(request):
    name, ir = request
    run = run_pipeline("fuzz", name, TODAY.isoformat(), ir=ir)
    assert run.status in ("succeeded", "failed")
    assert run.failure is None or run.failure.kind != "internal", (ir, run.failure)
    if run.status == "succeeded":
        assert "(define (problem" in run.task_pddl.text and run.plan is not None


def _paths(node, prefix=()):
    yield prefix
    if isinstance(node, dict):
        for key, value in node.items():
            yield from _paths(value, (*prefix, key))
    elif isinstance(node, list):
        for i, value in enumerate(node):
            yield from _paths(value, (*prefix, i))


PACK_YAML = (PROJECT_ROOT / "domains" / "restaurant_reservation" / "pack.yaml").read_text()
PACK_PATHS = [p for p in _paths(yaml.safe_load(PACK_YAML)) if p]
_junk = st.one_of(st.none(), st.integers(), st.floats(allow_nan=False), st.text(max_size=40), st.booleans(),
                  st.lists(st.text(max_size=10), max_size=3), st.dictionaries(st.text(max_size=8), st.text(max_size=8), max_size=2))


@st.composite
def _mutated_pack(draw, base: str = PACK_YAML, paths: list = PACK_PATHS):
    """A YAML document mutated: a value replaced by junk or a key dropped, or bytes inserted anywhere."""
    if draw(st.booleans()):  # a structural change: a value replaced by junk, or a key dropped
        data = copy.deepcopy(yaml.safe_load(base))
        path = draw(st.sampled_from(paths))
        parent = data
        for part in path[:-1]:
            parent = parent[part]
        if draw(st.booleans()) and isinstance(parent, dict):
            del parent[path[-1]]
        else:
            parent[path[-1]] = draw(_junk)
        return yaml.safe_dump(data, sort_keys=False)
    at = draw(st.integers(0, len(base)))  # a textual change: bytes inserted anywhere
    return base[:at] + draw(st.text(max_size=20)) + base[at + draw(st.integers(0, 20)):]


@pytest.fixture(scope="module")
def pack_copy(tmp_path_factory):
    import shutil

    root = tmp_path_factory.mktemp("packs")
    for folder in ("domains", "asp_rules", "pddl"):
        shutil.copytree(PROJECT_ROOT / folder / "restaurant_reservation", root / folder / "restaurant_reservation")
    return root


@settings(deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(text=_mutated_pack())
def test_a_mutated_pack_is_a_pack_error_with_file_and_line_never_a_traceback(pack_copy, monkeypatch, text):
    monkeypatch.setenv("NESYPLAN_PACKS_DIR", str(pack_copy))
    yaml_path = pack_copy / "domains" / "restaurant_reservation" / "pack.yaml"
    yaml_path.write_text(text, encoding="utf-8")
    pack_module._load_pack_cached.cache_clear()
    try:
        load_pack("restaurant_reservation")
    except PackError as exc:
        assert exc.problems and all(file == str(yaml_path) and isinstance(line, int) and line >= 1 and message
                                    for file, line, message in exc.problems), exc.problems
        return
    problems = validate_pack("restaurant_reservation")  # loads: the validator reports, never raises
    assert all(p.message for p in problems)



SPEC_YAML = (PROJECT_ROOT / "domains" / "_specs" / "restaurant_reservation.pdl.yaml").read_text()
SPEC_PATHS = [p for p in _paths(yaml.safe_load(SPEC_YAML)) if p]


@settings(deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(text=_mutated_pack(SPEC_YAML, SPEC_PATHS))
def test_a_mutated_workflow_spec_is_refused_at_a_line_or_read_never_a_traceback(tmp_path, text):
    from pipeline.authoring.workflow_packs import read_workflow
    from pipeline.packs.flows import FlowSpecError

    path = tmp_path / "spec.pdl.yaml"
    path.write_text(text, encoding="utf-8")
    try:
        read_workflow(path)
    except FlowSpecError as exc:
        for line in str(exc).splitlines():
            if line.startswith(str(path)):  # each problem begins at its file:line (a message may wrap)
                assert int(line[len(str(path)) + 1:].split(":")[0]) >= 1, line
        assert str(exc).startswith(f"{path}:"), str(exc)
