"""Accuracy evaluation for the tuner and the baselines: memoized, logged, checked.

An evaluator is any ``evaluate(config, subset) -> accuracy`` callable, ``subset`` being
``"small"`` or ``"full"``. :class:`ShellEvaluator` is the thesis's form: write the config file,
run ``cmd_smallset``/``cmd_fullset``, pull the accuracy out of stdout with
``get_result_regex``. :class:`Session` memoizes results per (config, subset), numbers every
configuration it really evaluates, and keeps a CSV log (iteration, phase, subset, accuracy,
objective, config) that is rewritten atomically as it grows and on every exit, so a failing
evaluation leaves the log of everything tried before it.
"""

from __future__ import annotations

import importlib
import math
import numbers
import os
import re
import shlex
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from npuweave.errors import ConfigError, NpuweaveError
from npuweave.fileio import write_csv
from npuweave.numbers.config import NumberConfig, write_config
from npuweave.numbers.descriptors import NetworkDescriptor
from npuweave.numbers.format import FLOAT32

Evaluate = Callable[[NumberConfig, str], float]
Objective = Callable[[NumberConfig, NetworkDescriptor], float]


class TunerError(NpuweaveError):
    """The accuracy evaluation failed (raised, returned a non-number, command failed)."""


def storage_bits(config: NumberConfig, net: NetworkDescriptor) -> float:
    """Default objective: sum over target layers of bit width x size, weights plus inputs."""
    total = 0.0
    for i, layer in enumerate(net.layer_name):
        total += (config.weight(layer) or FLOAT32).bits * net.size("weight", i)
        total += (config.activation(layer) or FLOAT32).bits * net.size("activation", i)
    return total


def weight_bits(config: NumberConfig, net: NetworkDescriptor) -> float:
    """Parameter storage only: sum of weight bit width x weight count."""
    return float(sum((config.weight(layer) or FLOAT32).bits * net.size("weight", i)
                     for i, layer in enumerate(net.layer_name)))


OBJECTIVES: dict[str, Objective] = {"default": storage_bits, "weights": weight_bits}


def resolve_objective(spec: str | Objective) -> Objective:
    """``"default"``, ``"weights"``, ``"module:function"`` or a callable."""
    if callable(spec):
        return spec
    if spec.lower() in OBJECTIVES:
        return OBJECTIVES[spec.lower()]
    module, _, attr = spec.partition(":")
    if not attr:
        raise ConfigError(f"f_obj {spec!r}: use 'default', 'weights' or 'module:function'")
    try:
        fn = getattr(importlib.import_module(module), attr)
    except (ImportError, AttributeError) as err:
        raise ConfigError(f"f_obj {spec!r} cannot be imported: {err}") from None
    if not callable(fn):
        raise ConfigError(f"f_obj {spec!r} is not callable")
    return fn


@dataclass
class ShellEvaluator:
    """Run the DNN framework as a command; it reads the config file named by ``config_path``.

    The command may mention ``{config}`` (replaced by the path); the path is also exported as
    ``NUMBER_CONFIG``. Accuracy is the first group of the last ``regex`` match in stdout.
    """

    cmd_smallset: str
    cmd_fullset: str
    regex: str
    config_path: str = "number_config.txt"
    timeout_s: float | None = None

    @classmethod
    def from_network(cls, net: NetworkDescriptor) -> ShellEvaluator:
        if not net.cmd_fullset:
            raise ConfigError(f"{net.source}: cmd_fullset is empty; give the command that "
                              "runs the full test set, or pass an evaluate callable")
        return cls(net.cmd_smallset or net.cmd_fullset, net.cmd_fullset, net.get_result_regex,
                   net.config_path, net.eval_timeout_s)

    def __call__(self, config: NumberConfig, subset: str) -> float:
        write_config(config, self.config_path)
        cmd = self.cmd_smallset if subset == "small" else self.cmd_fullset
        argv = shlex.split(cmd.replace("{config}", shlex.quote(self.config_path)))
        env = {**os.environ, "NUMBER_CONFIG": str(Path(self.config_path).resolve())}
        try:
            done = subprocess.run(argv, capture_output=True, text=True, env=env,
                                  timeout=self.timeout_s, check=False)
        except subprocess.TimeoutExpired:
            raise TunerError(f"command {cmd!r} ran longer than {self.timeout_s:g} s; make it "
                             "faster or raise eval_timeout_s in the network descriptor "
                             "(or --eval-timeout)") from None
        except OSError as err:
            raise TunerError(f"command {cmd!r} could not run ({err.strerror or err}); check "
                             "the command in cmd_smallset/cmd_fullset") from None
        if done.returncode != 0:
            tail = (done.stderr or done.stdout).strip().splitlines()[-3:]
            raise TunerError(f"command {cmd!r} exited with {done.returncode}: {' | '.join(tail)}")
        found = re.findall(self.regex, done.stdout)
        if not found:
            raise TunerError(f"get_result_regex {self.regex!r} matched nothing in the output of "
                             f"{cmd!r}; check the regex against the command's stdout")
        last = found[-1]
        text = last[0] if isinstance(last, tuple) else last
        try:
            return float(text)
        except ValueError:
            raise TunerError(f"get_result_regex captured {text!r}, not a number") from None


LOG_FIELDS = ("iteration", "phase", "subset", "accuracy", "objective", "passed", "config")


class Session:
    """Memoized, counted, logged accuracy evaluation shared by one tuning run."""

    def __init__(self, evaluate: Evaluate, objective: Callable[[NumberConfig], float],
                 log_path: str | os.PathLike[str] | None = None,
                 on_result: Callable[[dict[str, Any]], None] | None = None,
                 max_evaluations: int = 5000) -> None:
        self.evaluate = evaluate
        self.objective = objective
        self.log_path = log_path
        self.on_result = on_result
        self.max_evaluations = max_evaluations
        self.memo: dict[tuple[NumberConfig, str], float] = {}
        self.rows: list[dict[str, Any]] = []
        self.phase = "init"
        self.threshold: dict[str, float] = {}
        self._flushed = 0

    @property
    def iterations(self) -> int:
        return len(self.rows)

    def accuracy(self, config: NumberConfig, subset: str) -> float:
        key = (config, subset)
        if key in self.memo:
            return self.memo[key]
        if self.iterations >= self.max_evaluations:
            raise BudgetExhausted(self.max_evaluations)
        acc = self._call(config, subset)
        self.memo[key] = acc
        thr = self.threshold.get(subset)
        row = {"iteration": self.iterations + 1, "phase": self.phase, "subset": subset,
               "accuracy": acc, "objective": self.objective(config),
               "passed": "" if thr is None else int(acc >= thr),
               "config": " ".join(f"{k}={v.short}" for k, v in config.items())}
        self.rows.append(row)
        if self.on_result:
            self.on_result(row)
        if len(self.rows) - self._flushed >= 25:
            self.flush()
        return acc

    def passes(self, config: NumberConfig, subset: str) -> bool:
        return self.accuracy(config, subset) >= self.threshold[subset]

    def _call(self, config: NumberConfig, subset: str) -> float:
        where = f"configuration #{self.iterations + 1} ({self.phase}, {subset} set)"
        try:
            acc = self.evaluate(config, subset)
        except NpuweaveError as err:
            self.flush()
            raise TunerError(f"{where}: {err}{self._log_note()}") from err
        except Exception as err:
            self.flush()
            raise TunerError(f"{where}: evaluate raised {type(err).__name__}: {err}"
                             f"{self._log_note()}") from err
        if isinstance(acc, bool) or not isinstance(acc, numbers.Real) or not math.isfinite(acc):
            self.flush()
            raise TunerError(f"{where}: evaluate returned {acc!r}, not a finite number; it must "
                             f"return the accuracy as a float{self._log_note()}")
        if acc < 0:
            self.flush()
            raise TunerError(f"{where}: evaluate returned {acc!r}; the tuner needs an accuracy "
                             f">= 0 where higher is better (report an error rate as 1 - error)"
                             f"{self._log_note()}")
        return float(acc)

    def _log_note(self) -> str:
        return f"; the log of the {self.iterations} tried so far is in {self.log_path}" \
            if self.log_path else ""

    def flush(self) -> None:
        """Rewrite the CSV log atomically with every row so far."""
        if self.log_path is None:
            return
        write_csv(self.log_path, self.rows, LOG_FIELDS)
        self._flushed = len(self.rows)


class BudgetExhausted(Exception):
    """Internal: the evaluation budget ran out; the tuner stops and returns its best."""

    def __init__(self, limit: int) -> None:
        super().__init__(f"evaluation budget of {limit} configurations exhausted")
