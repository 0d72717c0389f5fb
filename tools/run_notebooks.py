"""Execute the numbered notebooks in order with papermill.

    python tools/run_notebooks.py --profile default      # in place: notebooks/, results/, figures/
    python tools/run_notebooks.py --profile default --train 1   # ... training what results/ lacks
    python tools/run_notebooks.py --profile smoke        # everything under build/smoke/
    python tools/run_notebooks.py --clean                # relative paths in metadata only

Only the ``default`` profile writes the committed outputs (notebooks/, results/, figures/). Any
other profile writes its executed notebooks, results, figures and checkpoints under
``build/<profile>/`` (``--out`` moves the executed notebooks elsewhere), so a quick smoke run never
replaces the reproduction's numbers. PROFILE is always injected, ``default`` included.

Each notebook is executed from its paired script (notebooks/NN_name.py, where edits happen). After
the run papermill's additions (empty ``tags``, per-cell timing metadata and, in place, the
injected-parameters cell) are removed, so the executed .ipynb and its .py pair stay identical for
jupytext and JupyterLab opens them. In-place runs write to a temporary copy first and replace the
notebook only when it ran through, so a failed run never leaves a half-executed notebook behind.
"""
import argparse
import ast
import os
import sys
import tempfile
import time
from pathlib import Path

import nbformat
import papermill as pm

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from helpers.profiles import PROFILE_NAMES  # noqa: E402

NOTEBOOKS = ROOT / "notebooks"
OUTPUT_VARS = {"BBB_FIGURES_DIR": "figures", "BBB_RESULTS_DIR": "results",
               "BBB_CHECKPOINT_DIR": "checkpoints"}
RUN_METADATA = ("papermill", "execution")  # per-cell records papermill and nbclient add
RUN_TIMES = ("start_time", "end_time", "duration")  # papermill's notebook-level clock readings


def relative(path):
    """Return ``path`` relative to the repository (its name only when it lies outside)."""
    path = Path(path).resolve()
    try:
        return path.relative_to(ROOT).as_posix()
    except ValueError:
        return path.name


def clean_metadata(executed, source, target):
    """Replace the absolute paths papermill writes into the notebook's metadata (input and output
    path, the temporary name it ran under) by repository-relative ones."""
    nb = nbformat.read(str(executed), as_version=4)
    meta = nb.metadata.get("papermill", {})
    if "input_path" in meta:
        meta["input_path"] = relative(source)
    if "output_path" in meta:
        meta["output_path"] = relative(target)
    nbformat.write(nb, str(executed))


def output_root(profile):
    """Return where a profile's outputs go: the project for ``default``, else build/<profile>."""
    return ROOT if profile == "default" else ROOT / "build" / profile


def direct_outputs(profile):
    """Point this process and the kernels it starts at the profile's output root; return the root.

    The kernels also import this checkout's ``helpers`` (PYTHONPATH), whatever checkout the
    environment's editable install points at."""
    root = output_root(profile)
    if profile != "default":
        os.environ["BBB_OUTPUT_DIR"] = str(root)
        for var, name in OUTPUT_VARS.items():
            os.environ[var] = str(root / name)
    paths = [str(ROOT)] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    os.environ["PYTHONPATH"] = os.pathsep.join(dict.fromkeys(paths))
    return root


def script_of(notebook):
    """Return the paired percent script of ``notebook`` (notebooks/NN_name.py)."""
    return Path(notebook).with_suffix(".py")


def paired_text(nb, notebook):
    """Return ``nb`` as jupytext writes its percent script, with the project's jupytext.toml."""
    import jupytext
    from jupytext.config import load_jupytext_config
    return jupytext.writes(nb, fmt="py:percent", config=load_jupytext_config(str(notebook)))


def coalesce_streams(cell):
    """Join consecutive stream outputs of ``cell`` on the same stream into one: how the kernel's
    printing is cut into messages depends on timing, so the stored outputs would otherwise differ
    between runs that printed the same text."""
    merged = []
    for out in cell.get("outputs", []):
        if (merged and out.get("output_type") == "stream" and merged[-1].get("output_type") == "stream"
                and merged[-1].get("name") == out.get("name")):
            merged[-1]["text"] = "".join(merged[-1]["text"]) + "".join(out["text"])
        else:
            merged.append(out)
    if "outputs" in cell:
        cell["outputs"] = merged


def strip_run_additions(nb, keep_injected):
    """Remove what papermill adds to a notebook: empty ``tags``, per-cell timing metadata, the
    run's start and end times and (unless ``keep_injected``) the injected-parameters cell, so that
    running a notebook again changes it only where its outputs changed. Return ``nb``."""
    meta = nb.metadata.get("papermill", {})
    for key in RUN_TIMES:
        meta.pop(key, None)
    if not keep_injected:
        nb.cells = [c for c in nb.cells if "injected-parameters" not in c.metadata.get("tags", [])]
    for cell in nb.cells:
        coalesce_streams(cell)
        for key in RUN_METADATA:
            cell.metadata.pop(key, None)
        if cell.metadata.get("tags", None) == []:
            del cell.metadata["tags"]
    return nb


def check_pair(notebook):
    """Raise ValueError when ``notebook`` cannot be run from its script: the script is missing, or
    the .ipynb holds other cells than the script and is the newer file (it may carry edits made
    in Jupyter without the pairing)."""
    import jupytext
    script = script_of(notebook)
    if not script.exists():
        raise ValueError(f"{relative(script)} is missing: create it with "
                         f"`.venv/bin/python -m jupytext --sync {relative(notebook)}`")
    if not notebook.exists() or notebook.stat().st_mtime <= script.stat().st_mtime:
        return
    nb = strip_run_additions(jupytext.read(str(notebook)), keep_injected=False)
    if paired_text(nb, notebook) != script.read_text():
        raise ValueError(f"{relative(notebook)} is newer than {relative(script)} and their cells "
                         f"differ: run `.venv/bin/python -m jupytext --sync {relative(notebook)}` "
                         "(the newer file wins) or `make sync`, check the script, then run again")


def keep_cell_ids(nb, previous):
    """Give the cells of ``nb`` the ids of ``previous``'s cells (the notebook it replaces), so that
    a re-run does not renumber every cell: a cell keeps the id of the earlier cell with the same
    type and source, else of the earlier cell at its position with the same type; a new cell gets
    an id derived from its position and source (never a random one). Return ``nb``."""
    import hashlib
    old = list(previous.cells) if previous is not None else []
    used, by_source = set(), {}
    for cell in old:
        by_source.setdefault((cell.cell_type, cell.source), []).append(cell.get("id"))
    for i, cell in enumerate(nb.cells):
        candidates = by_source.get((cell.cell_type, cell.source), [])
        if i < len(old) and old[i].cell_type == cell.cell_type:
            candidates = candidates + [old[i].get("id")]
        new_id = next((c for c in candidates if c and c not in used), None)
        if new_id is None:
            digest = hashlib.sha256(f"{i}\0{cell.cell_type}\0{cell.source}".encode()).hexdigest()
            new_id = next(digest[k:k + 8] for k in range(0, 56) if digest[k:k + 8] not in used)
        cell["id"] = new_id
        used.add(new_id)
    return nb


def source_notebook(notebook, folder):
    """Write the notebook to execute (the script's cells, as jupytext reads them, with the cell
    ids of the executed notebook it will replace) into ``folder``; return its path."""
    import jupytext
    from jupytext.config import load_jupytext_config
    check_pair(notebook)
    script = script_of(notebook)
    config = load_jupytext_config(str(script))
    path = Path(folder) / notebook.name
    nb = jupytext.read(str(script), config=config)
    previous = nbformat.read(str(notebook), as_version=4) if notebook.exists() else None
    jupytext.write(keep_cell_ids(nb, previous), str(path), fmt="ipynb", config=config)
    return path


def overrides(source, params):
    """Return the parameters in ``params`` whose value differs from the notebook's own
    parameters cell (those a reader of the cell would not expect)."""
    own = {}
    for name, info in pm.inspect_notebook(str(source)).items():
        try:
            own[name] = ast.literal_eval(info["default"])
        except (ValueError, SyntaxError):
            own[name] = info["default"]
    return {k: v for k, v in params.items() if k not in own or own[k] != v}


def finish(executed, notebook, target, in_place):
    """Clean the executed copy ``executed`` (relative paths, papermill's additions; in place also
    the injected cell) and move it to ``target``. In place the script gets the notebook's
    timestamp, as `jupytext --sync` does, and the pair is checked; return a warning or None."""
    clean_metadata(executed, notebook, target)
    nb = strip_run_additions(nbformat.read(str(executed), as_version=4), keep_injected=not in_place)
    nbformat.write(nb, str(executed))
    os.replace(executed, target)
    if not in_place:
        return None
    script = script_of(notebook)
    os.utime(script, (script.stat().st_atime, target.stat().st_mtime))
    if paired_text(nb, target) != script.read_text():
        return (f"{relative(target)} and {relative(script)} differ after the run: run "
                f"`.venv/bin/python -m jupytext --sync {relative(target)}` and check the diff")
    return None


def runtimes_path(profile, record):
    """Return the file this run's wall times go to: the committed results/runtimes.json (which the
    README's table reads) only when asked (``record``: `make runtimes`) or for profiles other than
    default (whose results live under build/<profile>/ anyway); build/runtimes.json otherwise, so
    that `make notebooks` leaves no clock readings in tracked files."""
    from helpers.utils import results_dir
    if profile == "default" and not record:
        return ROOT / "build" / "runtimes.json"
    return results_dir() / "runtimes.json"


def record_runtime(profile, notebook, wall, train=None, record=False):
    """Add this run's wall time to ``runtimes_path(profile, record)`` (per profile and notebook;
    ``train``: the TRAIN_MISSING it ran with, None when the notebook has no such parameter;
    ``checkpoints``: whether any checkpoint file was there to load)."""
    import datetime
    import json

    from helpers.utils import atomic_write_bytes, checkpoints_dir, machine_info
    path = runtimes_path(profile, record)
    data = json.loads(path.read_text()) if path.exists() else {}
    info = machine_info()
    data.setdefault(profile, {})[notebook] = {
        "wall_s": round(wall, 1), "date": datetime.date.today().isoformat(),
        "cpu": info["cpu"], "threads": info["threads"], "torch": info["torch"], "train": train,
        "checkpoints": any(checkpoints_dir().rglob("*.pt"))}
    atomic_write_bytes(path, (json.dumps(data, indent=1, sort_keys=True) + "\n").encode())


def with_train(notebook, params, train):
    """Return ``params`` with TRAIN_MISSING = ``train`` for a notebook that has that parameter
    (an explicit -p TRAIN_MISSING wins)."""
    if "TRAIN_MISSING" in pm.inspect_notebook(str(notebook)):
        return {"TRAIN_MISSING": train, **params}
    return params


def run_one(notebook, out_dir, params, args, in_place):
    """Execute one notebook from its script into ``out_dir``; return a warning or None."""
    target = out_dir / notebook.name
    executed = target.with_name(f".{target.stem}.running.ipynb")
    with tempfile.TemporaryDirectory(prefix="run_notebooks.") as folder:
        source = source_notebook(notebook, folder)
        changed = overrides(source, params)
        if in_place and changed:
            print(f"  note: {notebook.name} runs with {changed}, which its parameters cell does "
                  "not show; they are recorded in its metadata (papermill.parameters)", flush=True)
        try:
            pm.execute_notebook(str(source), str(executed), parameters=params,
                                kernel_name=args.kernel, cwd=str(NOTEBOOKS), progress_bar=False,
                                log_output=False, prepare_only=args.prepare_only)
        except Exception:
            print(f"FAILED: {notebook.name}; the executed copy with the error is {executed}",
                  file=sys.stderr)
            raise
    return finish(executed, notebook, target, in_place)


def parse_params(pairs):
    """Return {name: value} from (NAME, VALUE) pairs, values parsed as Python literals if they
    can be."""
    params = {}
    for name, value in pairs:
        try:
            params[name] = ast.literal_eval(value)
        except (ValueError, SyntaxError):
            params[name] = value
    return params


def build_parser():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--profile", default="default")
    ap.add_argument("--out", default=None,
                    help="folder for the executed notebooks (default: notebooks/ in place for "
                         "the default profile, build/<profile>/notebooks otherwise)")
    ap.add_argument("--kernel", default="python3")
    ap.add_argument("--only", nargs="*", default=None, help="notebook name prefixes, e.g. 00 02")
    ap.add_argument("--clean", action="store_true",
                    help="only rewrite the notebooks' papermill metadata with relative paths")
    ap.add_argument("--prepare-only", action="store_true",
                    help="inject the parameters and write the notebooks without executing them "
                         "(never in place)")
    ap.add_argument("-p", "--param", nargs=2, action="append", default=[], metavar=("NAME", "VALUE"),
                    help="extra papermill parameter (value parsed as Python literal if possible)")
    ap.add_argument("--record-runtimes", action="store_true",
                    help="write the notebooks' wall times into results/runtimes.json, which the "
                         "README's table of long runs reads (`make runtimes`); without it they go "
                         "to build/runtimes.json and no tracked file records a clock reading")
    ap.add_argument("--train", type=int, choices=(0, 1), default=None,
                    help="TRAIN_MISSING of the notebooks that have it: 1 trains whatever results/ "
                         "lacks, 0 only reads results/ and names the command that trains what "
                         "is missing (default: 0 in profile default, 1 in the others)")
    return ap


def select_notebooks(ap, only):
    """Return the numbered notebooks whose names start with one of ``only`` (all when None)."""
    notebooks = sorted(NOTEBOOKS.glob("[0-9][0-9]_*.ipynb"))
    if only:
        notebooks = [nb for nb in notebooks if any(nb.name.startswith(p) for p in only)]
    if not notebooks:
        ap.error("no notebooks matched")
    return notebooks


def output_folder(ap, args, root):
    """Return (folder for the executed notebooks, whether that is notebooks/ itself); refuse what
    would put other than executed default-profile notebooks there."""
    out_dir = Path(args.out).resolve() if args.out else root / "notebooks"
    in_place = out_dir == NOTEBOOKS.resolve()
    if in_place and args.profile != "default":
        ap.error(f"only the default profile writes notebooks/; leave out --out to write the "
                 f"{args.profile} notebooks under {relative(root)}/notebooks")
    if in_place and args.prepare_only:
        ap.error("--prepare-only writes unexecuted notebooks: give --out a folder outside notebooks/")
    out_dir.mkdir(parents=True, exist_ok=True)
    return out_dir, in_place


def run_all(notebooks, out_dir, params, args, in_place):
    """Execute ``notebooks`` in order; return the warnings of notebooks left unlike their script."""
    total, warnings = time.perf_counter(), []
    for nb in notebooks:
        t0 = time.perf_counter()
        print(f"[{args.profile}] {nb.name} ...", flush=True)
        train = bool(args.train if args.train is not None else args.profile != "default")
        nb_params = with_train(nb, params, train)
        warning = run_one(nb, out_dir, nb_params, args, in_place)
        if warning:
            warnings.append(warning)
            print(f"WARNING: {warning}", file=sys.stderr, flush=True)
        wall = time.perf_counter() - t0
        if not args.prepare_only:
            record_runtime(args.profile, nb.stem, wall, nb_params.get("TRAIN_MISSING"),
                           record=args.record_runtimes)
        print(f"[{args.profile}] {nb.name} done in {wall:.1f} s", flush=True)
    print(f"all {len(notebooks)} notebooks done in {time.perf_counter() - total:.1f} s")
    return warnings


def main(argv=None):
    ap = build_parser()
    args = ap.parse_args(argv)
    if args.profile not in PROFILE_NAMES:
        ap.error(f"unknown profile {args.profile!r}; valid profiles are {list(PROFILE_NAMES)}")
    params = {"PROFILE": args.profile, **parse_params(args.param)}
    if params["PROFILE"] != args.profile:
        ap.error("set the profile with --profile, not with -p PROFILE")
    notebooks = select_notebooks(ap, args.only)
    if args.clean:
        for nb in notebooks:
            clean_metadata(nb, nb, nb)
        print(f"cleaned the metadata of {len(notebooks)} notebooks")
        return
    for nb in notebooks:  # before hours of running: every notebook can be run from its script
        try:
            check_pair(nb)
        except ValueError as err:
            ap.error(str(err))
    root = direct_outputs(args.profile)
    out_dir, in_place = output_folder(ap, args, root)
    if root != ROOT:
        print(f"[{args.profile}] outputs go to {relative(root)}/ (notebooks: {relative(out_dir)}/); "
              "only the default profile writes notebooks/, results/ and figures/", flush=True)
    # headless runs: no progress bars in the stored outputs (they would flood the notebooks)
    os.environ.setdefault("BBB_QUIET", "1")
    # figures inline in the stored notebooks (readers see them on the web), whatever MPLBACKEND
    # the shell has (a headless Agg would leave plt.show() empty)
    os.environ["MPLBACKEND"] = "module://matplotlib_inline.backend_inline"
    warnings = run_all(notebooks, out_dir, params, args, in_place)
    if warnings:
        sys.exit(f"{len(warnings)} notebook(s) differ from their scripts (see the warnings above)")


if __name__ == "__main__":
    main()
