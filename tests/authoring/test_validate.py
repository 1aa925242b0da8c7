"""`nesyplan validate`: a broken pack gives a clear error naming the file and line."""

import shutil

import pytest
from typer.testing import CliRunner

from nesyplan.cli import app
from pipeline.authoring.validate import validate_pack
from pipeline.packs.pack import PROJECT_ROOT, pack_names


@pytest.fixture
def pack_copy(tmp_path, monkeypatch):
    """A copy of the quickbooks pack in a packs dir of its own, to break."""
    for part in ("domains", "asp_rules", "pddl"):
        shutil.copytree(PROJECT_ROOT / part / "quickbooks", tmp_path / part / "quickbooks")
    monkeypatch.setenv("NESYPLAN_PACKS_DIR", str(tmp_path))
    return tmp_path


def edit(path, old, new):
    text = path.read_text()
    assert old in text, f"{old!r} not in {path}"
    path.write_text(text.replace(old, new, 1))


def line_of(path, needle):
    return next(i for i, line in enumerate(path.read_text().splitlines(), 1) if needle in line)


def problems(name="quickbooks"):
    return [str(p) for p in validate_pack(name)]


def test_the_shipped_pack_is_consistent(pack_copy):
    assert problems() == []


@pytest.mark.parametrize("name", pack_names())
def test_every_installed_pack_validates(name):
    """Flow packs also plan every intent and have each plan judged against the flow spec."""
    assert problems(name) == []


def test_goal_naming_an_unknown_api(pack_copy):
    yaml_file = pack_copy / "domains/quickbooks/pack.yaml"
    edit(yaml_file, "api: help_api", "api: helpp_api")
    line = line_of(yaml_file, "api: helpp_api")
    assert f"{yaml_file}:{line}: goal product_help names unknown api 'helpp_api'" in problems()


def test_invalid_yaml_points_at_its_line(pack_copy):
    yaml_file = pack_copy / "domains/quickbooks/pack.yaml"
    edit(yaml_file, "  charge_lookup:\n", "  charge_lookup: [\n")
    found = problems()
    assert len(found) == 1 and found[0].startswith(f"{yaml_file}:") and "invalid YAML" in found[0]


def test_rule_syntax_error_points_at_its_line(pack_copy):
    rules = pack_copy / "asp_rules/quickbooks/constraints.lp"
    edit(rules, "has(G, A) :- arg(G, A, _).", "has(G, A) :- arg(G, A, _)")
    found = problems()
    assert any(p.startswith(f"{rules}:") and "syntax error" in p for p in found), found


def test_an_ir_predicate_no_rule_reads(pack_copy):
    rules = pack_copy / "asp_rules/quickbooks/ir_to_domain.lp"
    edit(rules, "given(G, help_topic, V)          :- _help_topic(G, V).\n", "")
    assert any("no rule reads IR predicate _help_topic/2" in p for p in problems())


def test_a_rule_reading_an_unknown_predicate_or_helper(pack_copy):
    rules = pack_copy / "asp_rules/quickbooks/normalize.lp"
    edit(rules, "S = @period_start(P, T).", "S = @period_begin(P, T), _perod(G, P).")
    found = problems()
    line = line_of(rules, "@period_begin")
    assert f"{rules}:{line}: rule calls @period_begin, which is no helper" in found
    assert f"{rules}:{line}: rule reads _perod/2, which is not an IR predicate of the pack" in found


def test_an_action_with_the_wrong_arity(pack_copy):
    domain = pack_copy / "pddl/quickbooks/domain.pddl"
    edit(domain, ":parameters (?c - call ?topic - var ?out - var)", ":parameters (?c - call ?out - var)")
    edit(domain, "(wants_help ?c) (arg1 ?c ?topic) (output ?c ?out)\n                       "
                 "(has_type ?topic help_topic) (has_value ?topic))", "(wants_help ?c) (output ?c ?out))")
    line = line_of(domain, "(:action help_api")
    assert any(p.startswith(f"{domain}:{line}: action help_api has 2 parameters") for p in problems())


def test_an_error_atom_without_description(pack_copy):
    rules = pack_copy / "asp_rules/quickbooks/constraints.lp"
    rules.write_text(rules.read_text() + "\nerror(too_many_goals) :- 5 < #count { G : goal(G, _) }.\n")
    assert any("error atom 'too_many_goals' has no description" in p for p in problems())


def test_cli_validate_reports_and_fails(pack_copy):
    edit(pack_copy / "domains/quickbooks/pack.yaml", "normalizer: amount", "normalizer: money")
    result = CliRunner().invoke(app, ["validate", "quickbooks"])
    assert result.exit_code == 1
    assert "unknown normalizer 'money'" in result.output


def test_cli_validate_unknown_domain():
    result = CliRunner().invoke(app, ["validate", "no_such_pack"])
    assert result.exit_code == 1 and "unknown domain 'no_such_pack'" in result.output


def test_a_template_variable_missing(pack_copy):
    template = pack_copy / "domains/quickbooks/prompts/translate.j2"
    template.write_text(template.read_text() + "\n{{ tone_of_voice }}\n")
    assert any("template variable missing: 'tone_of_voice'" in p for p in problems())


def test_a_template_syntax_error_points_at_its_line(pack_copy):
    template = pack_copy / "domains/quickbooks/prompts/translate.j2"
    lines = template.read_text().splitlines()
    lines[2] += " {% for x in %}"
    template.write_text("\n".join(lines))
    assert any(p.startswith(f"{template}:3: template syntax") for p in problems())


def test_a_lexicon_list_the_english_layer_does_not_have(pack_copy):
    yaml_file = pack_copy / "domains/quickbooks/pack.yaml"
    edit(yaml_file, "  event_nouns: [", "  event_noun: [")
    line = line_of(yaml_file, "event_noun: [")
    found = problems()
    assert any(p.startswith(f"{yaml_file}:{line}: lexicon: no English word list 'event_noun'") and "event_nouns" in p
               for p in found), found
