"""Notebook 06, plan v3 (``helpers.alternatives_plan``): the final runs on the reported seeds,
their scores, and the plan's tests.

Once a method's search has its choice (``alternatives_plan.chosen``: the setting and the
epoch e), each reported seed s gets, per method:

- MAP, MC dropout, BBB and IVON: one network trained from a random start with the chosen setting
  for the chosen e epochs. The plan's final-run rule reads "train max_epochs epochs and keep the
  chosen epoch's network"; training e epochs is that network: every method trains at a constant
  learning rate, the data order of an epoch is drawn from (seed, epoch) alone
  (``helpers.train.fit``), and nothing after epoch e feeds back into the first e
  (``tests/test_alternatives_final.py`` checks it on a short run);
- the deep ensemble: MAP's network of seed s and ``ENSEMBLE_SIZE`` - 1 more MAP networks of seeds
  s + 1000 k (MAP's choice, seeds apart);
- Laplace, three flavours, around MAP's network of seed s (``helpers.alternatives.fit_laplace``:
  prior precision by marginal likelihood, the GLM predictive with the probit link).

Every method is scored (``score``) on the MNIST test set and on Fashion-MNIST's test images (the
OOD set), with ``TEST_SAMPLES`` = 20 predictive samples where it samples, and on the plan's random
subset (2,000 + 2,000 images, ``subset``), on which the claims about the all-layer Laplace rows
compare every method (their GLM predictive is too slow on a CPU for 20,000 images x 10 seeds:
they are scored on the subset only). Monte-Carlo noise: the test scores of every sampling method
recomputed with ``MC_REPEATS`` = 3 further predictive seeds.

One record per method and seed, results/06_alternatives/v3/final/<method>/seed<s>.json, written
atomically when its scores exist (commit each as it lands); ``analysis`` gives the plan's
claims, tested as it declares (``helpers.stats.ordering_family``: two-sided paired t-tests,
Holm within each family; the exact sign test beside them).
"""
import json
import statistics
import time
from dataclasses import asdict

import torch

from . import alternatives as ALT
from . import alternatives_plan as A
from .metrics import auroc, brier, ece, error_rate, mutual_information, nll, predictive_entropy

NB = A.NB
FOLDER = f"v{A.VERSION}/final"
TRAINED = ("map", "mc_dropout", "bbb", "ivon")
LAPLACE = tuple(A.LAPLACE["flavours"])
ALL_LAYER = ("laplace_diag", "laplace_kron")  # scored on the subset only (the plan)
METHODS = ("map", "mc_dropout", "ensemble", "bbb", "ivon", *LAPLACE)
SAMPLES = {"map": None, "mc_dropout": "mc_dropout", "ensemble": None, "bbb": "bbb",
           "ivon": "ivon"}  # the methods whose predictive draws samples
TEST_SAMPLES, MC_REPEATS, EVAL_SEED = 20, 3, 12345
ENSEMBLE_SIZE = A.ENSEMBLE_SIZE
SCORES = ("test_error", "nll", "brier", "ece", "auroc_entropy", "auroc_mi")


class SearchesIncomplete(RuntimeError):
    pass


def choices(partial=False):
    """Return {method: the plan's choice} for the four searched methods; raises
    SearchesIncomplete (naming the command) while any search still runs. ``partial``: only the
    methods whose search is complete (a method's final runs need its own choice, nothing else:
    the other searches are fixed grids with a fixed rule, which no final number can steer)."""
    out = {m: A.chosen(m) for m in A.SEARCHES}
    missing = sorted(m for m, c in out.items() if c is None)
    if partial:
        return {m: c for m, c in out.items() if c is not None}
    if missing:
        raise SearchesIncomplete(f"the searches of {missing} are not complete: run "
                                 "`python tools/alternatives_search.py search` first")
    return out


def final_config(method, choice, seed):
    """Return the final run's configuration of ``method`` (a RunConfig for the classification
    trial, a dict for IVON): the chosen setting, seed ``seed``, the chosen number of epochs."""
    from .classification import RunConfig
    cfg = {**choice["config"], "seed": int(seed), "epochs": int(choice["epochs"])}
    if A.SEARCHES[method]["trial"] == A.IVON_TRIAL:
        return cfg
    return RunConfig.from_dict(cfg)


def record_path(method, seed):
    from .utils import results_dir
    return results_dir() / NB / FOLDER / method / f"seed{int(seed)}.json"


DEPENDS = {m: "map" for m in ("ensemble", *LAPLACE)}  # they reuse MAP's network of the seed


def pending(seeds=None, ready_only=False):
    """Return [(method, seed)] without a record, seed by seed, the all-layer Laplace fits last;
    ``ready_only``: only the jobs that
    can start now: their method's search is complete (MAP's, for the ensemble and Laplace), and
    for the ensemble and Laplace, MAP's record of the seed exists (they reuse MAP's network,
    which another process may still be training)."""
    seeds = A.REPORTED_SEEDS if seeds is None else seeds
    # the all-layer Laplace fits (the slowest by far: their GLM predictive) after every other
    # method's runs, so that an interim analysis pairs as many seeds as the time allows
    todo = [(m, s) for slow in (False, True) for s in seeds for m in METHODS
            if (m in ALL_LAYER) == slow and not record_path(m, s).exists()]
    if not ready_only:
        return todo
    done = set(choices(partial=True))
    return [(m, s) for m, s in todo if DEPENDS.get(m, m) in done
            and not (m in DEPENDS and not record_path(DEPENDS[m], s).exists())]


def subset(n, k, which):
    """Return the plan's random subset of ``k`` of ``n`` images (sorted indices): the same for
    every seed and method (torch.Generator seeded with the plan's generator_seed; ``which``
    'test' or 'ood' draws from its own stream)."""
    seed = A.LAPLACE["all_layer_subset"]["generator_seed"] + (0 if which == "test" else 1)
    idx = torch.randperm(n, generator=torch.Generator().manual_seed(seed))[:min(k, n)]
    return idx.sort().values


# ---- training (or reading back) the networks of one seed ----

def fingerprint(model):
    """Return a short hash of a network's weights (MAP's, named in the records of the methods
    that reuse it, so that the analysis can check they reused the same network)."""
    import hashlib
    h = hashlib.sha256()
    for v in model.parameters():  # values in order (a wrapper renames, never reorders)
        h.update(v.detach().cpu().contiguous().numpy().tobytes())
    return h.hexdigest()[:16]


def _finite(model):
    params = model.parameters() if hasattr(model, "parameters") else model[0].parameters()
    return all(bool(torch.isfinite(p).all()) for p in params)


def _train(method, cfg, data):
    """Train (resume, or load when finished) one final network; return (object, train seconds)."""
    notebook = f"{NB}/{FOLDER}"
    if method == "ivon":
        model, opt, hist = ALT.train_ivon(cfg, data, cfg["seed"], cfg["epochs"],
                                          notebook=notebook)
        return (model, opt), hist[-1]["wall_s"] if hist else 0.0
    from .classification import run
    model, rec = run(cfg, data, notebook=notebook, eval_samples=2, test=False)
    return model, rec["metrics"]["train_wall_s"]


def networks(method, seed, data, chosen, progress_fn=print):
    """Return (object the method predicts with, its training seconds) for ``method`` and
    ``seed``; the ensemble's and Laplace's include MAP's network (and the Laplace fit)."""
    if method in TRAINED:
        progress_fn(f"seed {seed}: training {method}")
        obj, wall = _train(method, final_config(method, chosen[method], seed), data)
        if not _finite(obj):
            raise FloatingPointError(f"{method} seed {seed}: non-finite weights after training")
        return obj, wall
    map_cfg = final_config("map", chosen["map"], seed)
    if data.x_train.device.type != "cpu":
        from .classification import checkpoint_path
        ck = checkpoint_path(map_cfg, f"{NB}/{FOLDER}")
        if not ck.exists():  # an OSError: the run is retried where the network is, never recorded
            raise FileNotFoundError(
                f"{method} seed {seed} on {data.x_train.device}: MAP's network {ck} is not here; "
                "networks are trained on a CPU (`tools/alternatives_search.py final`): bring its "
                "checkpoint along")
    base, wall = _train("map", map_cfg, data)
    if method == "ensemble":
        members = [base]
        for k in member_seeds(seed)[1:]:
            progress_fn(f"seed {seed}: ensemble member seed {k}")
            net, w = _train("map", final_config("map", chosen["map"], k), data)
            members.append(net)
            wall += w
        return members, wall
    progress_fn(f"seed {seed}: fitting {method}")
    la, fit_s = ALT.fit_laplace(base, data, method)
    return la, wall + fit_s


def member_seeds(seed):
    """The ensemble of reported seed ``seed``: MAP's network of that seed and ENSEMBLE_SIZE - 1
    more MAP networks of seeds seed + 1000 k (never a reported or a search seed)."""
    return [int(seed) + 1000 * k for k in range(ENSEMBLE_SIZE)]


def _map_network(obj, method):
    """MAP's network inside what ``method`` predicts with (None for the others)."""
    if method == "map":
        return obj
    if method == "ensemble":
        return obj[0]
    if method in LAPLACE:  # last-layer Laplace wraps the network in a feature extractor
        return getattr(obj.model, "model", obj.model)
    return None


def predictive(method, obj, n_samples=TEST_SAMPLES, seed=EVAL_SEED):
    """Return (probs_fn, samples_fn): x -> (S, B, C) whose mean over S is the predictive, and
    the samples the mutual information uses (None: probs_fn's own samples)."""
    from .uncertainty import sample_probs

    def seeded(fn):
        def call(x):
            torch.manual_seed(seed)
            return fn(x)
        return call
    if method == "map":
        return seeded(lambda x: sample_probs("deterministic", obj, x)), None
    if method == "ensemble":
        return seeded(lambda x: sample_probs("ensemble", obj, x)), None
    if method in ("mc_dropout", "bbb"):
        return seeded(lambda x: sample_probs(method, obj, x, n_samples)), None
    if method == "ivon":
        return seeded(lambda x: ALT.ivon_probs(*obj, x, n_samples)), None
    return (lambda x: ALT.laplace_probs(obj, x),
            lambda x: ALT.laplace_samples(obj, x, n_samples, seed=seed))


def _scores(p_in, p_out, s_in, s_out, y):
    m_in = p_in.mean(0)
    return {"test_error": error_rate(m_in, y), "nll": nll(m_in, y), "brier": brier(m_in, y),
            "ece": ece(m_in, y),
            "auroc_entropy": auroc(predictive_entropy(m_in), predictive_entropy(p_out.mean(0))),
            "auroc_mi": (auroc(mutual_information(s_in), mutual_information(s_out))
                         if s_in.shape[0] > 1 else None)}


def score(method, obj, data, x_ood, idx_test, idx_ood, n_samples=TEST_SAMPLES):
    """Return the scores of one method: on the whole test and OOD sets (``full``; None for the
    all-layer Laplace rows), on the plan's subset (``subset``), the seconds to predict 10,000
    images, and for sampling methods the full-set scores under ``MC_REPEATS`` more seeds."""
    def run_sets(probs_fn, samples_fn, x_in, y, x_out):
        t0 = time.perf_counter()
        p_in = probs_fn(x_in).cpu()  # scored on the CPU, wherever the method ran
        secs = (time.perf_counter() - t0) * 10_000 / len(y)
        p_out = probs_fn(x_out).cpu()
        s_in, s_out = ((samples_fn(x_in).cpu(), samples_fn(x_out).cpu()) if samples_fn
                       else (p_in, p_out))
        return _scores(p_in, p_out, s_in, s_out, y.cpu()), secs

    probs_fn, samples_fn = predictive(method, obj, n_samples)
    out = {}
    sub, secs = run_sets(probs_fn, samples_fn, data.x_test[idx_test], data.y_test[idx_test],
                         x_ood[idx_ood])
    out["subset"] = sub
    out["subset_size"] = {"test": len(idx_test), "ood": len(idx_ood)}
    if method in ALL_LAYER:
        out["full"], out["predict_s_10k"] = None, secs
    else:
        out["full"], out["predict_s_10k"] = run_sets(probs_fn, samples_fn, data.x_test,
                                                     data.y_test, x_ood)
    # Monte-Carlo noise: the same scores under MC_REPEATS more predictive seeds (the sampling
    # methods; Laplace's probit predictive draws nothing), on the whole sets and on the subset
    out["mc_repeats"] = None
    if SAMPLES.get(method):
        reps = {"full": [], "subset": []}
        for r in range(1, MC_REPEATS + 1):
            fn, sfn = predictive(method, obj, n_samples, seed=EVAL_SEED + r)
            reps["full"].append(run_sets(fn, sfn, data.x_test, data.y_test, x_ood)[0])
            reps["subset"].append(run_sets(fn, sfn, data.x_test[idx_test], data.y_test[idx_test],
                                           x_ood[idx_ood])[0])
        out["mc_repeats"] = reps
    return out


def _infrastructure(err):
    """Whether ``err`` says the machine failed (memory, a killed worker), not the method."""
    text = str(err).lower()
    return any(k in text for k in ("can't allocate memory", "out of memory",
                                   "cannot allocate memory", "killed"))


def run_one(method, seed, data, x_ood, chosen, progress_fn=print):
    """Train (or read back) and score ``method`` on ``seed``; write and return its record. It runs
    on the device ``data`` lies on (a GPU only for the Laplace fits of MAP's networks, trained on
    a CPU and read back: ``tools/alternatives_search.py final --device``); the record names it."""
    from .campaign import code_version
    from .utils import atomic_write_bytes, machine_info
    t0 = time.perf_counter()
    source = DEPENDS.get(method, method)
    run_cfg = final_config(source, chosen[source], seed)
    rec = {"plan_version": A.VERSION, "method": method, "seed": int(seed),
           "setting": run_cfg if isinstance(run_cfg, dict) else
           {k: v for k, v in asdict(run_cfg).items() if k != "tags"},
           "epochs": chosen[source]["epochs"],
           "chosen": chosen[source]["name"],
           "chosen_from": f"results/{NB}/v{A.VERSION}/search/{source}/ (validation only)",
           "member_seeds": member_seeds(seed) if method == "ensemble" else None}
    try:
        if method in DEPENDS and record_path(DEPENDS[method], seed).exists():
            dep = json.loads(record_path(DEPENDS[method], seed).read_text())
            if dep.get("failed"):
                raise RuntimeError(f"{DEPENDS[method]}'s network of seed {seed} failed: "
                                   f"{dep['failed']}")
        obj, train_s = networks(method, seed, data, chosen, progress_fn)
        progress_fn(f"seed {seed}: scoring {method}")
        idx_t = subset(len(data.y_test), A.LAPLACE["all_layer_subset"]["test"], "test")
        idx_o = subset(len(x_ood), A.LAPLACE["all_layer_subset"]["ood"], "ood")
        idx_t, idx_o = idx_t.to(data.x_test.device), idx_o.to(x_ood.device)
        scores = score(method, obj, data, x_ood, idx_t, idx_o)
        bad = [k for part in ("full", "subset") if scores[part]
               for k, v in scores[part].items() if v is not None and not (v == v)]
        if bad:
            raise FloatingPointError(f"{method} seed {seed}: non-finite scores {bad}")
        base = _map_network(obj, method)
        rec.update({"failed": None, "train_s": train_s,
                    "stored_floats": ALT.stored_floats(method, obj),
                    "map_network": fingerprint(base) if base is not None else None,
                    "laplace": ALT.laplace_settings(method) if method in LAPLACE else None,
                    "test_samples": TEST_SAMPLES if SAMPLES.get(method) else None, **scores})
    except (FloatingPointError, RuntimeError, ValueError) as err:
        if _infrastructure(err):
            raise  # the machine, not the method: no record, so the run is retried
        # the plan: a failed final run is reported in its row, not rerun with another setting
        msg = f"{type(err).__name__}: {str(err).splitlines()[0][:300]}"
        progress_fn(f"seed {seed}: {method} FAILED ({msg})")
        rec.update({"failed": msg, "full": None, "subset": None, "mc_repeats": None})
    rec.update({"machine": machine_info(data.x_train.device), "code": code_version(),
                "process_wall_s": round(time.perf_counter() - t0, 1)})
    path = record_path(method, seed)
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_bytes(path, (json.dumps(rec, indent=1) + "\n").encode())
    return rec


# ---- the plan's tests ----

def records():
    """Return {(method, seed): record} of the final runs written so far."""
    from .utils import results_dir
    out = {}
    for path in sorted((results_dir() / NB / FOLDER).glob("*/seed*.json")):
        rec = json.loads(path.read_text())
        out[(rec["method"], rec["seed"])] = rec
    return out


def _value(rec, metric, on):
    part = rec.get(on)
    return None if part is None else part[metric]


def per_seed(recs, method, metric, on):
    """Return {seed: value} of ``metric`` for ``method`` on 'full' or 'subset' (failed runs and
    missing values left out)."""
    return {s: _value(r, metric, on) for (m, s), r in recs.items()
            if m == method and not r.get("failed") and _value(r, metric, on) is not None}


def _evaluations(rec, metric, on):
    """The main evaluation and the Monte-Carlo repeats of one record (one value: no sampling)."""
    main = _value(rec, metric, on)
    reps = (rec.get("mc_repeats") or {}).get(on) or []
    return [main] + [r[metric] for r in reps if r[metric] is not None]


def mc_noise(recs, a, b, metric, on, seeds):
    """Return the Monte-Carlo sd of the paired difference a - b of one evaluation, pooled over
    ``seeds`` (root mean square): per seed the sd over the evaluations (main + repeats) of a
    minus those of b (a side that draws nothing is constant); None when neither side samples.
    Its share in the standard error of a mean over n seeds is this sd / sqrt(n)."""
    sds = []
    for s in seeds:
        ea, eb = _evaluations(recs[(a, s)], metric, on), _evaluations(recs[(b, s)], metric, on)
        n = max(len(ea), len(eb))
        if n < 2:
            continue
        ea, eb = (ea * n)[:n] if len(ea) == 1 else ea, (eb * n)[:n] if len(eb) == 1 else eb
        sds.append(statistics.stdev([x - y for x, y in zip(ea, eb)]))
    return statistics.fmean(v * v for v in sds) ** 0.5 if sds else None


def status(recs):
    """Return which (method, seed) records are missing or failed, and ``problems``: a record
    whose ensemble or Laplace fit names another MAP network than MAP's record of its seed, that
    ran another setting or epoch count than its method's search chose, or that was run from
    uncommitted code. An analysis with problems gives no verdict of the plan (``analysis``)."""
    missing = [(m, s) for s in A.REPORTED_SEEDS for m in METHODS if (m, s) not in recs]
    failed = {f"{m} seed {s}": r["failed"] for (m, s), r in sorted(recs.items())
              if r.get("failed")}
    mismatched = []
    for s in A.REPORTED_SEEDS:
        prints = {m: recs[(m, s)].get("map_network") for m in ("map", *DEPENDS)
                  if (m, s) in recs and not recs[(m, s)].get("failed")}
        if len(set(prints.values())) > 1:
            mismatched.append({"seed": s, "map_network": prints})
    problems = [f"seed {x['seed']}: the ensemble or a Laplace fit names another MAP network "
                f"than MAP's record" for x in mismatched]
    chosen = {m: A.chosen(m) for m in A.SEARCHES}
    for (m, s), r in sorted(recs.items()):
        c = chosen.get(DEPENDS.get(m, m))
        if c is None or (r.get("chosen"), r.get("epochs")) != (c["name"], c["epochs"]):
            problems.append(f"{m} seed {s} ran {r.get('chosen')} for {r.get('epochs')} epochs; "
                            f"the search's choice is "
                            f"{'(search incomplete)' if c is None else c['name']}"
                            f"{'' if c is None else ' for ' + str(c['epochs']) + ' epochs'}")
        if (r.get("code") or {}).get("dirty") is not False:
            problems.append(f"{m} seed {s} was run from uncommitted code "
                            f"(code {r.get('code')})")
    return {"complete": not missing, "missing": [f"{m} seed {s}" for m, s in missing],
            "failed": failed, "map_network_mismatch": mismatched, "problems": problems}


def _device(rec):
    """The kind of device a record ran on ('cpu', 'cuda')."""
    return str(rec.get("machine", {}).get("device", "cpu")).split(":")[0]


def _families(recs, plan):
    """The plan's claims tested on ``recs``: per family {claim: result} (helpers.stats)."""
    from . import stats
    families = {}
    for family, claims in plan["tests"]["families"].items():
        pairs, mc = {}, {}
        for claim in claims:
            lhs, rest = claim.split(" < ")
            rhs, metric = rest.split(" on ")
            other = rhs if lhs == "bbb" else lhs
            on = "subset" if other in ALL_LAYER else "full"
            a, b = per_seed(recs, lhs, metric, on), per_seed(recs, rhs, metric, on)
            seeds = sorted(set(a) & set(b))
            pairs[claim] = ([a[s] for s in seeds], [b[s] for s in seeds]) if len(seeds) >= 2 \
                else None
            mc[claim] = {"on": on, "seeds": seeds,
                         "mc_sd_of_difference": mc_noise(recs, lhs, rhs, metric, on, seeds)}
        res = stats.ordering_family(pairs, alpha=plan["tests"]["alpha"])
        families[family] = {k: {**v, **mc[k]} for k, v in res.items()}
    return families


def repeat_records(recs, r):
    """``recs`` as if every sampling method had been scored with its r-th extra predictive seed
    (``mc_repeats``; the methods that draw nothing unchanged)."""
    out = {}
    for k, rec in recs.items():
        reps = rec.get("mc_repeats")
        if reps and len(reps.get("full") or []) > r:
            rec = {**rec, "full": reps["full"][r], "subset": reps["subset"][r],
                   "mc_repeats": None}
        out[k] = rec
    return out


def mc_robustness(recs, families_fn, repeats=None):
    """Per family and claim, the verdict and Holm p under each extra predictive seed: the
    claims retested with every sampling method scored with its r-th repeat (a check that no
    verdict rests on one draw of the predictive's samples)."""
    n = repeats if repeats is not None else min(
        (len((r.get("mc_repeats") or {}).get("full") or []) for r in recs.values()
         if r.get("mc_repeats")), default=0)
    out = {}
    for r in range(n):
        for family, claims in families_fn(repeat_records(recs, r)).items():
            for claim, res in claims.items():
                e = out.setdefault(family, {}).setdefault(claim, {"verdicts": [], "p_holm": []})
                e["verdicts"].append(res["verdict"])
                e["p_holm"].append(res["p_holm"])
    return out


def analysis(recs=None, plan=None):
    """Return the plan's claims (read from the committed plan file) tested on the records: per
    family {claim: result}, paired over the seeds both sides have (the claims on an all-layer
    Laplace row compare on the subset), each with the Monte-Carlo sd of its paired difference;
    per method and metric the per-seed values; ``cost``: per method the mean training seconds
    (MAP's network included for the ensemble and Laplace; one thread, two runs per 2-core
    machine: descriptive, not tested) and prediction seconds for 10,000 images, over the runs
    made on a CPU (those on a GPU named under ``other_devices``); and
    ``status``. ``interim`` is True until every
    (method, seed) has a record and ``status`` finds no problem: verdicts from an interim
    analysis are not the plan's."""
    from .utils import PROJECT_ROOT
    recs = records() if recs is None else recs
    plan = json.loads((PROJECT_ROOT / A.PLAN).read_text()) if plan is None else plan
    alpha = plan["tests"]["alpha"]
    families = _families(recs, plan)
    table = {}
    for method in METHODS:
        for on in ("full", "subset"):
            for metric in SCORES:
                vals = per_seed(recs, method, metric, on)
                if not vals:
                    continue
                table.setdefault(method, {}).setdefault(on, {})[metric] = {
                    "seeds": sorted(vals), "per_seed": [vals[s] for s in sorted(vals)],
                    "mean": statistics.fmean(vals.values()),
                    "sd": statistics.stdev(vals.values()) if len(vals) > 1 else None}
    cost = {}
    for method in METHODS:
        ok = {s: r for (m, s), r in recs.items() if m == method and not r.get("failed")}
        # seconds compare only on one kind of machine: the CPU runs (a Laplace fit run on a GPU
        # is named under other_devices, its seconds left out)
        cpu = {s: r for s, r in ok.items() if _device(r) == "cpu"}
        if cpu:
            cost[method] = {k: statistics.fmean(r[k] for r in cpu.values())
                            for k in ("train_s", "predict_s_10k")
                            if all(r.get(k) is not None for r in cpu.values())}
            cost[method]["seeds"] = sorted(cpu)
            # against MAP's network of the same seed (machine load varies from run to run)
            ratios = [r["train_s"] / recs[("map", s)]["train_s"] for s, r in cpu.items()
                      if ("map", s) in recs and recs[("map", s)].get("train_s")
                      and r.get("train_s") is not None]
            if ratios:
                cost[method]["train_ratio_to_map"] = statistics.fmean(ratios)
        other = {}
        for s, r in ok.items():
            if _device(r) != "cpu":
                other.setdefault(r["machine"].get("gpu") or _device(r), []).append(s)
        if other:
            cost.setdefault(method, {"seeds": []})["other_devices"] = {
                k: sorted(v) for k, v in other.items()}
    st = status(recs)
    return {"plan": str(A.PLAN), "alpha": alpha, "cost": cost,
            "mc_robustness": mc_robustness(recs, lambda rr: _families(rr, plan)),
            "interim": not st["complete"] or bool(st["problems"]),
            "families": families, "table": table, "status": st,
            "seeds": sorted({s for (_, s) in recs}), "n_records": len(recs)}
