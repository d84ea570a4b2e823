"""The built-in model zoo: DNNs defined from their architectures (shapes only, no weights).

``build(name, **params)`` returns a fresh ``Graph`` at batch 1; ``names()`` lists the
canonical names. Names are case-insensitive and ignore ``-``/``_``; the Layerweaver paper's
abbreviations (IC, MN, RN, RX, BB, BL, NCF, XL) and PREMA's (CNN-AN, CNN-GN, CNN-VN, CNN-MN,
RNN-SA, RNN-MT, RNN-ASR) are aliases. Every assumption behind a model is stated in its
family module and in ``docs/MODELS.md``.

Examples
--------
>>> from npuweave.workload import zoo
>>> zoo.canonical("RN")
'resnet50'
>>> g = zoo.build("bert-base", seq_len=64)
>>> g.tensors["input_ids"].shape
(1, 64)
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from npuweave.errors import ConfigError, unknown_name
from npuweave.workload.graph import Graph
from npuweave.workload.zoo import bert, classic, inception, mobilenet, ncf, resnet, rnn, vit

__all__ = ["Param", "aliases", "build", "canonical", "defaults", "describe", "names"]


@dataclass(frozen=True, slots=True)
class Param:
    """One build parameter: an integer in ``[lo, hi]`` (a multiple of ``step``) or a choice.

    ``default=None`` means "derived from the other parameters" (documented per model).
    """

    default: int | str | None
    lo: int = 1
    hi: int = 1 << 20
    step: int = 1
    choices: tuple[str, ...] = ()

    def check(self, model: str, name: str, value: object) -> None:
        where = f"model {model!r}: parameter {name!r}"
        if self.choices:
            if value not in self.choices:
                raise ConfigError(f"{where} must be one of {', '.join(self.choices)}; "
                                  f"got {value!r}")
            return
        if value is None and self.default is None:
            return
        if isinstance(value, bool) or not isinstance(value, int):
            raise ConfigError(f"{where} must be an integer; got {value!r}")
        if not self.lo <= value <= self.hi or value % self.step:
            mult = f" and a multiple of {self.step}" if self.step > 1 else ""
            raise ConfigError(f"{where} must be in [{self.lo}, {self.hi}]{mult}; got {value}")


@dataclass(frozen=True, slots=True)
class _Entry:
    builder: Callable[..., Graph]
    summary: str
    aliases: tuple[str, ...] = ()
    params: dict[str, Param] = field(default_factory=dict)


_SEQ = Param(128, 1, 512)
_REGISTRY: dict[str, _Entry] = {
    "inceptionv3": _Entry(inception.inceptionv3, "InceptionV3, 299x299, no aux head", ("IC",)),
    "mobilenetv2": _Entry(mobilenet.mobilenetv2, "MobileNetV2 1.0, 224x224", ("MN",)),
    "resnet50": _Entry(resnet.resnet50, "ResNet-50 v1.5, 224x224", ("RN",)),
    "resnet34": _Entry(resnet.resnet34, "ResNet-34, 224x224 (basic blocks)", ()),
    "resnext50": _Entry(resnet.resnext50, "ResNeXt-50 32x4d, 224x224", ("RX",)),
    "bert-base": _Entry(lambda seq_len: bert.bert("base", seq_len),
                        "BERT-base encoder + pooler", ("BB",), {"seq_len": _SEQ}),
    "bert-large": _Entry(lambda seq_len: bert.bert("large", seq_len),
                         "BERT-large encoder + pooler", ("BL",), {"seq_len": _SEQ}),
    "ncf": _Entry(ncf.ncf, "NeuMF (NCF), MovieLens-20M sizes", ("NCF",)),
    "xlnet": _Entry(lambda seq_len, size: bert.xlnet(size, seq_len),
                    "XLNet content stream (large by default)", ("XL",),
                    {"seq_len": _SEQ, "size": Param("large", choices=("large", "base"))}),
    "alexnet": _Entry(classic.alexnet, "AlexNet (grouped, LRN), 227x227", ("CNN-AN",)),
    "googlenet": _Entry(inception.googlenet, "GoogLeNet / Inception v1, 224x224", ("CNN-GN",)),
    "vgg16": _Entry(classic.vgg16, "VGG-16, 224x224", ("CNN-VN",)),
    "mobilenetv1": _Entry(mobilenet.mobilenetv1, "MobileNetV1 1.0, 224x224", ("CNN-MN",)),
    "lstm-sentiment": _Entry(rnn.lstm_sentiment, "2-layer LSTM sentiment classifier",
                             ("RNN-SA",), {"seq_len": Param(64, 1, 4096)}),
    "lstm-translation": _Entry(rnn.lstm_translation, "GNMT-style LSTM encoder-decoder",
                               ("RNN-MT",), {"seq_len": Param(25, 1, 1024),
                                             "out_len": Param(None, 1, 1024)}),
    "lstm-speech": _Entry(rnn.lstm_speech, "Listen, Attend and Spell (LSTM)", ("RNN-ASR",),
                          {"seq_len": Param(512, 8, 16384, step=8),
                           "out_len": Param(None, 1, 4096)}),
    "vit-base": _Entry(vit.vit_base, "ViT-B/16, 224x224, ImageNet-1k head", ()),
}


def _key(name: str) -> str:
    return "".join(ch for ch in name.lower() if ch not in "-_ ")


_LOOKUP: dict[str, str] = {}
for _name, _entry in _REGISTRY.items():
    for _alias in (_name, *_entry.aliases):
        assert _LOOKUP.get(_key(_alias), _name) == _name, _alias
        _LOOKUP[_key(_alias)] = _name


def names() -> list[str]:
    """Canonical model names, Layerweaver's eight first, then PREMA's."""
    return list(_REGISTRY)


def canonical(name: str) -> str:
    """Resolve a name or alias (any case, ``-``/``_`` ignored) to its canonical name."""
    found = _LOOKUP.get(_key(str(name)))
    if found is None:
        valid = names() + [a for e in _REGISTRY.values() for a in e.aliases]
        raise unknown_name("model", str(name), valid)
    return found


def aliases(name: str) -> tuple[str, ...]:
    """The paper abbreviations of a model."""
    return _REGISTRY[canonical(name)].aliases


def describe(name: str) -> str:
    """One line saying what the model is."""
    return _REGISTRY[canonical(name)].summary


def defaults(name: str) -> dict[str, int | str | None]:
    """The build parameters a model accepts, with their defaults (None: derived)."""
    return {k: p.default for k, p in _REGISTRY[canonical(name)].params.items()}


def build(name: str, **params: object) -> Graph:
    """Build a zoo model at batch 1.

    Parameters
    ----------
    name : canonical name or alias (see ``names()``).
    **params : model parameters, e.g. ``seq_len`` for transformers and RNNs (see ``defaults``).

    Raises
    ------
    UnknownNameError : the name is not in the zoo.
    ConfigError : a parameter is unknown to the model or out of range.

    Examples
    --------
    >>> build("RNN-MT", seq_len=20).name
    'lstm-translation'
    """
    model = canonical(name)
    entry = _REGISTRY[model]
    for key, value in params.items():
        spec = entry.params.get(key)
        if spec is None:
            accepted = ", ".join(entry.params) or "none"
            raise ConfigError(f"model {model!r} has no parameter {key!r}; accepted: {accepted}")
        spec.check(model, key, value)
    resolved = {k: params.get(k, p.default) for k, p in entry.params.items()}
    graph = entry.builder(**resolved)
    graph.name, graph.source = model, f"zoo:{model}"
    graph.meta["params"] = resolved
    return graph
