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
