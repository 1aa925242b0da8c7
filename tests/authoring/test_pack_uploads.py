"""Pack versions and uploads without the service: digests, archives read safely, uploaded rules held to
plain rules, validation problems named by their file in the pack, a version loaded on a machine that only
has the store."""

import io
import json
import tarfile
import zipfile

import pytest

from pipeline.authoring.openapi_packs import import_openapi
from pipeline.authoring.uploads import UploadRefused, import_upload, rule_problems
from pipeline.packs.pack import PackError
from pipeline.packs.versions import (MAX_FILE_BYTES, MAX_TOTAL_BYTES, VersionError, archive_of, installed_digest, installed_files,
                                     load_version, read_archive, version_digest)
from tests.authoring.test_openapi_packs import GARAGE, write

RULE = "rules/normalize.lp"


@pytest.fixture(scope="module")
def garage_files(tmp_path_factory):
    """A valid version: the garage spec's pack as the importer writes it."""
    tmp = tmp_path_factory.mktemp("garage")
    import_openapi(write(tmp, GARAGE), tmp / "packs", name="garage")
    return installed_files("garage", tmp / "packs")


def zipped(entries: dict[str, bytes], links: tuple[str, ...] = ()) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        for path, content in entries.items():
            archive.writestr(path, content)
        for path in links:
            info = zipfile.ZipInfo(path)
            info.external_attr = 0o120777 << 16  # a symbolic link's mode
            archive.writestr(info, "/etc/passwd")
    return out.getvalue()


def test_a_version_is_named_by_all_its_files_and_nothing_else(garage_files, tmp_path):
    digest = version_digest(garage_files)
    assert version_digest(dict(sorted(garage_files.items(), reverse=True))) == digest
    changed = {**garage_files, RULE: garage_files[RULE] + b"\n% a comment\n"}
    assert version_digest(changed) != digest
    moved = {("rules/other.lp" if p == RULE else p): c for p, c in garage_files.items()}
    assert version_digest(moved) != digest
    # An archive of the files, read back, is the same version; one top folder around it changes nothing.
    assert version_digest(read_archive(archive_of(garage_files))) == digest
    assert version_digest(read_archive(zipped({f"garage/{p}": c for p, c in garage_files.items()}))) == digest


@pytest.mark.parametrize("entries, links, message", [
    ({"../evil.lp": b"a."}, (), "a path outside the pack"),
    ({"/etc/cron.d/x": b"a."}, (), "a path outside the pack"),
    ({"rules/../../x.lp": b"a."}, (), "a path outside the pack"),
    ({"pack.yaml": b"name: x\n"}, ("rules/link.lp",), "a link"),
    ({"pack.yaml": b"name: x\n", "domain.pddl": b"(define)", "rules/a.lp": b"a.", "bin/run.sh": b"rm -rf /"}, (),
     "not a file a pack has"),
    ({"pack.yaml": b"name: x\n", "domain.pddl": b"(define)", "rules/a.lp": b"\xff\xfe"}, (), "not UTF-8 text"),
    ({"pack.yaml": b"name: x\n", "rules/a.lp": b"a."}, (), "domain.pddl: missing"),
])
def test_an_archive_never_writes_outside_its_pack_nor_holds_what_a_pack_has_not(entries, links, message):
    with pytest.raises(VersionError) as refused:
        read_archive(zipped(entries, links))
    assert any(message in f"{file}: {why}" for file, _, why in refused.value.problems), refused.value.problems


def test_a_tar_with_a_link_or_a_device_is_refused():
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w:gz") as archive:
        info = tarfile.TarInfo("rules/a.lp")
        info.type, info.linkname = tarfile.SYMTYPE, "/etc/passwd"
        archive.addfile(info)
    with pytest.raises(VersionError, match="not a plain file"):
        read_archive(out.getvalue())


def test_a_zip_bomb_is_stopped_by_the_bytes_it_would_write():
    bomb = zipped({"pack.yaml": b"name: x\n", "rules/a.lp": b"%" * (MAX_FILE_BYTES + 10)})
    assert len(bomb) < 100_000  # it compresses to almost nothing
    with pytest.raises(VersionError, match="over"):
        read_archive(bomb)
    many = {f"examples/e{i}.lp": b"%" * (MAX_FILE_BYTES - 1) for i in range(MAX_TOTAL_BYTES // MAX_FILE_BYTES + 1)}
    with pytest.raises(VersionError, match="archive holds over"):
        read_archive(zipped({"pack.yaml": b"name: x\n", **many}))
    with pytest.raises(VersionError, match="broken"):
        read_archive(bomb[:len(bomb) // 2])  # a cut archive is a broken one, never half a pack


@pytest.mark.parametrize("rule, word", [
    ('#script (python)\nimport os\ndef f(): os.system("id")\n#end.\n', "#script"),
    ('#include "/etc/passwd".\n', "#include"),
    ("#external raining.\n", "#external"),
    ("#program step(t).\nholds(t) :- t = 1.\n", "#program"),
    ("#minimize { 1,X : p(X) }.\n", "Minimize"),
])
def test_an_uploaded_rule_file_holds_plain_rules_only(rule, word):
    problems = rule_problems({"rules/ok.lp": b"a :- b.\n#show a/0.\n", "rules/bad.lp": b"% fine\n" + rule.encode()})
    assert [(f, line) for f, line, _ in problems] == [("rules/bad.lp", 2)], problems
    assert word in problems[0][2]


def test_an_upload_that_does_not_validate_names_each_file_and_line_in_the_pack(garage_files):
    broken = {**garage_files, "domain.pddl": b"(define (domain garage)\n  (:predicates (p ?x)\n"}
    with pytest.raises(UploadRefused) as refused:
        import_upload(archive_of(broken))
    assert {file for file, _, _ in refused.value.problems} == {"domain.pddl"}
    reads_nothing = {**garage_files, "rules/extra.lp": b"\n\nfoo(X) :- nothing_defines_this(X).\n"}
    with pytest.raises(UploadRefused) as refused:
        import_upload(archive_of(reads_nothing))
    assert ("rules/extra.lp", 3) in [(f, line) for f, line, _ in refused.value.problems], refused.value.problems


def test_an_uploaded_prompt_template_cannot_reach_python(garage_files):
    escape = b"{{ goals.__class__.__mro__[1].__subclasses__() }}\n"
    with pytest.raises(UploadRefused) as refused:
        import_upload(archive_of({**garage_files, "prompts/translate.j2": escape}))
    assert refused.value.problems[0][0] == "prompts/translate.j2", refused.value.problems


def test_an_openapi_upload_becomes_the_same_files_the_importer_writes(garage_files):
    [(name, files, source)] = import_upload(json.dumps(GARAGE).encode(), name="garage")
    assert name == "garage" and source == "an OpenAPI document"
    def body(files):  # the header names the file it was made from
        return {path: content.split(b"\n", 1)[1] if path == "pack.yaml" else content for path, content in files.items()}
    assert body(files) == body(garage_files)


def test_a_version_not_installed_here_is_fetched_once_and_kept(garage_files, tmp_path, monkeypatch):
    monkeypatch.setenv("NESYPLAN_PACK_CACHE_DIR", str(tmp_path / "cache"))
    digest, fetched = version_digest(garage_files), []

    def fetch(wanted):
        fetched.append(wanted)
        return garage_files if wanted == digest else None

    assert installed_digest("garage") is None  # not installed in this checkout
    pack = load_version("garage", digest, fetch)
    assert "register_car" in pack.spec.apis and fetched == [digest]
    assert load_version("garage", digest, fetch).spec == pack.spec and fetched == [digest]  # kept on disk
    assert (tmp_path / "cache" / digest / "asp_rules" / "garage").is_dir()
    with pytest.raises(PackError, match="neither installed here nor in the pack store"):
        load_version("garage", "0" * 64, fetch)
    # The installed pack is used as it is when the digest is its own.
    assert load_version("quickbooks", installed_digest("quickbooks"), fetch).name == "quickbooks"
    assert fetched == [digest, "0" * 64]


def test_a_run_and_a_session_record_the_version_of_their_pack(tmp_path):
    from typer.testing import CliRunner

    from nesyplan.cli import app
    from pipeline.sessions.engine import SessionEngine

    ir = tmp_path / "ir.lp"
    ir.write_text('_goal(g1, contact_us).\n_contact_channel(g1, "phone").\n')
    shown = CliRunner().invoke(app, ["plan", "call support", "--today", "2024-03-10", "--ir", str(ir), "--json"])
    assert json.loads(shown.stdout)["pack_digest"] == installed_digest("quickbooks"), shown.stdout
    assert SessionEngine("hf").open("quickbooks", "2024-03-10").pack_digest == installed_digest("quickbooks")


def test_every_installed_pack_is_a_version_a_worker_could_fetch_and_strays_are_no_part_of_it(tmp_path):
    from pipeline.packs.pack import pack_names
    from pipeline.packs.versions import check_version_files, write_version

    for name in pack_names():
        check_version_files(installed_files(name))
    root = tmp_path / "packs"
    write_version(root, installed_files("quickbooks"))
    before = installed_digest("quickbooks", root)
    (root / "domains" / "quickbooks" / "pack.yaml~").write_text("an editor's backup")
    (root / "domains" / "quickbooks" / "retriever").mkdir()
    (root / "domains" / "quickbooks" / "retriever" / "model.safetensors").write_bytes(b"\x00\x01")
    assert installed_digest("quickbooks", root) == before == installed_digest("quickbooks")
