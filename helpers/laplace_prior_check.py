"""Notebook 06, after plan v3's numbers: how much the last-layer Laplace row owes to its prior
precision. A disclosed sensitivity check (docs/choices.md), never one of the plan's verdicts.

Plan v3 sets the prior precision of every Laplace fit by maximising the marginal likelihood
(laplace-torch's default). Around MAP's network of each reported seed, the last-layer KFAC fit
is scored again under two other settings the library documents or the network implies:

- ``marglik``: the plan's (it reproduces the plan's record of the seed: checked);
- ``gridsearch_val``: laplace-torch's ``optimize_prior_precision(method="gridsearch")`` on the
  validation images, over its default range 10^-4 .. 10^4 at 9 values (``GRID``: one per
  decade; the default 100 cost half an hour per seed on one CPU thread), scored by the
  validation NLL of the GLM probit predictive. The loss is handed over as a plain function
  (``_nll``, the library's documented "offline" loss): laplace-torch 0.3's default running
  metric is never reset between grid values, so it scores each value by the mean NLL of all
  values so far and always picks the last one. The validation curve goes into the record;
- ``map_weight_decay``: the precision MAP's own weight decay implies, N x weight_decay (the L2
  term of the mean loss, scaled to the summed log-likelihood's N training images).

The networks are MAP's final networks (read back from their checkpoints, never retrained); the
scores are those of ``helpers.alternatives_final.score`` (full test and OOD sets). One record per
seed under results/06_alternatives/v3/laplace_prior/; ``analysis`` tests, per setting, plan
v3's two claims on this row (BBB against last-layer Laplace on test NLL and OOD AUROC) as the plan
tests them: the row in place of the plan's, in the plan's families.
"""
import json
import statistics
import time

import torch

from . import alternatives as ALT
from . import alternatives_final as F
from . import alternatives_plan as A

METHOD = "laplace_ll_kron"
SETTINGS = ("marglik", "gridsearch_val", "map_weight_decay")
LABELS = {"marglik": "marginal likelihood (the plan's)",
          "gridsearch_val": "grid search on validation NLL",
          "map_weight_decay": "N × MAP's weight decay"}
CLAIMS = ("bbb < laplace_ll_kron on nll", "laplace_ll_kron < bbb on auroc_entropy")
GRID = {"log_prior_prec_min": -4, "log_prior_prec_max": 4, "grid_size": 9}
FOLDER = f"v{A.VERSION}/laplace_prior"


def _nll(probs, y, curve=None):
    """Mean NLL of labels ``y`` under ``probs`` (a fresh value for every grid point); appended
    to ``curve`` when given."""
    v = -torch.log(probs.gather(1, y[:, None]).clamp_min(1e-12)).mean()
    if curve is not None:
        curve.append(float(v))
    return v


def record_path(seed):
    from .utils import results_dir
    return results_dir() / A.NB / FOLDER / f"seed{int(seed)}.json"


def summary_path():
    """Where ``tools/laplace_prior_check.py analyse`` writes ``analysis``."""
    return record_path(0).parent / "summary.json"


def export_network(seed, data, chosen, folder):
    """Write the weights of MAP's final network of ``seed`` (read back from its checkpoint) to
    ``folder``/seed<s>.pt: a third of the checkpoint's size, for a machine that only scores."""
    base, _ = _network(seed, data, chosen)
    folder.mkdir(parents=True, exist_ok=True)
    torch.save(base.state_dict(), folder / f"seed{int(seed)}.pt")
    return F.fingerprint(base)


def _network(seed, data, chosen, networks=None):
    """MAP's final network of ``seed``: from ``networks``/seed<s>.pt (``export_network``) when
    given, else read back from its training checkpoint; never trained here."""
    from .classification import build_model, checkpoint_path
    cfg = F.final_config("map", chosen["map"], seed)
    if networks is not None:
        model = build_model(cfg, data.x_train.shape[1]).to(data.x_train.device)
        model.load_state_dict(torch.load(networks / f"seed{int(seed)}.pt",
                                         map_location=data.x_train.device, weights_only=True))
        return model.eval(), cfg
    ck = checkpoint_path(cfg, f"{A.NB}/{F.FOLDER}")
    if not ck.exists():
        raise FileNotFoundError(f"MAP's network of seed {seed} ({ck}) is not here: run "
                                "`python tools/alternatives_search.py final` first")
    return F._train("map", cfg, data)[0], cfg


def run_seed(seed, data, x_ood, chosen, progress_fn=print, networks=None):
    """Fit last-layer Laplace around MAP's network of ``seed`` and score it under each of
    ``SETTINGS``; write and return the record. The network must be the one the plan's record of
    the seed names (its weights' fingerprint), wherever it is read from."""
    from torch.utils.data import DataLoader, TensorDataset

    from .campaign import code_version
    from .utils import atomic_write_bytes, machine_info
    t0 = time.perf_counter()
    base, cfg = _network(seed, data, chosen, networks)
    plan_rec = json.loads(F.record_path(METHOD, seed).read_text())
    if F.fingerprint(base) != plan_rec["map_network"]:
        raise RuntimeError(f"seed {seed}: MAP's network differs from the one the plan's "
                           f"{METHOD} record names")
    la, fit_s = ALT.fit_laplace(base, data, METHOD)
    idx_t = F.subset(len(data.y_test), A.LAPLACE["all_layer_subset"]["test"], "test")
    idx_o = F.subset(len(x_ood), A.LAPLACE["all_layer_subset"]["ood"], "ood")
    idx_t, idx_o = idx_t.to(data.x_test.device), idx_o.to(x_ood.device)
    out = {}
    n_train, wd = len(data.y_train), float(cfg.weight_decay)
    for setting in SETTINGS:
        s0 = time.perf_counter()
        curve = None
        if setting == "gridsearch_val":
            val = DataLoader(TensorDataset(data.x_val, data.y_val), batch_size=1000)
            curve = []
            la.optimize_prior_precision(method="gridsearch", val_loader=val,
                                        loss=lambda p, y: _nll(p, y, curve),
                                        **ALT.LAPLACE_PREDICTIVE, **GRID, progress_bar=False)
            grid = torch.logspace(GRID["log_prior_prec_min"], GRID["log_prior_prec_max"],
                                  GRID["grid_size"]).tolist()
            curve = [[g, v] for g, v in zip(grid, curve)]
        elif setting == "map_weight_decay":
            la.prior_precision = n_train * wd
        progress_fn(f"seed {seed}: {setting}: prior precision "
                    f"{float(la.prior_precision.flatten()[0]):.4g}")
        scores = F.score(METHOD, la, data, x_ood, idx_t, idx_o)
        out[setting] = {"prior_precision": float(la.prior_precision.flatten()[0]),
                        "full": scores["full"], "subset": scores["subset"],
                        "validation_nll_curve": curve,
                        "seconds": round(time.perf_counter() - s0, 1)}
    same = {k: out["marglik"]["full"][k] - plan_rec["full"][k] for k in F.SCORES
            if plan_rec["full"].get(k) is not None}
    rec = {"seed": int(seed), "method": METHOD, "map_network": plan_rec["map_network"],
           "n_train": n_train, "map_weight_decay": wd, "settings": out,
           "marglik_minus_plan_record": same, "fit_s": fit_s,
           "machine": machine_info(data.x_train.device), "code": code_version(),
           "process_wall_s": round(time.perf_counter() - t0, 1)}
    path = record_path(seed)
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_bytes(path, (json.dumps(rec, indent=1) + "\n").encode())
    return rec


def records():
    from .utils import results_dir
    return {r["seed"]: r for r in (json.loads(p.read_text()) for p in
                                   sorted((results_dir() / A.NB / FOLDER).glob("seed*.json")))}


def _substituted(plan_recs, recs, setting):
    """Plan v3's records with the last-layer Laplace row's scores replaced by ``setting``'s (its
    full-set scores; the row draws no sample, so it has no Monte-Carlo repeats)."""
    out = dict(plan_recs)
    for s, r in recs.items():
        if (METHOD, s) in out:
            out[(METHOD, s)] = {**out[(METHOD, s)], "full": r["settings"][setting]["full"],
                                "subset": r["settings"][setting]["subset"]}
    return out


def analysis(recs=None, plan_recs=None, plan=None):
    """Per setting: the last-layer Laplace row's per-seed scores and plan v3's two claims on it,
    tested as the plan tests them: the row's scores put in place of the plan's, in the plan's
    families (one per score, Holm over its seven claims), on the seeds with a record; the same
    under each extra predictive seed of BBB (``mc``; the row itself draws nothing); the
    marginal-likelihood setting's largest difference from the plan's records (~0 expected)."""
    from .utils import PROJECT_ROOT
    recs = records() if recs is None else recs
    plan_recs = F.records() if plan_recs is None else plan_recs
    plan = json.loads((PROJECT_ROOT / A.PLAN).read_text()) if plan is None else plan
    seeds = sorted(s for s in recs if ("bbb", s) in plan_recs)
    out = {"seeds": seeds, "complete": seeds == list(A.REPORTED_SEEDS),
           "tests": "plan v3's families, this setting's row in place of the plan's",
           # per score, the largest |difference| of the marginal-likelihood setting from the
           # plan's records (the MI's AUROC draws its predictive samples: it differs most)
           "marglik_reproduces_plan": {
               k: max(abs(r["marglik_minus_plan_record"][k]) for r in recs.values())
               for k in (next(iter(recs.values()))["marglik_minus_plan_record"] if recs else {})}}
    families = {c: next(f for f, cl in plan["tests"]["families"].items() if c in cl)
                for c in CLAIMS}
    out["settings"] = {}
    for setting in SETTINGS:
        sub = _substituted(plan_recs, {s: recs[s] for s in seeds}, setting)
        fams = F._families(sub, plan)
        rob = F.mc_robustness(sub, lambda rr: F._families(rr, plan))
        per = {k: [recs[s]["settings"][setting]["full"][k] for s in seeds]
               for k in ("nll", "auroc_entropy", "ece", "test_error")}
        out["settings"][setting] = {
            "prior_precision": [recs[s]["settings"][setting]["prior_precision"] for s in seeds],
            "per_seed": per,
            "mean": {k: statistics.fmean(v) if v else None for k, v in per.items()},
            "tests": {c: fams[families[c]][c] for c in CLAIMS},
            "mc": {c: rob.get(families[c], {}).get(c) for c in CLAIMS}}
    return out
