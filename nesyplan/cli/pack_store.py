"""`nesyplan packs ...`: the service's pack store through its HTTP API, as any key's owner would use it:
push an OpenAPI document, an SGD schema, a pack archive or a pack folder; list; activate; roll back;
export an installed pack as an archive to push elsewhere."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Optional

import typer
from rich.markup import escape

from nesyplan.cli.common import app, console, err_console

packs_app = typer.Typer(no_args_is_help=True, help="The service's pack store (through its HTTP API): push, list, "
                                                   "activate, rollback, pull, delete; export an installed pack.")
app.add_typer(packs_app, name="packs")

API = typer.Option(os.environ.get("NESYPLAN_API_URL", "http://127.0.0.1:8000"), "--api",
                   help="the service's address (NESYPLAN_API_URL)")
KEY = typer.Option(os.environ.get("NESYPLAN_API_KEY"), "--key", help="your API key (NESYPLAN_API_KEY)",
                   show_default=False)


def _call(method: str, api: str, path: str, key: str | None, headers: dict | None = None, raw: bool = False,
          **kwargs):
    """The API's answer as JSON (`raw`: its bytes); its error printed and exit 1 (2 when it cannot be
    reached)."""
    import httpx

    headers = {**(headers or {}), **({"Authorization": f"Bearer {key}"} if key else {})}
    try:
        response = httpx.request(method, api.rstrip("/") + path, headers=headers, timeout=300, **kwargs)
    except httpx.HTTPError as exc:
        err_console.print(f"[red]the service at {escape(api)} cannot be reached: {escape(str(exc))}[/]")
        raise typer.Exit(2)
    if response.status_code >= 400:
        try:
            detail = response.json().get("detail", response.text)
        except ValueError:
            detail = response.text
        for problem in detail if isinstance(detail, list) else [detail]:
            if isinstance(problem, dict) and "message" in problem:
                where = ":".join(str(p) for p in (problem.get("file"), problem.get("line")) if p)
                problem = f"{where}: {problem['message']}" if where else problem["message"]
            err_console.print(f"[red]{escape(str(problem))}[/]", soft_wrap=True)
        raise typer.Exit(1)
    return response.content if raw else response.json() if response.content else None


def _upload_bytes(path: Path) -> bytes:
    """What push sends: a file as it is; a pack folder (pack.yaml, rules/, domain.pddl) as an archive."""
    from pipeline.packs.versions import VersionError, archive_of

    if path.is_file():
        return path.read_bytes()
    files = {file.relative_to(path).as_posix(): file.read_bytes() for file in sorted(path.rglob("*"))
             if file.is_file() and not any(part.startswith(".") for part in file.relative_to(path).parts)}
    try:
        from pipeline.packs.versions import check_version_files

        check_version_files(files)
    except VersionError as exc:
        for file, _, message in exc.problems:
            err_console.print(f"[red]{escape(file or str(path))}: {escape(message)}[/]")
        raise typer.Exit(1)
    return archive_of(files)


@packs_app.command("push")
def push(source: Path = typer.Argument(..., exists=True, help="an OpenAPI document or SGD schema (JSON or YAML), "
                                                             "a pack archive (.zip, .tar.gz), or a pack folder"),
         name: Optional[str] = typer.Option(None, help="the pack's name (an OpenAPI document's; default: its title)"),
         service: Optional[list[str]] = typer.Option(None, "--service", help="SGD: only this service (repeatable)"),
         activate: bool = typer.Option(True, help="make it the version new runs use"),
         api: str = API, key: Optional[str] = KEY, as_json: bool = typer.Option(False, "--json")) -> None:
    """Upload a pack: imported, validated and stored by the service as a new version of your pack."""
    params = {"activate": str(activate).lower(), "service": service or []}
    if name:
        params["name"] = name
    stored = _call("POST", api, "/v1/packs", key, content=_upload_bytes(source), params=params,
                   headers={"Content-Type": "application/octet-stream"})
    if as_json:
        print(json.dumps(stored, indent=2))
        return
    for version in stored["packs"]:
        console.print(f"{version['name']} {version['digest'][:12]}{' (active)' if version['active'] else ''}",
                      markup=False)


@packs_app.command("list")
def list_command(pack: Optional[str] = typer.Argument(None, help="a pack: list its versions"),
                 api: str = API, key: Optional[str] = KEY, as_json: bool = typer.Option(False, "--json")) -> None:
    """Your packs and the installed ones; with a name, that pack's versions (* marks the active one)."""
    found = _call("GET", api, f"/v1/packs/{pack}/versions" if pack else "/v1/packs", key)
    if as_json:
        print(json.dumps(found, indent=2))
    elif pack:
        for version in found:
            mark = "*" if version["active"] else " "
            console.print(f"{mark} {version['digest'][:12]}  {version['source']}", markup=False)
    else:
        for item in found:
            where = "installed" if item["shared"] else f"{item['versions']} version(s)"
            console.print(f"{item['name']}  {(item['active'] or '')[:12]}  {where}", markup=False)


@packs_app.command("activate")
def activate_command(pack: str = typer.Argument(...), digest: str = typer.Argument(..., help="a digest or its "
                                                                                          "first characters"),
                     api: str = API, key: Optional[str] = KEY) -> None:
    """Make one of your pack's versions the one new runs use (runs already made keep theirs)."""
    version = _call("POST", api, f"/v1/packs/{pack}/activate", key, json={"digest": digest})
    console.print(f"{pack} {version['digest'][:12]} (active)", markup=False)


@packs_app.command("rollback")
def rollback_command(pack: str = typer.Argument(...), api: str = API, key: Optional[str] = KEY) -> None:
    """Make active again the version that was active before the current one."""
    version = _call("POST", api, f"/v1/packs/{pack}/rollback", key)
    console.print(f"{pack} {version['digest'][:12]} (active)", markup=False)


@packs_app.command("pull")
def pull_command(pack: str = typer.Argument(...), digest: str = typer.Argument(..., help="a version's digest (a "
                                                                                     "run's pack_digest)"),
                 out: Path = typer.Argument(..., help="the archive to write (.tar.gz)"),
                 api: str = API, key: Optional[str] = KEY) -> None:
    """Download a version's files: what made a run, to read or audit."""
    out.write_bytes(_call("GET", api, f"/v1/packs/{pack}/versions/{digest}", key, raw=True))
    console.print(f"{pack} {digest[:12]} -> {out}", markup=False)


@packs_app.command("delete")
def delete_command(pack: str = typer.Argument(...), api: str = API, key: Optional[str] = KEY) -> None:
    """Forget your pack (runs already made on it finish on their version)."""
    _call("DELETE", api, f"/v1/packs/{pack}", key)
    console.print(f"{pack} deleted", markup=False)


@packs_app.command("export")
def export_command(pack: str = typer.Argument(..., help="an installed pack"),
                   out: Path = typer.Argument(..., help="the archive to write (.tar.gz)")) -> None:
    """Write an installed pack as an archive `packs push` takes (its digest is the version's)."""
    from pipeline.packs.versions import archive_of, installed_files, version_digest

    files = installed_files(pack)
    if "pack.yaml" not in files:
        err_console.print(f"[red]no installed pack {escape(pack)!r}[/]")
        raise typer.Exit(2)
    out.write_bytes(archive_of(files))
    console.print(f"{pack} {version_digest(files)[:12]} -> {out}", markup=False)
