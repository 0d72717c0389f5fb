"""Execute the numbered notebooks in order with papermill.

    python tools/run_notebooks.py --profile default              # in place (committed outputs)
    python tools/run_notebooks.py --profile default --train 1    # ... training what results/ lacks
    python tools/run_notebooks.py --profile smoke --out build/notebooks
    python tools/run_notebooks.py --clean                        # relative paths in metadata only

In-place runs write to a temporary copy first and replace the notebook only when it ran through,
so a failed run never leaves a half-executed notebook behind.
"""
import argparse
import os
import sys
import time
from pathlib import Path

import nbformat
import papermill as pm

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from helpers.profiles import PROFILE_NAMES  # noqa: E402


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


def record_runtime(profile, notebook, wall, train=None):
    """Add this run's wall time to results/runtimes.json (per profile and notebook; ``train``:
    the TRAIN_MISSING it ran with, None when the notebook has no such parameter; ``checkpoints``:
    whether any checkpoint file was there to load)."""
    import datetime
    import json

    from helpers.utils import atomic_write_bytes, checkpoints_dir, machine_info, results_dir
    path = results_dir() / "runtimes.json"
    data = json.loads(path.read_text()) if path.exists() else {}
    info = machine_info()
    data.setdefault(profile, {})[notebook] = {
        "wall_s": round(wall, 1), "date": datetime.date.today().isoformat(),
        "cpu": info["cpu"], "threads": info["threads"], "torch": info["torch"], "train": train,
        "checkpoints": any(checkpoints_dir().rglob("*.pt"))}
    atomic_write_bytes(path, (json.dumps(data, indent=1, sort_keys=True) + "\n").encode())


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--profile", default="default")
    ap.add_argument("--out", default=None, help="folder for executed copies (default: in place)")
    ap.add_argument("--kernel", default="python3")
    ap.add_argument("--only", nargs="*", default=None, help="notebook name prefixes, e.g. 00 02")
    ap.add_argument("--clean", action="store_true",
                    help="only rewrite the notebooks' papermill metadata with relative paths")
    ap.add_argument("-p", "--param", nargs=2, action="append", default=[], metavar=("NAME", "VALUE"),
                    help="extra papermill parameter (value parsed as Python literal if possible)")
    ap.add_argument("--train", type=int, choices=(0, 1), default=None,
                    help="TRAIN_MISSING of the notebooks that have it: 1 trains whatever results/ "
                         "lacks, 0 only reads results/ and names the command that trains what "
                         "is missing (default: 0 in profile default, 1 in the others)")
    args = ap.parse_args(argv)
    if args.profile not in PROFILE_NAMES:
        ap.error(f"unknown profile {args.profile!r}; valid profiles are {list(PROFILE_NAMES)}")
    params = {}
    if args.profile != "default":
        params["PROFILE"] = args.profile
    import ast
    for name, value in args.param:
        try:
            params[name] = ast.literal_eval(value)
        except (ValueError, SyntaxError):
            params[name] = value
    train = bool(args.train if args.train is not None else args.profile != "default")
    notebooks = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
    if args.only:
        notebooks = [nb for nb in notebooks if any(nb.name.startswith(p) for p in args.only)]
    if not notebooks:
        ap.error("no notebooks matched")
    if args.clean:
        for nb in notebooks:
            clean_metadata(nb, nb, nb)
        print(f"cleaned the metadata of {len(notebooks)} notebooks")
        return
    # headless runs: no progress bars in the stored outputs (they would flood the notebooks)
    os.environ.setdefault("BBB_QUIET", "1")
    # figures inline in the stored notebooks (readers see them on the web), whatever MPLBACKEND
    # the shell has (a headless Agg would leave plt.show() empty)
    os.environ["MPLBACKEND"] = "module://matplotlib_inline.backend_inline"
    out_dir = Path(args.out).resolve() if args.out else None
    if out_dir:
        out_dir.mkdir(parents=True, exist_ok=True)
    total = time.perf_counter()
    for nb in notebooks:
        target = (out_dir / nb.name) if out_dir else nb
        tmp = target.with_name(f".{target.stem}.running.ipynb")
        t0 = time.perf_counter()
        print(f"[{args.profile}] {nb.name} ...", flush=True)
        has_train = "TRAIN_MISSING" in pm.inspect_notebook(str(nb))
        nb_params = {"TRAIN_MISSING": train, **params} if has_train else params
        try:
            pm.execute_notebook(str(nb), str(tmp), parameters=nb_params, kernel_name=args.kernel,
                                cwd=str(nb.parent), progress_bar=False, log_output=False)
        except Exception:
            print(f"FAILED: {nb.name}; the executed copy with the error is {tmp}", file=sys.stderr)
            raise
        clean_metadata(tmp, nb, target)
        os.replace(tmp, target)
        wall = time.perf_counter() - t0
        record_runtime(args.profile, nb.stem, wall, nb_params.get("TRAIN_MISSING"))
        print(f"[{args.profile}] {nb.name} done in {wall:.1f} s", flush=True)
    print(f"all {len(notebooks)} notebooks done in {time.perf_counter() - total:.1f} s")


if __name__ == "__main__":
    main()
