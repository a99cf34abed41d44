"""The example notebooks (examples/notebooks) run from top to bottom without error, in a fresh
kernel that imports the same volcanic as these tests; one also shows what it claims."""

from __future__ import annotations

import functools
import os
import pathlib
import re

import pytest

nbclient = pytest.importorskip("nbclient")
nbformat = pytest.importorskip("nbformat")
pytest.importorskip("ipykernel")
pytest.importorskip("matplotlib")

import volcanic  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[2]
# A notebook added here must run without error; one that needs data this machine lacks (the
# openb trace) should say so in its output and end cleanly, not fail.
NOTEBOOKS = [
    "queues_reclaim.ipynb",
    "fgd.ipynb",
    "foresight.ipynb",
    "job_orders.ipynb",
]


@functools.cache
def executed(name: str) -> nbformat.NotebookNode:
    """The notebook after running every cell, in the repository's root (the working directory
    of `make` and the CLI, from which ../shared/traces is found). A cell that raises fails
    the run with the cell and its traceback."""
    notebook = nbformat.read(ROOT / "examples" / "notebooks" / name, as_version=4)
    client = nbclient.NotebookClient(notebook, timeout=120, kernel_name="python3",
                                     resources={"metadata": {"path": str(ROOT)}})
    client.execute(env=kernel_environment())
    return notebook


def kernel_environment() -> dict[str, str]:
    """This process's environment, with the folder holding the volcanic it imported first on
    PYTHONPATH: an installed package, or a source overlay, is what the kernel imports too."""
    package_parent = str(pathlib.Path(volcanic.__file__).resolve().parents[1])
    path = os.pathsep.join(p for p in (package_parent, os.environ.get("PYTHONPATH")) if p)
    return dict(os.environ, PYTHONPATH=path)


def text_outputs(notebook: nbformat.NotebookNode) -> str:
    """What the cells printed and their plain-text results, in order."""
    texts = []
    for cell in notebook.cells:
        for output in cell.get("outputs", []):
            texts.append(output.get("text") or output.get("data", {}).get("text/plain", ""))
    return "\n".join(texts)


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_notebook_runs_without_error(name):
    notebook = executed(name)
    errors = [o for c in notebook.cells for o in c.get("outputs", []) if o.get("output_type") == "error"]
    assert errors == []
    assert all(c.get("execution_count") for c in notebook.cells if c.cell_type == "code")  # none skipped


def test_queues_reclaim_notebook_shows_reclaim_cutting_the_wait():
    """The notebook's what-if: the training gang starts within a session or two of arriving
    with reclaim, and waits for research's trials (600 s of their 900) without."""
    printed = text_outputs(executed("queues_reclaim.ipynb"))
    found = re.search(r"train waited (\d+) s with reclaim, (\d+) s without", printed)
    assert found, "the what-if cell printed no comparison"
    with_reclaim, without = map(int, found.groups())
    assert with_reclaim <= 5 and without >= 600


def test_fgd_notebook_shows_fgd_leaving_the_least_gpu_unallocated():
    """On its sample of the trace: FGD < best fit < random fit, as in the paper; without the
    trace the notebook says so and runs nothing."""
    printed = text_outputs(executed("fgd.ipynb"))
    if "is not on this machine" in printed:
        pytest.skip("the openb trace (../shared/traces) is not on this machine")
    found = dict(re.findall(r"(random|binpack|fgd) ([0-9.]+)%", printed))
    assert set(found) == {"random", "binpack", "fgd"}, printed
    assert float(found["fgd"]) < float(found["binpack"]) < float(found["random"])


def test_foresight_notebook_shows_the_forecast_exact_where_the_estimates_held():
    """docs/foresight.md: with the estimates ahead of a job right, it starts when forecast; the
    one job behind a 6-minute underestimate starts 6 minutes late."""
    printed = text_outputs(executed("foresight.ipynb"))
    found = re.search(r"(\d+) of (\d+) jobs started within a minute of their forecast; the largest error: "
                      r"([0-9.]+) min \((train-\d+)\)", printed)
    assert found, "the comparison cell printed nothing"
    within, total, worst, name = int(found[1]), int(found[2]), float(found[3]), found[4]
    assert (within, total, worst, name) == (8, 9, 6.0, "train-10")
    assert "Would start it now:\n  - submit it to queue default, which has room" in printed


def test_job_orders_notebook_shows_each_order_favouring_whom_it_should():
    """docs/queues.md, "A job order per queue", on one seeded trace: sjf cuts the median wait,
    priority the high class's, fair the light namespace's, each against fifo."""
    printed = text_outputs(executed("job_orders.ipynb"))
    found = re.search(r"sjf p50 (\d+) s vs fifo (\d+) s; high waits (\d+) s under priority vs (\d+) s under fifo; "
                      r"team-c waits (\d+) s under fair vs (\d+) s under fifo", printed)
    assert found, "the summary cell printed nothing"
    sjf, fifo_p50, high_priority, high_fifo, light_fair, light_fifo = map(int, found.groups())
    assert sjf * 2 <= fifo_p50
    assert high_priority * 4 <= high_fifo
    assert light_fair * 4 <= light_fifo
