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


def _network_words(entry, alt=None):
    """A stored analysis in words: "the 2×400 seed 0 network", and for the other KL weighting's
    network (``alt``) which one it is."""
    eq = {"blundell": "eq. 9's KL weights", "uniform": "eq. 8's KL weights"}.get(
        (alt or {}).get("kl_weighting"), "the other KL weighting")
    other = f" with {eq} (section 4)" if alt is not None and \
        entry.get("name") == alt.get("name") else ""
    return f"the 2×{entry['H']} seed {entry['seed']} network{other}"


def pruned_words(rec, replication=()):
    """One line: the networks ``rec`` (snr.json) prunes, by width with their seeds and numbers
    of weights, and the other KL weighting's network; ``replication``: the seeds of that
    weighting's other networks (section 4's replication, pruned by SNR only)."""
    alt = rec["metrics"].get("other_kl_weighting")
    groups = {}
    for m in rec["metrics"]["models"]:
        groups.setdefault(m["H"], []).append(m)
    parts = []
    for H, ms in groups.items():
        sizes = {m["n_weights"] for m in ms}
        if len(ms) == 1:
            parts.append(f"the 2×{H} seed {ms[0]['seed']} network ({ms[0]['n_weights']:,} "
                         "weights)")
        else:
            seeds = ", ".join(str(m["seed"]) for m in ms)
            size = (f"{sizes.pop():,} weights each" if len(sizes) == 1 else
                    ", ".join(f"{m['n_weights']:,}" for m in ms) + " weights")
            parts.append(f"the 2×{H} networks of seeds {seeds} ({size})")
    if alt:
        parts.append(_network_words(alt, alt))
    listed = parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]
    seeds = [str(x) for x in replication if not alt or x != alt.get("seed")]
    more = (f" That weighting's network{'s' * (len(seeds) > 1)} of seed{'s' * (len(seeds) > 1)} "
            f"{' and '.join(seeds)} {'are' if len(seeds) > 1 else 'is'} pruned by SNR only "
            "(section 4's test)." if alt and seeds
            else "")
    return f"Pruned: {listed}.{more}"


def _run_cpus(rec):
    """The CPUs named in the run records of ``rec``'s networks (sorted; [] without records)."""
    import json

    from .utils import results_dir
    runs = results_dir() / "01_mnist_classification" / "runs"
    alt = rec["metrics"].get("other_kl_weighting")
    names = [m["name"] for m in rec["metrics"]["models"]] + ([alt["name"]] if alt else [])
    cpus = set()
    for name in names:
        path = runs / f"{name}.json"
        if path.exists():
            cpus.add((json.loads(path.read_text()).get("machine") or {}).get("cpu") or "")
    return sorted(c for c in cpus if c)


def retrain_words(rec):
    """One line: how long training ``rec``'s networks took together by their run records
    (``retrain_seconds``; each with the SGD network its means start from, one CPU thread each),
    and how many of them have no record (left out of the sum)."""
    seconds, missing = retrain_seconds(rec)
    alt = rec["metrics"].get("other_kl_weighting")
    n = len(rec["metrics"]["models"]) + (1 if alt else 0)
    k = n - len(missing)
    which = (f"the {n} pruned networks" if not missing else f"{k} of the {n} pruned networks")
    gone = (f" (no recorded time for the other{'s' if len(missing) > 1 else ''})" if missing
            else "")
    return (f"Training time, one CPU thread each: {seconds / 3600:.1f} h for {which} together, "
            f"each with its start net{gone}.")


def _figure4_facts(entry):
    lo, hi, n = DB_EDGES
    width = (hi - lo) / n
    above = sum(c for i, c in enumerate(entry["snr_hist"]) if lo + i * width >= 0.0)
    cuts = entry["cuts_db"]
    words = (f"Of this network's {entry['n_weights']:,} weights, "
             f"{100 * above / entry['n_weights']:.2f}% have an SNR above 0 dB; the cut-offs "
             "that remove " + ", ".join(f"{f} %" for f in cuts) + " of the weights lie at "
             + ", ".join(f"{c:.1f}" for c in cuts.values()) + " dB")
    below = all(c < 0 for c in cuts.values())
    return words + (", every one of them below 0 dB." if below else ".") + (
        f" ({entry['snr_outside']:,} weights lie outside [{lo:g}, {hi:g}] dB and are not "
        "counted.)" if entry.get("snr_outside") else "")


def figure4_words(entry):
    """Figure 4 in words, read from a stored analysis: the share of weights with an SNR above
    0 dB (from the histogram; weights outside its range are not counted) and where the
    cut-offs lie."""
    return "**What it shows.** " + _figure4_facts(entry)


def _by_width(rec, H):
    return [m for m in rec["metrics"]["models"] if m["H"] == H]


def _mean_sd(vals):
    import statistics
    sd = f" ± {100 * statistics.stdev(vals):.2f}" if len(vals) > 1 else ""
    return f"{100 * statistics.fmean(vals):.2f}{sd}%"


def table2_rows(rec, compare_H):
    """Return (header, rows) of Table 2: the paper's 2x1200 network against ours at the main
    width and at ``compare_H``, each by SNR, |mu| and at random (mean ± sd over seeds)."""
    H = rec["metrics"]["models"][0]["H"]
    main, other = _by_width(rec, H), _by_width(rec, compare_H)
    header = ["removed", "paper (2×1200)", f"ours 2×{H}: SNR", f"2×{H}: |μ|", f"2×{H}: random"]
    if compare_H != H:
        header += [f"ours 2×{compare_H}: SNR", f"2×{compare_H}: |μ|", f"2×{compare_H}: random"]
    rows = []
    for f in FRACTIONS:
        paper = PAPER_TABLE2.get(f)
        row = [f"{f}%", "—" if paper is None else f"{100 * paper:.2f}%"]
        row += [_mean_sd([m["error_at"][k][str(f)] for m in main])
                for k in ("snr", "magnitude", "random")]
        if compare_H != H:
            row += [_mean_sd([m["error_at"][k][str(f)] for m in other])
                    for k in ("snr", "magnitude", "random")]
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


def gap_stats(rec, fraction=95, kind="snr"):
    """(per-seed test error added in pp, ``mean_ci`` of them, the paper's gap in pp) for
    removing ``fraction`` % by ``kind`` at the main width."""
    from .stats import mean_ci
    H = rec["metrics"]["models"][0]["H"]
    gaps = [100 * (m["error_at"][kind][str(fraction)] - m["error_at"][kind]["0"])
            for m in _by_width(rec, H)]
    return gaps, mean_ci(gaps), 100 * (PAPER_TABLE2[fraction] - PAPER_TABLE2[0])


def gap_line(rec, fraction=95, kind="snr"):
    """One line: the test error added by removing ``fraction`` % by ``kind`` at the main width,
    mean ± sd over seeds in percentage points with its 95 % interval, the per-seed values and the
    paper's gap, and whether the interval holds it."""
    H = rec["metrics"]["models"][0]["H"]
    gaps, s, paper = gap_stats(rec, fraction, kind)
    sd = f" ± {s['sd']:.2f}" if s["sd"] is not None else ""
    ci = s["ci"]
    inside = ("" if ci is None else
              f" ({'inside' if ci[0] <= paper <= ci[1] else 'outside'} the interval)")
    return (f"2×{H}, {fraction} % removed by {kind.upper() if kind == 'snr' else kind}, error "
            f"added (pruned − unpruned): {s['mean']:+.2f}{sd} pp"
            + (f", 95 % interval [{ci[0]:+.2f}, {ci[1]:+.2f}]" if ci else "")
            + f" (per seed: {', '.join(f'{g:+.2f}' for g in gaps)}); paper: {paper:+.2f} pp"
            + inside + (f"; ours − paper's: {s['mean'] - paper:+.2f} pp, 95 % interval "
                        f"[{ci[0] - paper:+.2f}, {ci[1] - paper:+.2f}]" if ci else ""))


def modes_count(models, fraction="75", smooth_db=1.0):
    """(networks whose ``fraction`` % cut-off lies between two modes, networks, verdict word):
    Figure 4's picture on ``models`` (one width), ``cut_between_modes`` for each."""
    n_between = sum(cut_between_modes(m, fraction, smooth_db) for m in models)
    n = len(models)
    verdict = ("reproduced" if n_between == n else "not reproduced" if n_between == 0
               else "reproduced on some networks only")
    return n_between, n, verdict


def _above_zero_words(entry):
    """The shown network's share of weights above 0 dB (from the histogram) and, where some
    weights lie outside its range, that the share leaves them out."""
    lo, hi, n = DB_EDGES
    width = (hi - lo) / n
    above = sum(c for i, c in enumerate(entry["snr_hist"]) if lo + i * width >= 0.0)
    text = (f"Of this network's {entry['n_weights']:,} weights, "
            f"{100 * above / entry['n_weights']:.2f} % have an SNR above 0 dB (|μ| > σ).")
    if entry.get("snr_outside"):
        text += (f" This share is counted on the histogram, which leaves out the "
                 f"{entry['snr_outside']:,} weights outside [{lo:g}, {hi:g}] dB.")
    return text


def _cuts_words(entry):
    """Where the shown network's cut-offs lie, and whether all lie below 0 dB."""
    cuts = entry["cuts_db"]
    fs, cs = list(cuts), [f"{c:.1f}" for c in cuts.values()]

    def listed(xs):
        return xs[0] if len(xs) == 1 else ", ".join(xs[:-1]) + " and " + xs[-1]
    below = all(c < 0 for c in cuts.values())
    return (f"The cut-offs that remove {listed(fs)} % of the weights lie at {listed(cs)} dB"
            + (": all below 0 dB." if below else "."))


def figure4_text(entry, models, fraction="75", smooth_db=1.0):
    """Notebook 04's reading of Figure 4 (Markdown bullets), its numbers from the stored analyses:
    the shown network's share of weights above 0 dB and its cut-offs, the rule for "between two
    peaks" (``cut_between_modes``), and on how many of ``models`` (one width) the cut-off that
    removes ``fraction`` % lies between two peaks of the density, as in the paper."""
    n_between, n, verdict = modes_count(models, fraction, smooth_db)
    seeds = ", ".join(str(m["seed"]) for m in models)
    net = "network" if n == 1 else "networks"
    return (f"**What it shows.**\n\n- {_above_zero_words(entry)}\n- {_cuts_words(entry)}\n"
            f"- The paper's picture, the {fraction} % cut-off in a dip between two peaks of the "
            f"density, is {verdict} here. A cut-off counts as lying between two peaks when the "
            f"density there (smoothed over ±{smooth_db:g} dB) is below the highest density on "
            f"each side of it. That is so on {n_between} of the {n} {net} at "
            f"2×{models[0]['H']} (seed{'s' if n != 1 else ''} {seeds}; the figure shows seed "
            f"{entry['seed']}).")


def figure4_takeaway(models, fraction="75"):
    """One clause for the takeaways: whether Figure 4's picture (the ``fraction`` % cut-off
    between two modes of the SNR density) is reproduced on ``models`` (one width), with the
    count."""
    n_between, n, verdict = modes_count(models, fraction)
    return (f"Figure 4's two-peak picture is {verdict} (the {fraction} % cut-off lies between "
            f"two peaks on {n_between} of the {n} network{'s' if n != 1 else ''} at "
            f"2×{models[0]['H']}).")


# the words the readings of Table 2 use, declared in the text they render. "holds" is kept for
# the plans' test verdicts: these words describe a curve, they test nothing.
FLAT_WITHIN = 0.10  # "stays within 1.1×": the mean error at most 1.1 times the unpruned one
BREAK_ABOVE = 2.0   # "breaks down": the mean error more than twice the unpruned one
MCNEMAR_ALPHA = 0.05
READ_FRACTIONS = (50, 75, 95, 98, 99)
STATE_WORDS = {"flat": "stays within 1.1×", "rise": "rises", "break": "breaks down"}


def course_state(unpruned, error):
    """'flat', 'rise' or 'break': ``error`` against the ``unpruned`` error (FLAT_WITHIN,
    BREAK_ABOVE)."""
    if error <= unpruned * (1 + FLAT_WITHIN):
        return "flat"
    return "rise" if error <= unpruned * BREAK_ABOVE else "break"


def criterion_words():
    """The wording's criterion, as the readings state it (Markdown)."""
    return (f"*stays within {1 + FLAT_WITHIN:g}×*: at most {1 + FLAT_WITHIN:g} times the unpruned "
            f"error; *rises*: up to {BREAK_ABOVE:g}×; *breaks down*: above {BREAK_ABOVE:g}×")


def course_words(errors, fractions=READ_FRACTIONS):
    """How an error curve ({fraction: error}, fraction 0 unpruned) runs over ``fractions``, in
    words with its values: e.g. "stays within 1.1× from 50 to 95 % removed (error 1.43–1.54 %),
    rises at 98 % (1.81 %) and breaks down at 99 % (7.73 %)"."""
    fs = [f for f in fractions if f in errors]
    runs = []
    for f in fs:
        state = course_state(errors[0], errors[f])
        if runs and runs[-1][0] == state:
            runs[-1][1].append(f)
        else:
            runs.append((state, [f]))
    parts = []
    for i, (state, run) in enumerate(runs):
        where = f"at {run[0]} %" if len(run) == 1 else f"from {run[0]} to {run[-1]} %"
        lo, hi = min(errors[f] for f in run), max(errors[f] for f in run)
        vals = f"{100 * lo:.2f} %" if len(run) == 1 or f"{100 * lo:.2f}" == f"{100 * hi:.2f}" \
            else f"{100 * lo:.2f}–{100 * hi:.2f} %"
        first = i == 0  # the first part says what the fractions and the values are
        parts.append(f"{STATE_WORDS[state]} {where}{' removed' * first} "
                     f"({'error ' * first}{vals})")
    return parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]


def _mean_curve(models, kind):
    """{fraction: mean error over ``models``} of ranking ``kind``."""
    import statistics
    return {f: statistics.fmean(m["error_at"][kind][str(f)] for m in models) for f in FRACTIONS}


from .report import seeds_words as _seeds  # noqa: E402


def flat_up_to(errors, fractions=READ_FRACTIONS):
    """The largest of ``fractions`` up to which (every fraction before it included) the error
    curve {fraction: error} stays within FLAT_WITHIN of the unpruned error; None when it does not at the first."""
    upto = None
    for f in fractions:
        if course_state(errors[0], errors[f]) != "flat":
            break
        upto = f
    return upto


def _times(x):
    return f"{x:.0f}" if x >= 2 else f"{x:.1f}"


def table2_text(rec, compare_H, full_row=True):
    """Notebook 04's reading of Table 2 and the pruning curves (Markdown bullets), its words and
    numbers from ``rec`` (snr.json): how the main width's error runs as weights go by SNR against
    the paper's network and where the two part, the ``compare_H`` networks by SNR and by |mu|,
    and how far random removal is from the unpruned error at the first fraction; with
    ``full_row`` (docs/04_details.md) also what the 100 % row is (``full_row_text``)."""
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

    def parting(f):
        return (f"the paper's error {STATE_WORDS[course_state(paper[0], paper[f])]}, ours "
                f"{STATE_WORDS[course_state(ours[0], ours[f])]}")
    if agree == paper_fs[-1]:
        follows = f"It follows the paper's course as far as the paper reports ({agree} %)."
    elif agree is not None:
        nxt = paper_fs[paper_fs.index(agree) + 1]
        follows = f"It follows the paper's course up to {agree} %; at {nxt} % {parting(nxt)}."
    else:
        follows = (f"It parts from the paper's course already at {paper_fs[0]} %: "
                   f"{parting(paper_fs[0])}.")
    lines = [f"**What it shows** (means over the seeds; {criterion_words()}).", "",
             f"- Ranked by SNR, the paper's 2×1200 network ({100 * paper[0]:.2f}% unpruned) "
             f"{course_words(paper, paper_fs)}.",
             f"- Ours at 2×{H} ({100 * ours[0]:.2f}% unpruned, {_seeds(len(main))}) "
             f"{course_words(ours)}{_measurable_words(main, 'snr')}. {follows}"]
    other = _by_width(rec, compare_H) if compare_H != H else []
    if other:
        snr, mag = _mean_curve(other, "snr"), _mean_curve(other, "magnitude")
        lines += [f"- Ours at 2×{compare_H} ({100 * snr[0]:.2f}% unpruned, "
                  f"{_seeds(len(other))}), ranked by SNR, {course_words(snr)}"
                  f"{_measurable_words(other, 'snr')}.",
                  f"- Ranked by |μ|, the 2×{compare_H} error {course_words(mag)}"
                  f"{_measurable_words(other, 'magnitude')}."]
    first = READ_FRACTIONS[0]
    widths = [H] + ([compare_H] if other else [])
    rnd = [(_mean_curve(_by_width(rec, w), "random"), w) for w in widths]

    def times(c, w, full):
        ratio = f"{c[first] / c[0]:.1f} times" if c[0] > 0 else "above"
        return (f"{ratio}{' the unpruned error' if full else ''} at 2×{w} "
                f"({100 * c[first]:.2f}% against {100 * c[0]:.2f}%)")
    said = " and ".join(times(c, w, i == 0) for i, (c, w) in enumerate(rnd))
    lines.append(f"- Removed at random, with {first} % of the weights gone the error is already "
                 f"{said}.")
    full = full_row_text(rec) if full_row else ""
    return "\n".join(lines + ([full] if full else []))


def _measurable_words(models, kind):
    """Where an error curve (mean over ``models`` of ranking ``kind``) stays within 10 % up to
    some fraction yet the error added there (paired over the seeds) has a 95 % interval above 0
    (*measurable*, as notebook 04's Terms define it):
    " (at 95 % removed it adds +0.12 pp [+0.03, +0.20]: measurable)", else ""."""
    from .stats import mean_ci
    upto = flat_up_to(_mean_curve(models, kind))
    if upto is None or len(models) < 2:
        return ""
    s = mean_ci([100 * (m["error_at"][kind][str(upto)] - m["error_at"][kind]["0"])
                 for m in models])
    ci = s["ci"]
    if not ci or ci[0] <= 0:
        return ""
    return (f" (at {upto} % removed it adds {s['mean']:+.2f} pp [{ci[0]:+.2f}, {ci[1]:+.2f}]: "
            "measurable)")


def full_row_line(rec):
    """One Markdown line under Table 2: the error every image's single class gives, where only
    the biases are left (the 100 % row, and random removal at the first width from the fraction
    where it reaches that error), pointing to docs/04_details.md; "" without the 100 % values."""
    H = rec["metrics"]["models"][0]["H"]
    main = _by_width(rec, H)
    full = [m["error_at"]["snr"].get("100") for m in main]
    if any(x is None for x in full):
        return ""
    rnd_at = next((f for f in FRACTIONS if f < 100 and all(
        f"{m['error_at']['random'][str(f)]:.4f}" == f"{m['error_at']['snr']['100']:.4f}"
        for m in main)), None)
    odd = _class_words(rec, H).replace(" At ", "; at ").replace(
        " the networks do not all pick the same class: 100 % removed,", "")
    return (f"The 100 % row: only the biases are left, so each network gives every image one "
            f"class ({100 * sum(full) / len(full):.2f}% error at 2×{H}{odd.rstrip('.')})"
            + (f"; removed at random, the 2×{H} networks reach the same error from {rnd_at} % "
               "on" if rnd_at else "")
            + " ([more](../docs/04_details.md#table-2s-100--row)).")


def full_row_text(rec):
    """A bullet on Table 2's 100 % row: only the biases are left, so every image gets one class
    (the error is one minus its share), from which fraction random removal reaches it, and the
    widths whose seeds pick different classes; "" without the 100 % values."""
    H = rec["metrics"]["models"][0]["H"]
    main = _by_width(rec, H)
    full = [m["error_at"]["snr"].get("100") for m in main]
    lines = []
    if all(x is not None for x in full):
        rnd_at = next((f for f in FRACTIONS if f < 100 and all(
            f"{m['error_at']['random'][str(f)]:.4f}" == f"{m['error_at']['snr']['100']:.4f}"
            for m in main)), None)
        lines.append(f"- With every weight removed only the biases are left, so the network "
                     f"gives every image the same class: the 100 % row "
                     f"({100 * sum(full) / len(full):.2f}% at 2×{H}) is one minus that class's "
                     "share of the test images"
                     + (f"; removed at random, the 2×{H} networks reach that same error from "
                        f"{rnd_at} % on" if rnd_at else "") + "." + _class_words(rec, H))
    return "\n".join(lines)


def _class_words(rec, H):
    """" At 2×400 the networks do not all pick the same class: 100 % removed, seed 1 errs
    90.42 %, the others 90.26 %." for each other width whose seeds differ at 100 % removed
    (leading space), or ""."""
    out = []
    for h in dict.fromkeys(m["H"] for m in rec["metrics"]["models"]):
        ms = _by_width(rec, h)
        vals = {m["seed"]: f"{100 * m['error_at']['snr'].get('100', float('nan')):.2f}"
                for m in ms}
        if h == H or len(set(vals.values())) < 2:
            continue
        common = max(set(vals.values()), key=list(vals.values()).count)
        odd = [(sd, v) for sd, v in vals.items() if v != common]
        out.append(f" At 2×{h} the networks do not all pick the same class: 100 % removed, "
                   + ", ".join(f"seed {sd} errs {v} %" for sd, v in odd)
                   + f", the others {common} %.")
    return "".join(out)


def _mcnemar_tests(models, f, alpha):
    """(key, tests, significant) of McNemar's test at fraction ``f`` over ``models``: key
    ('none',), ('all', ranking) or ('some', f); the tests as (seed, test)."""
    tests = [(m["seed"], m["mcnemar_snr_vs_magnitude"][f]) for m in models
             if f in m["mcnemar_snr_vs_magnitude"]]
    sig = [(s, t) for s, t in tests if t["p"] < alpha]
    if not sig:
        key = ("none",)
    elif len(sig) == len(tests) and len({_fewer(t) for _, t in sig}) == 1:
        key = ("all", _fewer(sig[0][1]))
    else:
        key = ("some", f)
    return key, tests, sig


def _fewer(t):
    """The ranking with fewer errors in McNemar's test ``t``."""
    return "SNR" if t["only_snr_wrong"] < t["only_magnitude_wrong"] else "|μ|"


def _p(p):
    return "p < 0.001" if p < 1e-3 else f"p = {p:.3f}"


def _fractions_words(fs):
    from .report import and_list
    return and_list(str(f) for f in fs) + " %"


def mcnemar_groups(rec, H, fractions=("95", "98", "99"), alpha=MCNEMAR_ALPHA):
    """[(fractions, phrase)]: what McNemar's test per network says of SNR against |mu| at width
    ``H``, neighbouring fractions with the same outcome together: told apart on none of the
    networks, fewer errors by one ranking on each, or which networks pass ``alpha`` and which
    way."""
    models = _by_width(rec, H)
    groups = []
    for f in fractions:
        key, tests, sig = _mcnemar_tests(models, f, alpha)
        if not tests:
            continue
        if groups and groups[-1][0] == key and key[0] != "some":
            groups[-1][1].append(f)
            groups[-1][2].extend(sig)
        else:
            groups.append((key, [f], list(sig), len(tests)))
    out = []
    for key, fs, sig, n in groups:
        nets = "the one network" if n == 1 else f"the {n} networks"
        if key[0] == "none":
            phrase = "not told apart on " + ("the one network" if n == 1 else
                                             f"any of the {n} networks")
        elif key[0] == "all":
            worst = max(t["p"] for _, t in sig)
            ps = (_p(worst) if len(sig) == 1 else
                  "every p < 0.001" if worst < 1e-3 else f"every p ≤ {worst:.3f}")
            phrase = (f"fewer errors by {key[1]} on "
                      + ("the one network" if n == 1 else f"each of the {n} networks")
                      + f" ({ps})")
        else:
            phrase = (f"p < {alpha:g} on {len(sig)} of {nets}: " + "; ".join(
                f"seed {s}, fewer errors by {_fewer(t)} ({_p(t['p'])})" for s, t in sig))
        out.append((fs, phrase))
    return out


def mcnemar_text(rec, fractions=("95", "98", "99"), alpha=MCNEMAR_ALPHA):
    """Notebook 04's reading of the McNemar table (Markdown bullets), its words from ``rec``: per
    width, at which fractions SNR and |mu| pruning are told apart and which way, and how many
    tests there are."""
    widths = list(dict.fromkeys(m["H"] for m in rec["metrics"]["models"]))
    lines = ["**What it shows** (McNemar's test per network, uncorrected).", ""]
    for H in widths:
        groups = mcnemar_groups(rec, H, fractions, alpha)
        lines.append(f"- 2×{H}: " + "; ".join(
            f"at {_fractions_words(fs)}{' removed' if i == 0 else ''}, {phrase}"
            for i, (fs, phrase) in enumerate(groups)) + ".")
    n = sum(f in m["mcnemar_snr_vs_magnitude"] for m in rec["metrics"]["models"]
            for f in fractions)
    lines.append(f"- These are {n} tests: if the two rankings were equivalent, about "
                 f"{alpha * n:.1f} of them would still give p < {alpha:g} by chance.")
    from .pruning_plan import lean_words
    lean = lean_words(rec)
    return "\n".join(lines + ([lean] if lean else []))


def mcnemar_counts(rec, H, fractions=("95", "98", "99"), alpha=MCNEMAR_ALPHA):
    """(tests, {ranking: [(seed, fraction)]}): McNemar's tests at width ``H`` and those with
    p < ``alpha``, by the ranking with fewer errors."""
    n, by = 0, {}
    for m in _by_width(rec, H):
        for f in fractions:
            t = m["mcnemar_snr_vs_magnitude"].get(f)
            if t is None:
                continue
            n += 1
            if t["p"] < alpha:
                by.setdefault(_fewer(t), []).append((m["seed"], f))
    return n, by


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


def curves_figure(rec):
    """Test error against the fraction of weights removed (the fractions evenly spaced, so that
    95, 98 and 99 % stay apart; markers only, since a line between categories would draw a
    slope), one panel per question: SNR against |mu| at each width (open circle: mean over the
    seeds; dots: each seed, side by side), the paper's Table 2 marked at 2x1200, and
    random removal at both widths beside SNR. The 2x1200 panel is linear (its errors stay
    within a few tenths of a point), the others log (they span two decades)."""
    import matplotlib.pyplot as plt
    from matplotlib.ticker import FixedLocator, FuncFormatter, NullFormatter
    c = OKABE_ITO
    styles = {"snr": (c["blue"], "SNR |μ|/σ", -0.1), "magnitude": (c["orange"], "|μ|", 0.1),
              "random": (c["grey"], "random", 0.0)}
    widths = list(dict.fromkeys(m["H"] for m in rec["metrics"]["models"]))
    xs = [f for f in FRACTIONS if f < 100]
    pos = list(range(len(xs)))
    fig, axes = plt.subplots(1, len(widths) + 1, figsize=(5.2 * (len(widths) + 1), 4.2),
                             constrained_layout=True)

    def draw(ax, H, kind, marker="o", label=None, dx=None):
        col, name, dx0 = styles[kind]
        dx = dx0 if dx is None else dx
        ms = _by_width(rec, H)
        vals = [[m["error_at"][kind][str(f)] for f in xs] for m in ms]
        mean = [sum(v) / len(v) for v in zip(*vals)]
        n = len(ms)
        ax.plot([q + dx for q in pos], mean, marker, ls="none", c=col, mfc="none", mew=1.3,
                ms=7, label=label or f"{name}, 2×{H} (open: mean of {n} seed{'s' * (n > 1)})")
        if n > 1:  # each seed a little apart, so that equal values stay visible
            for i, v in enumerate(vals):
                off = dx + 0.05 * (i - (n - 1) / 2)
                ax.plot([q + off for q in pos], v, ".", c=col, ms=4, alpha=0.7)
    paper = [(xs.index(f), e) for f, e in sorted(PAPER_TABLE2.items()) if f in xs]
    for ax, H in zip(axes, widths):
        for kind in ("snr", "magnitude"):
            draw(ax, H, kind)
        ax.plot([], [], ".", c="0.4", ms=4, label="dots: each seed")
        ax.set_title(f"2×{H}: SNR or |μ| (colour: ranking)")
    axes[0].plot([q for q, _ in paper], [e for _, e in paper], "x", c="k", ms=7, mew=1.5,
                 zorder=5, label="paper, Table 2 (2×1200, SNR)")
    last = axes[-1]
    for j, (H, mk) in enumerate(zip(widths, ("o", "s", "^"))):
        dx = 0.12 * (j - (len(widths) - 1) / 2)
        draw(last, H, "random", mk, label=f"random, 2×{H}", dx=dx)
        draw(last, H, "snr", mk, label=f"SNR, 2×{H}", dx=dx)
    last.plot([], [], ".", c="0.4", ms=4, label="dots: each seed")
    last.set_title("random against SNR (colour: ranking; shape: width)")
    pct = FuncFormatter(lambda v, _: f"{round(100 * v, 2):g}%")  # one format: 1.3%, 2%, 50%
    for i, ax in enumerate(axes):
        ax.set_xticks(pos, [f"{f}" for f in xs])
        ax.set_xlabel("weights removed (%; fractions evenly spaced)")
        if i == 0:
            ax.set_ylabel("test error (linear scale)")
            ax.yaxis.set_major_formatter(pct)
            ax.margins(y=0.08)
        else:
            ax.set_yscale("log")
            ax.set_ylabel("test error (log scale)")
            ticks = [0.013, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0]
            ax.yaxis.set_major_locator(FixedLocator(ticks))
            ax.yaxis.set_major_formatter(pct)
            ax.yaxis.set_minor_formatter(NullFormatter())
        ax.legend(fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.2), ncol=2,
                  frameon=False)  # below the axes: it covers no point
    return fig


def weighting_figure(base, alt, H):
    """SNR densities of the same recipe under the two KL weightings (stored analyses): each
    histogram (step outline, in the legend) with its smoothed density (``kde_db``, the bandwidth
    of section 1; a dark dashed line over it, so that both stay visible), median and 95 % cut;
    a corner note gives the weights not drawn."""
    import matplotlib.pyplot as plt
    lo, hi, n = DB_EDGES
    edges = [lo + i * (hi - lo) / n for i in range(n + 1)]
    fig, ax = plt.subplots(figsize=(7.5, 3.8), constrained_layout=True)
    for m, c, ls in ((base, OKABE_ITO["blue"], "-"), (alt, OKABE_ITO["orange"], "--")):
        dens = [k / (m["n_weights"] * (hi - lo) / n) for k in m["snr_hist"]]
        ax.stairs(dens, edges, fill=False, color=c, ls=ls, lw=1.6,
                  label=WEIGHTING_LABELS[m["kl_weighting"]].replace("π_i", r"$\pi_i$"))
        g, k = kde_db(m["snr_hist"], bandwidth_db(m["snr_hist"]))
        ax.plot(g, k, color="0.15", lw=0.9, ls=(0, (2, 1.5)), zorder=4,
                label="eq. 9, smoothed (flattens sharp peaks)" if m is alt else None)
        ax.axvline(m["cuts_db"]["50"], color=c, ls="-.", lw=1.2,
                   label=f"median (half below): {m['cuts_db']['50']:.1f} dB")
        ax.axvline(m["cuts_db"]["95"], color=c, ls=":", lw=1.4,
                   label=f"95 % removed below {m['cuts_db']['95']:.1f} dB")
    filled = [i for m in (base, alt) for i, k in enumerate(m["snr_hist"]) if k]
    out = [f"{m.get('snr_outside', 0):,}" for m in (base, alt)]
    width = (hi - lo) / n
    ax.set_xlim(lo + min(filled) * width, lo + (max(filled) + 1) * width + 1)  # every weight
    ax.set(xlabel="signal-to-noise ratio |μ|/σ (dB)", ylabel="density (per dB)",
           title=f"2×{H}, seed {alt['seed']}: the SNR density under each KL weighting")
    ax.text(0.01, 0.4, f"not drawn: {out[0]} (eq. 8) "
            f"and {out[1]} (eq. 9)\nweights outside {lo:g} to {hi:g} dB", transform=ax.transAxes,
            ha="left", va="top", fontsize=8, color="0.25")  # under the legend, left of the data
    ax.legend(fontsize=8, loc="upper left")
    return fig


def weighting_rows(base, alt):
    """Return (header, rows): test error after SNR pruning under each KL weighting."""
    fs = ("0", "75", "95", "98")
    return (["KL weighting"] + [f"{f}% removed" for f in fs],
            [[WEIGHTING_LABELS[m["kl_weighting"]]]
             + [f"{100 * m['error_at']['snr'][f]:.2f}%" for f in fs]
             for m in (base, alt)])


SAME_PACE = 1.15  # the narrowest band of "about as fast" (factor between two timings); the
# dense times' own spread (timing_noise) widens it: each time is one median on a busy CPU


def timing_noise(rows):
    """The spread of the dense times over ``rows`` (snr.json's ``storage_and_timing`` rows), max
    / min: the dense network is the same computation in every row (its pruned weights are zeros
    in a full matrix), so this spread is timing noise alone."""
    dense = [r["dense_s"] for r in rows]
    return max(dense) / min(dense)


def noise_band(rows):
    """The factor within which a sparse time reads "about as fast" as the dense ones: the dense
    times' spread, or SAME_PACE where they agree more closely than that."""
    return max(SAME_PACE, timing_noise(rows))


def pace_state(sparse_s, dense, band):
    """("same", None, None) when the sparse time ``sparse_s`` lies between the ``dense`` times or
    within the factor ``band`` of the nearest; else ("faster" or "slower", the ratio against the
    nearest dense time, the ratio against the farthest)."""
    lo, hi = min(dense), max(dense)
    if sparse_s < lo:
        word, near, far = "faster", lo / sparse_s, hi / sparse_s
    elif sparse_s > hi:
        word, near, far = "slower", sparse_s / hi, sparse_s / lo
    else:
        return "same", None, None
    return ("same", None, None) if near <= band else (word, near, far)


def _pace(sparse_s, dense, band, than=True):
    """The sparse product against the dense one in words (``pace_state``): "about as fast" or,
    beyond the noise band, "18–22× slower" (the ratios against the nearest and the farthest
    dense time; ``than``: as a sentence reads it, "... than"/"... as" the dense one)."""
    word, near, far = pace_state(sparse_s, dense, band)
    if word == "same":
        return "about as fast" + (" as" if than else "")
    x, y = _times(near), _times(far)
    return f"{x if x == y else f'{x}–{y}'}× {word}" + (" than" if than else "")


def _size(x):
    """The sparse storage against the dense one, ``x`` = dense bytes / sparse bytes, in words."""
    return f"{x:.1f}× smaller" if x >= 1 else f"{1 / x:.1f}× larger"


def storage_rows(rec):
    """Return (header, rows) of the storage and timing table (snr.json's ``storage_and_timing``):
    MiB of the dense and the sparse network, the dense and the sparse time to predict the test
    set in units of the fastest dense time (no machine's absolute times), and the sparse one
    against every dense time in the words the reading uses (``_pace``, allowing for their
    spread), so that each label can be checked against the two time columns."""
    timing = rec["metrics"]["storage_and_timing"]["rows"]
    dense, band = [r["dense_s"] for r in timing], noise_band(timing)
    rows = []
    for r in timing:
        rows.append([f"{r['removed']}%", f"{r['dense_bytes'] / 2 ** 20:.2f}",
                     f"{r['sparse_bytes'] / 2 ** 20:.2f}",
                     _size(r["dense_bytes"] / r["sparse_bytes"]),
                     f"{r['dense_s'] / min(dense):.2f}", f"{r['sparse_s'] / min(dense):.2f}",
                     _pace(r["sparse_s"], dense, band, than=False)])
    return (["removed", "dense MiB", "sparse MiB", "sparse storage",
             "dense time (× fastest dense)", "sparse time (× fastest dense)",
             "sparse against every dense time"], rows)


def storage_text(rec):
    """Return notebook 04's reading of the storage table (Markdown bullets), its numbers from
    ``rec`` (snr.json's ``storage_and_timing`` rows): the sparse size at 95 % removed against
    the dense one; the band of "about as fast", set by how far the dense times (the same
    computation in every row) spread; and the sparse product's pace at 95, 98 and 0 % in the
    table's words."""
    timing = rec["metrics"]["storage_and_timing"]
    rows = {r["removed"]: r for r in timing["rows"]}
    width = next((f"2×{m['H']} " + (f"seed-{m['seed']} " if "seed" in m else "")
                  for m in rec["metrics"].get("models", [])
                  if m.get("name") is not None and m.get("name") == timing.get("model")), "")
    mib = 2 ** 20
    r95 = rows[95]
    dense = [r["dense_s"] for r in timing["rows"]]
    spread, band = timing_noise(timing["rows"]), noise_band(timing["rows"])
    rng = f"1.00–{max(dense) / min(dense):.2f}"
    noise = ("- Dense times (the same computation in every row): "
             f"{rng}"
             + (f", a {spread:.2f}× spread of timing noise" if spread > SAME_PACE else "")
             + f". *About as fast*: within {band:.2f}× of the nearest dense time; *n–m× "
             "slower*: against the slowest and the fastest.")
    p95, p98, p0 = (_pace(rows[f]["sparse_s"], dense, band) for f in (95, 98, 0))
    pruned = (f"{p95} the dense one at 95 and 98 % removed" if p95 == p98 else
              f"{p95} the dense one at 95 %, {p98} it at 98 %")
    return ("**What it shows.**\n\n"
            f"- Stored sparse, the {width}network shrinks "
            f"{r95['dense_bytes'] / r95['sparse_bytes']:.1f}-fold at 95 % removed "
            f"({r95['dense_bytes'] / mib:.1f} MiB to {r95['sparse_bytes'] / mib:.2f} MiB).\n"
            f"{noise}\n"
            f"- Predicting the test set, the sparse product is {pruned}, and {p0} it unpruned, "
            "where every weight is stored with its index "
            f"({rows[0]['sparse_bytes'] / rows[0]['dense_bytes']:.1f} times the bytes).")


PEAK_SHARE = 0.1  # density_peaks: a local maximum counts above this share of the highest


def density_peaks(entry, share=PEAK_SHARE):
    """[(dB, density)] of the local maxima of ``entry``'s smoothed SNR density (``kde_db`` with
    ``bandwidth_db``) higher than ``share`` times its highest point, left to right."""
    g, k = kde_db(entry["snr_hist"], bandwidth_db(entry["snr_hist"]))
    top = max(k)
    return [(float(g[i]), float(k[i])) for i in range(1, len(k) - 1)
            if k[i] > k[i - 1] and k[i] >= k[i + 1] and k[i] > share * top]


def weighting_text(base, alt, errors=True):
    """Return notebook 04's reading of the KL-weighting comparison (Markdown bullets), its
    numbers from the stored analyses ``base`` (eq. 8's 1/M) and ``alt`` (eq. 9): where the eq. 9
    network's SNR density sits and peaks, and (``errors``) its test error after SNR pruning
    against ``base``'s; notebook 04 leaves the errors to its three-seed table."""
    lo, hi, n = DB_EDGES
    k = max(range(n), key=lambda i: alt["snr_hist"][i])
    peak = lo + (k + 0.5) * (hi - lo) / n
    e = {lab: {f: 100 * m["error_at"]["snr"][f] for f in ("0", "95", "98")}
         for lab, m in (("alt", alt), ("base", base))}
    lines = ["**What it shows (seed 0 only).**", ""]
    if "cuts_db" in alt and "cuts_db" in base:  # the medians: half the weights lie below them
        a50, b50 = alt["cuts_db"]["50"], base["cuts_db"]["50"]
        lines.append(f"- With eq. 9's weights the SNR density sits "
                     f"{'higher' if a50 > b50 else 'lower'}: half its weights lie below "
                     f"{a50:.1f} dB, against {b50:.1f} dB with eq. 8's.")
    peaks = density_peaks(alt)
    if len(peaks) > 1:
        top = max(peaks, key=lambda x: x[1])[0]
        lines.append(f"- Smoothed (the kernel estimate of section 1), the eq. 9 network's density "
                     f"has {len(peaks)} peaks, near "
                     + ", ".join(f"{x:+.1f}" for x, _ in peaks[:-1])
                     + f" and {peaks[-1][0]:+.1f} dB (local maxima above {PEAK_SHARE:g} times the "
                     f"highest), the highest at {top:+.1f} dB; we have not explained them.")
    else:
        lines.append(f"- The eq. 9 network's density has its highest peak near {peak:.1f} dB, "
                     "which we have not explained.")
    if not errors:
        return "\n".join(lines)
    start = ("higher" if e["alt"]["0"] > e["base"]["0"] else
             "lower" if e["alt"]["0"] < e["base"]["0"] else "level")
    lines.append(f"- Pruned by SNR, its test error is {e['alt']['95']:.2f} % against "
                 f"{e['base']['95']:.2f} % at 95 % removed and {e['alt']['98']:.2f} % against "
                 f"{e['base']['98']:.2f} % at 98 %; unpruned it starts {start} "
                 f"({e['alt']['0']:.2f} % against {e['base']['0']:.2f} %).")
    return "\n".join(lines)


def paper_takeaway(rec, fraction=95, dip=None):
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
    timing = rec["metrics"].get("storage_and_timing") or {}
    rows = {r["removed"]: r for r in timing.get("rows", [])}
    store = ""
    if fraction in rows:
        r = rows[fraction]
        timed = next((f"the seed-{m['seed']} network" for m in rec["metrics"]["models"]
                      if "seed" in m and m.get("name") is not None
                      and m.get("name") == timing.get("model")),
                     "the timed network")
        store = (f"; stored sparse, {timed} then needs {r['sparse_bytes'] / r['dense_bytes']:.0%} "
                 "of the dense bytes")
    paper_gap = PAPER_TABLE2[fraction] - PAPER_TABLE2[0]
    start = "higher" if base > PAPER_TABLE2[0] else "lower" if base < PAPER_TABLE2[0] else "level"
    if dip is not None:  # Figure 4 read at the dip (snr_dip.json's metrics)
        figure4 = " " + dip_takeaway(dip)
    else:
        figure4 = (" " + figure4_takeaway(ms)) if all("snr_hist" in m and "cuts_db" in m
                                                      for m in ms) else ""
    gaps, s, _ = gap_stats(rec, fraction)
    ci = f" [95 % interval {s['ci'][0]:+.2f}, {s['ci'][1]:+.2f}]" if s["ci"] else ""
    return (f"- **Against the paper's Table 2.** Our 2×{H} networks (mean of {_seeds(len(ms))}) "
            f"start {start} "
            f"({100 * base:.2f} % unpruned, paper {100 * PAPER_TABLE2[0]:.2f} %) and change by "
            f"{100 * gap:+.2f} pp when {fraction} % of the weights go by SNR{ci} (paper "
            f"{100 * paper_gap:+.2f} pp){store}.{figure4}")


# ---- Figure 4 read at the density's dip: where the two modes part, and what pruning there costs

DIP_GRID_DB = 0.05  # the dB step on which the smoothed density is evaluated
DIP_SENSITIVITY = 2.0  # the dip is found again with the bandwidth times this, as a check
OKABE_ITO = {"blue": "#0072B2", "orange": "#E69F00", "vermillion": "#D55E00",
             "sky": "#56B4E9", "green": "#009E73", "purple": "#CC79A7", "grey": "#999999"}


def _centres():
    import numpy as np
    lo, hi, n = DB_EDGES
    return lo + (hi - lo) / n * (np.arange(n) + 0.5)


def bandwidth_db(hist):
    """The kernel's bandwidth (dB) for a stored SNR histogram: Silverman's rule of thumb,
    0.9 · min(sd, IQR / 1.34) · n^(-1/5), from the binned values (bin centres), and never below
    the histogram's bin width, since the values are stored binned."""
    import numpy as np
    lo, hi, n_bins = DB_EDGES
    h = np.asarray(hist, dtype=float)
    c = _centres()
    n = h.sum()
    mean = (h * c).sum() / n
    sd = float(np.sqrt((h * (c - mean) ** 2).sum() / n))
    cdf = np.cumsum(h) / n
    iqr = float(c[np.searchsorted(cdf, 0.75)] - c[np.searchsorted(cdf, 0.25)])
    return max((hi - lo) / n_bins, 0.9 * min(sd, iqr / 1.34) * n ** -0.2)


def kde_db(hist, bandwidth, grid=None):
    """(grid, density per dB): a Gaussian kernel density estimate of the binned SNR values
    (each bin's count at its centre) with ``bandwidth`` dB, normalised over the counted weights."""
    import numpy as np
    lo, hi, _ = DB_EDGES
    grid = np.arange(lo, hi + 1e-9, DIP_GRID_DB) if grid is None else np.asarray(grid)
    h = np.asarray(hist, dtype=float)
    z = (grid[:, None] - _centres()[None, :]) / bandwidth
    dens = np.exp(-0.5 * z ** 2) @ h / (h.sum() * bandwidth * np.sqrt(2 * np.pi))
    return grid, dens


def _share_below(entry, db):
    """The share of ``entry``'s weights with an SNR below ``db`` dB, counted on its histogram
    (the bin that straddles ``db`` split in proportion; weights outside the histogram's range
    are left out: ``snr_outside`` bounds what they could add)."""
    lo, hi, n = DB_EDGES
    width = (hi - lo) / n
    pos = (db - lo) / width
    k = int(pos)
    h = entry["snr_hist"]
    return (sum(h[:k]) + (pos - k) * (h[k] if k < n else 0)) / entry["n_weights"]


MODE_Z = 4.0  # a second mode counts when it rises above the dip by this many sampling sds


def find_dip(entry, scale=1.0):
    """The dip of ``entry``'s SNR density, with the density smoothed by ``kde_db`` at
    ``bandwidth_db`` times ``scale``: the main mode (its highest point), the second mode (of the
    other local maxima, the one that rises most above the lowest point between it and the main
    mode, in units of the estimate's sampling sd, sqrt(f / (n h 2√π)) at each point) and that
    lowest point, the dip; the dip's density over the second mode's, and the share of the
    weights below the dip. None when no other maximum rises MODE_Z sds above its dip (one mode:
    bumps of sampling noise in the tails do not count)."""
    import numpy as np
    bw = bandwidth_db(entry["snr_hist"]) * scale
    grid, dens = kde_db(entry["snr_hist"], bw)
    n = float(np.sum(entry["snr_hist"]))
    var = dens / (n * bw * 2 * np.sqrt(np.pi))
    main = int(np.argmax(dens))
    best = None
    for p in range(1, len(dens) - 1):
        if p == main or not (dens[p] > dens[p - 1] and dens[p] >= dens[p + 1]):
            continue
        a, b = sorted((p, main))
        j = a + int(np.argmin(dens[a:b + 1]))
        z = (dens[p] - dens[j]) / np.sqrt(var[p] + var[j])
        if best is None or z > best[0]:
            best = (z, p, j)
    if best is None or best[0] < MODE_Z:
        return None
    _, second, j = best
    def db(i):
        return round(float(grid[i]), 2)
    return {"bandwidth_db": round(float(bw), 4), "main_mode_db": db(main),
            "second_mode_db": db(second), "dip_db": db(j),
            "dip_over_second_mode": round(float(dens[j] / dens[second]), 4),
            "share_below": round(float(_share_below(entry, db(j))), 6)}


def dip_cost(entry, share, kind="snr"):
    """What removing the weights below the dip costs, from the measured fractions only: the
    test error added (pp, against the unpruned network) at the largest fraction removed at or
    below ``share`` and at the smallest above it, and, only where both are measured and the one
    above is not 100 % (no weight left), the linear interpolation between them at ``share``."""
    err = entry["error_at"][kind]
    fs = sorted(int(f) for f in err)
    below = max((f for f in fs if f <= 100 * share), default=None)
    above = min((f for f in fs if 100 * share < f < 100), default=None)

    def at(f):
        return None if f is None else {"removed_pct": f, "error_after": err[str(f)],
                                       "cost_pp": round(100 * (err[str(f)] - err["0"]), 4)}
    lo, hi = at(below), at(above)
    interp = None
    if lo is not None and hi is not None:
        t = (100 * share - below) / (above - below)
        interp = round(lo["cost_pp"] + t * (hi["cost_pp"] - lo["cost_pp"]), 4)
    return {"below": lo, "above": hi, "interpolated_cost_pp": interp}


def dip_analysis(rec):
    """Figure 4 read at the dip, for every network of ``rec`` (snr.json's ``models``): its modes,
    dip and share below (``find_dip``), the same at DIP_SENSITIVITY times the bandwidth, and the
    cost of pruning there (``dip_cost``); and per width the mean with its 95 % t-interval over
    the seeds of the dip, the share below it and the costs."""
    from .stats import mean_ci
    nets = []
    for m in rec["metrics"]["models"]:
        d = find_dip(m)
        wide = find_dip(m, DIP_SENSITIVITY)
        nets.append({"H": m["H"], "seed": m["seed"], "name": m["name"], "dip": d,
                     "dip_wider_kernel": wide,
                     "cost": dip_cost(m, d["share_below"]) if d else None,
                     "snr_outside": m.get("snr_outside", 0), "n_weights": m["n_weights"]})
    widths = {}
    for H in dict.fromkeys(n["H"] for n in nets):
        ns = [n for n in nets if n["H"] == H and n["dip"]]
        out = {"networks": len([n for n in nets if n["H"] == H]), "bimodal": len(ns)}
        if ns:
            for key in ("main_mode_db", "second_mode_db", "dip_db", "share_below"):
                out[key] = mean_ci([n["dip"][key] for n in ns])
            for side in ("below", "above"):  # "above": a measured fraction below 100 %
                cs = [n["cost"][side] for n in ns]
                if all(cs) and len({c["removed_pct"] for c in cs}) == 1:
                    out[f"cost_{side}"] = {"removed_pct": cs[0]["removed_pct"],
                                           **mean_ci([c["cost_pp"] for c in cs])}
            ip = [n["cost"]["interpolated_cost_pp"] for n in ns]
            if all(v is not None for v in ip):
                out["cost_interpolated"] = mean_ci(ip)
        widths[str(H)] = out
    return {"networks": nets, "widths": widths}


def build_dip(rec):
    """Write results/04_pruning/snr_dip.json (``dip_analysis`` of ``rec``, snr.json; a few
    seconds, from its histograms: no network is loaded) and return it; save_results leaves the
    file as it is when the numbers are the same."""
    import json
    import time

    from .utils import results_dir, save_results
    t0 = time.perf_counter()
    metrics = dip_analysis(rec)
    save_results("04_pruning", "snr_dip",
                 config={"source": "results/04_pruning/snr.json", "db_edges": list(DB_EDGES),
                         "kernel": "Gaussian", "bandwidth_rule": "Silverman's rule of thumb "
                         "0.9·min(sd, IQR/1.34)·n^(-1/5) on the binned values, at least one bin "
                         "width", "grid_db": DIP_GRID_DB,
                         "second_mode_rule": f"the peak rising most above its dip towards the "
                         f"main mode, by at least {MODE_Z:g} sampling sds of the estimate", "sensitivity_scale": DIP_SENSITIVITY,
                         "cost_rule": "measured fractions around the share below the dip; "
                         "linear interpolation only between two measured fractions below 100 %",
                         "models": [m["name"] for m in rec["metrics"]["models"]]},
                 metrics=metrics, profile=rec.get("profile"), seed=0,
                 wall_s=time.perf_counter() - t0,
                 extra={"note": "read from the SNR histograms (0.25 dB bins) and the test errors "
                                "at the measured fractions of snr.json; the test set chose "
                                "nothing"})
    return json.loads((results_dir() / "04_pruning" / "snr_dip.json").read_text())


def _db(x, digits=1):
    """A signed dB value, "+0.0" (not "-0.0") where it rounds to zero."""
    return f"{round(x, digits) + 0.0:+.{digits}f}"


def _ci_words(s, fmt="{:+.2f}", unit=""):
    """"+0.05 pp [−0.02, +0.13]" from a ``mean_ci`` dict (no interval with one value)."""
    ci = s.get("ci")
    body = fmt.format(s["mean"]) + unit
    return body + (f" [{fmt.format(ci[0])}, {fmt.format(ci[1])}]" if ci else "")


def _pct_ci(s):
    return _ci_words({**s, "mean": 100 * s["mean"],
                      "ci": s["ci"] and [100 * v for v in s["ci"]]}, "{:.2f}", " %")


def dip_rows(dip):
    """Return (header, rows): per network of ``dip`` (snr_dip.json's metrics) the modes and the
    dip of its smoothed SNR density (dB), the dip's height against the second mode's, the share
    of weights below the dip, and the test error that the measured fractions around it add."""
    rows = []
    for n in dip["networks"]:
        d, c = n["dip"], n["cost"]
        if d is None:
            rows.append([f"2×{n['H']} seed {n['seed']}", "one mode"] + ["—"] * 6)
            continue
        lo, hi = c["below"], c["above"]
        rows.append([f"2×{n['H']} seed {n['seed']}", _db(d["main_mode_db"], 2),
                     _db(d["second_mode_db"], 2), _db(d["dip_db"], 2),
                     f"{d['dip_over_second_mode']:.2f}", f"{100 * d['share_below']:.2f} %",
                     f"{lo['cost_pp']:+.2f} pp ({lo['removed_pct']} %)" if lo else "—",
                     f"{hi['cost_pp']:+.2f} pp ({hi['removed_pct']} %)" if hi else
                     "— (only 100 %)"])
    return (["network", "main mode (dB)", "second mode (dB)", "dip (dB)",
             "dip / second mode", "weights below the dip", "error added, measured just below",
             "error added, measured just above"], rows)


def _sensitivity(dip):
    """The largest change of the dip (dB) and of the share below it (pp) over the networks when
    the bandwidth is DIP_SENSITIVITY times larger, or None when a wider kernel loses a mode."""
    pairs = [(n["dip"], n["dip_wider_kernel"]) for n in dip["networks"] if n["dip"]]
    if any(w is None for _, w in pairs):
        return None
    return (max(abs(w["dip_db"] - d["dip_db"]) for d, w in pairs),
            max(100 * abs(w["share_below"] - d["share_below"]) for d, w in pairs))


TAIL_FIT_DB = 10.0  # outside_words: the lowest this many dB of the histogram set the tail's slope


def left_tail_estimate(entry, fit_db=TAIL_FIT_DB):
    """How many weights the SNR histogram's left tail, extended below its range at the slope of
    its lowest ``fit_db`` dB (a straight line fitted to the log counts), would hold: an
    extrapolation, to say on which side of the range ``snr_outside``'s weights likely lie.
    None when the lowest bins are empty or the tail does not fall to the left."""
    import numpy as np
    lo, hi, n = DB_EDGES
    width = (hi - lo) / n
    k = int(round(fit_db / width))
    h = np.asarray(entry["snr_hist"][:k], dtype=float)
    if h[0] == 0 or (h == 0).any():
        return None
    slope, icpt = np.polyfit(np.arange(k) * width, np.log(h), 1)
    if slope <= 0:
        return None
    q = np.exp(-slope * width)  # each bin further left holds q times the one before
    return float(np.exp(icpt) * q / (1 - q))


def outside_words(entry, shares=""):
    """One bullet on the weights outside the stored histogram's range of ``entry`` (the network
    drawn): how many, that the histogram does not record their side, and where its left tail,
    extended, puts them (an extrapolation); "" when there are none."""
    out = entry.get("snr_outside") or 0
    if not out:
        return ""
    lo, hi, _ = DB_EDGES
    est = left_tail_estimate(entry)
    return (f"- Not drawn or counted: the {out:,} weights ({100 * out / entry['n_weights']:.2f} %)"
            f" of the network drawn whose SNR lies outside {lo:g} to {hi:g} dB (the histogram "
            "keeps their count, not their side"
            + (f"; its left tail, extended at the slope of its lowest {TAIL_FIT_DB:g} dB, would "
               f"hold about {est:,.0f} weights, an extrapolation, not measured: so most are "
               "likely weights with a mean near 0, the first to be pruned" if est else "")
            + f").{shares}")


def dip_text(dip, cuts=None, entry=None, method=True):
    """Notebook 04's reading of Figure 4 at the dip (Markdown bullets), every number from ``dip``
    (snr_dip.json's metrics): on how many networks the smoothed density has two modes, where
    they and the dip lie per width (mean [95 % t-interval] over the seeds), the share of weights
    below the dip, the measured cost of pruning around it (interpolated only where said), the
    bandwidth rule and how far a wider kernel moves the dip; ``cuts``: (fraction, dB) of a
    cut-off of the shown network to place against the modes; ``entry``: the network drawn, whose
    weights outside the histogram's range are accounted for (``outside_words``). Without
    ``method`` the last two (``dip_method_text``) give way to a pointer to docs/04_details.md."""
    ws = dip["widths"]
    n_all = sum(w["networks"] for w in ws.values())
    n_bi = sum(w["bimodal"] for w in ws.values())
    lines = ["**What it shows** (per width: mean over the seeds [95 % interval]).", ""]
    lines.append(f"- The smoothed SNR density has two modes on {n_bi} of the {n_all} networks.")
    for H, w in ws.items():
        if not w["bimodal"]:
            continue
        seeds = f"{w['bimodal']} seed{'s' if w['bimodal'] != 1 else ''}"
        lines.append(f"- 2×{H} ({seeds}): main mode at {_ci_words(w['main_mode_db'], unit=' dB')}, "
                     f"second mode at {_ci_words(w['second_mode_db'], unit=' dB')}, dip between "
                     f"them at {_ci_words(w['dip_db'], unit=' dB')}. Below the dip lie "
                     f"{_pct_ci(w['share_below'])} of the weights.")
        cost = []
        lo, hi = w.get("cost_below"), w.get("cost_above")
        if lo:
            cost.append(f"removing {lo['removed_pct']} % (the measured fraction just below the "
                        f"dip's share) adds {_ci_words(lo, unit=' pp')} of test error")
        if hi:
            cost.append(f"removing {hi['removed_pct']} % (just above it) adds "
                        f"{_ci_words(hi, unit=' pp')}")
        else:
            cost.append("no fraction between the dip's share and 100 % was measured")
        ip = w.get("cost_interpolated")
        tail = (f"; a straight line between the two, read at the dip's share, gives "
                f"{_ci_words(ip, unit=' pp')} (interpolated, not measured)" if ip else "")
        lines.append(f"  - Pruning up to the dip by SNR: " + "; ".join(cost) + tail + ".")
    if cuts:
        f, c = cuts
        lines.append(f"- The cut-off that removes {f} % of the weights of the network drawn lies "
                     f"at {c:.1f} dB: inside the main mode, not at the dip.")
    if not method:
        return "\n".join(lines + [DIP_METHOD_POINTER])
    return "\n".join(lines + [dip_method_text(dip, entry)])


DIP_METHOD_POINTER = ("- The dip's rule, its sensitivity and the weights outside the histogram: "
                      "[docs/04_details.md]"
                      "(../docs/04_details.md#figure-4s-dip-network-by-network).")


def dip_method_text(dip, entry=None):
    """The dip's rule (kernel, bandwidth, second-mode rule) and how far a wider kernel moves it
    (a Markdown bullet), then, for ``entry`` (the network drawn), its weights outside the
    histogram's range (``outside_words``)."""
    lines = []
    bws = [n["dip"]["bandwidth_db"] for n in dip["networks"] if n["dip"]]
    sens = _sensitivity(dip)
    rule = ("- How the dip is found: a Gaussian kernel density estimate on a 0.25 dB "
            "histogram of the SNRs, bandwidth by Silverman's rule of thumb ("
            f"{min(bws):.2f}–{max(bws):.2f} dB here); the main mode is its highest point, the "
            "second mode the other peak that rises most above the lowest point between the two "
            f"(counted only when by more than {MODE_Z:g} times the estimate's sampling sd, "
            "the large-sample sd of a kernel estimate, √(f / (n h 2√π)) at density f, with n "
            "weights and bandwidth h), and that lowest point is the dip.")
    if sens:
        rule += (f" With {DIP_SENSITIVITY:g} times the bandwidth the dip moves by at most "
                 f"{sens[0]:.2f} dB and the share below it by at most {sens[1]:.2f} pp.")
    else:
        rule += f" With {DIP_SENSITIVITY:g} times the bandwidth a network loses its second mode."
    lines.append(rule)
    if entry is not None and outside_words(entry):
        lines.append(outside_words(entry, _shares_words(dip, entry)))
    return "\n".join(lines)


def _shares_words(dip, entry):
    """" Of the network drawn, 99.31 % of the weights lie below its dip, 0.65 % above it and
    0.04 % outside the histogram's range (together 100 %)." (leading space), or ""."""
    x = next((n for n in dip.get("networks", []) if n["name"] == entry.get("name")), None)
    if not x or not x["dip"]:
        return ""
    out = (entry.get("snr_outside") or 0) / entry["n_weights"]
    below = x["dip"]["share_below"]
    return (f" Of the network drawn, {100 * below:.2f} % of the weights lie below its dip, "
            f"{100 * (1 - below - out):.2f} % above it and {100 * out:.2f} % outside the "
            "histogram's range.")


def dip_takeaway(dip):
    """One sentence for the answer and the takeaways: the dip's place and share per width and
    the measured cost just below it, from ``dip`` (snr_dip.json's metrics)."""
    ws = dip["widths"]
    n_all = sum(w["networks"] for w in ws.values())
    n_bi = sum(w["bimodal"] for w in ws.values())
    parts = []
    for H, w in ws.items():
        if w["bimodal"] and w.get("cost_below"):
            lo = w["cost_below"]
            parts.append(f"at 2×{H} the dip lies at {_ci_words(w['dip_db'], unit=' dB')} with "
                         f"{100 * w['share_below']['mean']:.1f} % of the weights below it, and "
                         f"removing {lo['removed_pct']} % adds {_ci_words(lo, unit=' pp')} of "
                         "test error")
    return (f"Figure 4's density has two modes on {n_bi} of {n_all} networks: "
            + "; ".join(parts) + ".")


SEED_MARKERS = ("o", "s", "^")  # Figure 4's last panel: the dip of seeds 0, 1, 2


def figure4(entry, dip=None, models=(), cuts=("75", "95")):
    """The paper's Figure 4 from a stored analysis, read at the dip: the SNR density (dB) of
    ``entry`` on a linear axis as in the paper and on a log axis with its smoothed density, modes
    and dip (``dip``: snr_dip.json's metrics); the share of weights above each SNR (1 − CDF) on a
    log axis, so that the few weights above the dip are visible, with the share above the dip;
    and the smoothed densities of ``models`` (snr.json's analyses), with each network's dip in
    an inset of its own (one row per width, a marker per seed). The cut-offs (black; the paper draws its 75 % one in red) and the
    dip (bluish green) differ in hue, and no line is red or orange; the widths differ in hue and
    line style."""
    import matplotlib.pyplot as plt
    import numpy as np
    lo, hi, n = DB_EDGES
    width = (hi - lo) / n
    counts = np.asarray(entry["snr_hist"], dtype=float)
    edges = np.linspace(lo, hi, n + 1)
    total = entry["n_weights"]
    dens = counts / (total * width)
    above = 1 - np.cumsum(counts) / total  # share of weights above each bin's upper edge
    filled = np.nonzero(counts)[0]  # every weight inside the histogram's range is drawn
    xlim = (edges[filled[0]], edges[filled[-1] + 1] + 2)  # the last bump whole
    ours = next((x for x in (dip or {}).get("networks", [])
                 if x["name"] == entry.get("name")), None)
    d = ours and ours["dip"]
    out = entry.get("snr_outside") or 0
    if d:  # counted on the histogram: the weights outside its range are left out
        above_dip = 1 - d["share_below"] - out / total
    c = OKABE_ITO
    fig, axes = plt.subplots(2, 2, figsize=(12, 7.6), constrained_layout=True)
    fig.get_layout_engine().set(hspace=0.06)  # the log panel's legend apart from the next title
    (a_lin, a_log), (a_cdf, a_all) = axes
    for ax in (a_lin, a_log):
        ax.stairs(dens, edges, fill=True, alpha=0.45, color=c["sky"], label="histogram")
        ax.set(xlabel="signal-to-noise ratio |μ|/σ (dB)", ylabel="density (per dB)", xlim=xlim)
    a_lin.set_title("density, linear axis (as the paper draws it)")
    a_lin.set_ylim(0, 1.2 * dens.max())  # the short legend sits left of the peak
    a_log.set_yscale("log")
    floor = 0.5 / (total * width)  # below one weight in a bin: the log axes hide no weight
    a_log.set_ylim(floor, 30 * dens.max())  # headroom: the legend sits above the density
    a_log.set_title("the same density, log axis: the second mode and the dip")
    if d:
        g, k = kde_db(entry["snr_hist"], d["bandwidth_db"])
        a_log.plot(g, k, color=c["blue"], lw=1.2, label=f"smoothed (bandwidth {d['bandwidth_db']:.2f} dB)")
        for key, lab, col in (("main_mode_db", "main mode", c["grey"]),
                              ("second_mode_db", "second mode", c["grey"])):
            a_log.axvline(d[key], color=col, ls="--", lw=1)
            a_log.annotate(f"{lab}\n{_db(d[key])} dB", (d[key], 3 * floor), fontsize=8,
                           ha="center", color="0.3",
                           bbox=dict(fc="white", ec="none", alpha=0.85, pad=1))
        for ax in (a_lin, a_log, a_cdf):
            ax.axvline(d["dip_db"], color=c["green"], lw=1.5,
                       label=f"dip {_db(d['dip_db'], 2)} dB: {100 * d['share_below']:.1f} % below"
                       if ax is not a_cdf else
                       f"dip: {100 * above_dip:.2f} % of weights above, "
                       f"{100 * d['share_below']:.2f} % below" + (
                           f",\n{100 * out / total:.2f} % outside the histogram's range"
                           if out else ""))
        # the second mode, too small to see on the linear axis, enlarged in an inset
        ins = a_lin.inset_axes([0.15, 0.24, 0.24, 0.34])  # left of the main mode's flank
        sel = (edges[:-1] >= d["dip_db"] - 3) & (edges[1:] <= xlim[1])
        ins.stairs(dens[sel], edges[:-1][sel].tolist() + [edges[1:][sel][-1]], fill=True,
                   alpha=0.45, color=c["sky"])
        ins.axvline(d["dip_db"], color=c["green"], lw=1.2)
        ins.set_xlim(d["dip_db"] - 3, xlim[1])
        ins.set_ylim(0, 1.3 * dens[sel & (edges[:-1] >= d["dip_db"])].max())
        ins.set_title(f"second mode ({_db(d['second_mode_db'])} dB), enlarged", fontsize=9)
        ins.tick_params(labelsize=9)
        ins.locator_params(axis="y", nbins=3)
        a_cdf.plot([d["dip_db"]], [above_dip], "o", color=c["green"], ms=5)
    for f, ls in zip([f for f in cuts if f in entry["cuts_db"]], (":", "-.", "--")):
        v = entry["cuts_db"][f]
        for ax in (a_lin, a_cdf):
            ax.axvline(v, color="k", ls=ls, lw=1.1, label=f"{f} % removed: < {v:.1f} dB"
                       + (" (red in the paper)" if f == "75" else ""))
    a_lin.legend(fontsize=8, loc="upper left")
    a_log.legend(fontsize=8, loc="upper left")  # in the headroom: it covers no data
    above = above - out / total  # counted on the histogram: the outside weights left out
    keep = above > 0.5 / total  # past the last filled bin 1 − CDF is 0, off a log axis
    a_cdf.plot(edges[1:][keep], above[keep], color=c["blue"],
               label="share of weights above" + (f"\n(the {out:,} outside the histogram's "
                                                 "range not counted)" if out else ""))
    a_cdf.set_yscale("log")
    a_cdf.set_ylim(0.5 / total, 3)
    a_cdf.set(xlabel="signal-to-noise ratio |μ|/σ (dB)", xlim=xlim,
              ylabel="share of weights above (log axis)",
              title="1 − CDF, log axis (the paper: CDF, linear): the weights a cut keeps")
    a_cdf.legend(fontsize=8, loc="lower left")
    if dip and models:
        styles, dips = {}, []
        by_name = {x["name"]: x for x in dip["networks"]}
        for m in models:
            x = by_name.get(m["name"])
            if x is None or x["dip"] is None:
                continue
            first = m["H"] not in styles
            col, ls = styles.setdefault(m["H"], ((c["blue"], "-"), (c["purple"], "--"),
                                                 (c["grey"], ":"))[len(styles) % 3])
            g, k = kde_db(m["snr_hist"], x["dip"]["bandwidth_db"])
            a_all.plot(g, k, color=col, ls=ls, lw=1.1, alpha=0.85)
            if first:  # the legend's handle: the curve
                a_all.plot([], [], ls=ls, color=col, label=f"2×{m['H']}")
            dips.append((m["H"], m["seed"], x["dip"]["dip_db"], col))
        # the dips, seed by seed, on an SNR axis of their own (an inset in the empty lower
        # left; its rows are the widths, so no marker sits on the density axis)
        ins = a_all.inset_axes([0.12, 0.11, 0.3, 0.19])
        rows = list(styles)
        for H, seed, dd, col in dips:  # within a width's row the seeds sit a little apart
            ins.plot([dd], [rows.index(H) + 0.25 * (seed % 3 - 1)], SEED_MARKERS[seed % 3],
                     mfc="white", mec=col, mew=1.2, ms=5)
        xs = [dd for *_, dd, _ in dips]
        ins.set_xlim(min(xs) - 0.3, max(xs) + 0.3)
        ins.set_ylim(-0.6, len(rows) - 0.4)
        ins.grid(axis="x", alpha=0.4)
        ins.set_yticks(range(len(rows)), [f"2×{H}" for H in rows])
        ins.set_title("each network's dip (dB)", fontsize=8, pad=3)
        ins.tick_params(labelsize=8)
        ins.locator_params(axis="x", nbins=4)
        for sd, mk in enumerate(SEED_MARKERS):
            a_all.plot([], [], mk, mfc="white", mec="0.3", mew=1.2, ms=6, label=f"seed {sd}'s dip")
        a_all.set_yscale("log")
        a_all.set_ylim(floor, 2 * dens.max())
        a_all.set(xlabel="signal-to-noise ratio |μ|/σ (dB)", ylabel="smoothed density (per dB)",
                  xlim=xlim, title="every network (one line per seed; inset: the dips)")
        a_all.legend(fontsize=8, loc="upper left", ncol=2)
    top = edges[filled[-1] + 1]  # the highest filled bin's upper edge
    gap = (f" (the x-axes end past the last weight: none lies between {top:.0f} and {hi:g} dB)"
           if top < hi else "")
    outside = (f"; {out:,} ({100 * out / total:.2f} %) with an SNR outside {lo:g} to {hi:g} dB "
               f"not drawn (side not recorded; most likely below {lo:g} dB)"
               if out else "")
    fig.suptitle(f"2×{entry['H']}, seed {entry['seed']}: {entry['n_weights']:,} weights"
                 f"{outside}\n{gap.strip(' ()')}" if gap else
                 f"2×{entry['H']}, seed {entry['seed']}: {entry['n_weights']:,} weights{outside}")
    return fig


def dip_row_words(dip, H):
    """Figure 4's cell for the README's status row (a few words, from snr_dip.json's metrics):
    on how many networks the density has two modes, and at width ``H`` the dip, the share of
    weights below it and the measured cost just below that share, with its 95 % interval."""
    ws = dip["widths"]
    n_all = sum(w["networks"] for w in ws.values())
    n_bi = sum(w["bimodal"] for w in ws.values())
    w = ws.get(str(H))
    text = f"two modes on {n_bi} of {n_all} nets"
    if w and w["bimodal"] and w.get("cost_below"):
        lo = w["cost_below"]
        text += (f"; dip {_db(w['dip_db']['mean'], 2)} dB, {100 * w['share_below']['mean']:.1f} % "
                 f"of weights below; {lo['removed_pct']} % removed: {_ci_words(lo, unit=' pp')}")
    return text
