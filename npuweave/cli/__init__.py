"""The ``npuweave`` command.

Subcommands live in sibling modules and are imported only when invoked, so ``npuweave --help``
stays fast and one area's heavy imports never slow another's. A user error (any
``NpuweaveError``) is printed on one line and exits with status 2.
"""

from __future__ import annotations

import importlib
import sys
from typing import Any

import click

from npuweave.errors import NpuweaveError

# command name -> ("module", "attribute", one-line help). Each area owns its module.
_COMMANDS: dict[str, tuple[str, str, str]] = {
    "demo": ("npuweave.cli.demo", "demo", "Run the main demo on the built-in zoo and presets."),
    "models": ("npuweave.cli.workload", "models", "List the built-in model zoo."),
    "npus": ("npuweave.cli.workload", "npus", "List the NPU presets."),
    "profile": ("npuweave.cli.workload", "profile", "Per-layer cost of a model on an NPU."),
    "zoo": ("npuweave.cli.workload", "zoo", "Zoo utilities (export as ONNX)."),
    "schedule": ("npuweave.cli.schedule", "schedule", "Co-schedule models layer by layer on one NPU."),
    "schedulers": ("npuweave.cli.schedule", "schedulers", "List the registered scheduling policies."),
    "reproduce": ("npuweave.cli.schedule", "reproduce", "Re-run a paper's experiment."),
    "capacity": ("npuweave.cli.lwplus", "capacity", "Largest load sustained under deadlines (thesis V.3)."),
    "compile": ("npuweave.cli.compile", "compile_", "Layer-group compilation into local memory."),
    "ir": ("npuweave.cli.ir", "ir", "Read, validate, inspect and simulate Gemini scheduler IR."),
    "numbers": ("npuweave.cli.numbers", "numbers", "libnumber: number formats and the auto-tuner."),
    "predict": ("npuweave.cli.prema", "predict", "PREMA's task-length estimate vs the simulated time."),
    "serve": ("npuweave.cli.serve", "serve", "Serve requests arriving over time (Poisson, LoadGen, traces)."),
    "loadgen": ("npuweave.cli.loadgen", "loadgen", "Run MLPerf LoadGen against the simulated NPU."),
    "sweep": ("npuweave.cli.sweep", "sweep", "Run an experiment over axes of settings, in parallel."),
}


class _LazyGroup(click.Group):
    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(_COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        entry = _COMMANDS.get(cmd_name)
        if entry is None:
            return None
        module_name, attr, short = entry
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as exc:
            if exc.name != module_name:
                raise
            return _missing(cmd_name, short)
        return _whole_summaries(getattr(module, attr))

    def resolve_command(self, ctx: click.Context, args: list[str]) -> Any:
        from npuweave.cli._suggest import resolve_or_suggest

        return resolve_or_suggest(self, ctx, args)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows = [(name, _COMMANDS[name][2]) for name in self.list_commands(ctx)]
        with formatter.section("Commands"):
            formatter.write_dl(rows)


def _whole_summaries(cmd: click.Command) -> click.Command:
    """Give subcommands their whole first help line: click cuts it at ~45 characters."""
    if isinstance(cmd, click.Group):
        for sub in cmd.commands.values():
            if sub.short_help is None and sub.help:
                sub.short_help = sub.help.strip().split("\n\n")[0].replace("\n", " ")
            _whole_summaries(sub)
    return cmd


def _missing(name: str, short: str) -> click.Command:
    @click.command(name=name, help=short)
    def _cmd() -> None:
        raise NpuweaveError(f"'npuweave {name}' is not available in this build yet")

    return _cmd


@click.group(cls=_LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="npuweave")
def cli() -> None:
    """npuweave: share one NPU well among many DNN models.

    \b
    Examples:
      npuweave demo
      npuweave profile resnet50 --npu memory-centric
      npuweave schedule --models resnet50,bert-base --npu memory-centric --compare all
    """


def main(argv: list[str] | None = None) -> None:
    """Entry point: run the CLI; user errors print one line and exit 2."""
    try:
        cli.main(args=argv, standalone_mode=False)
    except NpuweaveError as err:
        click.echo(f"error: {err}", err=True)
        sys.exit(2)
    except click.exceptions.Abort:
        click.echo("aborted", err=True)
        sys.exit(130)
    except click.UsageError as err:
        where = err.ctx.command_path if err.ctx is not None else "npuweave"
        click.echo(f"error: {err.format_message()} (see '{where} --help')", err=True)
        sys.exit(2)
    except click.ClickException as err:
        click.echo(f"error: {err.format_message()}", err=True)
        sys.exit(2)
    except OSError as err:
        click.echo(f"error: {err}", err=True)
        sys.exit(2)
    except (MemoryError, RecursionError) as err:  # a last guard: inputs are bounded upstream
        what = "out of memory" if isinstance(err, MemoryError) else "input nested too deeply"
        click.echo(f"error: {what}; the input is too large for this machine: give a smaller "
                   "one (and please report which input got this far)", err=True)
        sys.exit(2)
