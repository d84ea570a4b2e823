"""Unknown names get "did you mean" suggestions (difflib) in one-line CLI errors."""

from __future__ import annotations

import pytest
from eco_helpers import run

from npuweave.errors import UnknownNameError, did_you_mean, unknown_name


def test_did_you_mean():
    assert did_you_mean("resnet5", ["resnet50", "bert-base"]) == " (did you mean 'resnet50'?)"
    assert did_you_mean("BERT-BASE", ["bert-base"]) == " (did you mean 'bert-base'?)"
    assert did_you_mean("qqqq", ["resnet50"]) == ""
    err = unknown_name("model", "vgg61", ["vgg16", "ncf"])
    assert isinstance(err, UnknownNameError)
    assert str(err) == "unknown model 'vgg61' (did you mean 'vgg16'?); choose one of: ncf, vgg16"


@pytest.mark.parametrize(("argv", "hint"), [
    (["profile", "resnet5"], "did you mean 'resnet50'"),
    (["profile", "resnet50", "--npu", "memory-centrik"], "did you mean 'memory-centric'"),
    (["profile", "resnet50", "--cost-model", "rooflin"], "did you mean 'roofline'"),
    (["schedule", "--models", "ncf,bert-base", "--scheduler", "layerwever"],
     "did you mean 'layerweaver'"),
    (["profle", "resnet50"], "did you mean 'profile'"),
    (["schedul"], "did you mean 'schedule'"),
    (["zoo", "exprt", "resnet50", "x.onnx"], "did you mean 'export'"),
    (["reproduce", "layerwaever"], "did you mean 'layerweaver'"),
])
def test_cli_suggests(capsys, argv, hint):
    code, _, err = run(argv, capsys)
    assert code == 2 and err.count("\n") == 1 and hint in err, err


def test_no_suggestion_when_nothing_is_close(capsys):
    code, _, err = run(["xyzzy"], capsys)
    assert code == 2 and "did you mean" not in err and "No such command 'xyzzy'" in err
