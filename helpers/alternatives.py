"""Notebook 06: Bayes by Backprop against what a user would pick instead, on one MLP and one split.

Methods (784-400-400-10 ReLU, MNIST 50k / 10k validation / 10k test):
- ``map``: Adam with weight decay (a MAP estimate), settings from a validation sweep;
- ``mc_dropout``: notebook 05's choice; ``ensemble``: five MAP networks (other seeds);
- ``bbb``: notebook 01's choice (this project's fast layer);
- ``ivon``: the IVON optimiser (Shen et al. 2024, package ``ivon-opt``), a small grid searched
  here with the same rule;
- ``laplace_*``: the Laplace approximation around the MAP network (package ``laplace-torch``):
  last-layer KFAC, all-layer diagonal and all-layer KFAC, prior precision by marginal likelihood,
  each predicting with the library's linearised (GLM) predictive and its probit approximation.

Every setting is chosen on validation data (negative log-likelihood of the method's predictive,
number of epochs included) before any test number is computed. ``build`` trains what is missing
on the reported seeds and writes results/06_alternatives/summary.json.
"""
import json
import math
import statistics
import time

import torch
from torch.nn import functional as F

from .classification import run
from .layers import mlp
from .metrics import (auroc, brier, ece, error_rate, mutual_information, nll,
                      predictive_entropy, reliability)
from .train import load_checkpoint, save_checkpoint
from .uncertainty import sample_probs
from .utils import checkpoints_dir, one_thread, results_dir, save_results

NB = "06_alternatives"
METHODS = ("map", "mc_dropout", "ensemble", "bbb", "ivon", "laplace_ll_kron", "laplace_diag",
           "laplace_kron")
LABELS = {"map": "MAP (Adam + weight decay)", "mc_dropout": "MC dropout",
          "ensemble": "deep ensemble (5)", "bbb": "BBB (this project)", "ivon": "IVON",
          "laplace_ll_kron": "Laplace, last layer, KFAC", "laplace_diag": "Laplace, all layers, diagonal",
          "laplace_kron": "Laplace, all layers, KFAC"}
# Laplace flavours: (weights, Hessian structure, prior-precision structure). The prior precision
# maximises the Laplace marginal likelihood of the training data: one scalar for the last layer
# (the only structure besides a per-weight one that last-layer KFAC takes), one per parameter
# tensor ('layerwise') for all layers, whose layers differ in scale (784 inputs against 400).
LAPLACE = {"laplace_ll_kron": ("last_layer", "kron", "scalar"),
           "laplace_diag": ("all", "diag", "layerwise"),
           "laplace_kron": ("all", "kron", "layerwise")}
# Every flavour predicts as laplace-torch documents for classification (Daxberger et al. 2021,
# the library's README): the linearised (GLM) predictive, the network replaced by its first-order
# expansion around the MAP weights so that the Gaussian over weights becomes a Gaussian over the
# logits, pushed through the softmax by the probit approximation. Immer et al. (2021,
# arXiv:2008.08400) show why: sampling weights through the network itself underfits.
LAPLACE_PREDICTIVE = {"pred_type": "glm", "link_approx": "probit"}
# An ablation only, never a reported row: weights sampled from the Laplace posterior through the
# network (pred_type='nn'), what the all-layer rows used before issue 34 (their rows record no
# 'laplace' settings; ``stale_laplace_rows``).
LAPLACE_NN_ABLATION = {"pred_type": "nn", "link_approx": "mc"}
ANGLES = tuple(range(0, 181, 15))
METRICS = ("test_error", "nll", "brier", "ece", "auroc_entropy", "auroc_mi")


# ---- IVON: a variational optimiser; the network itself is an ordinary MLP ----

def ivon_name(hp, seed, epochs):
    ess = float(hp.get("ess_factor", 1.0))
    const = hp.get("schedule", "cosine") == "constant"
    return (f"ivon_h{hp['H']}_e{epochs}_lr{hp['lr']:g}_h0{hp['hess_init']:g}_wd{hp['weight_decay']:g}"
            + (f"_ess{ess:g}" if ess != 1.0 else "") + ("_const" if const else "")
            + f"_s{seed}").replace(".", "p")


def train_ivon(hp, data, seed, epochs, notebook=NB, on_epoch=None, eval_sets=("val",)):
    """Train an MLP with IVON (``hp``: H, lr, hess_init, weight_decay, batch_size, and
    ess_factor: the effective sample size in training-set sizes, default 1, the package's
    documented use; schedule: 'cosine' (default) or 'constant'); return (model, optimizer,
    history). Cosine learning rate over ``epochs`` unless constant;
    checkpoints every 5 epochs and resumes; ``on_epoch(epoch, model, optimizer)`` after each
    epoch."""
    import ivon
    torch.manual_seed(seed)
    model = mlp(data.x_train.shape[1], (hp["H"], hp["H"]), 10)
    N, bs = len(data.x_train), hp.get("batch_size", 128)
    steps = epochs * math.ceil(N / bs)
    opt = ivon.IVON(model.parameters(), lr=hp["lr"], ess=N * float(hp.get("ess_factor", 1.0)),
                    hess_init=hp["hess_init"],
                    weight_decay=hp["weight_decay"], beta2=0.99999)
    schedule = hp.get("schedule", "cosine")
    if schedule not in ("cosine", "constant"):
        raise ValueError(f"schedule must be 'cosine' or 'constant', got {schedule!r}")
    sched = (torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=steps) if schedule == "cosine"
             else torch.optim.lr_scheduler.ConstantLR(opt, factor=1.0, total_iters=0))
    ck = checkpoints_dir() / notebook / f"{ivon_name(hp, seed, epochs)}.pt"
    history, start, wall = [], 0, 0.0
    if ck.exists():
        st = load_checkpoint(ck)
        model.load_state_dict(st["model"])
        opt.load_state_dict(st["optimizer"])
        sched.load_state_dict(st["scheduler"])
        history, start = list(st["history"]), int(st["epoch"])
        torch.set_rng_state(st["rng"])
        wall = history[-1]["wall_s"] if history else 0.0
    for epoch in range(start, epochs):
        t0 = time.perf_counter()
        gen = torch.Generator().manual_seed(seed * 1_000_003 + epoch)
        perm = torch.randperm(N, generator=gen)
        model.train()
        for i in range(0, N, bs):
            idx = perm[i:i + bs]
            with opt.sampled_params(train=True):
                opt.zero_grad()
                loss = F.cross_entropy(model(data.x_train[idx]), data.y_train[idx])
                loss.backward()
            opt.step()
            sched.step()
            if not math.isfinite(loss.item()):
                raise FloatingPointError(f"IVON diverged at epoch {epoch + 1}: lower lr")
        wall += time.perf_counter() - t0
        history.append({"epoch": epoch + 1, "wall_s": wall})
        if (epoch + 1) % 5 == 0 or epoch + 1 == epochs:
            save_checkpoint(ck, model=model.state_dict(), optimizer=opt.state_dict(),
                            scheduler=sched.state_dict(), history=history, epoch=epoch + 1,
                            rng=torch.get_rng_state())
        if on_epoch is not None:
            on_epoch(epoch + 1, model, opt, history[-1])
    return model, opt, history


@torch.no_grad()
def ivon_probs(model, opt, x, n_samples, batch_size=5000):
    """Return (S, B, C) class probabilities under S weight samples of IVON's posterior."""
    model.eval()
    out = []
    for _ in range(n_samples):
        with opt.sampled_params():
            out.append(torch.cat([F.softmax(model(x[i:i + batch_size]), -1)
                                  for i in range(0, len(x), batch_size)]))
    return torch.stack(out)


def tune_ivon(grid, data, epochs, n_samples=10, seed=100, epoch_step=5, progress_fn=None):
    """Search IVON's ``grid`` (list of hp dicts) on validation: every setting for ``epochs`` epochs,
    validation NLL of the predictive every ``epoch_step`` epochs; return the trial rows and the
    choice (lowest NLL; ties: fewer epochs, then the earlier setting)."""
    rows = []
    for hp in grid:
        curve = []

        def record(epoch, model, opt, _row):
            if epoch % epoch_step == 0 or epoch == epochs:
                torch.manual_seed(seed + 12345)
                p = ivon_probs(model, opt, data.x_val, n_samples).mean(0)
                curve.append([epoch, nll(p, data.y_val), error_rate(p, data.y_val)])
        if progress_fn:
            progress_fn(f"IVON {hp}")
        model, opt, hist = train_ivon(hp, data, seed, epochs, on_epoch=record)
        if not curve:  # resumed from a finished checkpoint: evaluate the last epoch only
            record(epochs, model, opt, None)
        best = min(curve, key=lambda c: (c[1], c[0]))
        rows.append({"hp": hp, "val_curve": curve, "val": best[1], "val_error": best[2],
                     "best_epoch": best[0], "wall_s": hist[-1]["wall_s"]})
    best = min(enumerate(rows), key=lambda it: (it[1]["val"], it[1]["best_epoch"], it[0]))[1]
    return rows, {"hp": best["hp"], "epochs": best["best_epoch"], "val": best["val"],
                  "val_error": best["val_error"]}


# ---- Laplace around the MAP network ----

def laplace_settings(flavour):
    """Return what defines the Laplace row ``flavour``: weights, Hessian, prior structure and
    predictive (stored with each row; a row made with other settings is recomputed)."""
    subset, hessian, prior = LAPLACE[flavour]
    return {"subset_of_weights": subset, "hessian_structure": hessian,
            "prior_structure": prior, "prior_precision": "marglik", **LAPLACE_PREDICTIVE}


def fit_laplace(model, data, flavour, batch_size=256):
    """Return (laplace object, fit seconds) of ``flavour`` around the trained ``model``
    (``data.x_train``, ``data.y_train``), with the prior precision set by maximising the
    marginal likelihood (structure: ``LAPLACE[flavour][2]``)."""
    import warnings

    from laplace import Laplace
    from laplace.curvature import BackPackGGN
    from torch.utils.data import DataLoader, TensorDataset
    subset, hessian, prior = LAPLACE[flavour]
    # all layers: BackPack's exact GGN (its diagonal, or KFLR Kronecker factors) and its
    # per-example Jacobians for the GLM predictive. laplace-torch's default backend (curvlinops)
    # computes the diagonal through per-example Jacobians (hundreds of times slower here) and the
    # predictive's Jacobians with torch.func.jacrev over the whole batch: time quadratic in the
    # batch size, linear through BackPack (one backward pass per class)
    kw = {"backend": BackPackGGN} if subset == "all" else {}
    t0 = time.perf_counter()
    model.eval()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        la = Laplace(model, "classification", subset_of_weights=subset, hessian_structure=hessian,
                     **kw)
        la.fit(DataLoader(TensorDataset(data.x_train, data.y_train), batch_size=batch_size))
        la.optimize_prior_precision(method="marglik", prior_structure=prior, n_steps=100, lr=0.1,
                                    **LAPLACE_PREDICTIVE)
    share_glm_passes(la)
    return la, time.perf_counter() - t0


def share_glm_passes(la, max_bytes=512 * 2**20):
    """Let the GLM predictive (``laplace_probs``) and its samples (``laplace_samples``) of one
    batch share one pass of the library's ``_glm_predictive_distribution`` (the Jacobians of
    every input and the functional variance: nearly all of a Laplace prediction's time).

    The library's method is called as before; its result for a batch is kept and handed back
    when the same batch (the same memory, shape and strides; the batch is held, so its memory
    cannot be reused) comes again under the same prior precision. The batches held stay under
    ``max_bytes`` (oldest dropped first: a dropped batch is computed again). Values are those of
    the library's own calls (tests/test_laplace_glm.py)."""
    from collections import OrderedDict
    original = la._glm_predictive_distribution
    cache = OrderedDict()  # key -> (the batch, prior precision, result)

    def shared(X, joint=False, diagonal_output=False):
        if not isinstance(X, torch.Tensor) or joint or diagonal_output:
            return original(X, joint=joint, diagonal_output=diagonal_output)
        key = (X.data_ptr(), tuple(X.shape), X.stride(), X.dtype)
        prior = la.prior_precision.detach().clone()
        hit = cache.get(key)
        if hit is not None and torch.equal(hit[1], prior):
            return hit[2]
        out = original(X)
        cache[key] = (X, prior, out)
        while sum(v[0].nbytes for v in cache.values()) > max_bytes and len(cache) > 1:
            cache.popitem(last=False)
        return out

    la._glm_predictive_distribution = shared
    return la


def _laplace_batch(la, floats=None, most=2000):
    """Inputs per call: the GLM predictive holds a (batch, classes, parameters) Jacobian; keep it
    near ``floats`` numbers (default 1 GB in float32 on a CPU, 10 GB on a GPU)."""
    if floats is None:
        floats = 2.5e9 if la._device.type == "cuda" else 2.5e8
    return int(max(1, min(most, floats // (la.n_params * la.n_outputs))))


def laplace_probs(la, x, batch_size=None, predictive=None, n_samples=20, seed=0):
    """Return (1, B, C): the predictive of a fitted Laplace approximation, the linearised (GLM)
    one with the probit approximation (``LAPLACE_PREDICTIVE``). ``predictive=
    LAPLACE_NN_ABLATION`` (an ablation, never a reported row) returns (S, B, C) instead: the
    network's softmax under ``n_samples`` weight samples (generator seeded with ``seed``)."""
    import warnings
    predictive = LAPLACE_PREDICTIVE if predictive is None else predictive
    bs = batch_size or _laplace_batch(la)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if predictive["pred_type"] == "glm":
            return torch.cat([la(x[i:i + bs], **predictive).detach()
                              for i in range(0, len(x), bs)])[None]
        gen = torch.Generator(device=x.device).manual_seed(seed)
        with torch.no_grad():
            return torch.cat([la.predictive_samples(x[i:i + bs], pred_type="nn",
                                                    n_samples=n_samples, generator=gen)
                              for i in range(0, len(x), bs)], dim=1)


def laplace_samples(la, x, n_samples, batch_size=None, seed=0):
    """Return (S, B, C) softmax samples of the linearised (GLM) predictive: the logits drawn from
    their Gaussian (for the mutual information; the predictive itself is ``laplace_probs``)."""
    import warnings
    bs = batch_size or _laplace_batch(la)
    gen = torch.Generator(device=x.device).manual_seed(seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return torch.cat([la.predictive_samples(x[i:i + bs], pred_type="glm", n_samples=n_samples,
                                                generator=gen).detach()
                          for i in range(0, len(x), bs)], dim=1)


# ---- evaluation ----

def rotated(x, angle):
    """Return flattened 28x28 images ``x`` rotated by ``angle`` degrees (no new data)."""
    from torchvision.transforms.functional import rotate
    if angle == 0:
        return x
    imgs = x.view(-1, 1, 28, 28)
    return rotate(imgs, float(angle)).reshape(len(x), -1)


def _bins(probs, y):
    centres, acc, conf, count = reliability(probs, y)
    clean = lambda v: [None if c != c else c for c in v]  # noqa: E731 (empty bins)
    return {"centres": centres, "accuracy": clean(acc), "confidence": clean(conf), "count": count}


def evaluate(probs_fn, data, x_ood, angles=ANGLES, has_mi=True, samples_fn=None):
    """Return every test metric of one trained method: ``probs_fn(x) -> (S, B, C)``, whose mean
    over S is the predictive. ``samples_fn(x) -> (S, B, C)``: where the predictive comes in one
    piece (S = 1, e.g. Laplace's probit), the samples the mutual information is computed from."""
    y = data.y_test
    t0 = time.perf_counter()
    p_in = probs_fn(data.x_test)
    predict_s = time.perf_counter() - t0
    p_out = probs_fn(x_ood)
    m_in = p_in.mean(0)
    s_in, s_out = (samples_fn(data.x_test), samples_fn(x_ood)) if samples_fn else (p_in, p_out)
    out = {"test_error": error_rate(m_in, y), "nll": nll(m_in, y), "brier": brier(m_in, y),
           "ece": ece(m_in, y), "predict_s_10k": predict_s * 10_000 / len(y),
           "auroc_entropy": auroc(predictive_entropy(m_in), predictive_entropy(p_out.mean(0))),
           "auroc_mi": (auroc(mutual_information(s_in), mutual_information(s_out))
                        if has_mi and s_in.shape[0] > 1 else None),
           "reliability": _bins(m_in, y)}
    curves = {"angle": list(angles), "error": [], "nll": [], "ece": []}
    for a in angles:
        m = probs_fn(rotated(data.x_test, a)).mean(0)
        curves["error"].append(error_rate(m, y))
        curves["nll"].append(nll(m, y))
        curves["ece"].append(ece(m, y))
    out["rotation"] = curves
    return out


def stored_floats(method, obj):
    """Return how many numbers a method keeps to predict (parameters, variances, factors)."""
    if method == "ensemble":
        return sum(p.numel() for m in obj for p in m.parameters())
    if method == "ivon":
        model, opt = obj
        return 2 * sum(p.numel() for p in model.parameters())
    if method.startswith("laplace"):
        la = obj
        n = sum(p.numel() for p in la.model.parameters())
        h = la.H
        if hasattr(h, "eigenvectors"):  # a Kronecker-factored precision, eigendecomposed
            n += sum(t.numel() for group in (h.eigenvectors, h.eigenvalues)
                     for blocks in group for t in blocks)
        elif torch.is_tensor(h):
            n += h.numel()
        return n
    return sum(p.numel() for p in obj.parameters())


# ---- the whole comparison ----

def _summary(rows):
    """Return per-method {metric: {per_seed, mean, sd}} from the per-seed rows."""
    by = {}
    for r in rows:
        by.setdefault(r["method"], []).append(r)
    out = []
    for method in METHODS:
        rs = sorted(by.get(method, []), key=lambda r: r["seed"])
        if not rs:
            continue
        entry = {"method": method, "label": LABELS[method], "seeds": [r["seed"] for r in rs]}
        for m in METRICS + ("train_time_ratio", "train_s", "predict_s_10k", "stored_floats"):
            vals = [r[m] for r in rs]
            entry[m] = None if any(v is None for v in vals) else {
                "per_seed": vals, "mean": statistics.fmean(vals),
                "sd": statistics.stdev(vals) if len(vals) > 1 else None}
        entry["rotation"] = {k: [statistics.fmean(r["rotation"][k][i] for r in rs)
                                 for i in range(len(rs[0]["rotation"]["angle"]))]
                             for k in ("error", "nll", "ece")}
        entry["rotation"]["angle"] = rs[0]["rotation"]["angle"]
        entry["rotation_per_seed"] = [r["rotation"] for r in rs]
        entry["reliability_seed0"] = rs[0]["reliability"]
        out.append(entry)
    return out


# MC dropout and BBB take the settings (and seeds) of notebooks 05 and 01, so their networks are
# the ones those notebooks train: read back from (or trained into) those notebooks' checkpoints
TRAINED_IN = {"mc_dropout": "05_uncertainty", "bbb": "01_mnist_classification"}


def build(profile, notebook=NB, train=True, progress_fn=print, device="cpu"):
    """Run (or read back) the whole comparison of ``profile`` (a ``get_profile`` namespace of
    notebook 06); write results/<notebook>/summary.json and return it. Trainings run on one
    thread, as the trainings of notebooks 01 and 05 whose networks it reuses, so that the
    training-time ratios compare like with like."""
    with one_thread():
        return _build(profile, notebook, train, progress_fn, device)


def reported_configs(seed, profile, notebook=NB):
    """Return {method: (RunConfig, notebook whose checkpoints hold it)} of the networks trained
    for one reported seed: MAP, MC dropout, BBB and the ensemble's other members."""
    from dataclasses import replace

    from .classification import chosen_config
    cfgs = {"map": chosen_config("map_mnist", notebook, seed=seed),
            "mc_dropout": chosen_config("mc_dropout_mnist", "05_uncertainty", seed=seed),
            "bbb": chosen_config(f"bbb_mixture_h{profile.H}", "01_mnist_classification",
                                 seed=seed)}
    out = {k: (c, TRAINED_IN.get(k, notebook)) for k, c in cfgs.items()}
    for k in range(1, profile.ensemble_size):
        out[f"ensemble_{k + 1}"] = (replace(cfgs["map"], seed=seed + 1000 * k), notebook)
    return out


def train_networks(profile, seeds, notebook=NB, device="cpu", progress_fn=print):
    """Train (or resume) the networks of ``seeds`` on one thread without evaluating them, so that
    several processes can share the training (tools/alternatives.py --train-only); ``build``
    reads them back. IVON and Laplace are fitted by ``build`` itself."""
    from .data import load_images
    bad = [s for s in seeds if s not in profile.seeds]
    if bad:
        raise ValueError(f"seeds {bad} are not reported seeds of this profile {list(profile.seeds)}")
    data = load_images("MNIST", device=device, n_train=profile.n_train, n_test=profile.n_eval)
    with one_thread():
        for seed in seeds:
            for key, (cfg, home) in reported_configs(seed, profile, notebook).items():
                progress_fn(f"seed {seed}: {key}")
                run(cfg, data, notebook=home, eval_samples=2)


def stale_laplace_rows(summary):
    """Return the Laplace rows of a summary record made with other settings than
    ``laplace_settings`` gives now (rows from before issue 34 record none: their all-layer rows
    sampled weights through the network); ``build(train=True)`` recomputes them."""
    return [r for r in summary["metrics"]["per_seed"]
            if r["method"] in LAPLACE and r.get("laplace") != laplace_settings(r["method"])]


def _build(profile, notebook, train, progress_fn, device):
    from .data import load_images
    from .sweep import ensure_sweeps
    path = results_dir() / notebook / "summary.json"
    done = {}
    if path.exists():
        old = json.loads(path.read_text())
        if old.get("profile") == profile.profile:
            done = {(r["method"], r["seed"]): r for r in old["metrics"]["per_seed"]}
    if train:  # a Laplace row made with other settings (before issue 34: weight sampling) is redone
        stale = {(r["method"], r["seed"]) for r in stale_laplace_rows(old)} if done else set()
        done = {k: r for k, r in done.items() if k not in stale}
    todo = [(m, s) for s in profile.seeds for m in METHODS if (m, s) not in done]
    if todo and not train:
        return None  # not computed yet (the notebook says so)
    if not todo:  # read back as it is: rewriting would replace the run's wall time and machine
        return old
    t_start = time.perf_counter()
    data = load_images("MNIST", device=device, n_train=profile.n_train, n_test=profile.n_eval)
    x_ood = load_images("FashionMNIST", device=device, n_train=profile.n_train,
                        n_test=profile.n_eval).x_test
    sweeps = ensure_sweeps(notebook, profile, run_missing=train)
    if set(sweeps) != set(profile.sweeps):
        raise FileNotFoundError(f"searches {sorted(set(profile.sweeps) - set(sweeps))} are missing: "
                                f"run `make sweep ONLY=06` or build with train=True")
    ivon_path = results_dir() / notebook / "ivon_tuning.json"
    if ivon_path.exists():
        ivon_rec = json.loads(ivon_path.read_text())
    else:
        rows_i, choice = tune_ivon([dict(hp, H=profile.H) for hp in profile.ivon_grid], data,
                                   profile.ivon_epochs, profile.eval_samples // 2 or 1,
                                   progress_fn=progress_fn)
        save_results(notebook, "ivon_tuning", config={"grid": profile.ivon_grid,
                                                       "epochs": profile.ivon_epochs},
                     metrics={"trials": rows_i, "chosen": choice}, profile=profile.profile,
                     seed=100, extra={"selected_on": "validation",
                                      "rule": "lowest validation NLL of the predictive (every "
                                              "5 epochs); ties: fewer epochs, earlier setting"})
        ivon_rec = json.loads(ivon_path.read_text())
    ivon_choice = ivon_rec["metrics"]["chosen"]
    rows = list(done.values())
    S = profile.eval_samples
    for seed in profile.seeds:
        if all((m, seed) in done for m in METHODS):
            continue
        nets = reported_configs(seed, profile, notebook)
        cfgs = {k: c for k, (c, _) in nets.items()}
        trained, walls = {}, {}
        for key in ("map", "mc_dropout", "bbb"):
            progress_fn(f"seed {seed}: {key}")
            home = nets[key][1]  # same config and seed as in notebook 01 / 05: the same network
            model, rec = run(cfgs[key], data, notebook=home, eval_samples=2)
            trained[key] = model
            walls[key] = rec["metrics"]["train_wall_s"]
            if cfgs[key].init_from:  # a warm start also paid for the network it starts from
                _, src = run(cfgs[key].init_source(), data, notebook=home, eval_samples=2)
                walls[key] += src["metrics"]["train_wall_s"]
        members = [trained["map"]]
        walls["ensemble"] = walls["map"]
        for k in range(1, profile.ensemble_size):
            progress_fn(f"seed {seed}: ensemble member {k + 1}")
            model, rec = run(cfgs[f"ensemble_{k + 1}"], data, notebook=notebook, eval_samples=2)
            members.append(model)
            walls["ensemble"] += rec["metrics"]["train_wall_s"]
        trained["ensemble"] = members
        progress_fn(f"seed {seed}: ivon")
        model, opt, hist = train_ivon(dict(ivon_choice["hp"]), data, seed, ivon_choice["epochs"])
        trained["ivon"], walls["ivon"] = (model, opt), hist[-1]["wall_s"]
        for flavour in LAPLACE:
            progress_fn(f"seed {seed}: {flavour}")
            la, fit_s = fit_laplace(trained["map"], data, flavour)
            trained[flavour], walls[flavour] = la, walls["map"] + fit_s
        probs = {
            "map": lambda x: sample_probs("deterministic", trained["map"], x),
            "mc_dropout": lambda x: sample_probs("mc_dropout", trained["mc_dropout"], x, S),
            "ensemble": lambda x: sample_probs("ensemble", trained["ensemble"], x),
            "bbb": lambda x: sample_probs("bbb", trained["bbb"], x, S),
            "ivon": lambda x: ivon_probs(*trained["ivon"], x, S),
        }
        samples = {}
        for flavour in LAPLACE:
            probs[flavour] = (lambda f: lambda x: laplace_probs(trained[f], x))(flavour)
            samples[flavour] = (lambda f: lambda x: laplace_samples(trained[f], x, S, seed=seed))(
                flavour)
        for method in METHODS:
            if (method, seed) in done:
                continue
            progress_fn(f"seed {seed}: evaluating {method}")
            torch.manual_seed(seed + 12345)
            metrics = evaluate(probs[method], data, x_ood, profile.angles,
                               has_mi=method != "map", samples_fn=samples.get(method))
            if method in LAPLACE:
                metrics["laplace"] = laplace_settings(method)
            rows.append({"method": method, "seed": seed, "train_s": walls[method],
                         "train_time_ratio": walls[method] / walls["map"],
                         "stored_floats": stored_floats(method, trained[method]), **metrics})
            _save(rows, profile, notebook, sweeps, ivon_rec, time.perf_counter() - t_start)
    _save(rows, profile, notebook, sweeps, ivon_rec, time.perf_counter() - t_start)
    return json.loads(path.read_text())


def _save(rows, profile, notebook, sweeps, ivon_rec, wall):
    save_results(notebook, "summary",
                 config={"H": profile.H, "seeds": list(profile.seeds),
                         "eval_samples": profile.eval_samples,
                         "ensemble_size": profile.ensemble_size, "angles": list(profile.angles),
                         "chosen": {"map": sweeps["map_mnist"]["metrics"]["chosen"]["config"],
                                    "ivon": ivon_rec["metrics"]["chosen"]},
                         "laplace": {f: laplace_settings(f) for f in LAPLACE},
                         "sources": {"map": f"results/{notebook}/sweep/map_mnist.json",
                                     "ivon": f"results/{notebook}/ivon_tuning.json",
                                     "mc_dropout": "results/05_uncertainty/sweep/mc_dropout_mnist.json",
                                     "bbb": "results/01_mnist_classification/sweep/"
                                            f"bbb_mixture_h{profile.H}.json"}},
                 metrics={"rows": _summary(rows), "per_seed": rows}, profile=profile.profile,
                 seed=list(profile.seeds), wall_s=wall,
                 extra={"selected_on": "validation",
                        "note": "train_time_ratio: training wall time / MAP's, same machine, one "
                                "thread per training; MC dropout's and BBB's networks are those of "
                                "notebooks 05 and 01 (same settings and seeds), timed in those "
                                "runs; a warm start includes its SGD network, the ensemble its "
                                "five members, Laplace the MAP network plus its fit",
                        "trained_in": {**{m: notebook for m in METHODS}, **TRAINED_IN}})


# ---- notebook 06's table, figures and verdict, from summary.json ----

COLUMNS = [("test_error", "test error (%)", 100, 2), ("nll", "NLL", 1, 3), ("brier", "Brier", 1, 4),
           ("ece", "ECE", 1, 4), ("auroc_entropy", "AUROC entropy", 1, 3),
           ("auroc_mi", "AUROC MI", 1, 3), ("train_time_ratio", "train time / MAP", 1, 2),
           ("predict_s_10k", "predict 10k (s)", 1, 2), ("stored_floats", "numbers stored", 1, 0)]


def _fmt(entry, scale, digits):
    if entry is None:
        return "—"
    if digits == 0:
        return f"{entry['mean'] / 1e6:.2f} M"
    sd = "" if entry["sd"] is None else f" ± {scale * entry['sd']:.{digits}f}"
    return f"{scale * entry['mean']:.{digits}f}{sd}"


def training_minutes(summary):
    """Return (trained here, reused) minutes of training summed over seeds: the ensemble (MAP
    included), IVON and each Laplace fit; MC dropout and BBB come from notebooks 05 and 01."""
    rows = summary["metrics"]["per_seed"]
    map_s = {r["seed"]: r["train_s"] for r in rows if r["method"] == "map"}
    own = reused = 0.0
    for r in rows:
        if r["method"] in ("ensemble", "ivon"):
            own += r["train_s"]
        elif r["method"] in LAPLACE:
            own += r["train_s"] - map_s[r["seed"]]  # the fit alone; MAP is in the ensemble
        elif r["method"] != "map":
            reused += r["train_s"]
    return own / 60, reused / 60


def summary_rows(summary):
    """Return (header, rows) of the methods × metrics table (mean ± sd over seeds)."""
    header = ["method"] + [c[1] for c in COLUMNS]
    rows = [[r["label"]] + [_fmt(r[k], s, d) for k, _, s, d in COLUMNS]
            for r in summary["metrics"]["rows"]]
    return header, rows


def _name(m):
    """A method's name in a sentence: 'MAP', 'BBB', 'last-layer Laplace', else its label."""
    return (LABELS[m].split(" (")[0] if m in ("map", "bbb") else
            SHORT[m] if m.startswith("laplace") else LABELS[m])


from .report import and_list as _and  # noqa: E402  'a, b and c'


def working(summary, max_error=0.5):
    """Return the result rows of the methods whose test error is below ``max_error`` (all rows
    when none is, as in a smoke run)."""
    rows = summary["metrics"]["rows"]
    return [r for r in rows if r["test_error"]["mean"] < max_error] or rows


def reliability_figure(summary, min_count=10):
    """Reliability diagrams (seed 0) of the working methods on the MNIST test set; bins with
    fewer than ``min_count`` images are left out (their accuracy is noise)."""
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(6.5, 5), constrained_layout=True)
    for r in working(summary):
        rel = r["reliability_seed0"]
        pts = [(c, a) for c, a, k in zip(rel["confidence"], rel["accuracy"], rel["count"])
               if k >= min_count]
        ax.plot(*zip(*pts), "o-", ms=3, lw=1, label=r["label"])
    ax.plot([0, 1], [0, 1], "k:", lw=1, label="calibrated")
    ax.set(xlabel="confidence (mean top probability in the bin)", ylabel="accuracy in the bin",
           title=f"MNIST test set, seed 0 (bins with ≥ {min_count} images)")
    ax.legend(fontsize=7, loc="lower right")
    return fig


def rotation_figure(summary):
    """Error, NLL and ECE against the rotation angle (mean over seeds), one line per method."""
    import matplotlib.pyplot as plt
    from .plotting import percent_axis
    fig, axes = plt.subplots(1, 3, figsize=(14, 4), constrained_layout=True)
    for r in summary["metrics"]["rows"]:
        rot = r["rotation"]
        for ax, key in zip(axes, ("error", "nll", "ece")):
            ax.plot(rot["angle"], rot[key], "o-", ms=3, lw=1, label=r["label"])
    for ax, (key, label) in zip(axes, (("error", "test error"), ("nll", "NLL (nats)"),
                                       ("ece", "ECE"))):
        ax.set(xlabel="rotation of the test digits (degrees)", ylabel=label, xticks=range(0, 181, 30))
    percent_axis(axes[0], "y", decimals=0)
    axes[0].legend(fontsize=7)
    return fig


def summary_figure(summary):
    """Methods × metrics, each metric scaled to [0 (best), 1 (worst)] over the methods."""
    import matplotlib.pyplot as plt
    rows = summary["metrics"]["rows"]
    keys = [("test_error", "error", False), ("nll", "NLL", False), ("brier", "Brier", False),
            ("ece", "ECE", False), ("auroc_entropy", "AUROC\n(entropy)", True),
            ("rot_nll", "NLL at\n60–120°", False),
            ("train_time_ratio", "training time\n(× MAP)", False),
            ("predict_s_10k", "prediction of\n10k images (s)", False)]
    vals = []
    for r in rows:
        mid = [i for i, a in enumerate(r["rotation"]["angle"]) if 60 <= a <= 120]
        rot = sum(r["rotation"]["nll"][i] for i in mid) / max(len(mid), 1)
        vals.append([rot if k == "rot_nll" else r[k]["mean"] for k, _, _ in keys])
    t = torch.tensor(vals)
    ok = torch.tensor([r in working(summary) for r in rows])  # failed methods don't set the scale
    lo, hi = t[ok].min(0).values, t[ok].max(0).values
    scaled = ((t - lo) / (hi - lo).clamp_min(1e-12)).clamp(0, 1)
    for j, (_, _, higher_better) in enumerate(keys):
        if higher_better:
            scaled[:, j] = 1 - scaled[:, j]
    scaled[~ok] = float("nan")  # failed methods: grey, their numbers only
    cmap = plt.get_cmap("RdYlGn_r").with_extremes(bad="0.85")
    fig, ax = plt.subplots(figsize=(10, 0.45 * len(rows) + 1.6), constrained_layout=True)
    im = ax.imshow(scaled, cmap=cmap, vmin=0, vmax=1, aspect="auto")
    ax.set_xticks(range(len(keys)), [k[1] for k in keys], fontsize=8)
    ax.set_yticks(range(len(rows)), [r["label"] for r in rows], fontsize=8)
    ax.grid(False)
    for i in range(len(rows)):
        for j in range(len(keys)):
            v = t[i, j].item()
            txt = f"{100 * v:.1f}%" if keys[j][0] == "test_error" else f"{v:.3g}"
            dark = bool(ok[i]) and abs(scaled[i, j].item() - 0.5) > 0.33
            ax.text(j, i, txt, ha="center", va="center", fontsize=7,
                    color="white" if dark else "black")
    fig.colorbar(im, ax=ax, label="0 = best method, 1 = worst working one", shrink=0.8)
    ax.set_title("mean over seeds; colour scaled per column over the methods with error < 50 % "
                 "(grey: failed)")
    return fig


def verdict(summary):
    """Return lines answering: does BBB reach the best AUROC and ECE at <= 3x MAP's training
    time? A gap smaller than the seed spread is reported as such."""
    rows = {r["method"]: r for r in summary["metrics"]["rows"]}
    bbb = rows["bbb"]
    lines = []
    for key, name, better in (("auroc_entropy", "AUROC (entropy)", max), ("ece", "ECE", min)):
        best_m = better(rows, key=lambda m: rows[m][key]["mean"])
        if best_m == "bbb":  # then compare with the runner-up
            best_m = better((m for m in rows if m != "bbb"), key=lambda m: rows[m][key]["mean"])
        b, o = bbb[key], rows[best_m][key]
        spread = max(b["sd"] or 0.0, o["sd"] or 0.0)
        gap = b["mean"] - o["mean"]
        within = abs(gap) <= spread
        who = "best other" if better(b["mean"], o["mean"]) == b["mean"] else "best"
        lines.append(f"{name}: BBB {b['mean']:.4f} ± {b['sd'] or 0:.4f}; {who} {LABELS[best_m]} "
                     f"{o['mean']:.4f} ± {o['sd'] or 0:.4f}; gap {gap:+.4f} "
                     + ("(within the seed spread)" if within else "(larger than the seed spread)"))
    ratio = bbb["train_time_ratio"]["mean"]
    lines.append(f"training time: BBB {ratio:.2f}x MAP ({'<=' if ratio <= 3 else '>'} 3x)")
    return lines


SPREAD_RULE = "a gap to it no larger than the larger of the two standard deviations over seeds"


def _digits_apart(values, digits, most=8):
    """The fewest decimals (at least ``digits``) at which ``values`` print differently."""
    d = digits
    while d < most and len({f"{v:.{d}f}" for v in values}) < len(set(values)):
        d += 1
    return d


def _tied_groups(methods, value, digits):
    """``methods`` in order of ``value``, grouped where their values print alike at ``digits``."""
    groups = []
    for m in methods:
        if groups and f"{value(groups[-1][0]):.{digits}f}" == f"{value(m):.{digits}f}":
            groups[-1].append(m)
        else:
            groups.append([m])
    return groups


def _group_words(group, value, digits, name):
    """(words, tie): 'IVON (0.0032)'; for methods whose values print alike at ``digits``
    decimals, each with enough decimals to order them (tie 'printed'), or one shared value
    when they are equal (tie 'equal')."""
    values = [value(m) for m in group]
    if len(group) == 1:
        return f"{name(group[0])} ({values[0]:.{digits}f})", None
    if len(set(values)) == 1:
        return f"{_and([name(m) for m in group])} ({values[0]:.{digits}f} each)", "equal"
    d = _digits_apart(values, digits + 1)
    return _and([f"{name(m)} ({value(m):.{d}f})" for m in group]), "printed"


NUMBER_WORDS = {2: "two", 3: "three", 4: "four", 5: "five"}


def summary_text(summary, ood05=None):
    """Return notebook 06's reading of its summary table (Markdown bullets; version 1:
    descriptive, no declared test), every number from ``summary``
    (results/06_alternatives/summary.json) and, for the comparison with notebook 05, ``ood05``
    (helpers.uncertainty.summarise of notebook 05's ood.json). "Within one seed spread" is
    defined where it is first used (``SPREAD_RULE``), every working method outside the band is
    named, a side of the band decided below the printed precision is said so (with the digits
    that decide it), and means that print alike are given as a tie."""
    rows = {r["method"]: r for r in summary["metrics"]["rows"]}
    ok = [m for m in rows if rows[m]["test_error"]["mean"] < 0.5]  # the working methods
    au = lambda m: rows[m]["auroc_entropy"]  # noqa: E731
    top = sorted(ok, key=lambda m: -au(m)["mean"])
    gap = lambda m: au(top[0])["mean"] - au(m)["mean"]  # noqa: E731
    spread = lambda m: max(au(top[0])["sd"] or 0, au(m)["sd"] or 0)  # noqa: E731
    band = [m for m in top if gap(m) <= spread(m)]
    owner = lambda m: max((top[0], m), key=lambda k: au(k)["sd"] or 0)  # noqa: E731
    name = _name
    fmt = lambda m: f"{au(m)['mean']:.3f}" + (  # noqa: E731
        f" ± {au(m)['sd']:.3f}" if au(m)["sd"] is not None else "")
    n = len(rows["bbb"]["seeds"])
    cap = lambda s: s[0].upper() + s[1:]  # noqa: E731
    out = [f"**What the table shows** (version 1: descriptive, {n} seed{'s' if n != 1 else ''}, "
           "no declared test).\n"]
    rest = [m for m in top if m not in band]
    spreads = any(au(m)["sd"] is not None for m in top)
    ood = [f"- **Out-of-distribution detection** (AUROC, higher is better)."
           + (f" *Within one seed spread* of the best mean means {SPREAD_RULE}." if spreads
              else ""),
           f"  - Best: {name(top[0])} (AUROC {fmt(top[0])})."]
    if not spreads:  # one seed: no spread to set a gap against
        rest, band = [], top
        if len(top) > 1:
            ood.append("  - The others (one seed, so no spread): "
                       + _and([f"{name(m)} ({fmt(m)})" for m in top[1:]]) + ".")
    elif len(band) > 1:
        ood.append("  - Within one seed spread of it: "
                   + _and([f"{name(m)} ({fmt(m)})" for m in band[1:]]) + ".")
    if rest:
        ood.append(("  - Outside it: " if len(band) > 1 else
                    "  - More than one seed spread behind it: ")
                   + _and([f"{name(m)} ({fmt(m)})" for m in rest]) + ".")
    thousandths = lambda x: round(1000 * x)  # noqa: E731  (as the table prints it)
    for m in top[1:] if spreads else []:
        g, s = gap(m), spread(m)
        shown = (thousandths(au(top[0])["mean"]) - thousandths(au(m)["mean"]),
                 thousandths(s))
        if (shown[0] <= shown[1]) != (m in band):  # the printed numbers suggest the other side
            d = _digits_apart([g, s], 4)
            ood.append(f"  - {cap(name(m))} is {'inside' if m in band else 'outside'} by less "
                       "than "
                       f"the printed precision: its gap to {name(top[0])}, {g:.{d}f}, is "
                       + ("no larger than" if m in band else "larger than")
                       + f" the larger of the two sds ({name(owner(m))}'s), {s:.{d}f}.")
    if "mc_dropout" in ok and top[-1] == "mc_dropout":
        ood.append("  - Why MC dropout is lowest was not tested here (section 7 searches it "
                   "afresh).")
    out.append("\n".join(ood))
    low = lambda k: min(ok, key=lambda m: rows[m][k]["mean"])  # noqa: E731
    ece_of = lambda m: rows[m]["ece"]["mean"]  # noqa: E731
    groups = _tied_groups(sorted(ok, key=ece_of), ece_of, 4)
    best_err, best_nll = low("test_error"), low("nll")
    acc = (f"{_name(best_err)} has the lowest test error and NLL" if best_err == best_nll else
           f"{_name(best_err)} has the lowest test error, {_name(best_nll)} the lowest NLL")
    at = f"at {NUMBER_WORDS[4]} decimals"
    words, tie = _group_words(groups[0], ece_of, 4, name)
    lone = groups[0][0]
    if tie is None and lone == best_err == best_nll:  # one method leads all three
        text = f"{cap(_name(lone))} has the lowest test error, NLL and ECE ({ece_of(lone):.4f})"
        nxt = "Next lowest ECE"
    else:
        text = cap(acc) + "; " + (
            f"{name(lone)} the lowest ECE ({ece_of(lone):.4f})" if tie is None else
            f"the lowest ECE is shared by {words}" if tie == "equal" else
            f"the lowest ECE is shared, {at}, by {words}")
        nxt = "Next"
    if len(groups) > 1:
        words, tie = _group_words(groups[1], ece_of, 4, name)
        text += f". {nxt}" + (f", equal {at}: " if tie == "printed" else ": ") + words
    out.append(f"- **Accuracy and calibration.** {text}.")
    broken = [m for m in rows if m not in ok]
    if broken:
        errs = [100 * rows[m]["test_error"]["mean"] for m in broken]
        stale = {r["method"] for r in stale_laplace_rows(summary)}
        span = (f"{min(errs):.0f} %" if round(min(errs)) == round(max(errs)) else
                f"{min(errs):.0f}–{max(errs):.0f} %")
        text = ((f"- **Failed rows.** The rows of {_and([name(m) for m in broken])} fail"
                 if len(broken) > 1 else f"- **Failed row.** The row of {name(broken[0])} fails")
                + f" ({span} error).")
        if set(broken) <= stale:
            they = "They" if len(broken) > 1 else "It"
            text += (f" {they} predicted by sampling weights from the whole network's Gaussian "
                     "posterior, a predictive that [Immer et al. (2021)]"
                     "(https://arxiv.org/abs/2008.08400) found to underfit. The code now uses "
                     "the library's *linearised (GLM) predictive* (the network replaced by its "
                     "first-order expansion around the MAP weights), and version 3 (section 7) "
                     f"recomputes {'them' if len(broken) > 1 else 'it'}. "
                     f"{'These rows are' if len(broken) > 1 else 'This row is'} no verdict on "
                     "the Laplace approximation.")
        out.append(text)
    text = "\n".join(out)
    if ood05 and all(("MNIST", k) in ood05 for k in ("bbb", "deterministic", "ensemble")):
        o = lambda k, m: ood05[("MNIST", k)][m]["mean"]  # noqa: E731
        text += (
            "\n\n**Why the same names differ from notebook 05.**\n\n"
            f"- BBB here is notebook 01's recipe, chosen by validation error "
            f"({100 * rows['bbb']['test_error']['mean']:.2f} % test error), not notebook 05's, "
            f"chosen by validation NLL ({100 * o('bbb', 'test_error'):.2f} %).\n"
            "- MAP and its ensemble are searched with weight decay here and train longer; "
            "notebook 05's single network was searched without it. Their AUROC: "
            f"{o('deterministic', 'auroc_entropy'):.3f} and {o('ensemble', 'auroc_entropy'):.3f}"
            f" in notebook 05, {au('map')['mean']:.3f} and {au('ensemble')['mean']:.3f} here.")
    return text


def answer_text(summary, budget=3.0):
    """Return notebook 06's answer to its question (Markdown bullets, version 1), from
    ``summary``: BBB's place on AUROC and on ECE (the best mean, or not, and whether the gap is
    inside one seed spread) and its training time against the budget."""
    rows = {r["method"]: r for r in summary["metrics"]["rows"]}
    ok = [m for m in rows if rows[m]["test_error"]["mean"] < 0.5]
    parts = []
    for key, name, sign in (("auroc_entropy", "out-of-distribution AUROC", -1), ("ece", "ECE", 1)):
        order = sorted(ok, key=lambda m: sign * rows[m][key]["mean"])
        other = next(m for m in order if m != "bbb")
        b, o = rows["bbb"][key], rows[other][key]
        within = abs(b["mean"] - o["mean"]) <= max(b["sd"] or 0, o["sd"] or 0)
        best = order[0] == "bbb"
        parts.append(f"BBB {'reaches' if best else 'does not reach'} the best {name} ("
                     + (f"ahead of {_name(other)}" if best else
                        f"{_name(other)}'s {o['mean']:.4f} against BBB's {b['mean']:.4f}")
                     + (", a gap inside one seed spread)." if within else
                        ", a gap larger than one seed spread)."))
    ratio = rows["bbb"]["train_time_ratio"]["mean"]
    n = len(rows["bbb"]["seeds"])
    return (f"**The answer** (version 1, {n} seed{'s' if n != 1 else ''}).\n\n"
            f"- {parts[0]}\n- {parts[1]}\n- BBB trains {ratio:.1f} times longer than MAP, "
            f"{'within' if ratio <= budget else 'above'} the {budget:g}× asked (counting the SGD "
            "network its recipe starts from).")


def rotation_text(summary):
    """Return notebook 06's reading of the rotation curves (Markdown, version 1), from the mean
    curves in ``summary``: the error range, where BBB has the lowest ECE and NLL (the other
    leaders grouped by method), the highest NLL from 90° on, and a reminder of which BBB this is
    and that version 3 has no rotation experiment."""
    rows = {r["method"]: r for r in summary["metrics"]["rows"]}
    ok = [m for m in rows if rows[m]["test_error"]["mean"] < 0.5]
    angles = rows["bbb"]["rotation"]["angle"]
    rot = {m: rows[m]["rotation"] for m in ok}
    i0, i90 = angles.index(0), angles.index(90) if 90 in angles else len(angles) - 1
    lo0 = max(rot[m]["error"][i0] for m in ok)
    hi90 = min(rot[m]["error"][i90] for m in ok)

    def best_at(key):
        return [min(ok, key=lambda m: rot[m][key][i]) for i in range(len(angles))]
    ece_best, nll_best = best_at("ece"), best_at("nll")
    ece_bbb = [a for a, m in zip(angles, ece_best) if m == "bbb"]
    others = {}
    for a, m in zip(angles, nll_best):
        if m != "bbb":
            others.setdefault(m, []).append(f"{a}°")
    worst = {m for i in range(len(angles)) if angles[i] >= 90
             for m in [max(ok, key=lambda m: rot[m]["nll"][i])]}
    n_nll = len(angles) - sum(len(v) for v in others.values())
    text = (f"Every working method's error climbs from under {math.ceil(100 * lo0)} % "
            f"(unrotated) to at least {math.floor(100 * hi90)} % by {angles[i90]}°. The methods "
            "differ in how far their probabilities admit it:\n\n"
            f"- **ECE**: BBB has the lowest ECE of the working methods at {len(ece_bbb)} of "
            f"{len(angles)} angles")
    if ece_bbb and ece_bbb == angles[angles.index(ece_bbb[0]):]:
        text += f" (every angle from {ece_bbb[0]}° on)"
    text += (f".\n- **NLL**: BBB has the lowest NLL at {n_nll} of {len(angles)} angles"
             + (" (elsewhere " + "; ".join(f"{_name(m)} at {_and(v)}" for m, v in others.items())
                + ")" if others else "")
             + f"; {_and([_name(m) for m in sorted(worst)])} "
             + ("has" if len(worst) == 1 else "have") + " the highest NLL from 90° on.\n\n"
             "This BBB is notebook 01's recipe (section 1), and version 3 (section 7) has no "
             "rotation experiment: this reading has no counterpart with equal search budgets.")
    return text


# ---- sentences of notebook 06 (version 1) that state measured results, from the records ----

SHORT = {"map": "MAP", "mc_dropout": "MC dropout", "ensemble": "the ensemble", "bbb": "BBB",
         "ivon": "IVON", "laplace_ll_kron": "last-layer Laplace",
         "laplace_diag": "all-layer diagonal Laplace", "laplace_kron": "all-layer KFAC Laplace"}


def load_searches(notebook=NB):
    """Return {'map': MAP's search record, 'ivon': IVON's tuning record} (None where absent)."""
    from .sweep import load_sweep
    out = {}
    try:
        out["map"] = load_sweep("map_mnist", notebook)
    except FileNotFoundError:
        out["map"] = None
    path = results_dir() / notebook / "ivon_tuning.json"
    out["ivon"] = json.loads(path.read_text()) if path.exists() else None
    return out


KEY_WORDS = {"lr": "learning rate", "lr_decay": "learning-rate decay per epoch",
             "hess_init": "initial Hessian"}


def _where_in_grid(value, values):
    """Where ``value`` sits among the searched ``values``: (words, at an end of the grid)."""
    vals = sorted(set(values))
    shown = ", ".join(f"{v:g}" for v in vals)
    if len(vals) < 2:
        return "the only value searched", False
    if len(vals) == 2:
        return (f"the {'smaller' if value == vals[0] else 'larger'} of the two searched "
                f"({shown})"), True
    if value in (vals[0], vals[-1]):
        return (f"the {'smallest' if value == vals[0] else 'largest'} of the {len(vals)} values "
                f"searched ({shown})"), True
    return f"inside the {len(vals)} values searched ({shown})", False


def _epochs_words(epochs, cap):
    if epochs >= cap:
        return f"{epochs} epochs, the search's cap", True
    return f"{epochs} of at most {cap} epochs", False


def choice_edges_text(summary, searches):
    """Return where version 1's searched choices sit in their grids (Markdown), from MAP's search
    record and IVON's tuning record (``load_searches``): each searched setting's place in its
    grid, the epochs against the search's cap, and the MAP search's wall time."""
    parts, edge = [], False
    sw = searches.get("map")
    if sw is not None:
        grid = sw["config"]["space"]["grid"]
        chosen = sw["metrics"]["chosen"]
        words = []
        for key, values in grid.items():
            w, e = _where_in_grid(chosen["config"][key], values)
            words.append(f"{KEY_WORDS.get(key, key.replace('_', ' '))} "
                         f"{chosen['config'][key]:g}, {w}")
            edge |= e
        w, e = _epochs_words(chosen["epochs"], sw["config"]["max_epochs"])
        words.append(w)
        edge |= e
        n = len(sw["metrics"]["trials"])
        took = (f", {sw['wall_s'] / 60:.1f} minutes of wall time"
                if sw.get("wall_s") is not None else "")
        parts.append(f"MAP's search ({n} trial{'s' if n != 1 else ''}{took}) chose "
                     + "; ".join(words))
    iv = searches.get("ivon")
    if iv is not None:
        grid = iv["config"]["grid"]
        hp = iv["metrics"]["chosen"]["hp"]
        words = []
        for key in grid[0]:
            values = [g[key] for g in grid]
            if len(set(values)) > 1:
                w, e = _where_in_grid(hp[key], values)
                words.append(f"{KEY_WORDS.get(key, key.replace('_', ' '))} {hp[key]:g}, {w}")
                edge |= e
        w, e = _epochs_words(iv["metrics"]["chosen"]["epochs"], iv["config"]["epochs"])
        words.append(w)
        edge |= e
        parts.append("IVON's tuning chose " + "; ".join(words))
    if not parts:
        return ""
    return ("**Where the choices sit** (read from the search records). " + ". ".join(parts)
            + "." + (" A choice at an end of its grid or at the epoch cap might do better with a "
                     "wider search." if edge else " No choice sits at an end of its grid."))


def reliability_text(summary, min_count=10, above=0.6, noisy_below=0.9):
    """Return the reading of the reliability diagrams (seed 0, the bins the figure draws): on
    which side of the diagonal each working method's curve runs above confidence ``above``, its
    mean distance from the diagonal there, and how few images the bins below ``noisy_below``
    (rounded down to a bin edge) hold."""
    rows = working(summary)
    side, gap = {}, {}
    for r in rows:
        rel = r["reliability_seed0"]
        pts = [(c, a) for c, a, k in zip(rel["confidence"], rel["accuracy"], rel["count"])
               if k >= min_count and c is not None and a is not None and c > above]
        if not pts:
            continue
        up = sum(a > c for c, a in pts)
        down = sum(a < c for c, a in pts)
        side[r["method"]] = (up, down, len(pts))
        gap[r["method"]] = statistics.fmean(abs(a - c) for c, a in pts)
    name = lambda m: SHORT[m]  # noqa: E731
    if not side:
        return (f"No bin above a confidence of {above:g} holds {min_count} images or more: the "
                "diagram has nothing to read.")
    groups = {"above": [], "below": [], "both": []}
    for m, (up, down, n) in side.items():
        groups["above" if up == n else "below" if down == n else "both"].append(m)
    said = []
    if groups["above"]:
        many = len(groups["above"]) > 1
        said.append(_and([f"{name(m)}'s" for m in groups["above"]])
                    + (" curves run" if many else " curve runs")
                    + " above the diagonal in every such bin (right more often than "
                    + ("they claim" if many else "it claims") + ": under-confident).")
    if groups["below"]:
        said.append(_and([f"{name(m)}'s" for m in groups["below"]])
                    + (" curves run" if len(groups["below"]) > 1 else " curve runs")
                    + " below the diagonal in every such bin (over-confident).")
    if groups["both"]:
        both = groups["both"]
        n = {side[m][2] for m in both}
        said.append(_and([f"{name(m)}'s" for m in both])
                    + (" curves cross" if len(both) > 1 else " curve crosses") + " the diagonal ("
                    + _and([str(side[m][0]) for m in both]) + " of "
                    + (str(n.pop()) if len(n) == 1 else "their")
                    + f" bin{'s' if len(both) > 1 or side[both[0]][2] != 1 else ''} above).")
    order = sorted(gap, key=gap.get)
    n_seeds = len(rows[0]["seeds"])
    text = (f"**Reading the diagram** (seed 0 of {n_seeds}, one network per method, bins with "
            f"at least {min_count} images; descriptive, not a test). Above a confidence of "
            f"{above:g}:\n\n" + "\n".join(f"- {x[0].upper() + x[1:]}" for x in said)
            + "\n- Mean distance from the diagonal there, closest first: "
            + ", ".join(f"{name(m)} {gap[m]:.3f}" for m in order) + ".")
    n_bins = len(rows[0]["reliability_seed0"]["count"])
    cut = math.floor(noisy_below * n_bins + 1e-9)
    low = {r["method"]: sum(r["reliability_seed0"]["count"][:cut]) for r in rows}
    total = sum(rows[0]["reliability_seed0"]["count"])
    lo, hi = min(low, key=low.get), max(low, key=low.get)
    span = (f"{low[lo]:,} ({name(lo)}) to {low[hi]:,} ({name(hi)})" if low[lo] != low[hi]
            else f"{low[lo]:,} (every method)")
    text += (f"\n\nOnly {span} of the {total:,} test images get a confidence below "
             f"{cut / n_bins:.2f} (the lowest {cut} of the {n_bins} bins): the left part of "
             "the diagram rests on few images.")
    return text


def failed_rotation_text(summary):
    """Return the reading of the rotation curves of the rows that fail on unrotated digits (test
    error of one half or more): where their error and NLL start at 0° against the working
    methods', and how far their NLL climbs ("" when no row fails, or every row does)."""
    rows = {r["method"]: r for r in summary["metrics"]["rows"]}
    ok = [r["method"] for r in working(summary)]
    failed = [m for m in rows if m not in ok]
    if not failed:
        return ""
    angles = rows[failed[0]]["rotation"]["angle"]
    if 0 not in angles:
        return ""
    i0 = angles.index(0)
    rot = {m: rows[m]["rotation"] for m in rows}
    start = lambda ms, k: [rot[m][k][i0] for m in ms]  # noqa: E731
    top = lambda ms: [max(rot[m]["nll"]) for m in ms]  # noqa: E731
    rng = lambda v, d: (f"{min(v):.{d}f}" if f"{min(v):.{d}f}" == f"{max(v):.{d}f}"  # noqa: E731
                        else f"{min(v):.{d}f}–{max(v):.{d}f}")
    names = " and ".join(SHORT[m] for m in failed)
    they = "their" if len(failed) > 1 else "its"
    n = len(rows[failed[0]]["seeds"])
    text = (f"The {'curves' if len(failed) > 1 else 'curve'} of {names} (the "
            f"{'rows' if len(failed) > 1 else 'row'} failing on unrotated digits; means over "
            f"{n} seed{'s' if n != 1 else ''}) {'start' if len(failed) > 1 else 'starts'} "
            f"at 0° with {rng([100 * e for e in start(failed, 'error')], 0)} % error and an NLL "
            f"of "
            f"{rng(start(failed, 'nll'), 2)}, against "
            f"{rng([100 * e for e in start(ok, 'error')], 1)} % and {rng(start(ok, 'nll'), 2)} "
            f"for the working methods; {they} NLL then peaks at "
            f"{rng(top(failed), 2)} (the working methods': {rng(top(ok), 2)}).")
    if min(start(failed, "nll")) > max(start(ok, "nll")) and max(top(failed)) < min(top(ok)):
        text += (f" A curve that starts that high has little room to climb: {they} flatter NLL "
                 "is not robustness.")
    return text
