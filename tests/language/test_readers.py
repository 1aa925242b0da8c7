"""The value readers' table: every type a pack may name has one reader, an unknown type is a clear error,
and the table (not a consumer's comparison of names) decides how a type behaves downstream."""

from datetime import date

import pytest

from pipeline.authoring.validate import IR_EXTRA_NORMALIZERS
from pipeline.language.readers import READERS, reader, value_readings
from pipeline.packs.pack import ArgumentType, load_pack
from pipeline.values.normalizers import NORMALIZERS

TODAY = date(2024, 10, 15)


def test_every_type_a_pack_may_name_has_a_reader():
    assert set(NORMALIZERS) | set(IR_EXTRA_NORMALIZERS) == set(READERS)


def test_an_unknown_type_is_a_clear_error():
    with pytest.raises(ValueError, match="no value reader for normaliser 'colour'.*amount"):
        reader("colour")


def test_a_whole_answer_reads_by_its_type():
    day = ArgumentType(normalizer="future_date")
    assert reader("future_date").whole("next friday", day, TODAY) == date(2024, 10, 18)
    assert reader("period").whole("last quarter", None, TODAY) == (date(2024, 7, 1), date(2024, 9, 30))
    assert reader("phone").whole("call me at 555 010 7788", ArgumentType(normalizer="phone"), TODAY) is not None
    assert reader("full_name").whole("Ana Ruiz", None, TODAY) is None  # its parts are read, not the whole


def test_the_table_says_which_types_are_alike_and_which_any_words_could_be():
    assert {reader(n).family for n in ("date", "period", "future_date")} == {"date"}
    assert reader("full_name").family == reader("person_name").family
    assert [n for n, r in READERS.items() if r.free] == ["lowercase_text", "title_text", "search_text", "person_name",
                                                        "full_name"]
    assert reader("search_text").family == reader("title_text").family  # what a search looks for is a name's kind
    assert reader("url").forced and not reader("url").judged("https://example.org/a")  # no slot of SGD's is one
    assert reader("amount").forced and not reader("integer").forced


def test_each_argument_is_read_by_its_own_types_reader():
    tables = load_pack("restaurant_reservation")
    found = value_readings(tables, "a table for 4 at 7:30pm next friday", TODAY)
    assert set(found) == set(tables.spec.arguments) | set(tables.spec.ir_extra)
    kept = {name: {r.value for r in readings.items} for name, readings in found.items()}
    assert "4" in kept["party_size"] and "19:30" in kept["reservation_time"]
    assert "4" not in kept["reservation_time"] and "19:30" not in kept["party_size"]


def test_a_pack_brings_its_own_words_to_the_english_lists():
    """The quickbooks pack adds its event nouns: the time of its audit is when the audit happens, not a period
    of the records; without the pack's words the same time is a period."""
    books = load_pack("quickbooks")
    text = "the audit next week: expenses please"
    assert [r.text for r in value_readings(books, text, TODAY)["period"].items] == []
    bare = books.model_copy(update={"spec": books.spec.model_copy(update={"lexicon": {}})})
    assert [r.text for r in value_readings(bare, text, TODAY)["period"].items] == ["next week"]


def _with_arguments(pack, **types):
    spec = pack.spec.model_copy(update={"arguments": {n: ArgumentType(normalizer=t) for n, t in types.items()}})
    return pack.model_copy(update={"spec": spec})


def test_a_year_argument_reads_years_and_a_count_reads_counts():
    pack = _with_arguments(load_pack("restaurant_reservation"), release_year="integer", party_size="integer")
    found = value_readings(pack, "12 songs from '15 and a few from 2009", date(2019, 3, 1))
    years = {r.text: r.value for r in found["release_year"].items}
    assert years == {"'15": "2015", "2009": "2009"}  # two digits after an apostrophe; "12" is no year
    assert [r.value for r in value_readings(pack, "a table for 12", TODAY)["party_size"].items] == ["12"]
    # the grammar writes the year, not the words the count normaliser would read as 15 or 9
    assert "'15" not in found["release_year"].strings() and "2015" in found["release_year"].strings()
    back = value_readings(pack, "a record from nine years back", date(2019, 3, 1))["release_year"]
    assert back.strings() == ["2010"]
    later = value_readings(pack, "a record from '98", date(2019, 3, 1))["release_year"].items
    assert [r.value for r in later] == ["1998"]  # the latest such year not after this one


def test_a_number_that_names_something_counts_nothing():
    pack = _with_arguments(load_pack("restaurant_reservation"), party_size="integer")

    def counts(text: str) -> list[str]:
        return [r.value for r in value_readings(pack, text, TODAY)["party_size"].items]

    # the first word of a name written with capitals, and a number after a number sign, are names
    assert counts("a cab to Two Rivers Mall, unit #12, for 3 of us") == ["3"]
    assert counts("a cab to two rivers for 3 of us") == ["2", "3"]
    assert counts("Two of us, at Five Guys") == ["2"]


def test_a_month_that_ends_a_name_is_no_date_and_a_greeted_name_no_value():
    pack = _with_arguments(load_pack("restaurant_reservation"), host="title_text", season="period")

    def read(text: str, argument: str) -> list[str]:
        return [r.text for r in value_readings(pack, text, TODAY)[argument].items]

    # a month's name after a word written with a capital inside a sentence ends a name
    assert "Nora June" in read("a show hosted by Nora June please", "host")
    assert read("a show hosted by Nora June please", "season") == []
    # a month stays a month after a day, a function word, or at a sentence's start
    assert read("a trip on Friday June 6", "season") == ["June 6"]
    assert read("sales In June please", "season") == ["In June"] and read("June is when we go", "season") == ["June"]
    # a name right after a greeting is whom the user speaks to
    assert read("Hello, Nora, a table please", "host") == []
    assert read("a table at Nora, please", "host") == ["Nora"]


def test_a_number_that_begins_a_name_is_no_identifier_and_the_name_is_read_whole():
    pack = _with_arguments(load_pack("restaurant_reservation"), show_id="identifier", query="title_text")

    def read(text: str, argument: str) -> list[str]:
        return [r.text for r in value_readings(pack, text, TODAY)[argument].items if r.kept]

    assert read("a poster of 4 Quiet Rooms", "show_id") == []  # the name's first word: no id of anything
    assert read("a poster of 4 Quiet Rooms", "query") == ["4 Quiet Rooms"]  # whole, not its capitalised part
    assert read("a poster of show 4417", "show_id") == ["4417"]
    assert read("the poster of show 4417 please", "show_id") == ["4417"]


def _normaliser_name_comparisons() -> list[str]:
    """`path:line` of each comparison of a normaliser's name with a written name outside the readers table."""
    import ast
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]

    def named_normalizer(node) -> bool:
        return isinstance(node, ast.Name) and node.id == "normalizer" \
            or isinstance(node, ast.Attribute) and node.attr == "normalizer"

    def written(node) -> bool:
        if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
            return bool(node.elts) and all(written(e) for e in node.elts)
        return isinstance(node, ast.Constant) and isinstance(node.value, str)

    found = []
    for path in sorted((root / "pipeline").rglob("*.py")):
        if path.name == "readers.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Compare):
                sides = [node.left, *node.comparators]
                if any(named_normalizer(s) for s in sides) and any(written(s) for s in sides):
                    found.append(f"{path.relative_to(root)}:{node.lineno}")
    return found


# Where a type's name may be compared: the importers choose and check the types they write; values/canonical.py
# writes a value in its type's one form and language/names.py reads a name's parts: the table is built on both.
NAMING_TYPES = ("pipeline/authoring/", "pipeline/values/canonical.py:", "pipeline/language/names.py:")


def test_what_a_consumer_asks_of_a_type_is_the_readers_table_not_its_name():
    found = _normaliser_name_comparisons()
    assert [f for f in found if not f.startswith(NAMING_TYPES)] == []
    assert any(f.startswith("pipeline/authoring/") for f in found)  # the scan sees comparisons where they are
