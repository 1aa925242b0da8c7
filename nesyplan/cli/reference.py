"""The command line as one click command, for the generated CLI reference (`docs/cli.md`, built by the
mkdocs-click extension from the commands' own help). Only the docs read it; `nesyplan --help` is unchanged.

The reference renders each command's help as Markdown, so a `<` in it (`domains/<pack>/overlay.yaml`) is
escaped here, or the page would take it for an HTML tag and show nothing."""

import html

import click
import typer

from nesyplan.cli import app


def _escaped(command: click.Command) -> click.Command:
    if command.help:
        command.help = html.escape(command.help, quote=False)
    for sub in getattr(command, "commands", {}).values():
        _escaped(sub)
    return command


command = _escaped(typer.main.get_command(app))
