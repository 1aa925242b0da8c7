"""The examples in the pipeline's docstrings run, and say what the code does (doctest)."""

import doctest
import importlib
import pkgutil

import pytest

import pipeline


def _modules_with_examples() -> list[str]:
    names = []
    for info in pkgutil.walk_packages(pipeline.__path__, "pipeline."):
        spec = importlib.util.find_spec(info.name)
        if spec and spec.origin and spec.origin.endswith(".py"):
            with open(spec.origin, encoding="utf-8") as f:
                if ">>> " in f.read():
                    names.append(info.name)
    return names


@pytest.mark.parametrize("name", _modules_with_examples())
def test_docstring_examples_hold(name):
    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0 and result.failed == 0
