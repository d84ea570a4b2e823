"""``npuweave predict`` and ``npuweave reproduce prema``.

``predict`` prints PREMA's estimate of one task (Algorithm 1 per layer plus the RNN
output-length table) beside the simulated isolated time for the actual output length.
"""

from __future__ import annotations

from typing import Any

import click

from npuweave.errors import ConfigError


def _task_name(model: str) -> str:
    """A PREMA task name from a task name (``rnn-asr``) or a zoo name/alias (``lstm-speech``)."""
    from npuweave.workload import seqlen, zoo

    key = model.lower()
    if key in seqlen.MIX:
        return key
    canon = zoo.canonical(model)
    for name, zoo_model in seqlen.MIX.items():
        if zoo_model == canon:
            return name
    raise ConfigError(f"model {model!r} is not in PREMA's mix; use one of "
                      f"{', '.join(seqlen.MIX)} (or their zoo names)")


def predict_row(task: str, npu_spec: str, batch: int, in_len: int | None,
                out_len: int | None, seed: int) -> dict[str, Any]:
    """One row: the estimate and the simulated isolated time (actual length drawn if not
    given: uniformly among the outputs profiled for ``in_len``)."""
    import numpy as np

    from npuweave.cost.predictor import estimate, expected_out_len, isolated_time
    from npuweave.hardware import get_npu
    from npuweave.workload import seqlen

    npu = get_npu(npu_spec)
    name = _task_name(task)
    rnn = name in seqlen.names()
    if not rnn and (in_len is not None or out_len is not None):
        raise ConfigError(f"{name} is a CNN: it has no --in-len/--out-len")
    if rnn and in_len is None:
        prof = seqlen.profile(name)
        raise ConfigError(f"{name} is an RNN: give --in-len (profiled: {prof.inputs[0]}.."
                          f"{prof.inputs[-1]})")
    expected = expected_out_len(name, in_len)
    if rnn and out_len is None:
        seen = seqlen.profile(name).observed(in_len)  # type: ignore[arg-type]
        out_len = int(seen[int(np.random.default_rng(seed).integers(len(seen)))])
    if rnn and out_len is not None and out_len < 1:
        raise ConfigError(f"--out-len must be >= 1, got {out_len}")
    est = estimate(name, npu, batch, in_len)
    sim = isolated_time(name, npu, batch, in_len, None if name == "rnn-sa" else out_len)
    return {"task": name, "model": seqlen.MIX[name], "npu": npu.name, "batch": batch,
            "in_len": in_len, "expected_out_len": expected,
            "actual_out_len": in_len if name == "rnn-sa" else out_len,
            "estimate_ms": est * 1e3, "simulated_ms": sim * 1e3,
            "error_pct": 100.0 * (est - sim) / sim}


@click.command("predict")
@click.argument("model")
@click.option("--npu", "npu_spec", default="prema", show_default=True,
              help="NPU preset or YAML file.")
@click.option("--batch", default=1, show_default=True, type=click.IntRange(1, 4096))
@click.option("--in-len", type=int, default=None,
              help="RNN input length (tokens, words, or 80 ms speech segments).")
@click.option("--out-len", type=int, default=None,
              help="Actual output length (default: drawn from the profile with --seed).")
@click.option("--seed", default=0, show_default=True, type=int)
@click.option("--json", "json_path", type=click.Path(dir_okay=False), help="Write the row as JSON.")
@click.option("--csv", "csv_path", type=click.Path(dir_okay=False), help="Write the row as CSV.")
def predict(model: str, npu_spec: str, batch: int, in_len: int | None, out_len: int | None,
            seed: int, json_path: str | None, csv_path: str | None) -> None:
    """PREMA's estimate of one task vs its simulated isolated time.

    MODEL is a PREMA task (cnn-an cnn-gn cnn-vn cnn-mn rnn-sa rnn-mt1 rnn-mt2 rnn-asr) or its
    zoo name (lstm-translation means rnn-mt1, English to German).

    \b
    Example:
      npuweave predict lstm-speech --npu prema --in-len 20
      npuweave predict rnn-mt2 --in-len 12 --out-len 9 --json p.json
    """
    from npuweave import report
    from npuweave.cli._console import console

    row = predict_row(model, npu_spec, batch, in_len, out_len, seed)
    console().print(report.rich_table([row], title="PREMA prediction"))
    if json_path:
        report.write_rows_json(json_path, {"rows": [row]})
    if csv_path:
        report.write_csv(csv_path, [row])
