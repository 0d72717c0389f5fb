"""Predictive samples of the classification methods, for out-of-distribution and calibration tests."""
import math

import torch
from torch.nn import functional as F

from .elbo import sample_forward
from .layers import sampling
from .metrics import predictive_entropy


@torch.no_grad()
def sample_probs(kind, model, x, n_samples=20, batch_size=2000):
    """Return class probabilities of shape (S, B, C) for one method.

    ``kind``: 'deterministic' (S = 1), 'mc_dropout' (dropout kept on, S passes), 'bbb' (S weight
    samples) or 'ensemble' (``model`` is a list; one sample per member)."""
    outs = []
    for s in range(0, len(x), batch_size):
        xb = x[s:s + batch_size]
        if kind == "ensemble":
            for m in model:
                m.eval()
            p = torch.stack([F.softmax(m(xb), -1) for m in model])
        elif kind == "mc_dropout":
            model.train()
            p = torch.stack([F.softmax(model(xb), -1) for _ in range(n_samples)])
            model.eval()
        elif kind == "bbb":
            model.eval()
            with sampling(model, True):
                out = sample_forward(model, xb, n_samples)
            p = F.softmax(out if n_samples > 1 else out.unsqueeze(0), -1)
        elif kind == "deterministic":
            model.eval()
            p = F.softmax(model(xb), -1).unsqueeze(0)
        else:
            raise ValueError(f"unknown kind {kind!r}; choose deterministic, mc_dropout, bbb or "
                             "ensemble")
        outs.append(p)
    return torch.cat(outs, dim=1)


@torch.no_grad()
def per_image_scores(p, y):
    """Return per-image scores from sampled probabilities ``p`` (S, B, C) and labels ``y`` (B,).

    A dict of (B,) tensors: ``expected_error`` (fraction of weight samples whose top class is
    wrong), ``std`` (std over samples of the probability of the mean prediction's class),
    ``confidence`` (mean probability of that class), ``entropy`` (of the mean prediction) and
    ``pred`` (the mean prediction's class).
    """
    if p.dim() != 3 or p.shape[1] != len(y):
        raise ValueError(f"p must have shape (samples, batch, classes) with batch = len(y); got "
                         f"{tuple(p.shape)} and {len(y)} labels")
    mean = p.mean(0)
    pred = mean.argmax(-1)
    p_pred = p.gather(2, pred.view(1, -1, 1).expand(p.shape[0], -1, 1)).squeeze(2)
    return {"expected_error": (p.argmax(-1) != y).float().mean(0),
            "std": p_pred.std(0) if p.shape[0] > 1 else torch.zeros_like(p_pred[0]),
            "confidence": p_pred.mean(0), "entropy": predictive_entropy(mean),
            "pred": pred}


# ---- Notebook 05's headline: four methods, chosen on validation, tested out of distribution ----

OTHER = {"MNIST": "FashionMNIST", "FashionMNIST": "MNIST"}
KINDS = ("deterministic", "mc_dropout", "bbb", "ensemble")
KIND_LABELS = {"deterministic": "deterministic", "mc_dropout": "MC dropout", "bbb": "BBB",
               "ensemble": "deep ensemble"}
METRICS = ("test_error", "nll", "brier", "ece", "auroc_entropy", "auroc_mi")
DATA_LABELS = {"MNIST": "MNIST", "FashionMNIST": "Fashion-MNIST"}
FASHION_CLASSES = ("T-shirt/top", "trouser", "pullover", "dress", "coat", "sandal", "shirt",
                   "sneaker", "bag", "ankle boot")
ENTROPY_BINS = (0.0, 2.31, 40)  # predictive entropy in nats; log 10 = 2.303


def sweep_name(kind, data_name):
    """Return the validation sweep a method's settings come from (the ensemble: its members')."""
    base = "deterministic" if kind == "ensemble" else kind
    return f"{base}_{data_name.lower()}"


def method_configs(kind, data_name, seed, ensemble_size, notebook="05_uncertainty"):
    """Return the RunConfigs of ``kind`` for a reported seed: the sweep's choice (settings and
    epochs) with that seed; an ensemble's members differ only in their seeds."""
    from .classification import chosen_config
    cfg = chosen_config(sweep_name(kind, data_name), notebook, seed=seed)
    if kind != "ensemble":
        return [cfg]
    from dataclasses import replace
    return [cfg] + [replace(cfg, seed=seed + 1000 * k) for k in range(1, ensemble_size)]


def _hist(values, spec=ENTROPY_BINS):
    lo, hi, n = spec
    return torch.histc(values.float().cpu(), bins=n, min=lo, max=hi).long().tolist()


@torch.no_grad()
def evaluate_ood(kind, model, data_in, x_out, n_samples=20, seed=0):
    """Return the test metrics of one trained method: error, NLL, Brier, ECE on the in-domain test
    set, AUROC of the predictive entropy and of the mutual information against ``x_out``, and
    the histograms and reliability bins the notebook's figures draw."""
    from .metrics import (auroc, brier, ece, error_rate, mutual_information, nll,
                          predictive_entropy, reliability)
    torch.manual_seed(seed + 12345)
    p_in = sample_probs(kind, model, data_in.x_test, n_samples)
    p_out = sample_probs(kind, model, x_out, n_samples)
    mean_in, mean_out = p_in.mean(0), p_out.mean(0)
    y = data_in.y_test
    ent_in, ent_out = predictive_entropy(mean_in), predictive_entropy(mean_out)
    out = {"test_error": error_rate(mean_in, y), "nll": nll(mean_in, y), "brier": brier(mean_in, y),
           "ece": ece(mean_in, y), "auroc_entropy": auroc(ent_in, ent_out),
           "auroc_mi": None if kind == "deterministic" else auroc(mutual_information(p_in),
                                                                  mutual_information(p_out)),
           "entropy_hist_in": _hist(ent_in), "entropy_hist_out": _hist(ent_out),
           "samples": p_in.shape[0]}
    centres, acc, conf, count = reliability(mean_in.cpu(), y.cpu())
    if kind == "bbb":  # the per-sample probabilities of a few images, for a figure
        out["examples"] = {"in_index": [0, 1, 2], "out_index": [0, 1, 2],
                           "in_probs": p_in[:, :3].cpu().tolist(),
                           "out_probs": p_out[:, :3].cpu().tolist()}
    nan_to_none = lambda v: [None if x != x else x for x in v]  # noqa: E731 (empty bins)
    out["reliability"] = {"centres": centres, "accuracy": nan_to_none(acc),
                          "confidence": nan_to_none(conf), "count": count}
    return out


def train_ood_networks(profile, lane=None, kinds=None, notebook="05_uncertainty", device="cpu",
                       progress_fn=print, scale="paper"):
    """Train (or resume) the networks of ``kinds`` (default: every method) for the (training set,
    seed) pairs of ``lane`` (default: all of ``profile``) without evaluating them; ``build_ood``
    reads them back. Lets several processes share the training (ood_table.py --train-only)."""
    from .classification import run
    from .data import load_images
    pairs = [(d, s) for d, seeds in profile.seeds.items() for s in seeds]
    unknown = [p for p in (lane or []) if p not in pairs]
    if unknown:
        raise ValueError(f"{unknown} are not (training set, seed) pairs of this profile; "
                         f"choose from {pairs}")
    if set(kinds or KINDS) - set(KINDS):
        raise ValueError(f"unknown methods {sorted(set(kinds) - set(KINDS))}; choose from {KINDS}")
    for name, seed in lane or pairs:
        data = load_images(name, device=device, scale=scale, n_train=profile.n_train,
                           n_test=profile.n_eval)
        for kind in kinds or KINDS:
            cfgs = method_configs(kind, name, seed, profile.ensemble_size, notebook)
            if progress_fn:
                progress_fn(f"{name} seed {seed}: {kind} ({len(cfgs)} network(s))")
            for cfg in cfgs:
                run(cfg, data, notebook=notebook, eval_samples=2,
                    desc=f"{kind} {name} seed {cfg.seed}")


def build_ood(profile, notebook="05_uncertainty", train=True, device="cpu", progress_fn=print,
              scale="paper"):
    """Train (or read back) every method on every training set and reported seed of ``profile``
    (a ``get_profile`` namespace), evaluate each once on the test sets, and write
    results/<notebook>/ood.json plus one results file per method and training set; return the
    ood record (None when a run is missing and ``train`` is off). Settings come from the
    validation sweeps (``make sweep ONLY=05``)."""
    import json

    from .classification import run
    from .data import load_images
    from .sweep import load_sweep
    from .utils import load_results, results_dir, save_results
    path = results_dir() / notebook / "ood.json"
    done = {}
    if path.exists():
        old = json.loads(path.read_text())
        if old.get("profile") == profile.profile:
            done = {(r["data"], r["kind"], r["seed"]): r for r in old["metrics"]["rows"]}
    rows, computed = [], False
    data_cache = {}

    def data(name):
        if name not in data_cache:
            data_cache[name] = load_images(name, device=device, scale=scale,
                                           n_train=profile.n_train, n_test=profile.n_eval)
        return data_cache[name]

    for name, seeds in profile.seeds.items():
        for seed in seeds:
            for kind in KINDS:
                key = (name, kind, seed)
                if key in done:
                    rows.append(done[key])
                    continue
                if not train:
                    return None  # not computed yet (the notebook says so)
                cfgs = method_configs(kind, name, seed, profile.ensemble_size, notebook)
                if progress_fn:
                    progress_fn(f"{name} seed {seed}: {kind} ({len(cfgs)} network(s))")
                models, walls = [], []
                for cfg in cfgs:
                    model, rec = run(cfg, data(name), notebook=notebook, eval_samples=2,
                                     desc=f"{kind} {name} seed {cfg.seed}")
                    models.append(model)
                    walls.append(rec["metrics"]["train_wall_s"])
                model = models if kind == "ensemble" else models[0]
                metrics = evaluate_ood(kind, model, data(name), data(OTHER[name]).x_test,
                                       profile.eval_samples, seed)
                rows.append({"data": name, "ood": OTHER[name], "kind": kind, "seed": seed,
                             "runs": [c.name for c in cfgs], "epochs": cfgs[0].epochs,
                             "train_wall_s": sum(walls), **metrics})
                computed = True
                _save_ood(rows, profile, notebook)
    summary = summarise(rows)
    files = [results_dir() / notebook / f"{kind}_{name.lower()}.json" for name, kind in summary]
    if not computed and len(rows) == len(done) and all(f.exists() for f in files):
        return load_results(notebook, "ood")  # complete: read back, nothing rewritten
    _save_ood(rows, profile, notebook)
    for (name, kind), s in summary.items():
        sweep = load_sweep(sweep_name(kind, name), notebook)
        save_results(notebook, f"{kind}_{name.lower()}",
                     config={"method": kind, "trained_on": name, "out_of_distribution":
                             OTHER[name], "chosen": sweep["metrics"]["chosen"]["config"],
                             "ensemble_size": profile.ensemble_size if kind == "ensemble" else 1,
                             "eval_samples": profile.eval_samples},
                     metrics=s, profile=profile.profile, seed=list(profile.seeds[name]),
                     wall_s=sum(s["train_wall_s"]["per_seed"]),
                     extra={"selected_on": "validation",
                            "rule": sweep["rule"],
                            "sweep": f"results/{notebook}/sweep/{sweep_name(kind, name)}.json",
                            "budget": sweep["metrics"].get("budget"),
                            "tested": "once, on the test sets, after the choice"})
    return load_results(notebook, "ood")


def _save_ood(rows, profile, notebook):
    from .utils import save_results
    save_results(notebook, "ood", config={"seeds": {k: list(v) for k, v in profile.seeds.items()},
                                          "eval_samples": profile.eval_samples,
                                          "ensemble_size": profile.ensemble_size,
                                          "entropy_bins": list(ENTROPY_BINS)},
                 metrics={"rows": rows}, profile=profile.profile,
                 seed=sorted({s for v in profile.seeds.values() for s in v}),
                 extra={"selected_on": "validation"})


def summarise(rows):
    """Return {(data, kind): {metric: {per_seed, mean, sd}, seeds}} from the rows of ood.json."""
    import statistics
    out = {}
    for r in rows:
        out.setdefault((r["data"], r["kind"]), []).append(r)
    summary = {}
    for key, rs in out.items():
        rs = sorted(rs, key=lambda r: r["seed"])
        entry = {"seeds": [r["seed"] for r in rs]}
        for m in METRICS + ("train_wall_s",):
            vals = [r[m] for r in rs]
            if any(v is None for v in vals):
                entry[m] = None
                continue
            entry[m] = {"per_seed": vals, "mean": statistics.fmean(vals),
                        "sd": statistics.stdev(vals) if len(vals) > 1 else None}
        summary[key] = entry
    return summary


# ---- notebook 05's figures, drawn from the results files ----

def _row(rows, data, kind, seed):
    return next(r for r in rows if r["data"] == data and r["kind"] == kind and r["seed"] == seed)


def entropy_figure(rows, seed=0):
    """Histograms of the predictive entropy in and out of distribution: one row per training
    set, one panel per method (counts stored in ood.json), on a log density axis."""
    import matplotlib.pyplot as plt
    lo, hi, n = ENTROPY_BINS
    width = (hi - lo) / n
    edges = [lo + i * width for i in range(n + 1)]
    datas = [d for d in OTHER if any(r["data"] == d and r["seed"] == seed for r in rows)]
    fig, axes = plt.subplots(len(datas), len(KINDS), figsize=(12, 2.9 * len(datas)),
                             sharex=True, sharey=True, squeeze=False, constrained_layout=True)
    for i, data in enumerate(datas):
        for j, kind in enumerate(KINDS):
            r, ax = _row(rows, data, kind, seed), axes[i, j]
            for key, label, c in (("entropy_hist_in", f"{DATA_LABELS[data]} (in)", "C0"),
                                  ("entropy_hist_out", f"{DATA_LABELS[OTHER[data]]} (out)",
                                   "C1")):
                counts = r[key]
                total = sum(counts) * width
                ax.stairs([k / total for k in counts], edges, fill=True, alpha=0.5, color=c,
                          label=label)
            ax.set_yscale("log")
            ax.set_title(f"{KIND_LABELS[kind]}, AUROC {r['auroc_entropy']:.3f} (seed {seed})",
                         fontsize=9)
            if i == len(datas) - 1:
                ax.set_xlabel("predictive entropy (nats)")
        axes[i, 0].set_ylabel(f"trained on {DATA_LABELS[data]}\ndensity")
        axes[i, 0].legend(fontsize=7, loc="upper right")
    return fig


def reliability_figure(rows, seed=0):
    """Reliability diagrams (accuracy against confidence, 15 bins) on the in-domain test sets."""
    import matplotlib.pyplot as plt
    datas = [d for d in OTHER if any(r["data"] == d and r["seed"] == seed for r in rows)]
    fig, axes = plt.subplots(1, len(datas), figsize=(5.5 * len(datas), 4), squeeze=False,
                             constrained_layout=True)
    for ax, data in zip(axes[0], datas):
        for kind in KINDS:
            rel = _row(rows, data, kind, seed)["reliability"]
            pts = [(c, a) for c, a, k in zip(rel["confidence"], rel["accuracy"], rel["count"]) if k]
            ax.plot(*zip(*pts), "o-", ms=3, label=KIND_LABELS[kind])
        ax.plot([0, 1], [0, 1], "k:", lw=1, label="calibrated")
        ax.set_xlabel("confidence (mean top probability in the bin)")
        ax.set_ylabel("accuracy in the bin")
        ax.set_title(f"trained on {data}, seed {seed}")
        ax.legend(fontsize=8)
    return fig


def expected_error_figure(scores):
    """Conv net: expected error rate against the std over samples of p(predicted class), and that
    std's density for images no sample gets wrong and for the others."""
    import matplotlib.pyplot as plt
    ee, sd = scores["expected_error"].cpu(), scores["std"].cpu()
    fig, axes = plt.subplots(1, 2, figsize=(11, 3.8), constrained_layout=True)
    axes[0].scatter(sd, ee, s=4, alpha=0.3)
    axes[0].set(xlabel="std over samples of p(predicted class)", ylabel="expected error rate")
    for group, name in ((ee == 0, "no sample wrong"), (ee > 0, "some samples wrong")):
        axes[1].hist(sd[group], bins=40, density=True, alpha=0.6,
                     label=f"{name} ({int(group.sum())} images)")
    axes[1].set(xlabel="std over samples of p(predicted class)", ylabel="density (log scale)",
                yscale="log")
    axes[1].legend()
    return fig


def examples_figure(row, x_in, x_out, in_name, out_name):
    """Images beside the class probabilities of each weight sample (dots) and their mean (bars)."""
    import matplotlib.pyplot as plt
    ex = row["examples"]
    fig, axes = plt.subplots(2, 6, figsize=(13, 4.8), constrained_layout=True)
    for r, (label, xs, probs) in enumerate(((f"{in_name} (in)", x_in, ex["in_probs"]),
                                            (f"{out_name} (out)", x_out, ex["out_probs"]))):
        p = torch.tensor(probs)  # (S, 3, C)
        for k in range(3):
            axes[r, 2 * k].imshow(xs[k].view(28, 28).cpu(), cmap="gray_r")
            axes[r, 2 * k].set_axis_off()
            axes[r, 2 * k].set_title(label, fontsize=8)
            ax = axes[r, 2 * k + 1]
            ax.bar(range(10), p[:, k].mean(0), color="C0", alpha=0.5)
            for s in range(p.shape[0]):
                ax.plot(range(10), p[s, k], ".", c="C3", ms=3)
            ax.set_ylim(0, 1)
            ax.set_xticks(range(10), FASHION_CLASSES if in_name == "Fashion-MNIST" else
                          range(10), rotation=90)
            ax.set_xlabel(f"class ({p.shape[0]} weight samples)", fontsize=8)
            ax.set_ylabel("probability", fontsize=8)
            ax.tick_params(labelsize=6)
    return fig


def image_grid(x, y, scores, groups, per_row=8):
    """Figure: one row of images per group (label -> indices), titled with the true label, the
    prediction and its mean probability (``scores`` from ``per_image_scores``)."""
    import matplotlib.pyplot as plt
    fig, axes = plt.subplots(len(groups), per_row, figsize=(13, 2.1 * len(groups)),
                             squeeze=False, constrained_layout=True)
    for r, (label, ids) in enumerate(groups.items()):
        for k in range(per_row):
            ax = axes[r, k]
            ax.set_axis_off()
            if k >= len(ids):
                continue
            i = int(ids[k])
            ax.imshow(x[i].reshape(28, 28).cpu(), cmap="gray_r")
            ax.set_title(f"y={int(y[i])} pred={int(scores['pred'][i])}\n"
                         f"p={scores['confidence'][i]:.2f}", fontsize=8)
        axes[r, 0].text(-0.15, 0.5, label, transform=axes[r, 0].transAxes, ha="right",
                        va="center", rotation=90)
    return fig


def ood_table_rows(summary, data):
    """Return (header, rows) of the test table of one training set: mean ± sd (per seed)."""
    fmts = {"test_error": lambda v: f"{100 * v:.2f}", "nll": "{:.3f}".format,
            "ece": "{:.4f}".format, "auroc_entropy": "{:.3f}".format, "auroc_mi": "{:.3f}".format}

    def cell(s, fmt):
        if s is None:
            return "—"
        sd = "" if s["sd"] is None else f" ± {fmt(s['sd'])}"
        return f"{fmt(s['mean'])}{sd} ({', '.join(fmt(v) for v in s['per_seed'])})"
    header = ["method", "test error (%)", "NLL", "ECE", "AUROC entropy", "AUROC MI"]
    return header, [[KIND_LABELS[k]] + [cell(summary[(data, k)][m], f) for m, f in fmts.items()]
                    for k in KINDS]


def ood_caption(number, data, seeds):
    """The caption of version 1's test table of one training set (Markdown)."""
    seeds = list(seeds)
    return (f"**Table {number}** (version 1). Trained on {DATA_LABELS[data]}, shown "
            f"{DATA_LABELS[OTHER[data]]}; seed{'s' if len(seeds) != 1 else ''} "
            f"{', '.join(map(str, seeds))}. "
            + ("Mean ± sd over seeds, per-seed values in brackets." if len(seeds) > 1 else
               "One seed, so no sd."))


# ---- notebook 05, section 8: the Bayesian conv net, trained once; its figures from stored numbers ----

CONV_RESULTS = "bbb_conv_net"  # results/05_uncertainty/bbb_conv_net.json
CONV_FIGURES = ("conv-net-expected-error", "conv-net-hardest-images")


def conv_config(profile):
    """Return the settings a stored conv-net record must match to be read back."""
    return {"epochs": profile.conv_epochs, "eval_samples": profile.eval_samples, "lr": 1e-3,
            "lr_decay": 0.955}


def conv_checkpoint(profile, seed=0, notebook="05_uncertainty"):
    """Return the path of the conv net's training checkpoint."""
    from .utils import checkpoints_dir
    return checkpoints_dir() / notebook / f"bbb_conv_net_e{profile.conv_epochs}_s{seed}.pt"


def hardest_images(scores, y, k=8):
    """Return {group: [{index, label, pred, confidence}]}: the ``k`` test images with the highest
    predictive entropy ("least sure") and the ``k`` wrong ones with the highest confidence."""
    y = y.cpu()
    pred, conf, ent = (scores[n].cpu() for n in ("pred", "confidence", "entropy"))
    wrong = (pred != y).nonzero().squeeze(1)
    groups = {"least sure": ent.argsort(descending=True)[:k],
              "confidently wrong": wrong[conf[wrong].argsort(descending=True)][:k]}
    return {g: [{"index": int(i), "label": int(y[i]), "pred": int(pred[i]),
                 "confidence": float(conf[i])} for i in ids] for g, ids in groups.items()}


def stored_per_image(scores, samples):
    """Return what the expected-error figure needs of every test image, as plain numbers: the
    number of weight samples that get it wrong and the std over samples of p(predicted class)
    (five significant digits)."""
    wrong = (scores["expected_error"].cpu() * samples).round().long().tolist()
    return {"samples": samples, "wrong_samples": wrong,
            "std": [float(f"{v:.5g}") for v in scores["std"].cpu().tolist()]}


def per_image_from_record(rec):
    """Return the expected error and std tensors of ``expected_error_figure`` from a stored
    record (None when it holds no per-image numbers)."""
    per = rec.get("per_image")
    if not per:
        return None
    return {"expected_error": torch.tensor(per["wrong_samples"], dtype=torch.float32)
            / per["samples"], "std": torch.tensor(per["std"])}


def build_conv_net(profile, seed=0, train=False, device="cpu", notebook="05_uncertainty"):
    """Return results/<notebook>/bbb_conv_net.json: the conv net's test metrics and the per-image
    numbers its two figures draw.

    Read back when it matches ``profile``'s settings and holds the per-image numbers; otherwise
    the network is loaded from its finished checkpoint, or trained (with ``train``; resumes a
    partial checkpoint), evaluated once on the test set and the file written. With neither, the
    stored record as it is (metrics only: its figures cannot be redrawn), or None."""
    import json

    from .data import load_images
    from .layers import bayes_conv_net
    from .metrics import ece, error_rate
    from .train import fit, load_checkpoint
    from .utils import results_dir, save_results, seed_everything
    path = results_dir() / notebook / f"{CONV_RESULTS}.json"
    old = json.loads(path.read_text()) if path.exists() else None
    if old is not None and (old.get("profile") != profile.profile or old.get("seed") != seed
                            or old["config"] != conv_config(profile)):
        old = None
    if old is not None and "per_image" in old:
        return old
    ckpt = conv_checkpoint(profile, seed, notebook)
    finished = ckpt.exists() and int(load_checkpoint(ckpt)["epoch"]) >= profile.conv_epochs
    if not (train or finished):
        return old
    data = load_images("MNIST", device=device, flatten=False, n_train=profile.conv_n_train,
                       n_test=profile.n_eval)
    seed_everything(seed)
    conv = bayes_conv_net().to(device)
    hist = fit(conv, data, epochs=profile.conv_epochs, lr=1e-3, lr_decay=0.955, checkpoint=ckpt,
               eval_sets=("val",), desc="conv net")
    torch.manual_seed(seed)
    p = sample_probs("bbb", conv, data.x_test, profile.eval_samples)
    scores = per_image_scores(p, data.y_test)
    metrics = {"test_error": error_rate(p.mean(0), data.y_test),
               "val_error_mean_weights": hist[-1]["val_error"], "ece": ece(p.mean(0), data.y_test),
               "epochs": profile.conv_epochs, "train_wall_s": hist[-1]["wall_s"]}
    save_results(notebook, CONV_RESULTS, config=conv_config(profile), metrics=metrics,
                 profile=profile.profile, seed=seed, device=device, wall_s=metrics["train_wall_s"],
                 extra={"per_image": stored_per_image(scores, p.shape[0]),
                        "hardest": hardest_images(scores, data.y_test)})
    return json.loads(path.read_text())


def stored_image_grid(x, groups, per_row=8):
    """Figure: one row of images per group of ``hardest_images``, titled with the true label, the
    prediction and its mean probability."""
    import matplotlib.pyplot as plt
    fig, axes = plt.subplots(len(groups), per_row, figsize=(13, 2.1 * len(groups)),
                             squeeze=False, constrained_layout=True)
    for r, (label, entries) in enumerate(groups.items()):
        for k in range(per_row):
            ax = axes[r, k]
            ax.set_axis_off()
            if k >= len(entries):
                continue
            e = entries[k]
            ax.imshow(x[e["index"]].reshape(28, 28).cpu(), cmap="gray_r")
            ax.set_title(f"y={e['label']} pred={e['pred']}\np={e['confidence']:.2f}", fontsize=8)
        axes[r, 0].text(-0.15, 0.5, label, transform=axes[r, 0].transAxes, ha="right",
                        va="center", rotation=90)
    return fig


def committed_figure(notebook, name):
    """Return the path of figures/<notebook>-<name>.png when it exists (else None)."""
    from .utils import figures_dir
    path = figures_dir() / f"{notebook}-{name}.png"
    return path if path.exists() else None


from .report import cap as _cap  # noqa: E402


CHOICES_LINK = "[docs/choices.md](../docs/choices.md)"  # from notebooks/


def ood_text(summary):
    """Return notebook 05's reading of its version-1 out-of-distribution tables (Markdown
    bullets; descriptive, no test was declared for version 1), every number from ``summary``
    (``summarise`` of ood.json)."""
    def ms(data, kind, metric, scale=1.0, digits=3, unit=""):
        return _ms(summary[(data, kind)][metric], scale, digits, unit)

    def rank_word(values, key):
        return ("the highest" if values[key] == max(values.values()) else
                "the lowest" if values[key] == min(values.values()) else
                "neither the highest nor the lowest")
    bullets, n = [], None
    if all(("MNIST", k) in summary for k in KINDS):
        au = {k: summary[("MNIST", k)]["auroc_entropy"] for k in KINDS}
        order = sorted(KINDS, key=lambda k: -au[k]["mean"])
        n = len(summary[("MNIST", "bbb")]["seeds"])
        bullets.append(
            f"Trained on MNIST, {NOUNS[order[0]]} has the highest AUROC of the entropy on "
            f"Fashion-MNIST ({ms('MNIST', order[0], 'auroc_entropy')}); the next is "
            f"{NOUNS[order[1]]} ({ms('MNIST', order[1], 'auroc_entropy')}).")
        rival = order[1] if order[0] == "bbb" else order[0]
        d = [b - r for b, r in zip(au["bbb"]["per_seed"], au[rival]["per_seed"])]
        span = lambda lo, hi: (f"{lo:.2f}" if f"{lo:.2f}" == f"{hi:.2f}"  # noqa: E731
                               else f"{lo:.2f}–{hi:.2f}")
        if len(d) > 1:
            bullets[-1] += (
                f" BBB is ahead of {NOUNS[rival]} on every seed, by {span(min(d), max(d))}."
                if min(d) > 0 else
                f" BBB is behind {NOUNS[rival]} on every seed, by {span(-max(d), -min(d))}."
                if max(d) < 0 else
                f" BBB's difference from {NOUNS[rival]} changes sign across the seeds "
                f"({min(d):+.2f} to {max(d):+.2f}).")
        bullets[-1] += (" This is not a clean held-out test of BBB: its recipe was first "
                        "picked on this test AUROC, and its search keeps arms from then "
                        f"({CHOICES_LINK}, entry 8).")
        ece = {k: summary[("MNIST", k)]["ece"]["mean"] for k in KINDS}
        low, high = min(KINDS, key=ece.get), max(KINDS, key=ece.get)
        other = high if low == "bbb" else low
        bullets.append(f"BBB's mean ECE ({ece['bbb']:.4f}) is {rank_word(ece, 'bbb')} of the "
                       "four" + ("." if other == "bbb" else
                                 f"; {NOUNS[other]}'s ({ece[other]:.4f}) is "
                                 f"{'the lowest' if other == low else 'the highest'}."))
        err = {k: summary[("MNIST", k)]["test_error"] for k in KINDS}
        best = min(KINDS, key=lambda k: err[k]["mean"])
        text = (f"{_cap(NOUNS[best])} has the lowest test error "
                f"({ms('MNIST', best, 'test_error', 100, 2, ' %')}"
                + ("" if best == "bbb" else
                   f" against BBB's {ms('MNIST', 'bbb', 'test_error', 100, 2, ' %')}") + ")")
        if best != "bbb" and len(err["bbb"]["per_seed"]) > 1:
            below = sum(a < b for a, b in zip(err[best]["per_seed"], err["bbb"]["per_seed"]))
            n_err = len(err["bbb"]["per_seed"])
            text += ", below BBB's on " + ("every seed" if below == n_err else
                                           f"{below} of the {n_err} seeds")
        bullets.append(text + ".")
    if all(("FashionMNIST", k) in summary for k in KINDS):
        au = {k: summary[("FashionMNIST", k)]["auroc_entropy"]["mean"] for k in KINDS}
        ece = {k: summary[("FashionMNIST", k)]["ece"]["mean"] for k in KINDS}
        m = len(summary[("FashionMNIST", "bbb")]["seeds"])
        top, low = max(KINDS, key=au.get), min(KINDS, key=ece.get)
        bullets.append(
            f"Trained on Fashion-MNIST ({_n_seeds(m)}"
            + (", so no ordering is established" if m == 1 else "") + "), "
            + (f"{NOUNS[top]} has both the highest AUROC ({au[top]:.3f}) and the lowest ECE "
               f"({ece[low]:.4f})" if top == low else
               f"{NOUNS[top]} has the highest AUROC ({au[top]:.3f}) and {NOUNS[low]} the "
               f"lowest ECE ({ece[low]:.4f})") + ".")
    if not bullets:
        return ""
    head = ("**What the tables show** (version 1: descriptive, no declared test"
            + (f"; {_n_seeds(n)} trained on MNIST" if n else "") + "):")
    return head + "\n\n" + "\n".join(f"- {b}" for b in bullets)


SEARCH_LABELS = {"deterministic": "the single network", "mc_dropout": "MC dropout", "bbb": "BBB"}
SWEEP_DATA = {"mnist": "MNIST", "fashionmnist": "Fashion-MNIST"}  # sweep names' suffixes


def search_words(sweeps):
    """What the searches chose, in words read from the sweep records ``sweeps`` (name ->
    record, as ``helpers.sweep.ensure_sweeps`` returns them), as Markdown bullets: each
    method's epochs per data set, which method reached the lowest validation NLL, how far ASHA
    let the warm-started trials run and whether the chosen settings start warm."""
    by_data = {}
    for name, rec in sweeps.items():
        kind, data = name.rsplit("_", 1)
        by_data.setdefault(data, {})[kind] = rec
    cap = max(r["config"]["max_epochs"] for r in sweeps.values())
    bullets, warm, who, rung, starts = [], [], [], None, []
    for data, recs in by_data.items():
        name = SWEEP_DATA.get(data, data)
        chosen = {k: r["metrics"]["chosen"] for k, r in recs.items()}
        best = min(chosen, key=lambda k: chosen[k]["val"])
        bullets.append(f"On {name}: " + ", ".join(
            f"{SEARCH_LABELS.get(k, k)} {c['epochs']}" for k, c in chosen.items())
            + f" epochs (lowest validation NLL: {SEARCH_LABELS.get(best, best)}).")
        for k, r in recs.items():
            trials = [t for t in r["metrics"]["trials"] if t["config"].get("init_from")]
            if trials:
                rung = (r["config"].get("scheduler") or {}).get("grace_period")
                cut = sum(t["epochs_run"] == rung for t in trials)
                full = sum(t["epochs_run"] == r["config"]["max_epochs"] for t in trials)
                warm.append(f"{cut} of {len(trials)} on {name}"
                            + (f" ({full} ran all {r['config']['max_epochs']} epochs)"
                               if full else ""))
                who.append(SEARCH_LABELS.get(k, k))
                if "config" in chosen[k]:
                    starts.append((name, bool(chosen[k]["config"].get("init_from"))))
    if warm:
        labels = list(dict.fromkeys(who))
        owner = f"{_join(labels)}'s" if len(labels) == 1 else "The"
        bullets.append(
            f"{_join(labels)}'s search also tried *warm starts*, trials that "
            "begin from a trained SGD network instead of random weights. Of these, ASHA "
            "stopped at its first rung " + " and ".join(warm) + "."
            + ("" if not starts else
               f" {owner} chosen settings start from random weights." if not any(
                   w for _, w in starts) else
               f" {owner} chosen settings start warm on " + _join([d for d, w in starts if w])
               + ("" if all(w for _, w in starts) else " and from random weights on "
                  + _join([d for d, w in starts if not w])) + "."))
    bullets.append("The deep ensemble's members use the single network's choice.")
    return (f"**What the searches chose** (scored by validation NLL, at most {cap} epochs per "
            "trial; every trial's curve is in `results/05_uncertainty/sweep/`):\n\n"
            + "\n".join(f"- {b}" for b in bullets))


# ---- notebook 05: the readings of its figures and tables, rendered from the records ----
# Each returns Markdown whose numbers and wording (orderings, "every method" / "all but ...")
# come from the records it is given; nothing here states an expected value.

def _ms(entry, scale=1.0, digits=3, unit=""):
    """'mean ± sd' of a ``summarise`` entry (no sd for one seed)."""
    sd = "" if entry["sd"] is None else f" ± {scale * entry['sd']:.{digits}f}"
    return f"{scale * entry['mean']:.{digits}f}{sd}{unit}"


from .report import seeds_words as _n_seeds  # noqa: E402


from .report import and_list as _join  # noqa: E402  'a, b and c'


def _pct(x, digits=1):
    return f"{100 * x:.{digits}f} %"


NOUNS = {"deterministic": "the deterministic network", "mc_dropout": "MC dropout", "bbb": "BBB",
         "ensemble": "the deep ensemble"}
ORDINALS = ("first", "second", "third", "fourth", "fifth", "sixth")


def _pct_range(values):
    """'a % to b %' over ``values`` (fractions), or 'a %' when they round alike."""
    lo, hi = _pct(min(values)), _pct(max(values))
    return lo if lo == hi else f"{lo} to {hi}"


def _all_but(names, exceptions):
    """'every method' when ``exceptions`` is empty, else 'every method but X and Y' (``names``: the
    labels compared, for 'no method' when all are exceptions)."""
    if not exceptions:
        return "every method"
    if len(exceptions) == len(names):
        return "no method"
    return "every method but " + _join(exceptions)


def _entropy_shares(row, bins=ENTROPY_BINS, high=1.0):
    """(share of in-domain images in the first entropy bin, the same out of distribution,
    share out of distribution from the first bin edge at or above ``high`` nats, that edge)."""
    lo, hi, n = bins
    width = (hi - lo) / n
    k = next(i for i in range(n + 1) if lo + i * width >= high - 1e-12)
    hin, hout = row["entropy_hist_in"], row["entropy_hist_out"]
    return (hin[0] / sum(hin), hout[0] / sum(hout), sum(hout[k:]) / sum(hout), lo + k * width)


def entropy_text(rows, seed=0, bins=ENTROPY_BINS):
    """Section 4: what the entropy histograms of ``seed`` show, read from their stored counts
    (``rows``: ood.json's rows; ``bins``: its entropy_bins), as Markdown bullets: the share of
    in-domain images in the first bin (entropy near 0), the share of unfamiliar images there
    and at high entropy, and, with both training sets, whether the in-domain histograms are
    wider after training on the second one."""
    lo, hi, n = bins
    edge0 = lo + (hi - lo) / n
    datas = [d for d in OTHER if any(r["data"] == d and r["seed"] == seed for r in rows)]
    share = {(d, k): _entropy_shares(_row(rows, d, k, seed), bins) for d in datas for k in KINDS}
    bullets = []
    for d in datas[:1]:
        ins = {k: share[(d, k)][0] for k in KINDS}
        out0 = sorted(KINDS, key=lambda k: -share[(d, k)][1])
        high = sorted(KINDS, key=lambda k: -share[(d, k)][2])
        lo_k, hi_k = min(KINDS, key=ins.get), max(KINDS, key=ins.get)
        edge = share[(d, KINDS[0])][3]
        most = [k for k in KINDS if ins[k] > 0.5]
        who = ("every method is" if len(most) == len(KINDS) else "no method is" if not most
               else "every method but " + _join([KIND_LABELS[k] for k in KINDS
                                                  if k not in most]) + " is")
        bullets.append(
            f"Trained on {DATA_LABELS[d]}, {who} almost certain on most in-domain images: "
            + (f"{_pct(ins[lo_k])} of them" if _pct(ins[lo_k]) == _pct(ins[hi_k]) else
               f"{_pct(ins[lo_k])} ({KIND_LABELS[lo_k]}) to {_pct(ins[hi_k])} "
               f"({KIND_LABELS[hi_k]}) of them")
            + f" fall in the first bin (entropy below {edge0:.3f} nats).")
        first, last = out0[0], out0[-1]
        same = _pct(share[(d, first)][1]) == _pct(share[(d, last)][1])
        other = DATA_LABELS[OTHER[d]]
        thing = "digit" if d == "MNIST" else "garment"
        bullets.append(
            f"On the {other} images, that first bin (the orange bar at entropy 0) holds "
            + _join(f"{_pct(share[(d, k)][1])} for {NOUNS[k]}" for k in out0)
            + ("." if same else
               f": {NOUNS[first]} classifies the most of them as some {thing} with near "
               f"certainty, {NOUNS[last]} the fewest."))
        bullets.append(
            f"Above {edge:.2f} nats, a high entropy, lie "
            + _join(f"{_pct(share[(d, k)][2])} of the {other} images for {NOUNS[k]}"
                    if i == 0 else f"{_pct(share[(d, k)][2])} for {NOUNS[k]}"
                    for i, k in enumerate(high)) + ".")
    if len(datas) > 1:
        a, b = datas[0], datas[1]
        names = [KIND_LABELS[k] for k in KINDS]
        not_wider = [k for k in KINDS if share[(b, k)][0] >= share[(a, k)][0]]
        n_b = len({r["seed"] for r in rows if r["data"] == b})
        bullets.append(
            f"Trained on {DATA_LABELS[b]} ({_n_seeds(n_b)}), the in-domain histograms are "
            f"wider for {_all_but(names, [NOUNS[k] for k in not_wider])}: "
            f"{_pct_range([share[(b, k)][0] for k in KINDS])} of the in-domain images fall in "
            f"the first bin, against {_pct_range([share[(a, k)][0] for k in KINDS])} trained "
            f"on {DATA_LABELS[a]}.")
    return (f"**What the histograms show** (seed {seed}; counts stored in ood.json):\n\n"
            + "\n".join(f"- {x}" for x in bullets))


def examples_text(row, in_labels, out_labels, in_name, out_name, classes=FASHION_CLASSES):
    """Section 5: per example image, whether BBB's weight samples agree on its class (how many
    classes their top choices span) and the range over samples of the probability of the mean's
    class, as nested Markdown bullets; ``in_labels`` / ``out_labels``: the true labels (names)
    of the stored images."""
    ex = row["examples"]

    def reading(probs, labels):
        p = torch.tensor(probs)  # (S, images, C)
        out = []
        for k, label in enumerate(labels):
            c = int(p[:, k].mean(0).argmax())
            tops = sorted(set(p[:, k].argmax(-1).tolist()))
            lo, hi = float(p[:, k, c].min()), float(p[:, k, c].max())
            out.append((label, c, tops, lo, hi))
        return out, p.shape[0]

    def clause(label, c, tops, lo, hi, S):
        name = f"\"{classes[c]}\""
        prob = (f"each sample gives it probability {hi:.2f}" if f"{lo:.2f}" == f"{hi:.2f}"
                else f"single samples give it probability {lo:.2f} to {hi:.2f}")
        if len(tops) == 1:
            return f"the {label}: all {S} samples pick {name}; {prob}"
        return (f"the {label}: the samples' top choices span {len(tops)} classes. Their mean "
                f"puts {name} first; {prob}")

    lines = []
    for name, probs, labels in ((f"{in_name} images (in domain)", ex["in_probs"], in_labels),
                                (f"{out_name} images (out of distribution)", ex["out_probs"],
                                 out_labels)):
        items, S = reading(probs, labels)
        split = sum(len(t[2]) > 1 for t in items)
        verdict = ("every weight sample picks the same class on every image" if split == 0 else
                   f"the samples disagree on {split} of the {len(items)} images")
        lines.append(f"- On the {name}, {verdict}:")
        lines += [f"  - {clause(*t, S)}." for t in items]
    return (f"**What the samples show** ({_which_images(ex)}; {S} weight samples per "
            "image):\n\n" + "\n".join(lines))


def _which_images(ex):
    """'the first 3 test images of each set, not picked by hand' when the stored examples are
    the first images of both test sets (else their indices)."""
    first = list(range(len(ex["in_index"])))
    if list(ex["in_index"]) == first and list(ex["out_index"]) == first:
        return f"the first {len(first)} test images of each set, not picked by hand"
    return (f"test images {', '.join(map(str, ex['in_index']))} in domain and "
            f"{', '.join(map(str, ex['out_index']))} out of distribution")


def _reliability_parts(rel):
    """(under, over, occupied bins): the image-weighted gap accuracy − confidence summed over
    the bins where it is positive (under-confident) and where it is negative (over-confident);
    their sum is the ECE of the binned predictions."""
    n = sum(rel["count"])
    bins = [(c, a, k) for a, c, k in zip(rel["accuracy"], rel["confidence"], rel["count"]) if k]
    under = sum(k / n * (a - c) for c, a, k in bins if a > c)
    over = sum(k / n * (c - a) for c, a, k in bins if a < c)
    return under, over, bins


def reliability_text(rows, seed=0, data="MNIST", low=0.6):
    """Section 6: the reading of the reliability diagram of ``seed`` (trained on ``data``) from
    its stored bins: how many predictions sit in the top-confidence bin and how close to the
    diagonal they are there, how few images the bins below ``low`` hold, and on which side of
    the diagonal BBB's calibration error lies."""
    rs = {k: _row(rows, data, k, seed) for k in KINDS}
    rel = {k: rs[k]["reliability"] for k in KINDS}
    n = {k: sum(rel[k]["count"]) for k in KINDS}
    top = {k: rel[k]["count"][-1] / n[k] for k in KINDS}
    gap_top = max(abs(rel[k]["accuracy"][-1] - rel[k]["confidence"][-1]) for k in KINDS
                  if rel[k]["count"][-1])
    nbin = len(rel[KINDS[0]]["count"])
    edge = 1 - 1 / nbin
    below = {k: sum(c for x, c in zip(rel[k]["centres"], rel[k]["count"]) if x < low) / n[k]
             for k in KINDS}
    most_below = max(max((c for x, c in zip(rel[k]["centres"], rel[k]["count"]) if x < low),
                         default=0) for k in KINDS)
    err = [rs[k]["test_error"] for k in KINDS]
    parts = {k: _reliability_parts(rel[k]) for k in KINDS}
    under, over, bins = parts["bbb"]
    ups = [c for c, a, k in bins if a > c]
    run = []  # the occupied bins from the top down, while BBB is under-confident in them
    for c, a, k in sorted(bins, reverse=True):
        if a <= c:
            break
        run.append(c)
    ece = {k: rs[k]["ece"] for k in KINDS}
    rank = 1 + sum(ece[k] > ece["bbb"] for k in KINDS)
    side = "under" if under > over else "over"
    shares = [(k, _share(parts[k][0], parts[k][0] + parts[k][1])) for k in KINDS if k != "bbb"]
    bullets = [
        f"{_pct_range(top.values())} of each method's predictions fall in the top bin "
        f"(confidence above {edge:.2f}). There, accuracy and confidence differ by at most "
        f"{gap_top:.3f} for every method.",
        f"The bins below {low} hold {_pct_range(below.values())} of the images (at most "
        f"{most_below} in one bin; the diagram does not show counts), so their points rest on "
        "few images.",
        f"BBB's accuracy is above its confidence in {len(ups)} of its {len(bins)} occupied bins"
        + (f" (every one from confidence {min(run):.2f} up)" if 1 < len(run) < len(bins) else "")
        + f". Weighted by images, BBB is {side}-confident: right "
        + ("more" if side == "under" else "less") + " often than it claims. Its "
        f"{side}-confident bins make {_share(max(under, over), under + over)} of its ECE.",
        f"BBB's ECE at this seed, {ece['bbb']:.4f}, is "
        + ("the highest" if rank == 1 else "the lowest" if rank == len(KINDS) else
           "neither the highest nor the lowest") + f" of the {len(KINDS)}. " + (
            f"For each of the other methods, under-confident bins make {shares[0][1]} of "
            "its ECE." if len({v for _, v in shares}) == 1 else
            "For the other methods, under-confident bins make "
            + _join(f"{v} ({KIND_LABELS[k]})" for k, v in shares) + " of the ECE.")]
    return (f"**What the diagrams show** (version 1's networks, seed {seed}, trained on "
            f"{DATA_LABELS[data]}; test errors {100 * min(err):.2f}–{100 * max(err):.2f} %):"
            "\n\n" + "\n".join(f"- {b}" for b in bullets))


def _share(part, whole):
    """``part / whole`` in per cent, to whole per cents unless that would round a share that
    is not exactly 0 or 1 to 0 % or 100 % (then with the decimals that keep it apart)."""
    if whole == 0:
        return "—"
    x = part / whole
    for digits in (0, 1, 2):
        text = _pct(x, digits)
        if x in (0, 1) or float(text[:-2]) not in (0.0, 100.0):
            return text
    return "under 0.01 %" if x < 0.5 else "over 99.99 %"


def _accuracy_groups(acc, n_test, chance=0.5):
    """Split {name: accuracy} (each on ``n_test`` points) into (about equal to the best, behind,
    at chance). Two accuracies differ when they are more than two standard errors of their
    difference apart (binomial, unpaired: conservative for one shared test set); at chance:
    within two standard errors of ``chance``."""
    best = max(acc.values())

    def se(p):
        return p * (1 - p) / n_test
    at_chance = [k for k, a in acc.items()
                 if abs(a - chance) <= 2 * (chance * (1 - chance) / n_test) ** 0.5]
    equal = [k for k, a in acc.items() if k not in at_chance
             and best - a <= 2 * (se(best) + se(a)) ** 0.5]
    behind = [k for k in acc if k not in at_chance and k not in equal]
    return equal, behind, at_chance


def _prior_findings(acc, n_test, reference="Normal", chance=0.5):
    """Per data set of ``acc`` ({(data set, prior): accuracy on ``n_test`` points}): its
    accuracies, the groups of ``_accuracy_groups`` and, where ``reference`` was fitted, the
    prior with the largest gain over it, that gain, the priors that beat it beyond two standard
    errors and its accuracy."""
    out = {}
    for d in dict.fromkeys(d for d, _ in acc):
        a = {p: v for (dd, p), v in acc.items() if dd == d}
        f = {"acc": a, "groups": _accuracy_groups(a, n_test, chance), "gain": None}
        if reference in a and len(a) > 1:
            others = {p: v for p, v in a.items() if p != reference}
            top = max(others, key=others.get)
            tops = [p for p in others if abs(others[p] - others[top]) < 1e-12]  # ties
            sig = [p for p in others if others[p] > a[reference] and reference not in
                   _accuracy_groups({reference: a[reference], p: others[p]}, n_test, chance)[0]]
            f["gain"] = (tops, others[top] - a[reference], sig, a[reference], others[top])
        out[d] = f
    return out


def _failed(check):
    """Whether ``collapse_check`` found every network at chance beaten, under its own prior,
    by a posterior that fits (a failed optimisation); None without a check."""
    rows = [c for c in (check or {}).values() if c["best"]]
    if not rows:
        return None
    return all(sum(c["best"][1:]) < sum(c["own"]) for c in rows)


def _collapsed_layers(c, factor=1.5):
    """Which layers of a network at chance (``collapse_check``'s entry ``c``) sit at the prior:
    "every layer", "the hidden layers" or "k of its n layers"."""
    near = [_near_prior(s, r, factor) for s, _, r in c["layers"]]
    return ("every layer" if all(near) else "the hidden layers" if all(near[:-1]) else
            f"{sum(near)} of its {len(near)} layers")


def _collapsed_where(check, factor=1.5):
    """Per network at chance in ``check``, which of its layers have collapsed (no full stop)."""
    by = {}
    for (ds, prior), c in check.items():
        by.setdefault((_collapsed_layers(c, factor), ds), []).append(f"*{prior}*")
    return "Collapsed here: " + "; ".join(f"{where} of {_join(ps)} on the {ds}"
                                           for (where, ds), ps in by.items())

def prior_table_text(acc, n_test, steps, n_seeds=1, reference="Normal", chance=0.5,
                     check=None, n_train=None):
    """Section 7: the reading of the 2-D priors' accuracy table (``acc``: {(data set, prior):
    test accuracy on ``n_test`` points}), as Markdown bullets: per data set which priors fit
    about equally well, which fall behind, which stay at chance, and whether any prior beats
    ``reference`` beyond the test set's noise."""
    found = _prior_findings(acc, n_test, reference, chance)
    bullets, collapsed = [], False
    for d, f in found.items():
        a, (equal, behind, at_chance) = f["acc"], f["groups"]
        fmt = lambda ps: _join([f"*{p}* ({a[p]:.3f})" for p in ps])  # noqa: E731
        s = []
        if at_chance:
            s.append(f"{fmt(at_chance)} {'stays' if len(at_chance) == 1 else 'stay'} at chance "
                     f"(within two standard errors of {chance})")
            collapsed = True
        if behind:
            s.append(f"{fmt(behind)} {'falls' if len(behind) == 1 else 'fall'} behind")
        if equal:
            lo, hi = min(a[p] for p in equal), max(a[p] for p in equal)
            s.append(f"every prior fits about equally well ({lo:.3f}–{hi:.3f})"
                     if len(equal) == len(a) else
                     f"the other {len(equal)} fit about equally well ({lo:.3f}–{hi:.3f})"
                     if len(equal) > 1 else f"*{equal[0]}* fits best ({hi:.3f})")
        bullets.append(f"On the {d}, " + "; ".join(s) + ".")
    if collapsed:
        laplace = any("Laplace" in f["groups"][2] for f in found.values())
        failed = _failed(check)
        bullets.append(("A network at chance may have collapsed onto its prior, the KL term "
                        "outweighing the likelihood. With "
                        f"{_n_seeds(n_seeds)} and {steps:,} steps, this cannot be told from a "
                        "failed optimisation (exercise 3)." if failed is None else
                        "A network at chance predicts about 0.5 everywhere. A layer has "
                        "*collapsed onto the prior* when q's mean σ lies within a factor of "
                        "1.5 of the sd of the *Gaussian closest to the prior* (the N(0, σ²) "
                        "with the smallest KL[N(0, σ²) ‖ prior]) and its means lie near zero. "
                        + _collapsed_where(check) + ". "
                        + ("Yet a posterior that fits scores better under the same objective: "
                           "a failed optimisation, not the KL term outweighing the likelihood"
                           if failed else "For some the collapsed state is what the "
                           "objective prefers")
                        + " (the layers and the objective's values are below the weight "
                        "densities).")
                       + (" The width of Laplace(0, 1) does not explain it: its variance is 2, "
                          "twice that of N(0, 1), whose network fits." if laplace else ""))
    gains = [(d, *f["gain"]) for d, f in found.items() if f["gain"]]
    if gains:
        beat = [(d, sig) for d, _, _, sig, *_ in gains if sig]
        bullets.append(
            (f"No prior beats the plain {reference} one beyond that noise. " if not beat else
             "Beyond that noise, " + "; ".join(f"on the {d} {_join(f'*{x}*' for x in sig)} "
                                               f"beat{'s' if len(sig) == 1 else ''} the plain "
                                               f"{reference} prior" for d, sig in beat) + ". ")
            + "The largest gain over it is " + _join(
                f"{g:+.3f} on the {d} ("
                + (f"*{tops[0]}*" if len(tops) == 1 else
                   ", ".join(f"*{t}*" for t in tops) + f", all {best:.3f}")
                + f", against {ref:.3f})" for d, tops, g, _, ref, best in gains)
            + ".")
    return (f"**What the table shows** ({_n_seeds(n_seeds)}, "
            + (f"{n_train:,} training points, " if n_train else "")
            + f"{steps:,} steps, {n_test:,} test "
            "points per network). Two accuracies count as different when they lie more than two "
            "binomial standard errors of their difference apart.\n\n"
            + "\n".join(f"- {b}" for b in bullets))


def prior_takeaway(acc, n_test, steps, n_seeds=1, reference="Normal", chance=0.5, check=None):
    """The takeaway of section 7 (one Markdown bullet): whether any prior beats ``reference``
    beyond the test set's noise, and which networks stay at chance, with the cause left open."""
    found = _prior_findings(acc, n_test, reference, chance)
    beat = {d: f["gain"][2] for d, f in found.items() if f["gain"] and f["gain"][2]}
    flat = {d: f["groups"][2] for d, f in found.items() if f["groups"][2]}
    text = (f"- On 2-D data ({_n_seeds(n_seeds)}, {steps:,} steps), "
            + (f"no prior beats the plain {reference} one beyond the test set's noise" if not beat
               else _join(f"{_join(f'*{p}*' for p in ps)} beat{'s' if len(ps) == 1 else ''} "
                          f"the plain {reference} prior on the {d}" for d, ps in beat.items())))
    if flat:
        n = sum(len(v) for v in flat.values())
        text += ("; " + _join(f"{len(v)} of the {len(found[d]['acc'])} networks on the {d}"
                              for d, v in flat.items())
                 + f" {'stays' if n == 1 else 'stay'} at chance, "
                 + ("for a reason one run cannot tell (a collapse onto the prior or a failed "
                    "optimisation)" if _failed(check) is None else
                    "collapsed onto the prior although a posterior that fits scores better "
                    "under the same objective: a failed optimisation" if _failed(check) else
                    "collapsed onto the prior, which for some is what the objective prefers"))
    return text + "."


def last_layer_draws(models, datasets, priors, seed=0, n_samples=1000):
    """Return {(data set, prior): draws of the last layer's weights from q} (``n_samples`` per
    weight), drawn in the order the figure of section 7 draws them (seed reset per data set)."""
    from .layers import bayes_layers
    from .toy import sampled_weights
    out = {}
    for ds in datasets:
        torch.manual_seed(seed)
        for prior in priors:
            out[(ds, prior)] = sampled_weights(bayes_layers(models[(ds, prior)])[-1], n_samples)
    return out


def last_layer_figure(draws, lim=6.0):
    """Densities (log scale) of the last-layer weight draws of ``last_layer_draws``, one panel
    per data set, the range cut at ±``lim``."""
    import matplotlib.pyplot as plt
    datas = list(dict.fromkeys(d for d, _ in draws))
    fig, axes = plt.subplots(1, len(datas), figsize=(12, 3.8), constrained_layout=True,
                             squeeze=False)
    for ax, ds in zip(axes[0], datas):
        for (d, prior), w in draws.items():
            if d == ds:
                ax.hist(w.numpy(), bins=120, range=(-lim, lim), density=True, histtype="step",
                        lw=1.3, label=prior)
        ax.set(yscale="log", xlabel="last-layer weight", ylabel="density (log scale)", title=ds)
    axes[0, 0].legend(fontsize=8)
    return fig


# Okabe–Ito, colour-blind safe: one colour per prior in the last-layer figure
PRIOR_COLORS = ("#0072B2", "#E69F00", "#009E73", "#CC79A7", "#000000", "#56B4E9", "#D55E00")


def prior_densities(names):
    """{prior name: w -> log density} for the priors of ``names`` that have a density at a fixed
    scale (the flat prior and the learned-scale priors have none to draw)."""
    from .toy import PRIORS_2D
    out = {}
    for name in names:
        prior = PRIORS_2D[name]()
        if "~" in name or type(prior).__name__ == "FlatPrior":
            continue
        out[name] = prior.log_prob
    return out


def last_layer_figure_full(draws, bins_per_unit=10, n_samples=1000, priors=None):
    """Densities (log scale) of the last-layer weight draws of ``last_layer_draws``
    (``n_samples`` per weight), one panel per data set, over the whole range of the draws
    (nothing cut; one x range shared by the panels, so that their spreads compare at a
    glance), in a colour-blind-safe palette with the legend above the panels; each
    panel's title says how many weights its curves pool; ``priors`` ({name: log density},
    ``prior_densities``): each prior drawn dashed in its posterior's colour (the legend names
    the drawn priors that have no density to draw, such as the flat one)."""
    import matplotlib.pyplot as plt
    datas = list(dict.fromkeys(d for d, _ in draws))
    names = list(dict.fromkeys(p for _, p in draws))
    fig, axes = plt.subplots(1, len(datas), figsize=(12, 4.2), constrained_layout=True,
                             squeeze=False)
    lim = math.ceil(max(float(w.abs().max()) for w in draws.values()))
    for ax, ds in zip(axes[0], datas):
        for (d, prior), w in draws.items():
            if d == ds:
                ax.hist(w.numpy(), bins=2 * lim * bins_per_unit, range=(-lim, lim),
                        density=True, histtype="step", lw=1.3, label=prior,
                        color=PRIOR_COLORS[names.index(prior) % len(PRIOR_COLORS)])
        ax.set_yscale("log")
        lo, hi = ax.get_ylim()  # the draws set the density range; a prior's far tail may
        top = hi
        for prior, logp in (priors or {}).items():  # fall below it (it holds no draws)
            if prior in names:
                x = torch.linspace(-lim, lim, 4001)
                y = logp(x).exp()
                hi = max(hi, 2 * float(y.max()))
                ax.plot(x.numpy(), y.numpy(), ls="--", lw=1.0, alpha=0.9,
                        color=PRIOR_COLORS[names.index(prior) % len(PRIOR_COLORS)])
                peak = float(y.max())
                if peak > 10 * top:  # a prior far above the draws sets the top: say so
                    ax.annotate(f"{prior} prior: narrow spike, peak {peak:.0f}",
                                xy=(float(x[y.argmax()]), peak), xytext=(8, -4),
                                textcoords="offset points", fontsize=8, va="top",
                                color=PRIOR_COLORS[names.index(prior) % len(PRIOR_COLORS)])
        ax.set_ylim(lo, hi)
        n_w = len(next(w for (d, _), w in draws.items() if d == ds)) // n_samples
        ax.set(yscale="log", ylabel="density (log scale)",
               title=f"{ds}: each curve pools {n_w} weights × {n_samples:,} draws",
               xlabel="last-layer weight (the whole range of the draws, both panels)")
    handles, labels = axes[0, 0].get_legend_handles_labels()
    if priors:
        none = [p for p in names if p not in priors]
        handles.append(plt.Line2D([], [], ls="--", lw=1.0, color="0.6"))
        labels.append("dashed, in its posterior's colour: the prior's density"
                      + (f" ({', '.join(none)}: none)" if none else ""))
    fig.legend(handles, labels, loc="outside upper center", ncol=len(labels), fontsize=9,
               frameon=False)
    return fig


def weights_text(draws, acc=None, n_test=None, near=0.25, far=4.0, similar=1.5, chance=0.5):
    """Section 7: the reading of the last-layer weight densities from the draws themselves, one
    Markdown bullet per data set: the standard deviations of the draws (a "similar spread" when
    the largest is within ``similar`` times the smallest), the share beyond ±``far``, and for
    the networks at chance in ``acc`` (on ``n_test`` points; see ``prior_table_text``) the
    share within ±``near``."""
    datas = list(dict.fromkeys(d for d, _ in draws))
    out = []
    for ds in datas:
        w = {p: v for (d, p), v in draws.items() if d == ds}
        sd = {p: float(v.std()) for p, v in w.items()}
        lo, hi = min(sd, key=sd.get), max(sd, key=sd.get)
        tail = {p: float((v.abs() > far).float().mean()) for p, v in w.items()}
        order = sorted(tail, key=lambda p: -tail[p])
        some = [p for p in order if _pct(tail[p]) != _pct(0)]
        none = [p for p in order if p not in some]
        s = (f"On the {ds}, the draws' standard deviations run from {sd[lo]:.2f} (*{lo}*) to "
             f"{sd[hi]:.2f} (*{hi}*): "
             + ("a similar spread" if sd[hi] <= similar * sd[lo] else
                f"the widest is {sd[hi] / sd[lo]:.1f} times the narrowest")
             + ". "
             + (f"Beyond ±{far:g} lie " + _join(f"{_pct(tail[p])} (*{p}*)" for p in some)
                + " of the draws" if some else f"No draw lies beyond ±{far:g}")
             + (f"; {_pct(0)} for " + _join(f"*{p}*" for p in none)
                if some and none else "") + ".")
        if acc is not None:
            a = {p: acc[(ds, p)] for p in w if (ds, p) in acc}
            flat = _accuracy_groups(a, n_test, chance)[2] if a else []
            if flat:
                s += (" The " + _join(f"*{p}*" for p in flat)
                      + f" network{'s' if len(flat) > 1 else ''}, at "
                      "chance in the table, " + ("has " if len(flat) == 1 else "have ")
                      + _join(f"{_pct(float((w[p].abs() <= near).float().mean()))}"
                              for p in flat)
                      + f" of {'its' if len(flat) == 1 else 'their'} draws within ±{near:g} of "
                      f"zero (sd {', '.join(f'{sd[p]:.2f}' for p in flat)}).")
        out.append(s)
    return "**What the densities show:**\n\n" + "\n".join(f"- {x}" for x in out)


@torch.no_grad()
def far_std(models, data, lims, far=0.5, n_samples=100, seed=0, q=0.95):
    """{(data set, prior): (median std far from the data, median std near it, far share of the
    grid, ``q``-quantile far, ``q``-quantile near, largest std far, largest std near)}: the std
    over weight samples of the class-1 probability on the maps' grid
    (``helpers.toy.grid_probs``), split at distance ``far`` from the nearest training point
    (``data``: {data set: (x, y)}). The median says how sure most of each region is; the
    quantile and the largest value show the bright band that a median can hide."""
    from .toy import grid_probs
    out = {}
    for (ds, prior), model in models.items():
        torch.manual_seed(seed)
        xx, yy, _, std = grid_probs(model, lims[ds], n_samples=n_samples)
        pts = torch.stack([xx.reshape(-1), yy.reshape(-1)], 1)
        d = torch.cdist(pts, data[ds][0].float()).min(1).values
        s = std.reshape(-1).float()
        f, n = s[d > far], s[d <= far]
        out[(ds, prior)] = (float(f.median()), float(n.median()), float((d > far).float().mean()),
                            float(f.quantile(q)), float(n.quantile(q)), float(f.max()),
                            float(n.max()))
    return out


def _far_reading(stds, acc, n_test, chance=0.5):
    """The numbers ``far_std_text`` and ``far_std_takeaway`` read: the networks not at chance,
    their median stds far from and near the data, the far share of the grid, how many are less
    sure far away by the median, and that verdict in words; None when every network is at
    chance."""
    found = _prior_findings(acc, n_test, chance=chance)
    fit = [k for k in stds if k[1] not in found[k[0]]["groups"][2]]
    if not fit:
        return None
    fars, nears = [stds[k][0] for k in fit], [stds[k][1] for k in fit]
    share = sum(stds[k][2] for k in fit) / len(fit)
    higher = sum(f > n for f, n in zip(fars, nears))
    sure = ("at least as sure far from the data as near it" if higher <= len(fit) / 4 else
            "about as sure far from the data as near it" if higher <= 3 * len(fit) / 4 else
            "less sure far from the data than near it")
    return fit, fars, nears, share, higher, sure


def _band_reading(stds, fit):
    """Per data set, over the networks ``fit``: (n, how many have their largest std far from
    the data, the range of the high quantile far, near, and how many have it higher far)."""
    out = {}
    for ds in dict.fromkeys(d for d, _ in fit):
        v = [stds[k] for k in fit if k[0] == ds]
        out[ds] = (len(v), sum(x[5] > x[6] for x in v), (min(x[3] for x in v),
                   max(x[3] for x in v)), (min(x[4] for x in v), max(x[4] for x in v)),
                   sum(x[3] > x[4] for x in v))
    return out


def _of(k, n):
    """'none of the 7', 'all 10', '9 of the 10'."""
    return "none of the " + str(n) if k == 0 else f"all {n}" if k == n else f"{k} of the {n}"


def far_std_text(stds, acc, n_test, far=0.5, chance=0.5, q=0.95):
    """Section 4's reading of the std maps far from the data (``stds``: ``far_std``), over the
    networks that are not at chance in ``acc``: first what the maps show, per data set where the
    largest std lies and the ``q``-quantile far and near (the bright band along the decision
    boundary, which can run on into the corners), then the median std far against near (how
    sure most of each region is, which hides that band), and what it means."""
    r = _far_reading(stds, acc, n_test, chance)
    if r is None:
        return ""
    fit, fars, nears, share, higher, sure = r
    band = _band_reading(stds, fit)
    pct = f"{100 * q:.0f}th percentile"
    lines = [f"on the {ds}, the largest std lies far from the data on {_of(k, n)} maps; the "
             f"{pct} of the std is {fq[0]:.3f}–{fq[1]:.3f} far from the data against "
             f"{nq[0]:.3f}–{nq[1]:.3f} near it (higher far away on {_of(j, n)})."
             for ds, (n, k, fq, nq, j) in band.items()]
    lines.append(f"over most of the far region the std is small: its median is "
                 f"{min(fars):.3f}–{max(fars):.3f} far from the data against "
                 f"{min(nears):.3f}–{max(nears):.3f} within that distance (higher far away for "
                 f"{_of(higher, len(fit))} networks); by the median alone, these small "
                 f"classifiers are {sure}.")
    beyond = any(k > n / 2 for n, k, *_ in band.values())
    return (f"**Far from the data** (grid points more than {far:g} from every training point: "
            f"about {_pct(share, 0)} of each map), on the std maps of the {len(fit)} networks "
            "not at chance:\n\n"
            + "\n".join(f"- {x[0].upper()}{x[1:]}" for x in lines)
            + "\n\n"
            + ("So the median hides the bright band of the maps: far from the data these "
               "classifiers are sure over most of the area, but unsure where the decision "
               "boundary runs on beyond the data, into the corners. "
               if beyond else
               "So far from the data these classifiers are sure almost everywhere. ")
            + "Their weight uncertainty marks the decision boundary, not the edge of the data: "
            "it does not by itself make a classifier unsure away from its data, unlike the "
            "regression band of [notebook 02](02_regression_uncertainty.ipynb) with its N(0, 1) "
            "prior.")


def far_std_takeaway(stds, acc, n_test, far=0.5, chance=0.5):
    """The takeaway of section 4's maps (one Markdown bullet): where the 2-D classifiers'
    largest std lies (on the data sets where it lies far from the data on most maps), then the
    median std far from and near the data (``stds``: ``far_std``)."""
    r = _far_reading(stds, acc, n_test, chance)
    if r is None:
        return ""
    fit, fars, nears, _, higher, sure = r
    band = [(ds, n, k) for ds, (n, k, *_) in _band_reading(stds, fit).items() if k > n / 2]
    return (f"- On 2-D data (one seed each), the weight uncertainty of the {len(fit)} BBB "
            "classifiers that fit marks the decision boundary, not the edge of the data"
            + (": on " + _join(f"the {ds} the largest std lies far from the data on "
                               f"{_of(k, n)} maps" for ds, n, k in band)
               + ", where the decision boundary runs on beyond it; elsewhere" if band else
               "; far from the data")
            + (" the std is mostly small" if higher <= len(fit) / 4 else
               f" they are, by the median, {sure}")
            + f" (median std {min(fars):.3f}–{max(fars):.3f} beyond {far:g} from every "
            f"training point, {min(nears):.3f}–{max(nears):.3f} within it).")


def maps_caption(stds, acc, n_test, far=0.5, chance=0.5):
    """One line before section 4's maps: the share of each map beyond the dashed line (the
    region ``far_std`` calls far from the data)."""
    r = _far_reading(stds, acc, n_test, chance)
    share = (r[3] if r else sum(v[2] for v in stds.values()) / len(stds))
    return (f"The region beyond the dashed line, more than {far:g} from every training point "
            f"(*far from the data* below), covers about {_pct(share, 0)} of each map.")


def conv_error_text(per_image):
    """Section 8: the reading of the expected-error figure from its per-image numbers
    (``per_image_from_record``): how many test images no sample gets wrong, how many split the
    samples, how many every sample gets wrong, and the median std of each group."""
    g = _conv_groups(per_image)
    n = sum(c for c, _ in g.values())
    text = (f"**What the figure shows** ({n:,} test images):\n\n" + "\n".join(
        f"- {c:,} that {name}" + (f" (median std {med:.3f})" if med is not None else "")
        for name, (c, med) in g.items()))
    split, wrong = g["split the samples"][1], g["every sample gets wrong"][1]
    if split is not None and wrong is not None:
        split, wrong = round(split, 3), round(wrong, 3)  # as printed
        text += ("\n\nThe images every sample gets wrong have "
                 + ("a smaller median std than" if wrong < split else
                    "a larger median std than" if wrong > split else "the same median std as")
                 + " those that split the samples"
                 + (": by this measure, the weight uncertainty flags them less."
                    if wrong < split else ": by this measure, the weight uncertainty flags "
                    "them more." if wrong > split else
                    ": the std does not tell the two kinds apart."))
    return text


def _conv_groups(per_image):
    """{group: (count, median std or None)} of the three kinds of test image of
    ``conv_error_text``."""
    ee, sd = per_image["expected_error"], per_image["std"]
    groups = {"no sample gets wrong": ee == 0, "split the samples": (ee > 0) & (ee < 1),
              "every sample gets wrong": ee == 1}
    return {g: (int(m.sum()), float(sd[m].median()) if m.any() else None)
            for g, m in groups.items()}


# where the committed conv-net figures come from (git log -- figures/05_uncertainty-<name>.png):
# the commit that last drew each, with this section's code of the time, from the conv net's
# checkpoint (seed 0, 5 epochs); both runs printed the test error and ECE that
# results/05_uncertainty/bbb_conv_net.json holds. Their per-image numbers were not stored.
COMMITTED_FIGURES = {"conv-net-expected-error": ("5a72260", "2026-11-24"),
                     "conv-net-hardest-images": ("c1cd485", "2026-11-23")}


def committed_figures_text(conv, command):
    """Section 8, when the record ``conv`` holds no per-image numbers: why the two figures are
    the committed ones, which network most likely drew them, and that nothing is read from
    them (``command``: what stores the per-image numbers)."""
    n = conv.get("config", {}).get("eval_samples")
    epochs = conv.get("metrics", {}).get("epochs")
    return ("**The two figures below are not redrawn.** The record holds this network's test "
            "metrics, not its per-image numbers, and the network's checkpoint is not on this "
            "machine. The figures are committed files. By the git history, this section's "
            "earlier code drew them from the conv net's checkpoint (seed "
            f"{conv.get('seed')}" + (f", {epochs} epochs" if epochs else "")
            + (f", {n} weight samples" if n else "") + "), in runs that printed the same "
            "test error and ECE as this record. So they most likely show this network, but no "
            "file here backs them, and no sentence of this notebook is read from them. "
            f"`{command}` trains the network again and stores the numbers.")


def committed_caption(name):
    """The caption of a committed figure of section 8: the commit that drew it."""
    commit, day = COMMITTED_FIGURES.get(name, (None, None))
    return ("*Committed figure" + (f", drawn in commit `{commit}` ({day})" if commit else "")
            + "; not redrawn here.*")


def conv_takeaway(conv, per_image=None):
    """The takeaway of section 8 (one Markdown bullet): the conv net's test error and ECE and,
    with per-image numbers, whether its all-wrong images have a smaller median std than those
    that split the samples."""
    m = conv["metrics"]
    text = (f"- The Bayesian conv net (one network, {m['epochs']} "
            f"epoch{'s' if m['epochs'] != 1 else ''}) misclassifies "
            f"{100 * m['test_error']:.2f} % of the MNIST test images, with ECE {m['ece']:.4f}")
    if per_image is None:
        return text + ("; its record holds no per-image numbers, so whether its weight "
                       "uncertainty flags its errors is not read here.")
    g = _conv_groups(per_image)
    (n_split, split), (n_wrong, wrong) = g["split the samples"], g["every sample gets wrong"]
    if split is None or wrong is None:
        return text + (f"; {n_split:,} test images split its samples and {n_wrong:,} are wrong "
                       "for every sample.")
    split, wrong = round(split, 3), round(wrong, 3)
    return text + (f". Its {n_wrong:,} images that every sample gets wrong have "
                   + ("a smaller median std than" if wrong < split else
                      "a larger median std than" if wrong > split else "the same median std as")
                   + f" the {n_split:,} that split the samples ({wrong:.3f} against "
                   f"{split:.3f})"
                   + (": the weight uncertainty flags them less." if wrong < split else "."))


V2_AS_V1 = {"map": "deterministic", "mc_dropout": "mc_dropout", "ensemble": "ensemble"}
V2_NOUNS = {"map": "MAP", "mc_dropout": "MC dropout", "ensemble": "the deep ensemble"}


def _v2_comparison(mean, v2):
    """{'reverses' | 'upholds' | 'unresolved': [(metric name, higher is better, BBB better
    (None: not resolved), rival)]}: version 2's verdict on each ordering of BBB against a rival
    that version 1's means (``mean``: {metric: {kind: mean}}) show."""
    out = {"reverses": [], "upholds": [], "unresolved": []}
    for claims in v2["families"].values():
        for claim, res in claims.items():
            lhs, rest = claim.split(" < ")
            rhs, metric = rest.split(" on ")
            rival = rhs if lhs == "bbb" else lhs
            v1_kind = V2_AS_V1.get(rival)
            if v1_kind is None or metric not in mean:
                continue
            high = metric.startswith("auroc")
            name = "AUROC" if high else "ECE"
            v1_better = (mean[metric]["bbb"] - mean[metric][v1_kind]) * (1 if high else -1) > 0
            better = {"holds": True, "reversed": False}.get(res["verdict"])
            key = ("unresolved" if better is None else
                   "upholds" if better == v1_better else "reverses")
            out[key].append((name, high, better, rival))
    return out


# a rival of version 2 that is not version 1's network of the same name, said at its first mention
V2_CHANGED = {"map": "MAP (not version 1's single network: its weight decay was searched)",
              "ensemble": "the deep ensemble (of MAP networks, not version 1's)"}


def _orderings(items, noted=None):
    """'on AUROC, BBB is higher than MAP; on ECE, BBB is lower than MC dropout and the deep
    ensemble' from ``_v2_comparison`` items (grouped by metric and winner). A rival in
    ``V2_CHANGED`` is named with its caveat the first time (``noted``: the rivals already
    named so, updated)."""
    noted = set() if noted is None else noted

    def name(rival):
        if rival in V2_CHANGED and rival not in noted:
            noted.add(rival)
            return V2_CHANGED[rival]
        return V2_NOUNS[rival]
    groups = {}
    for metric, high, better, rival in items:
        groups.setdefault((metric, high, better), []).append(rival)
    out = []
    for (metric, high, better), rivals in groups.items():
        side = "higher" if high else "lower"
        names = _join([name(r) for r in rivals])
        if better is None:
            out.append(f"{metric} against {names}")
        elif better:
            out.append(f"on {metric}, BBB is {side} than {names}")
        else:
            out.append(f"on {metric}, {names} {'is' if len(rivals) == 1 else 'are'} "
                       f"{side} than BBB")
    return "; ".join(out) if all(b is not None for _, _, b, _ in items) else _join(out)


def ood_takeaway(summary, rows, v2=None, seed=0, data="MNIST"):
    """The takeaways on the out-of-distribution tables: where BBB stood in version 1 on the mean
    AUROC (with the disclosure that its recipe was first picked on that test AUROC) and ECE
    (descriptive, no declared test) and on which side of the diagonal its calibration error lay
    at ``seed``; then which of those orderings of BBB against a rival version 2's verdicts
    (``v2``: results/05_uncertainty/v2/summary.json) reverse, uphold or leave unresolved, each
    changed rival named with its caveat in the same sentence."""
    n = len(summary[(data, "bbb")]["seeds"])
    mean = {m: {k: summary[(data, k)][m]["mean"] for k in KINDS} for m in ("auroc_entropy", "ece")}
    au, ece = mean["auroc_entropy"], mean["ece"]
    rivals = [k for k in KINDS if k != "bbb"]
    best_rival = max(rivals, key=au.get)
    rank = 1 + sum(ece[k] > ece["bbb"] for k in rivals)
    under, over, _ = _reliability_parts(_row(rows, data, "bbb", seed)["reliability"])
    lead = au["bbb"] > au[best_rival]
    text = (f"- Version 1 (section 3: unequal searches, {_n_seeds(n)}, no declared test): BBB "
            + (f"has the highest mean AUROC ({au['bbb']:.3f}; next {NOUNS[best_rival]}, "
               f"{au[best_rival]:.3f}), but its" if lead else
               f"is behind {NOUNS[best_rival]} on the mean AUROC ({au['bbb']:.3f} against "
               f"{au[best_rival]:.3f}). Its")
            + f" recipe was first picked on this test AUROC ({CHOICES_LINK}, entry 8). "
            f"Its mean ECE ({ece['bbb']:.4f}) is "
            + ("the highest" if rank == 1 else "the lowest" if rank == len(KINDS)
               else "neither the highest nor the lowest") + f" of the {len(KINDS)}. "
            f"At seed {seed} its calibration error is "
            f"{'under' if under > over else 'over'}-confidence (section 6).")
    if v2 is None:
        return text + "\n- Version 2 has no final run yet."
    if v2["interim"]:
        return text + ("\n- Version 2's runs are not complete, so it does not re-ask these "
                       "orderings yet.")
    c = _v2_comparison(mean, v2)
    total = sum(len(v) for v in c.values())
    noted = set()
    lines = [f"- Version 2 is the comparison to weigh: equal search budgets (only MAP's grid was "
             f"placed by a pilot search of its own: [docs/choices.md](../docs/choices.md), entry "
             f"11) and declared tests, both fixed before its numbers, on {len(v2['seeds'])} "
             f"paired seeds. Of version 1's "
             f"{total} orderings of BBB against a rival:"]
    for key, word in (("reverses", "Reversed"), ("upholds", "Upheld"),
                      ("unresolved", "Not resolved")):
        if c[key]:
            lines.append(f"  - {word} ({len(c[key])}): {_orderings(c[key], noted)}.")
    return text + "\n" + "\n".join(lines)


def search_takeaway(sweeps, summary, ensemble_size, v2=None, data="MNIST"):
    """The takeaway on the deep ensemble's search (one Markdown bullet): the epochs the
    validation-NLL rule chose for version 1's single network without weight decay
    (``sweeps``), the AUROC of version 1's ensemble of such networks (``summary``) and, with
    version 2's final summary ``v2``, its ensemble's AUROC, with what differs between the two."""
    ens = summary[(data, "ensemble")]["auroc_entropy"]
    n = len(summary[(data, "ensemble")]["seeds"])
    rec = sweeps.get(sweep_name("ensemble", data))
    text = f"- The deep ensemble inherits the single network's search. In version 1, "
    if rec:
        epochs, cap = rec["metrics"]["chosen"]["epochs"], rec["config"]["max_epochs"]
        text += ("the validation-NLL rule without weight decay "
                 + (f"stopped that network at {epochs} of the {cap} epochs allowed"
                    if epochs < cap else f"let that network train all {cap} epochs allowed")
                 + f" on {DATA_LABELS[data]}, and the ensemble of {ensemble_size} reaches ")
    else:
        text += f"the ensemble of {ensemble_size} reaches "
    text += f"an AUROC of {_ms(ens)} ({_n_seeds(n)})."
    row = (v2 or {}).get("table", {}).get("ensemble", {}).get("full", {}).get("auroc_entropy")
    if v2 is None or v2.get("interim") or row is None:
        return text
    return (text + " In version 2 its members are MAP networks, searched with weight decay, and "
            f"it reaches {_ms(row)} ({_n_seeds(len(row['seeds']))}). The two versions also "
            "differ in their search grids and seeds, and no test compares them.")


def entropy_takeaway(rows, seed=0, data="MNIST"):
    """The takeaway of section 4 (one Markdown bullet): which methods are near-certain (first
    entropy bin) about the fewest and the most unfamiliar images at ``seed``."""
    share = {k: _entropy_shares(_row(rows, data, k, seed))[1] for k in KINDS}
    few, most = min(KINDS, key=share.get), max(KINDS, key=share.get)
    other = DATA_LABELS[OTHER[data]]
    if _pct(share[few]) == _pct(share[most]):
        return (f"- Shown {other} after training on {DATA_LABELS[data]} (seed {seed}), every "
                f"method is near-certain about {_pct(share[few])} of the images (section 4).")
    return (f"- Shown {other} after training on {DATA_LABELS[data]} (seed {seed}), "
            f"{NOUNS[few]} is near-certain about the fewest images ({_pct(share[few])}) and "
            f"{NOUNS[most]} about the most ({_pct(share[most])}): a one-seed reading of "
            "section 4's histograms, not a test.")


def examples_takeaway(row):
    """The takeaway of section 5 (one Markdown bullet): on how many of the stored images BBB's
    weight samples disagree, in domain and out of distribution."""
    ex = row["examples"]

    def split(probs):
        p = torch.tensor(probs)
        return sum(len(set(p[:, k].argmax(-1).tolist())) > 1 for k in range(p.shape[1])), \
            p.shape[1]
    k_in, n_in = split(ex["in_probs"])
    k_out, n_out = split(ex["out_probs"])
    return (f"- BBB trained on {DATA_LABELS[row['data']]}: its weight samples disagree on "
            f"{k_out} of {n_out} {DATA_LABELS[OTHER[row['data']]]} images and on {k_in} of "
            f"{n_in} {DATA_LABELS[row['data']]} images (section 5). That disagreement is what "
            f"the mutual information scores; these {n_in + n_out} images illustrate it, they do "
            "not measure it.")


def conv_line(conv, v2):
    """Section 5 in one line: the conv net's test error and ECE beside the BBB MLP's of
    section 3 (mean ± sd over its seeds), both on the MNIST test set."""
    m = conv["metrics"]
    text = (f"**The conv net** (one network, {m['epochs']} epoch{'s' if m['epochs'] != 1 else ''}, "
            f"{conv['config']['eval_samples']} weight samples): test error "
            f"{100 * m['test_error']:.2f} %, ECE {m['ece']:.4f}")
    full = ((v2 or {}).get("table", {}).get("bbb", {}) or {}).get("full", {})
    err, ece = full.get("test_error"), full.get("ece")
    if err and ece:
        text += (f"; the BBB MLP of section 3 (mean ± sd over {len(err['per_seed'])} seeds): "
                 f"{100 * err['mean']:.2f} ± {100 * err['sd']:.2f} %, ECE {ece['mean']:.4f} ± "
                 f"{ece['sd']:.4f}. One seed against ten, and different training: a contrast, "
                 "not a test")
    return text + "."


# the training points of the 2-D maps: (marker, face, edge) per class, told apart by shape as
# well as by fill, since on the darkest parts of the maps a fill alone is hard to see
POINT_STYLES = {0: ("o", "white", "black"), 1: ("^", "black", "white")}


def outline_points(fig, size=16, alpha=1.0):
    """Draw every scatter of ``fig`` (and its legend markers) in black and white instead of the
    colours of its class, each class in its own shape (``POINT_STYLES``): class 0 white circles
    with a black edge, class 1 black triangles with a thin white edge, large enough and opaque
    so that each keeps its look (and the legend's) on the red-blue maps, on the viridis maps
    and on a white map at chance."""
    from matplotlib.collections import PathCollection
    from matplotlib.markers import MarkerStyle

    def path(marker):
        m = MarkerStyle(marker)
        return m.get_path().transformed(m.get_transform())
    for ax in fig.axes:
        for c in ax.collections:
            if isinstance(c, PathCollection) and c.get_array() is not None:
                y = [int(round(float(v))) for v in c.get_array()]
                c.set_array(None)
                c.set_paths([path(POINT_STYLES[v][0]) for v in y])
                c.set_facecolor([POINT_STYLES[v][1] for v in y])
                c.set_edgecolor([POINT_STYLES[v][2] for v in y])
                c.set_linewidth([0.6 if v == 0 else 0.35 for v in y])
                c.set_sizes([size])
                c.set_alpha(alpha)
    for leg in fig.legends:
        for v, h in enumerate(leg.legend_handles):
            if hasattr(h, "set_markeredgecolor") and v in POINT_STYLES:
                h.set_marker(POINT_STYLES[v][0])
                h.set_markersize(6)
                h.set_markerfacecolor(POINT_STYLES[v][1])
                h.set_markeredgecolor(POINT_STYLES[v][2])
                h.set_markeredgewidth(0.6 if v == 0 else 0.35)
    return fig


def at_chance(acc, ds, n_test, chance=0.5):
    """The priors whose network on data set ``ds`` is at chance in ``acc`` ({(data set, prior):
    accuracy on ``n_test`` points}; within two standard errors of ``chance``)."""
    return _accuracy_groups({p: a for (d, p), a in acc.items() if d == ds}, n_test, chance)[2]


def style_maps(fig, x_train, lim, flat=()):
    """Finish a ``helpers.toy.prior_maps`` figure: the training points in black and white, one
    shape per class (``outline_points``), the dashed line of ``mark_far`` on the std panels,
    "(at chance)" under the title of every panel whose prior is in ``flat``, and the plane's
    coordinates (ticks every unit) on the left column and the bottom row."""
    from matplotlib.ticker import MultipleLocator
    outline_points(fig)
    mark_far(fig, x_train, lim)
    for ax in fig.axes:
        if ax.get_title() in flat:
            ax.set_title(f"{ax.get_title()}\n(at chance)", fontsize=9)
        spec = ax.get_subplotspec() if hasattr(ax, "get_subplotspec") else None
        if spec is None or not ax.collections:  # colour bars: no scale of the plane
            continue
        if spec.is_first_col():  # coordinates on the outer panels, so that the dashed
            ax.yaxis.set_major_locator(MultipleLocator(1))  # distance has a scale
            ax.tick_params(axis="y", labelsize=9, length=2, left=True, labelleft=True)
            ax.set_ylabel("$x_2$", fontsize=10, labelpad=1)
        if spec.is_last_row():
            ax.xaxis.set_major_locator(MultipleLocator(1))
            ax.tick_params(axis="x", labelsize=9, length=2, bottom=True, labelbottom=True)
            ax.set_xlabel("$x_1$", fontsize=10, labelpad=1)
    return fig


# ---- section 4: why a 2-D network sits at chance, checked on the stored networks ----

def _q_params(layer):
    """(mu, sigma) of a Bayesian layer's weights and biases, flattened together."""
    import torch.nn.functional as F
    mu = torch.cat([layer.weight_mu.detach().reshape(-1), layer.bias_mu.detach().reshape(-1)])
    rho = torch.cat([layer.weight_rho.detach().reshape(-1), layer.bias_rho.detach().reshape(-1)])
    return mu, F.softplus(rho)


def _prior_logpdf(prior, log_scale=None):
    """w -> elementwise log p(w) of a layer's prior; a learned-scale prior at scale
    e^``log_scale`` (default its posterior median e^m)."""
    if hasattr(prior, "kl_hyper"):
        ls = float(prior.log_scale_mu.detach()) if log_scale is None else log_scale
        return prior._family(torch.tensor(math.exp(ls))).log_prob
    return prior.log_prob


def closest_sd(prior, log_scale=None):
    """The sd σ of the zero-mean Gaussian closest to a layer's prior, argmin KL[N(0, σ²) ‖ p]
    (E over z ~ N(0, 1) by the trapezoid rule on a fine grid, exact enough for priors with a
    kink at zero such as Laplace; σ on a grid, then refined around its best value; for
    Laplace(0, b) it is b·sqrt(π/2)); None for a flat prior, which has no closest Gaussian."""
    if type(prior).__name__ == "FlatPrior":
        return None
    logp = _prior_logpdf(prior, log_scale)
    z = torch.linspace(-10, 10, 8001, dtype=torch.float64)
    wq = torch.exp(-z ** 2 / 2)
    wq = wq / wq.sum()

    def kl(s):
        return -math.log(s) - float((wq * logp((s * z).float()).double()).sum())
    sds = torch.logspace(-3, 1.5, 451, dtype=torch.float64).tolist()
    best = min(sds, key=kl)
    step = 10 ** (4.5 / 450)
    return min(torch.logspace(math.log10(best / step), math.log10(best * step), 201,
                              dtype=torch.float64).tolist(), key=kl)


@torch.no_grad()
def neg_elbo(q_model, prior_model, x, y, n_samples=200, k=1000, seed=0):
    """(expected NLL, KL) in nats of ``q_model``'s posterior on the training set (x, y) under
    the priors of ``prior_model`` (the same 2-5-5-2 network): the objective that
    ``prior_model`` was trained to minimise, evaluated at another network's q. KL by Monte
    Carlo (``k`` draws per layer); for a learned prior scale, the hyperprior's KL is added and
    q(log s) = N(m, τ²) keeps ``prior_model``'s τ, with m chosen per layer on a grid to give
    ``q_model``'s weights their best ELBO (any choice gives a valid ELBO)."""
    import torch.nn.functional as F

    from .elbo import sample_forward
    from .layers import bayes_layers, sampling
    from .utils import seed_everything
    seed_everything(seed)
    with sampling(q_model, True):
        logits = sample_forward(q_model, x, n_samples)
    nll = float(F.cross_entropy(logits.reshape(-1, logits.shape[-1]), y.repeat(n_samples),
                                reduction="sum")) / n_samples
    kl = 0.0
    for lq, lp in zip(bayes_layers(q_model), bayes_layers(prior_model)):
        mu, sd = _q_params(lq)
        neg_h = float(-(0.5 * torch.log(2 * math.pi * math.e * sd ** 2)).sum())
        g = torch.Generator().manual_seed(seed)
        w = mu + sd * torch.randn(k, mu.numel(), generator=g)
        prior = lp.prior
        if type(prior).__name__ == "FlatPrior":
            kl += neg_h
        elif not hasattr(prior, "kl_hyper"):
            kl += neg_h - float(prior.log_prob(w).sum(1).mean())
        else:
            tau = float(F.softplus(prior.log_scale_rho))
            q_ls = torch.distributions.Normal(0.0, tau)
            eps = q_ls.sample((k,))

            def layer_kl(m):
                ls = m + eps
                ep = float(prior._family(ls.exp().unsqueeze(1)).log_prob(w).sum(1).mean())
                hyper = float((q_ls.log_prob(eps) - prior.hyper_log_prob(ls)).mean())
                return neg_h - ep + hyper
            coarse = [float(prior.log_scale_mu.detach())] + torch.linspace(-5, 3, 17).tolist()
            m0 = min(coarse, key=layer_kl)  # then refine around the best coarse value
            kl += min(layer_kl(m) for m in [m0, *torch.linspace(m0 - 0.5, m0 + 0.5, 11).tolist()])
    return nll, kl


def collapse_check(models, data, acc, n_test, chance=0.5):
    """For every 2-D network at chance in ``acc`` (see ``prior_table_text``): per layer the mean
    σ and largest |μ| of its q against the sd of the Gaussian closest to its prior
    (``closest_sd``), its own −ELBO, and the lowest −ELBO that the posterior of any network
    that fits the same data reaches under this network's prior (``neg_elbo``).
    {(data set, prior): {"layers": [(mean σ, max |μ|, closest sd)], "own": (nll, kl),
    "best": (name, nll, kl)}}."""
    from .layers import bayes_layers
    found = _prior_findings(acc, n_test, chance=chance)
    out = {}
    for ds, f in found.items():
        at_chance = f["groups"][2]
        fit = [p for (d, p) in models if d == ds and p not in at_chance]
        x, y = data[ds]
        for prior in at_chance:
            model = models[(ds, prior)]
            layers = []
            for layer in bayes_layers(model):
                mu, sd = _q_params(layer)
                layers.append((float(sd.mean()), float(mu.abs().max()), closest_sd(layer.prior)))
            own = neg_elbo(model, model, x, y)
            others = {p: neg_elbo(models[(ds, p)], model, x, y) for p in fit}
            best = min(others, key=lambda p: sum(others[p])) if others else None
            out[(ds, prior)] = {"layers": layers, "own": own,
                                "best": None if best is None else (best, *others[best])}
    return out


def _near_prior(sd, closest, factor=1.5):
    return closest is not None and closest / factor <= sd <= closest * factor


def collapse_text(check, n_train, steps, factor=1.5):
    """Section 4's reading of ``collapse_check``: per network at chance, where its posterior
    sits against the Gaussian closest to its prior (a layer "sits at its prior" when its mean
    σ is within ``factor`` of that Gaussian's sd), then whether the objective it was trained on
    prefers that state: its own −ELBO against the best that a posterior which fits reaches
    under the same prior."""
    if not check:
        return ""
    bullets = []
    for (ds, prior), c in check.items():
        sds = ", ".join(f"{s:.2f}" for s, _, _ in c["layers"])
        ref = ", ".join("—" if r is None else f"{r:.2f}" for _, _, r in c["layers"])
        top = max(m for _, m, _ in c["layers"])
        near = [_near_prior(s, r, factor) for s, _, r in c["layers"]]
        learned = "~" in prior
        s = (f"*{prior}* on the {ds}: q's mean σ per layer is {sds}, against {ref} for the "
             f"Gaussian closest to its prior{' (at its learned scale)' if learned else ''}, and "
             f"every mean lies within {top:.2f} of zero. ")
        if all(near):
            s += ("Every layer has collapsed onto its prior: the prior's scale shrank and the "
                  "posterior followed it.")
        elif all(near[:-1]) and not near[-1]:
            s_last, _, r_last = c["layers"][-1]
            s += (f"Its hidden layers have collapsed onto the prior; its last layer is "
                  f"{r_last / s_last:.0f} times narrower than that Gaussian, so that every "
                  "weight sample predicts about 0.5 whatever the input.")
        else:
            s += (f"{sum(near)} of its {len(near)} layers have collapsed onto the prior.")
        bullets.append(s)
    rows = [(ds, prior, c) for (ds, prior), c in check.items() if c["best"]]
    if rows:
        better = all(sum(c["best"][1:]) < sum(c["own"]) for *_, c in rows)
        donors = sorted({c["best"][0] for *_, c in rows})
        bullets.append(
            "Is that state what their objective prefers? Scored under each network's own prior "
            f"(−ELBO: the expected NLL of the {n_train:,} training points plus the KL, in "
            "nats, lower is better), the posterior of a network that fits the same data (*"
            + "*, *".join(donors) + "*) reaches "
            + _join(f"{sum(c['best'][1:]):.1f} ({c['best'][1]:.1f} + {c['best'][2]:.1f}) "
                    f"under *{p}*" for _, p, c in rows)
            + ", against the collapsed networks' "
            + _join(f"{sum(c['own']):.1f} ({c['own'][0]:.1f} + {c['own'][1]:.1f})"
                    for *_, c in rows) + ". "
            + ("So the KL term does not outweigh the likelihood: a posterior that fits is "
               "better under the same prior. These networks are a failed optimisation, a poor "
               f"optimum of their own objective that {steps:,} steps did not leave (one run "
               "each; exercise 3)."
               if better else
               "For some of them the collapsed state is the better one: there the KL term "
               "outweighs the likelihood."))
    n = len(check)
    head = ("**Why the network at chance sits there**" if n == 1 else
            f"**Why the {_NUMBER.get(n, str(n))} networks at chance sit there**")
    return (head + " (computed from the stored networks):\n\n"
            + "\n".join(f"- {b}" for b in bullets))


_NUMBER = {2: "two", 3: "three", 4: "four", 5: "five", 6: "six"}


def mark_far(fig, x_train, lim, far=0.5, n=200):
    """Draw on every std panel of a ``helpers.toy.prior_maps`` figure (the viridis ones) the
    dashed white line at distance ``far`` from the nearest training point, the boundary of the
    region that ``far_std`` calls far from the data, and name it in the figure's legend."""
    import matplotlib.pyplot as plt
    x0, x1, y0, y1 = lim
    xx, yy = torch.meshgrid(torch.linspace(x0, x1, n), torch.linspace(y0, y1, n), indexing="xy")
    pts = torch.stack([xx.reshape(-1), yy.reshape(-1)], 1)
    d = torch.cdist(pts, x_train.float()).min(1).values.reshape(n, n)
    for ax in fig.axes:
        if any(getattr(getattr(c, "cmap", None), "name", "") == "viridis"
               for c in ax.collections):
            ax.contour(xx.numpy(), yy.numpy(), d.numpy(), levels=[far], colors="white",
                       linestyles="--", linewidths=0.9)
    for leg in fig.legends:
        handles = list(leg.legend_handles) + [plt.Line2D([], [], ls="--", color="0.2", lw=0.9)]
        labels = [t.get_text() for t in leg.get_texts()] + [
            f"std rows, dashed: {far:g} from the nearest training point"]
        leg.remove()
        fig.legend(handles, labels, loc="outside lower center", ncol=len(labels), fontsize=8)
    return fig


def toy_setup_text(rec):
    """Section 4's settings, read from results/05_uncertainty/priors_2d.json's config: the
    training set's size and noise, the steps and learning rate, and what "KL weight 1" means
    for how strongly the KL term competes with the likelihood."""
    c = rec["config"]
    data = "; ".join(f"{ds}: noise sd {kw['noise']:g}"
                     + (f", inner radius {kw['factor']:g} of the outer" if "factor" in kw else "")
                     for ds, kw in c["data"].items())
    n = c["n_train"]
    return (f"**Setup.** Each network is trained on {n:,} points ({data}) for {c['steps']:,} "
            f"Adam steps at learning rate {c['lr']:g}, one seed, and tested on {c['n_test']:,} "
            f"fresh points. With all {n:,} points in one minibatch the KL weight (the share "
            "of the KL term one minibatch's cost carries, the paper's π_i of its section 3.4) "
            "is 1: each "
            f"step minimises the expected NLL of the {n:,} points plus the whole KL term (the "
            "negative ELBO, evidence lower bound: the cost Bayes by Backprop minimises), so "
            "the prior competes with the likelihood of only "
            f"{n:,} points.")


def _elbo_pairs(check, acc=None):
    """'Plug the posterior of the *Cauchy*-prior network that fit the circles (0.994) into each
    failed network's own loss (its negative ELBO, lower is better): it scores lower than the
    point where that network's training ended (*Laplace*: 117.9 against 375.8; …)': per network
    at chance, the lowest negative ELBO that a posterior which fits the same data reaches under
    the same prior against its own (``collapse_check``'s "best" and "own"); ``acc``: the test
    accuracies, to give the fitting network's. How a learned prior scale is scored:
    ``_elbo_note``."""
    rows = [(ds, prior, c) for (ds, prior), c in check.items() if c["best"]]
    names = {c["best"][0] for _, _, c in rows}
    sets = {ds for ds, _, _ in rows}
    loss = "into each failed network's own loss (its negative ELBO, lower is better)"
    if len(names) == 1 and len(sets) == 1:  # one posterior beats them all: name it once
        name, ds = next(iter(names)), next(iter(sets))
        fit = (acc or {}).get((ds, name))
        return (f"Plug the posterior of the *{name}*-prior network that fit the {ds} "
                + (f"({fit:.3f}) " if fit is not None else "") + loss
                + ": it scores lower than the point where that network's training ended ("
                + "; ".join(f"*{prior}*: {sum(c['best'][1:]):.1f} against {sum(c['own']):.1f}"
                            for _, prior, c in rows) + ")")
    return (f"Plug a posterior that fits the same data {loss}: it scores lower than the point "
            "where that network's training ended (" + "; ".join(
                f"*{prior}* on the {ds}: the *{c['best'][0]}* network's "
                f"{sum(c['best'][1:]):.1f} against {sum(c['own']):.1f}"
                for ds, prior, c in rows) + ")")


def _elbo_note(check):
    """How ``_elbo_pairs`` scores a network whose prior scale s is learned (a footnote to the
    bullet); empty when no such network failed."""
    if not any("~" in prior for (_, prior), c in check.items() if c["best"]):
        return ""
    return (" (Where the prior's scale s is learned, q(log s) keeps the failed network's width "
            "τ, its mean set per layer to suit the weights scored.)")


def _where_text(stds, acc, n_test, maps, n_behind=0, far=0.5, chance=0.5):
    """The appendix's reading of the std maps (``stds``: ``far_std``): what the drawn maps
    (data sets in ``maps``, Figure 5.3) show of where the largest std lies, the medians over
    every network that fits (the undrawn maps' named as such), what that means for flagging
    an input, and the contrast with the paper's Figure 5 (notebook 02); empty when every
    network is at chance."""
    r = _far_reading(stds, acc, n_test, chance)
    if r is None:
        return ""
    fit, fars, nears, *_ = r
    band = _band_reading(stds, fit)
    drawn = [(ds, n, k) for ds, (n, k, *_) in band.items() if ds in maps]
    undrawn = [ds for ds in band if ds not in maps]
    boundary = bool(drawn) and all(k > n / 2 for _, n, k in drawn)
    text = ""
    if drawn:
        text = ("On " + _join(f"the {ds} (Figure 5.3) the largest std lies far from the data "
                              f"on {_of(k, n)} maps" for ds, n, k in drawn)
                + (", where the decision boundary runs on beyond the data" if boundary else "")
                + ". ")
    behind = f"; {'one' if n_behind == 1 else n_behind} of them behind the others" \
        if n_behind else ""
    text += (f"Over all {len(fit)} BBB classifiers that fit (one seed each{behind}"
             + "".join(f"; the {ds}' maps are not drawn" for ds in undrawn)
             + f"), the median std is {min(fars):.3f}–{max(fars):.3f} beyond {far:g} from "
             f"every training point and {min(nears):.3f}–{max(nears):.3f} within it.")
    if boundary:
        text += (" So on " + _join(f"the {ds}" for ds, *_ in drawn) + " BBB's uncertainty flags "
                 "an input by where it falls against the decision boundary, not by its "
                 "distance from the training data; section 3's AUROC measures how well that "
                 "still tells Fashion-MNIST from MNIST.")
    return text + (" Contrast the paper's Figure 5 (regression), where the predictive band "
                   "widens away from the data: [notebook 02](02_regression_uncertainty.ipynb) "
                   "measures how much, with a Gaussian prior and with the scale mixture.")


def appendix_text(acc, n_test, steps, stds, check=None, reference="Normal", chance=0.5,
                  maps=("moons",)):
    """The appendix's whole reading (a heading and three Markdown bullets): whether any prior
    beats ``reference`` beyond the test set's noise (two binomial standard errors); which
    networks stay at chance and, from ``collapse_check``, whether a posterior that fits scores
    better under their own objective (a failed optimisation); and where the weight uncertainty
    lies on the maps (``far_std_takeaway``, from ``stds``: ``far_std``). A network that fits
    but falls behind the others gets a bullet of its own, pointing to its map where its data
    set is among ``maps`` (the data sets whose maps the notebook draws)."""
    found = _prior_findings(acc, n_test, reference, chance)
    beat = {d: f["gain"][2] for d, f in found.items() if f["gain"] and f["gain"][2]}
    out = [f"**What the appendix shows** (one seed, {steps:,} steps, {n_test:,} test points "
           "per network; two accuracies differ when they lie more than two binomial standard "
           "errors of their difference apart):", ""]
    out.append("- **The prior.** " + (
        f"No prior beats the plain {reference} one beyond the test set's noise." if not beat
        else _join(f"{_join(f'*{p}*' for p in ps)} beat{'s' if len(ps) == 1 else ''} the "
                   f"plain {reference} prior on the {d}" for d, ps in beat.items()) + "."))
    flat = {d: f["groups"][2] for d, f in found.items() if f["groups"][2]}
    if flat:
        n = sum(len(v) for v in flat.values())
        failed = _failed(check)
        out.append("- **Networks at chance.** " + _join(
            f"{_join(f'*{p}*' for p in v)} on the {d}" for d, v in flat.items())
            + f" {'stays' if n == 1 else 'stay'} at chance (about 0.5 everywhere"
            + "".join(f"; the {d}' maps are not drawn" for d in flat if d not in maps)
            + "). "
            + ("One run cannot tell why." if failed is None else
               _elbo_pairs(check, acc) + ". A better point existed under each of these "
               "priors, so the optimiser, not the prior, failed: the prior did not outweigh "
               "the data." + _elbo_note(check)
               if failed else "For some, the objective prefers that state to a fit."))
    behind = {d: f["groups"][1] for d, f in found.items() if f["groups"][1]}
    for d, ps in behind.items():
        rest = [v for p, v in found[d]["acc"].items() if p in found[d]["groups"][0]]
        out.append("- **Fitted, but behind the others.** " + _join(
            f"*{p}* on the {d} ({found[d]['acc'][p]:.3f}" for p in ps)
            + f", against {min(rest):.3f}–{max(rest):.3f} for the other priors there)"
            + f" {'fits' if len(ps) == 1 else 'fit'} the data only roughly"
            + ((": see " + ("its map" if len(ps) == 1 else "their maps")
                + " in Figure 5.3.") if d in maps else "."))
    where = _where_text(stds, acc, n_test, maps, sum(len(v) for v in behind.values()),
                        chance=chance)
    if where:
        out.append("- **Where the uncertainty lies.** " + where)
    return "\n".join(out)
