"""Notebook 06's plan, version 3 (issue 34, item 2): equal searches for every trained method,
declared and committed before any of its numbers; and the runner of its searches.

Version 3 widens every grid to 4 x 4 = 16 trials. Why: version 2's first finished search (MAP,
results/06_alternatives/v2/search/map/, validation only) chose learning rate 3e-4 and weight decay
1e-3, both at an edge of its grid, and version 2 declared that "widening a grid is a new plan
version for every method". No test number of version 2 existed (docs/choices.md, entry 11).
Each method's learning rate spans a factor of 30 (IVON's 33) centred on its own earlier
validation choice: 1e-4..3e-3 for MC dropout and BBB (notebooks 05 and 01 chose 1e-3), 3e-5..1e-3
for MAP (version 2 chose 3e-4; its weight decay now 1e-4..1e-1); IVON's hess_init 0.01..10, a
decade either side of the package's default 1.0. Amended before any version-3 run, after a
referee's reading: 60 epochs (BBB from a random start still improves at epoch 45 in notebook
01's search), the choice scored on the validation NLL averaged over the five epochs ending at
the chosen one (one epoch's NLL jumps by as much as the gaps between settings), only trials that
ran every epoch without an error are eligible, and version 3 is final for edges. Version 2's plan
and MAP records stay as they were, for the record; version 3 trains all of its trials itself.

Today notebook 06 searches MAP (6 trials, ASHA) and IVON (2 settings) itself, and takes MC
dropout's and BBB's settings from notebooks 05 and 01, whose searches had other budgets. Versions 2
and 3 give every method it trains the same search:

- ``TRIALS`` = 16 settings each, from the spaces in ``SEARCHES`` (every grid has a numeric
  dimension of three values or more, so a choice at its edge is visible; IVON's learning rate
  spans a factor of 33 around the package's documented 0.1), each trained for ``MAX_EPOCHS`` = 60
  epochs from a random start, with no early stopping (no ASHA, no warm start: nobody gets a head
  start), on the 50,000 training images of a 784-400-400-10 network;
- one rule for all (``choose``): the setting and epoch (a multiple of 5) with the lowest
  validation NLL of the method's predictive (10 samples where it samples), averaged over the
  ``SMOOTH`` = 5 epochs that end at it, on the last 10,000 training images; only trials that ran
  every epoch without an error; a constant learning rate for every method;
- the deep ensemble takes MAP's choice (5 members, seeds apart); Laplace fits MAP's network, its
  prior precision by marginal likelihood, the GLM predictive with the probit link (the library's
  documented use), the all-layer fits scored on a declared subset of the test and OOD images
  (their predictive is slow on a CPU), the rotations with the last-layer fit;
- reported seeds ``REPORTED_SEEDS``; per seed the same data order for every method (and the same
  initialisation stream, which methods with other parameters draw differently); claims "BBB better than X" on test NLL and on the MNIST -> Fashion-MNIST AUROC,
  paired two-sided t-tests (``helpers.stats.ordering_family``), Holm within each family.

``write_plan()`` writes ``results/06_alternatives/plan_v3.json``; the searches write one record
per trial under ``results/06_alternatives/v3/search/<method>/`` (``run_trial``); a trial killed
before its last epoch starts again from epoch 0 (its validation NLL curve must be whole, and a
trial is minutes). The final runs (``helpers.alternatives_final``) start for a method once its own
search is complete (docs/choices.md); the notebook renders them (``helpers.alternatives_report``).
"""
import json
from pathlib import Path

from .profiles import CLASSIFICATION_TRIAL, MNIST_MIXTURE
from .sweep import expand, resolve_trial, run_local_trial

NB = "06_alternatives"
VERSION = 3
PLAN = Path("results") / NB / f"plan_v{VERSION}.json"
GOVERNS = [f"results/{NB}/v{VERSION}/**"]
SUPERSEDES = {"version": 2, "plan": f"results/{NB}/plan_v2.json",
              "why": "version 2's MAP search chose lr 3e-4 and weight decay 1e-3, each at an "
                     "edge of its grid (validation NLL; results/06_alternatives/v2/search/map/); "
                     "version 2's edge rule: widening a grid is a new plan version for every "
                     "method. No test number of version 2 existed.",
              "changes": "every grid 4 x 4 (16 trials per method), each method's learning rate "
                         "over a factor of 30 centred on its own earlier validation choice "
                         "(MAP 3e-5..1e-3 with weight decay 1e-4..1e-1; MC dropout and BBB "
                         "1e-4..3e-3; IVON 0.03..1.0 with hess_init 0.01..10); 60 epochs "
                         "(was 30); the choice scored on the validation NLL averaged over 5 "
                         "epochs; only complete, error-free trials eligible; final for edges",
              "pilot": "MAP's grid is placed by version 2's MAP search (validation NLL, 30 "
                       "epochs): a pilot the other methods had from notebooks 01 and 05's "
                       "validation searches instead (their learning rates 1e-3)"}
H, MAX_EPOCHS, EPOCH_STEP, SEARCH_SEED = 400, 60, 5, 100
SMOOTH = 5  # the choice's score: the validation NLL averaged over the 5 epochs ending at it
METRIC, EVAL_SAMPLES, TRIALS = "val_nll", 10, 16
IVON_TRIAL = "helpers.ivon_trial:TRIAL"
_LR = [1e-4, 3e-4, 1e-3, 3e-3]  # a factor of 30 around 1e-3 (notebooks 01 and 05's choice)
_PI, _S1, _S2 = MNIST_MIXTURE
SEARCHES = {
    "map": dict(trial=CLASSIFICATION_TRIAL, base=dict(method="sgd", H=H),
                grid=dict(lr=[3e-5, 1e-4, 3e-4, 1e-3], weight_decay=[1e-4, 1e-3, 1e-2, 1e-1])),
    "mc_dropout": dict(trial=CLASSIFICATION_TRIAL,
                       base=dict(method="dropout", H=H, weight_decay=1e-4),
                       grid=dict(lr=_LR, dropout=[0.1, 0.25, 0.4, 0.55])),
    "bbb": dict(trial=CLASSIFICATION_TRIAL,
                base=dict(method="bbb_mixture", H=H, pi=_PI, neg_log_sigma1=0.0,
                          neg_log_sigma2=6.0, samples=1),
                grid=dict(lr=_LR, rho_init=[-7.0, -6.0, -5.0, -4.0])),
    "ivon": dict(trial=IVON_TRIAL,
                 base=dict(H=H, weight_decay=1e-4, ess_factor=1.0, schedule="constant"),
                 grid=dict(lr=[0.03, 0.1, 0.3, 1.0], hess_init=[0.01, 0.1, 1.0, 10.0])),
}
REPORTED_SEEDS = tuple(range(10))  # ten: the exact sign test can resolve after Holm over 7
ENSEMBLE_SIZE = 5
LAPLACE = {"flavours": {"laplace_ll_kron": "last layer, Kronecker-factored",
                        "laplace_diag": "all layers, diagonal (BackPack GGN)",
                        "laplace_kron": "all layers, Kronecker-factored"},
           "prior_precision": "marginal likelihood (the library's optimize_prior_precision)",
           "predictive": {"pred_type": "glm", "link_approx": "probit"},
           "all_layer_subset": {"test": 2000, "ood": 2000, "generator_seed": 12345,
                                "which": "a random subset of each test set (torch.Generator "
                                         "seeded generator_seed, the same for every seed); "
                                         "every method is also scored on it, and the claims "
                                         "on an all-layer Laplace row compare on it"},
           "rotations": "the last-layer fit only"}
RIVALS = ("map", "mc_dropout", "ensemble", "ivon", "laplace_ll_kron", "laplace_diag",
          "laplace_kron")


def plan(cost=None):
    """Return the plan (a plain dict); ``cost``: the estimate written with it (``estimate``)."""
    return {
        "version": VERSION, "notebook": NB, "supersedes": SUPERSEDES,
        "question": "With the same search for every method it trains, is BBB's predictive on "
                    "MNIST better calibrated, and does it detect Fashion-MNIST better, than MAP, "
                    "MC dropout, a deep ensemble, IVON and Laplace?",
        "searches": {k: {"trial": v["trial"], "base": v["base"], "grid": v["grid"]}
                     for k, v in SEARCHES.items()},
        "budget": {"trials": TRIALS, "max_epochs": MAX_EPOCHS, "epoch_step": EPOCH_STEP,
                   "early_stopping": None, "warm_start": None, "seed": SEARCH_SEED,
                   "metric": METRIC, "eval_samples": EVAL_SAMPLES, "threads_per_trial": 1},
        "rule": "among the trials that ran all max_epochs epochs without an error, the setting "
                "and epoch e (a multiple of epoch_step) with the lowest validation NLL of the "
                "method's predictive averaged over epochs e-smooth+1..e; ties: fewer epochs, "
                "then the trial's name in alphabetical order "
                "(helpers.alternatives_plan.choose)",
        "smooth": SMOOTH,
        "schedules": "constant learning rate for every method (Adam for MAP, MC dropout and "
                     "BBB; IVON's own update, as in its README's loop)",
        "regularisation": "each method searches its own regulariser beside its learning rate: "
                          "MAP weight decay (torch Adam's, coupled L2); MC dropout its rate, "
                          "with weight decay 1e-4 (IVON's default); BBB rho0 with the paper's "
                          "MNIST scale-mixture prior fixed (the method as published); IVON "
                          "hess_init with weight decay 1e-4 and ess = the training-set size "
                          "(the package's documented settings). Not searched, a stated "
                          "limitation: IVON's ess and weight decay, BBB's prior, MC dropout's "
                          "weight decay (a third dimension would need a 16-point design over "
                          "64 points for every method)",
        "final_runs": "each reported seed: every method trains with its chosen setting on "
                      "the 50,000 training images from a random start for the chosen number of "
                      "epochs e, which is the network of epoch e of a max_epochs run (constant "
                      "learning rates; each epoch's data order drawn from the seed and the "
                      "epoch: tests/test_alternatives_final.py), so the final run follows the "
                      "validated path; test predictive with 20 samples where the method "
                      "samples (helpers.alternatives_final)",
        "edges": "a choice at the edge of its grid (epoch 60 included) is reported as such "
                 "beside the method's row; version 3 is final: no further widening for edges",
        "divergence": "a final run that fails (NaN loss or an error) is reported as failed in "
                      "its method's row, not rerun with another setting; that seed leaves "
                      "the method's paired tests, and the table names it",
        "ensemble": {"members": ENSEMBLE_SIZE, "from": "map's choice, seeds apart"},
        "laplace": LAPLACE,
        "reported_seeds": list(REPORTED_SEEDS),
        "tests": {"families": {
                      "test NLL": [f"bbb < {r} on nll" for r in RIVALS],
                      "OOD AUROC (entropy)": [f"{r} < bbb on auroc_entropy" for r in RIVALS]},
                  "test": "two-sided paired t-test over the seeds, Holm within each family "
                          "(helpers.stats.ordering_family), decides the verdict word; the "
                          "exact sign test is reported beside it and decides nothing",
                  "mc_noise": "for every method whose predictive samples (BBB, MC dropout, "
                              "IVON; Laplace's probit predictive draws nothing), the scores are "
                              "recomputed with 3 further predictive seeds on each reported "
                              "seed, on the whole sets and on the subset; each claim reports "
                              "the Monte-Carlo sd of its paired difference beside the sd over "
                              "seeds",
                  "interim": "verdicts are the plan's only once every method has a record "
                             "(or a failure record) on every reported seed; before that an "
                             "analysis is marked interim",
                  "alpha": 0.05,
                  "verdict_words": ["holds", "reversed",
                                    f"not resolved at {len(REPORTED_SEEDS)} seeds"]},
        "estimate": cost,
        "governs": GOVERNS,
    }


def configs(method):
    """Return the configurations of ``method``'s search (each made by its trial)."""
    space = SEARCHES[method]
    return [resolve_trial(space["trial"]).make({**c, "epochs": MAX_EPOCHS})
            for c in expand(space, SEARCH_SEED)]


def validate(p):
    """Return the breaches of the protocol's rules in plan ``p`` (empty: none)."""
    bad = []
    sizes = {}
    for m, space in p["searches"].items():
        trial = resolve_trial(space["trial"])
        sizes[m] = len(expand(space, p["budget"]["seed"], trial))
        if not any(len(v) >= 3 and all(isinstance(x, (int, float)) for x in v)
                   for v in space["grid"].values()):
            bad.append(f"{m}: no numeric dimension of three values or more (an edge choice "
                       "could not be seen)")
    if len(set(sizes.values())) != 1 or set(sizes.values()) != {p["budget"]["trials"]}:
        bad.append(f"unequal searches: {sizes} trials (declared {p['budget']['trials']})")
    if p["budget"]["early_stopping"] is not None or p["budget"]["warm_start"] is not None:
        bad.append("early stopping or a warm start favours some trials")
    if p["budget"]["seed"] in p["reported_seeds"]:
        bad.append("the search seed is a reported seed")
    if not 3 <= len(p["reported_seeds"]) or max(p["reported_seeds"]) > 9:
        bad.append("reported seeds must be 3 or more of 0-9")
    return bad


def estimate(root):
    """CPU-hours of the searches from the seconds per epoch of the runs notebook 06 made before
    (results/06_alternatives: the MAP sweep and the IVON trials; BBB and dropout from the paper
    protocol's 2x400 runs), one thread; an estimate, measured against after the runs."""
    root = Path(root)
    mapsw = json.loads((root / "results" / NB / "sweep" / "map_mnist.json").read_text())
    done = [t for t in mapsw["metrics"]["trials"] if t["epochs_run"]]
    s_map = sum(t["wall_s"] for t in done) / sum(t["epochs_run"] for t in done)
    iv = json.loads((root / "results" / NB / "ivon_tuning.json").read_text())
    s_ivon = sum(t["wall_s"] for t in iv["metrics"]["trials"]) / (
        len(iv["metrics"]["trials"]) * iv["config"]["epochs"])
    pp = json.loads((root / "results" / "01_mnist_classification" / "paper_protocol" /
                     "summary.json").read_text())
    speed = {r["key"]: r["speeds"][0][2] for r in pp["rows"] if r["H"] == 400 and r["speeds"]}
    per_epoch = {"map": s_map, "mc_dropout": speed.get("dropout"),
                 "bbb": speed.get("bbb_mixture"), "ivon": s_ivon}
    # version 2's MAP trials measured a whole search trial (training and the validation NLL after
    # every epoch, on a machine shared with other runs): every method is scaled by the ratio of
    # that measurement to the older MAP rate above
    v2 = [json.loads(f.read_text()) for f in
          sorted((root / "results" / NB / "v2" / "search" / "map").glob("*.json"))]
    scale = 1.0
    if v2:
        s_v2 = sum(r["process_wall_s"] for r in v2) / (len(v2) * 30)
        scale = s_v2 / s_map
    hours = {m: None if s is None else round(TRIALS * MAX_EPOCHS * s * scale / 3600.0, 2)
             for m, s in per_epoch.items()}
    return {"s_per_epoch": {m: None if s is None else round(s * scale, 2)
                            for m, s in per_epoch.items()},
            "scale_from_v2_map_trials": round(scale, 2),
            "search_cpu_h": hours,
            "total_search_cpu_h": round(sum(h for h in hours.values() if h), 2),
            "from": ["results/06_alternatives/sweep/map_mnist.json",
                     "results/06_alternatives/ivon_tuning.json",
                     "results/01_mnist_classification/paper_protocol/summary.json (2x400)",
                     "results/06_alternatives/v2/search/map/ (whole trials, 30 epochs)"],
            "note": "whole trials (training and the per-epoch validation NLL) at the rate of "
                    "version 2's MAP trials, which shared a 2-core machine with other runs; "
                    "an upper bound on a quiet machine, measured against after the runs"}


def write_plan(root=None):
    from .utils import PROJECT_ROOT, atomic_write_bytes
    root = Path(root or PROJECT_ROOT)
    p = plan(estimate(root))
    bad = validate(p)
    if bad:
        raise ValueError("the plan breaks the protocol:\n- " + "\n- ".join(bad))
    return atomic_write_bytes(root / PLAN, (json.dumps(p, indent=1) + "\n").encode())


# ---- the searches, one trial per job -------------------------------------------------------

def trial_path(method, config):
    from .utils import results_dir
    name = resolve_trial(SEARCHES[method]["trial"]).name(config)
    return results_dir() / NB / f"v{VERSION}" / "search" / method / f"{name}.json"


def pending(methods=None):
    """Return [(method, config)] of the trials without a record."""
    return [(m, c) for m in (methods or SEARCHES) for c in configs(m)
            if not trial_path(m, c).exists()]


def run_trial(method, config, n_train=None, n_eval=None, threads=1):
    """Train one trial of ``method``'s search from epoch 0 (a leftover checkpoint of a killed
    attempt is removed first) and write its record; return the row."""
    import time

    from .campaign import code_version
    from .classification import RunConfig
    from .classification_trial import trial_checkpoint
    from .utils import atomic_write_bytes, checkpoints_dir, machine_info
    trial = resolve_trial(SEARCHES[method]["trial"])
    if SEARCHES[method]["trial"] == CLASSIFICATION_TRIAL:
        ck = trial_checkpoint(RunConfig.from_dict(config), f"{NB}/v{VERSION}")
    else:
        ck = checkpoints_dir() / f"{NB}/v{VERSION}" / f"{trial.name(config)}.pt"
    ck.unlink(missing_ok=True)
    fixed = {"notebook": f"{NB}/v{VERSION}", "threads": threads, "n_train": n_train, "n_eval": n_eval,
             "eval_samples": EVAL_SAMPLES, "checkpoint_every": 5}
    t0 = time.perf_counter()
    row = run_local_trial(trial, config, fixed, epoch_step=EPOCH_STEP, metric=METRIC)
    rec = {"plan_version": VERSION, "method": method, "row": row, "selected_on": "validation",
           "test_evaluated": False, "machine": machine_info("cpu"), "code": code_version(),
           "process_wall_s": round(time.perf_counter() - t0, 1)}
    atomic_write_bytes(trial_path(method, config), (json.dumps(rec, indent=1) + "\n").encode())
    return row


def eligible(row, max_epochs=None):
    """Whether a trial's row may be chosen: it ran every epoch 1..max_epochs without an error
    and no validation NLL is NaN (a diverged epoch)."""
    curve = dict((int(e), v) for e, v in row["val_curve"])
    return row.get("error") is None and \
        sorted(curve) == list(range(1, (max_epochs or MAX_EPOCHS) + 1)) and \
        all(v == v for v in curve.values())


def choose(rows, max_epochs=None, epoch_step=None, smooth=None):
    """Return the plan's choice among trial ``rows`` (validation numbers only): among the rows
    that ran every epoch (1..max_epochs in their validation curve) without an error, the setting
    and epoch e (a multiple of ``epoch_step``) with the lowest validation NLL averaged over epochs
    e - smooth + 1 .. e; ties: fewer epochs, then the name. None when no row is eligible."""
    max_epochs, epoch_step, smooth = (max_epochs or MAX_EPOCHS, epoch_step or EPOCH_STEP,
                                      smooth or SMOOTH)
    best = None
    for r in sorted(rows, key=lambda r: r["name"]):
        if not eligible(r, max_epochs):
            continue
        curve = dict((int(e), v) for e, v in r["val_curve"])
        for e in range(max(epoch_step, smooth), max_epochs + 1, epoch_step):
            score = sum(curve[k] for k in range(e - smooth + 1, e + 1)) / smooth
            key = (score, e, r["name"])
            if best is None or key < best[0]:
                best = (key, r, e)
    if best is None:
        return None
    (score, e, _), r, _ = best
    dict_curve = dict((int(k), v) for k, v in r["val_curve"])
    return {"name": r["name"], "config": {**r["config"], "epochs": e}, "metric": r["metric"],
            "val": score, "val_at_epoch": dict_curve[e], "epochs": e, "smooth": smooth}


def v2_twins(method="map"):
    """Return, for each finished trial of this version whose setting version 2 also trained
    (same seed, learning rate and regulariser; version 2 ran 30 epochs), the largest absolute
    difference of their validation NLL over version 2's epochs: a check that the code and the
    machine reproduce version 2's numbers (0.0 when they do; another CPU may differ in the last
    digits)."""
    old = Path(str(trial_path(method, configs(method)[0]).parent).replace(
        f"v{VERSION}", "v2"))
    if not old.exists():
        return []
    twins = {}
    for f in sorted(old.glob("*.json")):
        row = json.loads(f.read_text())["row"]
        key = tuple(sorted((k, v) for k, v in row["config"].items() if k != "epochs"))
        twins[key] = row
    out = []
    for c in configs(method):
        path = trial_path(method, c)
        key = tuple(sorted((k, v) for k, v in c.items() if k != "epochs"))
        if not path.exists() or key not in twins:
            continue
        new = dict((e, v) for e, v in json.loads(path.read_text())["row"]["val_curve"])
        old_curve = twins[key]["val_curve"]
        out.append({"trial": path.stem, "v2": twins[key]["name"], "epochs": len(old_curve),
                    "max_abs_diff": max(abs(new[e] - v) for e, v in old_curve if e in new)})
    return out


def chosen(method):
    """Return ``choose`` over the method's trial records, or None until every trial of its
    search has one."""
    rows = []
    for c in configs(method):
        path = trial_path(method, c)
        if not path.exists():
            return None
        rows.append(json.loads(path.read_text())["row"])
    return choose(rows)
