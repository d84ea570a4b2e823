"""``Profile``: a model's per-layer costs on one NPU, each cost under its layer's name.

``profile(layers, npu)`` returns bare ``LayerCost``s in layer order; a ``Profile`` keeps the
layers beside them, so a cost is found by name (``prof["conv1"]``), iterated as
``(name, cost)`` pairs, and turned into rows, a ``pandas.DataFrame`` or a total without
zipping two lists by hand. ``profile_model`` builds one from a zoo name, an ONNX file, a
SCALE-Sim topology or a list of layers.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from npuweave.cost.energy import Accesses, LayerEnergy, energy_spec, layer_accesses, layer_energy
from npuweave.cost.registry import profile
from npuweave.cost.traffic import Formats
from npuweave.cost.types import LayerCost
from npuweave.errors import UnknownNameError, did_you_mean, optional_module
from npuweave.hardware.npu import NPU
from npuweave.hardware.resolve import get_npu
from npuweave.workload.layer import Layer

#: Columns of ``Profile.rows()`` (and of ``npuweave profile --csv/--json/--parquet``), in order.
COLUMNS = ("name", "kind", "macs", "weight_bytes", "act_bytes", "dram_bytes", "compute_us",
           "memory_us", "intensity", "bound", "utilization", "compute_cycles", "energy_uj",
           "compute_energy_uj", "sram_energy_uj", "dram_energy_uj", "static_energy_uj",
           *Accesses.__dataclass_fields__)


@dataclass(frozen=True, slots=True)
class Profile:
    """Per-layer costs of ``model`` on ``npu`` at ``batch`` under ``cost_model``.

    Attributes
    ----------
    model : the model's name.
    npu : the NPU the costs are for.
    batch : samples per inference.
    cost_model : registered cost model name.
    layers, costs : the layers and their costs, in execution order (same length).
    """

    model: str
    npu: NPU
    batch: int
    cost_model: str
    layers: tuple[Layer, ...]
    costs: tuple[LayerCost, ...]

    def __len__(self) -> int:
        return len(self.costs)

    def __iter__(self) -> Iterator[tuple[str, LayerCost]]:
        """``(layer name, cost)`` pairs in execution order."""
        return iter(zip((la.name for la in self.layers), self.costs, strict=True))

    def __getitem__(self, name: str) -> LayerCost:
        """The cost of the layer called ``name``."""
        for layer, cost in zip(self.layers, self.costs, strict=True):
            if layer.name == name:
                return cost
        names = [la.name for la in self.layers]
        raise UnknownNameError(f"{self.model} has no layer {name!r}{did_you_mean(name, names)}")

    @property
    def names(self) -> list[str]:
        """Layer names in execution order."""
        return [la.name for la in self.layers]

    @property
    def total(self) -> LayerCost:
        """The sum of every layer's cost."""
        return sum(self.costs, LayerCost())

    def accesses(self) -> list[Accesses]:
        """Per-layer access counts (SCALE-Sim's counters, see ``npuweave.cost.energy``)."""
        return [layer_accesses(la, self.npu, self.batch, self.cost_model) for la in self.layers]

    def energies(self) -> tuple[list[LayerEnergy], str | None]:
        """Per-layer energy under the NPU's energy spec, and the default-table note (or None).

        Examples
        --------
        >>> from npuweave.hardware import preset
        >>> per_layer, note = profile_model("ncf", preset("prema")).energies()
        >>> note is None and all(e.total_j > 0 for e in per_layer)
        True
        """
        spec, note = energy_spec(self.npu)
        return [layer_energy(la, c, a, self.npu, spec, self.batch) for la, c, a
                in zip(self.layers, self.costs, self.accesses(), strict=True)], note

    def rows(self, energies: Sequence[LayerEnergy] | None = None) -> list[dict[str, Any]]:
        """One plain dict per layer with the ``COLUMNS`` (times in microseconds).

        Examples
        --------
        >>> from npuweave.hardware import preset
        >>> prof = profile_model("ncf", preset("prema"))
        >>> prof.rows()[0]["name"] == prof.names[0]
        True
        """
        out = []
        if energies is None:
            energies = self.energies()[0]
        for layer, c, en, acc in zip(self.layers, self.costs, energies, self.accesses(),
                                     strict=True):
            out.append({
                "name": layer.name, "kind": str(layer.kind), "macs": c.macs,
                "weight_bytes": c.weight_bytes, "act_bytes": c.act_bytes,
                "dram_bytes": c.dram_bytes, "compute_us": c.compute_s * 1e6,
                "memory_us": c.memory_s * 1e6, "intensity": c.intensity, "bound": c.bound,
                "utilization": c.utilization,
                "compute_cycles": round(c.compute_s * self.npu.clock_hz),
                "energy_uj": en.total_j * 1e6, "compute_energy_uj": en.compute_j * 1e6,
                "sram_energy_uj": en.sram_j * 1e6, "dram_energy_uj": en.dram_j * 1e6,
                "static_energy_uj": en.static_j * 1e6, **acc.to_dict(),
            })
        return out

    def to_dataframe(self) -> Any:
        """The rows as a ``pandas.DataFrame`` indexed by layer name (``pandas`` extra).

        An infinite arithmetic intensity (a layer without DRAM traffic) stays ``inf`` here;
        JSON output writes it as ``null``.

        Examples
        --------
        >>> profile_model("resnet50", "prema").to_dataframe().loc["conv1", "macs"]  # doctest: +SKIP
        """
        pd = optional_module("pandas", "pandas")
        return pd.DataFrame(self.rows(), columns=list(COLUMNS)).set_index("name")

    def to_dict(self) -> dict[str, Any]:
        """Plain document: model, NPU, batch, cost model, per-layer rows and the total."""
        energies, note = self.energies()
        rows = self.rows(energies)
        for row, en in zip(rows, energies, strict=True):
            row["accesses"] = {k: row[k] for k in Accesses.__dataclass_fields__}
            row["energy_j"] = en.total_j
        return {"model": self.model, "npu": self.npu.to_dict(), "batch": self.batch,
                "cost_model": self.cost_model, "layers": rows,
                "total": self.total.to_dict(), "energy": self.energy_summary(energies, note)}

    def energy_summary(self, energies: Sequence[LayerEnergy] | None = None,
                       note: str | None = None) -> dict[str, Any]:
        """The model alone (its layers back to back): joules by kind, per inference, average
        power, EDP, and the default-table note (None when the NPU has an energy section)."""
        if energies is None:
            energies, note = self.energies()
        return energy_summary(sum(energies, LayerEnergy()), sum(c.time_s for c in self.costs),
                              self.batch, note)



def profile_model(model: str | Path | Sequence[Layer], npu: str | Path | NPU,
                  batch: int | None = None, formats: Formats = None,
                  cost_model: str = "systolic-ws", name: str | None = None) -> Profile:
    """Profile a zoo model, an ``.onnx`` file, a SCALE-Sim topology ``.csv`` or a list of layers.

    ``npu`` is a preset name, an NPU YAML or SCALE-Sim ``.cfg`` path, or an ``NPU``;
    ``batch`` defaults to the model's own (ONNX) batch, else 1.

    Examples
    --------
    >>> from npuweave.hardware import preset
    >>> prof = profile_model("ncf", preset("prema"), batch=4)
    >>> prof.batch, len(prof) == len(prof.names)
    (4, True)
    """
    from npuweave.workload import load_graph, lower

    spec = get_npu(npu)
    if isinstance(model, (str, Path)):
        graph = load_graph(model)
        layers: tuple[Layer, ...] = tuple(lower(graph))
        label = name or graph.name
        batch = batch or int(graph.meta.get("batch", 1) or 1)
    else:
        layers, label, batch = tuple(model), name or "model", batch or 1
    costs = profile(layers, spec, batch=batch, formats=formats, model=cost_model)
    return Profile(label, spec, batch, cost_model, layers, tuple(costs))


def energy_summary(energy: LayerEnergy, time_s: float, batch: int,
                   note: str | None) -> dict[str, Any]:
    """Totals of a model run alone for ``time_s`` (its layers back to back): joules by kind,
    per inference, average power and the energy-delay product."""
    return {**energy.to_dict(), "energy_per_inference_j": energy.total_j / batch,
            "time_s": time_s, "avg_power_w": energy.total_j / time_s if time_s > 0 else 0.0,
            "edp_js": energy.total_j * time_s, "note": note}
