"""The package's layers (DESIGN.md, pyproject's [tool.importlinter]): kube at the bottom and
importing nothing else of volcanic; scheduler and controllers over it; admission over those;
the embedded cluster and the real-cluster layer composing them, never each other; cli on top."""

from __future__ import annotations

import pathlib

from importlinter.cli import lint_imports

ROOT = pathlib.Path(__file__).resolve().parents[2]


def test_import_contracts_hold(capsys):
    code = lint_imports(config_filename=str(ROOT / "pyproject.toml"))
    report = capsys.readouterr().out
    assert code == 0, report
    assert "0 broken" in report
