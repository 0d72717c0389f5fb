"""Table 1 of the paper: the recipes chosen on validation, trained on the reported seeds, tested once.

A *cell* is one method at one width. Its recipe and number of epochs come from the validation
sweep of that method and width when the profile declares one (``helpers.sweep``,
results/<notebook>/sweep/<name>.json), else from the 2x400 sweep with the width changed. Every run writes results/<notebook>/runs/<name>.json (config, validation and test numbers,
the per-epoch history, the misclassified test images, a weight histogram); ``build`` trains what
is missing (or refuses, with ``train=False``), then writes results/<notebook>/table1.json with
the verdicts of ``analysis`` (two-sided tests of ``helpers.stats``, paired by seed) and the
provenance of its inputs (no machine or date of its own: those belong to each run's record).
Two control rows at 2x400 when the chosen BBB recipe starts from the trained SGD network (a warm
start): SGD trained for as many epochs as SGD + BBB together (equal epochs, not equal compute: a
BBB step samples weights and adds the KL term), and the best BBB configuration with a random
start. The row key ``sgd_equal_compute`` is kept as stored in table1.json; only its label says
"equal epochs".
"""
import hashlib
import json
import math
import statistics
import time
from dataclasses import dataclass, replace

from . import stats
from .classification import METHOD_COLORS, METHOD_LABELS, PAPER_TABLE1, RunConfig, run
from .metrics import mcnemar
from .sweep import load_sweep
from .utils import _check_fractions, _jsonable, atomic_write_bytes, results_dir

NB = "01_mnist_classification"
METHODS = ("sgd", "dropout", "bbb_gaussian", "bbb_mixture")
EXTRA_LABELS = {"sgd_equal_compute": "SGD, equal epochs (control)",
                "bbb_mixture_random_start": "BBB, scale mixture, random start (control)"}

# The verdicts (helpers.stats; the same tests, alpha, family and margin as analysis_plan.json):
# two-sided, paired by seed, Holm over the paper's orderings at each width
ALPHA = 0.05
FAMILY = (("bbb_mixture", "bbb_gaussian"), ("bbb_mixture", "sgd"), ("dropout", "sgd"))
CLAIMS = {("bbb_mixture", "bbb_gaussian"): "the scale mixture beats the Gaussian prior",
          ("bbb_mixture", "sgd"): "BBB (scale mixture) beats SGD",
          ("dropout", "sgd"): "dropout beats SGD",
          ("bbb_mixture", "sgd_equal_compute"): "BBB beats SGD trained as long (control)",
          ("bbb_mixture", "bbb_mixture_random_start"): "the warm start beats BBB's random start "
                                                       "(control)"}
CONTROLS = (("bbb_mixture", "sgd_equal_compute"), ("bbb_mixture", "bbb_mixture_random_start"))
COMPARABLE = ("bbb_mixture", "dropout", 0.001)  # within +-0.1 pp (error rates are fractions)
VERDICT_NOTE = ("two-sided tests of helpers.stats, paired by seed: each cell's 95% t-interval "
                "against the paper's value; the paper's orderings with Holm over the family at "
                "each width; BBB vs dropout comparable when the 95% interval of the paired "
                "difference lies inside +-0.1 pp. Post hoc: the tests were fixed after these "
                "numbers were seen; analysis_plan.json (v1) governs a rerun")


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


def cells(widths, sweeps, notebook=NB, base_H=400, methods=METHODS):
    """Return the table's cells for ``widths``; ``sweeps``: the names the profile declares."""
    out = []
    for H in widths:
        for method in methods:
            base_cfg, _ = _chosen(f"{method}_h{base_H}", notebook)
            name = f"{method}_h{H}"
            if name in sweeps:
                cfg, _ = _chosen(name, notebook)
                derived = f"sweep {name}"  # its recipe and its number of epochs
            else:
                cfg = replace(base_cfg, H=H)
                name, derived = f"{method}_h{base_H}", f"sweep {method}_h{base_H}, width {H}"
            out.append(Cell(method, H, name, replace(cfg, seed=0), derived))
        if H == base_H and "bbb_mixture" in methods:
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


def row(cell, records, notebook=NB, pending=()):
    """Return the table row of ``cell`` from its run records (one per seed); ``pending``: the
    reported seeds not trained yet (a row without records has mean None)."""
    tests = [r["metrics"]["test_error"] for r in records]
    paper = PAPER_TABLE1.get(cell.key, {}).get(cell.H)
    mean = statistics.fmean(tests) if tests else None
    cfg = cell.config
    vs = None if paper is None or not tests else stats.vs_published(
        tests, paper, alpha=ALPHA, scale=100, unit=" pp")
    singles = [r["metrics"].get("test_error_single_samples") for r in records]
    return {"key": cell.key, "label": METHOD_LABELS.get(cell.key, EXTRA_LABELS.get(cell.key)),
            "H": cell.H, "seeds": [r["config"]["seed"] for r in records],
            "test_error": tests, "mean": mean, "sd": statistics.stdev(tests) if len(tests) > 1 else None,
            "val_error": [r["metrics"]["val_error"] for r in records],
            "predictor": [r["metrics"]["predictor"] for r in records],
            "pending_seeds": list(pending),
            "paper": paper, "diff_pp": None if paper is None or mean is None else 100 * (mean - paper),
            "vs_paper": None if vs is None else {"verdict": vs["verdict"], "ci": vs["ci"],
                                                 "n": vs["n"], "level": 1 - ALPHA},
            # MC evaluation noise: the sd of the test error over the single weight samples of
            # each BBB run (the posterior-mean predictor itself is deterministic)
            "mc_sd_single_sample": [statistics.stdev(x) if x and len(x) > 1 else None
                                    for x in singles] if any(singles) else None,
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
          eval_samples=10, train=True, progress_fn=print, base_H=400, methods=METHODS,
          keys=None, only_seeds=None):
    """Train (``train``) or read every run of the table, write table1.json; return its record.

    table1.json holds the rows, the verdicts (``analysis``), McNemar per seed and the
    provenance of its inputs (``provenance``); written again from the same run records it is
    the same bytes.

    With a subset of ``methods``, ``keys`` (rows, controls included) or ``only_seeds`` the runs
    are trained (or read) but no table is written: None (parallel workers use them).
    """
    partial = tuple(methods) != tuple(METHODS) or keys is not None or only_seeds is not None
    rows, records = [], {}
    table_cells = cells(widths, sweeps, notebook, base_H=base_H, methods=methods)
    for cell in table_cells:
        if keys is not None and cell.key not in keys:
            continue
        recs, pending = [], []
        for seed in seeds_by_width[cell.H]:
            if only_seeds is not None and seed not in only_seeds:
                continue
            cfg = replace(cell.config, seed=seed)
            if not train and not run_path(cfg, notebook).exists():
                pending.append(seed)  # shown as "not run yet"; `make table1` trains it
                continue
            if progress_fn and not run_path(cfg, notebook).exists():
                progress_fn(f"training {cfg.name} ...")
            recs.append(get_run(cfg, data, notebook, eval_samples, train))
            if cfg.init_from:  # the network a warm start begins from (already trained)
                get_run(cfg.init_source(), data, notebook, eval_samples, train)
        records[(cell.key, cell.H)] = recs
        rows.append(row(cell, recs, notebook, pending))
    if partial:
        return None
    config = {"widths": list(widths), "seeds": {str(k): list(v) for k, v in seeds_by_width.items()},
              "eval_samples": eval_samples}
    used = sorted({f"{m}_h{base_H}" for m in methods} | {c.sweep for c in table_cells})
    write_table(notebook, {
        "profile": profile, "seed": sorted({s for v in seeds_by_width.values() for s in v}),
        "config": config,
        "metrics": {"rows": rows, "analysis": analysis(rows),
                    "mcnemar_bbb_vs_sgd": paired_tests(records, H=base_H)},
        "selected_on": "validation",
        "note": "every recipe and its number of epochs chosen on validation "
                "(results/<notebook>/sweep/); test errors computed once, after the choice; one "
                "run record per seed in runs/, with the machine, date and wall time of that run",
        "provenance": provenance(rows, used, notebook)})
    return json.loads((results_dir() / notebook / "table1.json").read_text())


def _sha256(path):
    return hashlib.sha256(path.read_bytes()).hexdigest()


def provenance(rows, sweep_names, notebook=NB):
    """Return what an aggregate of run records records about where its numbers come from: its
    input files with their SHA-256 (and one hash over them all), the machines and dates of the
    runs (each run's own machine, date and wall time stay in its run record), and nothing about
    the process that aggregated them: the same inputs give the same bytes."""
    base = results_dir() / notebook
    runs = {n: _sha256(base / "runs" / f"{n}.json") for r in rows for n in r["runs"]}
    sweeps = {f"sweep/{n}.json": _sha256(base / "sweep" / f"{n}.json") for n in sweep_names}
    machines, dates = {}, []
    for name in runs:
        rec = json.loads((base / "runs" / f"{name}.json").read_text())
        key = json.dumps(rec.get("machine"), sort_keys=True)
        machines[key] = machines.get(key, 0) + 1
        if rec.get("created"):
            dates.append(rec["created"])
    inputs = {"runs": runs, "sweeps": sweeps}
    return {"inputs": inputs,
            "inputs_sha256": hashlib.sha256(json.dumps(inputs, sort_keys=True).encode())
            .hexdigest(),
            "run_machines": [{"machine": json.loads(k), "runs": n}
                             for k, n in sorted(machines.items(), key=lambda kv: (-kv[1], kv[0]))],
            "runs_created": [min(dates), max(dates)] if dates else None,
            "aggregated_by": "helpers.table1.build (no machine or date: it computes nothing that "
                             "depends on them)"}


def write_table(notebook, record):
    """Write results/<notebook>/table1.json unless it already holds these exact bytes; return
    its path. Error rates in ``metrics`` must be fractions (as ``save_results`` checks)."""
    record = _jsonable(record)
    _check_fractions(record["metrics"])
    data = (json.dumps(record, indent=2) + "\n").encode()
    path = results_dir() / notebook / "table1.json"
    if not (path.exists() and path.read_bytes() == data):
        atomic_write_bytes(path, data)
    return path


def _paired(ra, rb):
    """Return (a, b, seeds): the test errors of two rows on the seeds both have."""
    sa, sb = dict(zip(ra["seeds"], ra["test_error"])), dict(zip(rb["seeds"], rb["test_error"]))
    seeds = sorted(set(sa) & set(sb))
    return [sa[s] for s in seeds], [sb[s] for s in seeds], seeds


def _claim(res, seeds):
    t, sign = res["t_test"], res["sign_test"]
    pp = (lambda v: None if v is None else 100 * v)  # noqa: E731
    return {"verdict": res["verdict"], "seeds": seeds, "diff_pp": pp(t["mean_diff"]),
            "ci_pp": None if t["ci"] is None else [pp(v) for v in t["ci"]], "t": t["t"],
            "df": t["df"], "p": t["p"], "p_holm": res.get("p_holm"),
            "family_size": res.get("family_size"), "sign_p": sign["p"],
            "sign_ties_dropped": sign["ties_dropped"], "note": t["note"]}


def _family(by, H, pairs):
    """The claims "a < b" of ``pairs`` at width H as one Holm family; a claim whose rows are
    missing or share no trained seed is 'not measured yet' and still counts in the family."""
    claims, seeds = {}, {}
    for a, b in pairs:
        ra, rb = by.get((a, H)), by.get((b, H))
        name = f"{a} < {b}"
        xa, xb, seeds[name] = _paired(ra, rb) if ra and rb else ([], [], [])
        claims[name] = (xa, xb) if seeds[name] else None
    out = {}
    for name, res in stats.ordering_family(claims, alpha=ALPHA).items():
        out[name] = (_claim(res, seeds[name]) if claims[name] is not None else
                     {"verdict": res["verdict"], "seeds": [], "family_size": res["family_size"]})
    return out


def analysis(rows):
    """Return the verdicts on the rows (see VERDICT_NOTE): per width, the paper's orderings as
    one Holm family, BBB vs dropout comparability, and the controls where they exist."""
    by = {(r["key"], r["H"]): r for r in rows}
    out = {"alpha": ALPHA, "method": VERDICT_NOTE, "post_hoc": True,
           "plan": "results/01_mnist_classification/analysis_plan.json", "widths": {}}
    for H in sorted({r["H"] for r in rows}):
        w = {"orderings": _family(by, H, FAMILY)}
        a, b, margin = COMPARABLE
        ra, rb = by.get((a, H)), by.get((b, H))
        xa, xb, common = _paired(ra, rb) if ra and rb else ([], [], [])
        if common:
            c = stats.comparable(xa, xb, margin, alpha=ALPHA)
            t = c["t_test"]
            w["comparable"] = {"pair": f"{a} vs {b}", "margin_pp": 100 * margin,
                               "verdict": c["verdict"], "seeds": common,
                               "diff_pp": 100 * t["mean_diff"],
                               "ci_pp": None if t["ci"] is None else [100 * v for v in t["ci"]]}
        if any((k, H) in by for _, k in CONTROLS):
            w["controls"] = _family(by, H, CONTROLS)
        out["widths"][str(H)] = w
    return out


# ---- what notebook 01 shows: the sweeps, the table, Figures 2 and 3 ----

def describe(cfg):
    """Return a short readable summary of a RunConfig's settings."""
    if isinstance(cfg, dict):
        cfg = RunConfig.from_dict(cfg)
    parts = [f"Adam {cfg.lr:g}" + (f" ×{cfg.lr_decay:g}/epoch" if cfg.lr_decay != 1.0 else "")]
    if cfg.method == "dropout":
        parts.append(f"dropout {cfg.dropout:g}")
    if cfg.method == "bbb_mixture":
        parts.append(f"π={cfg.pi:g}, −log σ1={cfg.neg_log_sigma1:g}, −log σ2={cfg.neg_log_sigma2:g}")
    if cfg.method == "bbb_gaussian":
        parts.append(f"N(0, {cfg.prior_sigma:g}²)")
    if cfg.bayesian:
        parts.append({"uniform": "1/M KL", "blundell": "π_i KL (eq. 9)"}[cfg.kl_weighting])
        if cfg.init_from:
            parts.append(f"μ from the {cfg.init_from.upper()} net ({cfg.init_epochs} ep.)")
        else:
            parts.append("μ ~ " + ("U(±0.1)" if cfg.mu_init else "nn.Linear's U"))
        parts.append(f"ρ0={cfg.rho_init:g}, {cfg.samples} sample{'s' if cfg.samples > 1 else ''}")
    return "; ".join(parts)


def sweep_overview(names, notebook=NB):
    """Return (header, rows) summarising validation sweeps: trials, the choice, its numbers."""
    header = ["sweep", "trials (stopped early)", "chosen on validation", "epochs", "val. error"]
    rows = []
    for name in names:
        rec = load_sweep(name, notebook)
        m = rec["metrics"]
        chosen = m["chosen"]
        stopped = sum(t["stopped_early"] for t in m["trials"])
        rows.append([name, f"{len(m['trials'])} ({stopped})", describe(chosen["config"]),
                     str(chosen["epochs"]), f"{100 * chosen['val_error']:.2f}%"])
    return header, rows


def _label(row):
    """A row's display label: today's wording for its key (a stored label may be older)."""
    return METHOD_LABELS.get(row["key"]) or EXTRA_LABELS.get(row["key"]) or row["label"]


def _pm(row):
    if row["mean"] is None:
        return "not run yet"
    if row["sd"] is None:
        return f"{100 * row['mean']:.2f}%"
    return f"{100 * row['mean']:.2f} ± {100 * row['sd']:.2f}%"


def table_rows(rec):
    """Return (header, rows) of Table 1: paper | ours (mean ± sd over seeds, per seed) | ours −
    paper, with the protocol of each row (its start and epochs beside the paper's 600) and its
    mean training wall time per seed (a warm start's SGD network not included)."""
    header = ["method", "units", "epochs: paper / ours", "start of μ", "paper", "ours",
              "per seed", "ours − paper", "train min / seed"]
    rows = []
    for r in rec["metrics"]["rows"]:
        seeds = ", ".join([f"{100 * t:.2f}" for t in r["test_error"]]
                          + [f"seed {s}: not run" for s in r.get("pending_seeds", [])])
        paper = "—" if r["paper"] is None else f"{100 * r['paper']:.2f}%"
        diff = "—" if r["diff_pp"] is None else f"{r['diff_pp']:+.2f} pp"
        p = r["protocol"]
        epochs = f"600 / {p['init_epochs']} + {p['epochs']}" if p["init_epochs"] else \
            f"600 / {p['epochs']}"
        walls = r.get("train_wall_s") or []
        wall = "—" if not walls else f"{sum(walls) / len(walls) / 60:.0f}" + (
            " + start" if p["init_epochs"] else "")
        rows.append([_label(r), str(r["H"]), epochs, p["start"], paper, _pm(r), seeds, diff, wall])
    return header, rows


TABLE_LABELS = {**METHOD_LABELS, "sgd": "plain network", "dropout": "dropout"}  # notebook 01
BRIEF = {"sgd": "plain network", "dropout": "dropout", "bbb_gaussian": "BBB, Gaussian prior",
         "bbb_mixture": "BBB, scale mixture prior"}  # one label per method, as in Table 1
SHORT = {"sgd": "SGD", "dropout": "dropout", "bbb_gaussian": "Gaussian", "bbb_mixture": "mixture",
         "sgd_equal_compute": "SGD as long", "bbb_mixture_random_start": "random start"}


def _pp(v):
    return f"{v:+.2f}"


def _claim_line(H, a, b, c):
    claim = CLAIMS[(a, b)]
    if not c.get("seeds"):
        return f"2×{H}: {claim}? not measured yet"
    diff = f"{SHORT[a]} − {SHORT[b]} {_pp(c['diff_pp'])} pp"
    if c["ci_pp"] is None:
        return f"2×{H}: {claim}: {c['verdict']} ({diff}; {c['note'] or 'no test'})"
    return (f"2×{H}: {claim}: {c['verdict']} ({diff}, 95% CI {_pp(c['ci_pp'][0])} to "
            f"{_pp(c['ci_pp'][1])}; paired t p = {c['p']:.3f}, Holm over {c['family_size']}: "
            f"{c['p_holm']:.3f}; sign test p = {c['sign_p']:.3f})")


def orderings(rec):
    """Return one line per width and claim: the paper's orderings (a two-sided paired t-test
    across seeds, Holm over the three at each width), BBB vs dropout comparability, and the
    controls; the words are helpers.stats' ("holds", "reversed", "not resolved at n seeds")."""
    res = rec["metrics"].get("analysis") or analysis(rec["metrics"]["rows"])
    lines = []
    for H, w in sorted(res["widths"].items(), key=lambda kv: int(kv[0])):
        for a, b in FAMILY:
            lines.append(_claim_line(H, a, b, w["orderings"][f"{a} < {b}"]))
        c = w.get("comparable")
        if c:
            ci = ("no interval" if c["ci_pp"] is None else
                  f"95% CI {_pp(c['ci_pp'][0])} to {_pp(c['ci_pp'][1])}")
            lines.append(f"2×{H}: BBB (scale mixture) and dropout within ±{c['margin_pp']:.1f} "
                         f"pp: {c['verdict']} ({_pp(c['diff_pp'])} pp, {ci})")
        for a, b in CONTROLS if "controls" in w else ():
            lines.append(_claim_line(H, a, b, w["controls"][f"{a} < {b}"]))
    return lines


def what_it_shows(rec):
    """Return Markdown stating, per width and from table1.json alone, the scale mixture against
    the paper and the verdict words of the paper's orderings, BBB vs dropout and the controls."""
    res = rec["metrics"].get("analysis") or analysis(rec["metrics"]["rows"])
    by = {(r["key"], r["H"]): r for r in rec["metrics"]["rows"]}
    lines = []
    for H, w in sorted(res["widths"].items(), key=lambda kv: int(kv[0])):
        mix = by.get(("bbb_mixture", int(H)))
        vs = (mix or {}).get("vs_paper")
        words = {}
        for name, c in w["orderings"].items():
            words.setdefault(c["verdict"], []).append(CLAIMS.get(tuple(name.split(" < ")), name))
        parts = [f"{', '.join(n)}: {v}" for v, n in words.items()]
        where = "" if not mix or mix["mean"] is None else \
            f" ({100 * mix['mean']:.2f}% over {len(mix['seeds'])} seeds)"
        line = (f"- **2×{H}**, scale mixture{where}: {vs['verdict'] if vs else 'not run yet'}. "
                f"The paper's orderings — {'; '.join(parts)}.")
        if w.get("comparable"):
            c = w["comparable"]
            line += (f" BBB vs dropout within ±{c['margin_pp']:.1f} pp: {c['verdict']} "
                     f"(difference {c['diff_pp']:+.2f} pp).")
        if w.get("controls"):
            line += " Controls: " + "; ".join(
                f"{CLAIMS.get(tuple(k.split(' < ')), k)}: {c['verdict']}"
                for k, c in w["controls"].items()) + "."
        lines.append(line)
    return "**What it shows** (two-sided tests, paired by seed, Holm per width):\n\n" + \
        "\n".join(lines)


def mc_noise(rec):
    """Return (header, rows): for each BBB row, the seed sd of its test error beside the MC
    evaluation noise (the sd over the single weight samples of each run, averaged over runs)
    and which predictor was reported (the posterior-mean weights carry no MC noise)."""
    header = ["row", "units", "seed sd", "MC sd, one weight sample (mean over runs)",
              "reported predictor"]
    out = []
    for r in rec["metrics"]["rows"]:
        sds = [v for v in (r.get("mc_sd_single_sample") or []) if v is not None]
        if not sds:
            continue
        preds = r["predictor"]
        k = sum(p == "mean_weights" for p in preds)
        seed_sd = "—" if r["sd"] is None else f"{100 * r['sd']:.2f} pp"
        out.append([_label(r), str(r["H"]), seed_sd,
                    f"{100 * statistics.fmean(sds):.2f} pp",
                    f"mean weights on {k} of {len(preds)} seeds, average of samples on "
                    f"{len(preds) - k}"])
    return header, out


def records_of(rec, key, H, notebook=NB):
    """Return the run records of one row of table1.json (read back from runs/)."""
    for r in rec["metrics"]["rows"]:
        if r["key"] == key and r["H"] == H:
            return [json.loads((results_dir() / notebook / "runs" / f"{n}.json").read_text())
                    for n in r["runs"]]
    return []


def start_words(sweep):
    """What a search with both starts shows at ASHA's first rung, in words read from its record
    ``sweep``: how many warm-started trials are below the best random-start trial there, and how
    far ASHA let the random-start trials run. '' for a search without both starts."""
    trials = [t for t in sweep["metrics"]["trials"] if t.get("val_curve")]
    warm = [t for t in trials if t["config"].get("init_from")]
    cold = [t for t in trials if not t["config"].get("init_from")]
    if not warm or not cold:
        return ""
    rung = (sweep["config"].get("scheduler") or {}).get("grace_period") or 1

    def at(t):
        return dict(map(tuple, t["val_curve"])).get(rung)
    best_cold = min(v for v in map(at, cold) if v is not None)
    ahead = sum(at(t) is not None and at(t) < best_cold for t in warm)
    stopped = [t["epochs_run"] for t in cold]
    at_rung = sum(e == rung for e in stopped)
    others = sorted(e for e in stopped if e != rung)
    init = sorted({t["config"].get("init_epochs") for t in warm})
    chosen = sweep["metrics"]["chosen"]
    return (f"**What it shows.** After {rung} epochs, {ahead} of {len(warm)} trials that start "
            f"from the trained SGD network (itself trained {'/'.join(map(str, init))} epochs "
            f"first) have a lower validation error than the best of the {len(cold)} trials whose "
            f"means start at random, and ASHA stopped {at_rung} of those {len(cold)} at epoch "
            f"{rung}" + (f" (the other{'s' if len(others) > 1 else ''} at epoch{'s' if len(others) > 1 else ''} "
                        f"{', '.join(map(str, others))})" if others else "")
            + ". The search chose a " + ("warm start" if chosen["config"].get("init_from")
                                         else "random start") + ".")


def predictor_words(rec, H, notebook=NB):
    """What validation chose between the posterior mean and the average of sampled networks for
    the BBB runs of table1.json at width ``H``, and how often the test error agreed, in words
    read from the run records."""
    runs = [(key, r) for key in ("bbb_gaussian", "bbb_mixture")
            for r in records_of(rec, key, H, notebook)]
    if not runs:
        return f"No BBB run at 2×{H} yet."
    mean = [r for _, r in runs if r["metrics"]["predictor"] == "mean_weights"]
    better = sum(r["metrics"]["test_error_ensemble"] < r["metrics"]["test_error_mean_weights"]
                 for _, r in runs)
    ties = sum(r["metrics"]["test_error_ensemble"] == r["metrics"]["test_error_mean_weights"]
               for _, r in runs)
    return (f"**What it shows.** At 2×{H}, validation chose the posterior-mean weights for "
            f"{len(mean)} of {len(runs)} BBB runs" + (
                "" if len(mean) == len(runs) else " and the average of sampled networks for the "
                "others") + f". On the test set, averaging had the lower error in {better} of "
            f"{len(runs)} runs" + (f" (equal in {ties})" if ties else "") + ". Section 3's table "
            "names the predictor of every width's runs.")


def _widths(Hs):
    """'2×400', '2×400 and 2×800', '2×400, 2×800 and 2×1200'."""
    ws = [f"2×{H}" for H in sorted(Hs)]
    return ws[0] if len(ws) == 1 else ", ".join(ws[:-1]) + " and " + ws[-1]


def warm_start_words(rec):
    """Which rows of table1.json ``rec`` start their means from a trained network (a warm
    start), at which widths, and at which of those widths the two control rows exist, in words
    read from the rows (their start column and keys)."""
    rows = rec["metrics"]["rows"]
    warm = {}
    for r in rows:
        if r["key"] in METHODS and r["protocol"]["init_epochs"]:
            src = r["protocol"]["start"].split("(")[1].split(",")[0] if "(" in \
                r["protocol"]["start"] else "trained"
            warm.setdefault((r["key"], src), set()).add(r["H"])
    if not warm:
        return ("**Warm starts.** No recipe of this table starts from a trained network: every "
                "row starts at random, so there are no control rows.")
    controlled = {r["H"] for r in rows if r["key"] in EXTRA_LABELS}
    parts = [f"{METHOD_LABELS[k].replace('BBB, ', 'BBB with the ')} starts its means from the "
             f"trained {src.upper() if src == 'sgd' else src} network at {_widths(Hs)}"
             for (k, src), Hs in sorted(warm.items())]
    all_warm = set().union(*warm.values())
    bare = sorted(all_warm - controlled)
    words = (f"**Warm starts and their controls.** {'; '.join(parts)} (the start column). "
             "Two control rows follow a warm-started recipe: SGD trained for as many epochs as "
             "the warm start and BBB together (equal epochs, not equal compute: a BBB step "
             "samples weights and adds the KL term), and the best BBB trial with a random "
             "start. ")
    if not controlled & all_warm:
        return words + "This table has them at no width."
    words += f"This table has them at {_widths(controlled & all_warm)}"
    if bare:
        words += (f" only: at {_widths(bare)} the warm start has no control here (section 8's "
                  "plan v1 runs both at every width where its chosen recipe starts warm)")
    return words + "."


def repeat_words(table, plan):
    """How plan v1's runs (its summary.json ``plan``) relate to section 3's (table1.json
    ``table``): the seeds and test images they share at each width the plan has run, and the
    plan runs that repeat a section 3 run (the same recipe on the same seed: the same run name),
    with whether each gave the same test error. Read from the two records' rows."""
    before = {}
    for r in table["metrics"]["rows"]:
        for name, err in zip(r["runs"], r["test_error"]):
            before[name] = (r["key"], r["H"], err)
    seeds3 = {}
    for r in table["metrics"]["rows"]:
        seeds3.setdefault(r["H"], set()).update(r["seeds"])
    seeds_v1, repeats = {}, {}
    ran = {r["H"] for r in plan["rows"] if r["runs"]}
    for r in plan["rows"]:  # the plan's reported seeds (done or not) at each width it has run
        if r["H"] in ran:
            seeds_v1.setdefault(r["H"], set()).update(
                r["seeds"], r.get("pending_seeds", []), r.get("diverged_seeds", []))
        if not r["runs"]:
            continue
        for path, seed, err in zip(r["runs"], r["seeds"], r["test_error"]):
            name = path.rsplit("/", 1)[-1].removesuffix(".json")
            if name in before:
                repeats.setdefault(r["H"], []).append((r["key"], seed, err, before[name][2]))
    shared = {H: sorted(seeds_v1[H] & seeds3.get(H, set())) for H in sorted(seeds_v1)}
    shared = {H: v for H, v in shared.items() if v}
    if not shared:
        return ("**Plan v1 and section 3.** At no width do plan v1's finished runs share a "
                "seed with section 3's runs of that width; both use the same test images.")
    out = ["**Plan v1 and section 3.** Both score the same 10,000 test images. At "
           + "; at ".join(f"2×{H} the plan's seeds include section 3's seeds "
                          f"{', '.join(map(str, v))}" for H, v in shared.items()) + "."]
    for H, reps in sorted(repeats.items()):
        same = [x for x in reps if x[2] == x[3]]
        rows = {}
        for key, seed, _, _ in reps:
            rows.setdefault(key, []).append(str(seed))
        which = "; ".join(f"{METHOD_LABELS.get(k, k)}: seed{'s' if len(v) > 1 else ''} "
                          f"{', '.join(v)}" for k, v in rows.items())
        diff = [x for x in reps if x[2] != x[3]]
        out.append(
            f"At 2×{H}, {len(reps)} of the plan's runs repeat a section 3 run, the same recipe "
            f"on the same seed ({which}): they were trained again, not copied, and "
            + (f"all {len(reps)} give the same test error as before"
               if not diff else f"{len(same)} of {len(reps)} give the same test error as "
               f"before. {len(diff)} differ{'s' if len(diff) == 1 else ''}: "
               + "; ".join(f"{METHOD_LABELS.get(k, k)}, seed {sd}: {100 * a:.2f}% here, "
                           f"{100 * b:.2f}% in section 3" for k, sd, a, b in diff)
               + " (the code changed between the two trainings; a difference in a float's last "
                 "digits is enough to send two trainings of one seed apart)") + ".")
    if not repeats:
        out.append("No plan run repeats a section 3 recipe on the same seed.")
    out.append("So at these seeds the plan's numbers are not a fresh sample: the test images "
               "are those whose errors had been seen" + (
                   ", and a repeated run is the same draw of its seed, not a new one"
                   if repeats else "") + ".")
    return " ".join(out)


COLORS = METHOD_COLORS


def figure2(rec, H, notebook=NB):
    """The paper's Figure 2: test error against epochs (seed 0), warm starts drawn after the
    epochs of the network they start from."""
    import matplotlib.pyplot as plt

    from .plotting import percent_axis
    fig, ax = plt.subplots(figsize=(7.5, 4))
    lo, hi, marked = 1.0, 0.0, False
    for key in METHODS:
        recs = records_of(rec, key, H, notebook)
        if not recs:
            continue
        run0 = recs[0]
        cfg = RunConfig.from_dict(run0["config"])
        shift = cfg.init_epochs if cfg.init_from else 0
        x = [h["epoch"] + shift for h in run0["history"]]
        y = [h["test_error"] for h in run0["history"]]
        ax.plot(x, y, c=COLORS[key], label=METHOD_LABELS[key] + (" (warm start)" if shift else ""))
        if shift and not marked:
            ax.axvline(shift, c="0.4", ls=":", lw=1)
            ax.annotate(f"warm starts: BBB begins at the weights\nof the SGD network trained for "
                        f"{shift} epochs", (shift, 1.0), xycoords=("data", "axes fraction"),
                        xytext=(6, -24), textcoords="offset points", fontsize=8, color="0.3")
            marked = True
        tail = y[len(y) // 4:]
        lo, hi = min(lo, min(tail)), max(hi, max(tail))
    ax.set_ylim(lo * 0.92, hi * 1.08)
    percent_axis(ax, "y", decimals=2)
    ax.set_xlabel("epoch")
    ax.set_ylabel("test error")
    ax.set_title(f"784-{H}-{H}-10, seed 0 (the paper trains 600 epochs)")
    ax.legend(fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.16), ncol=2)
    return fig


def _weight_histograms(rec, H, notebook=NB):
    """(method, weight histogram, bin centres, bin width) of each method's seed-0 network."""
    for key in METHODS:
        recs = records_of(rec, key, H, notebook)
        if recs:
            h = recs[0]["metrics"]["weight_histogram"]
            width = (h["hi"] - h["lo"]) / h["bins"]
            yield key, h, [h["lo"] + (i + 0.5) * width for i in range(h["bins"])], width


def figure3(rec, H, notebook=NB):
    """The paper's Figure 3: the density of the weights of each method (BBB: one sample w ~ q),
    on a log-density axis."""
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(7.5, 4))
    for key, h, centres, width in _weight_histograms(rec, H, notebook):
        dens = [c / (h["total"] * width) for c in h["counts"]]
        ax.step(centres, dens, where="mid", c=COLORS[key], label=METHOD_LABELS[key])
    ax.set_yscale("log")
    ax.set_xlabel("weight value")
    ax.set_ylabel("density (log scale)")
    ax.set_title(f"weights of the 784-{H}-{H}-10 networks, seed 0 (BBB: one sample w ~ q)")
    ax.legend(fontsize=8)
    return fig


def weight_share_values(rec, H, notebook=NB, near=0.01, far=0.1):
    """Figure 3 in numbers: ``({method: (share within ±near, share beyond ±far, share beyond
    the histogram's range)}, the range, {method: seed})`` for the first reported network of each
    method (seed 0; BBB: one sample), from the run records' weight histograms."""
    shares, hi, seeds = {}, None, {}
    for key, h, centre, _ in _weight_histograms(rec, H, notebook):
        hi = h["hi"]
        inside = sum(c for x, c in zip(centre, h["counts"]) if abs(x) < near)
        beyond = sum(c for x, c in zip(centre, h["counts"]) if abs(x) > far) + h["outside"]
        shares[key] = (inside / h["total"], beyond / h["total"], h["outside"] / h["total"])
        seeds[key] = (records_of(rec, key, H, notebook)[0].get("config") or {}).get("seed")
    return shares, hi, seeds


def weight_shares(rec, H, notebook=NB, near=0.01, far=0.1):
    """Figure 3 in numbers: per method, the share of the seed-0 network's weights (BBB: one
    sample) within ±``near`` of zero, beyond ±``far`` and beyond the histogram's range (±0.3),
    from the run records' weight histograms. Returns (header, rows, words): ``words`` names the
    method with the largest share near zero and the one with the largest share beyond the
    range."""
    shares, hi, _ = weight_share_values(rec, H, notebook, near, far)
    header = ["method", f"|w| < {near:g}", f"|w| > {far:g}",
              "beyond the plot" + (f" (±{hi:g})" if hi is not None else "")]
    rows = [[METHOD_LABELS[k], f"{100 * a:.1f}%", f"{100 * b:.1f}%", f"{100 * c:.1f}%"]
            for k, (a, b, c) in shares.items()]
    if not shares:
        return header, rows, ""
    most_near = max(shares, key=lambda k: shares[k][0])
    most_out = max(shares, key=lambda k: shares[k][2])
    words = (f"The largest share of weights within ±{near:g} of zero: "
             f"{METHOD_LABELS[most_near]} ({100 * shares[most_near][0]:.1f}%); the largest "
             f"share beyond the plot's range: {METHOD_LABELS[most_out]} "
             f"({100 * shares[most_out][2]:.1f}%).")
    return header, rows, words


def sweep_curves(name, notebook=NB, ax=None):
    """Validation error against epochs of every trial of a sweep; the chosen one in black."""
    import matplotlib.pyplot as plt

    from .plotting import percent_axis
    rec = load_sweep(name, notebook)
    chosen = rec["metrics"]["chosen"]["name"]
    if ax is None:
        _, ax = plt.subplots(figsize=(7.5, 4))
    for t in rec["metrics"]["trials"]:
        curve = t.get("val_error_curve") or t["val_curve"]
        if not curve:
            continue
        x, y = zip(*curve)
        warm = t["config"].get("init_from") is not None
        if t["name"] == chosen:
            ax.plot(x, y, c="k", lw=2, zorder=5, label="chosen")
        else:
            ax.plot(x, y, c="C1" if warm else "C0", lw=0.8, alpha=0.6)
    if any(t["config"].get("init_from") for t in rec["metrics"]["trials"]):
        ax.plot([], [], c="C0", label="random start of μ")
        ax.plot([], [], c="C1", label="warm start")
    ax.set_yscale("log")
    percent_axis(ax, "y", decimals=1)
    ax.set_xlabel("epoch")
    ax.set_ylabel("validation error (log scale)")
    ax.legend(fontsize=8)
    return ax


def choices_effects(text=None):
    """(headers, rows) for ``helpers.show_table``: notebook 01's rows of the table that
    ``tools/choices.py`` writes into docs/choices.md from the committed results — every choice
    made after a test number of this experiment, with today's tests on both sides of it (the
    rows whose network is a width, 2×H). ``text``: the page's text (default: the file)."""
    from .utils import PROJECT_ROOT
    if text is None:
        text = (PROJECT_ROOT / "docs" / "choices.md").read_text()
    start, end = "<!-- choices:start -->", "<!-- choices:end -->"
    if start not in text or end not in text:
        raise ValueError("docs/choices.md has no generated table: run python tools/choices.py")
    lines = [ln for ln in text.split(start, 1)[1].split(end, 1)[0].splitlines()
             if ln.startswith("|")]
    cells = [[c.strip() for c in ln.strip("|").split("|")] for ln in lines]
    head, body = cells[0], [c for c in cells[2:] if c[2].startswith("2×")]
    keep = [0, 1, 2, 3, 4, 5]  # choice, side, width, ours, mixture vs paper, orderings
    return [head[i] for i in keep], [[r[i] for i in keep] for r in body]


# --- the notebook's Table 1: the paper's protocol beside a modern (Adam) recipe ------------------
#
# Every function below reads *summaries*: dicts with ``rows``, each row {key, H, seeds,
# test_error} (helpers.paper_protocol.write_summary and helpers.table1_plan.write_summary both
# write such rows; a plan summary's ``plan_width`` maps a smoke width to the paper's width). The
# paired tests are recomputed from the rows with helpers.stats, as the plans declare them (the
# paper's three orderings as one Holm family per width, the warm start's two controls as another,
# BBB against dropout within +-0.1 pp), so a later summary of the same shape drops in unchanged.

OKABE_ITO = {"sgd": "#009E73", "dropout": "#E69F00", "bbb_gaussian": "#CC79A7",
             "bbb_mixture": "#0072B2"}  # colour-blind-safe (Okabe & Ito 2008)
RECIPES = {"paper": "the paper's protocol", "adam": "Adam recipe"}  # section 3 says what the
# paper's protocol did to BBB's widths, once; labels elsewhere stay short
STORY_CLAIMS = (  # (a, b, words, family): the effect is a - b in test error; the answer's order
    ("bbb_mixture", "sgd", "mixture − plain network", "orderings"),
    ("bbb_mixture", "bbb_gaussian", "mixture − Gaussian", "orderings"),
    ("dropout", "sgd", "dropout − plain network", "orderings"),
    ("bbb_mixture", "dropout", "mixture − dropout", "comparable"),
    ("bbb_mixture", "sgd_continued", "mixture − plain network, extended training (control)",
     "controls"),
    ("bbb_mixture", "bbb_random_start", "mixture − random-start mixture (control)",
     "controls"))
STORY_MARGIN = COMPARABLE[2]
# the family sizes of the declared analysis (analysis_plan.json "tests" and "controls";
# paper_protocol/plan.json "analysis"), used where a summary does not record its own: the three
# orderings per width, the two controls per width; the comparability claim is a test of its own
DECLARED_M = {"orderings": len(FAMILY), "controls": len(CONTROLS), "comparable": 1}


def declared_m(rec, W, family):
    """The size of the Holm family of ``family`` ('orderings', 'controls', 'comparable') at
    paper width ``W`` as summary ``rec``'s own analysis records it (``family_size``, under
    analysis[width][family] or analysis[family][width]), else ``DECLARED_M``."""
    an = (rec or {}).get("analysis") or {}
    found = []
    for k, v in an.items():
        if not isinstance(v, dict):
            continue
        if str(k).isdigit() and paper_width(rec, int(k)) == W:
            found += list((v.get(family) or {}).values())
        elif k == family:
            found += [x for H, fam in v.items() if str(H).isdigit()
                      and paper_width(rec, int(H)) == W and isinstance(fam, dict)
                      for x in fam.values()]
    sizes = {x["family_size"] for x in found if isinstance(x, dict) and x.get("family_size")}
    if len(sizes) > 1:
        raise ValueError(f"family sizes {sorted(sizes)} for {family} at 2×{W}")
    return sizes.pop() if sizes else DECLARED_M[family]


def paper_width(rec, H):
    """The paper's width that row width ``H`` of summary ``rec`` stands for (the smoke profile
    trains tiny widths in their place); ``H`` itself when the summary names none."""
    pw = rec.get("plan_width") or {}
    return int(pw.get(str(H), pw.get(H, H)))


def story_rows(rec):
    """{(key, paper width): row} of the rows of summary ``rec`` that have a test error."""
    return {(r["key"], paper_width(rec, r["H"])): r for r in (rec or {}).get("rows", [])
            if r.get("test_error")}


def _pair(by, a, b, W):
    ra, rb = by.get((a, W)), by.get((b, W))
    if not ra or not rb:
        return None
    va, vb = dict(zip(ra["seeds"], ra["test_error"])), dict(zip(rb["seeds"], rb["test_error"]))
    common = sorted(set(va) & set(vb))
    return ([va[s] for s in common], [vb[s] for s in common]) if common else None


def paper_difference(a, b, W):
    """The paper's Table 1 difference a - b at width ``W`` (a fraction), or None."""
    pa, pb = PAPER_TABLE1.get(a, {}).get(W), PAPER_TABLE1.get(b, {}).get(W)
    return None if pa is None or pb is None else pa - pb


def effects(rec):
    """{(paper width, a, b): effect} for every claim of ``STORY_CLAIMS`` that summary ``rec``
    can pair: n, the mean difference a - b, its 95% interval (None below two seeds), the
    family's Holm-adjusted p (None for the comparability claim), the verdict word of
    helpers.stats, the paper's difference, the family's size ``m`` (``declared_m``) and
    ``ci_adj``, the 95% interval adjusted for the m comparisons (Bonferroni; the comparability
    claim is its own test, m = 1)."""
    by = story_rows(rec)
    out = {}
    for W in sorted({w for _, w in by}):
        for fam in ("orderings", "controls"):
            claims = {(a, b): _pair(by, a, b, W) for a, b, _, f in STORY_CLAIMS if f == fam}
            claims = {k: v for k, v in claims.items() if v is not None}
            if not claims:
                continue
            res = stats.ordering_family(claims, alpha=ALPHA)
            m = declared_m(rec, W, fam)
            for (a, b), r in res.items():
                tt = r["t_test"]
                out[(W, a, b)] = {"n": tt["n"], "diff": tt["mean_diff"], "ci": tt["ci"],
                                  "p_holm": r["p_holm"], "verdict": r["verdict"],
                                  "family": fam, "paper": paper_difference(a, b, W), "m": m,
                                  "ci_adj": stats.bonferroni_interval(*claims[(a, b)], m)}
        pair = _pair(by, "bbb_mixture", "dropout", W)
        if pair is not None:
            c = stats.comparable(*pair, margin=STORY_MARGIN, alpha=ALPHA)
            tt = c["t_test"]
            out[(W, "bbb_mixture", "dropout")] = {
                "n": tt["n"], "diff": tt["mean_diff"], "ci": tt["ci"], "p_holm": None,
                "verdict": c["verdict"], "family": "comparable",
                "paper": paper_difference("bbb_mixture", "dropout", W), "m": 1,
                "ci_adj": stats.bonferroni_interval(*pair, 1), "_pair": pair}
    # the comparability claim is declared as a test of its own at each width (m = 1); read over
    # the widths it is m tests, one per width: ``ci_widths`` is its interval adjusted for them
    comp = [e for (_, a, b), e in out.items() if e["family"] == "comparable" and e["ci"]]
    for e in [e for (_, a, b), e in out.items() if e["family"] == "comparable"]:
        pair = e.pop("_pair")
        if e["ci"] and len(comp) > 1:
            e["m_widths"] = len(comp)
            e["ci_widths"] = stats.bonferroni_interval(*pair, len(comp))
    for (W, a, b), e in out.items():  # σ did not learn there (``sigma_checked``): no verdict
        if W in rec.get("mixture_unlearned", ()) and "bbb_mixture" in (a, b) and e["ci"]:
            from .posterior_diagnostics import MIXTURE_NO_VERDICT
            e.update(p_holm=None, verdict="no verdict", no_verdict=MIXTURE_NO_VERDICT)
    return out


def sigma_checked(adam_rec, measured):
    """Summary ``adam_rec`` (the Adam recipe's) with the paper widths at which the rerun of its
    warm-started scale mixture found σ *shifted uniformly* (``measured``: posterior_diagnostics'
    ``adam_load()``; its ``adam_unlearned``) under ``mixture_unlearned``: ``effects`` then reads
    every comparison with the mixture there as ``MIXTURE_NO_VERDICT`` (no Holm p, no verdict
    word), as the paper protocol's BBB rows are read where σ stayed put. A copy; ``adam_rec``
    unchanged; None stays None."""
    from .posterior_diagnostics import adam_unlearned
    if adam_rec is None:
        return None
    return {**adam_rec, "mixture_unlearned": adam_unlearned(measured)}


def _pp(x, sign=True, d=2):
    """``x`` (a fraction) in percentage points, ``d`` decimals, a true minus sign."""
    return (f"{100 * x:+.{d}f}" if sign else f"{100 * x:.{d}f}").replace("-", "−")


def _p(p):
    return "< 0.001" if p < 0.001 else f"{p:.2g}"


def _ci_pp(ci):
    """The interval in pp, two decimals, more (up to four) where an end that is not 0 would
    show as ±0.00: an interval shown as excluding 0 must not read [+0.00, ...]."""
    d = 2
    while d < 4 and any(x != 0 and round(100 * x, d) == 0 for x in ci):
        d += 1
    return f"[{_pp(ci[0], d=d)}, {_pp(ci[1], d=d)}]"


def excluded(e):
    """(zero excluded, the paper's difference excluded) by the adjusted 95% interval of effect
    ``e`` (``ci_adj``); None where there is no interval, or no paper value."""
    if not e or not e.get("ci_adj"):
        return None, None
    lo, hi = e["ci_adj"]
    return not lo <= 0.0 <= hi, None if e["paper"] is None else not lo <= e["paper"] <= hi


def paper_outside(e):
    """Whether the paper's difference lies outside the adjusted 95% interval of effect ``e``
    (``ci_adj``): 'yes', 'no', '—' (no paper value) or '' (no interval). Nothing is said of 0:
    whether a difference is resolved is Holm's verdict."""
    if not e or not e.get("ci_adj"):
        return ""
    out = excluded(e)[1]
    return "—" if out is None else "yes" if out else "no"


def comparable_words(e):
    """The comparability claim's verdict for effect ``e`` (mixture − dropout): *comparable*
    (its interval lies inside the ±0.1 pp margin) or *not shown comparable*, the latter with
    ``comparable_reading`` in brackets, and the side of 0 (``comparable_side``) only where the
    interval adjusted for the widths excludes 0 too (reader r18: no side word that the
    family of widths does not carry)."""
    if e["verdict"] == "comparable":
        return "*comparable*"
    reading = comparable_reading(e)
    side = comparable_side(e)
    if side and reading:  # described beside the declared verdict, never in its place
        w = widths_reading(e)
        if w.endswith("contains 0"):  # one width's side, gone across the widths: no side named
            reading = f"{reading} at this width alone; {w}"
        else:
            reading = f"{side}: {reading}" + (f"; {w}" if w else "")
    return "*not shown comparable*" + (f" ({reading})" if reading else "")


def widths_reading(e):
    """For mixture − dropout (effect ``e``) whose own interval excludes 0: its interval adjusted
    for the m widths at which the claim is tested (``ci_widths``, Bonferroni), and whether that
    contains 0 (then the side is not a finding); '' without it."""
    if not e or not e.get("ci_widths") or not comparable_side(e):
        return ""
    lo, hi = e["ci_widths"]
    return (f"adjusted for the {_NUM.get(e['m_widths'], e['m_widths'])} widths "
            f"{_ci_pp(e['ci_widths'])}, "
            + ("contains 0" if lo <= 0 <= hi else "excludes 0"))


def comparable_side(e):
    """Which way mixture − dropout's adjusted 95% interval (effect ``e``) lies when it excludes
    0: 'higher error than dropout' (above 0) or 'lower error than dropout' (below 0); '' when
    it contains 0 or there is no interval. A description beside the verdict, not a verdict."""
    if not e or not e.get("ci_adj"):
        return ""
    lo, hi = e["ci_adj"]
    return ("higher error than dropout" if lo > 0 else "lower error than dropout" if hi < 0
            else "")


def comparable_reading(e, margin=STORY_MARGIN):
    """Where the adjusted 95% interval of mixture − dropout (effect ``e``, ``ci_adj``; a test of
    its own, so m = 1) lies against 0 and the ±``margin`` of *comparable*, in those terms only
    (no direction read from it); '' without an interval or when it lies inside the margin."""
    if not e or not e.get("ci_adj"):
        return ""
    lo, hi = e["ci_adj"]
    m = f"{100 * margin:g}"
    if -margin <= lo and hi <= margin:
        return ""
    if lo > margin:
        return f"entirely above +{m} pp"
    if hi < -margin:
        return f"entirely below −{m} pp"
    zero = "above 0" if lo > 0 else "below 0" if hi < 0 else "contains 0"
    across = " and ".join(x for x, out in ((f"−{m}", lo < -margin), (f"+{m}", hi > margin)) if out)
    return f"{zero}, crosses {across} pp"


def _holm(e):
    """', Holm p 0.054' for an effect with a Holm-adjusted p (orderings and controls), else ''."""
    return "" if e.get("p_holm") is None else f", Holm p {_p(e['p_holm'])}"


def _effect_cell(e):
    """(a − b with its adjusted 95% interval (``ci_adj``), its Holm-adjusted p and its verdict
    (Holm's, or the comparability claim's with where its interval lies); whether the paper's
    difference lies outside that interval) for the effects table."""
    if e is None:
        return "—", "—"
    if not e.get("ci_adj"):
        return f"{_pp(e['diff'])} (one seed)", "—"
    return (f"{_pp(e['diff'])} {_ci_pp(e['ci_adj'])}{_holm(e)}: {_verdict_of(e)}",
            paper_outside(e))


ADJUSTED = "95 % interval adjusted for the m comparisons (Bonferroni)"


def _m_cell(*effs):
    """The family size m of the effects given (one value, or each recipe's where they differ)."""
    ms = [str(e["m"]) for e in effs if e and e.get("m")]
    return " / ".join(dict.fromkeys(ms)) or "—"


def table1_rows(paper_rec, adam_rec):
    """(header, rows): Table 1, per width and method the paper's test error, the mean ± sd (n
    seeds) under the paper's protocol (``paper_rec``) and with the Adam recipe (``adam_rec``)."""
    p, a = story_rows(paper_rec), story_rows(adam_rec)
    header = ["width", "method", "paper", f"{RECIPES['paper']}: mean ± sd (seeds)",
              f"{RECIPES['adam']}: mean ± sd (seeds)"]

    def cell(row):
        if not row:
            return "not run"
        m = stats.mean_ci(row["test_error"])
        sd = "" if m["sd"] is None else f" ± {100 * m['sd']:.2f}"
        return f"{100 * m['mean']:.2f}{sd}% ({m['n']})"
    rows = []
    for W in sorted({w for _, w in list(p) + list(a)}):
        for key in METHODS:
            paper = PAPER_TABLE1[key].get(W)
            rows.append([f"2×{W}", TABLE_LABELS[key], "—" if paper is None else f"{100 * paper:.2f}%",
                         cell(p.get((key, W))), cell(a.get((key, W)))])
    return header, rows


def effects_rows(paper_rec, adam_rec, skip_answer=False):
    """(header, rows): each comparison a − b in pp with its 95% interval adjusted for the m
    comparisons of its Holm family (Bonferroni; m in its own column), Holm p and verdict,
    beside the paper's difference, for both recipes (the Adam recipe first), and whether the
    paper's difference lies outside each interval. ``skip_answer``: leave out the claims the
    answer's table shows (``ANSWER_CLAIMS`` at its width), so each is shown once."""
    ep, ea = effects(paper_rec), effects(adam_rec)
    W0 = _width_with_both(ep, ea) if skip_answer else None
    shown = {(a, b) for a, b, _ in ANSWER_CLAIMS}
    header = ["width", "a − b (pp)", "paper", "m",
              f"{RECIPES['adam']}: a − b [interval], Holm p: verdict",
              "paper's difference outside it", f"{RECIPES['paper']}: the same",
              "paper's difference outside it"]
    rows, paper_ci = [], False
    for W in sorted({k[0] for k in list(ep) + list(ea)}):
        for a, b, words, _ in STORY_CLAIMS:
            e1, e2 = ep.get((W, a, b)), ea.get((W, a, b))
            if (e1 is None and e2 is None) or (W == W0 and (a, b) in shown):
                continue
            paper_ci = paper_ci or bool(e1 and e1["ci"])
            paper = paper_difference(a, b, W)
            rows.append([f"2×{W}", words, "—" if paper is None else _pp(paper), _m_cell(e2, e1),
                         *_effect_cell(e2), *_effect_cell(e1)])
    if skip_answer and not paper_ci:  # the paper's protocol has no interval here: no columns
        header, rows = header[:6], [r[:6] for r in rows]
    return header, rows


def narrowest_half_width(rec):
    """The half-width of the narrowest adjusted 95% interval (``ci_adj``) among the comparisons
    of summary ``rec`` (a fraction): the yardstick for how much a curve's remaining drift could
    move them; None without an interval."""
    hw = [(e["ci_adj"][1] - e["ci_adj"][0]) / 2 for e in effects(rec).values() if e.get("ci_adj")]
    return min(hw) if hw else None


def resolved_intervals(rec, skip_bbb=False):
    """[(a − b in words, adjusted 95% interval)] of the comparisons of summary ``rec`` that Holm
    resolves; ``skip_bbb``: leave out those with a BBB side (no verdict where σ did not learn)."""
    words = {(a, b): w for a, b, w, _ in STORY_CLAIMS}
    return [(f"{words[(a, b)]} at 2×{W}", e["ci_adj"]) for (W, a, b), e in sorted(effects(rec).items())
            if e.get("p_holm") is not None and e["p_holm"] < ALPHA and e.get("ci_adj")
            and not (skip_bbb and "bbb" in a + b)]


def fixed_sigma_label(sigma=None):
    """What the paper's protocol tests here: BBB whose σ shifted uniformly and did not learn (``sigma``, the
    diagnostics' starting σ, shown to one significant figure where given)."""
    near = f" (≈ {sigma:.1g})" if isinstance(sigma, float) else ""
    return f"BBB whose σ shifted uniformly from its start{near} and did not learn: not a learned posterior"


NO_VERDICT = "no verdict"  # why (σ did not learn) is said once, in the words above the table


def fixed_sigma_rows(paper_rec, sigma=None):
    """(words, header, rows): the paper protocol's tests, each a − b with its adjusted 95%
    interval. A verdict counts only for a method that worked: the rows with a BBB side, whose σ
    shifted uniformly and did not learn (``fixed_sigma_label``), show their interval with
    ``NO_VERDICT`` in place of Holm's p and verdict; the others (dropout − plain network) keep
    their declared verdict (``_effect_cell``). ('', header, []) where no claim has an
    interval."""
    ep = effects(paper_rec)
    header = ["width", "a − b (pp)", "paper", "m", "a − b [interval], Holm p: verdict",
              "paper's difference outside it"]
    rows = []
    for W in sorted({k[0] for k in ep}):
        for a, b, words, _ in STORY_CLAIMS:
            e = ep.get((W, a, b))
            if e and e["ci"]:
                paper = paper_difference(a, b, W)
                cell = _effect_cell(e)
                if a.startswith("bbb") or b.startswith("bbb"):
                    cell = (f"{_pp(e['diff'])} {_ci_pp(e['ci_adj'])}: {NO_VERDICT}", cell[1])
                rows.append([f"2×{W}", words, "—" if paper is None else _pp(paper), _m_cell(e),
                             *cell])
    if not rows:
        return "", header, []
    at = ""
    if len({r[0] for r in rows}) == 1:  # one width: said once, and the answer has the paper's
        at = f" at {rows[0][0]}"
        header, rows = header[1:2] + header[3:], [r[1:2] + r[3:] for r in rows]
    near = f" (≈ {sigma:.1g})" if isinstance(sigma, float) else ""
    return (f"**The paper's protocol{at}: its tests.** Its BBB's σ{near} did not learn "
            "(section 3): the rows with BBB show their interval, no verdict."), header, rows


def comparable_margin_words(n_test=10_000):
    """Why the comparability margin is what it is, from the paper's own Table 1: the paper's
    scale mixture − dropout difference at each width, and at which it falls outside the
    margin (so the paper's own numbers would not pass the test everywhere). ``n_test``: the
    test images, to say the margin in images."""
    from .report import and_list
    diffs = {W: paper_difference("bbb_mixture", "dropout", W) for W in PAPER_TABLE1["dropout"]}
    diffs = {W: d for W, d in sorted(diffs.items()) if d is not None}
    out = [W for W, d in diffs.items() if abs(d) > STORY_MARGIN]
    text = (f"**The ±{100 * STORY_MARGIN:g} pp margin of *comparable*** ({STORY_MARGIN * n_test:.0f} "
            f"of the {n_test:,} test images) is ours, declared before the runs")
    if out:
        text += (f"; the paper's own mixture − dropout difference lies outside it at "
                 f"{and_list([f'2×{W}' for W in out])}")
    return text + "."


def _half_widths(eff, W=None, claims=None):
    """The half-widths (fractions) of the adjusted 95% intervals (``ci_adj``) in ``eff``
    (``effects``), at width ``W`` (any width when None) and of ``claims`` ([(a, b)]; all when
    None)."""
    return [(e["ci_adj"][1] - e["ci_adj"][0]) / 2 for (V, a, b), e in eff.items()
            if e.get("ci_adj")
            and (W is None or V == W) and (claims is None or (a, b) in claims)]


def _pp_range(xs):
    lo, hi = 100 * min(xs), 100 * max(xs)
    return f"{lo:.2f}" if f"{lo:.2f}" == f"{hi:.2f}" else f"{lo:.2f}–{hi:.2f}"


def detectable_words(paper_rec, adam_rec, margin=STORY_MARGIN):
    """In plain words, how small a difference the Adam recipe's seeds can detect: per width the
    range of the half-widths of the adjusted 95% intervals (a mean difference smaller than that
    leaves 0 inside); at the answer's width, the largest gain of the scale mixture over the
    plain network its interval allows, against the paper's; each other width whose mixture −
    plain network interval holds both 0 and the paper's difference (it cannot tell); and what
    the ±``margin`` test of *comparable* can pass given mixture − dropout's half-widths. ''
    without intervals."""
    from .report import and_list
    ep, ea = effects(paper_rec), effects(adam_rec)
    per = []
    for W in sorted({k[0] for k in ea}):
        hw = _half_widths(ea, W)
        if hw:
            n = max(e["n"] for (V, _, _), e in ea.items() if V == W and e.get("ci_adj"))
            per.append(f"{_pp_range(hw)} pp at 2×{W} ({n} seeds)")
    if not per:
        return ""
    text = "**What the seeds can detect** (Adam recipe)."
    W = _width_with_both(ep, ea)
    e = ea.get((W, "bbb_mixture", "sgd")) if W is not None else None
    if e and e.get("ci_adj") and e["paper"] is not None and e["ci_adj"][0] < 0:
        gain = -e["ci_adj"][0]
        text += (f" At 2×{W} any gain of the scale mixture over the plain network is at most "
                 f"{100 * gain:.2f} pp, {gain / -e['paper']:.0%} of the "
                 f"paper's {100 * -e['paper']:.2f} pp")
        few = [V for (V, x, y), o in sorted(ea.items()) if (x, y) == ("bbb_mixture", "sgd")
               and V != W and o.get("ci_adj") and o["paper"] is not None
               and excluded(o) == (False, False)]
        text += ("; " + and_list([f"2×{V}" for V in few]) + " cannot tell (its interval "
                 "holds 0 and the paper's difference)." if few else ".")
    hw = {V: _half_widths(ea, V, claims=[("bbb_mixture", "dropout")])
          for V in sorted({k[0] for k in ea})}
    hw = {V: h[0] for V, h in hw.items() if h}
    if hw:
        m = 100 * margin
        can = [f"at 2×{V} (half-width {100 * h:.2f} pp) only for a mean difference within "
               f"±{m - 100 * h:.2f} pp" for V, h in hw.items() if 100 * h < m]
        cannot = [f"2×{V} ({100 * h:.2f})" for V, h in hw.items() if 100 * h >= m]
        text += (" *Comparable* could pass "
                 + ("; ".join(can) if can else "at no width")
                 + (f"; at {and_list(cannot)} never: the half-width is at least the "
                    "margin." if cannot else "."))
    return text


def resolvable_words(paper_rec, adam_rec):
    """Per width, the smallest difference its seeds could resolve, for each recipe: the range
    over the claims of the half-width of the adjusted 95% interval of the mean paired
    difference, t(1 − 0.025 / m, n − 1) · sd / √n, n the seeds, m the family's size; a mean
    difference smaller than that leaves 0 inside the interval. '' without intervals."""
    ep, ea = effects(paper_rec), effects(adam_rec)
    lines = []
    for W in sorted({k[0] for k in list(ep) + list(ea)}):
        parts = []
        for name, eff in ((RECIPES["adam"], ea), (RECIPES["paper"], ep)):
            hw = _half_widths(eff, W)
            if hw:
                n = max(e["n"] for (V, _, _), e in eff.items() if V == W and e.get("ci_adj"))
                parts.append(f"{name} {_pp_range(hw)} pp ({n} seeds)")
        if parts:
            lines.append(f"- 2×{W}: " + "; ".join(parts))
    if not lines:
        return ""
    return ("**The smallest difference the seeds resolve** is a claim's adjusted interval "
            "half-width, t(1 − 0.025/m, n − 1) · sd(paired differences) / √n over n seeds, over "
            "the claims at each width:\n\n"
            + "\n".join(lines))


def _width_with_both(ep, ea, a="bbb_mixture", b="sgd"):
    both = [W for (W, x, y), e in ep.items() if (x, y) == (a, b) and e["ci"]
            and (ea.get((W, a, b)) or {}).get("ci")]
    return min(both) if both else None


def _verdict_word(e):
    """The verdict of effect ``e`` (an ordering or a control) as one italic word or two:
    *holds*, *reversed* or *not resolved* for an ordering; *lower*, *higher* or *not resolved*
    for a control (it has no paper ordering)."""
    if e["p_holm"] is None or e["p_holm"] >= ALPHA:
        return "*not resolved*"
    return f"*{_word(e)}*"


def vs_paper(rec, key, W):
    """Our mean test error of method ``key`` at width ``W`` (summary ``rec``) minus the paper's
    Table 1 value: {n, mean, diff, ci (of the difference; None below two seeds), paper}; None
    without the row or the paper's value."""
    r, paper = story_rows(rec).get((key, W)), PAPER_TABLE1.get(key, {}).get(W)
    if not r or paper is None:
        return None
    m = stats.mean_ci(r["test_error"])
    return {"n": m["n"], "mean": m["mean"], "diff": m["mean"] - paper, "paper": paper,
            "ci": None if not m["ci"] else [m["ci"][0] - paper, m["ci"][1] - paper]}


def _vs_paper_words(v):
    return (f"{_pp(v['diff'])} pp {_ci_pp(v['ci'])}" if v["ci"] else
            f"{_pp(v['diff'])} pp (one seed: no interval)")


def _md_table(header, rows):
    """A Markdown table ('|' inside a cell escaped), as ``helpers.show_table`` renders it."""
    def cell(x):
        return str(x).replace("|", "\\|")
    return "\n".join(["| " + " | ".join(map(cell, header)) + " |", "|" + "---|" * len(header)]
                     + ["| " + " | ".join(map(cell, r)) + " |" for r in rows])


ANSWER_CLAIMS = (  # (a, b, words): the answer's rows, a − b in test error
    ("bbb_mixture", "sgd", "mixture − plain network"),
    ("bbb_mixture", "bbb_gaussian", "mixture − Gaussian"),
    ("dropout", "sgd", "dropout − plain network"),
    ("bbb_mixture", "dropout", "mixture − dropout"),
    ("bbb_mixture", "sgd_continued", "mixture − plain network, extended training (control)"),
    ("bbb_mixture", "bbb_random_start", "mixture − random-start mixture (control)"))


def _verdict_of(e):
    """The verdict word of effect ``e``: Holm's for an ordering or a control, *comparable* or
    *not shown comparable* for mixture − dropout; '' below two seeds."""
    if not e or not e["ci"]:
        return ""
    if e.get("no_verdict"):
        return e["no_verdict"]
    return comparable_words(e) if e["family"] == "comparable" else _verdict_word(e)


def _bare(e):
    """The verdict of effect ``e`` without the comparability claim's reading."""
    return _verdict_of(e).split(" (")[0]


def _answer_effect(e, verdict=True):
    """a − b in pp, its adjusted 95% interval (``ci_adj``) and seeds; with ``verdict``, Holm's p
    and the verdict after it."""
    if not e.get("ci_adj"):
        return f"{_pp(e['diff'])} (one seed)"
    text = f"{_pp(e['diff'])} {_ci_pp(e['ci_adj'])} ({e['n']})"
    return text + (f"{_holm(e)}: {_verdict_of(e)}" if verdict else "")


def _answer_names(eff, W, a, b, V):
    """Whether the answer's cell for a − b at width ``W`` (``_answer_cell``) also shows width
    ``V``: its verdict, or the side of 0 its interval lies on, differs from ``W``'s."""
    e, o = eff.get((W, a, b)), eff.get((V, a, b))
    return bool(e and o and V != W and o["ci"]
                and (_bare(o) != _bare(e) or comparable_side(o) != comparable_side(e)))


def _answer_cell(eff, W, a, b, verdict=True, others=True):
    """The answer's cell for claim a − b of one recipe (``eff``: its ``effects``): the effect
    at width ``W`` and, after it, every other width whose verdict differs from ``W``'s, or
    whose interval lies on another side of 0 (``comparable_side``; widths with one seed have
    no verdict and are left out); 'not run' without the effect at ``W``.
    ``verdict``: False shows the numbers only (``_answer_effect``) and no other width;
    ``others``: False shows ``W`` alone (the answer's table: other widths in section 2)."""
    e = eff.get((W, a, b))
    if e is None:
        return "not run"
    text = _answer_effect(e, verdict)
    for (V, x, y), o in sorted(eff.items()):
        if verdict and others and (x, y) == (a, b) and _answer_names(eff, W, a, b, V):
            text += f"; at 2×{V}: {_answer_effect(o)}"
    return text


PAPER_COLUMN = "the paper's protocol"


def answer_rows(paper_rec, adam_rec, sigma_fixed=False):
    """(header, rows) of the answer's table at the smallest width both recipes ran with two
    seeds or more: per claim of ``ANSWER_CLAIMS`` the paper's difference, the size m of its
    Holm family and, for each recipe (the Adam recipe first), a − b in pp with its 95%
    interval adjusted for the m comparisons (Bonferroni), seeds, Holm p and verdict, and other
    widths where the verdict differs (``_answer_cell``). ``sigma_fixed``: the diagnostics found
    that σ stayed near its start under the paper's protocol; its column is then left out (its
    tests are shown once, in section 2, by ``fixed_sigma_rows``). (None, []) when no width has
    both."""
    ep, ea = effects(paper_rec), effects(adam_rec)
    W = _width_with_both(ep, ea)
    if W is None:
        return None, []
    paper = PAPER_COLUMN + (f": {fixed_sigma_label(sigma_fixed)} (section 3)"
                            if sigma_fixed else ": the same")
    widths = sorted({V for (V, _, _) in ea})
    rest = [f"2×{V}" for V in widths if V != W]
    header = [f"claim at 2×{W}" + (f" ({', '.join(rest)}: section 2)" if rest else ""),
              "paper's difference (pp)", "m",
              f"{RECIPES['adam']}: a − b [interval] (seeds), verdict",
              f"paper's difference outside? (2×{W})", paper]
    rows = []
    for a, b, words in ANSWER_CLAIMS:
        if (W, a, b) not in ep and (W, a, b) not in ea:
            continue
        d = paper_difference(a, b, W)
        outside = paper_outside(ea.get((W, a, b))) or "one seed"  # other widths: the In short
        rows.append([words + confound_words(adam_rec, a, b), "—" if d is None else _pp(d),
                     _m_cell(ea.get((W, a, b)), ep.get((W, a, b))),
                     _answer_cell(ea, W, a, b, others=False),
                     outside,
                     _answer_cell(ep, W, a, b)])
    if sigma_fixed:  # the paper protocol's tests are shown once, in section 2
        header, rows = header[:5], [r[:5] for r in rows]
    return header, rows


def warm_widths(adam_rec, raw=False):
    """{method: [paper widths]} at which the Adam recipe's rows (summary ``adam_rec``) start
    warm; ``raw``: the rows' own widths (the smoke profile's tiny ones) instead."""
    out = {}
    for r in sorted((adam_rec or {}).get("rows", []), key=lambda r: r["H"]):
        if (r.get("recipe") or {}).get("init_from"):
            out.setdefault(r["key"], []).append(r["H"] if raw else paper_width(adam_rec, r["H"]))
    return out


def confound_words(adam_rec, a, b):
    """' (a warm-started, b from a random start at 2×W, …)' where the Adam recipe starts one side
    of a − b warm and the other not at some width (the difference then compares the start as
    well as the method); '' otherwise."""
    from .report import and_list
    warm, rows = warm_widths(adam_rec), story_rows(adam_rec)
    every = sorted({W for (k, W) in rows if k in (a, b)})
    split = [W for W in every if (W in warm.get(a, [])) != (W in warm.get(b, []))]
    if not split or not {a, b} <= {"bbb_gaussian", "bbb_mixture"}:
        return ""
    x, y = (a, b) if all(W in warm.get(a, []) for W in split) else (b, a)
    return (f" (starts differ at {and_list([f'2×{W}' for W in split])}: {SHORT[x]} "
            f"warm, {SHORT[y]} random)")


def paper_fill_in():
    """The settings our paper protocol fills in where the paper is silent, in words, from the
    declared plan (results/.../paper_protocol/plan.json "fixed"): ρ₀ and one learning rate for
    μ and ρ (the plan declares no second rate); '' without the plan."""
    from .paper_protocol import read, root
    fixed = (read(root() / "plan.json") or {}).get("fixed") or {}
    if fixed.get("rho_init") is None or "rho_lr" in fixed:
        return ""
    return f"ρ₀ = {fixed['rho_init']:g}, one learning rate for μ and ρ".replace("-", "−")


def answer(paper_rec, adam_rec, sigma_fixed=False):
    """The notebook's answer test by test, every number from the summaries (``plain_answer``
    says it in words first): the table of ``answer_rows`` (each cell: a − b in pp, its adjusted
    95% interval, seeds, Holm p: verdict). The warm start's controls and whether any scale
    mixture reaches the paper's test error are said once, in the takeaways. Terms are defined
    in the cells above it. '' when no width has both recipes."""
    ep, ea = effects(paper_rec), effects(adam_rec)
    W = _width_with_both(ep, ea)
    if W is None:
        return ""
    head, rows = answer_rows(paper_rec, adam_rec, sigma_fixed)
    return ("**The answer, test by test** (pp; m, [interval], Holm p: as defined above):\n\n"
            + _md_table(head, rows))


def seeds_words(paper_rec, adam_rec):
    """What the seeds mean for the intervals, from the summaries' rows (the most seeds any
    method has at a width): each width with fewer seeds than its recipe's most, with how many
    times as wide its adjusted intervals are at most than at the width with the most seeds (the
    same claim compared), or that one seed gives no interval. '' without rows, or when every
    width has the same seeds."""
    from .report import and_list

    def seeds(rec):
        out = {}
        for (_, W), r in story_rows(rec).items():
            out[W] = max(out.get(W, 0), len(r["test_error"]))
        return dict(sorted(out.items()))
    p, a = seeds(paper_rec), seeds(adam_rec)
    if not p or not a:
        return ""
    parts = []
    for name, d, rec in ((RECIPES["adam"], a, adam_rec), (RECIPES["paper"], p, paper_rec)):
        top = max(d.values())
        W0 = min(W for W, n in d.items() if n == top)
        eff = effects(rec)
        for W, n in d.items():
            if n >= top:
                continue
            if n < 2:
                parts.append(f"2×{W} has 1 seed under {name}: no interval")
                continue
            ratio = [(e["ci_adj"][1] - e["ci_adj"][0]) / (o["ci_adj"][1] - o["ci_adj"][0])
                     for (V, x, y), e in eff.items() if V == W and e.get("ci_adj")
                     for o in [eff.get((W0, x, y))] if o and o.get("ci_adj")]
            m = DECLARED_M["orderings"]
            q = 1 - ALPHA / (2 * m)
            alone = (stats.t_ppf(q, n - 1) / stats.t_ppf(q, top - 1)) * (top / n) ** 0.5
            parts.append(f"2×{W} has {n} seeds with the {name}" + (
                f", against {top} at 2×{W0}: intervals about {alone:.1f} times as wide from "
                f"the seed count alone (m = {m})" + (
                    f", up to {max(ratio):.0f} times with its larger seed-to-seed spread"
                    if max(ratio) > 1.1 * alone else "")
                if ratio else ""))
    text = "; ".join(parts)
    return f"**Seeds.** {text[:1].upper()}{text[1:]}." if parts else ""


def sgd_vs_paper_words(paper_rec, adam_rec):
    """Our plain SGD against the paper's Table 1 SGD: the Adam recipe's mean minus the paper's
    value at every width, with the interval of our mean, whether that is more than half the
    paper's margin of the scale mixture over SGD at every width, and the paper protocol's SGD
    and dropout against the paper's at the widths where they have two seeds or more (the
    intervals Figure 2's takeaway points to). '' without the Adam recipe's SGD."""
    sgd = [(V, vs_paper(adam_rec, "sgd", V)) for V in sorted({w for _, w in story_rows(adam_rec)})]
    sgd = [(V, v) for V, v in sgd if v and v["ci"]]
    if not sgd:
        return ""
    below = [V for V, v in sgd if v["ci"][1] < 0]
    margin = {V: paper_difference("bbb_mixture", "sgd", V) for V, _ in sgd}
    most = all(margin[V] is not None and v["diff"] < 0.5 * margin[V] for V, v in sgd)
    text = ("**" + ("The paper's plain-network baseline was weak" if len(below) == len(sgd)
                    else "Our plain network against the paper's") + ".** The Adam recipe's "
            "plain network minus the paper's, with the unadjusted 95% interval of our mean: " + "; ".join(f"{_vs_paper_words(v)} at 2×{V}" for V, v in sgd) + ".")
    if most:
        text += (" Each is more than half the paper's margin of the scale mixture over it.")
    mix = [(V, vs_paper(adam_rec, "bbb_mixture", V)) for V, _ in sgd]
    mix = [(V, v) for V, v in mix if v and v["ci"]]
    if mix:
        text += (" Our scale mixture minus the paper's, again unadjusted: "
                 + "; ".join(f"{_vs_paper_words(v)} at 2×{V}" for V, v in mix) + ".")
    from .report import and_list
    for V in sorted({w for _, w in story_rows(paper_rec)}):
        own = [(k, vs_paper(paper_rec, k, V)) for k in ("sgd", "dropout", "bbb_mixture")]
        own = [(k, v) for k, v in own if v and v["ci"]]
        if own:
            text += (" Trained as the paper says, our " + and_list(
                [{"bbb_mixture": "scale mixture"}.get(k, TABLE_LABELS[k]) for k, _ in own])
                     + (" is " if len(own) == 1 else " are ")
                     + and_list([_vs_paper_words(v) for _, v in own])
                     + f" from the paper's at 2×{V}.")
    return text


def _word(e):
    """The verdict word of a resolved effect: an ordering *holds* or is *reversed*; a control
    has no paper ordering, so BBB is *lower* or *higher* than it."""
    if e["family"] == "controls":
        return "lower" if e["diff"] < 0 else "higher"
    return e["verdict"]


def _headline(ea, W, said=False):
    """The takeaway's headline effect: ': at 2×W the Adam recipe's mixture − plain network is d
    pp [adjusted interval], which excludes (or contains) the paper's difference', then each other
    width whose adjusted interval contains both 0 and the paper's difference, with its seeds and
    interval (it cannot tell); '' without that effect's interval. ``said``: whether the paper's
    difference lies outside is said before it (the clause is then left out)."""
    from .report import and_list
    e = ea.get((W, "bbb_mixture", "sgd")) if W is not None else None
    if not e or not e.get("ci_adj"):
        return ""
    out = excluded(e)[1]
    text = (f": at 2×{W} mixture − plain network is {_pp(e['diff'])} pp {_ci_pp(e['ci_adj'])}"
            + ("" if out is None or said else f", which {'excludes' if out else 'contains'} the "
               f"paper's {_pp(e['paper'])} pp"))
    few = [(V, o) for (V, x, y), o in sorted(ea.items()) if (x, y) == ("bbb_mixture", "sgd")
           and V != W and o.get("ci_adj") and o["paper"] is not None
           and excluded(o) == (False, False)]
    if few:
        text += ("; " + and_list([f"2×{V} ({o['n']} seeds, {_ci_pp(o['ci_adj'])})"
                                  for V, o in few]) + " cannot tell")
    return text


def _plain_ci(e, key="ci_adj", label="adjusted 95 % interval"):
    """'d pp (adjusted 95 % interval lo to hi)' in words, for the plain answer (``key``
    'ci_adj': adjusted for the family's m claims; the label says so)."""
    lo, hi = _ci_pp(e[key]).strip("[]").split(", ")
    return f"{_pp(e['diff'])} pp ({label} {lo} to {hi})"


def paper_excluded(rec):
    """{paper width: (how many of the paper's Table 1 differences its adjusted 95% intervals
    exclude, how many have an interval and a paper value)} for summary ``rec``."""
    out = {}
    for (W, a, b), e in sorted(effects(rec).items()):
        out_ = excluded(e)[1]
        if out_ is None:
            continue
        k, n = out.get(W, (0, 0))
        out[W] = (k + bool(out_), n + 1)
    return out


_NUM = {1: "one", 2: "two", 3: "three", 4: "four"}


def widths_exceptions(rec, widths=None):
    """['at 2×W the paper's mixture − dropout, d pp, lies inside its interval adjusted for the m
    widths, lo to hi'] for each effect of summary ``rec`` (at ``widths``, default all) whose
    per-width interval (``ci_adj``) excludes the paper's difference while its interval adjusted
    for the widths (``ci_widths``: mixture − dropout) holds it: 'outside our interval' is then
    true of the per-width interval only."""
    out = []
    for (W, a, b), e in sorted(effects(rec).items()):
        cw, p = e.get("ci_widths"), e.get("paper")
        if (widths is not None and W not in widths) or not cw or p is None \
                or excluded(e)[1] is not True or not cw[0] <= p <= cw[1]:
            continue
        name = next((w for x, y, w in ANSWER_CLAIMS if (x, y) == (a, b)), f"{a} − {b}")
        lo, hi = _ci_pp(cw).strip("[]").split(", ")
        out.append(f"at 2×{W} the paper's {name}, {_pp(p)} pp, lies inside its interval "
                   f"adjusted for the {_NUM.get(e['m_widths'], e['m_widths'])} widths, {lo} to {hi}")
    return out


def _exception_of(rec, W, a, b):
    """Whether a − b at width ``W`` of summary ``rec`` is a ``widths_exceptions`` case: its
    per-width interval excludes the paper's difference, its interval over the widths holds it."""
    e = effects(rec).get((W, a, b)) or {}
    cw, p = e.get("ci_widths"), e.get("paper")
    return bool(cw and p is not None and excluded(e)[1] is True and cw[0] <= p <= cw[1])


def _excluded_split(rec):
    """(``paper_excluded``, seeds per width, the widths whose intervals exclude every paper
    difference, the widths where only some do) for ``excluded_words``/``excluded_sentences``."""
    ex = paper_excluded(rec)
    if not ex:
        return ex, {}, [], []
    n_seeds = {W: max(e["n"] for (V, _, _), e in effects(rec).items() if V == W) for W in ex}
    return (ex, n_seeds, [W for W, (k, n) in ex.items() if k == n],
            [W for W, (k, n) in ex.items() if k < n])


def excluded_words(rec):
    """'at 2×400 and 2×1200 each of the paper's four differences lies outside our per-width
    interval (…: ``widths_exceptions``); 2×800 (3 seeds) cannot tell' from ``paper_excluded``;
    '' without intervals."""
    from .report import and_list
    ex, n_seeds, every, some = _excluded_split(rec)
    if not ex:
        return ""
    num = {1: "one", 2: "two", 3: "three", 4: "four"}
    parts = []
    if every:
        ns = {ex[W][1] for W in every}
        but = widths_exceptions(rec, every)
        parts.append(f"at {and_list([f'2×{W}' for W in every])} our per-width intervals "
                     + (f"exclude each of the paper's {num.get(ns.pop(), 'its')} differences"
                        if len(ns) == 1 else "exclude each of the paper's differences")
                     + (f" (but {and_list(but)})" if but else ""))
    if some:
        parts.append(and_list([f"2×{W} ({n_seeds[W]} seeds; {ex[W][0]} of {ex[W][1]} outside)"
                               for W in some]) + " cannot tell")
    return "; ".join(parts)


def excluded_sentences(rec):
    """The plain answer's reading of ``paper_excluded``, in short sentences: 'At 2×400 and
    2×1200 our per-width intervals exclude each of the paper's four differences. At 2×800,
    with 3 seeds, they cannot tell (1 of 4 excluded).' (the widths exception, where an interval
    adjusted for the widths holds the paper's value, is the answer table's note); '' without
    intervals."""
    from .report import and_list
    ex, n_seeds, every, some = _excluded_split(rec)
    if not ex:
        return ""
    out = []
    if every:
        ns = {ex[W][1] for W in every}
        four = ns == {len(FAMILY) + 1}  # the orderings and mixture − dropout
        out.append(f"At {and_list([f'2×{W}' for W in every])} "
                   + (f"each of the paper's {_NUM.get(ns.pop(), 'its')} differences"
                      if len(ns) == 1 else "each of the paper's differences")
                   + (", its three orderings and mixture − dropout," if four else "")
                   + " lies outside our interval at that width"
                   + "".join(f"; but {x}" for x in widths_exceptions(rec, every)) + ".")
    for W in some:
        out.append(f"At 2×{W}, with {n_seeds[W]} seeds, our intervals cannot tell ({ex[W][0]} of "
                   f"{ex[W][1]} excluded).")
    return " ".join(out)


def _paper_protocol_clause(paper_rec):
    """With σ fixed under the paper's protocol: its comparisons with BBB get no verdict (counted
    as section 2's table shows them: the orderings and mixture − dropout, wherever an interval
    exists), and each ordering without BBB that Holm resolves is stated with its interval and
    whether the paper's difference lies inside it."""
    from .report import and_list
    ep = effects(paper_rec)
    bbb = [e for (W, a, b), e in ep.items() if e["family"] in ("orderings", "comparable")
           and "bbb" in a + b and e.get("ci_adj")]
    held = [(W, a, b, e) for (W, a, b), e in sorted(ep.items()) if e["family"] == "orderings"
            and "bbb" not in a + b and e["p_holm"] is not None and e["p_holm"] < ALPHA]
    where = paper_rerun_words()
    text = ("\n- Under the paper's protocol as we filled it in (plain SGD, 600 epochs), "
            "BBB's σ (each weight's posterior spread) did not learn "
            + (f"{where[:-1]}; the 600-epoch runs recorded no σ: section 3 extrapolates)"
               if where else "(section 3)"))
    n = len({(a, b) for (W, a, b), e in ep.items() if e in bbb})
    if n:
        text += (f", so its {_NUM.get(n, n)} comparisons with BBB (section 2's table) get no "
                 "verdict")
    if held:
        name = {(x, y): w for x, y, w in ANSWER_CLAIMS}
        said = and_list(
            [f"{name.get((a, b), f'{a} − {b}')} "
             f"{'holds' if e['verdict'] == 'holds' else 'is reversed'}"
             f" at 2×{W}: {_plain_ci(e)}"
             + ("" if excluded(e)[1] is None else
                f"; the paper's {_pp(e['paper'])} pp lies "
                f"{'outside' if excluded(e)[1] else 'inside'}")
             for W, a, b, e in held])
        text += ". " + said[:1].upper() + said[1:]
    return text + "."


def plain_answer(paper_rec, adam_rec, sigma_fixed=False):
    """The answer in plain words, no test names or verdict words, every number from the
    summaries: one bold sentence that carries it (whether the Adam recipe's scale mixture is
    measurably better than the plain network, Holm at any width; whether none of the paper's
    orderings holds; its difference at the answer's width against the paper's), then at most
    three short bullets: (1) how far the Adam recipe's plain network lies below the paper's and
    its mixture above the paper's mixture, and whether BBB is shown as good as dropout; (2)
    which of the paper's Table 1 differences the per-width intervals exclude, by width
    (``excluded_sentences``); (3) with ``sigma_fixed``, that the paper's protocol gives its BBB
    comparisons no verdict, and the orderings without BBB that hold there
    (``_paper_protocol_clause``). The prior/start confound of mixture − Gaussian is named in the
    answer's table (``confound_words``). '' when no width has both recipes."""
    from .report import and_list
    ep, ea = effects(paper_rec), effects(adam_rec)
    W = _width_with_both(ep, ea)
    if W is None or not (ea.get((W, "bbb_mixture", "sgd")) or {}).get("ci_adj"):
        return ""
    e = ea[(W, "bbb_mixture", "sgd")]
    better = [V for (V, x, y), o in sorted(ea.items()) if (x, y) == ("bbb_mixture", "sgd")
              and o["p_holm"] is not None and o["p_holm"] < ALPHA and o["diff"] < 0]
    out = excluded(e)[1]
    ex = excluded_sentences(adam_rec)
    none = ex and not any(o["family"] == "orderings" and o["p_holm"] is not None
                          and o["p_holm"] < ALPHA and o["verdict"] == "holds" for o in ea.values())
    lo, hi = _ci_pp(e["ci_adj"]).strip("[]").split(", ")
    n_ord = len(FAMILY)
    text = ("**In short: trained with Adam (settings searched on validation), BBB with the scale "
            "mixture prior (means warm-started from a trained plain network) is "
            + (f"better than a plain network at {and_list([f'2×{V}' for V in better])}"
               if better else "not measurably better than a plain network")
            + f": at 2×{W} (two hidden layers of {W} units) its test error is {_pp(e['diff'])} "
            "percentage points (pp) from the plain network's (95 % interval "
            f"{lo} to {hi}, adjusted for {_NUM.get(e['m'], e['m'])} claims)"
            + ("" if out is None else ", which rules out" if out else ", which still allows")
            + ("" if out is None else f" the paper's {_pp(e['paper'])} pp") + "."
            + (f" With Adam, none of the paper's {_NUM.get(n_ord, n_ord)} orderings (mixture "
               "below plain network and below Gaussian prior, dropout below plain network) holds "
               "at any width." if none else "") + "**\n")
    said = []
    sgd = [dict(v, W=V) for V in sorted({w for _, w in story_rows(adam_rec)})
           for v in [vs_paper(adam_rec, "sgd", V)] if v and v["ci"]]
    if sgd and all(v["ci"][1] < 0 for v in sgd):
        d = sorted(-100 * v["diff"] for v in sgd)
        mix = [vs_paper(adam_rec, "bbb_mixture", v["W"]) for v in sgd]
        m = sorted(100 * x["diff"] for x in mix if x)
        span = lambda x: f"{x[0]:.2f}" + ("" if f"{x[0]:.2f}" == f"{x[-1]:.2f}" else f"–{x[-1]:.2f}")  # noqa: E731
        said.append(f"Our Adam-trained plain network is {span(d)} pp better than the paper's"
                    + (f"; our mixture is {span(m)} pp worse than the paper's mixture"
                       if m and m[0] > 0 else "") + ".")
    md = sorted((V, o) for (V, x, y), o in ea.items() if (x, y) == ("bbb_mixture", "dropout")
                and o.get("ci_adj"))
    if md and all(o["verdict"] == "comparable" for _, o in md):
        said.append(f"BBB is as good as dropout, within ±{100 * STORY_MARGIN:g} pp at every width.")
    elif md:
        said.append(f"BBB is not shown to be as good as dropout (within ±{100 * STORY_MARGIN:g} "
                    "pp) at any width.")
    if said:
        text += "\n- " + " ".join(said)
    if ex:
        text += "\n- " + ex.replace(" at that width", " at that width (*How to read*, "
                                     "below)", 1)
    if sigma_fixed:
        text += _paper_protocol_clause(paper_rec)
    return text


def _tails(runs, far=0.1):
    """{method: share of its network's weights (BBB: one sample) beyond ±``far``, the mass
    beyond the histogram's range included} of run records ``runs``."""
    out = {}
    for key, r in runs.items():
        if not r:
            continue
        h = r["metrics"]["weight_histogram"]
        width = (h["hi"] - h["lo"]) / h["bins"]
        out[key] = (sum(c for i, c in enumerate(h["counts"])
                        if abs(h["lo"] + (i + 0.5) * width) > far) + h["outside"]) / h["total"]
    return out


def _figure3_takeaway(panels, far=0.1, untested=()):
    """The Figure 3 takeaway from ``panels`` ([(recipe, runs)]): which BBB samples have wider
    tails beyond ±``far`` than both the plain network and dropout, with the shares; '' without
    panels. ``untested``: recipes whose BBB's σ did not learn, left out (and named)."""
    from .report import and_list
    wider, told = [], []
    skip = [name for name, _ in panels or [] if name in untested]
    for name, runs in panels or []:
        if name in untested:
            continue
        t = _tails(runs, far)
        base = [t[k] for k in ("sgd", "dropout") if k in t]
        if not base:
            continue
        for k in ("bbb_gaussian", "bbb_mixture"):
            if k in t and t[k] > max(base):
                wider.append(f"the {name}'s {TABLE_LABELS[k]}")
                told.append(f"{100 * t[k]:.2f}% of its sample beyond ±{far:g} against "
                            f"{100 * max(base):.2f}% at most for the plain network and dropout")
    if not panels:
        return ""
    if not wider:
        return (f"- **Figure 3's wider BBB weights do not appear**: no BBB sample has more of "
                f"its weights beyond ±{far:g} than the plain network or dropout (section 5).")
    return (f"- **Figure 3's wider BBB weights appear only for {and_list(wider)}**: "
            + "; ".join(told) + " (one network each, section 5"
            + (f"; {and_list(skip)} left out: its σ did not learn" if skip else "") + ").")


def _predictor_takeaway(groups):
    """The section 6 takeaway from ``groups`` (as ``predictor_summary``): μ against the average
    of sampled networks on test, the range of μ − average with how many intervals lie below 0,
    and how often validation chose μ; '' without runs."""
    d = _predictor_diffs(groups)
    if not d:
        return ""
    diffs = [x for x, _ in d]
    below = sum(ci is not None and ci[1] < 0 for _, ci in d)
    lead = ("Averaging sampled networks was worse on test than BBB's mean network μ"
            if max(diffs) < 0 else "Averaging sampled networks was not better than μ throughout")
    span = (_pp(min(diffs)) if _pp(min(diffs)) == _pp(max(diffs)) else
            f"{_pp(min(diffs))} to {_pp(max(diffs))}")
    return (f"- **{lead}**: μ − average is {span} pp over section 6's {len(d)} rows, "
            f"below 0 in {below} intervals" + ("; the samples' noise costs more than averaging "
                                               "10 of them recovers" if max(diffs) < 0 and below else "")
            + ".")


def _figure2_takeaway(paper_rec, sigma_fixed=False):
    """Figure 2's takeaway: where the paper's protocol has intervals, the plain network's and
    dropout's final test errors against the paper's (inside or outside the interval of our
    mean); with ``sigma_fixed``, that its BBB curves test nothing. '' without those rows."""
    from .report import and_list
    got = [(k, V, vs_paper(paper_rec, k, V)) for V in sorted({w for _, w in story_rows(paper_rec)})
           for k in ("sgd", "dropout")]
    got = [(k, V, v) for k, V, v in got if v and v["ci"]]
    if not got:
        return ""
    inside = [v["ci"][0] <= 0 <= v["ci"][1] for _, _, v in got]
    lead = ("the plain network and dropout end at the paper's levels" if all(inside) else
            "the plain network and dropout against the paper's levels")
    top = max((V for _, V in story_rows(paper_rec)), default=None)
    one = [vs_paper(paper_rec, k, top) for k in ("sgd", "dropout")]
    fig = (f"at 2×{top} (the paper's Figure 2; "
           f"{'one seed' if one[0]['n'] == 1 else str(one[0]['n']) + ' seeds'}, no interval) "
           + and_list([f"{100 * v['mean']:.2f}%" for v in one]) + " against "
           + and_list([f"{100 * v['paper']:.2f}%" for v in one]) + "; " if all(one) and not any(v["ci"] for v in one)
           and top not in {V for _, V, _ in got} else "")
    at = and_list(sorted({f"2×{V}" for _, V, _ in got}))
    nums = ("at " + at if fig else  # the numbers are section 2's: the widths alone
            and_list([f"{100 * v['mean']:.2f}%" for _, _, v in got]) + " against "
            + and_list([f"{100 * v['paper']:.2f}%" for _, _, v in got])
            + (" at " + at if len({V for _, V, _ in got}) == 1 else ""))
    return (f"- **Under the paper's protocol, {lead}**: " + fig + nums
            + (", each inside our interval" if all(inside) else ", not every one inside our "
               "interval") + " (section 2)" + ("; Figure 2's BBB curves test nothing, as σ did "
                                               "not learn (section 4)" if sigma_fixed else "") + ".")


def _predictor_diffs(groups):
    """[(mean of μ − average in test error, its 95% interval or None)] per method (the
    random-start control included) and width."""
    out = []
    for _, _, _, x in _rule_runs(groups):
        d = stats.paired_t([v["test_error_mean_weights"] for v in x],
                           [v["test_error_ensemble"] for v in x])
        out.append((d["mean_diff"], d["ci"]))
    return out


def _sigma_takeaway(paper_rec, W, diag=None):
    """The paper-protocol takeaway: σ did not learn, with the rerun's numbers (``diag``) and
    the extrapolation to the runs' epochs, and what its scale mixture's Table 1 number then
    describes (its mean against the paper's, and its rank among the four methods at ``W``)."""
    from . import posterior_diagnostics as PD
    epochs = max((r.get("epochs") or 0 for r in (paper_rec or {}).get("rows", [])), default=0)
    x = PD.extrapolated(diag, epochs) if diag and epochs else None
    how = ("σ shifted uniformly and did not learn (section 3)" if x is None else
           "σ shifted uniformly and did not learn: "
           f"its 95th percentile went from {x['s0']:.4f} to {x['s_n']:.4f} in {x['n']} "
           "epochs (section 3)")
    mix = vs_paper(paper_rec, "bbb_mixture", W) if W is not None else None
    means = {k: stats.mean_ci(r["test_error"])["mean"] for (k, V), r in story_rows(paper_rec).items()
             if V == W and k in METHODS}
    worst = bool(mix) and len(means) == len(METHODS) and max(means, key=means.get) == "bbb_mixture"
    what = ("" if not mix else f" (its scale mixture: {100 * mix['mean']:.2f}% at 2×{W}, "
            + ("the worst of the four, " if worst else "") + f"the paper's {100 * mix['paper']:.2f}%)")
    return ("- **The paper's protocol, as run here, does not test a learned posterior**: " + how
            + f", so its BBB numbers{what} do not describe BBB with a learned σ; for BBB that "
            "half of the question is open.")


def takeaways(paper_rec, adam_rec, sigma_fixed=False, groups=None, panels=None, diag=None,
              answered=False):
    """Markdown bullets, each with its number and interval and where it is shown, the Adam
    recipe's first: (a) which of the paper's differences the intervals exclude
    (``excluded_words``) and whether any width resolves the Adam recipe's BBB below the plain
    network or below it with extended training (``_headline``, and the control at the answer's
    width); (b) mixture − dropout at the answer's width and where its interval excludes 0 (with
    the interval adjusted for the widths); (c) the Adam recipe's plain network against the
    paper's, when below it at every width; (d) dropout − plain network under both recipes
    (``_baseline_takeaway``); (e) the scale mixture against the paper's test error
    (``_reach_takeaway``); (f) the warm start (``_warm_takeaway``); (g) section 6 (``groups``,
    as ``predictor_summary``); (h) Figure 3 (``panels``); (i) the paper's protocol: with
    ``sigma_fixed`` (the diagnostics found that σ did not learn) what its runs test
    (``_sigma_takeaway``, ``diag``: the diagnostics), else whether its scale mixture is worse
    than the paper reports and than the Gaussian prior. ``answered``: the notebook's first
    screen (``plain_answer``, ``answer``) already says (a), (b), (c) and (i); they are left out
    and one line points to that answer, so each finding is said once."""
    from .report import and_list
    ep, ea = effects(paper_rec), effects(adam_rec)
    W = _width_with_both(ep, ea)
    out = []
    if answered:
        out = ["Beyond the answer at the top:\n"]
        for line in (_warm_takeaway(adam_rec), _figure2_takeaway(paper_rec),  # σ: the top's
                     _predictor_takeaway(groups)):  # Figure 3's finding: section 5 says it once
            if line:
                out.append(line)
        return "\n".join(out)
    res = [e for (V, a, b), e in ea.items() if b in ("sgd", "sgd_continued") and a == "bbb_mixture"
           and e["p_holm"] is not None and e["p_holm"] < ALPHA and e["diff"] < 0]
    if ea:
        ctl = ea.get((W, "bbb_mixture", "sgd_continued"))
        ctl = (f"; against the plain network with extended training, {_pp(ctl['diff'])} pp "
               f"{_ci_pp(ctl['ci_adj'])}" if ctl and ctl.get("ci_adj") else "")
        every = [V for V, (k, n) in paper_excluded(adam_rec).items() if k == n]
        ex = (f": at {and_list([f'2×{V}' for V in every])} our per-width intervals exclude "
              "all the paper's differences;" if every else ":")
        out.append("- **With a modern recipe, " + ("BBB is resolved below neither the plain "
                   "network nor its extended-training control at any width**"
                   if not res else "BBB is resolved below the plain network or its control at "
                   "some width**") + ex + _headline(ea, W, W in every)[1:] + ctl + " (answer; section 2).")
    md = sorted((V, o) for (V, x, y), o in ea.items() if (x, y) == ("bbb_mixture", "dropout")
                and o.get("ci_adj") and (V == W or comparable_side(o)))
    if md:
        said = [f"{_pp(o['diff'])} pp {_ci_pp(o['ci_adj'])} at 2×{V}"
                + (f", {comparable_side(o)} at that width alone" if comparable_side(o) else "")
                + (f" ({widths_reading(o)})" if widths_reading(o) else "") for V, o in md]
        same = all(o["verdict"] == "comparable" for _, o in md)
        out.append("- **BBB is " + ("as good as dropout" if same else "not shown to be as good "
                   "as dropout") + "**: mixture − dropout is " + and_list(said)
                   + " (answer; section 2).")
    sgd = [(V, vs_paper(adam_rec, "sgd", V)) for V in sorted({w for _, w in story_rows(adam_rec)})]
    sgd = [(V, v) for V, v in sgd if v and v["ci"]]
    if sgd and all(v["ci"][1] < 0 for _, v in sgd):
        d = sorted(100 * v["diff"] for _, v in sgd)
        brief = _reach_takeaway(paper_rec, adam_rec, bool(sigma_fixed), brief=True)
        brief = brief if brief.startswith("its") else ""
        out.append("- **The paper's margin was measured against a weak baseline**: the Adam "
                   "recipe's plain network minus the paper's is "
                   + f"{d[-1]:+.2f} to {d[0]:+.2f}".replace("-", "−")
                   + " pp over the widths, every interval below 0"
                   + (f", while {brief}" if brief else "") + " (section 2).")
    else:
        brief = ""
    for line in ("" if brief else _reach_takeaway(paper_rec, adam_rec, bool(sigma_fixed)),
                 _warm_takeaway(adam_rec), _figure2_takeaway(paper_rec, bool(sigma_fixed)),
                 _predictor_takeaway(groups),
                 _figure3_takeaway(panels, untested=[RECIPES["paper"]] if sigma_fixed else ())):
        if line:
            out.append(line)
    if W is not None:
        mix = vs_paper(paper_rec, "bbb_mixture", W)
        worse = bool(mix and mix["ci"]) and mix["ci"][0] > 0
        g = ep.get((W, "bbb_mixture", "bbb_gaussian"))
        rev = bool(g and g["p_holm"] is not None and g["p_holm"] < ALPHA and g["diff"] > 0)
        what = [w for w, x in (("than the paper reports", worse),
                               ("than the Gaussian prior, reversing the paper's ordering", rev))
                if x]
        if sigma_fixed:  # its numbers are μ with fixed noise: no finding about BBB
            out.append(_sigma_takeaway(paper_rec, W, diag))
        elif what:
            out.append("- **The paper's protocol, as run here**: its scale mixture is worse "
                       + " and ".join(what) + " (section 3).")
    return "\n".join(out)


def _baseline_takeaway(ep, ea):
    """dropout − plain network where the paper's protocol resolves it (Holm) beside the Adam
    recipe's at the same width: a strong baseline shrinks every regulariser's gain, not only
    BBB's. '' when the paper's protocol resolves it at no width."""
    for (W, a, b), e in sorted(ep.items()):
        o = ea.get((W, a, b))
        if ((a, b) != ("dropout", "sgd") or e["p_holm"] is None or e["p_holm"] >= ALPHA
                or not o or not o.get("ci_adj")):
            continue
        out = excluded(o)[1]
        return ("; dropout's gain is smaller against the stronger baseline too: dropout − plain network, "
                f"{_pp(e['diff'])} pp {_ci_pp(e['ci_adj'])} at 2×{W} under the paper's protocol "
                f"(*{_word(e)}*, section 2), is {_pp(o['diff'])} pp {_ci_pp(o['ci_adj'])} with "
                "the Adam recipe (two protocols, not tested against each other)"
                + ("" if out is None else f", {'excluding' if out else 'holding'} the "
                   f"paper's {_pp(o['paper'])} pp"))
    return ""


def _reach_takeaway(paper_rec, adam_rec, sigma_fixed=False, brief=False):
    """Whether any recipe's scale mixture reaches the paper's test error: the range of ours
    against the paper's, and whether every interval of our mean lies above it (the one-seed
    rows, which have none, named). ``sigma_fixed``: the paper protocol's BBB did not learn σ,
    so only the Adam recipe's runs are read (and the bullet says so). ``brief``: the finding as
    a clause, 'its scale mixture never reaches the paper's test error (…)', for the
    weak-baseline bullet."""
    from .report import and_list
    recs = ((RECIPES["adam"], adam_rec),) if sigma_fixed else (
        (RECIPES["paper"], paper_rec), (RECIPES["adam"], adam_rec))
    mix = [(name, V, vs_paper(rec, "bbb_mixture", V))
           for name, rec in recs for V in sorted({w for _, w in story_rows(rec)})]
    mix = [(name, V, v) for name, V, v in mix if v]
    if not mix:
        return ""
    papers = sorted({v["paper"] for _, _, v in mix})
    ours = [v["mean"] for _, _, v in mix]
    reach = [v for _, _, v in mix if (v["ci"][0] if v["ci"] else v["diff"]) <= 0]
    if reach:
        return ""
    bare = [f"the {'one' if v['n'] == 1 else v['n']}-seed 2×{V} run of {name}"
            for name, V, v in mix if not v["ci"]]
    if brief and not bare:
        return (f"its scale mixture never reaches the paper's test error ({100 * min(ours):.2f}–"
                f"{100 * max(ours):.2f}% against {100 * papers[0]:.2f}–{100 * papers[-1]:.2f}%, "
                "every interval above it)")
    return ("- **Our scale mixture never reaches the paper's test error "
            + ("with the Adam recipe**: " if sigma_fixed else "under either recipe**: ")
            + 
            f"{100 * min(ours):.2f}–{100 * max(ours):.2f}% against "
            f"{100 * papers[0]:.2f}–{100 * papers[-1]:.2f}%, every interval of our mean above "
            "the paper's value" + (f" ({and_list(bare)} has none; section 2)." if bare
                                   else " (section 2)."))


def _warm_takeaway(adam_rec):
    """The Adam recipe's scale mixture from a random start against the plain network, at the
    widths where it is worse: BBB's Adam numbers rest on the warm start. The widths where warm −
    random start is resolved are named, their intervals left to section 2 (reader r18: not
    repeated). '' otherwise."""
    from .report import and_list
    rows = story_rows(adam_rec)
    mean = {k: stats.mean_ci(r["test_error"])["mean"] for k, r in rows.items()}
    worse = [W for (k, W) in sorted(rows) if k == "bbb_random_start"
             and ("sgd", W) in mean and mean[(k, W)] > mean[("sgd", W)]]
    if not worse:
        return ""
    lower = [(W, e) for (W, a, b), e in sorted(effects(adam_rec).items())
             if (a, b) == ("bbb_mixture", "bbb_random_start") and e["p_holm"] is not None
             and e["p_holm"] < ALPHA and e["diff"] < 0]
    rest = [(W, e) for (W, a, b), e in sorted(effects(adam_rec).items())
            if (a, b) == ("bbb_mixture", "bbb_random_start") and e.get("ci_adj")
            and W not in [V for V, _ in lower]]
    return ("- **The warm start helps BBB's Adam numbers**"
            + (": warm − random start is lower at "  # its intervals: section 2's table
               + and_list([f"2×{W}" for W, _ in lower]) + (" only" if rest else "")
               + " (section 2)" if lower else "")
            + "; from a random start the scale mixture's mean error is above the plain "
            "network's: " + and_list([f"{100 * mean[('bbb_random_start', W)]:.2f}% against "
                                      f"{100 * mean[('sgd', W)]:.2f}% at 2×{W}" for W in worse])
            + " (means, not tested).")


def figure3_runs(runs, panels=None, untested=()):
    """The paper's Figure 3 from run records ``runs`` ({method: record}, one network each; BBB:
    one sample w ~ q): the density of the weights on a log axis over the records' whole
    histogram range, each method's share of weights beyond that range in its legend entry.
    ``panels``: [(title, runs)] instead, one panel each side by side on shared axes;
    ``untested``: the titles of panels whose BBB's σ did not learn (their title says that they
    are not a test of BBB)."""
    import matplotlib.pyplot as plt
    panels = panels or [(None, runs)]
    fig, axes = plt.subplots(1, len(panels) + 1, figsize=(7.0 * len(panels) + 4.2, 4.6),
                             squeeze=False, gridspec_kw={"width_ratios": [1] * len(panels) + [0.5]})
    for ax in axes[0][1:len(panels)]:
        ax.sharey(axes[0][0])
    for ax, (title, rs) in zip(axes[0], panels):
        lo = hi = None
        for key in METHODS:
            r = rs.get(key)
            if not r:
                continue
            h = r["metrics"]["weight_histogram"]
            width = (h["hi"] - h["lo"]) / h["bins"]
            centres = [h["lo"] + (i + 0.5) * width for i in range(h["bins"])]
            dens = [c / (h["total"] * width) for c in h["counts"]]
            lo, hi = h["lo"], h["hi"]
            ax.step(centres, dens, where="mid", c=OKABE_ITO[key], lw=1.1,
                    label=TABLE_LABELS[key])
        if lo is not None:
            ax.set_xlim(lo, hi)
        ax.set_yscale("log")
        ax.set_xlabel("weight value")
        seeds = sorted({r["config"]["seed"] for r in rs.values() if r})
        Hs = "/".join(str(H) for H in sorted({r["config"]["H"] for r in rs.values() if r}))
        head = (f"{title}" + (f"\n({untested_words()})" if title in untested else "") + "\n"
                if title else "")
        ax.set_title(f"{head}2×{Hs}, seed {', '.join(map(str, seeds))} "
                     "(BBB: one sample w ~ q, not its predictor μ)", fontsize=10)
        ax.legend(fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.16), ncol=2)
        ax.set_ylabel("density per unit weight (log scale),\nnormalised over the whole sample",
                      fontsize=9)
        for key in METHODS:  # a sample with much of its mass beyond the range: said in the panel
            h = (rs.get(key) or {}).get("metrics", {}).get("weight_histogram")
            if h and h["outside"] / h["total"] >= 0.01:
                ax.text(0.02, 0.97, f"{TABLE_LABELS[key]}:\n{_share(h['outside'] / h['total'])}% "
                        f"of the sample lies beyond ±{h['hi']:g},\nwhere the run records no "
                        "histogram\n(right-hand panel)", transform=ax.transAxes, ha="left",
                        va="top", fontsize=7.5, color=OKABE_ITO[key],
                        bbox=dict(fc="white", ec=OKABE_ITO[key], lw=0.8))
    _beyond_panel(axes[0][-1], panels)
    fig.tight_layout()
    return fig


def _beyond_panel(ax, panels):
    """Figure 3's last panel: each network's share of weights beyond its histogram's range (the
    mass the density panels cannot draw), a bar per recipe and method on a log axis in
    percent (so that shares of a thousandth of a percent show beside tens of percent; the axis
    ends at 100 %), its value written beside it; a share below 0.001 % (written "< 0.001%") is an
    upper bound, drawn as a left-pointing marker at 0.001 %, not as a bar."""
    labels, vals, cols, lim = [], [], [], None
    for title, rs in panels:
        for key in METHODS:
            r = rs.get(key)
            if not r:
                continue
            h = r["metrics"]["weight_histogram"]
            lim = h["hi"]
            labels.append(f"{TABLE_LABELS[key]}\n({title})" if title else TABLE_LABELS[key])
            vals.append(100 * h["outside"] / h["total"])
            cols.append(OKABE_ITO[key])
    y = list(range(len(vals)))
    floor = 0.001  # a share shown as "< 0.001%": an upper bound, not a value
    bound = [0 < v < floor for v in vals]
    drawn = [floor if b else v for v, b in zip(vals, bound)]
    ax.barh(y, [0 if b else v for v, b in zip(vals, bound)], color=cols)
    for i, b, c in zip(y, bound, cols):  # an upper bound: a "<" marker at it, no bar
        if b:
            ax.plot([floor], [i], marker="<", markersize=9, color=c, linestyle="none")
    top = max(vals + [1.0])
    low = min([v for v in drawn if v > 0] + [top]) / 3  # log axis: every share > 0 visible
    for i, v, d, b in zip(y, vals, drawn, bound):  # clear of the marker where one is drawn
        ax.text(max(d, low) * (2.0 if b else 1.3), i, f"{_share(v / 100)}%", va="center",
                fontsize=9)
    ax.set_yticks(y)
    ax.set_yticklabels(labels, fontsize=9)
    ax.invert_yaxis()
    if any(v > 0 for v in vals):
        ax.set_xscale("log")
        ax.set_xlim(low, min(20 * top, 100))  # a share cannot pass 100 %
        ax.set_xlabel("share of weights (%, log scale; ◀: an upper bound)")
    else:  # nothing beyond the range: a log axis has nothing to show
        ax.set_xlim(0, 1.25 * top)
        ax.set_xlabel("share of weights (%)")
    ax.set_title(f"beyond ±{lim:g}: the mass\nthe density panels cannot draw", fontsize=10)


def _share(x):
    """A share (a fraction) in percent, two significant digits, '< 0.001' below 0.001 % (but
    0 stays 0)."""
    return "< 0.001" if 0 < 100 * x < 0.001 else f"{100 * x:.2g}"


def _dip(h):
    """(density at 0, (mode below 0, its density), (mode above 0, its density)) of histogram
    ``h`` (a run record's weight histogram)."""
    width = (h["hi"] - h["lo"]) / h["bins"]
    centres = [h["lo"] + (i + 0.5) * width for i in range(h["bins"])]
    dens = [c / (h["total"] * width) for c in h["counts"]]
    zero = min(range(len(centres)), key=lambda i: abs(centres[i]))
    left = max(range(zero), key=lambda i: dens[i])
    right = max(range(zero + 1, len(centres)), key=lambda i: dens[i])
    return dens[zero], (centres[left], dens[left]), (centres[right], dens[right])


UNTESTED = "σ did not learn: not a test of BBB"


def paper_rerun_words():
    """Where σ was measured under the paper's protocol, from its scale-mixture rerun's record
    (posterior_diagnostics): 'in a 50-epoch rerun (seed 0, 2×400)'; '' without that record.
    Its 600-epoch runs recorded no σ: what they did is extrapolated from this rerun."""
    from . import posterior_diagnostics as PD
    run = ((PD.load() or {}).get("runs") or {}).get(PD.PAPER_RUN)
    if not run:
        return ""
    c = run["config"]
    return f"in a {run['epochs']}-epoch rerun (seed {c['seed']}, 2×{c['H']})"


def untested_words():
    """A figure title's note where the paper protocol's σ did not learn: ``UNTESTED``, said as
    inferred (measured in a rerun at another width or length, ``paper_rerun_words``)."""
    run = paper_rerun_words()
    H = run.rsplit("2×", 1)[-1].rstrip(")") if run else ""
    return (f"σ did not learn (inferred: rerun at 2×{H}, extrapolated): not a test of BBB"
            if H else UNTESTED)


def weight_share_rows(runs, near=0.01, far=0.1, narrow=None, tested=True):
    """(header, rows, words): Figure 3 in numbers from run records ``runs`` ({method: record}):
    the share of each network's weights (BBB: one sample) within ±``near`` of zero, beyond
    ±``far``, and beyond the histogram's range (not drawn). ``words``: which BBB sample has
    wider tails beyond ±``far`` than both SGD and dropout; whether the scale mixture's sample
    dips at 0 between two modes, with ``narrow`` (the largest share of the means the prior's
    narrow component claims in section 3's reruns, or None) beside it; the largest share
    beyond the range. ``tested=False``: BBB's σ did not learn, so its samples are close to μ
    and no finding about the paper's Figure 3 is drawn from them."""
    lims = sorted({r["metrics"]["weight_histogram"]["hi"] for r in runs.values() if r})
    header = ["method", f"|w| < {near:g}", f"|w| > {far:g}", "beyond the plotted range"
              + (f" (±{lims[0]:g})" if len(lims) == 1 else "")]
    rows, out, tail, hists, near_share = [], {}, {}, {}, {}
    for key in METHODS:
        r = runs.get(key)
        if not r:
            continue
        h = hists[key] = r["metrics"]["weight_histogram"]
        width = (h["hi"] - h["lo"]) / h["bins"]
        centres = [h["lo"] + (i + 0.5) * width for i in range(h["bins"])]
        inside = sum(c for x, c in zip(centres, h["counts"]) if abs(x) < near) / h["total"]
        tail[key] = (sum(c for x, c in zip(centres, h["counts"]) if abs(x) > far)
                     + h["outside"]) / h["total"]
        out[key] = h["outside"] / h["total"]
        near_share[key] = inside
        rows.append([TABLE_LABELS[key], f"{100 * inside:.1f}%", f"{100 * tail[key]:.2f}%",
                     f"{_share(out[key])}%" + ("" if len(lims) == 1 else f" (beyond ±{h['hi']:g})")])
    if not out:
        return header, rows, ""
    parts = []
    base = [tail[k] for k in ("sgd", "dropout") if k in tail]
    bbb = [k for k in ("bbb_gaussian", "bbb_mixture") if k in tail]
    if base and bbb:
        wider = [TABLE_LABELS[k] for k in bbb if tail[k] > max(base)]
        b = f"(beyond ±{far:g})"
        parts.append(
            f"Only {' and '.join(wider)} has wider tails than the plain network and dropout "
            f"{b}, as in the "
            "paper's Figure 3." if len(wider) == 1 else
            f"Both BBB samples have wider tails than the plain network and dropout {b}, as in "
            "the paper's "
            "Figure 3." if wider else "Neither BBB sample has wider tails than the plain network "
            f"or dropout "
            f"{b}" + (": the spread the paper's Figure 3 shows is not here." if tested else
                      "; but σ did not learn, so a sample is close to μ: not a test of BBB."))
        riv = max((k for k in ("sgd", "dropout") if k in tail), key=tail.get)
        mixed = (wider and "bbb_mixture" in bbb and tail["bbb_mixture"] < tail[riv]
                 and out["bbb_mixture"] > out[riv])
        if mixed:
            lim = hists["bbb_mixture"]["hi"]
            parts.append(
                f"For the scale mixture it depends on the threshold (table): fewer of its "
                f"weights than {TABLE_LABELS[riv]}'s lie beyond ±{far:g}, more beyond ±{lim:g}.")
        elif wider and TABLE_LABELS["bbb_mixture"] not in wider and "bbb_mixture" in bbb:
            base_near = [near_share[k] for k in ("sgd", "dropout") if k in near_share]
            spike = near_share["bbb_mixture"] > max(base_near)
            text = (f"The scale mixture's sample is {'a spike at 0' if spike else 'not wider'} "
                    + (f"(more of it within ±{near:g} than the plain network's or dropout's)"
                       if spike else
                       f"({100 * near_share['bbb_mixture']:.1f}% of its weights within ±{near:g})"))
            t = _heavier_beyond(hists, "bbb_mixture", [k for k in ("sgd", "dropout") if k in hists])
            if t is not None:
                text += (" plus heavier far tails than the plain network and dropout beyond "
                         f"about ±{t:.1g}")
            parts.append(text + ".")
    if "bbb_mixture" in hists and tested:  # a sample close to μ: its shape is μ's
        at0, (xl, dl), (xr, dr) = _dip(hists["bbb_mixture"])
        if at0 < 0.5 * min(dl, dr):
            parts.append(
                f"The scale mixture's sample dips at 0 (density {at0:.1f}, against "
                f"{dl:.1f} and {dr:.1f} at its modes near {xl:+.2f} and {xr:+.2f})".replace("-", "−")
                + (f"; in section 3's rerun the prior's narrow component claims at most "
                   f"{100 * narrow:.1f}% of the means" if narrow is not None else "")
                + "; why, under a prior peaked at 0, is unexplained.")
    top = max(out, key=out.get)
    if out[top] < 0.001:
        parts.append(f"The figure hides no visible mass (at most {100 * out[top]:.2g}%).")
    else:
        text = (f"{100 * out[top]:.2g}% of the {TABLE_LABELS[top]} sample lies beyond "
                f"±{hists[top]['hi']:g} (right-hand panel).")
        sp = (runs[top].get("config") or {}).get("prior_sigma")
        if top == "bbb_gaussian" and sp:
            text += (" Why so wide: the KL term pulls weights the data pin down little towards "
                     f"the prior N(0, {sp:g}²), far wider than the plain network's weights.")
        parts.append(text)
    return header, rows, " ".join(parts)


def _heavier_beyond(hists, key, base):
    """The smallest histogram edge t > 0 beyond which (at t and every edge past it, the mass
    beyond the range included) run ``key``'s share of weights with |w| >= t exceeds that of
    every run in ``base``; None when there is none or the histograms' bins differ."""
    h = hists[key]
    if not base or any((hists[k]["lo"], hists[k]["hi"], hists[k]["bins"])
                       != (h["lo"], h["hi"], h["bins"]) for k in base):
        return None
    n, width = h["bins"], (h["hi"] - h["lo"]) / h["bins"]

    def tail(r, j):  # share with |w| >= the j-th edge above 0 (bins symmetric about 0)
        c, mid = r["counts"], n // 2
        return (sum(c[mid + j:]) + sum(c[:mid - j]) + r["outside"]) / r["total"]
    if n % 2:
        return None
    best = None
    for j in range(n // 2, 0, -1):
        if tail(h, j) > max(tail(hists[k], j) for k in base):
            best = j * width
        else:
            break
    return best


def weight_share_panels(panels, narrow=None, untested=()):
    """``weight_share_rows`` for each of ``panels`` ([(recipe, runs)]) in one table with a
    recipe column, and its words per recipe; ``narrow`` goes with the first panel only;
    ``untested``: the recipes whose BBB's σ did not learn (``weight_share_rows``' tested)."""
    header, rows, words = None, [], []
    for i, (name, runs) in enumerate(panels):
        head, rs, w = weight_share_rows(runs, narrow=narrow if i == 0 else None,
                                        tested=name not in untested)
        header = ["recipe"] + head
        rows += [[name] + r for r in rs]
        if w:
            words.append(f"**{name[:1].upper() + name[1:]}.** {w}")
    return header, rows, "\n\n".join(words)


def effects_figure(paper_rec, adam_rec, sigma_fixed=None):
    """The comparisons of ``effects_rows`` drawn: per width, each a − b as its mean with the 95%
    interval adjusted for the m comparisons of its family (``ci_adj``, Bonferroni, the tables'
    m) under both recipes (one-seed effects as an open marker), the paper's difference as
    a black cross on its own line between them, zero as a line, the ±0.1 pp margin of the
    comparability claim shaded. With ``sigma_fixed`` (σ did not learn under the paper's
    protocol) that recipe's rows with a BBB side are drawn dashed and pale, with their own
    legend entry: intervals without a verdict. The x-range holds every interval and cross with
    a margin."""
    import matplotlib.pyplot as plt
    from matplotlib.lines import Line2D
    ep, ea = effects(paper_rec), effects(adam_rec)
    widths = sorted({k[0] for k in list(ep) + list(ea)})
    fig, axes = plt.subplots(1, len(widths), figsize=(4.5 * len(widths), 4.2), sharey=True,
                             sharex=True, squeeze=False)
    names = [w for _, _, w, _ in STORY_CLAIMS]
    # recipes in greys (the method colours of Figures 2 and 3 are not reused), the paper's
    # differences in vermillion, drawn on top
    style = {"paper": ("0.55", "o", -0.34), "adam": ("0.0", "s", 0.34)}
    paper_c = "#D55E00"
    xs = [0.0]
    for ax, W in zip(axes[0], widths):
        for name, eff in (("paper", ep), ("adam", ea)):
            col, mk, dy = style[name]
            for i, (a, b, _, _) in enumerate(STORY_CLAIMS):
                e = eff.get((W, a, b))
                if e is None:
                    continue
                pale = bool(sigma_fixed) and name == "paper" and "bbb" in a + b
                kw = dict(alpha=0.55, ls=(0, (2, 1.5))) if pale else {}
                y = i + dy
                if e.get("ci_adj"):
                    ax.plot([100 * e["ci_adj"][0], 100 * e["ci_adj"][1]], [y, y], c=col, lw=2,
                            **kw)
                    xs += [100 * x for x in e["ci_adj"]]
                    ax.plot(100 * e["diff"], y, mk, c=col, ms=5, mfc="white" if pale else col,
                            alpha=kw.get("alpha", 1))
                    if name == "adam" and e.get("ci_widths"):  # mixture − dropout, m widths
                        ax.plot([100 * x for x in e["ci_widths"]], [y + 0.2] * 2, c=col,
                                lw=0.9, marker="|", ms=6)
                        xs += [100 * x for x in e["ci_widths"]]
                else:  # one seed: open marker; a diamond where σ did not learn (no verdict)
                    ax.plot(100 * e["diff"], y, "D" if pale else mk, mfc="white", mec=col,
                            ms=5, alpha=kw.get("alpha", 1))
                    xs.append(100 * e["diff"])
        for i, (a, b, _, _) in enumerate(STORY_CLAIMS):
            p = paper_difference(a, b, W)
            if p is not None:
                ax.plot(100 * p, i, "x", c=paper_c, ms=8, mew=2.0, zorder=5)
                xs.append(100 * p)
        ax.axvline(0, c="0.5", lw=0.8)
        ax.fill_betweenx([3 - 0.45, 3 + 0.45], -100 * STORY_MARGIN, 100 * STORY_MARGIN,
                         color="0.85", lw=0)
        ax.set_title(f"2×{W}")
        ax.set_yticks(range(len(names)))
        ax.set_yticklabels(names, fontsize=8)
        ax.invert_yaxis() if ax is axes[0][0] else None
    pad = 0.08 * (max(xs) - min(xs))
    axes[0][0].set_xlim(min(xs) - pad, max(xs) + pad)
    handles = [Line2D([], [], c=style["paper"][0], marker="o", lw=2, label=RECIPES["paper"]),
               Line2D([], [], c=style["adam"][0], marker="s", lw=2, label=RECIPES["adam"]),
               Line2D([], [], ls="", marker="o", mfc="white", mec=style["paper"][0],
                      label=f"{RECIPES['paper']}, one seed: no interval"),
               Line2D([], [], ls="", marker="x", c=paper_c, mew=2.0,
                      label="the paper's difference (Table 1)"),
               plt.Rectangle((0, 0), 1, 1, color="0.85",
                             label=f"±{100 * STORY_MARGIN:g} pp: 'comparable' margin")]
    mw = {e.get("m_widths") for e in ea.values() if e.get("ci_widths")}
    if mw:
        handles.append(Line2D([], [], c=style["adam"][0], lw=0.9, marker="|", ms=6,
                              label=f"{RECIPES['adam']}, mixture − dropout: interval adjusted "
                                    f"for the {_NUM.get(max(mw), max(mw))} widths"))
    if sigma_fixed:
        handles.insert(1, Line2D([], [], c=style["paper"][0], marker="o", mfc="white", lw=2,
                                 alpha=0.55, ls=(0, (2, 1.5)),
                                 label=f"{RECIPES['paper']}, rows with BBB: "
                                       "σ did not learn (section 3): no verdict"))
        if any(not e.get("ci_adj") and "bbb" in a + b for (_, a, b), e in ep.items()):
            handles.insert(4, Line2D([], [], ls="", marker="D", mfc="white", alpha=0.55,
                                     mec=style["paper"][0], label=f"{RECIPES['paper']}, one "
                                     "seed, rows with BBB: no verdict"))
    for ax in axes[0]:
        ax.set_xlabel("a − b, test error (pp)", fontsize=9)
    fig.legend(handles=handles, loc="lower center", ncol=3, fontsize=8,
               bbox_to_anchor=(0.5, 0.0), title=f"bar: the {ADJUSTED}", title_fontsize=8)
    fig.tight_layout(rect=(0, 0.19, 1, 1))
    return fig


# ---- the Adam recipe spelled out; the predictor rule and Figure 3 under both recipes ----

def _rate(lr, decay):
    return f"{lr:g}" + (f" ×{decay:g}/epoch" if decay not in (None, 1, 1.0) else ", constant")


def recipe_rows(adam_rec):
    """(header, rows): the Adam recipe per width and method, read from the plan's summary
    ``adam_rec`` (each row's ``recipe``): the learning rate with its decay (the optimiser named
    only where it is not Adam), the epochs
    the method trains, BBB's weight samples per step and ρ₀, the method's own setting (dropout
    rate, prior), and the warm start's source network and its epochs (or a random start). The
    source of a warm start is the SGD row of the same width trained for its ``init_epochs``:
    the cell names its optimiser and rate only when they differ from that row's."""
    header = ["width", "method", "learning rate", "epochs", "BBB: samples per step, ρ₀",
              "dropout rate or prior", "start"]
    by = story_rows(adam_rec)
    rows = []
    for (key, W), r in sorted(by.items(), key=lambda kv: (kv[0][1], METHODS.index(kv[0][0])
                                                           if kv[0][0] in METHODS else 99)):
        c = r.get("recipe")
        if key not in METHODS or not c:
            continue
        bbb = key.startswith("bbb")
        setting = ("—" if key == "sgd" else f"{c['dropout']:g}" if key == "dropout"
                   else f"N(0, {c['prior_sigma']:g}²)" if key == "bbb_gaussian" else
                   f"π = {c['pi']:g}, −log σ₁ = {c['neg_log_sigma1']:g}, "
                   f"−log σ₂ = {c['neg_log_sigma2']:g}")
        if c.get("init_from"):
            src = (by.get((c["init_from"], W)) or {}).get("recipe") or {}
            same = (src.get("lr"), src.get("lr_decay")) == (c.get("init_lr"), c.get("init_lr_decay"))
            start = (f"warm: {c['init_epochs']}-epoch {BRIEF.get(c['init_from'], c['init_from'])}"
                     + ("" if same else f" (Adam {_rate(c['init_lr'], c['init_lr_decay'])})"))
        else:
            start = "random" + (f", μ ~ U(±{c['mu_init']:g})" if bbb and c.get("mu_init") else "")
        rows.append([f"2×{W}", BRIEF[key],
                     (f"{c['optimizer'].capitalize()} " if c["optimizer"] != "adam" else "")
                     + _rate(c["lr"], c["lr_decay"]),
                     str(c["epochs"]),
                     f"{c['samples']}, {c['rho_init']:g}".replace("-", "−") if bbb else "—",
                     setting, start])
    return header, rows


def adam_records(adam_rec, root=None):
    """``records(method, H)`` for helpers.paper_protocol's readers: the run records of the
    Adam recipe's rows (summary ``adam_rec``; paths relative to ``root``, the plan's results
    folder by default), in seed order."""
    from pathlib import Path
    if root is None:
        from .table1_plan import root as plan_root
        root = plan_root()
    by = {(r["key"], r["H"]): r for r in (adam_rec or {}).get("rows", [])}

    def get(method, H):
        r = by.get((method, H))
        paths = [Path(root) / p for p in (r or {}).get("runs", [])]
        return [json.loads(p.read_text()) for p in paths if p.exists()]
    return get


RULE_KEYS = ("bbb_gaussian", "bbb_mixture", "bbb_random_start")  # every BBB run the rule chose for
RULE_LABELS = {**BRIEF, "bbb_random_start": "random-start mixture (control)"}


def _rule_runs(groups):
    """[(recipe name, method, H, [metrics])] of every BBB run in ``groups`` (as
    ``predictor_summary``) whose record holds both predictors' test errors, the random-start
    control included; a records reader without that method gives none."""
    out = []
    for name, widths, get in groups or []:
        for m in RULE_KEYS:
            for H in widths:
                try:
                    recs = get(m, H)
                except KeyError:
                    recs = []
                x = [r["metrics"] for r in recs or [] if "test_error_ensemble" in r.get("metrics", {})]
                if x:
                    out.append((name, m, H, x))
    return out


PREDICTOR_HEADER = ["recipe", "method", "width", "seeds", "validation chose μ",
                    "test error, μ − average (pp), 95% interval (each row alone, unadjusted)",
                    "average lower on test"]


def predictor_summary(groups):
    """(header, rows, words) of the predictor rule under each recipe. ``groups``: [(recipe
    name, widths, records(method, H))]. Per recipe, BBB method (the random-start control
    included) and width: the seeds, on how many validation chose the posterior-mean weights,
    the paired difference of the two predictors' test errors (posterior mean − average) with
    its 95% interval, on how many the average of sampled networks had the lower test error;
    ``words``: one sentence per recipe with the totals."""
    rows, words, by, ctl = [], [], {}, set()
    for name, m, H, x in _rule_runs(groups):
        by.setdefault(name, []).extend(x)
        ctl |= {name} if m == "bbb_random_start" else set()
        mean = sum(v["predictor"] == "mean_weights" for v in x)
        better = sum(v["test_error_ensemble"] < v["test_error_mean_weights"] for v in x)
        d = stats.paired_t([v["test_error_mean_weights"] for v in x],
                           [v["test_error_ensemble"] for v in x])
        rows.append([name, RULE_LABELS[m], f"2×{H}", str(len(x)), f"{mean} of {len(x)}",
                     f"{_pp(d['mean_diff'])} {_ci_pp(d['ci'])}" if d["ci"] else
                     f"{_pp(d['mean_diff'])} (one seed: no interval)",
                     f"{better} of {len(x)}"])
    for name, runs in by.items():
        mean = sum(v["predictor"] == "mean_weights" for v in runs)
        better = sum(v["test_error_ensemble"] < v["test_error_mean_weights"] for v in runs)
        k = runs[0].get("eval_samples", "several")
        words.append(f"{name[:1].upper() + name[1:]}: validation chose μ in {mean} of "
                     f"{len(runs)} BBB runs" + (" (the random-start control included)"
                                                if name in ctl else "")
                     + f"; on test the average of {k} sampled networks was lower in {better}.")
    if len(groups) == 1:  # one recipe: no column to tell recipes apart
        return PREDICTOR_HEADER[1:], [r[1:] for r in rows], " ".join(words)
    return PREDICTOR_HEADER, rows, " ".join(words)


def warm_start_sentence(adam_rec):
    """The Adam recipe table's lead-in; which rows start warm is the table's start column.
    '' when no BBB row of the Adam recipe (summary ``adam_rec``) starts warm."""
    if not any(r["key"] in METHODS and (r.get("recipe") or {}).get("init_from")
               for r in (adam_rec or {}).get("rows", [])):
        return ""
    return "**The Adam recipe**, chosen on validation per width" + search_words() + ":"


SEARCH_NAMES = {"lr": "learning rate", "lr_decay": "learning-rate decay", "dropout": "dropout rate",
                "prior_sigma": "the prior's s", "pi": "π", "samples": "samples per step",
                "start": "start (random or warm)"}


def search_words(plan=None):
    """' (each method: N trials up to E epochs per width, searching …; …)' from the declared
    plan's search (``table1_plan.load_plan()``): the trials per method, the most epochs and each
    method's searched settings; '' without a budget."""
    from .table1_plan import load_plan
    search = (plan or load_plan() or {}).get("search") or {}
    budget = {(b["trials"], b["max_epochs"]) for b in (search.get("budget") or {}).values()}
    if len(budget) != 1:
        return ""
    trials, epochs = budget.pop()
    spaces = search.get("spaces") or {}
    start = all("start" in sp for m, sp in spaces.items() if m.startswith("bbb"))
    return (f" ({trials} trials per method and width, up to {epochs} epochs; "
            + ("BBB's start, random or warm, searched; "
               if start else "") + "[the spaces](../docs/choices.md#notebook-01-table-1))")


def figure3_panels(paper_runs, adam_rec, root=None):
    """[(recipe, {method: record})] for Figure 3: ``paper_runs`` (the paper protocol's widest
    networks, one seed) and the first seed of the Adam recipe's widest rows (summary
    ``adam_rec``; ``root``: see ``adam_records``); a recipe without any record is left out."""
    get = adam_records(adam_rec, root)
    H = max((adam_rec or {}).get("widths") or [0])
    adam_runs = {m: (get(m, H) or [None])[0] for m in METHODS}
    return [(name, runs) for name, runs in ((RECIPES["paper"], paper_runs),
                                            (RECIPES["adam"], adam_runs))
            if any(runs.values())]


def choices_direction(adam_rec, groups):
    """A table of which way the two choices made after test errors were seen lean, on test:
    the warm start (the Adam recipe's warm-started scale mixture minus the same mixture from a
    random start, its mean difference per width, from summary ``adam_rec``) and the predictor
    rule over every BBB run of ``groups`` (as ``predictor_summary``): in BBB's own runs and in
    the random-start control's, how many picked the average, and how the rule moved test error
    against the rule it replaced, always the average (docs/choices.md entry 4: runs lowered /
    raised; its "leans" and the lead follow this) and against always μ (raising the control's
    error favours the warm start, so BBB). A closing line says 'BBB is not better' does not
    come from these choices when the warm start and the rule on BBB's own runs lean BBB's way
    and, against always μ, the rule raised at most one of BBB's runs. '' without either."""
    from .report import and_list
    rs = sorted((W, e) for (W, a, b), e in effects(adam_rec).items()
                if (a, b) == ("bbb_mixture", "bbb_random_start"))
    runs = _rule_runs(groups)
    rows, against = [], 0

    def lean(x, ctl=False):  # x > 0: BBB's way (for the control: the warm start's advantage)
        if ctl:
            return ("widens the warm start's advantage" if x > 0 else
                    "shrinks the warm start's advantage" if x < 0 else "neither")
        return "BBB's way" if x > 0 else "against BBB" if x < 0 else "neither"

    if rs:
        d = [e["diff"] for _, e in rs]
        res = [W for W, e in rs if e["p_holm"] is not None and e["p_holm"] < ALPHA]
        rows.append(["warm start", "the Adam recipe's scale mixture",
                     "a random start", "warm − random start: " + ("means below 0 at every width" if all(x < 0 for x in d)
                                               else "means above 0 at every width" if all(x > 0 for x in d)
                                               else ", ".join(_pp(x) for x in d) + " pp")
                     + ("; resolved at " + and_list([f"2×{W}" for W in res]) + " only"
                        if res and len(res) < len(rs) else "; resolved at every width"
                        if res else "; resolved at no width")
                     + " (section 2)",
                     lean(-sum(d)) if all(x < 0 for x in d) or all(x > 0 for x in d) else "mixed"])
        against += sum(x > 0 for x in d)
    for ctl in (False, True):
        x = [(name, H, v) for name, m, H, xs in runs if (m == "bbb_random_start") == ctl
             for v in xs]
        if not x:
            continue
        picked = [(H, v["test_error_ensemble"] - v["test_error_mean_weights"]) for _, H, v in x
                  if v["predictor"] != "mean_weights"]
        # against the rule it replaced, always the average (choices.md entry 4): the pick's
        # test error minus the average's, 0 where the average was picked
        vs_avg = [v["test_error_mean_weights"] - v["test_error_ensemble"] for _, _, v in x
                  if v["predictor"] == "mean_weights"]
        where, mu = {}, {}
        for name, _, v in x:
            where[name] = where.get(name, 0) + 1
            mu[name] = mu.get(name, 0) + (v["predictor"] == "mean_weights")
        who = ("random-start control" if ctl else "BBB's own runs")
        n = f"{len(x)}" + ("" if ctl or len(where) < 2 else " (" + "; ".join(
            [f"{c} {'with the' if k == RECIPES['adam'] else 'under'} {k}"
             + (", all μ" if mu[k] == c else "") for k, c in where.items()]) + ")") \
            + f"; the average picked in {len(picked)}"
        up = sum(dx > 0 for _, dx in picked)
        down = sum(dx < 0 for _, dx in picked)
        a_up, a_down = sum(d > 0 for d in vs_avg), sum(d < 0 for d in vs_avg)
        avg = (", ".join(f"{k} {c}" for k, c in (("lowered", a_down), ("raised", a_up)) if c)
               or "none")  # against always the average, as the lead says
        if not picked:
            eff = "none"
        elif ctl:
            by = {}
            for H, dx in picked:
                by.setdefault(H, []).append(dx)
            size = {H: sum(v) / sum(1 for _, h, _ in x if h == H) for H, v in by.items()}
            eff = (f"raised {up}, lowered {down}" + "".join(
                f"; the control's mean {100 * v:+.2f} pp at 2×{H}".replace("-", "−")
                for H, v in sorted(size.items()) if abs(v) > 0.00005))
        else:
            eff = "; ".join(f"{k} {len(v)} by "
                            + and_list([f"{100 * abs(t):.2f}" for t in sorted(v)])
                            + " pp" for k, v in (("raised", [t for _, t in picked if t > 0]),
                                                 ("lowered", [t for _, t in picked if t < 0])) if v)
        net = sum(vs_avg) if ctl else -sum(vs_avg)  # > 0: BBB's way
        net_mu = sum(dx for _, dx in picked) * (1 if ctl else -1)
        if not ctl:
            against += up  # runs whose error the rule raised against always μ
        replaced = "always the average"
        rows.append([f"predictor rule, {who}", n, replaced, avg, lean(net, ctl)])
        if picked:  # one baseline per row: always μ on a row of its own
            rows.append([f"predictor rule, {who}", "", "always μ", eff, lean(net_mu, ctl)])
    if not rows:
        return ""
    name = {"warm start": "the warm start", "predictor rule, BBB's own runs":
            "the predictor rule on BBB's own runs", "predictor rule, random-start control":
            "the rule on the control"}
    first = [r for r in rows if r[2] != "always μ"]  # against what each replaced
    fav = [name[r[0]] for r in first if r[4] == "BBB's way"]
    con = [name[r[0]] for r in first if r[4] == "against BBB"]
    ctl_ = [f"{name[r[0]]} {r[4]}" for r in first if "advantage" in r[4]]
    said = ([and_list(fav) + (" favour" if len(fav) > 1 else " favours") + " BBB"] if fav else []) \
        + ([and_list(con) + (" go" if len(con) > 1 else " goes") + " against BBB"] if con else []) \
        + ctl_
    lead = "; ".join(said) + "." if said else ""
    own = [r for r in first if r[0] == "predictor rule, BBB's own runs"]
    close = ("So 'BBB is not better' does not come from these choices."
             if first[0][4] == "BBB's way" and all(r[4] == "BBB's way" for r in own)
             and against <= 1 else "")  # and against always μ it raised at most one run
    if own and lead:  # each choice against what it replaced
        lead = ("Against what each replaced ([the predictor rule's disclosure]"
                "(../docs/choices.md#notebook-01-table-1)), " + lead)
    else:
        lead = lead[:1].upper() + lead[1:]
    return ("**Which way the choices made after seeing test errors lean** (on test). "
            + lead + (f" {close}" if close else "") + "\n\n"
            + _md_table(["choice", "BBB runs", "against (first: what it replaced)", "effect on test error",
                        "leans"], rows))


# ---- the rule "σ learned or shifted uniformly", as helpers.posterior_diagnostics applies it ----

def shift_threshold():
    """The ratio at which ``posterior_diagnostics.shifted_uniformly`` changes its reading: σ
    *shifted uniformly* while ρ's 95th-percentile drift (the largest over layers) is at most
    this many times the median drift (the smallest over layers). Found by bisection on the
    function itself, so the words follow the code; None if the function reads no ratio."""
    from . import posterior_diagnostics as PD

    def alike(r):
        return PD.shifted_uniformly({"0": {"rho_drift_q": [1.0, r]}})
    lo, hi = 1.0, 1e4
    if not alike(lo) or alike(hi):
        return None
    for _ in range(80):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if alike(mid) else (lo, mid)
    return float(f"{lo:.6g}")


def drift_ratio(layers):
    """ρ's 95th-percentile drift, the largest over ``layers``, over the smallest layer median:
    the number ``shift_threshold`` is compared with."""
    return (max(v["rho_drift_q"][1] for v in layers.values())
            / min(v["rho_drift_q"][0] for v in layers.values()))


def _ratios(xs):
    xs = sorted(xs)
    f = (lambda x: f"{x:.2f}" if x < 10 else f"{x:.0f}")
    return f(xs[0]) if f(xs[0]) == f(xs[-1]) else f"{f(xs[0])}–{f(xs[-1])}"


def sigma_rule_words(diag, measured=None):
    """Markdown: the rule that reads σ as *learned* or *shifted uniformly*, with its threshold
    as the code applies it (``shift_threshold``) and each run's ratio against it (section 3's
    runs, ``diag``; the seed-0 reruns of the Adam recipe's scale mixture, ``measured``) and what
    the *KL bound* is (why a learned run's median σ sits at its start: ``median_words``, above
    the figure). '' without the diagnostics."""
    from . import posterior_diagnostics as PD
    thr = shift_threshold()
    if not diag or thr is None:
        return ""
    runs = {k: v for k, v in diag["runs"].items() if v.get("trace")}
    last = {k: v["trace"][-1]["layers"] for k, v in runs.items()}
    still = [drift_ratio(L) for k, L in last.items() if PD.shifted_uniformly(L)]
    moved = {k: L for k, L in last.items() if not PD.shifted_uniformly(L)}
    re = [drift_ratio(e["layers"]) for e in ((measured or {}).get("widths") or {}).values()
          if not PD.shifted_uniformly(e["layers"])]
    text = ("**σ learned or shifted uniformly: the rule** (the answer's): the largest layer's "
            "95th percentile of *ρ drift* over the smallest layer's median, at most "
            f"{thr:g} where σ *shifted uniformly*. The ratio: ")
    said = []
    if still:
        said.append(f"{_ratios(still)} in the plain-SGD runs (shifted)")
    if moved:
        said.append(f"{_ratios([drift_ratio(L) for L in moved.values()])} in its Adam-recipe "
                    "run" + (f" and {_ratios(re)} in the seed-0 reruns below" if re else "")
                    + " (learned)")
    text += "; ".join(said) + "."
    up = [drift_ratio(L) for L in moved.values()] + re
    alt = [drift_ratio(e["layers"]) for e in ((PD.bbb06_load() or {}).get("seeds") or {}).values()
           if not PD.shifted_uniformly(e["layers"])]  # notebook 06's BBB, read by the same rule
    if still and up:  # how far the reading is from the threshold
        low = min(up + alt)
        text += (f" Any threshold between {_ratios([max(still)])} and {_ratios([low])}"
                 + (" (the lowest *learned* ratio in the project, a BBB run of notebook 06)"
                    if alt and min(alt) < min(up) else "")
                 + " reads every run the same way.")
    return (text + " *KL bound*: under the prior N(0, s²) each weight's KL is at least "
            "log s − log σⱼ − ½, so the recorded KL bounds σ's geometric mean from below.")


def median_words(diag):
    """Section 3's figure read before it is seen: why the Adam-recipe run's median σ can sit at
    its start though σ learned (softplus(ρ₀) is also the prior's narrow σ₂, and most means lie
    in that component, whose KL holds σ near σ₂). '' without such a run in ``diag``."""
    from . import posterior_diagnostics as PD
    for k, run in ((diag or {}).get("runs") or {}).items():
        if not run.get("trace"):
            continue
        L, c = run["trace"][-1]["layers"], run["config"]
        if PD.shifted_uniformly(L):
            continue
        s2 = c.get("neg_log_sigma2")
        meds = [v["sigma_q"][1] for v in L.values()]
        share = [v["narrow_share"] for v in L.values() if v.get("narrow_share") is not None]
        start = PD._softplus(c["rho_init"])
        if s2 is None or not share or abs(min(meds) / start - 1) > 0.05:
            continue
        return ("In the Adam-recipe run a median σ can sit at its start, "
                + f"{start:#.3g} = softplus(ρ₀ = {c['rho_init']:g})".replace("-", "−")
                + f", also the prior's narrow σ₂ = e{_sup(-s2)}: most means "
                f"({100 * min(share):.0f}–{100 * max(share):.0f} % by layer) lie in that "
                "component, whose KL holds σ near σ₂. σ's spread shows in the band's top.")
    return ""


def _sup(x):
    """``x`` (a whole number) as a superscript exponent: −6 -> ⁻⁶."""
    return f"{x:g}".translate(str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹"))


def learning_scope(fig, diag):
    """Title section 3's figure ``fig`` with what its runs are (from ``diag``): the width, seed
    and epochs of the reruns; ``fig`` unchanged without them. Returns ``fig``."""
    cfg = [r.get("config") or {} for r in ((diag or {}).get("runs") or {}).values()]
    Hs = sorted({c.get("H") for c in cfg if c.get("H")})
    st = (diag or {}).get("settings") or {}
    if Hs and st.get("epochs") is not None:
        fig.suptitle(", ".join(f"2×{H}" for H in Hs) + f" networks, seed {st.get('seed', 0)}, "
                     f"{st['epochs']} epochs (reruns, not Table 1's runs): each run's σ per "
                     "layer and its fit against KL\n(the Adam run differs in more than its optimiser: a "
                     "contrast, not a controlled comparison)", fontsize=10, y=1.08)
    from matplotlib.colors import to_hex
    from . import posterior_diagnostics as PD
    ls = {to_hex(PD.COLORS[k]): PD._STYLE[k].get("ls", "-") for k in PD.COLORS if k in PD._STYLE}
    for ax in fig.axes:  # the fit panel's paths in the legend's line styles
        if ax.get_title() == "fit against complexity":
            for ln in ax.lines:
                if to_hex(ln.get_color()) in ls:
                    ln.set_linestyle(ls[to_hex(ln.get_color())])
    return fig


def sigma_line(measured, sigma_fixed=None, adam_rec=None):
    """The answer's one line on σ: a verdict counts only where BBB's σ learned; at which widths
    the rerun of the Adam recipe's scale mixture (seed 0; ``measured``: posterior_diagnostics'
    ``adam_load()``) found it learned or shifted uniformly; that the Gaussian prior's verdicts
    count on an inference, and (with ``adam_rec``, the Adam recipe's summary) whether any of
    its comparisons is resolved, so whether a σ that did not learn would change one; with
    ``sigma_fixed``, that under the paper's protocol it shifted uniformly. The rule and its
    numbers: section 3. '' with neither."""
    from . import posterior_diagnostics as PD
    from .report import and_list
    got = {int(H): e for H, e in ((measured or {}).get("widths") or {}).items()}
    parts = []
    if got:
        ok = [H for H, e in sorted(got.items()) if not PD.shifted_uniformly(e["layers"])]
        no = [H for H in sorted(got) if H not in ok]
        parts.append("Adam recipe: the scale mixture's σ learned"
                     + (f" at {and_list([f'2×{H}' for H in ok])}" if ok else " at no width")
                     + (f" and shifted uniformly at {and_list([f'2×{H}' for H in no])}"
                        if no else "") + "; the Gaussian prior's was not rerun, "
                     "so its verdicts count on an inference (its recorded KL bounds σ from below; "
                     "section 3)" + _gaussian_stakes(adam_rec))
    if sigma_fixed:
        where = paper_rerun_words()
        parts.append("The paper's protocol: σ shifted uniformly"
                     + (f" {where}, extrapolated in section 3" if where else ""))
    if not parts:
        return ""
    fold = sorted(  # from the values section 3 prints (4 decimals; the start to 3 figures)
        float(f"{max(layer['sigma_q'][2] for layer in e['layers'].values()):.4f}")
        / float(f"{e['sigma_start']:.3g}") for e in got.values() if e.get("sigma_start")) if got else []
    start = sorted({e["sigma_start"] for e in got.values() if e.get("sigma_start")})
    how = ("" if not fold else " In the *seed-0 reruns* (seed 0 retrained, σ recorded) σ's "
           f"95th percentile ended {fold[0]:.0f}–{fold[-1]:.0f} times its start"
           + (f" ({start[0]:#.3g})" if len(start) == 1 else "") + ", most medians near it.")
    thr = shift_threshold()
    rule = ("" if thr is None else
            ": by section 3's rule, where the largest 95th percentile of *ρ drift* (how far a "
            "weight's σ parameter ρ moved from its start) over the layers exceeds "
            f"{thr:g} times the smallest layer median")
    return ("A BBB verdict counts only where its σ *learned*" + rule + "; else σ *shifted "
            "uniformly* (every σ by about the same amount)." + how + " "
            + ". ".join(parts) + ".")


def _gaussian_stakes(adam_rec):
    """': none of them is resolved, so none would change' when no comparison of the Adam
    recipe's (summary ``adam_rec``) that involves the Gaussian prior is resolved (Holm), else
    how many are; '' without the summary."""
    if not adam_rec:
        return ""
    g = [e for (W, a, b), e in effects(adam_rec).items() if "bbb_gaussian" in (a, b)
         and e.get("ci_adj")]
    res = [e for e in g if e["p_holm"] is not None and e["p_holm"] < ALPHA]
    if not g:
        return ""
    return (": none of them is resolved, so none would change" if not res else
            f": {len(res)} of them resolved would lose its verdict if σ did not learn")


def rho_push_words(diag):
    """Why σ shifted uniformly under plain SGD on the summed cost, in numbers from the
    paper-protocol scale-mixture rerun of ``diag``: each minibatch carries 1/M of the KL, whose
    entropy term −log σⱼ pushes every ρⱼ up by lr · sigmoid(ρ)/(M σ) per step, the same for every
    weight; over an epoch's M steps that is lr · sigmoid(ρ₀)/softplus(ρ₀) per epoch, against
    ρ's measured drift per epoch (median and 95th percentile, over the layers). '' without
    that run."""
    import math
    from . import posterior_diagnostics as PD
    runs = (diag or {}).get("runs") or {}
    run = runs.get(PD.PAPER_RUN) or runs.get(PD.DISPLAY[PD.PAPER_RUN])
    if not run or not run.get("trace") or (run.get("config") or {}).get("optimizer") != "sgd":
        return ""
    c, last = run["config"], run["trace"][-1]
    r0, lr, n = c["rho_init"], c["lr"], last["epoch"]
    if not n:
        return ""
    push = lr / (1 + math.exp(-r0)) / PD._softplus(r0)
    med = min(v["rho_drift_q"][0] for v in last["layers"].values()) / n
    top = max(v["rho_drift_q"][1] for v in last["layers"].values()) / n
    return ("**Why σ shifted uniformly.** Each of an epoch's M steps carries 1/M of the KL, "
            "whose *entropy term* (−log σⱼ per weight) pushes every ρⱼ up by "
            f"lr · sigmoid(ρ)/(M σ) whatever the data: per epoch {push:.5f} (lr = {lr:g}, "
            f"ρ₀ = {r0:g}). ρ moved {med:.5f}–{top:.5f} per epoch (median to 95th percentile): "
            "the entropy term alone. The push does not depend "
            "on width: it holds at 2×1200 (not rerun)."
            ).replace("-", "−")


def drift_yardstick(paper_rec, window=100):
    """The paper protocol's largest remaining drift (as ``paper_protocol.curve_rows`` finds it:
    the mean over seeds of the last ``window`` epochs' test error minus the ``window`` before)
    against the half-width of its narrowest adjusted 95% interval, naming that comparison and
    whether it has a verdict. '' without either."""
    moved = []
    for r in (paper_rec or {}).get("rows", []):
        d = [a - b for a, b in zip(r.get("test_error_last_100") or [],
                                   r.get("test_error_previous_100") or [])
             if a is not None and b is not None]
        if d:
            moved.append(abs(sum(d) / len(d)))
    eff = [(k, e) for k, e in effects(paper_rec).items() if e.get("ci_adj")]
    if not moved or not eff:
        return ""
    (W, a, b), e = min(eff, key=lambda x: x[1]["ci_adj"][1] - x[1]["ci_adj"][0])
    hw = (e["ci_adj"][1] - e["ci_adj"][0]) / 2
    words = {(x, y): w for x, y, w, _ in STORY_CLAIMS}
    none = "bbb" in a + b
    return (f"Against the narrowest of the paper protocol's intervals ({words[(a, b)]} at 2×{W}, "
            f"half-width {100 * hw:.3f} pp" + ("; no verdict, σ did not learn" if none else "")
            + f") that drift is {max(moved) / hw:.0%}.")


def resolvable_line(adam_rec):
    """One sentence: per width, the smallest difference the Adam recipe's seeds resolve (the
    range over the claims of the adjusted interval's half-width, as ``resolvable_words``); ''
    without intervals."""
    ea = effects(adam_rec)
    parts = []
    for W in sorted({k[0] for k in ea}):
        hw = _half_widths(ea, W)
        if hw:
            n = max(e["n"] for (V, _, _), e in ea.items() if V == W and e.get("ci_adj"))
            parts.append(f"{_pp_range(hw)} pp at 2×{W} ({n} seeds)")
    if not parts:
        return ""
    return ("*Interval half-widths* (Adam recipe; a true difference that large excludes 0 only "
            "about half the time): " + "; ".join(parts) + ".")


def epochs_enough(paper_rec, sigma_fixed=False):
    """Section 4's one sentence, 'Are 600 epochs enough?', from ``paper_protocol.curve_rows``
    on summary ``paper_rec`` (its resolved intervals: ``resolved_intervals``), with that
    module's word *drift* said as *late change* (section 3 uses *ρ drift* for σ's parameter);
    '' without curves."""
    import re
    from .paper_protocol import curve_rows
    verdicts = resolved_intervals(paper_rec, sigma_fixed)
    _, rows, words = curve_rows(paper_rec, verdicts=verdicts)
    if not words:
        return ""
    words = words.replace("**Conclusion:** t", "T").replace("largest drift", "largest late change")
    big = max(abs(float(r[3].replace("−", "-"))) for r in rows)  # pp, as printed
    tail = re.search(r"(its|each) interval ends more than twice that drift from 0\.$", words)
    if tail and big > 0:  # the margin said in numbers: a difference of two curves moves by at
        near = min(min(abs(lo), abs(hi)) for _, (lo, hi) in verdicts  # most both their drifts
                   if lo * hi > 0 and min(abs(lo), abs(hi)) > 2 * big / 100)
        words = (words[:tail.start()] + f"{tail.group(1)} interval ends {100 * near:.2f} pp "
                 f"from 0, over {int(100 * near / (2 * big))} times the most both arms' late "
                 f"changes could move it (2 × {big:.3f} pp).")
    return "**Are 600 epochs enough?** " + words.replace("drift", "late change")


def mixture_kick(config, n_train=50_000):
    """Why plain SGD and the scale-mixture prior of ``config`` (a paper-protocol run's config:
    lr, batch_size, pi, neg_log_sigma1, neg_log_sigma2, reduction 'sum') push μ away from 0:
    {M: steps per epoch, stiff: lr/(M σ₂²), the narrow component's curvature times the step
    (gradient descent on a quadratic overshoots above 2), kick: the largest move of μ in one
    step from the prior's gradient at a sampled weight, lr/M · max_w |d(−log p)/dw|, w_kick:
    where that maximum lies}; None for another prior or an averaged cost."""
    import numpy as np
    if config.get("method") != "bbb_mixture" or config.get("reduction") != "sum":
        return None
    pi, s1, s2 = config["pi"], math.exp(-config["neg_log_sigma1"]), math.exp(-config["neg_log_sigma2"])
    M = math.ceil(n_train / config["batch_size"])
    w = np.linspace(1e-7, 0.05, 200_001)
    a = math.log(pi) - math.log(s1) - 0.5 * w**2 / s1**2
    b = math.log1p(-pi) - math.log(s2) - 0.5 * w**2 / s2**2
    r2 = 1.0 / (1.0 + np.exp(np.minimum(a - b, 700.0)))  # the narrow component's responsibility
    g = (1 - r2) * w / s1**2 + r2 * w / s2**2  # d(−log p)/dw
    i = int(np.argmax(g))
    return {"M": M, "stiff": config["lr"] / (M * s2**2), "kick": config["lr"] / M * g[i],
            "w_kick": float(w[i]), "lr": config["lr"], "s2": s2, "nls2": config["neg_log_sigma2"]}


def mixture_kick_words(paper_rec, pp):
    """One paragraph on the paper-protocol scale mixture's odd behaviour (Figure 2's swinging
    curve, Figure 3's hole at 0; its Table 1 error is in the table), read as the
    narrow prior component being too steep for plain SGD's step (``mixture_kick``): a reading
    from the settings, not tested by a run. '' without the chosen run or when the step is not
    stiff (curvature times step at most 2)."""
    from .paper_protocol import chosen
    rec = chosen(pp, "bbb_mixture")
    k = mixture_kick(rec["config"], pp.get("n_train") or 50_000) if rec else None
    if not k or k["stiff"] <= 2:
        return ""
    rows = story_rows(paper_rec)
    W = min((V for (key, V) in rows if key == "bbb_mixture"), default=None)
    sd = {key: stats.mean_ci(r["test_error_sd_last_100"])["mean"] for (key, V), r in rows.items()
          if V == W and key in METHODS and r.get("test_error_sd_last_100")}
    swing = (f"its Figure 2 curve swings most (test-error sd over the last 100 epochs "
             f"{100 * sd['bbb_mixture']:.2f} pp, "
             f"others ≤ {100 * max(v for x, v in sd.items() if x != 'bbb_mixture'):.2f} pp), "
             if len(sd) == len(METHODS) and max(sd, key=sd.get) == "bbb_mixture" else "")
    return ("**Why the paper-protocol scale mixture is the odd one** (a reading of its "
            "settings, untested): " + swing + "and its sample has a hole at 0. Its "
            f"prior's narrow component (σ₂ = e{_sup(-k['nls2'])}) is too steep for the step: "
            f"lr/(M σ₂²) ≈ {k['stiff']:.0f} (M = {k['M']} steps per epoch), far above 2, where "
            "gradient descent overshoots: a weight sampled near 0 kicks its μ past 0, so 0 "
            "repels the means and test error is noisy.")
