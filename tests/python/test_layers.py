"""The package's layers (DESIGN.md, pyproject's [tool.importlinter]): kube and the HTTP server
at the bottom and importing nothing else of volcanic; scheduler and controllers over kube;
admission over those; the webhook serving admission; the embedded cluster and the
real-cluster layer composing them, never each other; cli on top. No import cycles inside
real, sim, admission or httpd, no contract ignoring an import, and what must stay light
stays light: `import volcanic` loads nothing else, `volcanic install --print` no Kubernetes
client (issue 34, "Packages that cannot knot")."""

from __future__ import annotations

import json
import os
import pathlib
import subprocess
import sys
import tomllib

from importlinter.cli import lint_imports
import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "python" / "volcanic"


def test_import_contracts_hold(capsys):
    code = lint_imports(config_filename=str(ROOT / "pyproject.toml"))
    report = capsys.readouterr().out
    assert code == 0, report
    assert "0 broken" in report


def _contracts() -> list[dict]:
    with open(ROOT / "pyproject.toml", "rb") as f:
        return tomllib.load(f)["tool"]["importlinter"]["contracts"]


def test_no_contract_ignores_an_import_and_real_sim_admission_may_not_cycle():
    contracts = _contracts()
    assert [c["name"] for c in contracts if c.get("ignore_imports")] == []
    acyclic = {a for c in contracts if c["type"] == "acyclic_siblings" for a in c["ancestors"]}
    assert {"volcanic.real", "volcanic.sim", "volcanic.admission"} <= acyclic


def _modules_after(code: str) -> list[str]:
    """The volcanic modules and the HTTP clients a fresh interpreter has loaded after `code`."""
    probe = (f"import json, sys\n{code}\n"
             "print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] in "
             "('volcanic', 'kubernetes', 'pycurl', 'urllib3'))))")
    # The volcanic this test runs (the source tree's or the installed one, with its extension).
    import volcanic
    where = str(pathlib.Path(volcanic.__file__).resolve().parents[1])
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([where, os.environ.get("PYTHONPATH", "")]))
    out = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True, text=True, check=True,
                         timeout=120).stdout
    return json.loads(out.splitlines()[-1])


def test_import_volcanic_loads_nothing_else_until_a_name_is_used():
    assert _modules_after("import volcanic") == ["volcanic"]
    after_use = _modules_after("import volcanic\nvolcanic.Cluster")
    assert "volcanic.cluster" in after_use and "volcanic.real" not in after_use


def test_the_public_names_load_on_first_use_and_unknown_ones_raise():
    import volcanic
    from volcanic import ConfigError, Decisions  # from-imports go through __getattr__ too
    from volcanic.cluster import Cluster
    from volcanic.errors import ConfigError as config_error
    from volcanic.scheduler import Decisions as decisions

    assert set(volcanic.__all__) <= set(dir(volcanic)) and "__version__" in dir(volcanic)
    assert volcanic.Cluster is Cluster and (ConfigError, Decisions) == (config_error, decisions)
    with pytest.raises(AttributeError, match="no_such_name"):
        volcanic.no_such_name


def test_install_print_imports_no_kubernetes_client():
    loaded = _modules_after("import contextlib, io\nfrom volcanic.cli.main import main\n"
                            "with contextlib.redirect_stdout(io.StringIO()) as out:\n"
                            "    assert main(['install', '--print', '--all']) == 0\n"
                            "assert 'kind: CustomResourceDefinition' in out.getvalue()")
    assert "volcanic.real.manifests" in loaded
    clients = [m for m in loaded if m.split(".")[0] in ("kubernetes", "pycurl", "urllib3")
               or m in ("volcanic.real.client", "volcanic.real.connection", "volcanic.real.install")]
    assert clients == []


def test_the_version_is_written_once_in_pyproject():
    import volcanic

    with open(ROOT / "pyproject.toml", "rb") as f:
        version = tomllib.load(f)["project"]["version"]
    assert volcanic.__version__ == version
    spelled = [str(p.relative_to(ROOT)) for p in PACKAGE.rglob("*.py") if f'"{version}"' in p.read_text()]
    assert spelled == []
