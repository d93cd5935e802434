"""The README's Python examples run as written (training shortened to keep the suite fast)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parent.parent / "README.md"
BLOCKS = re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)


def test_readme_has_python_examples():
    assert len(BLOCKS) >= 3


@pytest.mark.parametrize("index", range(len(BLOCKS)))
def test_readme_example_runs(index, capsys):
    code = BLOCKS[index]
    if ".learn(" in code:
        assert ".learn(300_000)" in code  # the shortening below must find the call
        code = code.replace(".learn(300_000)", ".learn(2_048)")
    namespace: dict = {"__name__": f"readme_example_{index}"}
    exec(compile(code, f"README.md[python block {index}]", "exec"), namespace)
