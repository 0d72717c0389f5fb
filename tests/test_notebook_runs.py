"""tools/run_notebooks.py: profiles other than default never touch the committed outputs, PROFILE is
always injected, and an executed notebook stays identical to its paired script (JupyterLab's
jupytext opens it)."""
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))
import run_notebooks  # noqa: E402

OUTPUT_VARS = ("BBB_OUTPUT_DIR", "BBB_FIGURES_DIR", "BBB_RESULTS_DIR", "BBB_CHECKPOINT_DIR")


def git(*args, cwd):
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True,
                          text=True).stdout


def snapshot_clone(dest):
    """Clone the repository into ``dest`` with the working tree's uncommitted edits and new files
    committed there, so that `git status` in the clone shows only what a run changes."""
    git("clone", "-q", str(ROOT), str(dest), cwd=ROOT)
    changed = git("ls-files", "-z", "--modified", "--others", "--exclude-standard", cwd=ROOT)
    for name in filter(None, changed.split("\0")):
        src, dst = ROOT / name, dest / name
        if src.is_file() and not src.is_symlink():
            dst.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dst)
        elif not src.exists() and dst.exists():
            dst.unlink()
    git("add", "-A", cwd=dest)
    git("-c", "user.name=test", "-c", "user.email=test@localhost", "commit", "-q",
        "--allow-empty", "-m", "working tree", cwd=dest)
    return dest


def run_driver(clone, *args):
    """Run the clone's tools/run_notebooks.py with no output folders set in the environment."""
    env = {k: v for k, v in os.environ.items() if k not in OUTPUT_VARS and k != "PYTHONPATH"}
    env.setdefault("JUPYTER_PATH", str(Path(sys.prefix) / "share" / "jupyter"))
    env.update(JUPYTER_PLATFORM_DIRS="1", PYTHONHASHSEED="0", BBB_QUIET="1")
    return subprocess.run([sys.executable, str(clone / "tools" / "run_notebooks.py"), *args],
                          cwd=clone, env=env, capture_output=True, text=True, timeout=600)


def injected_source(path):
    cells = json.loads(Path(path).read_text())["cells"]
    return ["".join(c["source"]) for c in cells
            if "injected-parameters" in c["metadata"].get("tags", [])]


@pytest.fixture(scope="module")
def clone(tmp_path_factory):
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("needs git and a git checkout of the project")
    return snapshot_clone(tmp_path_factory.mktemp("repo") / "repo")


def test_a_smoke_run_changes_no_tracked_file(clone):
    proc = run_driver(clone, "--profile", "smoke", "--only", "00")
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-4000:]
    status = git("status", "--porcelain", "--untracked-files=all", cwd=clone)
    assert status == "", f"a smoke run changed the work tree:\n{status}"
    build = clone / "build" / "smoke"
    assert injected_source(build / "notebooks" / "00_theory.ipynb") == ['# Parameters\nPROFILE = "smoke"\n']
    assert sorted(p.name for p in (build / "figures").glob("00_theory-*.png")), \
        "the kernel wrote its figures elsewhere than build/smoke/figures (whose helpers did it import?)"
    assert "smoke" in json.loads((build / "results" / "runtimes.json").read_text())


def test_a_default_run_injects_the_default_profile(clone, tmp_path):
    out = tmp_path / "prepared"
    proc = run_driver(clone, "--profile", "default", "--only", "00", "--prepare-only", "--out", str(out))
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-4000:]
    assert injected_source(out / "00_theory.ipynb") == ['# Parameters\nPROFILE = "default"\n']
    assert git("status", "--porcelain", cwd=clone) == ""


def test_prepare_only_refuses_to_write_in_place(clone):
    proc = run_driver(clone, "--profile", "default", "--only", "00", "--prepare-only")
    assert proc.returncode != 0 and "--prepare-only" in proc.stderr
    assert git("status", "--porcelain", cwd=clone) == ""


def test_only_the_default_profile_writes_the_committed_notebooks(clone):
    proc = run_driver(clone, "--profile", "smoke", "--only", "00", "--out", "notebooks")
    assert proc.returncode != 0 and "only the default profile writes notebooks/" in proc.stderr
    assert git("status", "--porcelain", cwd=clone) == ""


def test_papermill_additions_are_stripped_so_the_pair_matches(tmp_path):
    """A notebook as papermill leaves it (empty tags, timing metadata, injected cell) reads as its
    script again once the driver has cleaned it."""
    import papermill as pm
    notebook = ROOT / "notebooks" / "00_theory.ipynb"
    source = run_notebooks.source_notebook(notebook, tmp_path)
    out = tmp_path / "executed.ipynb"
    pm.execute_notebook(str(source), str(out), parameters={"PROFILE": "default"}, prepare_only=True,
                        kernel_name="python3")
    import nbformat
    nb = nbformat.read(str(out), as_version=4)
    script = notebook.with_suffix(".py").read_text()
    assert run_notebooks.paired_text(nb, notebook) != script  # papermill's additions show
    run_notebooks.strip_run_additions(nb, keep_injected=False)
    assert run_notebooks.paired_text(nb, notebook) == script
    assert not any(k in c.metadata for c in nb.cells for k in ("papermill", "execution"))


def test_a_notebook_newer_than_its_script_with_other_cells_is_refused(tmp_path):
    import jupytext
    script = tmp_path / "07_x.py"
    script.write_text("# %%\nx = 1\n")
    notebook = tmp_path / "07_x.ipynb"
    nb = jupytext.read(str(script))
    nb.cells[0].source = "x = 2"  # edited in Jupyter without the pairing
    jupytext.write(nb, str(notebook), fmt="ipynb")
    os.utime(script, (1, 1))
    with pytest.raises(ValueError, match="jupytext --sync"):
        run_notebooks.check_pair(notebook)
    os.utime(script, None)  # the script is newer: it wins, as `jupytext --sync` decides
    run_notebooks.check_pair(notebook)
    script.unlink()
    with pytest.raises(ValueError, match="07_x.py is missing"):
        run_notebooks.check_pair(notebook)


def test_output_folders_follow_one_setting(monkeypatch, tmp_path):
    from helpers import utils
    for var in OUTPUT_VARS:
        monkeypatch.delenv(var, raising=False)
    assert utils.figures_dir() == utils.PROJECT_ROOT / "figures"
    monkeypatch.setenv("BBB_OUTPUT_DIR", str(tmp_path))
    assert (utils.figures_dir(), utils.results_dir(), utils.checkpoints_dir()) == (
        tmp_path / "figures", tmp_path / "results", tmp_path / "checkpoints")
    monkeypatch.setenv("BBB_RESULTS_DIR", str(tmp_path / "elsewhere"))
    assert utils.results_dir() == tmp_path / "elsewhere"


def test_papermill_with_another_profile_changes_no_tracked_file(clone, tmp_path):
    """Run as a user would, without the driver: `papermill ... -p PROFILE smoke`. The profile, read
    in helpers, sends the figures and results under build/smoke/, not over the committed ones."""
    env = {k: v for k, v in os.environ.items() if k not in OUTPUT_VARS}
    env.setdefault("JUPYTER_PATH", str(Path(sys.prefix) / "share" / "jupyter"))
    env.update(JUPYTER_PLATFORM_DIRS="1", PYTHONHASHSEED="0", BBB_QUIET="1", PYTHONPATH=str(clone),
               MPLBACKEND="Agg")
    out = tmp_path / "out.ipynb"
    proc = subprocess.run([sys.executable, "-m", "papermill", "--kernel", "python3",
                           str(clone / "notebooks" / "02_regression_uncertainty.ipynb"), str(out),
                           "-p", "PROFILE", "smoke", "--cwd", str(clone / "notebooks")],
                          cwd=clone, env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-4000:]
    status = git("status", "--porcelain", "--untracked-files=all", cwd=clone)
    assert status == "", f"papermill -p PROFILE smoke changed the work tree:\n{status}"
    assert sorted((clone / "build" / "smoke" / "figures").glob("02_regression_uncertainty-*.png"))


def test_the_profile_asked_for_decides_the_output_root(monkeypatch):
    import helpers as H
    from helpers import utils
    for var in OUTPUT_VARS:
        monkeypatch.delenv(var, raising=False)
    H.get_profile("02_regression_uncertainty", "smoke")
    assert utils.figures_dir() == utils.PROJECT_ROOT / "build" / "smoke" / "figures"
    assert utils.results_dir() == utils.PROJECT_ROOT / "build" / "smoke" / "results"
    H.get_profile("02_regression_uncertainty", "default")  # back to default in the same kernel
    assert utils.figures_dir() == utils.PROJECT_ROOT / "figures"
    monkeypatch.setenv("BBB_OUTPUT_DIR", "/elsewhere")  # an explicit setting wins
    H.get_profile("02_regression_uncertainty", "smoke")
    assert utils.results_dir() == Path("/elsewhere/results")


def test_a_rerun_keeps_the_cell_ids_and_leaves_no_clock_readings(tmp_path):
    import jupytext
    import nbformat
    notebook = ROOT / "notebooks" / "02_regression_uncertainty.ipynb"
    committed = nbformat.read(str(notebook), as_version=4)
    first = nbformat.read(str(run_notebooks.source_notebook(notebook, tmp_path)), as_version=4)
    assert [c.id for c in first.cells] == [c.id for c in committed.cells]
    # an edited script: the changed cell keeps its position's id, a new cell gets a stable one
    nb = jupytext.read(str(notebook.with_suffix(".py")))
    nb.cells[3].source += "\n# edited"
    nb.cells.insert(5, nbformat.v4.new_markdown_cell("a new cell"))
    ids = [c.id for c in run_notebooks.keep_cell_ids(nb, committed).cells]
    again = [c.id for c in run_notebooks.keep_cell_ids(jupytext.read(str(notebook.with_suffix(".py"))),
                                                       committed).cells]
    assert ids[3] == committed.cells[3].id and len(set(ids)) == len(ids)
    nb2 = jupytext.read(str(notebook.with_suffix(".py")))
    nb2.cells[3].source += "\n# edited"
    nb2.cells.insert(5, nbformat.v4.new_markdown_cell("a new cell"))
    assert [c.id for c in run_notebooks.keep_cell_ids(nb2, committed).cells] == ids
    assert again == [c.id for c in committed.cells]
    # papermill's clock readings and a stream cut into pieces by timing are gone after the run
    nb.metadata["papermill"] = {"start_time": "2026-01-01", "end_time": "x", "duration": 1.0,
                                "version": "2.7.0"}
    cell = nbformat.v4.new_code_cell("print(1); print(2)")
    cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text="1\n"),
                    nbformat.v4.new_output("stream", name="stdout", text="2\n"),
                    nbformat.v4.new_output("stream", name="stderr", text="w\n")]
    nb.cells.append(cell)
    run_notebooks.strip_run_additions(nb, keep_injected=False)
    assert nb.metadata["papermill"] == {"version": "2.7.0"}
    assert [(o.name, o.text) for o in nb.cells[-1].outputs] == [("stdout", "1\n2\n"), ("stderr", "w\n")]


def test_make_notebooks_records_runtimes_only_when_asked(monkeypatch, tmp_path):
    for var in OUTPUT_VARS:
        monkeypatch.delenv(var, raising=False)
    assert run_notebooks.runtimes_path("default", record=False) == ROOT / "build" / "runtimes.json"
    assert run_notebooks.runtimes_path("default", record=True) == ROOT / "results" / "runtimes.json"
    monkeypatch.setenv("BBB_RESULTS_DIR", str(tmp_path))
    assert run_notebooks.runtimes_path("smoke", record=False) == tmp_path / "runtimes.json"
