"""LLM batch policies: which prefill chunks and whether the decodes run in the next iteration.

A policy reads the state, admits waiting requests (KV blocks permitting) and answers a
``Plan``; it never advances time. Registered by name (``llm_schedulers()``):

* ``orca``: iteration-level batching; every iteration runs all decodes plus the whole prompts
  of newly admitted requests (up to ``max_tokens``).
* ``vllm``: prefill-prioritizing; when a waiting request can be admitted, the iteration is
  prefill-only (whole prompts up to ``max_tokens``), else decode-only.
* ``sarathi:chunk=N``: every iteration runs all decodes plus prefill chunks filling a budget
  of ``N`` tokens (decodes count one each); a prompt may span many iterations.
* ``layerweaver``: a prefill-only batch (as ``vllm`` picks it) and the decode batch run as two
  streams interleaved layer by layer with the Layerweaver policy.
* ``disagg:P+D``: prefill on ``P`` NPUs, decode on ``D`` NPUs, KV moved between them
  (``npuweave.sim.llm.disagg``).
"""

from __future__ import annotations

from dataclasses import dataclass

from npuweave.errors import ConfigError, unknown_name
from npuweave.sim.llm.state import LLMState

NAMES = {
    "orca": "iteration-level batching: all decodes + whole new prompts each iteration",
    "vllm": "prefill-prioritizing: prefill-only iterations while requests wait, else decode",
    "sarathi": "chunked prefill (chunk=N token budget) mixed into every decode iteration",
    "layerweaver": "a prefill batch and the decode batch interleaved layer-wise (Layerweaver)",
    "disagg": "prefill and decode on separate NPUs (disagg:P+D), KV transfer priced",
}


@dataclass(frozen=True, slots=True)
class LLMScheduler:
    """A parsed ``--llm-scheduler``: name, Sarathi's chunk, disaggregation's NPU counts."""

    name: str
    chunk: int = 512
    prefill_npus: int = 1
    decode_npus: int = 1

    @property
    def label(self) -> str:
        if self.name == "sarathi":
            return f"sarathi:chunk={self.chunk}"
        if self.name == "disagg":
            return f"disagg:{self.prefill_npus}+{self.decode_npus}"
        return self.name


def llm_schedulers() -> dict[str, str]:
    """Registered LLM batch policies: name -> one-line description."""
    return dict(NAMES)


def _count(text: str, what: str, spec: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if not 1 <= value <= 65536:
        raise ConfigError(f"--llm-scheduler {spec!r}: {what} must be an integer in [1, 65536], "
                          f"got {text!r}")
    return value


def parse_llm_scheduler(spec: str) -> LLMScheduler:
    """``orca``, ``vllm``, ``sarathi[:chunk=N]``, ``layerweaver`` or ``disagg[:P+D]``.

    Examples
    --------
    >>> parse_llm_scheduler("sarathi:chunk=256").chunk
    256
    >>> parse_llm_scheduler("disagg:2+1").prefill_npus
    2
    """
    name, _, arg = spec.strip().partition(":")
    if name not in NAMES:
        raise unknown_name("LLM scheduler", name, list(NAMES))
    if not arg:  # the defaults are the record's own
        return LLMScheduler(name)
    if name == "sarathi":
        key, _, val = arg.partition("=")
        if key != "chunk":
            raise ConfigError(f"--llm-scheduler {spec!r}: write sarathi:chunk=N")
        return LLMScheduler(name, chunk=_count(val, "chunk", spec))
    if name == "disagg":
        p, sep, d = arg.partition("+")
        if not sep:
            raise ConfigError(f"--llm-scheduler {spec!r}: write disagg:P+D (e.g. disagg:1+1)")
        return LLMScheduler(name, prefill_npus=_count(p, "P", spec),
                            decode_npus=_count(d, "D", spec))
    raise ConfigError(f"--llm-scheduler {spec!r}: {name} takes no parameter")


@dataclass(slots=True)
class Plan:
    """One iteration: prefill chunks ``(request, new tokens)`` and whether decodes run."""

    prefill: list[tuple[int, int]]
    decode: bool


def admit(st: LLMState, budget: int) -> None:
    """Admit waiting requests in order while their prefill fits ``budget`` tokens and the KV.

    The first request is admitted even when its prompt alone is over the budget (it then runs
    alone). Swapped-out requests come back first (they are at the head of the queue).
    """
    pending = sum(int(st.target[r] - st.done[r]) for r in st.prefilling)
    while st.waiting:
        r = st.waiting[0]
        need = 0 if st.swapped[r] else int(st.target[r] - st.done[r])
        if pending and pending + need > budget:
            return
        if not st.try_admit(r):
            return
        st.waiting.popleft()
        pending += need


def whole_prompts(st: LLMState, budget: int) -> list[tuple[int, int]]:
    """The whole remaining prefill of admitted requests, in order, within ``budget`` tokens."""
    out: list[tuple[int, int]] = []
    used = 0
    for r in st.prefilling:
        left = int(st.target[r] - st.done[r])
        if out and used + left > budget:
            break
        out.append((r, left))
        used += left
    return out


def chunks(st: LLMState, budget: int) -> list[tuple[int, int]]:
    """Prefill chunks filling ``budget`` tokens, ongoing prefills first (Sarathi-Serve)."""
    out: list[tuple[int, int]] = []
    for r in st.prefilling:
        if budget <= 0:
            break
        take = min(budget, int(st.target[r] - st.done[r]))
        out.append((r, take))
        budget -= take
    return out


def plan(sched: LLMScheduler, st: LLMState, max_tokens: int) -> Plan:
    """The next iteration under ``sched`` (admitting waiting requests as it goes)."""
    if sched.name == "sarathi":
        budget = max(0, sched.chunk - len(st.decoding))
        if budget:
            admit(st, budget)
        return Plan(chunks(st, budget), True)
    admit(st, max_tokens)
    pre = whole_prompts(st, max_tokens)
    if sched.name == "orca":
        return Plan(pre, True)
    if sched.name in ("vllm", "layerweaver"):
        return Plan(pre, not pre or sched.name == "layerweaver")
    raise ConfigError(f"LLM scheduler {sched.name!r} has no single-NPU plan")
