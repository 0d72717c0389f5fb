"""Table 1 of the paper: the recipes chosen on validation, trained on the reported seeds, tested once.

A *cell* is one method at one width. Its recipe comes from the validation sweep of that method and
width when the profile declares one (``helpers.sweep``, results/<notebook>/sweep/<name>.json),
else from the 2x400 sweep with the width changed; its length is the number of epochs chosen for
2x400. Every run writes results/<notebook>/runs/<name>.json (config, validation and test numbers,
the per-epoch history, the misclassified test images, a weight histogram); ``build`` trains what
is missing (or refuses, with ``train=False``), then writes results/<notebook>/table1.json.
Two control rows at 2x400 when the chosen BBB recipe starts from the trained SGD network (a warm
start): SGD trained for as many epochs as SGD + BBB together (equal compute), and the best BBB
configuration with a random start.
"""
import json
import statistics
import time
from dataclasses import dataclass, replace

from .classification import METHOD_LABELS, PAPER_TABLE1, RunConfig, run
from .metrics import mcnemar
from .sweep import load_sweep
from .utils import atomic_write_bytes, results_dir, save_results

NB = "01_mnist_classification"
METHODS = ("sgd", "dropout", "bbb_gaussian", "bbb_mixture")
EXTRA_LABELS = {"sgd_equal_compute": "SGD, equal compute (control)",
                "bbb_mixture_random_start": "BBB, scale mixture, random start (control)"}


@dataclass
class Cell:
    """One row of the table: ``key`` (a method, or a control), width ``H``, the sweep its recipe
    comes from, and how it was derived."""
    key: str
    H: int
    sweep: str
    config: RunConfig  # seed 0; other seeds replace it
    derived: str


def _chosen(sweep_name, notebook):
    rec = load_sweep(sweep_name, notebook)
    chosen = rec["metrics"]["chosen"]
    if chosen is None:
        raise ValueError(f"sweep {sweep_name!r} has no finished trial: rerun `make sweep`")
    return RunConfig.from_dict(chosen["config"]), rec


def cells(widths, sweeps, notebook=NB, base_H=400):
    """Return the table's cells for ``widths``; ``sweeps``: the names the profile declares."""
    out = []
    for H in widths:
        for method in METHODS:
            base_cfg, _ = _chosen(f"{method}_h{base_H}", notebook)
            name = f"{method}_h{H}"
            if name in sweeps:
                cfg, _ = _chosen(name, notebook)
                cfg, derived = replace(cfg, epochs=base_cfg.epochs), f"sweep {name}"
            else:
                cfg = replace(base_cfg, H=H)
                name, derived = f"{method}_h{base_H}", f"sweep {method}_h{base_H}, width {H}"
            out.append(Cell(method, H, name, replace(cfg, seed=0), derived))
        if H == base_H:
            out += controls(notebook, base_H)
    return out


def controls(notebook=NB, H=400):
    """Return the control cells at width ``H`` when the chosen BBB recipe is warm-started."""
    bbb, rec = _chosen(f"bbb_mixture_h{H}", notebook)
    if bbb.init_from is None:
        return []
    sgd, _ = _chosen(f"sgd_h{H}", notebook)
    equal = replace(sgd, epochs=bbb.init_epochs + bbb.epochs, seed=0)
    cold = [t for t in rec["metrics"]["trials"]
            if t["val_error"] is not None and t["config"].get("init_from") is None]
    out = [Cell("sgd_equal_compute", H, f"sgd_h{H}", equal,
                f"the SGD recipe for {bbb.init_epochs} + {bbb.epochs} epochs")]
    if cold:
        best = min(cold, key=lambda t: (t["val_error"], t["best_epoch"]))
        cfg = replace(RunConfig.from_dict(best["config"]), epochs=best["best_epoch"], seed=0)
        out.append(Cell("bbb_mixture_random_start", H, f"bbb_mixture_h{H}", cfg,
                        "the best random-start trial of the same sweep"))
    return out


def run_path(cfg, notebook=NB):
    return results_dir() / notebook / "runs" / f"{cfg.name}.json"


def get_run(cfg, data=None, notebook=NB, eval_samples=10, train=True):
    """Return the run record of ``cfg`` (read back, or trained now when ``train``)."""
    path = run_path(cfg, notebook)
    if path.exists():
        return json.loads(path.read_text())
    if not train or data is None:
        raise FileNotFoundError(f"no run record at {path}: run `make table1` (or pass "
                                "train=True with the data)")
    _, rec = run(cfg, data, notebook=notebook, eval_samples=eval_samples,
                 desc=f"{cfg.method} H={cfg.H} seed {cfg.seed}")
    from .utils import machine_info
    rec["machine"] = machine_info(data.x_train.device)
    rec["created"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    atomic_write_bytes(path, (json.dumps(rec, indent=1) + "\n").encode())
    return rec


def _start(cfg):
    if not cfg.bayesian:
        return "random"
    return f"warm ({cfg.init_from}, {cfg.init_epochs} epochs)" if cfg.init_from else "random"


def row(cell, records, notebook=NB):
    """Return the table row of ``cell`` from its run records (one per seed)."""
    tests = [r["metrics"]["test_error"] for r in records]
    paper = PAPER_TABLE1.get(cell.key, {}).get(cell.H)
    mean = statistics.fmean(tests)
    cfg = cell.config
    return {"key": cell.key, "label": METHOD_LABELS.get(cell.key, EXTRA_LABELS.get(cell.key)),
            "H": cell.H, "seeds": [r["config"]["seed"] for r in records],
            "test_error": tests, "mean": mean, "sd": statistics.stdev(tests) if len(tests) > 1 else None,
            "val_error": [r["metrics"]["val_error"] for r in records],
            "predictor": [r["metrics"]["predictor"] for r in records],
            "paper": paper, "diff_pp": None if paper is None else 100 * (mean - paper),
            "protocol": {"start": _start(cfg), "epochs": cfg.epochs, "paper_epochs": 600,
                         "init_epochs": cfg.init_epochs if cfg.init_from else 0},
            "train_wall_s": [r["metrics"]["train_wall_s"] for r in records],
            "runs": [r["name"] for r in records], "selected_on": "validation",
            "sweep": f"results/{notebook}/sweep/{cell.sweep}.json", "derived": cell.derived}


def paired_tests(records_by_key, H=400, a="bbb_mixture", b="sgd"):
    """Return per-seed exact McNemar tests of ``a`` against ``b`` at width ``H``."""
    ra, rb = records_by_key.get((a, H)), records_by_key.get((b, H))
    if not ra or not rb:
        return []
    out = []
    by_seed_b = {r["config"]["seed"]: r for r in rb}
    for r in ra:
        seed = r["config"]["seed"]
        if seed not in by_seed_b:
            continue
        n = 10_000
        wrong_a = [False] * n
        wrong_b = [False] * n
        for i in r["metrics"]["test_misclassified"]:
            wrong_a[i] = True
        for i in by_seed_b[seed]["metrics"]["test_misclassified"]:
            wrong_b[i] = True
        only_a, only_b, p = mcnemar(wrong_a, wrong_b)
        out.append({"seed": seed, "a": a, "b": b, "H": H, f"only_{a}_wrong": only_a,
                    f"only_{b}_wrong": only_b, "p": p})
    return out


def build(widths, seeds_by_width, sweeps, data=None, notebook=NB, profile="default",
          eval_samples=10, train=True, progress_fn=print, base_H=400):
    """Train (``train``) or read every run of the table, write table1.json; return its record."""
    t0 = time.perf_counter()
    rows, records = [], {}
    for cell in cells(widths, sweeps, notebook, base_H=base_H):
        recs = []
        for seed in seeds_by_width[cell.H]:
            cfg = replace(cell.config, seed=seed)
            if progress_fn and not run_path(cfg, notebook).exists():
                progress_fn(f"training {cfg.name} ...")
            recs.append(get_run(cfg, data, notebook, eval_samples, train))
        records[(cell.key, cell.H)] = recs
        rows.append(row(cell, recs, notebook))
    tests = paired_tests(records, H=base_H)
    save_results(notebook, "table1", config={"widths": list(widths),
                                             "seeds": {str(k): list(v) for k, v in
                                                       seeds_by_width.items()},
                                             "eval_samples": eval_samples},
                 metrics={"rows": rows, "mcnemar_bbb_vs_sgd": tests},
                 profile=profile, seed=sorted({s for v in seeds_by_width.values() for s in v}),
                 wall_s=time.perf_counter() - t0,
                 extra={"selected_on": "validation",
                        "note": "every recipe and its number of epochs chosen on validation "
                                "(results/<notebook>/sweep/); test errors computed once, after "
                                "the choice; one run record per seed in runs/"})
    return json.loads((results_dir() / notebook / "table1.json").read_text())
