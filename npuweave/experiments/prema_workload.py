"""PREMA's multi-task workloads (section III): N tasks drawn from the eight models, seeded.

One draw (``draw_tasks``):

* ``n`` task types uniformly *with replacement* from ``MIX`` (CNN-AN/GN/VN/MN, RNN-SA,
  RNN-MT1/MT2, RNN-ASR);
* a batch size uniformly from ``batches`` (default ``(1, 4, 16)``, the three sizes of the
  paper's Figs 5-6 methodology; Fig. 14 uses ``(1,)``);
* a priority level uniformly from low/medium/high;
* for an RNN, a profiled input length and an *actual* output length drawn among those
  observed for it (``npuweave.workload.seqlen``); the predictor sees only the input length;
  RNN-SA's inputs stop where its batch-1 task would outlast the longest CNN-GN task of the
  mix (``sa_cap="gn"``; the paper: "CNN-GN and RNN-SA is relatively short-running", Fig. 6;
  ``sa_cap="profile"``: every profiled input, up to 45 ms, the former default);
* dispatch times uniform over ``[0, span * sum of the tasks' isolated times]`` (the paper
  states no window; ``span = 1`` offers the NPU exactly as much work as the window lasts).

Every random choice comes from ``numpy.random.default_rng([seed, run])``.

Examples
--------
>>> from npuweave.hardware import preset
>>> tasks = draw_tasks(preset("prema"), n=3, seed=0, run=0)
>>> len(tasks), tasks == draw_tasks(preset("prema"), n=3, seed=0, run=0)
(3, True)
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

import numpy as np

from npuweave.cost.predictor import estimate, isolated_time, layer_estimates, task_layers
from npuweave.errors import ConfigError
from npuweave.hardware.npu import NPU
from npuweave.workload.layer import Layer
from npuweave.workload.seqlen import MIX, profile

LEVELS = ("low", "medium", "high")
DEFAULT_BATCHES: tuple[int, ...] = (1, 4, 16)
MAX_TASKS = 10_000
DRAWS = ("replacement", "permutation")
SA_CAPS = ("gn", "profile")


@dataclass(frozen=True, slots=True)
class PremaTask:
    """One inference task of a PREMA workload.

    Attributes
    ----------
    id : index in the workload (dispatch order is by ``dispatch_s``, not by id).
    name : PREMA task type (``cnn-an`` ... ``rnn-asr``).
    model : zoo model it runs.
    batch : samples per inference.
    level : priority level index (0 low, 1 medium, 2 high).
    dispatch_s : when the task reaches the NPU scheduler.
    in_len, out_len : RNN input and *actual* output lengths (None for CNNs).
    est_s : the predictor's estimate (Algorithm 1 with the table's output length).
    iso_s : cold isolated time with the actual length.
    """

    id: int
    name: str
    model: str
    batch: int
    level: int
    dispatch_s: float
    in_len: int | None
    out_len: int | None
    est_s: float
    iso_s: float

    @property
    def priority(self) -> str:
        return LEVELS[self.level]

    def layers(self) -> tuple[Layer, ...]:
        """The task's layers, unrolled to its actual length."""
        return task_layers(self.name, self.in_len, self.out_len if self.name != "rnn-sa"
                           else None)

    def layer_times(self, npu: NPU) -> tuple[float, ...]:
        """Per-layer isolated seconds (the prema cost model) at the task's batch."""
        return layer_estimates(self.layers(), npu, self.batch)


def check_workload(n: int, batches: tuple[int, ...], span: float) -> None:
    """Reject impossible workload settings with one message naming the option."""
    if isinstance(n, bool) or not isinstance(n, int) or not 1 <= n <= MAX_TASKS:
        raise ConfigError(f"--tasks must be an integer in 1..{MAX_TASKS}; got {n!r}")
    if not batches or any(isinstance(b, bool) or not isinstance(b, int) or b < 1
                          for b in batches):
        raise ConfigError(f"batch sizes must be integers >= 1; got {batches!r}")
    if not (span > 0 and np.isfinite(span)):
        raise ConfigError(f"dispatch window span must be a finite number > 0; got {span}")


@cache
def sa_max_input(npu: NPU) -> int:
    """RNN-SA's longest input under ``sa_cap="gn"``: the largest profiled input whose batch-1
    task takes no longer than CNN-GN at the mix's largest batch (16) on ``npu`` (at least 1).

    >>> from npuweave.hardware import preset
    >>> sa_max_input(preset("prema"))
    17
    """
    top = isolated_time("cnn-gn", npu, max(DEFAULT_BATCHES))
    fits = [n for n in profile("rnn-sa").inputs if isolated_time("rnn-sa", npu, 1, n) <= top]
    return max(fits, default=1)


def _lengths(npu: NPU, rng: np.random.Generator, name: str, sa_cap: str) -> tuple[int, int]:
    """(input, actual output) of an RNN task: a profiled input uniformly (RNN-SA's capped
    under ``sa_cap="gn"``), then one of its observed outputs uniformly."""
    prof = profile(name)
    if name != "rnn-sa" or sa_cap == "profile":
        return prof.draw(rng)
    inputs = [n for n in prof.inputs if n <= sa_max_input(npu)]
    in_len = inputs[int(rng.integers(len(inputs)))]
    seen = prof.observed(in_len)
    return in_len, int(seen[int(rng.integers(len(seen)))])


def _task(npu: NPU, rng: np.random.Generator, i: int, names: list[str],
          batches: tuple[int, ...], name: str | None = None, sa_cap: str = "gn") -> PremaTask:
    if name is None:  # drawn with replacement
        name = names[int(rng.integers(len(names)))]
    batch = int(batches[int(rng.integers(len(batches)))])
    level = int(rng.integers(3))
    in_len = out_len = None
    if name.startswith("rnn-"):
        in_len, out_len = _lengths(npu, rng, name, sa_cap)
    out_arg = None if name == "rnn-sa" else out_len
    return PremaTask(i, name, MIX[name], batch, level, 0.0, in_len, out_len,
                     estimate(name, npu, batch, in_len),
                     isolated_time(name, npu, batch, in_len, out_arg))


def draw_tasks(npu: NPU, n: int = 8, seed: int = 0, run: int = 0,
               batches: tuple[int, ...] = DEFAULT_BATCHES, span: float = 1.0,
               names: tuple[str, ...] = tuple(MIX), draw: str = "replacement",
               sa_cap: str = "gn") -> tuple[PremaTask, ...]:
    """One seeded PREMA workload of ``n`` tasks (see the module docstring).

    ``draw="permutation"`` gives every model once, in a random order (``n`` at most the number
    of models): a sensitivity study of how runs are drawn, not the paper's reading.
    """
    check_workload(n, batches, span)
    if sa_cap not in SA_CAPS:
        raise ConfigError(f"sa_cap {sa_cap!r}: use one of {', '.join(SA_CAPS)}")
    if draw not in DRAWS or (draw == "permutation" and n > len(names)):
        raise ConfigError(f"draw {draw!r} with {n} tasks: use one of {', '.join(DRAWS)} "
                          f"('permutation' takes at most {len(names)} tasks)")
    rng = np.random.default_rng([seed, run])
    order: list[str | None] = ([str(x) for x in rng.permutation(list(names))[:n]]
                               if draw == "permutation" else [None] * n)
    tasks = [_task(npu, rng, i, list(names), batches, order[i], sa_cap) for i in range(n)]
    window = span * sum(t.iso_s for t in tasks)
    times = rng.uniform(0.0, window, size=n)
    out = []
    for t, at in zip(tasks, times.tolist()):
        out.append(PremaTask(t.id, t.name, t.model, t.batch, t.level, float(at), t.in_len,
                             t.out_len, t.est_s, t.iso_s))
    return tuple(out)


def check_run(runs: int, n: int) -> None:
    """Reject impossible settings before any work starts."""
    if isinstance(runs, bool) or not isinstance(runs, int) or not 1 <= runs <= 10_000:
        raise ConfigError(f"--runs must be an integer in 1..10000; got {runs!r}")
    if isinstance(n, bool) or not isinstance(n, int) or not 1 <= n <= 1000:
        raise ConfigError(f"--tasks must be an integer in 1..1000; got {n!r}")
