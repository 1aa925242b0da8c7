"""A pack version: every file of a pack, named by the digest of them all.

A version is laid out as one folder (`pack.yaml`, `prompts/`, `examples/`, `rules/*.lp`, `domain.pddl`);
on disk the packs root spreads it over `domains/<name>/`, `asp_rules/<name>/` and `pddl/<name>/`. The
digest covers every path and byte, so two workers holding the same digest run the same pack, and a Run
that records it can be planned again after the pack has changed.

>>> files = {"pack.yaml": b"name: shop\\n", "rules/shop.lp": b"ok.\\n", "domain.pddl": b"(define)"}
>>> version_digest(files) == version_digest(dict(reversed(list(files.items()))))
True
>>> len(version_digest(files))
64
"""

from __future__ import annotations

import hashlib
import io
import os
import re
import shutil
import stat
import tarfile
import tempfile
import zipfile
from functools import lru_cache
from pathlib import Path

import yaml

from pipeline.packs.pack import NAME, Pack, PackError, load_pack, load_pack_at, packs_root

PackFiles = dict[str, bytes]

# What an archive or a packs root may give a version, and how much of it.
MAX_FILES = 500
MAX_FILE_BYTES = 4 * 1024 * 1024
MAX_TOTAL_BYTES = 16 * 1024 * 1024
# A path inside a version: plain names under the folders a pack has, nothing else (no `..`, no hidden file).
_PART = r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,99}"
VERSION_PATH = re.compile(rf"(pack\.yaml|overlay\.yaml|domain\.pddl|requests\.jsonl"
                          rf"|prompts/{_PART}\.j2|examples/{_PART}\.lp|rules/{_PART}\.lp)")


class VersionError(PackError):
    """An archive or a set of files that is no pack version (its problems say which file and why)."""


def version_digest(files: PackFiles) -> str:
    """sha256 over every (path, content), in path order: the same files give the same digest anywhere."""
    digest = hashlib.sha256()
    for path in sorted(files):
        content = files[path]
        digest.update(f"{path}\0{len(content)}\0".encode())
        digest.update(content)
    return digest.hexdigest()


def _root_parts(root: Path, name: str) -> list[tuple[Path, str]]:
    """(folder on disk, its prefix in the version) for a pack under a packs root."""
    return [(root / "domains" / name, ""), (root / "asp_rules" / name, "rules/")]


def installed_files(name: str, root: Path | None = None) -> PackFiles:
    """The version files of a pack installed under a packs root (default: this machine's): those a version
    has (VERSION_PATH); a trained retriever beside them is a model of this host, not part of the pack."""
    root = root or packs_root()
    files: PackFiles = {}
    for folder, prefix in _root_parts(root, name):
        if not folder.is_dir():
            continue
        for file in sorted(folder.rglob("*")):
            relative = file.relative_to(folder)
            path = prefix + relative.as_posix()
            if file.is_file() and VERSION_PATH.fullmatch(path):  # not an editor's backup, not a trained model
                files[path] = file.read_bytes()
    pddl = root / "pddl" / name / "domain.pddl"
    if pddl.is_file():
        files["domain.pddl"] = pddl.read_bytes()
    return files


def installed_digest(name: str, root: Path | None = None) -> str | None:
    """The digest of an installed pack, or None when none of that name is installed. Hashed again only
    when one of its files changes (size or time)."""
    root = root or packs_root()
    if not (root / "domains" / name / "pack.yaml").is_file():
        return None
    stamps = []
    for folder, prefix in _root_parts(root, name):
        stamps += [(str(f), f.stat().st_mtime_ns, f.stat().st_size) for f in folder.rglob("*")
                   if f.is_file() and VERSION_PATH.fullmatch(prefix + f.relative_to(folder).as_posix())]
    pddl = root / "pddl" / name / "domain.pddl"
    if pddl.is_file():
        stamps.append((str(pddl), pddl.stat().st_mtime_ns, pddl.stat().st_size))
    return _digest_of_installed(str(root), name, tuple(sorted(stamps)))


@lru_cache(maxsize=64)
def _digest_of_installed(root: str, name: str, _stamps: tuple) -> str:
    return version_digest(installed_files(name, Path(root)))


def check_version_files(files: PackFiles) -> None:
    """Raise VersionError unless the files can be a version: known paths only, UTF-8 text, within the
    limits, with a pack.yaml, a domain.pddl and at least one rule file."""
    problems = [(path, None, "not a file a pack has (pack.yaml, overlay.yaml, domain.pddl, requests.jsonl, "
                             "prompts/*.j2, examples/*.lp, rules/*.lp)")
                for path in files if not VERSION_PATH.fullmatch(path)]
    for path, content in files.items():
        try:
            content.decode("utf-8")
        except UnicodeDecodeError:
            problems.append((path, None, "not UTF-8 text"))
    if len(files) > MAX_FILES:
        problems.append(("", None, f"{len(files)} files: a pack has at most {MAX_FILES}"))
    total = sum(len(c) for c in files.values())
    if total > MAX_TOTAL_BYTES:
        problems.append(("", None, f"{total} bytes: a pack has at most {MAX_TOTAL_BYTES}"))
    for required in ("pack.yaml", "domain.pddl"):
        if required not in files:
            problems.append((required, None, "missing"))
    if not any(p.startswith("rules/") for p in files):
        problems.append(("rules/", None, "no rule file (rules/*.lp)"))
    if problems:
        raise VersionError(f"{problems[0][0] or 'the pack'}: {problems[0][2]}", problems)


def pack_name_of(files: PackFiles) -> str:
    """The name its pack.yaml gives (the folders a version is written to are named by it)."""
    try:
        spec = yaml.safe_load(files.get("pack.yaml", b"").decode("utf-8"))
    except (UnicodeDecodeError, yaml.YAMLError) as exc:
        raise VersionError(f"pack.yaml: invalid YAML: {exc}", [("pack.yaml", None, f"invalid YAML: {exc}")]) from None
    name = spec.get("name") if isinstance(spec, dict) else None
    if not isinstance(name, str) or not NAME.fullmatch(name):
        raise VersionError("pack.yaml: no `name:` (lower case letters, digits and _)",
                           [("pack.yaml", 1, "no `name:` (lower case letters, digits and _)")])
    return name


def write_version(root: Path, files: PackFiles) -> Path:
    """Lay a version out under a packs root, as an installed pack; the pack.yaml written."""
    check_version_files(files)
    name = pack_name_of(files)
    for path, content in files.items():
        if path.startswith("rules/"):
            target = root / "asp_rules" / name / path.removeprefix("rules/")
        elif path == "domain.pddl":
            target = root / "pddl" / name / "domain.pddl"
        else:
            target = root / "domains" / name / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(content)
    return root / "domains" / name / "pack.yaml"


def version_cache() -> Path:
    """Where this machine keeps the versions it loaded from the store, one packs root per digest."""
    default = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "nesyplan" / "packs"
    return Path(os.environ.get("NESYPLAN_PACK_CACHE_DIR", default))


def cached_version(digest: str, files: PackFiles) -> Path:
    """The packs root holding a version on this machine, written once (into a scratch folder, then
    renamed into place: a process reading it never sees half of it)."""
    if not re.fullmatch(r"[0-9a-f]{64}", digest) or version_digest(files) != digest:
        raise VersionError(f"the files of pack version {digest[:12]} do not have that digest")
    target = version_cache() / digest
    if not target.is_dir():
        target.parent.mkdir(parents=True, exist_ok=True)
        scratch = Path(tempfile.mkdtemp(prefix=f".{digest[:12]}-", dir=target.parent))
        write_version(scratch, files)
        try:
            scratch.rename(target)
        except OSError:  # another process put it there first: same digest, same files
            shutil.rmtree(scratch, ignore_errors=True)
    return target


def load_version(name: str, digest: str | None, fetch) -> Pack:
    """The pack `name` at version `digest`: the installed one when it has that digest (or no digest is
    asked for), else the version this machine keeps, else the files `fetch(digest)` gives (None: the
    store has no such version)."""
    if digest is None or installed_digest(name) == digest:
        return load_pack(name)
    if not re.fullmatch(r"[0-9a-f]{64}", digest):
        raise PackError(f"pack version {digest!r} is no digest (64 hex digits)")
    root = version_cache() / digest
    if not (root / "domains" / name / "pack.yaml").is_file():
        files = fetch(digest)
        if files is None:
            raise PackError(f"pack {name!r} version {digest[:12]} is neither installed here nor in the pack store")
        root = cached_version(digest, files)
    return load_pack_at(root, name)


# --- archives --------------------------------------------------------------------------------------------

def read_archive(data: bytes) -> PackFiles:
    """The version files of a zip or tar (gzip or not) archive, read in memory, never extracted: links,
    devices, absolute paths, `..`, unknown files and anything over the limits are refused, counting the
    bytes actually read (a zip bomb's declared sizes lie). One top folder around the files is allowed."""
    if data[:4] == b"PK\x03\x04":
        members = _zip_members(data)
    else:
        try:
            members = _tar_members(data)
        except tarfile.TarError:
            raise VersionError("not a zip or tar archive", [("", None, "not a zip or tar archive")]) from None
    files = _strip_top_folder(members)
    check_version_files(files)
    return files


def _checked_path(path: str) -> str:
    parts = path.replace("\\", "/").split("/")
    if path.startswith(("/", "\\")) or re.match(r"^[A-Za-z]:", path) or ".." in parts or "" in parts[:-1]:
        raise VersionError(f"{path}: a path outside the pack", [(path, None, "a path outside the pack")])
    return "/".join(p for p in parts if p and p != ".")


def _take(files: PackFiles, path: str, read, declared: int) -> None:
    if len(files) >= MAX_FILES:
        raise VersionError(f"more than {MAX_FILES} files", [("", None, f"more than {MAX_FILES} files")])
    if declared > MAX_FILE_BYTES:
        raise VersionError(f"{path}: over {MAX_FILE_BYTES} bytes", [(path, None, f"over {MAX_FILE_BYTES} bytes")])
    content = read(MAX_FILE_BYTES + 1)
    if len(content) > MAX_FILE_BYTES:
        raise VersionError(f"{path}: over {MAX_FILE_BYTES} bytes", [(path, None, f"over {MAX_FILE_BYTES} bytes")])
    if sum(map(len, files.values())) + len(content) > MAX_TOTAL_BYTES:
        raise VersionError(f"the archive holds over {MAX_TOTAL_BYTES} bytes",
                           [("", None, f"over {MAX_TOTAL_BYTES} bytes in all")])
    files[path] = content


def _zip_members(data: bytes) -> PackFiles:
    files: PackFiles = {}
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            for info in archive.infolist():
                path = _checked_path(info.filename)
                mode = info.external_attr >> 16
                if stat.S_ISLNK(mode):
                    raise VersionError(f"{path}: a link", [(path, None, "a link: a pack holds plain files")])
                if info.is_dir():
                    continue
                with archive.open(info) as member:
                    _take(files, path, member.read, info.file_size)
    except (zipfile.BadZipFile, zipfile.LargeZipFile, NotImplementedError, EOFError) as exc:
        raise VersionError(f"a broken zip archive: {exc}", [("", None, f"a broken zip archive: {exc}")]) from None
    return files


def _tar_members(data: bytes) -> PackFiles:
    files: PackFiles = {}
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:*") as archive:
        for member in archive:
            path = _checked_path(member.name)
            if member.isdir():
                continue
            if not member.isfile():
                raise VersionError(f"{path}: not a plain file (a link or a device)",
                                   [(path, None, "not a plain file: a pack holds plain files")])
            source = archive.extractfile(member)
            _take(files, path, source.read, member.size)
    return files


def _strip_top_folder(members: PackFiles) -> PackFiles:
    tops = {path.split("/", 1)[0] for path in members}
    if len(tops) == 1 and all("/" in path for path in members):
        top = tops.pop()
        return {path.removeprefix(top + "/"): content for path, content in members.items()}
    return members


def archive_of(files: PackFiles) -> bytes:
    """A version's files as a gzipped tar (what `nesyplan packs push` uploads for a folder)."""
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w:gz") as archive:
        for path in sorted(files):
            info = tarfile.TarInfo(path)
            info.size, info.mode = len(files[path]), 0o644
            archive.addfile(info, io.BytesIO(files[path]))
    return out.getvalue()
