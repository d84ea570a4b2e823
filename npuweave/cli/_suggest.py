"""Click groups that answer an unknown subcommand with the closest names ("did you mean")."""

from __future__ import annotations

from typing import Any

import click

from npuweave.errors import did_you_mean


def resolve_or_suggest(group: click.Group, ctx: click.Context, args: list[str]) -> Any:
    """``click.Group.resolve_command`` with close matches added to the 'no such command' error."""
    name = args[0] if args else ""
    if (args and not name.startswith("-") and group.get_command(ctx, name) is None
            and not ctx.resilient_parsing):
        hint = did_you_mean(name, group.list_commands(ctx))
        ctx.fail(f"No such command {name!r}{hint}.")
    return click.Group.resolve_command(group, ctx, args)


class SuggestingGroup(click.Group):
    """A ``click.Group`` whose unknown-command error suggests the closest command names."""

    def resolve_command(self, ctx: click.Context, args: list[str]) -> Any:
        return resolve_or_suggest(self, ctx, args)
