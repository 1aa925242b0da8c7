"""A pack brought through the API: an OpenAPI document, an SGD schema or a pack archive, made into
validated pack versions, or refused with every problem's file and line.

An uploaded pack is code the workers run: its rules go to clingo, its domain to the planner, its prompt
template to jinja2. So before anything parses them: rules hold plain rules, `#show` and `#defined` only
(clingo's `#script` runs Python, `#include` reads a file of the worker's disk, `#external` opens the
program to outside truth values); the domain is read by unified-planning and the template rendered in
jinja2's sandbox by `validate`. The API runs this module in a process of its own (`python -m
pipeline.authoring.uploads`), under a time and memory limit: a hostile upload costs that process only.

>>> kind_of(b'{"openapi": "3.1.0", "paths": {}}')
'openapi'
>>> kind_of(b'[{"service_name": "Shop_1", "slots": [], "intents": []}]')
'sgd'
>>> kind_of(b"PK\\x03\\x04...")
'archive'
"""

from __future__ import annotations

import json
import re
import sys
import tempfile
from pathlib import Path

import yaml
from clingo import ast

from pipeline.packs.pack import NAME, PackError, using_packs_root
from pipeline.packs.versions import PackFiles, VersionError, installed_files, pack_name_of, read_archive, write_version

KINDS = ("openapi", "sgd", "archive")
# Statements a rule file of an uploaded pack may hold (clingo AST types); comments are dropped by the parser.
ALLOWED_STATEMENTS = {ast.ASTType.Rule, ast.ASTType.ShowSignature, ast.ASTType.ShowTerm, ast.ASTType.Defined,
                      ast.ASTType.Comment}
_INCLUDE = re.compile(rb"#\s*include\b")


class UploadRefused(Exception):
    """The upload makes no valid pack: `problems` holds (file in the pack, line or None, message)."""

    def __init__(self, problems: list[tuple[str, int | None, str]]):
        super().__init__(f"{problems[0][0] or 'the upload'}: {problems[0][2]}" if problems else "refused")
        self.problems = problems


def kind_of(data: bytes) -> str:
    """What an upload is, from its bytes: a zip or tar archive, an OpenAPI document, an SGD schema."""
    if data[:4] == b"PK\x03\x04" or data[:2] == b"\x1f\x8b" or data[257:262] == b"ustar":
        return "archive"
    try:
        document = yaml.safe_load(data.decode("utf-8"))
    except (UnicodeDecodeError, yaml.YAMLError) as exc:
        raise UploadRefused([("", None, f"neither an archive nor a JSON or YAML document: {exc}")]) from None
    if isinstance(document, dict) and ("openapi" in document or "swagger" in document):
        return "openapi"
    if isinstance(document, list) and document and all(isinstance(s, dict) and "service_name" in s for s in document):
        return "sgd"
    raise UploadRefused([("", None, "neither an archive, an OpenAPI document (no `openapi:` or `swagger:` key) "
                                    "nor an SGD schema (a list of services with `service_name`)")])


def rule_problems(files: PackFiles) -> list[tuple[str, int | None, str]]:
    """What in the rule files is more than plain rules (checked before clingo reads them at all)."""
    problems: list[tuple[str, int | None, str]] = []
    for path in sorted(p for p in files if p.startswith("rules/")):
        text = files[path]
        include = _INCLUDE.search(text)
        if include:
            problems.append((path, text.count(b"\n", 0, include.start()) + 1,
                             "#include: a rule file may not read other files"))
            continue
        messages: list[str] = []

        def judge(statement, path=path):
            kind = statement.ast_type
            if kind == ast.ASTType.Program and statement.name == "base" and not statement.parameters:
                return
            if kind not in ALLOWED_STATEMENTS:
                word = {ast.ASTType.Script: "#script", ast.ASTType.External: "#external",
                        ast.ASTType.Program: "#program"}.get(kind, str(kind).rsplit(".", 1)[-1])
                problems.append((path, statement.location.begin.line,
                                 f"{word}: an uploaded rule file holds plain rules, #show and #defined only"))
        try:
            ast.parse_string(text.decode("utf-8"), judge, logger=lambda _code, message: messages.append(message))
        except RuntimeError:
            for message in messages or ["syntax error"]:
                found = re.match(r"[^:]*:(\d+):\d+(?:-\d+)?: (.*)", message.strip())
                problems.append((path, int(found[1]), found[2].strip()) if found else (path, None, message.strip()))
    return problems


def _version_path(file: str, scratch: str, name: str) -> str:
    """A validation problem's file as the path inside the version (not the scratch folder's)."""
    relative = file.replace(scratch, "").lstrip("/")
    for prefix, inside in ((f"domains/{name}/", ""), (f"asp_rules/{name}/", "rules/"), (f"pddl/{name}/", "")):
        if relative.startswith(prefix):
            return inside + relative.removeprefix(prefix)
    return relative


def validated(files: PackFiles) -> tuple[str, PackFiles]:
    """(name, files) of a version that `nesyplan validate` passes; UploadRefused otherwise."""
    from pipeline.authoring.validate import validate_pack

    try:
        name = pack_name_of(files)
        problems = rule_problems(files)
        if problems:
            raise UploadRefused(problems)
        with tempfile.TemporaryDirectory(prefix="nesyplan-upload-") as scratch:
            write_version(Path(scratch), files)
            with using_packs_root(Path(scratch)):
                found = validate_pack(name)
        problems = [(_version_path(p.file, scratch, name), p.line, p.message.replace(scratch + "/", ""))
                    for p in found]
    except VersionError as exc:
        raise UploadRefused(exc.problems) from None
    if problems:
        raise UploadRefused(problems)
    return name, files


def import_upload(data: bytes, kind: str | None = None, name: str | None = None,
                  services: list[str] | None = None) -> list[tuple[str, PackFiles, str]]:
    """(name, files, source) of each pack the upload makes, every one validated."""
    kind = kind or kind_of(data)
    if kind not in KINDS:
        raise UploadRefused([("", None, f"unknown kind {kind!r} ({', '.join(KINDS)})")])
    if name is not None and not NAME.fullmatch(name):
        raise UploadRefused([("", None, f"{name!r} is no pack name (lower case letters, digits and _)")])
    if kind == "archive":
        try:
            files = read_archive(data)
        except VersionError as exc:
            raise UploadRefused(exc.problems) from None
        pack_name, files = validated(files)
        if name is not None and name != pack_name:
            raise UploadRefused([("pack.yaml", None, f"the archive's pack is {pack_name!r}, not {name!r}")])
        return [(pack_name, files, "a pack archive")]
    return _imported(data, kind, name, services)


def _imported(data: bytes, kind: str, name: str | None, services: list[str] | None) -> list[tuple[str, PackFiles, str]]:
    """Run the importer into a scratch packs root, then check what it wrote as any upload is checked."""
    from pipeline.authoring.openapi_packs import import_openapi
    from pipeline.authoring.sgd_packs import import_services
    from pipeline.packs.openapi_spec import OpenApiError
    from pipeline.packs.sgd_schema import SgdSchemaError

    with tempfile.TemporaryDirectory(prefix="nesyplan-import-") as scratch:
        source = Path(scratch) / ("upload.json" if data.lstrip()[:1] in (b"{", b"[") else "upload.yaml")
        source.write_bytes(data)
        root = Path(scratch) / "packs"
        try:
            if kind == "openapi":
                written = [import_openapi(source, root, name or None)[1]["name"]]
            else:
                written = list(import_services(source, root, services or None))
        except (OpenApiError, SgdSchemaError, PackError) as exc:
            raise UploadRefused([("", None, str(exc).replace(str(source), "the upload").replace(scratch + "/", ""))]) from None
        if kind == "sgd" and name is not None:
            raise UploadRefused([("", None, "an SGD schema names its packs by its services: no name is given")])
        what = "an OpenAPI document" if kind == "openapi" else "an SGD schema"
        made = [(pack, installed_files(pack, root), what) for pack in written]
    # The importer wrote only what `validate` passed; its rules are held to an upload's rules all the same.
    problems = [problem for _, files, _ in made for problem in rule_problems(files)]
    if problems:
        raise UploadRefused(problems)
    return made


def main() -> None:
    """The upload on stdin; one JSON object on stdout: {"packs": [...]} or {"problems": [...]}."""
    import argparse

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--kind", choices=KINDS)
    parser.add_argument("--name")
    parser.add_argument("--service", action="append")
    args = parser.parse_args()
    try:
        packs = import_upload(sys.stdin.buffer.read(), args.kind, args.name, args.service)
        out = {"packs": [{"name": name, "source": source, "files": {p: c.decode("utf-8") for p, c in files.items()}}
                         for name, files, source in packs]}
    except UploadRefused as exc:
        out = {"problems": [{"file": f, "line": line, "message": m} for f, line, m in exc.problems]}
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()
