"""Stage `check IR`: plain facts over the pack's predicates pass; anything else is rejected by name,
before clingo runs anything."""

import pytest

from pipeline.records import StageError
from pipeline.stages.check import MAX_FACTS, check_ir


def rejected(ir, pack) -> str:
    with pytest.raises(StageError) as info:
        check_ir(ir, pack)
    assert info.value.stage == "check" and info.value.kind == "ir_rejected"
    return info.value.message


def test_plain_facts_pass_and_are_rerendered(pack):
    checked = check_ir('_goal(g1, product_help). % a comment\n_help_topic(g1, "say \\"hi\\"").', pack)
    assert [f.predicate for f in checked.facts] == ["_goal", "_help_topic"]
    assert checked.facts[1].arguments == ["g1", 'say "hi"']
    assert checked.text == '_goal(g1, product_help).\n_help_topic(g1, "say \\"hi\\"").\n'


@pytest.mark.parametrize("ir, named", [
    ('#script (python)\nimport os\nos.system("touch /tmp/pwned")\n#end.', "#script"),
    ('#include "/etc/passwd".', "#include"),
    ("#external _goal(g1, advice).", "#external"),
    ("#const n = 3.", "#const"),
    ("#program other.", "#program"),
    ("#show _goal/2.", "#show"),
    ('_goal(g1, advice). #script (lua) os.exit() #end.', "#script"),
])
def test_directives_are_rejected_by_name(pack, ir, named):
    assert named in rejected(ir, pack)


def test_include_is_rejected_before_the_parser_opens_the_file(pack, tmp_path):
    secret = tmp_path / "secret.lp"
    secret.write_text("_goal(g1, business_advice).")
    assert "#include" in rejected(f'#include "{secret}".', pack)


def test_a_hash_inside_a_string_or_comment_is_only_text(pack):
    checked = check_ir('_goal(g1, product_help). _help_topic(g1, "#script"). % #include "x"', pack)
    assert checked.facts[1].arguments[1] == "#script"


@pytest.mark.parametrize("ir, named", [
    ("_goal(g1, advice) :- foo.", "rule"),
    ("_goal(G, business_advice) :- _goal(G, x).", "rule"),
    (":- _goal(g1, business_advice).", "rule"),
    ("{ _goal(g1, business_advice) }.", "not a fact"),
    ("-_goal(g1, business_advice).", "not a plain fact"),
    ("goal(g1, profit_loss_api).", "unknown predicate goal/2"),
    ("error(x).", "unknown predicate error/1"),
    ("_goal(g1).", "takes 2 arguments"),
    ("_goal(g1, weather_report).", "unknown goal"),
    ("_goal(g1, business_advice). _help_topic(g1, X).", "not a constant"),
    ("_goal(g1, business_advice). _help_topic(g1, f(g(h(x)))).", "not a constant"),
    ("_goal(g1, business_advice). _help_topic(g1, (1..1000000)).", "not a constant"),
    ("_goal(g1, business_advice; g2, business_advice).", "not a plain fact"),
    ('_help_topic("g1", "x").', "goal id"),
    ("_goal(g1, business_advice", "not valid ASP"),
])
def test_non_facts_and_unknown_predicates_are_rejected(pack, ir, named):
    assert named in rejected(ir, pack)


def test_deeply_nested_terms_are_rejected(pack):
    deep = "f(" * 2000 + "x" + ")" * 2000
    assert "not a constant" in rejected(f"_goal(g1, business_advice). _help_topic(g1, {deep}).", pack)


def test_ten_thousand_facts_are_rejected(pack):
    many = "".join(f'_help_topic(g1, "t{i}").\n' for i in range(10_000))
    assert "over the limit" in rejected(many, pack)
    compact = "".join(f"_goal(g{i},product_help)." for i in range(MAX_FACTS + 1))
    assert f"more than {MAX_FACTS} facts" in rejected(compact, pack)


def test_long_values_are_rejected(pack):
    assert "longer than" in rejected(f'_goal(g1, product_help). _help_topic(g1, "{"x" * 1000}").', pack)
