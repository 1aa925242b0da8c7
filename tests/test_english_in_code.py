"""English belongs in `pipeline/language/lexicon/` (or in learned weights), not in code: this counts the word
sets and phrase regexes written into the code and fails when there are more than there were. Lower
`ENGLISH_IN_CODE` when one moves to the lexicon; `python tests/test_english_in_code.py` lists them.

What counts: a literal set, list or tuple of two or more word strings, a string of two or more words split
into a set of them (`"a an the".split()`), or a regex written as a literal (`re.compile`, `re.search`, ...),
where one of its words is a closed-class English word (the lexicon's
function words, pronouns, subordinators) or two of its words are in any list of the lexicon. Code
vocabularies (run states) share no such words and are not counted, nor are the names of code's cases the
code declares though they are words: the values of a `Literal[...]` type the scanned code declares (a reply's
kinds, a REST operation's kinds: "create", "list"), and a set of them; the HTTP methods; the JSON types of a
schema or a body;
the lexicon's own lists are the yardstick, so a word moved there is recognised everywhere else.
"""

import ast
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SCANNED = ("pipeline", "nesyplan", "workers")
LEXICON = ROOT / "pipeline" / "language" / "lexicon"
CLOSED_CLASSES = ("function_words", "subject_pronouns", "subordinators", "relative_pronouns")
ENGLISH_IN_CODE = 0  # 2026-12-07 (eighteenth session: every list in the lexicon, code vocabularies as Literal types); only ever lowered
_WORD = re.compile(r"^[a-z][a-z' ]*[a-z]$")
_REGEX_CALLS = {"compile", "search", "match", "fullmatch", "sub", "subn", "findall", "finditer", "split"}


def lexicon_words() -> tuple[set[str], set[str]]:
    """(closed-class words, every word of the lexicon): the words of every string its files hold."""
    from pipeline.language.words import _lexicon, known_lists

    def strings(node):
        if isinstance(node, str):
            yield node
        elif isinstance(node, dict):
            for value in node.values():
                yield from strings(value)
        elif isinstance(node, list):
            for item in node:
                yield from strings(item)

    closed, every = set(), set()
    for name in known_lists():
        words = {w for s in strings(_lexicon(name)) for w in re.findall(r"[a-z']+", s.lower())}
        every |= words
        if name in CLOSED_CLASSES:
            closed |= words
    return closed, every


def _literal(node) -> str | None:
    """A string the code writes out, joined where it is added up or formatted."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        parts = [_literal(node.left), _literal(node.right)]
        return "".join(p for p in parts if p) if any(p is not None for p in parts) else None
    if isinstance(node, ast.JoinedStr):
        return "".join(v.value for v in node.values if isinstance(v, ast.Constant))
    return None


def _pattern_words(pattern: str) -> list[str]:
    """The words a regex matches literally (its classes, escapes, flags and group names taken out)."""
    pattern = re.sub(r"\[[^\]]*\]|\\[a-zA-Z]|\(\?[a-zA-Z]+\)|\(\?P?<[^>]*>", " ", pattern)
    return [w.lower() for w in re.findall(r"[A-Za-z]{2,}", pattern)]


def _code_vocabularies() -> set[str]:
    """The names of code's cases that are also words, as the code declares them: a REST operation's kinds,
    the HTTP methods, the JSON types a schema or a request body takes."""
    from typing import get_args

    from pipeline.packs.openapi_spec import METHODS, Kind
    from pipeline.packs.pack import HttpBinding, RestSemantics

    body_types = get_args(get_args(HttpBinding.model_fields["types"].annotation)[1])
    return {*get_args(RestSemantics.model_fields["action"].annotation), *METHODS, *get_args(Kind), *body_types}


def _is_literal_type(node) -> bool:
    return isinstance(node, ast.Subscript) and (
        isinstance(node.value, ast.Name) and node.value.id == "Literal"
        or isinstance(node.value, ast.Attribute) and node.value.attr == "Literal")


def _declared_literals(trees) -> tuple[list[set[str]], set[int]]:
    """The value sets of the `Literal[...]` types the code declares, and the ids of their value tuples: a
    code's own cases, named in code (a reply's kinds), are no English word set."""
    declared, nodes = [], set()
    for tree in trees:
        for node in ast.walk(tree):
            if _is_literal_type(node):
                values = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
                declared.append({v.value for v in values if isinstance(v, ast.Constant) and isinstance(v.value, str)})
                nodes.add(id(node.slice))
    return declared, nodes


def english_in_code() -> list[str]:
    """`path:line: words...` for each English word set or phrase regex in the scanned code."""
    closed, every = lexicon_words()
    kinds = _code_vocabularies()
    trees = {path: ast.parse(path.read_text(encoding="utf-8"))
             for folder in SCANNED for path in sorted((ROOT / folder).rglob("*.py")) if LEXICON not in path.parents}
    declared, declaring = _declared_literals(trees.values())
    found = []
    for path, tree in trees.items():
        for node in ast.walk(tree):
            words = None
            if id(node) in declaring:
                continue
            if isinstance(node, (ast.Set, ast.List, ast.Tuple)) and len(node.elts) >= 2:
                strings = [_literal(e) for e in node.elts]
                if all(s is not None and _WORD.match(s) for s in strings) \
                        and not any(set(strings) <= values for values in declared):
                    words = [w for s in strings for w in s.split()]
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.args \
                    and isinstance(node.func.value, ast.Name) and node.func.value.id == "re" \
                    and node.func.attr in _REGEX_CALLS and _literal(node.args[0]) is not None:
                words = _pattern_words(_literal(node.args[0]))
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "split" \
                    and not node.args and _literal(node.func.value) is not None:
                split = _literal(node.func.value).split()
                words = split if len(split) >= 2 and all(_WORD.match(w) for w in split) else None
            if words and not set(words) <= kinds and (closed & set(words) or len(every & set(words)) >= 2):
                found.append(f"{path.relative_to(ROOT)}:{node.lineno}: {' '.join(words[:8])}")
    return found


def test_no_more_english_in_code_than_there_was():
    found = english_in_code()
    assert len(found) <= ENGLISH_IN_CODE, (
        f"{len(found)} English word sets and phrase regexes in code, at most {ENGLISH_IN_CODE}: put the new "
        "words in pipeline/language/lexicon/ and read them with word_list\n" + "\n".join(found))


def test_a_word_set_or_regex_of_english_is_found_and_a_code_vocabulary_is_not(tmp_path, monkeypatch):
    (tmp_path / "pipeline").mkdir()
    (tmp_path / "pipeline" / "reader.py").write_text(
        'import re\nSTATES = ("queued", "running", "failed")\nSO = {"so", "because"}\n'
        'UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}")\nTHEN = re.compile(r"\\s+(?:and then|but)\\s+")\n'
        'KINDS = ("list", "search")\nBESIDE = frozenset("up out off down".split())\n'
        'COLUMNS = "uuid sku qty".split()\nMODES = "a b".split(",")\n'
        'Kind = Literal["up", "off"]\nCASES = ("off", "up")\n')
    monkeypatch.setattr(sys.modules[__name__], "ROOT", tmp_path)
    found = english_in_code()
    # the reasons, the conjunctions and the particles; not the run states, the identifier's pattern, the
    # operation kinds, a code vocabulary split from one string, a split on a mark, nor a Literal type's values
    # and a set of them
    assert sorted(f.split(":")[1] for f in found) == ["3", "5", "7"]


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    listed = english_in_code()
    print("\n".join(listed) + f"\n{len(listed)} English word sets and phrase regexes in code")
