"""``compare``'s docstring shows what it returns: Layerweaver interleaving where it applies
and its failsafe where it does not (the docstring's examples run here as a doctest)."""

from __future__ import annotations

import doctest

from npuweave.experiments import compare as compare_fn


def test_compare_docstring_examples_hold():
    finder, runner = doctest.DocTestFinder(), doctest.DocTestRunner(verbose=False)
    tests = finder.find(compare_fn, "compare", globs={"compare": compare_fn})
    assert tests and sum(len(t.examples) for t in tests) >= 5
    for t in tests:
        runner.run(t)
    result = runner.summarize(verbose=False)
    assert result.failed == 0 and result.attempted >= 5
