"""Notebook 06: the three Laplace rows refitted with their prior precision chosen as laplace-torch
advises (issue 52, item 7). Phase 1 (this module's ``run_seed``): validation data only.

Around MAP's final network of each reported seed (retrained deterministically through the code
path that made plan v3's records, its weights' fingerprint checked against those records), each
flavour -- last-layer KFAC, all-layer diagonal, all-layer KFAC -- is fitted as plan v3 fits it
(``helpers.alternatives.fit_laplace``), and its prior precision is chosen two ways:

- ``marglik_layerwise``: ``optimize_prior_precision(method="marglik",
  prior_structure="layerwise")``: one precision per parameter tensor, by the Laplace marginal
  likelihood of the training data (the all-layer rows of plan v3 already did this; the
  last-layer row had one scalar);
- ``val_grid``: one scalar precision chosen by the NLL of the GLM probit predictive on
  ``VAL_IMAGES`` validation images, over a grid of powers of ten widened a decade at a time on
  the side of the best value until that is interior (or at ``CAP``), then refined (``GRID``).

The predictive is ``helpers.laplace_glm.FastGLM`` (exact; checked against the library's own on
``CHECK_IMAGES`` validation images per seed and flavour, the largest difference recorded). The
declaration (``plan``) is written to ``plan_path()`` before anything runs; the test-set scoring
(phase 2) refuses to run unless that file is committed and unchanged (``require_committed_plan``).
One record per seed, results/06_alternatives/v3/laplace_fair/seed<s>.json, written atomically.
"""
import json
import math
import statistics
import subprocess
import time

import torch

from . import alternatives as ALT
from . import alternatives_final as F
from . import alternatives_plan as A
from . import laplace_glm as G

FLAVOURS = ("laplace_ll_kron", "laplace_diag", "laplace_kron")
CHOICES = ("marglik_layerwise", "val_grid")
FOLDER = f"v{A.VERSION}/laplace_fair"
VAL_IMAGES = 2000       # the first 2,000 of the validation split
CHECK_IMAGES = {"val_grid": 64, "marglik_layerwise": 16}  # fast vs library, per seed and flavour
MARGLIK = {"n_steps": 100, "lr": 0.1, "init_prior_prec": 1.0}  # as plan v3's fits
GRID = {"start_log10": (-4, 4), "step_log10": 1, "cap_log10": (-12, 12),
        "refine_offsets_log10": (-0.75, -0.5, -0.25, 0.25, 0.5, 0.75)}


class PlanNotCommitted(RuntimeError):
    pass


def plan_path():
    from .utils import results_dir
    return results_dir() / A.NB / FOLDER / "plan.json"


def record_path(seed):
    return plan_path().parent / f"seed{int(seed)}.json"


def plan():
    """The declaration: what phase 1 chooses on validation data and how phase 2 scores it."""
    lo, hi = GRID["start_log10"]
    return {
        "what": "notebook 06's three Laplace rows with the prior precision chosen as "
                "laplace-torch advises, around the same MAP networks as plan v3's rows",
        "flavours": {f: {"subset_of_weights": ALT.LAPLACE[f][0],
                         "hessian_structure": ALT.LAPLACE[f][1]} for f in FLAVOURS},
        "seeds": list(A.REPORTED_SEEDS),
        "network": "MAP's final network of the seed (plan v3's setting and epochs), retrained "
                   "deterministically on one CPU thread through helpers.alternatives_final; its "
                   "weights' fingerprint must equal the map_network of plan v3's records",
        "predictive": {"pred_type": "glm", "link_approx": "probit",
                       "implementation": "helpers.laplace_glm.FastGLM (exact); checked against "
                                         "laplace-torch's la(x, pred_type='glm', "
                                         "link_approx='probit') on "
                                         f"{CHECK_IMAGES} of the validation images per seed "
                                         "and flavour"},
        "choices": {
            "marglik_layerwise": {
                "how": "optimize_prior_precision(method='marglik', prior_structure='layerwise')",
                **MARGLIK, "structure": "one precision per fitted parameter tensor",
                "last_layer": "two precisions (weight, bias); laplace-torch 0.3's "
                              "LLLaplace.prior_precision_diag refuses a per-tensor prior, so "
                              "helpers.laplace_fair.last_layer_per_tensor_prior expands it per "
                              "tensor as the library's all-layer classes do"},
            "val_grid": {
                "how": "one scalar prior precision minimising the NLL of the GLM probit "
                       "predictive on the validation images",
                "validation_images": f"the first {VAL_IMAGES} images of the validation split "
                                     "(the last 10,000 of MNIST's 60,000 training images); "
                                     "never a test image",
                "grid": f"log10 delta = {lo}, {lo + 1}, ..., {hi} (one per decade)",
                "widening": "while the lowest NLL lies at an end of the grid, add the next "
                            "decade beyond that end",
                "cap": f"log10 delta in [{GRID['cap_log10'][0]}, {GRID['cap_log10'][1]}]; a "
                       "best value at a cap is reported as 'at the cap'",
                "refinement": "around the best decade point b: log10 delta = b + "
                              f"{list(GRID['refine_offsets_log10'])} (inside the caps); the "
                              "chosen delta has the lowest NLL over every evaluated point "
                              "(ties: the smaller delta)"}},
        "scoring": {"phase": 2, "sets": "the full MNIST test set and the full Fashion-MNIST "
                                        "test set (OOD), and plan v3's 2,000 + 2,000 subset",
                    "metrics": list(F.SCORES),
                    "auroc_mi": "from 20 GLM samples of the logits (as plan v3's rows)",
                    "requires": "this file committed in git and unchanged"},
        "failed_fit": "a Laplace row whose test NLL minus that of its own MAP network has a 95 % "
                      "interval (paired t over the seeds) above zero is reported as a failed fit, "
                      "without verdict words",
        "claims": "plan v3's two claims on each Laplace row (bbb < row on nll; row < bbb on "
                  "auroc_entropy) are then tested on each fair row as "
                  "helpers.laplace_prior_check.analysis does: the row in place of the plan's, "
                  "in the plan's families (Holm within each)"}


def write_plan():
    from .utils import atomic_write_bytes
    path = plan_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_bytes(path, (json.dumps(plan(), indent=1) + "\n").encode())
    return path


def require_committed_plan(path=None, root=None):
    """Raise PlanNotCommitted unless the plan file is committed in git (repository ``root``, the
    project's by default) and unchanged since; return its path in the repository."""
    from . import utils
    path = plan_path() if path is None else path
    PROJECT_ROOT = utils.PROJECT_ROOT if root is None else root
    if not path.exists():
        raise PlanNotCommitted(f"{path} does not exist: write it (`tools/laplace_fair.py plan`) "
                               "and commit it before scoring on test data")
    rel = str(path.resolve().relative_to(PROJECT_ROOT.resolve()))
    git = lambda *a: subprocess.run(["git", *a], cwd=PROJECT_ROOT,  # noqa: E731
                                    capture_output=True, text=True)
    if not git("log", "--format=%H", "-1", "--", rel).stdout.strip():
        raise PlanNotCommitted(f"{rel} is not committed: commit the plan before scoring on "
                               "test data")
    if git("diff", "--quiet", "HEAD", "--", rel).returncode != 0:
        raise PlanNotCommitted(f"{rel} differs from its committed version: the test scores "
                               "must follow the committed plan")
    return rel


# ---- the validation grid ----

def grid_search(nll_fn, grid=GRID):
    """Minimise ``nll_fn(delta)`` over powers of ten as the plan declares; return the curve
    ([[log10 delta, nll], ...] sorted), the chosen delta, and how the search ended."""
    lo_cap, hi_cap = grid["cap_log10"]
    seen = {}

    def at(e):
        if e not in seen:
            seen[e] = float(nll_fn(10.0 ** e))
        return seen[e]
    lo, hi = grid["start_log10"]
    for e in range(lo, hi + 1, grid["step_log10"]):
        at(e)
    widened = 0
    while True:
        decades = sorted(k for k in seen if float(k).is_integer())
        best = min(decades, key=lambda k: (seen[k], k))
        if best == decades[0] and best > lo_cap:
            at(best - 1)
        elif best == decades[-1] and best < hi_cap:
            at(best + 1)
        else:
            break
        widened += 1
    decades = sorted(k for k in seen if float(k).is_integer())
    interior = decades[0] < best < decades[-1]
    for off in grid["refine_offsets_log10"]:
        if lo_cap <= best + off <= hi_cap:
            at(round(best + off, 6))
    chosen = min(seen, key=lambda k: (seen[k], k))
    return {"curve": [[k, seen[k]] for k in sorted(seen)], "best_decade_log10": best,
            "chosen_log10": chosen, "prior_precision": 10.0 ** chosen, "val_nll": seen[chosen],
            "interior": bool(interior), "at_cap": not interior, "widened_decades": widened}


def _nll(probs, y):
    return float(-torch.log(probs.gather(1, y[:, None]).clamp_min(1e-300)).mean())


# ---- one seed ----

def map_network(seed, data, chosen, progress_fn=print):
    """MAP's final network of ``seed`` (trained, or read back from its checkpoint) and the
    fingerprint its plan v3 records name; raises if they differ."""
    cfg = F.final_config("map", chosen["map"], seed)
    progress_fn(f"seed {seed}: MAP's network (trained or read back)")
    base, _ = F._train("map", cfg, data)
    base.eval()
    named = {m: json.loads(F.record_path(m, seed).read_text())["map_network"]
             for m in ("map", *FLAVOURS)}
    got = F.fingerprint(base)
    if set(named.values()) != {got}:
        raise RuntimeError(f"seed {seed}: MAP's retrained network {got} differs from plan v3's "
                           f"records {named}")
    return base, got


def last_layer_per_tensor_prior(la):
    """Let a last-layer Laplace object take one prior precision per parameter tensor (weight,
    bias) in its marginal likelihood. laplace-torch 0.3's ``LLLaplace.prior_precision_diag``
    accepts only a scalar or a per-parameter prior and raises on the layerwise one that
    ``optimize_prior_precision(prior_structure="layerwise")`` sets, although its Kronecker
    posterior (``KronDecomposed``, one delta per block) and its setter accept it. This gives the
    object's class the expansion ``BaseLaplace.prior_precision_diag`` makes for all-layer fits,
    over the last layer's tensors: the marginal likelihood's log-determinant and scatter terms
    then read one precision per tensor. Returns ``la``."""
    base = type(la)

    def prior_precision_diag(self):
        prec = self.prior_precision
        sizes = [p.numel() for p in self.model.last_layer.parameters()]
        if len(prec) == len(sizes) and len(sizes) > 1:
            return torch.cat([v * torch.ones(n, device=self._device, dtype=self._dtype)
                              for v, n in zip(prec, sizes)])
        return base.prior_precision_diag.fget(self)
    # a key of its own: laplace-torch's Laplace() finds its classes among BaseLaplace's
    # subclasses by _key, and must never be handed this one
    la.__class__ = type(base.__name__, (base,),
                        {"prior_precision_diag": property(prior_precision_diag),
                         "_key": (*base._key, "per-tensor prior (helpers.laplace_fair)")})
    return la


def fit_flavour(base, data, flavour, x_val, y_val, progress_fn=print):
    """One flavour around ``base``: plan v3's fit, then both choices; returns its record."""
    t0, c0 = time.perf_counter(), time.process_time()
    la, fit_s = ALT.fit_laplace(base, data, flavour)
    out = {"fit_s": round(fit_s, 1),
           "plan_v3_prior_precision": la.prior_precision.detach().cpu().tolist(),
           "plan_v3_prior_structure": ALT.LAPLACE[flavour][2]}
    fast = G.FastGLM(la)
    c1 = time.process_time()
    cache = fast.cache(x_val)
    out["cache_cpu_s"] = round(time.process_time() - c1, 1)
    out["plan_v3_val_nll"] = _nll(fast.probs(cache), y_val)
    # marginal likelihood, one precision per parameter tensor
    s0 = time.process_time()
    if ALT.LAPLACE[flavour][2] != "layerwise":
        import warnings
        if ALT.LAPLACE[flavour][0] == "last_layer":
            last_layer_per_tensor_prior(la)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            la.optimize_prior_precision(method="marglik", prior_structure="layerwise",
                                        **MARGLIK, **ALT.LAPLACE_PREDICTIVE)
    ml = la.prior_precision.detach().clone()
    out["marglik_layerwise"] = {"prior_precision": ml.cpu().tolist(),
                                "val_nll": _nll(fast.probs(cache, ml), y_val),
                                "cpu_s": round(time.process_time() - s0, 1)}
    # validation grid, one scalar precision
    s0 = time.process_time()
    gs = grid_search(lambda d: _nll(fast.probs(cache, d), y_val))
    out["val_grid"] = {**gs, "cpu_s": round(time.process_time() - s0, 1)}
    progress_fn(f"{flavour}: marglik {[f'{v:.3g}' for v in ml.tolist()]} (val NLL "
                f"{out['marglik_layerwise']['val_nll']:.4f}); grid {gs['prior_precision']:.3g} "
                f"(val NLL {gs['val_nll']:.4f}, {'interior' if gs['interior'] else 'AT THE CAP'})")
    # exactness: fast against the library on the first validation images
    s0 = time.process_time()
    ex = {}
    for choice, n in CHECK_IMAGES.items():
        delta = ml if choice == "marglik_layerwise" else torch.tensor(gs["prior_precision"])
        ex[choice] = {"images": n, "max_abs_difference": G.max_abs_difference(
            la, x_val[:n], delta.to(la._device, la._dtype))}
    out["fast_vs_library"] = {**ex, "cpu_s": round(time.process_time() - s0, 1)}
    out["cpu_s"] = round(time.process_time() - c0, 1)
    out["wall_s"] = round(time.perf_counter() - t0, 1)
    return out


def run_seed(seed, data, chosen, progress_fn=print):
    """Phase 1 on ``seed``: MAP's network, each flavour's two choices on validation data, the
    exactness check; writes and returns the record. Sees no test image."""
    from .campaign import code_version
    from .utils import atomic_write_bytes, machine_info
    t0, c0 = time.perf_counter(), time.process_time()
    base, fp = map_network(seed, data, chosen, progress_fn)
    map_cpu = round(time.process_time() - c0, 1)
    x_val, y_val = data.x_val[:VAL_IMAGES], data.y_val[:VAL_IMAGES]
    with torch.no_grad():
        p_map = torch.softmax(base(x_val).double(), -1)
    rec = {"seed": int(seed), "map_network": fp, "map_network_matches_plan_v3": True,
           "validation_images": f"data.x_val[:{VAL_IMAGES}]",
           "map_val_nll": _nll(p_map, y_val),
           "map_val_error": float((p_map.argmax(-1) != y_val).double().mean()),
           "map_cpu_s": map_cpu, "flavours": {}}
    for flavour in FLAVOURS:
        progress_fn(f"seed {seed}: {flavour}")
        rec["flavours"][flavour] = fit_flavour(base, data, flavour, x_val, y_val, progress_fn)
    rec.update({"plan": json.loads(plan_path().read_text()) == plan(),
                "cpu_s": round(time.process_time() - c0, 1),
                "wall_s": round(time.perf_counter() - t0, 1),
                "machine": machine_info(data.x_train.device), "code": code_version()})
    path = record_path(seed)
    atomic_write_bytes(path, (json.dumps(rec, indent=1) + "\n").encode())
    return rec


def records():
    return {r["seed"]: r for r in (json.loads(p.read_text()) for p in
                                   sorted(plan_path().parent.glob("seed*.json")))}


def summary(recs=None):
    """Per flavour and choice: the chosen precisions (per seed and median), validation NLLs
    against MAP's, how many grids ended interior, the exactness, the CPU seconds."""
    recs = records() if recs is None else recs
    seeds = sorted(recs)
    out = {"seeds": seeds, "complete": seeds == list(A.REPORTED_SEEDS), "flavours": {},
           "cpu_s": sum(r["cpu_s"] for r in recs.values()),
           "map_val_nll": [recs[s]["map_val_nll"] for s in seeds]}
    for f in FLAVOURS:
        rows = [recs[s]["flavours"][f] for s in seeds]
        grid = [r["val_grid"] for r in rows]
        ml = [r["marglik_layerwise"] for r in rows]
        out["flavours"][f] = {
            "val_grid": {"prior_precision": [g["prior_precision"] for g in grid],
                         "median_log10": statistics.median(g["chosen_log10"] for g in grid)
                         if grid else None,
                         "interior": sum(g["interior"] for g in grid),
                         "val_nll_minus_map": [g["val_nll"] - recs[s]["map_val_nll"]
                                               for g, s in zip(grid, seeds)]},
            "marglik_layerwise": {
                "prior_precision": [m["prior_precision"] for m in ml],
                "median_log10_per_tensor": [statistics.median(math.log10(m["prior_precision"][i])
                                                              for m in ml)
                                            for i in range(len(ml[0]["prior_precision"]))]
                if ml else None,
                "val_nll_minus_map": [m["val_nll"] - recs[s]["map_val_nll"]
                                      for m, s in zip(ml, seeds)]},
            "plan_v3_val_nll_minus_map": [r["plan_v3_val_nll"] - recs[s]["map_val_nll"]
                                          for r, s in zip(rows, seeds)],
            "fast_vs_library_max": max((c["max_abs_difference"] for r in rows
                                        for k, c in r["fast_vs_library"].items()
                                        if k in CHOICES), default=None),
            "cpu_s": sum(r["cpu_s"] for r in rows)}
    return out


# ---- phase 2: the test sets ----

SCORED = ("plan_v3", "marglik_layerwise", "val_grid")  # plan_v3: the reproduction check


def score_path(seed):
    return plan_path().parent / "test" / f"seed{int(seed)}.json"


def _set_scores(fast, x_in, y, x_out, deltas, batch_size, n_samples=F.TEST_SAMPLES,
                seed=F.EVAL_SEED):
    """Scores (``F._scores``) of the GLM probit predictive of ``fast`` under each of ``deltas``
    ({name: prior precision}) on ``x_in`` (labels ``y``) against ``x_out``: the probabilities
    from ``FastGLM``, the mutual information from ``n_samples`` GLM samples drawn as plan v3's
    rows drew them (``ALT.laplace_samples``: batches of ``batch_size``, a generator seeded
    ``seed`` afresh for each set; one generator per prior precision)."""
    from laplace.utils.utils import normal_samples
    dt = fast.la._dtype
    got = {}
    for which, x in (("in", x_in), ("out", x_out)):
        gens = {k: torch.Generator(device=x.device).manual_seed(seed) for k in deltas}
        parts = {k: ([], []) for k in deltas}
        for i in range(0, len(x), batch_size):
            c = fast.cache(x[i:i + batch_size])
            for k, d in deltas.items():
                parts[k][0].append(fast.probs(c, d).float())
                f, cov = c["f"].to(dt), fast.covariance(c, d).to(dt)
                parts[k][1].append(torch.softmax(normal_samples(f, cov, n_samples, gens[k]),
                                                 dim=-1))
        for k in deltas:
            got.setdefault(k, {})[which] = (torch.cat(parts[k][0])[None].cpu(),
                                            torch.cat(parts[k][1], dim=1).cpu())
    return {k: F._scores(v["in"][0], v["out"][0], v["in"][1], v["out"][1], y.cpu())
            for k, v in got.items()}


def score_seed(seed, data, x_ood, chosen, progress_fn=print):
    """Phase 2 on ``seed``: refit each flavour around MAP's network (its plan v3 prior precision
    must come out as phase 1 recorded it) and score the GLM probit predictive under plan v3's
    prior precision (the reproduction check), the marginal likelihood's per tensor and the
    validation grid's, on the full MNIST and Fashion-MNIST test sets and on plan v3's subset;
    writes and returns the record."""
    from .campaign import code_version
    from .utils import atomic_write_bytes, machine_info
    t0, c0 = time.perf_counter(), time.process_time()
    phase1 = json.loads(record_path(seed).read_text())
    base, fp = map_network(seed, data, chosen, progress_fn)
    if fp != phase1["map_network"]:
        raise RuntimeError(f"seed {seed}: MAP's network {fp} is not phase 1's")
    idx_t = F.subset(len(data.y_test), A.LAPLACE["all_layer_subset"]["test"], "test")
    idx_o = F.subset(len(x_ood), A.LAPLACE["all_layer_subset"]["ood"], "ood")
    rec = {"seed": int(seed), "map_network": fp, "flavours": {}}
    for flavour in FLAVOURS:
        progress_fn(f"seed {seed}: {flavour}")
        f0 = time.process_time()
        la, fit_s = ALT.fit_laplace(base, data, flavour)
        p1 = phase1["flavours"][flavour]
        v3 = la.prior_precision.detach().cpu().tolist()
        if v3 != p1["plan_v3_prior_precision"]:
            raise RuntimeError(f"seed {seed} {flavour}: the refit's prior precision {v3} is not "
                               f"phase 1's {p1['plan_v3_prior_precision']}")
        deltas = {"plan_v3": torch.tensor(v3),
                  "marglik_layerwise": torch.tensor(p1["marglik_layerwise"]["prior_precision"]),
                  "val_grid": torch.tensor(p1["val_grid"]["prior_precision"])}
        fast, bs = G.FastGLM(la), ALT._laplace_batch(la)
        full = _set_scores(fast, data.x_test, data.y_test, x_ood, deltas, bs)
        sub = _set_scores(fast, data.x_test[idx_t], data.y_test[idx_t], x_ood[idx_o], deltas, bs)
        v3rec = json.loads(F.record_path(flavour, seed).read_text())
        rec["flavours"][flavour] = {
            **{k: {"prior_precision": deltas[k].tolist(), "full": full[k], "subset": sub[k]}
               for k in SCORED},
            "plan_v3_minus_record": {on: {m: full_or_sub[m] - v3rec[on][m] for m in F.SCORES
                                          if v3rec.get(on) and v3rec[on].get(m) is not None}
                                     for on, full_or_sub in (("full", full["plan_v3"]),
                                                             ("subset", sub["plan_v3"]))},
            "sample_batch": bs, "fit_s": round(fit_s, 1),
            "cpu_s": round(time.process_time() - f0, 1)}
    rec.update({"plan": json.loads(plan_path().read_text()) == plan(),
                "cpu_s": round(time.process_time() - c0, 1),
                "wall_s": round(time.perf_counter() - t0, 1),
                "machine": machine_info(data.x_train.device), "code": code_version()})
    path = score_path(seed)
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_bytes(path, (json.dumps(rec, indent=1) + "\n").encode())
    return rec


def score_records():
    return {r["seed"]: r for r in (json.loads(p.read_text()) for p in
                                   sorted(score_path(0).parent.glob("seed*.json")))}


def summary_path():
    """Where ``tools/laplace_fair.py analyse`` writes ``analysis``."""
    return plan_path().parent / "summary.json"


OUTCOMES = {"failed": "failed fit", "equal": "equal to MAP", "below": "better than MAP"}
CLAIMS = {f: (f"bbb < {f} on nll", f"{f} < bbb on auroc_entropy") for f in FLAVOURS}
MEANS = ("test_error", "nll", "brier", "ece", "auroc_entropy", "auroc_mi")


def _outcome(diff):
    """The plan's rule on the paired fit − MAP NLL interval (helpers.stats.paired_t)."""
    ci = diff.get("ci")
    if not ci:
        return None
    return "failed" if ci[0] > 0 else "below" if ci[1] < 0 else "equal"


def analysis(scores=None, phase1=None, plan_recs=None, plan_v3=None):
    """Per flavour and choice: the chosen precisions, the mean scores (full test sets and the
    subset), the paired fit − MAP NLL (full sets; subset beside it) and the plan's outcome
    ("failed fit" / "equal to MAP" / "better than MAP"), and on each row that is not a failed
    fit plan v3's two claims tested with this row in place of the plan's, in the plan's families
    (Holm within each; the all-layer rows on the subset, as the plan compares them); how many
    grids ended interior; the reproduction check (plan v3's prior precision scored here minus
    plan v3's records, largest |difference| per score)."""
    from .stats import paired_t
    from .utils import PROJECT_ROOT
    scores = score_records() if scores is None else scores
    phase1 = records() if phase1 is None else phase1
    plan_recs = F.records() if plan_recs is None else plan_recs
    plan_v3 = (json.loads((PROJECT_ROOT / A.PLAN).read_text()) if plan_v3 is None else plan_v3)
    seeds = sorted(s for s in scores if s in phase1 and ("map", s) in plan_recs
                   and ("bbb", s) in plan_recs)
    out = {"seeds": seeds, "complete": seeds == list(A.REPORTED_SEEDS),
           "fit_minus_map_on": "full", "claims_on": {f: ("subset" if f in F.ALL_LAYER else
                                                         "full") for f in FLAVOURS},
           "cpu_s": sum(scores[s]["cpu_s"] for s in seeds), "flavours": {}}
    rep = {}  # per flavour, images and the device plan v3's record ran on
    for s in seeds:
        for f, r in scores[s]["flavours"].items():
            dev = F._device(plan_recs.get((f, s), {}))
            for on, diffs in r["plan_v3_minus_record"].items():
                for k, v in diffs.items():
                    key = f"{f} {on} {dev}"
                    rep.setdefault(key, {})[k] = max(abs(v), rep.get(key, {}).get(k, 0.0))
    out["reproduction_max_abs_difference"] = rep
    map_nll = {on: [plan_recs[("map", s)][on]["nll"] for s in seeds] for on in ("full", "subset")}
    out["map"] = {on: {k: statistics.fmean(plan_recs[("map", s)][on][k] for s in seeds)
                       for k in ("nll", "ece", "auroc_entropy", "test_error")} if seeds else None
                  for on in ("full", "subset")}
    bbb = {on: {k: statistics.fmean(plan_recs[("bbb", s)][on][k] for s in seeds)
                for k in ("nll", "auroc_entropy")} if seeds else None
           for on in ("full", "subset")}
    out["bbb"] = bbb
    for f in FLAVOURS:
        rows = {}
        for choice in CHOICES:
            per = {on: {k: [scores[s]["flavours"][f][choice][on][k] for s in seeds]
                        for k in MEANS} for on in ("full", "subset")}
            row = {"prior_precision": [scores[s]["flavours"][f][choice]["prior_precision"]
                                       for s in seeds],
                   "per_seed": per,
                   "mean": {on: {k: statistics.fmean(v) for k, v in per[on].items()}
                            for on in per} if seeds else None,
                   "fit_minus_map_nll": {on: paired_t(per[on]["nll"], map_nll[on])
                                         if len(seeds) > 1 else None for on in per},
                   "fit_minus_map_auroc": paired_t(
                       per["full"]["auroc_entropy"],
                       [plan_recs[("map", s)]["full"]["auroc_entropy"] for s in seeds])
                   if len(seeds) > 1 else None}
            if choice == "val_grid":
                g = [phase1[s]["flavours"][f]["val_grid"] for s in seeds]
                row["median_log10"] = statistics.median(x["chosen_log10"] for x in g) \
                    if g else None
                row["interior"] = sum(x["interior"] for x in g)
                row["at_cap"] = sum(x["at_cap"] for x in g)
            else:
                row["median_log10_per_tensor"] = [
                    statistics.median(math.log10(p[i]) for p in row["prior_precision"])
                    for i in range(len(row["prior_precision"][0]))] if seeds else None
            d = row["fit_minus_map_nll"]["full"]
            row["outcome"] = OUTCOMES.get(_outcome(d)) if d else None
            row["tests"] = None
            if d and row["outcome"] != OUTCOMES["failed"]:
                sub = {k: v for k, v in plan_recs.items() if k[0] != f or k[1] in seeds}
                for s in seeds:
                    sub[(f, s)] = {**sub[(f, s)], "failed": None,
                                   "full": scores[s]["flavours"][f][choice]["full"],
                                   "subset": scores[s]["flavours"][f][choice]["subset"]}
                fams = F._families(sub, plan_v3)
                row["tests"] = {c: next(fam[c] for fam in fams.values() if c in fam)
                                for c in CLAIMS[f]}
            rows[choice] = row
        # the validation curves (phase 1) for the figure: NLL minus MAP's against log10 delta
        rows["validation"] = {
            str(s): {"curve": [[e, v - phase1[s]["map_val_nll"]] for e, v in
                               phase1[s]["flavours"][f]["val_grid"]["curve"]],
                     "chosen_log10": phase1[s]["flavours"][f]["val_grid"]["chosen_log10"],
                     "marglik_log10_per_tensor": [
                         math.log10(v) for v in
                         phase1[s]["flavours"][f]["marglik_layerwise"]["prior_precision"]],
                     "marglik_minus_map": phase1[s]["flavours"][f]["marglik_layerwise"]["val_nll"]
                     - phase1[s]["map_val_nll"]}
            for s in sorted(phase1)}
        out["flavours"][f] = rows
    out["grid_cap_log10"] = list(GRID["cap_log10"])
    return out


def write_summary():
    from .utils import atomic_write_bytes
    out = analysis()
    atomic_write_bytes(summary_path(), (json.dumps(out, indent=1) + "\n").encode())
    return summary_path()
