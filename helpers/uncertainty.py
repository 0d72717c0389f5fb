"""Predictive samples of the classification methods, for out-of-distribution and calibration tests."""
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


def ood_text(summary, alt_rows=None):
    """Return notebook 05's reading of its out-of-distribution table (Markdown; version 1: these
    statements are descriptive, no test was declared), every number from ``summary``
    (``summarise`` of ood.json) and, for the comparison with notebook 06, ``alt_rows`` (the
    rows of results/06_alternatives/summary.json)."""
    def ms(data, kind, metric, scale=1.0, digits=3, unit=""):
        e = summary[(data, kind)][metric]
        sd = "" if e["sd"] is None else f" ± {scale * e['sd']:.{digits}f}"
        return f"{scale * e['mean']:.{digits}f}{sd}{unit}"
    out = []
    if all(("MNIST", k) in summary for k in KINDS):
        au = {k: summary[("MNIST", k)]["auroc_entropy"] for k in KINDS}
        order = sorted(KINDS, key=lambda k: -au[k]["mean"])
        others = [k for k in order if k != "bbb"]
        n = len(summary[("MNIST", "bbb")]["seeds"])
        lead = [b - d for b, d in zip(au["bbb"]["per_seed"], au["mc_dropout"]["per_seed"])]
        ece = {k: summary[("MNIST", k)]["ece"]["mean"] for k in KINDS}
        err = {k: summary[("MNIST", k)]["test_error"]["mean"] for k in KINDS}
        best_err = min(KINDS, key=lambda k: err[k])
        out.append(
            f"**What the table shows** (version 1: descriptive, {n} seed{'s' if n != 1 else ''}, "
            "no declared test). "
            f"Trained on MNIST, {KIND_LABELS[order[0]]} has the highest AUROC of the entropy on "
            f"Fashion-MNIST: BBB {ms('MNIST', 'bbb', 'auroc_entropy')}, against "
            + ", ".join(f"{ms('MNIST', k, 'auroc_entropy')} for {KIND_LABELS[k]}"
                        for k in others) + ". "
            + (f"BBB is ahead of MC dropout on every seed, by {min(lead):.2f}–{max(lead):.2f}. "
               if min(lead) > 0 else
               f"BBB's lead over MC dropout ranges over {min(lead):+.2f}..{max(lead):+.2f}. ")
            + f"Its ECE ({ece['bbb']:.4f}) is "
            + ("the highest" if ece["bbb"] == max(ece.values()) else
               "the lowest" if ece["bbb"] == min(ece.values()) else "neither the highest nor "
               "the lowest")
            + f" of the four; the {KIND_LABELS[min(KINDS, key=lambda k: ece[k])]}'s "
            f"({min(ece.values()):.4f}) the lowest. {KIND_LABELS[best_err]} has the lowest test "
            f"error ({ms('MNIST', best_err, 'test_error', 100, 2, ' %')}"
            + ("" if best_err == "bbb" else
               f" against BBB's {ms('MNIST', 'bbb', 'test_error', 100, 2, ' %')}") + ").")
    if all(("FashionMNIST", k) in summary for k in KINDS):
        au = {k: summary[("FashionMNIST", k)]["auroc_entropy"]["mean"] for k in KINDS}
        ece = {k: summary[("FashionMNIST", k)]["ece"]["mean"] for k in KINDS}
        n = len(summary[("FashionMNIST", "bbb")]["seeds"])
        out.append(
            f"Trained on Fashion-MNIST ({n} seed{'s' if n > 1 else ''}, so no ordering is "
            f"established) {KIND_LABELS[max(KINDS, key=lambda k: au[k])]} has the highest AUROC "
            f"and {KIND_LABELS[min(KINDS, key=lambda k: ece[k])]} the lowest ECE "
            f"({min(ece.values()):.4f}).")
    if alt_rows:
        r = {x["method"]: x for x in alt_rows}
        if "map" in r and "ensemble" in r:
            out.append(
                "\n\n**Read this against notebook 06.** Part of BBB's lead is the baselines' "
                "search space: searched with weight decay and trained longer, the same single "
                f"network reaches an AUROC of {r['map']['auroc_entropy']['mean']:.3f} and an "
                f"ensemble of five of them {r['ensemble']['auroc_entropy']['mean']:.3f} "
                "([notebook 06](06_alternatives.ipynb), version 1).")
    return " ".join(out)


SEARCH_LABELS = {"deterministic": "the single network", "mc_dropout": "MC dropout", "bbb": "BBB"}
SWEEP_DATA = {"mnist": "MNIST", "fashionmnist": "Fashion-MNIST"}  # sweep names' suffixes


def search_words(sweeps):
    """What the searches chose, in words read from the sweep records ``sweeps`` (name ->
    record, as ``helpers.sweep.ensure_sweeps`` returns them): each method's epochs per data set,
    which method reached the lowest validation NLL, and how far ASHA let the warm-started
    trials run."""
    by_data = {}
    for name, rec in sweeps.items():
        kind, data = name.rsplit("_", 1)
        by_data.setdefault(data, {})[kind] = rec
    cap = max(r["config"]["max_epochs"] for r in sweeps.values())
    parts, warm = [], []
    for data, recs in by_data.items():
        chosen = {k: r["metrics"]["chosen"] for k, r in recs.items()}
        best = min(chosen, key=lambda k: chosen[k]["val"])
        parts.append(f"on {SWEEP_DATA.get(data, data)}, " + ", ".join(
            f"{SEARCH_LABELS.get(k, k)} {c['epochs']}" for k, c in chosen.items())
            + f" epochs (lowest validation NLL: {SEARCH_LABELS.get(best, best)})")
        for k, r in recs.items():
            trials = [t for t in r["metrics"]["trials"] if t["config"].get("init_from")]
            if trials:
                rung = (r["config"].get("scheduler") or {}).get("grace_period")
                cut = sum(t["epochs_run"] == rung for t in trials)
                full = sum(t["epochs_run"] == r["config"]["max_epochs"] for t in trials)
                warm.append(f"{cut} of {len(trials)} on {SWEEP_DATA.get(data, data)}"
                            + (f" ({full} ran all {r['config']['max_epochs']} epochs)"
                               if full else ""))
    text = (f"**What the searches chose.** Scored by validation NLL, with a cap of {cap} "
            "epochs: " + "; ".join(parts) + ". Every trial's curve is in "
            "`results/05_uncertainty/sweep/`.")
    if warm:
        text += (" Of BBB's trials that started from a trained SGD network, ASHA stopped at its "
                 "first rung " + " and ".join(warm) + ".")
    return text + (" The ensemble's members use the single network's choice.")


# ---- notebook 05: the readings of its figures and tables, rendered from the records ----
# Each returns Markdown whose numbers and wording (orderings, "every method" / "all but ...")
# come from the records it is given; nothing here states an expected value.

def _ms(entry, scale=1.0, digits=3, unit=""):
    """'mean ± sd' of a ``summarise`` entry (no sd for one seed)."""
    sd = "" if entry["sd"] is None else f" ± {scale * entry['sd']:.{digits}f}"
    return f"{scale * entry['mean']:.{digits}f}{sd}{unit}"


def _n_seeds(n):
    return f"{n} seed{'s' if n != 1 else ''}"


def _join(items, sep=", "):
    """'a', 'a and b', 'a, b and c' (``sep`` between all but the last two)."""
    items = list(items)
    return items[0] if len(items) == 1 else sep.join(items[:-1]) + " and " + items[-1]


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
    """'every method' when ``exceptions`` is empty, else 'all but X and Y' (``names``: the
    labels compared, for 'no method' when all are exceptions)."""
    if not exceptions:
        return "every method"
    if len(exceptions) == len(names):
        return "no method"
    return "all but " + _join(exceptions)


def ensemble_text(summary, sweeps, ensemble_size, data="MNIST"):
    """Section 3: where the deep ensemble ranks on the AUROC of the entropy (means over the
    seeds of ``summary``), its mutual information's AUROC, and how long its members trained
    (the single network's choice in ``sweeps``)."""
    au = {k: summary[(data, k)]["auroc_entropy"] for k in KINDS}
    ens = au["ensemble"]
    n = len(summary[(data, "ensemble")]["seeds"])
    below = [k for k in KINDS if k != "ensemble" and au[k]["mean"] > ens["mean"]]
    above = [k for k in KINDS if k != "ensemble" and au[k]["mean"] <= ens["mean"]]
    text = (f"**The deep ensemble** (trained on {DATA_LABELS[data]}, version 1, {_n_seeds(n)}): "
            f"its AUROC of the entropy, {_ms(ens)}, ranks {ORDINALS[len(below)]} of the "
            f"{len(KINDS)} methods")
    parts = []
    if below:
        parts.append("below " + _join(f"{NOUNS[k]}'s {au[k]['mean']:.3f}" for k in below))
    if above:
        parts.append("above " + _join(f"{NOUNS[k]}'s {au[k]['mean']:.3f}" for k in above))
    text += " (" + "; ".join(parts) + ")."
    mi = summary[(data, "ensemble")]["auroc_mi"]
    if mi is not None:
        text += (f" Scored by the mutual information, the disagreement between its members, it "
                 f"reaches {_ms(mi)}.")
    sweep = sweeps.get(sweep_name("ensemble", data))
    if sweep is not None:
        epochs, cap = sweep["metrics"]["chosen"]["epochs"], sweep["config"]["max_epochs"]
        text += (f" Its {ensemble_size} members are the single network's choice, trained "
                 + (f"{epochs} of the {cap} epochs allowed: short trainings, stopped early by "
                    "the validation-NLL rule." if epochs < cap else
                    f"all {cap} epochs allowed."))
    return text


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
    (``rows``: ood.json's rows; ``bins``: its entropy_bins): the share of images in the first
    bin (entropy near 0) in and out of distribution, the share at high entropy, and, with both
    training sets, whether the in-domain histograms are wider and the AUROC lower after
    training on Fashion-MNIST (compared with every MNIST-trained seed)."""
    lo, hi, n = bins
    edge0 = lo + (hi - lo) / n
    datas = [d for d in OTHER if any(r["data"] == d and r["seed"] == seed for r in rows)]
    share = {(d, k): _entropy_shares(_row(rows, d, k, seed), bins) for d in datas for k in KINDS}
    out = []
    for d in datas[:1]:
        ins = {k: share[(d, k)][0] for k in KINDS}
        out0 = sorted(KINDS, key=lambda k: -share[(d, k)][1])
        high = sorted(KINDS, key=lambda k: -share[(d, k)][2])
        lo_k, hi_k = min(KINDS, key=ins.get), max(KINDS, key=ins.get)
        edge = share[(d, KINDS[0])][3]
        most = [k for k in KINDS if ins[k] > 0.5]
        out.append(
            f"**What the histograms show** (seed {seed}, counts stored in ood.json). Trained on "
            f"{DATA_LABELS[d]}, "
            + (f"{_pct(ins[lo_k])} (every method)" if _pct(ins[lo_k]) == _pct(ins[hi_k]) else
               f"{_pct(ins[lo_k])} ({KIND_LABELS[lo_k]}) to {_pct(ins[hi_k])} "
               f"({KIND_LABELS[hi_k]})")
            + " of the in-domain test images fall in the first bin (entropy "
            f"below {edge0:.3f} nats): "
            + ("every method is" if len(most) == len(KINDS) else
               _all_but([KIND_LABELS[k] for k in KINDS],
                        [KIND_LABELS[k] for k in KINDS if k not in most]) + " is")
            + " almost certain on most in-domain images. On the "
            f"{DATA_LABELS[OTHER[d]]} images that first bin (the orange bar at entropy 0) holds "
            + _join(f"{_pct(share[(d, k)][1])} for {NOUNS[k]}" for k in out0)
            + (f": {NOUNS[out0[0]]} classifies the most of them as some "
               f"{'digit' if d == 'MNIST' else 'garment'} with near certainty, "
               f"{NOUNS[out0[-1]]} the fewest"
               if _pct(share[(d, out0[0])][1]) != _pct(share[(d, out0[-1])][1]) else "")
            + f". Above {edge:.2f} nats lie "
            + _join(f"{_pct(share[(d, k)][2])} ({KIND_LABELS[k]})" for k in high) + ".")
    if len(datas) > 1:
        a, b = datas[0], datas[1]
        names = [KIND_LABELS[k] for k in KINDS]
        not_wider = [k for k in KINDS if share[(b, k)][0] >= share[(a, k)][0]]
        n_b = len({r["seed"] for r in rows if r["data"] == b})
        seeds_a = sorted({r["seed"] for r in rows if r["data"] == a})
        au_a = {k: [_row(rows, a, k, s)["auroc_entropy"] for s in seeds_a] for k in KINDS}
        au_b = {k: _row(rows, b, k, seed)["auroc_entropy"] for k in KINDS}
        not_lower = [k for k in KINDS if au_b[k] >= min(au_a[k])]
        out.append(
            f"Trained on {DATA_LABELS[b]} ({_n_seeds(n_b)}), the in-domain histograms are "
            f"wider for {_all_but(names, [NOUNS[k] for k in not_wider])}: the first bin holds "
            + _join(f"{_pct(share[(b, k)][0])}"
                    + (f" of the in-domain images against {_pct(share[(a, k)][0])} trained on "
                       f"{DATA_LABELS[a]}" if i == 0 else f" against {_pct(share[(a, k)][0])}")
                    + f" ({KIND_LABELS[k]})" for i, k in enumerate(KINDS))
            + f". The AUROC trained on {DATA_LABELS[b]} (seed {seed}) is below the same "
            "method's trained on "
            f"{DATA_LABELS[a]}, on each of its {_n_seeds(len(seeds_a))}, for "
            f"{_all_but(names, [NOUNS[k] for k in not_lower])}"
            + ("" if not not_lower else " (" + "; ".join(
                f"{au_b[k]:.3f}, against " + _join(f"{v:.3f}" for v in au_a[k])
                for k in not_lower) + ")")
            + (": not every method separates the two sets less well." if not_lower else
               ": every method separates the two sets less well."))
    return " ".join(out)


def examples_text(row, in_labels, out_labels, in_name, out_name, classes=FASHION_CLASSES):
    """Section 5: per example image, whether BBB's weight samples agree on its class (how many
    classes their top choices span) and the range over samples of the probability of the mean's
    class; ``in_labels`` / ``out_labels``: the true labels (names) of the stored images."""
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
        name = f"class {c}, \"{classes[c]}\""
        who = (f"all {S} samples pick {name}" if len(tops) == 1 else
               f"the samples' top choices span {len(tops)} classes "
               f"({', '.join(str(t) for t in tops)}; mean: {name})")
        return f"the {label}: {who}, p({classes[c]}) from {lo:.2f} to {hi:.2f}"

    texts = []
    for name, probs, labels in ((f"{in_name} images (in domain)", ex["in_probs"], in_labels),
                                (f"{out_name} images (out of distribution)", ex["out_probs"],
                                 out_labels)):
        items, S = reading(probs, labels)
        split = sum(len(t[2]) > 1 for t in items)
        verdict = ("every weight sample picks the same class on every image" if split == 0 else
                   f"the samples disagree on {split} of the {len(items)} images")
        texts.append(f"On the {name} {verdict} ("
                     + "; ".join(clause(*t, S) for t in items) + ").")
    return "**What the samples show.** " + " ".join(texts)


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
    text = (f"**What the diagrams show** (version 1's networks, seed {seed}, trained on "
            f"{DATA_LABELS[data]}; test errors {100 * min(err):.2f}–{100 * max(err):.2f} %). "
            f"{_pct_range(top.values())} of each method's "
            f"predictions fall in the top bin (confidence above {edge:.2f}), where accuracy and "
            f"confidence differ by at most {gap_top:.3f} for every method. The bins below "
            f"{low} hold {_pct_range(below.values())} of the images "
            f"(at most {most_below} in one bin; the diagram does not show counts), so their "
            "points rest on few images. ")
    side = "under" if under > over else "over"
    text += (f"BBB's accuracy is above its confidence in {len(ups)} of its {len(bins)} occupied "
             "bins" + (f" (every one from confidence {min(run):.2f} up)"
                       if 1 < len(run) < len(bins) else "")
             + f": weighted by images, it is {side}-confident"
             + (", right more often than it claims" if side == "under" else
                ", right less often than it claims")
             + f"; the {side}-confident bins make {_share(max(under, over), under + over)} "
             f"of its binned calibration error. Its ECE at this seed, {ece['bbb']:.4f}, is "
             + ("the highest" if rank == 1 else "the lowest" if rank == len(KINDS) else
                "neither the highest nor the lowest") + f" of the {len(KINDS)}. For the others "
             "the under-confident bins make " + _join(
                 f"{_share(parts[k][0], parts[k][0] + parts[k][1])} ({KIND_LABELS[k]})"
                 for k in KINDS if k != "bbb") + " of theirs.")
    return text


def _share(part, whole):
    return "—" if whole == 0 else _pct(part / whole, 0)


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


def prior_table_text(acc, n_test, steps, n_seeds=1, reference="Normal", chance=0.5):
    """Section 7: the reading of the 2-D priors' accuracy table (``acc``: {(data set, prior):
    test accuracy on ``n_test`` points}): per data set which priors fit about equally well,
    which fall behind, which stay at chance, and whether any prior beats ``reference`` beyond
    the test set's noise."""
    datas = list(dict.fromkeys(d for d, _ in acc))
    text = [f"**What the table shows** ({_n_seeds(n_seeds)}, {steps:,} steps, {n_test:,} test "
            "points per network; two accuracies count as different when they lie more than two "
            "binomial standard errors of their difference apart)."]
    gains, collapsed = [], False
    for d in datas:
        a = {p: v for (dd, p), v in acc.items() if dd == d}
        equal, behind, at_chance = _accuracy_groups(a, n_test, chance)
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
        text.append(f"On the {d} " + "; ".join(s) + ".")
        if reference in a:
            others = {p: v for p, v in a.items() if p != reference}
            top = max(others, key=others.get)
            gain = others[top] - a[reference]
            sig = [p for p in others if others[p] > a[reference] and reference not in
                   _accuracy_groups({reference: a[reference], p: others[p]}, n_test, chance)[0]]
            gains.append((d, top, gain, sig, a[reference]))
    if collapsed:
        text.append("A network at chance may have collapsed onto its prior, the KL term "
                    f"outweighing the likelihood; with {_n_seeds(n_seeds)} and {steps:,} steps "
                    "this cannot be told from an optimisation failure (exercise 3).")
    if gains:
        beat = [(d, sig) for d, _, _, sig, _ in gains if sig]
        text.append(
            (f"No prior beats the plain {reference} one beyond that noise: " if not beat else
             "Beyond that noise, " + "; ".join(f"on the {d} {_join(f'*{x}*' for x in sig)} "
                                               f"beat{'s' if len(sig) == 1 else ''} the plain "
                                               f"{reference} prior" for d, sig in beat) + "; ")
            + "the largest gain over it is " + _join(
                f"{g:+.3f} on the {d} (*{top}*, against {ref:.3f})" for d, top, g, _, ref in gains)
            + ".")
    return " ".join(text)


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


def weights_text(draws, acc=None, n_test=None, near=0.25, far=4.0, similar=1.5, chance=0.5):
    """Section 7: the reading of the last-layer weight densities from the draws themselves: per
    data set the standard deviations of the draws (a "similar spread" when the largest is within
    ``similar`` times the smallest), the share beyond ±``far``, and for the networks at chance
    in ``acc`` (on ``n_test`` points; see ``prior_table_text``) the share within ±``near``."""
    datas = list(dict.fromkeys(d for d, _ in draws))
    out = []
    for ds in datas:
        w = {p: v for (d, p), v in draws.items() if d == ds}
        sd = {p: float(v.std()) for p, v in w.items()}
        lo, hi = min(sd, key=sd.get), max(sd, key=sd.get)
        tail = {p: float((v.abs() > far).float().mean()) for p, v in w.items()}
        order = sorted(tail, key=lambda p: -tail[p])
        s = (f"On the {ds} the draws' standard deviations run from {sd[lo]:.2f} (*{lo}*) to "
             f"{sd[hi]:.2f} (*{hi}*): "
             + ("a similar spread" if sd[hi] <= similar * sd[lo] else
                f"the widest is {sd[hi] / sd[lo]:.1f} times the narrowest")
             + f". Beyond ±{far:g} lie " + ", ".join(f"{_pct(tail[p])} (*{p}*)" for p in order)
             + " of the draws.")
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
    return "**What the densities show.** " + " ".join(out)


def conv_error_text(per_image):
    """Section 8: the reading of the expected-error figure from its per-image numbers
    (``per_image_from_record``): how many test images no sample gets wrong, how many split the
    samples, how many every sample gets wrong, and the median std of each group."""
    ee, sd = per_image["expected_error"], per_image["std"]
    groups = {"no sample gets wrong": ee == 0, "split the samples": (ee > 0) & (ee < 1),
              "every sample gets wrong": ee == 1}
    med = {g: float(sd[m].median()) if m.any() else None for g, m in groups.items()}
    text = (f"**What the figure shows.** Of the {len(ee):,} test images, " + _join(
        f"{int(m.sum()):,} {g}" + (f" (median std {med[g]:.3f})" if med[g] is not None else "")
        for g, m in groups.items()) + ".")
    split, wrong = med["split the samples"], med["every sample gets wrong"]
    if split is not None and wrong is not None:
        split, wrong = round(split, 3), round(wrong, 3)  # as printed
        text += (" The images every sample gets wrong have "
                 + ("a smaller median std than" if wrong < split else
                    "a larger median std than" if wrong > split else "the same median std as")
                 + " those that split the samples"
                 + (": the weight uncertainty does not flag them, they are confidently wrong."
                    if wrong < split else ": the weight uncertainty flags them as well."
                    if wrong > split else ": the std does not tell the two kinds apart."))
    return text


V2_AS_V1 = {"map": "deterministic", "mc_dropout": "mc_dropout", "ensemble": "ensemble"}


def v1_takeaway(summary, rows, v2=None, seed=0, data="MNIST"):
    """The takeaway on version 1's table (Markdown bullet): where BBB stood on the mean AUROC and
    ECE (descriptive, no declared test), on which side of the diagonal its calibration error lay
    at ``seed``, and how many of those pairwise orderings version 2's verdicts (``v2``:
    results/05_uncertainty/v2/summary.json) uphold."""
    from .alternatives_report import LABELS, _rival
    n = len(summary[(data, "bbb")]["seeds"])
    mean = {m: {k: summary[(data, k)][m]["mean"] for k in KINDS} for m in ("auroc_entropy", "ece")}
    au, ece = mean["auroc_entropy"], mean["ece"]
    rivals = [k for k in KINDS if k != "bbb"]
    best_rival = max(rivals, key=au.get)
    text = (f"- Version 1's table (section 3, {_n_seeds(n)}, no declared test) had BBB "
            + (f"flagging unfamiliar images best (mean AUROC {au['bbb']:.3f}; next "
               f"{KIND_LABELS[best_rival]}, {au[best_rival]:.3f})" if au["bbb"] > au[best_rival]
               else f"behind {KIND_LABELS[best_rival]} on the mean AUROC ({au['bbb']:.3f} "
                    f"against {au[best_rival]:.3f})"))
    rank = 1 + sum(ece[k] > ece["bbb"] for k in rivals)
    text += (" with " + ("the highest" if rank == 1 else "the lowest" if rank == len(KINDS)
                         else "neither the highest nor the lowest")
             + f" mean ECE ({ece['bbb']:.4f})")
    under, over, _ = _reliability_parts(_row(rows, data, "bbb", seed)["reliability"])
    text += f", {'under' if under > over else 'over'}-confident on seed {seed} (section 6)"
    if v2 is None:
        return text + "; version 2 has no final run yet."
    if v2["interim"]:
        return text + "; version 2's runs are not complete, so it does not re-ask them yet."
    parts = []
    for family, claims in v2["families"].items():
        upheld, other = [], []
        for claim, res in claims.items():
            rival, metric = _rival(claim), claim.split(" on ")[1]
            v1_kind = V2_AS_V1.get(rival)
            if v1_kind is None or metric not in mean:
                continue
            sign = 1 if metric.startswith("auroc") else -1
            v1_better = sign * (mean[metric]["bbb"] - mean[metric][v1_kind]) > 0
            v2_word = res["verdict"]
            ok = (v1_better and v2_word == "holds") or (not v1_better and v2_word == "reversed")
            upheld.append(ok)
            found = {"holds": "BBB better", "reversed": "BBB worse"}.get(v2_word, v2_word)
            other.append(f"{LABELS.get(rival, rival)}: {found}")
        if other:
            parts.append(f"{sum(upheld)} of {len(upheld)} on {family} ({'; '.join(other)})")
    return (text + f". Version 2 (the bullet above: equal searches, {len(v2['seeds'])} paired "
            "seeds, its single network with weight decay) upholds " + _join(parts, sep="; ")
            + " of these orderings of BBB against each rival.")


def search_takeaway(sweeps, summary, ensemble_size, alt_rec=None, data="MNIST"):
    """The takeaway on the search space (Markdown bullet): the epochs the validation-NLL rule
    chose for the single network without weight decay (``sweeps``), the deep ensemble's AUROC
    built from that choice (``summary``), and, with notebook 06's summary record ``alt_rec``,
    its single network's chosen epochs and its ensemble's AUROC."""
    ens = summary[(data, "ensemble")]["auroc_entropy"]
    n = len(summary[(data, "ensemble")]["seeds"])
    chosen = {d: sweeps[sweep_name("ensemble", d)] for d in OTHER
              if sweep_name("ensemble", d) in sweeps}
    rec = chosen.get(data)
    epochs, cap = ((rec["metrics"]["chosen"]["epochs"], rec["config"]["max_epochs"]) if rec
                   else (None, None))
    text = ("choosing by validation NLL without weight decay "
            + (f"stopped the single network at {epochs} of the {cap} epochs allowed on "
               f"{DATA_LABELS[data]}" if rec and epochs < cap else
               f"let the single network train all {cap} epochs allowed on {DATA_LABELS[data]}"
               if rec else "chose the single network's epochs")
            + "".join(f" ({r['metrics']['chosen']['epochs']} on {DATA_LABELS[d]})"
                      for d, r in chosen.items() if d != data)
            + f", and the deep ensemble of {ensemble_size} such networks reaches an AUROC of "
            f"{_ms(ens)} here ({_n_seeds(n)})")
    alt = {r["method"]: r for r in (alt_rec or {}).get("metrics", {}).get("rows", [])}
    if "ensemble" not in alt:
        return "- The search space: " + text + "; notebook 06 trains MAP networks longer."
    a = alt["ensemble"]["auroc_entropy"]["mean"]
    epochs = (alt_rec.get("config", {}).get("chosen", {}).get("map") or {}).get("epochs")
    lead = ("The search space matters" if a > ens["mean"] else
            "The search space did not help the ensemble here")
    return (f"- {lead}: " + text + "; notebook 06's single network, searched with weight decay "
            "by the same rule, " + (f"trains {epochs} epochs and " if epochs else "")
            + f"its ensemble reaches {a:.3f} ({_n_seeds(len(alt['ensemble']['seeds']))}, "
            "version 1, descriptive).")
