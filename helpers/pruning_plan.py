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
ARMS_V2 = {"bbb_snr": ("bbb", "snr"), "bbb_magnitude": ("bbb", "magnitude"),
        "sgd_magnitude": ("sgd", "magnitude"), "dropout_magnitude": ("dropout", "magnitude"),
        "uniform_snr": ("uniform", "snr"), "blundell_snr": ("blundell", "snr")}
ARMS = dict(ARMS_V2)  # every tested arm (plan v3 adds one below)
# random pruning of each network: the floor every table shows, tested by no claim
FLOORS = {"bbb_random": ("bbb", "random"), "sgd_random": ("sgd", "random"),
          "dropout_random": ("dropout", "random"), "start_random": ("start", "random")}
ARM_LABELS = {"bbb_random": "BBB, random", "sgd_random": "SGD, random",
              "dropout_random": "dropout, random", "start_random": "starting network, random",
              "bbb_snr": "BBB, SNR |μ|/σ", "bbb_magnitude": "BBB, |μ|",
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
# claims whose numbers (version 1's) had been seen when plan v2 was written: not confirmatory
SEEN_BEFORE_PLAN = {f"bbb_snr < bbb_magnitude at {f}%" for f in TESTED}

# plan v3, an addendum after plan v2's first reference numbers (SGD seeds 0 and 1) and a
# referee's reading: the 2x1200 BBB networks start from a 60-epoch SGD network of the same seed
# (Table 1's warm start) and are pulled towards zero by the prior; magnitude pruning of that
# starting network isolates what BBB's training adds to it. Its own family; v2's unchanged.
VERSION_V3 = 3
PLAN_V3 = Path("results") / NB / f"plan_v{VERSION_V3}.json"
GOVERNS_V3 = [f"results/{NB}/v{VERSION_V3}/**"]
ARMS["start_magnitude"] = ("start", "magnitude")
ARM_LABELS["start_magnitude"] = "BBB's starting SGD network, |w|"
ROLE_VERSION = {"start": VERSION_V3}  # roles of plan v3 (every other role: plan v2)
FAMILIES_V3 = {"against BBB's starting network":
               [f"bbb_snr < start_magnitude at {f}%" for f in TESTED]}
FAMILIES_BY_VERSION = {VERSION: FAMILIES, VERSION_V3: FAMILIES_V3}

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
        "arms": {k: list(v) for k, v in ARMS_V2.items()},
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


def plan_v3():
    """Return plan v3 (the addendum; a fresh copy)."""
    return json.loads(json.dumps({
        "version": VERSION_V3, "notebook": NB, "extends": str(PLAN),
        "question": "Does SNR pruning of Table 1's 2x1200 BBB networks keep their accuracy better "
                    "than magnitude pruning of the SGD networks they start from (the warm start "
                    "of Table 1's recipe: the same seed's 60-epoch SGD network)?",
        "networks": {"start": "the warm-start source of Table 1's 2x1200 scale-mixture run of each "
                              f"seed {list(SEEDS)}, trained again here from its config (its run "
                              "record's test error reported beside the retrained one)"},
        "arms": {"start_magnitude": ["start", "magnitude"]},
        "rankings": "as plan v2: over all weight matrices together, biases kept, no retraining; "
                    "the network predicts",
        "fractions": {"reported": [0, 50, 75, 95, 98, 99, 100], "tested": list(TESTED)},
        "tests": {"families": FAMILIES_V3, "metric": {k: METRIC["error after pruning"]
                                                      for k in FAMILIES_V3},
                  "test": "as plan v2: two-sided paired t-test over the seeds, Holm within the "
                          "family (helpers.stats.ordering_family); sign test beside it",
                  "alpha": ALPHA,
                  "verdict_words": ["holds", "reversed", f"not resolved at {len(SEEDS)} seeds"]},
        "unchanged": "plan v2's networks, families and verdicts stand as declared",
        "disclosed": "written after plan v2's SGD references of seeds 0 and 1 had been seen "
                     "(magnitude pruning of Table 1's unregularised SGD network loses far more "
                     "than BBB's SNR pruning) and after a referee noted that this compares the "
                     "regulariser more than the ranking; no number of the starting networks' "
                     "pruning existed. A weight-decayed MAP reference (the issue's optional arm) "
                     "is not added: Table 1 has no such network at 2x1200 and a search of its "
                     "own would be needed.",
        "governs": GOVERNS_V3,
    }))


def validate(p):
    """Return the breaches of the protocol in plan ``p`` (empty: none)."""
    bad = []
    if len(p["tests"]["verdict_words"]) != 3:
        bad.append("verdict words: holds, reversed, not resolved")
    arms = set(p["arms"]) | (set(ARMS) if p.get("extends") else set())
    for family, claims in p["tests"]["families"].items():
        for claim in claims:
            lhs, rhs, at = _parse(claim)
            if at not in p["fractions"]["tested"]:
                bad.append(f"{family}: {claim!r} is not at a tested fraction")
            if {lhs, rhs} - arms:
                bad.append(f"{family}: {claim!r}: unknown arm")
    if len(SEEDS) < 3:
        bad.append("at least three seeds")
    return bad


def write_plan(root=None, version=VERSION):
    from .utils import PROJECT_ROOT, atomic_write_bytes
    root = Path(root or PROJECT_ROOT)
    p = plan() if version == VERSION else plan_v3()
    bad = validate(p)
    if bad:
        raise ValueError("the plan breaks the protocol:\n- " + "\n- ".join(bad))
    path = PLAN if version == VERSION else PLAN_V3
    return atomic_write_bytes(root / path, (json.dumps(p, indent=1) + "\n").encode())


# ---- the networks ----

def out_dir(version=VERSION):
    from .utils import results_dir
    return results_dir() / NB / f"v{version}"


def record_path(name, version=VERSION):
    return out_dir(version) / "networks" / f"{name}.json"


def job_path(job):
    """Where ``job``'s record goes: under the folder of the plan version that declared it."""
    return record_path(job["name"], ROLE_VERSION.get(job["role"], VERSION))


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
            if role == "bbb":  # plan v3: the SGD network this BBB run starts from
                src = cfg.init_source()
                if src is not None:
                    out.append({"role": "start", "H": H, "seed": seed, "name": src.name,
                                "cfg": src, "adopted": None})
    return out


def pending(table=None):
    """The networks still to train and prune here (no record, nothing adopted): plan v2's
    first, then plan v3's."""
    todo = [j for j in jobs(table) if j["adopted"] is None and not job_path(j).exists()]
    return sorted(todo, key=lambda j: ROLE_VERSION.get(j["role"], VERSION))


def run_job(job, data, progress_fn=print):
    """Train (or resume, or load) ``job``'s network, prune it, write its record atomically."""
    from . import pruning
    from .campaign import code_version
    from .classification import run
    from .utils import atomic_write_bytes, machine_info
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
    recorded = _table1_metrics(cfg.name)
    source = None
    if cfg.init_from is not None:  # the warm start's source, trained here too: checked as well
        src_cfg = cfg.init_source()
        _, src_rec = run(src_cfg, data, eval_samples=10, desc=f"{src_cfg.method} (warm start)")
        src_t1 = _table1_metrics(src_cfg.name)
        source = {"name": src_cfg.name, "test_error": src_rec["metrics"]["test_error"],
                  "table1_test_error": None if src_t1 is None else src_t1["test_error"]}
    out = {"plan_version": ROLE_VERSION.get(job["role"], VERSION), "role": job["role"],
           "H": job["H"], "seed": job["seed"], "source": source,
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
    path = job_path(job)
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_bytes(path, (json.dumps(out, indent=1) + "\n").encode())
    return out


def _table1_metrics(name):
    from .utils import results_dir
    path = results_dir() / "01_mnist_classification" / "runs" / f"{name}.json"
    return json.loads(path.read_text())["metrics"] if path.exists() else None


# ---- the analysis ----

def entries(table=None):
    """Return {role: {seed: analysis}} of every network analysed so far (adopted or here)."""
    out = {}
    for j in jobs(table):
        if j["adopted"] is not None:
            a = j["adopted"]
        elif job_path(j).exists():
            a = json.loads(job_path(j).read_text())["analysis"]
        else:
            continue
        out.setdefault(j["role"], {})[j["seed"]] = a
    return out


def arm_values(found, arm, fraction, added=False):
    """{seed: value} of ``arm`` at ``fraction`` (``added``: minus the unpruned error)."""
    role, kind = {**ARMS, **FLOORS}[arm]
    out = {}
    for seed, a in found.get(role, {}).items():
        if kind not in a["error_at"]:
            continue
        e = a["error_at"][kind]
        out[seed] = e[str(fraction)] - (e["0"] if added else 0.0)
    return out


def _parse(claim):
    lhs, rest = claim.split(" < ")
    rhs, at = rest.split(" at ")
    return lhs, rhs, int(at.rstrip("%"))


def summary(table=None, found=None, networks=None, version=VERSION):
    """Return what results/04_pruning/v<version>/summary.json holds: the plan version's
    families with every claim tested (paired over the seeds both arms have; per-seed values
    beside; claims whose numbers were seen before the plan marked), what a claim needs to
    resolve at this many seeds (the smallest Holm threshold's |t|, the sign test's smallest p),
    the table of every arm's per-seed error at every reported fraction, the networks still
    missing (interim while any is), and each network trained here against its Table 1 record
    (and its warm start's). ``found`` ({role: {seed: analysis}}) and ``networks`` (``jobs()``)
    are read when not given."""
    from . import pruning, stats
    families_declared = FAMILIES_BY_VERSION[version]
    networks = jobs(table) if networks is None else networks
    found = entries(table) if found is None else found
    if version == VERSION:
        networks = [j for j in networks if ROLE_VERSION.get(j["role"], VERSION) == VERSION]
        arms = [a for a, (role, _) in {**ARMS, **FLOORS}.items()
                if ROLE_VERSION.get(role, VERSION) == VERSION]
    else:
        networks = [j for j in networks if j["role"] in ("bbb", "start")]
        arms = ["bbb_snr", "start_magnitude", "bbb_random", "start_random"]
    families, needs = {}, {}
    for family, claims in families_declared.items():
        pairs, extra = {}, {}
        for claim in claims:
            lhs, rhs, f = _parse(claim)
            added = family == "error added by pruning"
            a, b = arm_values(found, lhs, f, added), arm_values(found, rhs, f, added)
            seeds = sorted(set(a) & set(b))
            pairs[claim] = ([a[s] for s in seeds], [b[s] for s in seeds]) \
                if len(seeds) >= 2 else None
            extra[claim] = {"seeds": seeds, "lhs": [a[s] for s in seeds],
                            "rhs": [b[s] for s in seeds],
                            "seen_before_plan": claim in SEEN_BEFORE_PLAN}
        families[family] = {k: {**v, **extra[k]}
                            for k, v in stats.ordering_family(pairs, alpha=ALPHA).items()}
        n, m = len(SEEDS), len(claims)
        needs[family] = {"n_seeds": n, "family_size": m,
                         "t_for_smallest_p": stats.t_ppf(1 - ALPHA / (2 * m), n - 1),
                         "smallest_sign_test_p": 2 * 0.5 ** n}
    table_rows = {arm: {str(f): arm_values(found, arm, f) for f in pruning.FRACTIONS}
                  for arm in arms}
    missing = [j["name"] for j in networks if j["seed"] not in found.get(j["role"], {})]
    retrained = []
    for j in networks:
        path = job_path(j)
        if path.exists():
            r = json.loads(path.read_text())
            retrained.append({"name": j["name"], "role": j["role"], "seed": j["seed"],
                              "here": r["trained_here"], "table1": r["table1_record"],
                              "source": r.get("source"), "machine": r["machine"].get("cpu"),
                              "process_wall_s": r["process_wall_s"], "code": r["code"]})
    return {"plan": str(PLAN if version == VERSION else PLAN_V3), "version": version,
            "alpha": ALPHA, "interim": bool(missing), "missing": missing, "seeds": list(SEEDS),
            "families": families, "needs": needs, "table": table_rows, "retrained": retrained}


def write_summary(table=None, version=VERSION):
    """Write results/04_pruning/v<version>/summary.json; return (path, summary)."""
    from .utils import atomic_write_bytes
    s = summary(table, version=version)
    path = out_dir(version) / "summary.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_bytes(path, (json.dumps(s, indent=1) + "\n").encode())
    return path, s


def load_summary(version=VERSION):
    """Return results/04_pruning/v<version>/summary.json, or None before its first analysis."""
    path = out_dir(version) / "summary.json"
    return json.loads(path.read_text()) if path.exists() else None


# ---- what notebook 04 shows ----

def _pct(vals):
    from .pruning import _mean_sd
    return _mean_sd(vals) if vals else "—"


def table_rows(summary, arms=None, fractions=(0, 50, 75, 95, 98, 99)):
    """Return (header, rows): test error (mean ± sd over the seeds present, in %) of every arm
    of ``summary`` (or ``arms``) at every fraction removed, and the seeds each arm has."""
    t = summary["table"]
    arms = list(t) if arms is None else list(arms)
    header = ["removed"] + [ARM_LABELS[a] for a in arms]
    rows = [[f"{f}%"] + [_pct(list(t[a][str(f)].values())) for a in arms] for f in fractions]
    rows.append(["seeds"] + [", ".join(sorted(map(str, t[a]["0"]), key=int)) or "none"
                             for a in arms])
    return header, rows


def _claim_label(claim):
    lhs, rhs, f = _parse(claim)
    seen = " [numbers seen before the plan]" if claim in SEEN_BEFORE_PLAN else ""
    return f"{ARM_LABELS[lhs]} < {ARM_LABELS[rhs]}, {f}% removed{seen}"


def _word(summary, r):
    """The verdict as the notebook shows it: none while the plan's networks are incomplete
    (the plan declares no interim look), else the statistics module's word."""
    if r["verdict"] == "not measured yet":
        return r["verdict"]
    if summary["interim"]:
        return f"pending ({len(summary['missing'])} networks to train)"
    return r["verdict"]


def test_rows(summary, families=None):
    """Return (header, rows): each claim of ``families`` (default: all) with its seeds and
    per-seed values (percentage points), the paired mean difference and its 95 % interval,
    Holm's p and the verdict word (pending while networks are missing); the sign test's
    smallest possible p is in ``needs_text``."""
    header = ["family", "claim a < b", "seeds", "per seed: a vs b (%)", "mean a − b (pp)",
              "95% interval (pp, unadjusted)", "p (Holm)", "verdict"]
    rows = []
    for family, claims in summary["families"].items():
        if families is not None and family not in families:
            continue
        for claim, r in claims.items():
            tt = r.get("t_test")
            seeds = "; ".join(f"s{s}: {100 * a:.2f} vs {100 * b:.2f}"
                              for s, a, b in zip(r["seeds"], r["lhs"], r["rhs"])) or "—"
            rows.append([family, _claim_label(claim), str(len(r["seeds"])), seeds,
                         f"{100 * tt['mean_diff']:+.2f}" if tt else "—",
                         f"[{100 * tt['ci'][0]:+.2f}, {100 * tt['ci'][1]:+.2f}]"
                         if tt and tt.get("ci") else "—",
                         f"{r['p_holm']:.3g}" if r.get("p_holm") is not None else "—",
                         _word(summary, r)])
    return header, rows


def needs_text(summary):
    """One sentence per family: what a claim needs to resolve at the plan's seeds (Markdown)."""
    parts = [f"*{family}*: {v['family_size']} claims at {v['n_seeds']} seeds, so the smallest "
             f"p passes Holm only with |t| > {v['t_for_smallest_p']:.1f} (df {v['n_seeds'] - 1})"
             for family, v in summary["needs"].items()]
    return ("**How to read the verdicts.** A claim \"a < b\" *holds* when the two-sided paired "
            "t-test over the seeds gives a Holm-adjusted p below "
            f"{summary['alpha']} and a is below b; *reversed* when p is below it and a is above "
            "b; else it is *not resolved*. What that needs here — " + "; ".join(parts)
            + ". So a large, consistent difference can still end \"not resolved\" at this "
            "many seeds.")


def retrain_rows(summary):
    """Return (header, rows): each network trained here (and the warm start it trained from),
    its test error against Table 1's run record of the same config, and its training time."""
    labels = {"sgd": "SGD", "dropout": "dropout", "blundell": "BBB eq. 9 (π_i)",
              "start": "BBB's starting SGD network"}
    rows = []
    for r in summary["retrained"]:
        rows.append([f"{labels.get(r['role'], r['role'])} 2×{H_KL if r['role'] == 'blundell' else H_MAIN}"
                     f", seed {r['seed']}", f"{100 * r['here']['test_error']:.2f}%",
                     "—" if r["table1"] is None else f"{100 * r['table1']['test_error']:.2f}%",
                     f"{r['here']['train_wall_s'] / 60:.0f} min", r["machine"] or "?"])
        src = r.get("source")
        if src:
            rows.append(["  its SGD warm start", f"{100 * src['test_error']:.2f}%",
                         "—" if src["table1_test_error"] is None
                         else f"{100 * src['table1_test_error']:.2f}%", "", ""])
    return ["network", "test error here", "Table 1's record", "training time here", "CPU"], rows


def standing_text(summary):
    """One paragraph (Markdown) of where the plan version stands, from ``summary``: pending
    while networks are missing (no verdict word), else per family which claims hold, are
    reversed or are not resolved, at which fractions."""
    v = summary.get("version", VERSION)
    if summary["interim"]:
        return (f"**Plan v{v} is not complete**: {len(summary['missing'])} of its networks "
                "are still to train, so no verdict is shown (the plan declares no interim "
                "look); the values so far are in the tables.")
    head = (f"**Plan v{v}, complete** (paired t-test over seeds, Holm within each family, "
            f"α = {summary['alpha']}). ")
    parts = []
    for family, claims in summary["families"].items():
        by = {}
        for claim, r in claims.items():
            lhs, rhs, f = _parse(claim)
            by.setdefault(r["verdict"], {}).setdefault(rhs, []).append(f"{f}%")
        kl = family == "KL weighting"
        subject = ("eq. 8's 1/M weights give a lower error after SNR pruning than eq. 9's"
                   if kl else "BBB pruned by SNR below")
        said = "; ".join(w + ("" if kl else " against ")
                         + ", ".join(("" if kl else ARM_LABELS[rhs])
                                     + f" ({' and '.join(fs)} removed)" for rhs, fs in d.items())
                         for w, d in by.items())
        parts.append(f"*{family}* ({subject}): {said}")
    return head + ". ".join(parts) + "."


def takeaways(summary, v3=None):
    """Notebook 04's takeaways on plans v2 and v3 (Markdown bullets), rendered from their
    summaries: at each tested fraction the mean test error of every arm with its verdict
    against BBB by SNR (pending while a plan is incomplete), and the KL-weighting verdict."""
    import statistics
    t, fam = summary["table"], summary["families"]
    if v3 is not None:
        t = {**t, **v3["table"]}

    def mean(arm, f):
        v = list(t[arm][str(f)].values())
        n = "" if len(v) == len(SEEDS) else f" ({len(v)} seed{'s' if len(v) != 1 else ''})"
        return f"{100 * statistics.fmean(v):.2f} %{n}" if v else "not measured"

    def word(s, family, claim):
        return _word(s, s["families"][family][claim])
    lines = []
    if not summary["interim"]:
        refs = ("sgd_magnitude", "dropout_magnitude")
        fam2 = summary["families"]["error after pruning"]
        claims = [fam2[f"bbb_snr < {r} at {f}%"] for r in refs for f in TESTED]
        below = sum(a < b for c in claims for a, b in zip(c["lhs"], c["rhs"]))
        pairs = sum(len(c["lhs"]) for c in claims)
        vals = [v for r in refs for f in TESTED for v in t[r][str(f)].values()]
        own = [v for f in TESTED for v in t["bbb_snr"][str(f)].values()]
        n_hold = sum(c["verdict"] == "holds" for c in claims)
        others = {c["verdict"] for c in claims if c["verdict"] != "holds"}
        lines.append(f"- Pruned by magnitude without retraining, Table 1's SGD and dropout networks "
                     f"reach {100 * min(vals):.0f}–{100 * max(vals):.0f} % test error at "
                     f"{TESTED[0]}–{TESTED[-1]} % removed, while BBB pruned by SNR stays at "
                     f"{100 * min(own):.2f}–{100 * max(own):.2f} %: BBB is lower in {below} of "
                     f"{pairs} seed pairs, and {n_hold} of {len(claims)} such claims pass Holm"
                     + (f" (the others: {', '.join(sorted(others))})" if others else "") + ".")
    for f in TESTED:
        rivals = [f"{ARM_LABELS[r]} {mean(r, f)} "
                  f"({word(summary, 'error after pruning', f'bbb_snr < {r} at {f}%')})"
                  if mean(r, f) != "not measured" else f"{ARM_LABELS[r]} (not measured yet)"
                  for r in REFERENCES]
        if v3 is not None:
            w3 = word(v3, "against BBB's starting network", f"bbb_snr < start_magnitude at {f}%")
            m3 = mean("start_magnitude", f)
            rivals.append(f"{ARM_LABELS['start_magnitude']} "
                          + (f"{m3} ({w3}, plan v3)" if m3 != "not measured"
                             else "(plan v3: not measured yet)"))
        lines.append(f"- {f} % of the weights removed, no retraining: BBB by SNR "
                     f"{mean('bbb_snr', f)} against " + "; ".join(rivals) + ".")
    kl = "; ".join(f"{f} %: eq. 8 {mean('uniform_snr', f)}, eq. 9 {mean('blundell_snr', f)} "
                   f"({word(summary, 'KL weighting', f'uniform_snr < blundell_snr at {f}%')})"
                   for f in TESTED)
    lines.append(f"- The KL weighting, SNR pruning of the 2×{H_KL} recipe over "
                 f"{len(SEEDS)} seeds: {kl}.")
    return "\n".join(lines)


def snr_vs_magnitude_takeaway(rec, summary=None):
    """Notebook 04's takeaway on ranking by SNR against ranking by |mu| (a Markdown bullet),
    its words from ``rec`` (snr.json: McNemar per network at the tested fractions, for every
    width the plan does not test, or every width without ``summary``) and plan v2's verdicts at
    2x1200 (paired t-test over seeds, Holm): which way each piece of evidence points, and
    whether they agree."""
    from . import pruning
    widths = list(dict.fromkeys(m["H"] for m in rec["metrics"]["models"]))
    pieces, ways = [], []
    for H in widths:
        if summary is not None and H == H_MAIN:
            continue
        groups = pruning.mcnemar_groups(rec, H, tuple(str(f) for f in TESTED))
        for f, words in groups.items():
            ways.append("SNR" if words.startswith("fewer errors by SNR") else
                        "|μ|" if words.startswith("fewer errors by |μ|") else None)
        pieces.append(f"At 2×{H}, McNemar's test per network (uncorrected): " + "; ".join(
            f"{f} % removed, {w}" for f, w in groups.items()))
    if summary is not None:
        fam = summary["families"]["error after pruning"]
        verdicts = {f: fam[f"bbb_snr < bbb_magnitude at {f}%"] for f in TESTED}
        for f, r in verdicts.items():
            ways.append(None if summary["interim"] else
                        "SNR" if r["verdict"] == "holds" else
                        "|μ|" if r["verdict"] == "reversed" else None)
        seen = any(f"bbb_snr < bbb_magnitude at {f}%" in SEEN_BEFORE_PLAN for f in TESTED)
        pieces.append(f"At 2×{H_MAIN}, plan v2's paired t-test over {len(SEEDS)} seeds (Holm"
                      + ("; numbers seen before the plan" if seen else "") + "): "
                      + "; ".join(f"{f} % removed, {_word(summary, r)}"
                                  for f, r in verdicts.items()))
    found = set(w for w in ways if w is not None)
    if not found:
        overall = "no difference between the two rankings is resolved"
    elif len(found) == 2:
        overall = "the evidence conflicts: some tests favour SNR, others |μ|"
    elif None in ways:
        overall = f"the evidence is mixed: {found.pop()} ahead in some tests, nothing resolved in others"
    else:
        overall = f"every test here favours {found.pop()}"
    return f"- Against ranking by |μ|, {overall}. " + ". ".join(pieces) + "."


def reading_text(summary):
    """Notebook 04's reading of plan v2's reference table (Markdown), its numbers and words from
    ``summary``: the error of each arm at the tested fractions, and what the tests say of SNR
    against |mu| on the same network and against the references."""
    import statistics
    if summary["interim"]:
        return standing_text(summary)
    t, fam = summary["table"], summary["families"]["error after pruning"]

    def m(arm, f):
        v = list(t[arm][str(f)].values())
        return f"{100 * statistics.fmean(v):.2f} %" if v else "not measured"

    def verdicts(rival):
        return " and ".join(f"{fam[f'bbb_snr < {rival} at {f}%']['verdict']} at {f} %"
                            for f in TESTED)
    f0, f1 = TESTED
    words = [fam[f"bbb_snr < bbb_magnitude at {f}%"]["verdict"] for f in TESTED]
    rnd = {a: t[a]["50"] for a in ("bbb_random", "sgd_random", "dropout_random")}
    random_reading = ""
    if all(rnd.values()) and statistics.fmean(rnd["bbb_random"].values()) > max(
            statistics.fmean(v.values()) for k, v in rnd.items() if k != "bbb_random"):
        random_reading = (f" Removed at random, though, BBB's networks fail sooner: "
                          f"{m('bbb_random', 50)} test error with half the weights gone, against "
                          f"{m('sgd_random', 50)} (SGD) and {m('dropout_random', 50)} (dropout); "
                          "its accuracy rests on fewer weights, which is what lets the rest go.")
    if all(w.startswith("not resolved") for w in words):
        width_reading = (f"; at 2×{H_MAIN}, no advantage of the posterior's width over the "
                         "means' magnitude is resolved: what keeps the accuracy here is the BBB "
                         "network itself")
    elif "holds" in words and "reversed" not in words:
        width_reading = "; ranking by the posterior's width helps beyond the means' magnitude"
    elif "reversed" in words and "holds" not in words:
        width_reading = "; ranking by the means' magnitude does better than by SNR"
    else:
        width_reading = ""
    return (f"**What it shows.** With {f0} % of the weights removed and no retraining, magnitude "
            f"pruning leaves Table 1's SGD networks at {m('sgd_magnitude', f0)} test error and "
            f"the dropout networks at {m('dropout_magnitude', f0)}, against "
            f"{m('bbb_snr', f0)} for BBB pruned by SNR; at {f1} % removed, "
            f"{m('sgd_magnitude', f1)} and {m('dropout_magnitude', f1)} against "
            f"{m('bbb_snr', f1)}. The tests: BBB by SNR below SGD by |w|: {verdicts('sgd_magnitude')}; "
            f"below dropout by |w|: {verdicts('dropout_magnitude')}. On the same BBB networks, "
            f"SNR against |μ| ({m('bbb_snr', f0)} and {m('bbb_magnitude', f0)} at {f0} %): "
            f"{verdicts('bbb_magnitude')}{width_reading}.{random_reading} The unregularised references were "
            "never pushed towards sparsity, which is why plan v3 compares the network each BBB "
            "run starts from.")
