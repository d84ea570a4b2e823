"""``--config run.yaml`` and ``--save-config`` for a command: a run as a file.

The file's keys are the command's long option names (``npu``, ``qps``, ``cost-model``;
``cost_model`` is accepted too); options given on the command line override the file. The file
is checked as a whole before any work: unknown keys and values the option would refuse are
reported together in one line. ``--save-config FILE`` writes every option's value of this run
(defaults included) in the same form, so ``--config FILE`` repeats the run exactly.

Example ``run.yaml`` for ``npuweave serve``::

    models: [resnet50, bert-base]     # a list, or the flag's text "resnet50,bert-base"
    qps: [300, 80]
    duration: 200ms
    scheduler: hpf-p
    priority: [1, 9]
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import click

from npuweave.errors import ConfigError, did_you_mean

_OWN = ("config", "save_config")


def _key(param: click.Parameter) -> str:
    """The file key of an option: its first long flag without dashes (``--cost-model``)."""
    longs = [o for o in param.opts if o.startswith("--")]
    return (longs[0] if longs else param.opts[0]).lstrip("-")


def _keys(cmd: click.Command) -> dict[str, click.Parameter]:
    out: dict[str, click.Parameter] = {}
    for p in cmd.params:
        if isinstance(p, click.Option) and p.name not in _OWN and p.name != "help":
            out[_key(p)] = p
            out[_key(p).replace("-", "_")] = p
    return out


def _as_flag_value(param: click.Parameter, value: Any) -> Any:
    """A YAML value as the option takes it: lists become comma text, except for repeatable
    options, which take a list."""
    if isinstance(value, list) and not param.multiple:
        return ",".join(str(v) for v in value)
    if param.multiple and not isinstance(value, list):
        return [value]
    return value


def read_run_config(cmd: click.Command, ctx: click.Context, path: str) -> dict[str, Any]:
    """The file's settings as ``{parameter name: value}``; every bad key or value at once."""
    from npuweave.fileio import load_yaml, read_user_text

    data = load_yaml(read_user_text(path, "run config"), path)
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: a run config is a mapping of option names to values "
                          f"(e.g. 'npu: memory-centric'), got {type(data).__name__}")
    keys, out, problems = _keys(cmd), {}, []
    for key, raw in data.items():
        param = keys.get(str(key))
        if param is None:
            valid = sorted(k for k in keys if "_" not in k)
            problems.append(f"unknown field {key!r}{did_you_mean(str(key), valid)}")
            continue
        if isinstance(raw, dict) or (isinstance(raw, list)
                                     and any(isinstance(v, dict | list) for v in raw)):
            problems.append(f"field {key!r}: give a value or a list of values, as on the "
                            f"command line (got {type(raw).__name__} {raw!r:.40})")
            continue
        value = _as_flag_value(param, raw)
        try:
            param.type_cast_value(ctx, value)
        except click.BadParameter as err:
            problems.append(f"field {key!r}: {err.format_message().rstrip('.')}")
            continue
        out[param.name] = value
    if problems:
        raise ConfigError(f"{path}: invalid run config for 'npuweave {cmd.name}': "
                          + "; ".join(problems) + f" (see 'npuweave {cmd.name} --help')")
    return out


def _yaml_value(value: Any) -> Any:
    return list(value) if isinstance(value, tuple) else value


def save_run_config(cmd: click.Command, path: str, params: dict[str, Any],
                    skip: tuple[str, ...] = ()) -> None:
    """Write ``params`` (this run's option values) as a run config ``--config`` reads;
    ``skip`` names parameters left out (those whose default depends on other options)."""
    import yaml

    from npuweave.fileio import write_text

    doc = {_key(p): _yaml_value(params[p.name]) for p in cmd.params
           if isinstance(p, click.Option) and p.name not in skip
           and params.get(p.name) not in (None, ())}
    head = f"# npuweave {cmd.name} run config: npuweave {cmd.name} --config {path}\n"
    write_text(path, head + yaml.safe_dump(doc, sort_keys=False, default_flow_style=False))


def run_config(cmd: click.Command, derived_defaults: tuple[str, ...] = ()) -> click.Command:
    """Give a command ``--config FILE`` (flags override it) and ``--save-config FILE``.

    ``derived_defaults`` names options whose default the command works out from other
    options (``serve --duration``: 60 s for an LLM); they are saved only when given.
    """

    def load(ctx: click.Context, _param: click.Parameter, value: str | None) -> str | None:
        if value is not None:
            ctx.default_map = {**(ctx.default_map or {}),
                               **read_run_config(cmd, ctx, value)}
        return value

    cmd.params.insert(0, click.Option(
        ["--config"], type=click.Path(dir_okay=False), is_eager=True, expose_value=True,
        callback=load, help="Read the options from a YAML run config (keys: the long option "
                            "names); options on the command line override it."))
    cmd.params.insert(1, click.Option(
        ["--save-config"], type=click.Path(dir_okay=False), default=None,
        help="Write this run's options (defaults included) as a run config, to repeat it "
             "with --config."))
    inner: Callable[..., Any] = cmd.callback  # type: ignore[assignment]

    @functools.wraps(inner)
    def callback(*args: Any, config: str | None = None, save_config: str | None = None,
                 **kwargs: Any) -> Any:
        if not save_config:
            return inner(*args, **kwargs)
        from npuweave.fileio import check_outputs

        check_outputs(("--save-config", save_config, None))  # writable, before any work
        ctx = click.get_current_context()
        skip = tuple(n for n in derived_defaults
                     if ctx.get_parameter_source(n) == click.core.ParameterSource.DEFAULT)
        # written once the command has accepted its options and run: a rejected run (bad
        # value, unknown scheduler) leaves no config behind
        out = inner(*args, **kwargs)
        save_run_config(cmd, save_config, kwargs, skip)
        return out

    cmd.callback = callback
    return cmd
