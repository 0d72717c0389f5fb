"""Validation-only searches on Ray Tune: one function runs a declared search space.

Every trial is an ordinary MNIST-style training (``classification.RunConfig``) that reports its
validation error after every epoch; ASHA stops poor trials early. No test number is computed
inside a sweep: trials evaluate the validation set only. The choice is made from the sweep's
results file alone (``choose``): the configuration, and the number of epochs, with the lowest
validation error.

Local by default (``ray.init`` sized to this machine, no dashboard); on a cluster when
``RAY_ADDRESS`` is set (``ray start --head`` on the head node, then the same command). A killed
sweep resumes with ``Tuner.restore``: finished trials are not trained again, unfinished ones
resume from their own checkpoints. Ray's storage (with per-trial TensorBoard logs) lives under
``<checkpoints>/ray/``, git-ignored. Each sweep writes ``results/<notebook>/sweep/<name>.json``.

Needs the optional extra: ``pip install -e '.[sweep]'``.
"""
import itertools
import json
import math
import os
import time
from dataclasses import asdict, replace

import torch

from .classification import RunConfig, build_model
from .metrics import error_rate, predict
from .train import fit, load_checkpoint
from .utils import checkpoints_dir, results_dir, save_results

RULES = {
    "val_error": ("the configuration and number of epochs (a multiple of epoch_step, or the last "
                  "epoch reported) with the lowest validation error of the posterior-mean weights "
                  "(the network itself for SGD and dropout); ties go to fewer epochs, then to the "
                  "earlier trial"),
    "val_nll": ("the configuration and number of epochs (a multiple of epoch_step, or the last "
                "epoch reported) with the lowest validation negative log-likelihood of the "
                "method's predictive distribution (the network; the average over eval_samples "
                "dropout masks or weight samples); ties go to fewer epochs, then to the earlier "
                "trial"),
}
PREDICTIVE = {"sgd": "deterministic", "dropout": "mc_dropout", "bbb_gaussian": "bbb",
              "bbb_mixture": "bbb"}


def expand(space, seed=100):
    """Return the distinct RunConfigs of a declared space: ``base`` settings with every
    combination of ``grid`` (RunConfig field -> list of values; a value that is a dict sets
    several fields at once, e.g. ``start``: {mu_init, init_from}); duplicates (e.g. ``mu_init``
    under a warm start, which ignores it) appear once."""
    base, grid = dict(space.get("base", {})), dict(space.get("grid", {}))
    base.setdefault("seed", seed)
    fields = set(RunConfig.__dataclass_fields__)
    named = set(base) | {k for k, vs in grid.items() if not any(isinstance(v, dict) for v in vs)}
    named |= {f for vs in grid.values() for v in vs if isinstance(v, dict) for f in v}
    unknown = sorted(named - fields)
    if unknown:
        raise ValueError(f"{unknown} are not RunConfig settings; known: {sorted(fields)}")
    keys = list(grid)
    configs = {}
    for values in itertools.product(*(grid[k] for k in keys)):
        settings = dict(base)
        for key, value in zip(keys, values):
            settings.update(value if isinstance(value, dict) else {key: value})
        cfg = RunConfig(**settings)
        configs.setdefault(cfg.name, cfg)
    return list(configs.values())


def _trial_checkpoint(cfg, notebook):
    return checkpoints_dir() / notebook / "sweep" / f"{cfg.name}.pt"


def trainable(config):
    """Ray Tune function trainable: train one configuration, report validation numbers only."""
    from ray import tune
    train_trial(config, tune.report)


def train_trial(config, report_fn):
    """Train one configuration of a sweep, calling ``report_fn(metrics)`` after every epoch
    with validation numbers only (the test set is dropped before training)."""
    from .data import load_images
    started = time.time()
    cfg = RunConfig.from_dict(config["cfg"])
    torch.set_num_threads(int(config.get("threads", 1)))
    metric = config.get("metric", "val_error")
    data = load_images(cfg.data, scale="paper", n_train=config.get("n_train"),
                       n_test=config.get("n_eval"))
    data.x_test, data.y_test = data.x_test[:0], data.y_test[:0]  # a sweep never sees the test set
    torch.manual_seed(cfg.seed)
    model = build_model(cfg, data.x_train.shape[1])
    if cfg.init_from is not None:  # the driver trained the source network before the trials
        from .layers import copy_means
        copy_means(model, _load_source(cfg.init_source(), config["notebook"]))
        torch.manual_seed(cfg.seed)
    crash = config.get("_crash_once_at_epoch")  # tests: a trial that fails once, on purpose
    marker = config.get("_crash_marker")

    def report(row, net):
        if crash and row["epoch"] == crash and marker and not os.path.exists(marker):
            open(marker, "w").close()
            raise RuntimeError("a trial failing on purpose (sweep restore test)")
        metrics = {"epoch": row["epoch"], "val_error": row["val_error"], "loss": row["loss"],
                   "train_wall_s": row["wall_s"], "started_at": started}
        gen = torch.get_rng_state()
        torch.manual_seed(cfg.seed + 12345)
        if metric == "val_nll":  # the method's predictive distribution on the validation set
            from .metrics import nll
            from .uncertainty import sample_probs
            probs = sample_probs(PREDICTIVE[cfg.method], net, data.x_val,
                                 config.get("eval_samples", 10)).mean(0)
            metrics["val_nll"] = nll(probs, data.y_val)
            metrics["val_error_predictive"] = error_rate(probs, data.y_val)
        if cfg.bayesian and row["epoch"] == cfg.epochs:  # both BBB predictors, at the end
            ens = error_rate(predict(net, data.x_val, n_samples=config.get("eval_samples", 10))
                             .mean, data.y_val)
            metrics["val_error_ensemble"] = ens
        torch.set_rng_state(gen)
        report_fn(metrics)

    fit(model, data, epochs=cfg.epochs, lr=cfg.lr, batch_size=cfg.batch_size,
        n_samples=cfg.samples, kl_weighting=cfg.kl_weighting if cfg.bayesian else "none",
        optimizer=cfg.optimizer, momentum=cfg.momentum, seed=cfg.seed,
        checkpoint=_trial_checkpoint(cfg, config["notebook"]), checkpoint_every=5,
        eval_sets=("val",), lr_decay=None if cfg.lr_decay == 1.0 else cfg.lr_decay,
        desc=cfg.name, on_epoch=report, weight_decay=cfg.weight_decay)


def _init_ray(cpus=None):
    """Start (or join) Ray: the cluster at $RAY_ADDRESS, else a local one sized to this machine."""
    import logging

    import ray
    if ray.is_initialized():
        return
    address = os.environ.get("RAY_ADDRESS")
    os.environ.setdefault("RAY_worker_niceness", "0")  # trials are the job: no lower priority
    env = {k: v for k, v in os.environ.items() if k.startswith("BBB_")}
    kwargs = dict(include_dashboard=False, log_to_driver=False, logging_level=logging.WARNING)
    if address:
        ray.init(address=address, runtime_env={"env_vars": env}, **kwargs)
    else:
        ray.init(num_cpus=cpus or os.cpu_count(), **kwargs)


def _source_path(src, notebook):
    return checkpoints_dir() / notebook / "sweep" / f"{src.name}.pt"


def _source_networks(configs, data, notebook):
    """Train (or load) the deterministic networks that warm-started trials begin from, here in
    the driver (validation only, like the trials), so parallel trials never train one twice."""
    sources = {c.init_source().name: c.init_source() for c in configs if c.init_from}
    for src in sources.values():
        torch.manual_seed(src.seed)
        model = build_model(src, data.x_train.shape[1])
        fit(model, data, epochs=src.epochs, lr=src.lr, batch_size=src.batch_size,
            kl_weighting="none", optimizer=src.optimizer, momentum=src.momentum, seed=src.seed,
            checkpoint=_source_path(src, notebook), checkpoint_every=5, eval_sets=("val",),
            lr_decay=None if src.lr_decay == 1.0 else src.lr_decay,
            desc=f"{src.method} (warm-start source)")
    return sorted(sources)


def _load_source(src, notebook):
    model = build_model(src)
    model.load_state_dict(load_checkpoint(_source_path(src, notebook))["model"])
    return model


def _ray_trials(name, configs, fixed, profile, max_epochs, grace, reduction, threads_per_trial,
                cpus, quiet, metric, epoch_step, notebook):
    """Run the trials on Ray Tune with ASHA (restoring an interrupted experiment); return
    (trial rows, the Ray experiment's name)."""
    from ray import tune
    from ray.tune.schedulers import ASHAScheduler
    _init_ray(cpus)
    storage = str((checkpoints_dir() / "ray" / notebook).resolve())
    exp_name = f"{name}_{profile}"
    path = os.path.join(storage, exp_name)
    trial_fn = tune.with_resources(trainable, {"cpu": threads_per_trial})
    if tune.Tuner.can_restore(path):
        tuner = tune.Tuner.restore(path, trainable=trial_fn, resume_unfinished=True,
                                   restart_errored=True)
    else:
        space_ = {"cfg": tune.grid_search([asdict(c) for c in configs]), **fixed}
        scheduler = ASHAScheduler(time_attr="epoch", max_t=max_epochs, grace_period=grace,
                                  reduction_factor=reduction)
        tuner = tune.Tuner(trial_fn, param_space=space_,
                           tune_config=tune.TuneConfig(metric=metric, mode="min",
                                                       scheduler=scheduler),
                           run_config=tune.RunConfig(name=exp_name, storage_path=storage,
                                                     verbose=0 if quiet else 1))
    grid = tuner.fit()
    return [_trial_row(r, epoch_step, metric) for r in grid], exp_name


class _LocalResult:
    """The parts of a Ray result ``_trial_row`` reads, for a trial run in this process."""

    def __init__(self, config, reports, error):
        import pandas as pd
        self.config, self.error = config, error
        self.metrics_dataframe = pd.DataFrame(reports) if reports else None


def _local_trial(cfg_dict, fixed, epoch_step, metric):
    reports, error = [], None
    config = {"cfg": cfg_dict, **fixed}
    try:
        train_trial(config, reports.append)
    except Exception as err:  # noqa: BLE001 - recorded in the row, like Ray's errored trials
        error = err
    return _trial_row(_LocalResult(config, reports, error), epoch_step, metric)


def run_sweep(name, space, notebook="01_mnist_classification", profile="default",
              max_epochs=60, grace=5, reduction=3, epoch_step=5, threads_per_trial=1,
              cpus=None, seed=100, n_train=None, n_eval=None, eval_samples=10, data=None,
              extra_config=None, quiet=True, metric="val_error", executor="ray"):
    """Run the sweep ``name`` over ``space`` (see ``expand``); return its results record.

    Each trial trains for at most ``max_epochs`` epochs; ASHA (grace period ``grace``, reduction
    ``reduction``) stops the poor ones; ``metric`` ('val_error' or 'val_nll', see ``RULES``) is
    what ASHA and the choice minimise. ``executor='local'`` runs the trials one after the other
    in this process, without Ray and without early stopping (for the seconds-long smoke profile;
    the results file says which executor ran). A sweep with an existing Ray experiment of the same name
    is restored (finished trials are kept, errored and unfinished ones rerun or resumed). The
    record is written to ``results/<notebook>/sweep/<name>.json`` and returned; trials that
    errored are listed with their error, and ``complete`` says whether every trial finished.
    """
    os.environ.setdefault("RAY_AIR_NEW_OUTPUT", "0")  # no per-trial tables in notebooks and logs
    if metric not in RULES:
        raise ValueError(f"metric must be one of {sorted(RULES)}, got {metric!r}")
    configs = [replace(c, epochs=max_epochs) for c in expand(space, seed=seed)]
    if data is None:
        from .data import load_images
        data = load_images(configs[0].data, scale="paper", n_train=n_train, n_test=n_eval)
    sources = _source_networks(configs, data, notebook)
    t0 = time.perf_counter()
    fixed = {"notebook": notebook, "threads": threads_per_trial, "n_train": n_train,
             "n_eval": n_eval, "eval_samples": eval_samples, "metric": metric,
             **(extra_config or {})}
    if executor == "local":
        trials = [_local_trial(asdict(c), fixed, epoch_step, metric) for c in configs]
        exp_name = None
    elif executor == "ray":
        trials, exp_name = _ray_trials(name, configs, fixed, profile, max_epochs, grace,
                                       reduction, threads_per_trial, cpus, quiet, metric,
                                       epoch_step, notebook)
    else:
        raise ValueError(f"executor must be 'ray' or 'local', got {executor!r}")
    wall = time.perf_counter() - t0
    trials.sort(key=lambda t: t["name"])
    chosen = choose(trials)
    record_config = {"space": _jsonable_space(space), "max_epochs": max_epochs,
                     "executor": executor,
                     "scheduler": {"name": "ASHA", "time_attr": "epoch", "grace_period": grace,
                                   "reduction_factor": reduction} if executor == "ray" else None,
                     "epoch_step": epoch_step, "threads_per_trial": threads_per_trial,
                     "metric": metric, "eval_samples": eval_samples,
                     "seed": seed, "n_train": n_train, "n_eval": n_eval,
                     "warm_start_sources": sources, "ray_experiment": exp_name}
    budget = {"trials": len(trials), "max_epochs_per_trial": max_epochs,
              "trial_epochs_run": sum(t["epochs_run"] for t in trials),
              "train_wall_s": sum(t["wall_s"] or 0.0 for t in trials)}
    save_results(notebook, f"sweep/{name}", config=record_config,
                 metrics={"trials": trials, "chosen": chosen, "budget": budget,
                          "complete": all(t["error"] is None for t in trials)},
                 profile=profile, seed=seed, wall_s=wall,
                 extra={"selected_on": "validation", "rule": RULES[metric], "test_evaluated": False,
                        "ray": _ray_version() if executor == "ray" else None,
                        "cluster": (os.environ.get("RAY_ADDRESS") or "local")
                        if executor == "ray" else "this process (no Ray)"})
    return load_sweep(name, notebook)


def _ray_version():
    import ray
    return ray.__version__


def _trial_row(result, epoch_step, metric="val_error"):
    """Return the results-file row of one Ray trial: its config and validation curve."""
    cfg = RunConfig.from_dict(result.config["cfg"])
    df = result.metrics_dataframe
    curve, started, wall, ens, err_curve = [], None, None, None, []
    if df is not None and len(df) and "epoch" in df and metric in df:
        df = df.dropna(subset=["epoch", metric]).drop_duplicates("epoch", keep="last")
        df = df.sort_values("epoch")
        curve = [[int(e), float(v)] for e, v in zip(df["epoch"], df[metric])]
        err_curve = [[int(e), float(v)] for e, v in zip(df["epoch"], df["val_error"])]
        started = float(df["started_at"].iloc[-1])
        wall = float(df["train_wall_s"].iloc[-1])
        if "val_error_ensemble" in df and df["val_error_ensemble"].notna().any():
            ens = float(df["val_error_ensemble"].dropna().iloc[-1])
    if err_curve and err_curve[0][0] > 1 and "notebook" in result.config:
        early = _history_before(cfg, result.config["notebook"], err_curve[0][0])
        err_curve = early + err_curve
        if metric == "val_error":  # the fit history holds the validation error, not the NLL
            curve = early + curve
    best = _best_epoch(curve, epoch_step)
    row = {"name": cfg.name, "config": {k: v for k, v in asdict(cfg).items() if k != "tags"},
           "metric": metric, "val": best[1] if best else None,
           "best_epoch": best[0] if best else None,
           "epochs_run": curve[-1][0] if curve else 0,
           "stopped_early": bool(curve) and curve[-1][0] < cfg.epochs and result.error is None,
           "val_error_ensemble_last": ens, "wall_s": wall, "started_at": started,
           "val_curve": curve, "val_error_curve": err_curve,
           "error": None if result.error is None else str(result.error).splitlines()[0][:300]}
    # the validation error at the chosen epoch (the metric itself when it is the error)
    at = dict(map(tuple, err_curve)).get(row["best_epoch"]) if best else None
    row["val_error"] = at
    return row


def _history_before(cfg, notebook, first_epoch):
    """Return [[epoch, val_error]] of the epochs before ``first_epoch`` from the trial's own fit
    checkpoint: a trial resumed after ``Tuner.restore`` reports only the epochs it ran since."""
    path = _trial_checkpoint(cfg, notebook)
    if not path.exists():
        return []
    history = load_checkpoint(path).get("history", [])
    return [[int(h["epoch"]), float(h["val_error"])] for h in history
            if h["epoch"] < first_epoch and h.get("val_error") is not None]


def splice_resumed_trials(name, notebook="01_mnist_classification"):
    """Give the trials of a sweep that resumed after a restore their early epochs back (from
    their fit checkpoints), choose again and rewrite the results file; return the changed
    trials' names. Validation numbers only; nothing is trained."""
    import datetime

    from .utils import atomic_write_bytes
    rec = load_sweep(name, notebook)
    changed = []
    for t in rec["metrics"]["trials"]:
        curve = t.get("val_error_curve") or []
        early = _history_before(RunConfig.from_dict(t["config"]), notebook, curve[0][0]
                                ) if curve and curve[0][0] > 1 else []
        if not early:
            continue
        t["val_error_curve"] = early + curve
        if t["metric"] == "val_error":
            t["val_curve"] = early + t["val_curve"]
        t["best_epoch"], t["val"] = _best_epoch(t["val_curve"], rec["config"]["epoch_step"])
        t["val_error"] = dict(map(tuple, t["val_error_curve"])).get(t["best_epoch"])
        changed.append(t["name"])
    if changed:
        rec["metrics"]["chosen"] = choose(rec["metrics"]["trials"])
        rec["spliced_after_restore"] = {
            "trials": changed, "by": "helpers.sweep.splice_resumed_trials",
            "at": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")}
        path = results_dir() / notebook / "sweep" / f"{name}.json"
        atomic_write_bytes(path, (json.dumps(rec, indent=2) + "\n").encode())
    return changed


def _best_epoch(curve, epoch_step):
    """Return (epoch, val_error) with the lowest validation error among the epochs that are a
    multiple of ``epoch_step`` and the last one reported (ties: fewer epochs)."""
    if not curve:
        return None
    last = curve[-1][0]
    allowed = [(e, v) for e, v in curve if e % epoch_step == 0 or e == last]
    return min(allowed, key=lambda ev: (ev[1], ev[0]))


def choose(trials):
    """Return the chosen trial's config (epochs set to its best epoch) and its validation
    numbers, from the trial rows of a results file (validation numbers only)."""
    done = [t for t in trials if t.get("val", t.get("val_error")) is not None]
    if not done:
        return None
    key = lambda it: (it[1].get("val", it[1].get("val_error")), it[1]["best_epoch"], it[0])  # noqa: E731
    best = min(enumerate(done), key=key)[1]
    cfg = {**best["config"], "epochs": best["best_epoch"]}
    return {"name": best["name"], "config": cfg, "metric": best.get("metric", "val_error"),
            "val": best.get("val", best.get("val_error")), "val_error": best.get("val_error"),
            "epochs": best["best_epoch"], "stopped_early": best["stopped_early"]}


def chosen_config(name, notebook="01_mnist_classification", seed=None, **overrides):
    """Return the RunConfig a sweep's results file chose (with ``seed`` and overrides)."""
    rec = load_sweep(name, notebook)
    chosen = rec["metrics"]["chosen"]
    if chosen is None:
        raise ValueError(f"sweep {name!r} has no finished trial: rerun it")
    cfg = RunConfig.from_dict(chosen["config"])
    if seed is not None:
        overrides["seed"] = seed
    return replace(cfg, **overrides)


def load_sweep(name, notebook="01_mnist_classification"):
    """Return the results record of sweep ``name`` (FileNotFoundError names the command)."""
    path = results_dir() / notebook / "sweep" / f"{name}.json"
    if not path.exists():
        raise FileNotFoundError(f"no sweep results at {path}: run `make sweep ONLY={notebook[:2]}`")
    return json.loads(path.read_text())


def _jsonable_space(space):
    return json.loads(json.dumps(space, default=str))


def trial_epochs(space, max_epochs, grace, reduction):
    """Return (trials, the most epochs ASHA can spend): the size of a sweep before it runs.

    The bound assumes every rung keeps 1/reduction of the trials that reach it."""
    n = len(expand(space))
    rungs, r = [], grace
    while r < max_epochs:
        rungs.append(r)
        r *= reduction
    total, alive, prev = 0.0, n, 0
    for rung in rungs + [max_epochs]:
        total += alive * (rung - prev)
        prev, alive = rung, max(1, math.ceil(alive / reduction))
    return n, int(total)




def ensure_sweeps(notebook, profile, run_missing=True, names=None):
    """Return {name: results record} for the sweeps ``profile`` (a ``get_profile`` namespace)
    declares: read back from results/, or run now (``run_missing``) when absent (else left out)."""
    out = {}
    sw = profile.sweep
    for name in names or profile.sweeps:
        try:
            out[name] = load_sweep(name, notebook)
            continue
        except FileNotFoundError:
            if not run_missing:
                continue
        out[name] = run_sweep(name, profile.sweeps[name], notebook=notebook,
                              profile=profile.profile, max_epochs=sw["max_epochs"],
                              grace=sw["grace"], reduction=sw["reduction"],
                              epoch_step=sw["epoch_step"], seed=sw["seed"],
                              n_train=profile.n_train, n_eval=profile.n_eval,
                              eval_samples=sw.get("eval_samples", profile.eval_samples),
                              metric=sw.get("metric", "val_error"),
                              executor=sw.get("executor", "ray"))
    return out
