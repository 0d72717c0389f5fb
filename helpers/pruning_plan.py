"""Notebook 04's plan, version 2 (issue 34, item 4): SNR pruning against fair references.

Version 1 of notebook 04 prunes only BBB networks (by SNR, by |mu| and at random) and reads its
tables without a test. The paper's claim is that ranking by the posterior's SNR keeps accuracy
when most weights go; a reader needs the references a pruning paper would show: magnitude
pruning of the same BBB network (|mu|), and magnitude pruning of the SGD and dropout networks of
Table 1, at the same fractions, over Table 1's three seeds at 2x1200; and version 1's "the KL
weighting decides how prunable a network is" (one seed) over three seeds or not at all.

``write_plan()`` writes results/04_pruning/plan_v2.json, committed before any number it governs
exists (results/04_pruning/v2/**; a test checks the git order). ``run()`` trains the networks
missing on this machine from their Table 1 run records' configs (resumable: notebook 01's
per-epoch checkpoints) and writes one record per network as it finishes; ``summary()`` tests the
plan's claims with the project's statistics module (helpers.stats) and
``tools/pruning_refs.py analyse`` writes results/04_pruning/v2/summary.json.

Disclosed in the plan: BBB's own pruning numbers (results/04_pruning/snr.json, version 1: SNR,
|mu| and random on Table 1's BBB networks, and the eq. 9 network of seed 0) were seen before this
plan; they are adopted, not recomputed (their checkpoints are not on this machine). No number of
the SGD or dropout references, and none of the eq. 9 networks of seeds 1 and 2, existed.
"""
import json
import time
from dataclasses import asdict, replace
from pathlib import Path

NB = "04_pruning"
VERSION = 2
PLAN = Path("results") / NB / f"plan_v{VERSION}.json"
GOVERNS = [f"results/{NB}/v{VERSION}/**"]
H_MAIN, H_KL = 1200, 400
SEEDS = (0, 1, 2)
TESTED = (95, 98)
ALPHA = 0.05
# an arm: (network role, ranking)
ARMS = {"bbb_snr": ("bbb", "snr"), "bbb_magnitude": ("bbb", "magnitude"),
        "sgd_magnitude": ("sgd", "magnitude"), "dropout_magnitude": ("dropout", "magnitude"),
        "uniform_snr": ("uniform", "snr"), "blundell_snr": ("blundell", "snr")}
ARM_LABELS = {"bbb_snr": "BBB, SNR |μ|/σ", "bbb_magnitude": "BBB, |μ|",
              "sgd_magnitude": "SGD, |w|", "dropout_magnitude": "dropout, |w|",
              "uniform_snr": "BBB eq. 8 (1/M), SNR", "blundell_snr": "BBB eq. 9 (π_i), SNR"}
# network roles: Table 1's method key, width, and the KL weighting (BBB only)
ROLES = {"bbb": ("bbb_mixture", H_MAIN, None), "sgd": ("sgd", H_MAIN, None),
         "dropout": ("dropout", H_MAIN, None), "uniform": ("bbb_mixture", H_KL, "uniform"),
         "blundell": ("bbb_mixture", H_KL, "blundell")}
REFERENCES = ("bbb_magnitude", "sgd_magnitude", "dropout_magnitude")
FAMILIES = {
    "error after pruning": [f"bbb_snr < {r} at {f}%" for f in TESTED for r in REFERENCES],
    "error added by pruning": [f"bbb_snr < {r} at {f}%" for f in TESTED for r in REFERENCES],
    "KL weighting": [f"uniform_snr < blundell_snr at {f}%" for f in TESTED],
}
METRIC = {"error after pruning": "test error with the fraction removed",
          "error added by pruning": "test error with the fraction removed minus the same "
                                    "network's unpruned test error (same predictor)",
          "KL weighting": "test error with the fraction removed by SNR, 2x400"}


def plan():
    """Return the plan (a fresh copy: changing it changes nothing of this module's)."""
    return json.loads(json.dumps(_plan()))


def _plan():
    return {
        "version": VERSION, "notebook": NB,
        "question": "Does ranking a BBB network's weights by SNR keep its accuracy better than "
                    "magnitude pruning (of the same network's means, and of Table 1's SGD and "
                    "dropout networks), and does the KL weighting change how prunable a BBB "
                    "network is, over Table 1's three seeds?",
        "networks": {
            "bbb": f"Table 1's scale-mixture run at 2x{H_MAIN}, seeds {list(SEEDS)} (version 1's "
                   "analysis adopted)",
            "sgd": f"Table 1's SGD run at 2x{H_MAIN}, seeds {list(SEEDS)}, trained again here "
                   "from its run record's config (its checkpoint is not on this machine); the "
                   "record's test error and the retrained one are both reported",
            "dropout": f"Table 1's dropout run at 2x{H_MAIN}, same",
            "uniform": f"Table 1's scale-mixture run at 2x{H_KL} (eq. 8's 1/M KL weights), seeds "
                       f"{list(SEEDS)} (version 1's analysis adopted)",
            "blundell": f"the same 2x{H_KL} recipe with eq. 9's pi_i KL weights: seed 0 from "
                        "version 1, seeds 1 and 2 trained here",
        },
        "rankings": "over all weight matrices together, biases kept, no retraining after "
                    "pruning: BBB by SNR |mu|/sigma or by |mu| (posterior means predict); SGD and "
                    "dropout by |w| (the network predicts, dropout off); random for every "
                    "network as a floor",
        "fractions": {"reported": [0, 50, 75, 95, 98, 99, 100], "tested": list(TESTED)},
        "arms": {k: list(v) for k, v in ARMS.items()},
        "tests": {"families": FAMILIES, "metric": METRIC,
                  "test": "two-sided paired t-test over the seeds (seed s of one arm against "
                          "seed s of the other), Holm within each family "
                          "(helpers.stats.ordering_family), decides the verdict word; the exact "
                          "sign test beside it decides nothing",
                  "alpha": ALPHA,
                  "verdict_words": ["holds", "reversed", f"not resolved at {len(SEEDS)} seeds"]},
        "selection": "nothing is chosen: every network is Table 1's (chosen on validation in "
                     "notebook 01); the test set only reports each fraction",
        "disclosed": "BBB's SNR, |mu| and random numbers (version 1, results/04_pruning/snr.json) "
                     "and the eq. 9 network of seed 0 were seen before this plan; the references "
                     "(SGD and dropout magnitude pruning) and the eq. 9 networks of seeds 1 and 2 "
                     "do not exist yet. Three seeds are Table 1's; at 3 seeds only large, "
                     "consistent differences can resolve.",
        "governs": GOVERNS,
    }


def validate(p):
    """Return the breaches of the protocol in plan ``p`` (empty: none)."""
    bad = []
    if len(p["tests"]["verdict_words"]) != 3:
        bad.append("verdict words: holds, reversed, not resolved")
    for family, claims in p["tests"]["families"].items():
        for claim in claims:
            lhs, rest = claim.split(" < ")
            rhs, at = rest.split(" at ")
            if {lhs, rhs} - set(p["arms"]):
                bad.append(f"{family}: {claim!r} names an arm the plan does not declare")
            if int(at.rstrip("%")) not in p["fractions"]["tested"]:
                bad.append(f"{family}: {claim!r} is not at a tested fraction")
    if len(SEEDS) < 3:
        bad.append("at least three seeds")
    return bad


def write_plan(root=None):
    from .utils import PROJECT_ROOT, atomic_write_bytes
    root = Path(root or PROJECT_ROOT)
    p = plan()
    bad = validate(p)
    if bad:
        raise ValueError("the plan breaks the protocol:\n- " + "\n- ".join(bad))
    return atomic_write_bytes(root / PLAN, (json.dumps(p, indent=1) + "\n").encode())


# ---- the networks ----

def out_dir():
    from .utils import results_dir
    return results_dir() / NB / f"v{VERSION}"


def record_path(name):
    return out_dir() / "networks" / f"{name}.json"


def _v1():
    from .utils import results_dir
    path = results_dir() / NB / "snr.json"
    return json.loads(path.read_text()) if path.exists() else None


def jobs(table=None):
    """Return the plan's networks: dicts {role, H, seed, name, cfg, adopted} (``adopted``: the
    version 1 analysis entry it takes, or None when it is trained and pruned here)."""
    from . import pruning
    from .utils import load_results
    table = load_results("01_mnist_classification", "table1") if table is None else table
    v1 = _v1()
    entries = {} if v1 is None else {m["name"]: m for m in v1["metrics"]["models"]}
    alt = None if v1 is None else v1["metrics"].get("other_kl_weighting")
    if alt:
        entries[alt["name"]] = alt
    out = []
    for role, (key, H, weighting) in ROLES.items():
        for seed in SEEDS:
            cfg = pruning._table_config(table, H, seed, key)
            if cfg is None:
                raise ValueError(f"Table 1 has no {key} run at 2x{H} seed {seed}: run notebook "
                                 "01 (`make table1`) first")
            if weighting is not None and cfg.kl_weighting != weighting:
                cfg = replace(cfg, kl_weighting=weighting)
            adopted = entries.get(cfg.name) if role in ("bbb", "uniform", "blundell") else None
            out.append({"role": role, "H": H, "seed": seed, "name": cfg.name, "cfg": cfg,
                        "adopted": adopted})
    return out


def pending(table=None):
    """The networks still to train and prune here (no record, nothing adopted)."""
    return [j for j in jobs(table) if j["adopted"] is None and not record_path(j["name"]).exists()]


def run_job(job, data, progress_fn=print):
    """Train (or resume, or load) ``job``'s network, prune it, write its record atomically."""
    from . import pruning
    from .campaign import code_version
    from .classification import run
    from .utils import atomic_write_bytes, machine_info, results_dir
    cfg = job["cfg"]
    t0 = time.perf_counter()
    model, rec = run(cfg, data, eval_samples=10, desc=f"{cfg.method} 2x{cfg.H} s{cfg.seed} "
                     "(for pruning)")
    if progress_fn:
        progress_fn(f"pruning {cfg.name}")
    if cfg.bayesian:
        analysis = pruning.analyse(model, data, job["seed"])
    else:
        analysis = pruning.error_after_pruning(model, data, ("magnitude", "random"), job["seed"])
    table1 = results_dir() / "01_mnist_classification" / "runs" / f"{cfg.name}.json"
    recorded = json.loads(table1.read_text())["metrics"] if table1.exists() else None
    out = {"plan_version": VERSION, "role": job["role"], "H": job["H"], "seed": job["seed"],
           "name": cfg.name, "config": asdict(cfg),
           "trained_here": {"test_error": rec["metrics"]["test_error"],
                            "predictor": rec["metrics"].get("predictor"),
                            "train_wall_s": rec["metrics"]["train_wall_s"]},
           "table1_record": None if recorded is None else {
               "test_error": recorded["test_error"], "predictor": recorded.get("predictor"),
               "train_wall_s": recorded["train_wall_s"]},
           "analysis": analysis, "process_wall_s": time.perf_counter() - t0,
           "machine": machine_info(data.x_train.device), "code": code_version(),
           "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    path = record_path(cfg.name)
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_bytes(path, (json.dumps(out, indent=1) + "\n").encode())
    return out


# ---- the analysis ----

def entries(table=None):
    """Return {role: {seed: analysis}} of every network analysed so far (adopted or here)."""
    out = {}
    for j in jobs(table):
        if j["adopted"] is not None:
            a = j["adopted"]
        elif record_path(j["name"]).exists():
            a = json.loads(record_path(j["name"]).read_text())["analysis"]
        else:
            continue
        out.setdefault(j["role"], {})[j["seed"]] = a
    return out


def arm_values(found, arm, fraction, added=False):
    """{seed: value} of ``arm`` at ``fraction`` (``added``: minus the unpruned error)."""
    role, kind = ARMS[arm]
    out = {}
    for seed, a in found.get(role, {}).items():
        e = a["error_at"][kind]
        out[seed] = e[str(fraction)] - (e["0"] if added else 0.0)
    return out


def _parse(claim):
    lhs, rest = claim.split(" < ")
    rhs, at = rest.split(" at ")
    return lhs, rhs, int(at.rstrip("%"))


def summary(table=None, found=None, networks=None):
    """Return what results/04_pruning/v2/summary.json holds: every family's claims tested
    (paired over the seeds both arms have; per-seed values beside), the table of every arm's
    per-seed error at every reported fraction, the networks still missing (interim while any
    is), and each retrained network's test error against its Table 1 record. ``found``
    ({role: {seed: analysis}}) and ``networks`` (``jobs()``) are read when not given."""
    from . import pruning, stats
    networks = jobs(table) if networks is None else networks
    found = entries(table) if found is None else found
    families = {}
    for family, claims in FAMILIES.items():
        pairs, extra = {}, {}
        for claim in claims:
            lhs, rhs, f = _parse(claim)
            added = family == "error added by pruning"
            a, b = arm_values(found, lhs, f, added), arm_values(found, rhs, f, added)
            seeds = sorted(set(a) & set(b))
            pairs[claim] = ([a[s] for s in seeds], [b[s] for s in seeds]) \
                if len(seeds) >= 2 else None
            extra[claim] = {"seeds": seeds, "lhs": [a[s] for s in seeds],
                            "rhs": [b[s] for s in seeds]}
        families[family] = {k: {**v, **extra[k]}
                            for k, v in stats.ordering_family(pairs, alpha=ALPHA).items()}
    table_rows = {arm: {str(f): arm_values(found, arm, f) for f in pruning.FRACTIONS}
                  for arm in ARMS}
    missing = [j["name"] for j in networks if j["seed"] not in found.get(j["role"], {})]
    retrained = []
    for j in networks:
        path = record_path(j["name"])
        if path.exists():
            r = json.loads(path.read_text())
            retrained.append({"name": j["name"], "role": j["role"], "seed": j["seed"],
                              "here": r["trained_here"], "table1": r["table1_record"],
                              "machine": r["machine"].get("cpu"),
                              "process_wall_s": r["process_wall_s"],
                              "code": r["code"]})
    return {"plan": str(PLAN), "alpha": ALPHA, "interim": bool(missing), "missing": missing,
            "seeds": list(SEEDS), "families": families, "table": table_rows,
            "retrained": retrained}


def write_summary(table=None):
    from .utils import atomic_write_bytes
    s = summary(table)
    path = out_dir() / "summary.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_bytes(path, (json.dumps(s, indent=1) + "\n").encode())
    return path


def load_summary():
    """Return results/04_pruning/v2/summary.json, or None before its first analysis."""
    path = out_dir() / "summary.json"
    return json.loads(path.read_text()) if path.exists() else None


# ---- what notebook 04 shows ----

def _pct(vals):
    import statistics
    if not vals:
        return "—"
    sd = f" ± {100 * statistics.stdev(vals):.2f}" if len(vals) > 1 else ""
    return f"{100 * statistics.fmean(vals):.2f}{sd}%"


def table_rows(summary, arms=("bbb_snr", "bbb_magnitude", "sgd_magnitude", "dropout_magnitude"),
               fractions=(0, 50, 75, 95, 98, 99)):
    """Return (header, rows): test error (mean ± sd over the seeds present, in %) of every arm
    at every fraction removed, and the seeds each arm has."""
    t = summary["table"]
    header = ["removed"] + [ARM_LABELS[a] for a in arms]
    rows = [[f"{f}%"] + [_pct(list(t[a][str(f)].values())) for a in arms] for f in fractions]
    rows.append(["seeds"] + [", ".join(sorted(map(str, t[a]["0"]), key=int)) or "none"
                             for a in arms])
    return header, rows


def _claim_label(claim):
    lhs, rhs, f = _parse(claim)
    return f"{ARM_LABELS[lhs]} < {ARM_LABELS[rhs]}, {f}% removed"


def test_rows(summary, families=None):
    """Return (header, rows): each claim of ``families`` (default: all) with its per-seed
    values (percentage points), the paired mean difference and its 95 % interval, Holm's p,
    the sign test's p and the verdict word (marked interim while networks are missing)."""
    header = ["family", "claim", "per seed: a | b (%)", "mean a − b (pp)",
              "95% interval (pp, unadjusted)", "p (Holm)", "sign test p", "verdict"]
    rows = []
    for family, claims in summary["families"].items():
        if families is not None and family not in families:
            continue
        for claim, r in claims.items():
            tt, st = r.get("t_test"), r.get("sign_test")
            seeds = "; ".join(f"s{s}: {100 * a:.2f} | {100 * b:.2f}"
                              for s, a, b in zip(r["seeds"], r["lhs"], r["rhs"])) or "—"
            rows.append([family, _claim_label(claim), seeds,
                         f"{100 * tt['mean_diff']:+.2f}" if tt else "—",
                         f"[{100 * tt['ci'][0]:+.2f}, {100 * tt['ci'][1]:+.2f}]"
                         if tt and tt.get("ci") else "—",
                         f"{r['p_holm']:.3g}" if r.get("p_holm") is not None else "—",
                         f"{st['p']:.3g}" if st else "—",
                         r["verdict"] + (" (interim)" if summary["interim"] else "")])
    return header, rows


def retrain_rows(summary):
    """Return (header, rows): each network trained here, its test error against Table 1's run
    record of the same config, and the wall time here."""
    rows = [[f"{r['role']} seed {r['seed']}", f"{100 * r['here']['test_error']:.2f}%",
             "—" if r["table1"] is None else f"{100 * r['table1']['test_error']:.2f}%",
             f"{r['process_wall_s'] / 60:.0f} min", r["machine"] or "?"]
            for r in summary["retrained"]]
    return ["network", "test error here", "Table 1's record", "wall time here", "CPU"], rows


def standing_text(summary):
    """One paragraph (Markdown) of what the plan's tests say so far, its numbers from
    ``summary``: per family, which claims hold, are reversed or are not resolved (or not
    measured yet), at which fractions."""
    n_missing = len(summary["missing"])
    head = ("**Where plan v2 stands** (" + (f"interim: {n_missing} of its networks still to "
                                            "train" if summary["interim"] else "complete")
            + f"; paired t-test over seeds, Holm within each family, α = {summary['alpha']}). ")
    parts = []
    for family, claims in summary["families"].items():
        by = {}
        for claim, r in claims.items():
            lhs, rhs, f = _parse(claim)
            word = r["verdict"]
            by.setdefault(word, {}).setdefault(rhs, []).append(f"{f}%")
        subject = ("eq. 8's 1/M weights give a lower error after SNR pruning than eq. 9's"
                   if family == "KL weighting" else "BBB pruned by SNR below")
        said = "; ".join(f"{w}" + ("" if family == "KL weighting" else " against ")
                         + ", ".join(("" if family == "KL weighting" else ARM_LABELS[rhs])
                                     + f" ({' and '.join(fs)} removed)" for rhs, fs in d.items())
                         for w, d in by.items())
        parts.append(f"*{family}* ({subject}): {said}")
    return head + ". ".join(parts) + "."


def takeaways(summary):
    """Notebook 04's takeaways on plan v2 (Markdown bullets), rendered from ``summary``: at each
    tested fraction the mean test error of every arm with its verdict against BBB by SNR, and
    the KL-weighting verdict."""
    import statistics
    t, fam = summary["table"], summary["families"]
    tag = " (interim)" if summary["interim"] else ""

    def mean(arm, f):
        v = list(t[arm][str(f)].values())
        n = "" if len(v) == len(SEEDS) else f" ({len(v)} seed{'s' if len(v) != 1 else ''})"
        return f"{100 * statistics.fmean(v):.2f} %{n}" if v else "not measured"
    lines = []
    for f in TESTED:
        rivals = "; ".join(f"{ARM_LABELS[r]} {mean(r, f)} "
                           f"({fam['error after pruning'][f'bbb_snr < {r} at {f}%']['verdict']})"
                           for r in REFERENCES)
        lines.append(f"- {f} % of the weights removed, no retraining: BBB by SNR "
                     f"{mean('bbb_snr', f)} against {rivals}{tag}.")
    kl = "; ".join(f"{f} %: eq. 8 {mean('uniform_snr', f)}, eq. 9 {mean('blundell_snr', f)} "
                   f"({fam['KL weighting'][f'uniform_snr < blundell_snr at {f}%']['verdict']})"
                   for f in TESTED)
    lines.append(f"- The KL weighting, SNR pruning of the 2×{H_KL} recipe over "
                 f"{len(SEEDS)} seeds: {kl}{tag}.")
    return "\n".join(lines)
