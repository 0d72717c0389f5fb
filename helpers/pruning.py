"""Weight pruning by signal-to-noise ratio (section 5.1, Table 2 and Figure 4 of the paper).

The SNR of a weight is |mu| / sigma (in dB: 10 log10(|mu| / sigma)). Pruning removes (sets to zero)
the given fraction of weights with the lowest score, ranked over all layers together, and predicts
with the posterior means of the rest. Biases are kept.
"""
import copy
import io
import time

import torch

from .layers import BayesLinear
from .train import evaluate_error


def weight_layers(model):
    """Return the weight layers of ``model`` in order: its BayesLinear layers, or the nn.Linear
    layers of a deterministic network (which has no sigma: only 'magnitude' and 'random' rank
    its weights)."""
    bayes = [m for m in model.modules() if isinstance(m, BayesLinear)]
    return bayes or [m for m in model.modules() if isinstance(m, torch.nn.Linear)]


def _means(layer):
    """The weights that prune: a BayesLinear layer's posterior means, an nn.Linear's weights."""
    return layer.weight_mu if isinstance(layer, BayesLinear) else layer.weight


def scores(model, kind="snr", generator=None):
    """Return one flat tensor of per-weight scores over all layers: 'snr' (|mu|/sigma),
    'magnitude' (|mu|) or 'random'."""
    parts = []
    for layer in weight_layers(model):
        mu = _means(layer).detach()
        if kind == "snr":
            if not isinstance(layer, BayesLinear):
                raise ValueError("a deterministic network has no posterior width: rank its "
                                 "weights by 'magnitude' (or 'random'), not 'snr'")
            parts.append((mu.abs() / layer.weight_sigma.detach()).flatten())
        elif kind == "magnitude":
            parts.append(mu.abs().flatten())
        elif kind == "random":
            parts.append(torch.rand(mu.numel(), generator=generator).to(mu.device))
        else:
            raise ValueError(f"unknown score {kind!r}; choose 'snr', 'magnitude' or 'random'")
    return torch.cat(parts)


def snr_db(model):
    """Return the SNR of every weight in decibels, 10 log10(|mu| / sigma)."""
    return 10 * torch.log10(scores(model, "snr").clamp_min(1e-30))


def prune(model, fraction, kind="snr", generator=None):
    """Return a copy of ``model`` whose lowest-scoring ``fraction`` of weights (over all layers
    together; biases kept) is set to zero (a BayesLinear in posterior-mean mode: sampling off),
    and the number of weights kept."""
    if not 0.0 <= fraction <= 1.0:
        raise ValueError(f"fraction must be in [0, 1], got {fraction}")
    s = scores(model, kind, generator)
    n_remove = int(round(fraction * s.numel()))
    keep = torch.ones_like(s, dtype=torch.bool)
    if n_remove > 0:
        keep[torch.argsort(s, stable=True)[:n_remove]] = False
    pruned = copy.deepcopy(model)
    offset = 0
    with torch.no_grad():
        for layer in weight_layers(pruned):
            w = _means(layer)
            w.mul_(keep[offset:offset + w.numel()].view_as(w))
            offset += w.numel()
    for layer in weight_layers(pruned):
        if isinstance(layer, BayesLinear):
            layer.sample = False
    return pruned, int(keep.sum())


# the error rate (fraction) of the posterior-mean weights: the one training already uses
test_error = evaluate_error


def to_sparse(model):
    """Return a list of (CSR weight with int32 indices, bias) pairs: the pruned posterior means."""
    import warnings
    out = []
    with warnings.catch_warnings():  # "sparse CSR support is in beta"
        warnings.simplefilter("ignore")
        for layer in weight_layers(model):
            csr = layer.weight_mu.detach().to_sparse_csr()
            csr = torch.sparse_csr_tensor(csr.crow_indices().int(), csr.col_indices().int(),
                                          csr.values(), csr.shape)
            out.append((csr, layer.bias_mu.detach().clone()))
    return out


def sparse_forward(layers, x):
    """Forward pass of the ReLU MLP stored by ``to_sparse`` (sparse matrix times dense input)."""
    h = x.T
    for i, (w, b) in enumerate(layers):
        h = torch.sparse.mm(w, h) + b.unsqueeze(1)
        if i < len(layers) - 1:
            h = torch.relu(h)
    return h.T


def storage_bytes(obj):
    """Return the size in bytes of ``obj`` saved with torch.save."""
    buf = io.BytesIO()
    torch.save(obj, buf)
    return buf.getbuffer().nbytes


def time_call(fn, repeats=5):
    """Return the median wall time of ``fn()`` in seconds."""
    fn()
    ts = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t0)
    return sorted(ts)[len(ts) // 2]


# ---- notebook 04: prune the networks of Table 1, store what the figures and tables need ----

FRACTIONS = (0, 50, 75, 95, 98, 99, 100)
WEIGHTING_LABELS = {"uniform": "1/M KL weights (eq. 8)", "blundell": "π_i KL weights (eq. 9)"}
PAPER_TABLE2 = {0: 0.0124, 50: 0.0124, 75: 0.0124, 95: 0.0129, 98: 0.0139}  # 2x1200 network
DB_EDGES = (-40.0, 30.0, 280)  # SNR in dB: histogram range and bins
KINDS = ("snr", "magnitude", "random")


def _table_config(table, H, seed, key="bbb_mixture"):
    """Return the RunConfig of Table 1's run of ``key`` at width H and ``seed`` (or None)."""
    import json

    from .classification import RunConfig
    from .utils import results_dir
    for row in table["metrics"]["rows"]:
        if row["key"] == key and row["H"] == H:
            for name, s in zip(row["runs"], row["seeds"]):
                if s == seed:
                    rec = json.loads((results_dir() / "01_mnist_classification" / "runs"
                                      / f"{name}.json").read_text())
                    return RunConfig.from_dict(rec["config"])
    return None


def _model(cfg, data, train):
    """Load the trained network of ``cfg`` from notebook 01's checkpoints, or train it."""
    from .classification import load_model, run
    try:
        return load_model(cfg, device=data.x_train.device)
    except FileNotFoundError:
        if not train:
            raise
        return run(cfg, data, eval_samples=2, desc=f"{cfg.method} {cfg.H} (for pruning)")[0]


def analyse(model, data, seed=0):
    """Return the pruning analysis of one network: SNR histogram and cut-offs, test error after
    removing each fraction by each ranking, and the paired SNR-vs-|mu| tests."""
    from .metrics import mcnemar
    from .train import misclassified
    db = snr_db(model).cpu()
    lo, hi, n = DB_EDGES
    sample = db[torch.randperm(len(db), generator=torch.Generator().manual_seed(seed))[:1_000_000]]
    out = {"n_weights": len(db), "snr_hist": torch.histc(db, n, lo, hi).long().tolist(),
           "snr_outside": int(((db < lo) | (db > hi)).sum()),
           "cuts_db": {str(f): torch.quantile(sample, f / 100).item() for f in (50, 75, 95, 98)},
           "error_at": {}, "weights_kept": {}, "mcnemar_snr_vs_magnitude": {}}
    gen = torch.Generator().manual_seed(seed)
    for kind in KINDS:
        out["error_at"][kind] = {}
        wrong = {}
        for f in FRACTIONS:
            pruned, kept = prune(model, f / 100, kind, generator=gen)
            wrong[f] = misclassified(pruned, data.x_test, data.y_test).cpu()
            out["error_at"][kind][str(f)] = wrong[f].float().mean().item()
            out["weights_kept"][str(f)] = kept
        if kind == "snr":
            snr_wrong = wrong
        elif kind == "magnitude":
            for f in FRACTIONS:
                a, b, p = mcnemar(snr_wrong[f], wrong[f])
                out["mcnemar_snr_vs_magnitude"][str(f)] = {"only_snr_wrong": a,
                                                           "only_magnitude_wrong": b, "p": p}
    return out


def error_after_pruning(model, data, kinds=("magnitude", "random"), seed=0):
    """Return {n_weights, error_at: {kind: {fraction: test error}}, weights_kept} of ``model``
    pruned by each ranking in ``kinds`` at every fraction of FRACTIONS (a deterministic network:
    'magnitude' and 'random'; the random ranking drawn from ``seed``)."""
    gen = torch.Generator().manual_seed(seed)
    out = {"n_weights": sum(_means(layer).numel() for layer in weight_layers(model)),
           "error_at": {}, "weights_kept": {}}
    for kind in kinds:
        out["error_at"][kind] = {}
        for f in FRACTIONS:
            pruned, kept = prune(model, f / 100, kind, generator=gen)
            out["error_at"][kind][str(f)] = test_error(pruned, data.x_test, data.y_test)
            out["weights_kept"][str(f)] = kept
    return out


def storage_and_timing(model, x, repeats=5):
    """Bytes stored and CPU prediction time of the dense and the sparse (CSR) pruned network."""
    rows = []
    x = x.cpu()
    for f in (0, 95, 98):
        pruned = prune(model, f / 100, "snr")[0].cpu()
        dense = [(layer.weight_mu.detach(), layer.bias_mu.detach()) for layer in weight_layers(pruned)]
        sparse = to_sparse(pruned)
        with torch.no_grad():
            t_dense = time_call(lambda: pruned(x), repeats)
            t_sparse = time_call(lambda: sparse_forward(sparse, x), repeats)
        rows.append({"removed": f, "dense_bytes": storage_bytes(dense),
                     "sparse_bytes": storage_bytes(sparse), "dense_s": t_dense, "sparse_s": t_sparse})
    return rows


def build(profile, train=True, progress_fn=print, device="cpu"):
    """Prune every network ``profile`` names (Table 1's BBB scale-mixture runs: the seeds of the
    main width and of ``compare_H``, plus the same recipe with the other KL weighting);
    write results/04_pruning/snr.json and return it. Without ``train`` a network whose
    checkpoint is missing is skipped (``metrics.complete`` says so); None when none is there."""
    import json
    from dataclasses import replace

    from .data import load_mnist
    from .utils import load_results, machine_info, results_dir, save_results
    path = results_dir() / "04_pruning" / "snr.json"
    try:
        table = load_results("01_mnist_classification", "table1")
    except FileNotFoundError:
        if progress_fn:
            progress_fn("notebook 01's Table 1 (results/01_mnist_classification/table1.json) is "
                        "missing: `make table1` trains it")
        return None
    jobs = list(dict.fromkeys([(profile.H, s) for s in profile.seeds]
                              + [(profile.compare_H, s) for s in profile.compare_seeds]))
    if path.exists():  # reuse it while it prunes the networks Table 1 reports now
        rec = json.loads(path.read_text())
        current = [getattr(_table_config(table, H, s), "name", None) for H, s in jobs]
        if (rec.get("profile") == profile.profile and "models" in rec["metrics"]
                and rec["metrics"].get("complete")
                and [m["name"] for m in rec["metrics"]["models"]] == current):
            return rec
    data = load_mnist(device=device, n_train=profile.n_train, n_test=profile.n_eval)
    t0 = time.perf_counter()
    models, timing = [], None
    for H, seed in jobs:
        cfg = _table_config(table, H, seed)
        if cfg is None:
            if progress_fn:
                progress_fn(f"Table 1 has no 2x{H} seed {seed}: skipped")
            continue
        try:
            model = _model(cfg, data, train)
        except FileNotFoundError:
            if progress_fn:
                progress_fn(f"no checkpoint of {cfg.name} (2x{H} seed {seed}): skipped")
            continue
        if progress_fn:
            progress_fn(f"pruning {cfg.name}")
        models.append({"H": H, "seed": seed, "name": cfg.name,
                       "kl_weighting": cfg.kl_weighting, **analyse(model, data, seed)})
        if timing is None:
            timing = {"model": cfg.name, "rows": storage_and_timing(model, data.x_test,
                                                                  profile.timing_repeats)}
    if not models:
        return None
    base = _table_config(table, profile.compare_H, 0)
    alt = None
    if base is not None:
        other = {"uniform": "blundell", "blundell": "uniform"}[base.kl_weighting]
        alt_cfg = replace(base, kl_weighting=other)
        try:
            alt_model = _model(alt_cfg, data, train)
        except FileNotFoundError:
            alt_model = None
            if progress_fn:
                progress_fn(f"no checkpoint of {alt_cfg.name} (the other KL weighting): skipped")
        if alt_model is not None:
            if progress_fn:
                progress_fn(f"pruning {alt_cfg.name} (the other KL weighting)")
            alt = {"H": profile.compare_H, "seed": 0, "name": alt_cfg.name, "kl_weighting": other,
                   **analyse(alt_model, data, 0)}
    complete = (alt is not None and [(m["H"], m["seed"]) for m in models] == jobs)
    save_results("04_pruning", "snr", config={"fractions": list(FRACTIONS),
                                              "db_edges": list(DB_EDGES),
                                              "paper_table2": PAPER_TABLE2},
                 metrics={"models": models, "other_kl_weighting": alt,
                          "storage_and_timing": timing, "complete": complete},
                 profile=profile.profile, seed=0, wall_s=time.perf_counter() - t0,
                 extra={"note": "pruning uses the test set only to report the error of each "
                                "fraction and ranking; nothing is chosen from it",
                        "machine_timing": machine_info(device)})
    return json.loads(path.read_text())


def retrain_seconds(rec):
    """Return (seconds, missing): the training wall time that rebuilding ``rec``'s networks from
    scratch took, summed from their run records in results/01_mnist_classification/runs/ (each
    network and the run its means start from, counted once), and the names without a record."""
    import json

    from .classification import RunConfig
    from .utils import results_dir
    runs = results_dir() / "01_mnist_classification" / "runs"
    names = [m["name"] for m in rec["metrics"]["models"]]
    alt = rec["metrics"].get("other_kl_weighting")
    names += [alt["name"]] if alt else []
    todo, seen, total, missing = list(names), set(), 0.0, []
    while todo:
        name = todo.pop(0)
        if name in seen:
            continue
        seen.add(name)
        path = runs / f"{name}.json"
        if not path.exists():
            missing.append(name)
            continue
        run = json.loads(path.read_text())
        total += run["metrics"]["train_wall_s"]
        source = RunConfig.from_dict(run["config"]).init_source()
        if source is not None:
            todo.append(source.name)
    return total, missing


def figure4_words(entry):
    """Figure 4 in words, read from a stored analysis: the share of weights with an SNR above
    0 dB (from the histogram; weights outside its range are not counted) and where the
    cut-offs lie."""
    lo, hi, n = DB_EDGES
    width = (hi - lo) / n
    above = sum(c for i, c in enumerate(entry["snr_hist"]) if lo + i * width >= 0.0)
    cuts = entry["cuts_db"]
    words = (f"**What it shows.** Of this network's {entry['n_weights']:,} weights, "
             f"{100 * above / entry['n_weights']:.2f}% have an SNR above 0 dB; the cut-offs "
             "that remove " + ", ".join(f"{f} %" for f in cuts) + " of the weights lie at "
             + ", ".join(f"{c:.1f}" for c in cuts.values()) + " dB")
    below = all(c < 0 for c in cuts.values())
    return words + (", every one of them below 0 dB." if below else ".") + (
        f" ({entry['snr_outside']:,} weights lie outside [{lo:g}, {hi:g}] dB and are not "
        "counted.)" if entry.get("snr_outside") else "")


def figure4(entry, ax_pair=None):
    """The paper's Figure 4 from a stored analysis: density and CDF of the SNR (dB), with the
    cut-offs that remove 50, 75, 95 and 98 % of the weights."""
    import matplotlib.pyplot as plt
    lo, hi, n = DB_EDGES
    width = (hi - lo) / n
    counts = torch.tensor(entry["snr_hist"], dtype=torch.float64)
    edges = torch.linspace(lo, hi, n + 1)
    total = entry["n_weights"]
    cdf = counts.cumsum(0) / total
    fig, axes = plt.subplots(1, 2, figsize=(12, 3.8), constrained_layout=True)
    axes[0].stairs((counts / (total * width)).numpy(), edges.numpy(), fill=True, alpha=0.6)
    axes[0].set(xlabel="signal-to-noise ratio |μ|/σ (dB)", ylabel="density")
    axes[1].plot(edges[1:].numpy(), cdf.numpy())
    axes[1].set(xlabel="signal-to-noise ratio |μ|/σ (dB)", ylabel="cumulative fraction of weights")
    cuts = []
    for f, c in entry["cuts_db"].items():
        for ax in axes:
            ax.axvline(c, color="C3", ls=":", lw=1)
        axes[1].plot([c], [int(f) / 100], "o", color="C3", ms=4)
        cuts.append(f"{f}% removed: below {c:.1f} dB")
    axes[0].text(0.02, 0.97, "red dotted lines, left to right:\n" + "\n".join(cuts),
                 transform=axes[0].transAxes, va="top", fontsize=8, color="C3")
    # the x range where the weights are (0.05 % to 99.95 % of them), not the histogram's bounds
    inside = (cdf > 5e-4) & (cdf < 1 - 5e-4)
    first, last = int(inside.nonzero()[0]), int(inside.nonzero()[-1])
    for ax in axes:
        ax.set_xlim(float(edges[first]) - 2, float(edges[last + 1]) + 2)
    outside = f"; {entry['snr_outside']:,} outside [{lo:g}, {hi:g}] dB not drawn" \
        if entry.get("snr_outside") else ""
    fig.suptitle(f"784-{entry['H']}-{entry['H']}-10, seed {entry['seed']}, "
                 f"{entry['n_weights']:,} weights{outside}")
    return fig


def _by_width(rec, H):
    return [m for m in rec["metrics"]["models"] if m["H"] == H]


def _mean_sd(vals):
    import statistics
    sd = f" ± {100 * statistics.stdev(vals):.2f}" if len(vals) > 1 else ""
    return f"{100 * statistics.fmean(vals):.2f}{sd}%"


def table2_rows(rec, compare_H):
    """Return (header, rows) of Table 2: the paper's 2x1200 network against ours at the main
    width by SNR, |mu| and at random, and at ``compare_H`` by SNR and |mu| (mean ± sd over
    seeds)."""
    H = rec["metrics"]["models"][0]["H"]
    main, other = _by_width(rec, H), _by_width(rec, compare_H)
    header = ["removed", "paper (2×1200)", f"ours 2×{H}: SNR", f"2×{H}: |μ|", f"2×{H}: random"]
    if compare_H != H:
        header += [f"ours 2×{compare_H}: SNR", f"2×{compare_H}: |μ|"]
    rows = []
    for f in FRACTIONS:
        paper = PAPER_TABLE2.get(f)
        row = [f"{f}%", "—" if paper is None else f"{100 * paper:.2f}%"]
        row += [_mean_sd([m["error_at"][k][str(f)] for m in main])
                for k in ("snr", "magnitude", "random")]
        if compare_H != H:
            row += [_mean_sd([m["error_at"][k][str(f)] for m in other]) for k in ("snr", "magnitude")]
        rows.append(row)
    return header, rows


def mcnemar_rows(rec, fractions=("95", "98", "99")):
    """Return (header, rows): per network and fraction, the test images only the SNR-pruned or
    only the |mu|-pruned network gets wrong, and McNemar's exact p."""
    rows = [[f"2×{m['H']} seed {m['seed']}", f"{f}%", str(t["only_snr_wrong"]),
             str(t["only_magnitude_wrong"]), "<0.001" if t["p"] < 1e-3 else f"{t['p']:.3f}"]
            for m in rec["metrics"]["models"]
            for f, t in m["mcnemar_snr_vs_magnitude"].items() if f in fractions]
    return ["network", "removed", "only SNR wrong", "only |μ| wrong", "p"], rows


def gap_line(rec, fraction=95, kind="snr"):
    """One line: the test error added by removing ``fraction`` % by ``kind`` at the main width,
    mean ± sd over seeds in percentage points, with the per-seed values and the paper's gap."""
    import statistics
    H = rec["metrics"]["models"][0]["H"]
    gaps = [100 * (m["error_at"][kind][str(fraction)] - m["error_at"][kind]["0"])
            for m in _by_width(rec, H)]
    sd = f" ± {statistics.stdev(gaps):.2f}" if len(gaps) > 1 else ""
    paper = 100 * (PAPER_TABLE2[fraction] - PAPER_TABLE2[0])
    return (f"2×{H}, {fraction}% removed by {kind.upper() if kind == 'snr' else kind}: "
            f"{statistics.fmean(gaps):+.2f}{sd} pp (per seed: "
            f"{', '.join(f'{g:+.2f}' for g in gaps)}); paper: {paper:+.2f} pp")


# the words the readings of Table 2 and the curves use, declared in the text they render
HOLD_WITHIN = 0.10  # "holds": the mean error stays within 10 % (relative) of the unpruned one
FAIL_ABOVE = 2.0    # "fails": the mean error is more than twice the unpruned one
MCNEMAR_ALPHA = 0.05
READ_FRACTIONS = (50, 75, 95, 98, 99)
STATE_WORDS = {"hold": "holds", "rise": "rises", "fail": "fails"}


def course_state(unpruned, error):
    """'hold', 'rise' or 'fail': ``error`` against the ``unpruned`` error (HOLD_WITHIN,
    FAIL_ABOVE)."""
    if error <= unpruned * (1 + HOLD_WITHIN):
        return "hold"
    return "rise" if error <= unpruned * FAIL_ABOVE else "fail"


def criterion_words():
    """The wording's criterion, as the readings state it (Markdown)."""
    return (f"*holds*: the mean error stays within {100 * HOLD_WITHIN:.0f} % of the unpruned "
            f"error; *fails*: it is more than {FAIL_ABOVE:g} times that; *rises*: between")


def course_words(errors, fractions=READ_FRACTIONS):
    """How an error curve ({fraction: error}, fraction 0 unpruned) runs over ``fractions``, in
    words with its values: e.g. "holds from 50 to 95 % (1.43%–1.54%), rises at 98 % (1.81%)
    and fails at 99 % (7.73%)"."""
    fs = [f for f in fractions if f in errors]
    runs = []
    for f in fs:
        state = course_state(errors[0], errors[f])
        if runs and runs[-1][0] == state:
            runs[-1][1].append(f)
        else:
            runs.append((state, [f]))
    parts = []
    for state, run in runs:
        where = f"at {run[0]} %" if len(run) == 1 else f"from {run[0]} to {run[-1]} %"
        lo, hi = min(errors[f] for f in run), max(errors[f] for f in run)
        vals = f"{100 * lo:.2f}%" if len(run) == 1 or f"{100 * lo:.2f}" == f"{100 * hi:.2f}" \
            else f"{100 * lo:.2f}%–{100 * hi:.2f}%"
        parts.append(f"{STATE_WORDS[state]} {where} ({vals})")
    return parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]


def _mean_curve(models, kind):
    """{fraction: mean error over ``models``} of ranking ``kind``."""
    import statistics
    return {f: statistics.fmean(m["error_at"][kind][str(f)] for m in models) for f in FRACTIONS}


def _seeds(n):
    return f"{n} seed{'s' if n != 1 else ''}"


def held_up_to(errors, fractions=READ_FRACTIONS):
    """The largest of ``fractions`` up to which (every fraction before it included) the error
    curve {fraction: error} holds; None when it does not hold at the first."""
    upto = None
    for f in fractions:
        if course_state(errors[0], errors[f]) != "hold":
            break
        upto = f
    return upto


def table2_text(rec, compare_H):
    """Notebook 04's reading of Table 2 (Markdown), its words and numbers from ``rec``
    (snr.json): how the main width's error runs as weights go by SNR against the paper's
    network, the ``compare_H`` networks by SNR and by |mu|, and random removal."""
    H = rec["metrics"]["models"][0]["H"]
    main = _by_width(rec, H)
    paper = dict(PAPER_TABLE2)
    paper_fs = [f for f in READ_FRACTIONS if f in paper]
    ours = _mean_curve(main, "snr")
    agree = None
    for f in paper_fs:
        if course_state(paper[0], paper[f]) != course_state(ours[0], ours[f]):
            break
        agree = f
    if agree == paper_fs[-1]:
        follows = f"ours follows the paper's course up to {agree} %, as far as the paper reports"
    elif agree is not None:
        follows = (f"ours follows the paper's course up to {agree} % and parts from it at "
                   f"{paper_fs[paper_fs.index(agree) + 1]} %")
    else:
        follows = f"ours parts from the paper's course already at {paper_fs[0]} %"
    text = (f"**What it shows** ({criterion_words()}). Removing weights by SNR, the paper's "
            f"2×1200 network ({100 * paper[0]:.2f}% unpruned) {course_words(paper, paper_fs)}; "
            f"ours at 2×{H} ({100 * ours[0]:.2f}% unpruned, mean of {_seeds(len(main))}) "
            f"{course_words(ours)}: {follows}.")
    other = _by_width(rec, compare_H) if compare_H != H else []
    if other:
        snr, mag = _mean_curve(other, "snr"), _mean_curve(other, "magnitude")
        text += (f" At 2×{compare_H} ({100 * snr[0]:.2f}% unpruned, mean of "
                 f"{_seeds(len(other))}) the error by SNR {course_words(snr)}; by |μ| it "
                 f"{course_words(mag)}.")
    rnd = _mean_curve(main, "random")
    return text + f" Removed at random, the 2×{H} error {course_words(rnd)}."


def mcnemar_groups(rec, H, fractions=("95", "98", "99"), alpha=MCNEMAR_ALPHA):
    """{fraction: phrase}: what McNemar's test per network says of SNR against |mu| at width
    ``H``: told apart on none of the networks, fewer errors by one ranking on each, or which
    networks pass ``alpha`` and which way."""
    models = _by_width(rec, H)
    out = {}
    for f in fractions:
        tests = [(m["seed"], m["mcnemar_snr_vs_magnitude"][f]) for m in models
                 if f in m["mcnemar_snr_vs_magnitude"]]
        if not tests:
            continue
        sig = [(s, t) for s, t in tests if t["p"] < alpha]
        n = len(tests)
        each = "on the one network" if n == 1 else f"on each of the {n} networks"
        none = "on the one network" if n == 1 else f"on any of the {n} networks"

        def p_words(ts):
            return "p: " + ", ".join("<0.001" if t["p"] < 1e-3 else f"{t['p']:.3f}"
                                     for _, t in ts)

        def better(t):
            return "SNR" if t["only_snr_wrong"] < t["only_magnitude_wrong"] else "|μ|"
        if not sig:
            out[f] = f"not told apart {none} ({p_words(tests)})"
        elif len(sig) == n and len({better(t) for _, t in sig}) == 1:
            out[f] = f"fewer errors by {better(sig[0][1])} {each} ({p_words(sig)})"
        else:
            out[f] = (f"p < {alpha:g} on {len(sig)} of {n} networks: " + "; ".join(
                f"seed {s}, fewer errors by {better(t)} ({p_words([(s, t)])})"
                for s, t in sig))
    return out


def mcnemar_text(rec, fractions=("95", "98", "99"), alpha=MCNEMAR_ALPHA):
    """Notebook 04's reading of the McNemar table (Markdown), its words from ``rec``: per width
    and fraction, whether SNR and |mu| pruning are told apart, and how many tests there are."""
    widths = list(dict.fromkeys(m["H"] for m in rec["metrics"]["models"]))
    parts = [f"2×{H}: " + "; ".join(f"{f} % removed, {w}"
                                     for f, w in mcnemar_groups(rec, H, fractions, alpha).items())
             for H in widths]
    n = sum(f in m["mcnemar_snr_vs_magnitude"] for m in rec["metrics"]["models"]
            for f in fractions)
    return ("**What it shows.** SNR against |μ| on the same network, McNemar's test per "
            "network (uncorrected). " + ". ".join(parts)
            + f". These are {n} tests: were the two rankings equivalent, about {alpha * n:.1f} "
            f"of them would still give p < {alpha:g} by chance.")


def curves_text(rec):
    """Notebook 04's reading of the pruning curves (Markdown), its words and numbers from
    ``rec``: how many times the unpruned error random removal gives at the first fraction,
    how far SNR and |mu| pruning hold at each width, and SNR against |mu| at the last fraction
    (with McNemar's verdict per network)."""
    widths = list(dict.fromkeys(m["H"] for m in rec["metrics"]["models"]))
    first, last = READ_FRACTIONS[0], READ_FRACTIONS[-1]
    curves = {H: {k: _mean_curve(_by_width(rec, H), k) for k in KINDS} for H in widths}

    def times(c, H):
        ratio = f"{c[first] / c[0]:.0f} times" if c[0] > 0 else "above"
        return (f"{ratio} the unpruned error at 2×{H} ({100 * c[first]:.2f}% against "
                f"{100 * c[0]:.2f}%)")

    def held(c):
        upto = held_up_to(c)
        return f"up to {upto} %" if upto is not None else f"not even at {first} %"
    rnd = "; ".join(times(curves[H]["random"], H) for H in widths)
    hold = "; ".join(f"ranked by {label}, it holds " + " and ".join(
        f"{held(curves[H][kind])} at 2×{H}" for H in widths)
        for kind, label in (("snr", "SNR"), ("magnitude", "|μ|")))
    at_last = "; ".join(
        f"2×{H}: SNR {100 * curves[H]['snr'][last]:.2f}% against |μ| "
        f"{100 * curves[H]['magnitude'][last]:.2f}% (McNemar: "
        f"{mcnemar_groups(rec, H, (str(last),)).get(str(last), 'not tested')})" for H in widths)
    return (f"**What it shows** (means over the seeds; {criterion_words()}). Removed at "
            f"random, the error at {first} % removed is already {rnd}. {hold[0].upper()}"
            f"{hold[1:]}. At {last} % removed, {at_last}.")


def cut_between_modes(entry, fraction="75", smooth_db=1.0):
    """Whether the paper's Figure 4 picture holds for a stored analysis: the cut-off removing
    ``fraction`` % lies between two modes, i.e. the SNR density there (averaged over
    ±``smooth_db`` dB) is below the highest density on each side of it."""
    lo, hi, n = DB_EDGES
    width = (hi - lo) / n
    k = max(1, round(smooth_db / width))
    h = entry["snr_hist"]
    dens = [sum(h[max(0, i - k):i + k + 1]) / len(h[max(0, i - k):i + k + 1]) for i in range(n)]
    i = min(n - 1, max(0, int((entry["cuts_db"][fraction] - lo) / width)))
    return max(dens[:i], default=0) > dens[i] and max(dens[i + 1:], default=0) > dens[i]


def figure4_takeaway(models, fraction="75"):
    """One sentence: on how many of ``models`` (stored analyses of one width) the cut-off that
    removes ``fraction`` % lies between two modes of the SNR density, as in the paper."""
    n_between = sum(cut_between_modes(m, fraction) for m in models)
    n = len(models)
    verdict = ("reproduced" if n_between == n else "not reproduced" if n_between == 0
               else "reproduced on some networks only")
    return (f"Figure 4's picture, the {fraction} % cut-off between two modes of the SNR density, "
            f"is {verdict}: it lies between two modes on {n_between} of the {n} "
            f"network{'s' if n != 1 else ''} at 2×{models[0]['H']}.")

def curves_figure(rec):
    """Test error against the fraction of weights removed, per ranking and width (mean over seeds
    as a line, range over seeds as a band): all rankings, and a close-up of SNR and |mu|."""
    import matplotlib.pyplot as plt
    from .plotting import percent_axis
    fig, axes = plt.subplots(1, 2, figsize=(12, 4), constrained_layout=True)
    styles = {"snr": ("C0", "SNR |μ|/σ"), "magnitude": ("C1", "|μ|"), "random": ("C7", "random")}
    widths = list(dict.fromkeys(m["H"] for m in rec["metrics"]["models"]))
    for ax, kinds, upto in zip(axes, (list(styles), ["snr", "magnitude"]), (99, 98)):
        xs = [f for f in FRACTIONS if f <= upto]
        for H, ls in zip(widths, ("-", ":", "--")):
            models = _by_width(rec, H)
            for kind in kinds:
                c, label = styles[kind]
                vals = torch.tensor([[m["error_at"][kind][str(f)] for f in xs] for m in models])
                ax.plot(xs, vals.mean(0).tolist(), ls, marker="o", ms=3, c=c, lw=1,
                        label=f"{label}, 2×{H} ({len(models)} seed{'s' if len(models) > 1 else ''})")
                if len(models) > 1:
                    ax.fill_between(xs, vals.min(0).values.tolist(), vals.max(0).values.tolist(),
                                    color=c, alpha=0.15, lw=0)
        ax.set(xlabel="weights removed (%)", ylabel="test error (line: mean; band: seed range)")
        ax.legend(fontsize=7, loc="upper left")
    axes[0].set_yscale("log")
    percent_axis(axes[0], "y", decimals=1)
    axes[0].set_title("all rankings")
    close = [m["error_at"][k][str(f)] for m in rec["metrics"]["models"] for k in ("snr", "magnitude")
             for f in xs]
    axes[1].set_ylim(0.95 * min(close), 1.05 * max(close))
    percent_axis(axes[1], "y", decimals=2)
    axes[1].set_title("close-up: SNR against |μ| up to 98 % removed")
    return fig


def weighting_figure(base, alt, H):
    """SNR densities of the same recipe under the two KL weightings (stored analyses)."""
    import matplotlib.pyplot as plt
    lo, hi, n = DB_EDGES
    edges = [lo + i * (hi - lo) / n for i in range(n + 1)]
    fig, ax = plt.subplots(figsize=(7.5, 3.8), constrained_layout=True)
    for m, c in ((base, "C0"), (alt, "C3")):
        dens = [k / (m["n_weights"] * (hi - lo) / n) for k in m["snr_hist"]]
        ax.stairs(dens, edges, fill=True, alpha=0.45, color=c,
                  label=WEIGHTING_LABELS[m["kl_weighting"]])
        ax.axvline(m["cuts_db"]["95"], color=c, ls=":", lw=1.2,
                   label=f"95 % removed below {m['cuts_db']['95']:.1f} dB")
    ax.set(xlabel="signal-to-noise ratio |μ|/σ (dB)", ylabel="density", title=f"2×{H}, seed 0")
    ax.legend(fontsize=8)
    return fig


def weighting_rows(base, alt):
    """Return (header, rows): test error after SNR pruning under each KL weighting."""
    return (["KL weighting", "0%", "95%", "98%"],
            [[WEIGHTING_LABELS[m["kl_weighting"]]]
             + [f"{100 * m['error_at']['snr'][f]:.2f}%" for f in ("0", "95", "98")]
             for m in (base, alt)])


def storage_text(rec):
    """Return notebook 04's reading of the storage table (Markdown), its numbers from ``rec``
    (snr.json's ``storage_and_timing`` rows): the sparse size at 95 % removed against the dense
    one, and how the sparse product's time compares at 0, 95 and 98 %."""
    timing = rec["metrics"]["storage_and_timing"]
    rows = {r["removed"]: r for r in timing["rows"]}
    width = next((f"2×{m['H']} " for m in rec["metrics"].get("models", [])
                  if m.get("name") == timing.get("model")), "")
    mib = 2 ** 20
    r95 = rows[95]
    speed = {k: r["dense_s"] / r["sparse_s"] for k, r in rows.items()}

    def pace(x):  # coarse on purpose: single medians on a loaded 2-core machine
        return ("about as fast as" if 0.5 <= x <= 2 else
                f"{x:.0f}× faster than" if x > 1 else f"{1 / x:.0f}× slower than")
    return (f"**What it shows.** Stored sparse, the {width}network shrinks "
            f"{r95['dense_bytes'] / r95['sparse_bytes']:.1f}-fold at 95 % removed "
            f"({r95['dense_bytes'] / mib:.1f} MiB to {r95['sparse_bytes'] / mib:.2f} MiB); the "
            f"sparse product is {pace(speed[95])} the dense one at 95 %, {pace(speed[98])} it at "
            f"98 %, and {pace(speed[0])} it unpruned, where every weight is stored with its index "
            f"({rows[0]['sparse_bytes'] / rows[0]['dense_bytes']:.1f} times the bytes). The timings "
            "are single medians on a 2-core machine: read them as orders of magnitude.")


def weighting_text(base, alt):
    """Return notebook 04's reading of the KL-weighting comparison (Markdown), its numbers from
    the stored analyses ``base`` (eq. 8's 1/M) and ``alt`` (eq. 9): where the eq. 9 network's SNR
    density peaks, and the test error after SNR pruning of both networks."""
    lo, hi, n = DB_EDGES
    k = max(range(n), key=lambda i: alt["snr_hist"][i])
    peak = lo + (k + 0.5) * (hi - lo) / n
    e = {lab: {f: 100 * m["error_at"]["snr"][f] for f in ("0", "75", "95", "98")}
         for lab, m in (("alt", alt), ("base", base))}
    where = ""
    if "cuts_db" in alt and "cuts_db" in base:  # the medians: half the weights lie below them
        a50, b50 = alt["cuts_db"]["50"], base["cuts_db"]["50"]
        where = (f"With eq. 9's weights the SNR density sits {'higher' if a50 > b50 else 'lower'}"
                 f": half its weights lie below {a50:.1f} dB, against {b50:.1f} dB with eq. 8's"
                 + ("; the KL pulls its weights less towards the prior's narrow component, so "
                    "there are fewer near-zero, noisy weights to remove" if a50 > b50 else "")
                 + ". ")
    return (f"**What it shows (seed 0 only).** {where}The eq. 9 network's density has its "
            f"highest peak near {peak:.1f} dB, which we have not explained. Its test error "
            f"is {e['alt']['0']:.2f} % unpruned against {e['base']['0']:.2f} % with eq. 8's "
            f"weights, {e['alt']['75']:.2f} % against {e['base']['75']:.2f} % at 75 % removed, "
            f"{e['alt']['95']:.2f} % against {e['base']['95']:.2f} % at 95 % and "
            f"{e['alt']['98']:.2f} % against {e['base']['98']:.2f} % at 98 % (one seed, seed 0).")


def paper_takeaway(rec, fraction=95):
    """One Markdown bullet for notebook 04's takeaways, its numbers from ``rec`` (snr.json): the
    main width's unpruned test error and the error added by removing ``fraction`` % by SNR
    (mean over seeds) against the paper's Table 2, the storage the sparse network needs, and
    (where the analyses hold the histograms) whether Figure 4's picture is reproduced."""
    import statistics
    H = rec["metrics"]["models"][0]["H"]
    ms = _by_width(rec, H)
    base = statistics.fmean(m["error_at"]["snr"]["0"] for m in ms)
    gap = statistics.fmean(m["error_at"]["snr"][str(fraction)] - m["error_at"]["snr"]["0"]
                           for m in ms)
    rows = {r["removed"]: r for r in (rec["metrics"].get("storage_and_timing") or {})
            .get("rows", [])}
    store = ""
    if fraction in rows:
        r = rows[fraction]
        store = (f"; stored sparse it needs {r['sparse_bytes'] / r['dense_bytes']:.0%} of the "
                 "dense bytes")
    paper_gap = PAPER_TABLE2[fraction] - PAPER_TABLE2[0]
    start = "higher" if base > PAPER_TABLE2[0] else "lower" if base < PAPER_TABLE2[0] else "level"
    figure4 = (" " + figure4_takeaway(ms)) if all("snr_hist" in m and "cuts_db" in m
                                                  for m in ms) else ""
    return (f"- Against the paper's Table 2: our 2×{H} networks start {start} "
            f"({100 * base:.2f} % unpruned, paper {100 * PAPER_TABLE2[0]:.2f} %) and change by "
            f"{100 * gap:+.2f} pp when {fraction} % of the weights go by SNR (paper "
            f"{100 * paper_gap:+.2f} pp){store}.{figure4}")

