"""PREMA's dynamic preemption-mechanism selection (Algorithm 3) as a pure function.

Once a policy wants a candidate to replace the running task, Algorithm 3 compares how much
each would suffer from waiting for the other, relative to its own estimated length:

* ``degradation_current = remaining(candidate) / estimate(current)``: the running task's
  slowdown if the candidate goes first;
* ``degradation_candidate = remaining(current) / estimate(candidate)``: the candidate's
  slowdown if the running task is drained.

DRAIN (let the running task finish) when the first is larger, else preempt with CHECKPOINT
(or KILL, the Fig. 15 variant). ``remaining = estimate - executed`` (the minus sign is lost
in the printed algorithm), floored at 0 when a task has run past its estimate.

Examples
--------
>>> select_mechanism(cur_est=10e-3, cur_exec=9e-3, cand_est=5e-3)  # 5/10 > 1/5: nearly done
'drain'
>>> select_mechanism(cur_est=10e-3, cur_exec=1e-3, cand_est=2e-3)  # 2/10 < 9/2
'checkpoint'
"""

from __future__ import annotations

from npuweave.errors import ConfigError

CHECKPOINT = "checkpoint"
KILL = "kill"
DRAIN = "drain"
MECHANISMS: tuple[str, ...] = (CHECKPOINT, KILL, DRAIN)
"""Preemption mechanisms of section IV-C."""


def remaining(est_s: float, executed_s: float) -> float:
    """Estimated remaining time: ``est - executed``, never below 0."""
    return max(est_s - executed_s, 0.0)


def select_mechanism(cur_est: float, cur_exec: float, cand_est: float, cand_exec: float = 0.0,
                     preempt: str = CHECKPOINT) -> str:
    """Algorithm 3: ``"drain"`` or ``preempt`` (``"checkpoint"`` or ``"kill"``).

    Parameters
    ----------
    cur_est, cur_exec : the running task's estimated length and time executed so far (s).
    cand_est, cand_exec : the candidate's (a preempted candidate has executed some).
    preempt : the mechanism used when not draining.
    """
    if preempt not in (CHECKPOINT, KILL):
        raise ConfigError(f"dynamic preemption chooses between drain and checkpoint or kill; "
                          f"got {preempt!r}")
    if cur_est < 0 or cand_est < 0:
        raise ConfigError(f"estimated lengths must be >= 0 s, got {cur_est} and {cand_est}")
    cur_est, cand_est = max(cur_est, 1e-12), max(cand_est, 1e-12)  # zero-work tasks
    deg_current = remaining(cand_est, cand_exec) / cur_est
    deg_candidate = remaining(cur_est, cur_exec) / cand_est
    return DRAIN if deg_current > deg_candidate else preempt
