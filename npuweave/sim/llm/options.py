"""Text forms of the LLM serving settings (as ``npuweave.fileio.flags`` holds the serving ones):
length distributions and SLOs, shared by the command line and sweep specs."""

from __future__ import annotations

from typing import Any

from npuweave.errors import ConfigError
from npuweave.fileio.flags import parse_seconds
from npuweave.fileio.pairs import key_values
from npuweave.fileio.values import MAX_TIME_S
from npuweave.metrics.llm import SLO
from npuweave.sim.llm.serve import Lengths
from npuweave.workload.llm import MAX_TOKENS


def parse_lengths(text: str, flag: str) -> Lengths:
    """``fixed:512``, ``uniform:lo=16,hi=512`` or ``lognormal:mean=512,sigma=1``.

    Examples
    --------
    >>> parse_lengths("lognormal:mean=512,sigma=1", "--prompt-len").sigma
    1.0
    """
    kind, _, rest = text.strip().partition(":")
    # a bare number is the mean (fixed:512); each key once
    parts = [p if "=" in p else f"mean={p}" for p in filter(None, rest.split(","))]
    args: dict[str, float] = {}
    for key, val in key_values(parts, flag, "uniform:lo=16,hi=512").items():
        try:
            args[key] = float(val)
        except ValueError:
            raise ConfigError(f"{flag}: {key}={val[:40]!r} is not key=number") from None
    need = {"fixed": {"mean"}, "uniform": {"lo", "hi"}, "lognormal": {"mean", "sigma"}}
    if kind not in need or set(args) != need[kind]:
        raise ConfigError(f"{flag}: {text!r}; write fixed:N, uniform:lo=A,hi=B or "
                          f"lognormal:mean=M,sigma=S")
    if any(not 0 < v <= MAX_TOKENS for k, v in args.items() if k != "sigma") or \
            not 0 <= args.get("sigma", 0) <= 5:
        raise ConfigError(f"{flag}: {text!r}; lengths must be positive and at most {MAX_TOKENS} "
                          "tokens (and 0 <= sigma <= 5)")
    if kind != "lognormal" and any(v != int(v) for v in args.values()):
        raise ConfigError(f"{flag}: {text!r}; token counts are whole numbers")
    if kind == "uniform":
        lo, hi = int(args["lo"]), int(args["hi"])
        if lo < 1 or hi < lo:
            raise ConfigError(f"{flag}: {text!r}; need 1 <= lo <= hi")
        return Lengths("uniform", (lo + hi) / 2, lo=lo, hi=hi)
    return Lengths(kind, args["mean"], args.get("sigma", 0.0))


def parse_slo(text: str | None, need_pct: bool = False) -> SLO:
    """``ttft=1s,tbt=100ms[:p99]``; with ``need_pct`` a TBT bound must carry its percentile.

    Examples
    --------
    >>> parse_slo("ttft=1s:p50,tbt=100ms:p99").tbt_pct
    99.0
    """
    if not text:
        return SLO()
    out: dict[str, Any] = {}
    for key, val in key_values(text.split(","), "--slo", "ttft=1s,tbt=100ms").items():
        if key not in ("ttft", "tbt"):
            raise ConfigError(f"--slo: {key!r}; write ttft=1s,tbt=100ms (optionally :p99)")
        val, _, pct = val.partition(":")
        out[f"{key}_s"] = parse_seconds(val, f"--slo {key}")
        if not 0 < out[f"{key}_s"] <= MAX_TIME_S:
            raise ConfigError(f"--slo {key}: give a time > 0 and at most {MAX_TIME_S:g} s, got "
                              f"{val!r}")
        if pct:
            try:
                q = float(pct.lstrip("pP"))
            except ValueError:
                q = -1.0
            if not (pct[:1] in "pP" and 0 < q <= 100):
                raise ConfigError(f"--slo {key}: percentile {pct!r}; write e.g. :p99")
            out[f"{key}_pct"] = q
    if need_pct and "tbt_s" in out and "tbt_pct" not in out:
        raise ConfigError("--slo: the TBT bound needs a percentile here, e.g. tbt=100ms:p99")
    if need_pct and "ttft_s" in out and "ttft_pct" not in out:
        out["ttft_pct"] = out.get("tbt_pct", 99.0)
    return SLO(**out)
