"""Validation-only searches on Ray Tune: the engine runs whatever trial it is handed.

A search is a declared space (``base`` settings with every combination of ``grid``) and a
``Trial``, the experiment's side of it: how settings become a configuration, how one
configuration trains and reports its validation numbers after every epoch, and the rule its
choice follows. This module knows nothing else of any experiment (it imports none): a space
names its trial as ``"module:attribute"`` (``space["trial"]``, data that the profiles declare) or
the caller hands a ``Trial`` over. ASHA stops poor trials early; the choice is made from the
sweep's results file alone (``choose``): the configuration, and the number of epochs, with the
lowest validation number. No test number is computed inside a sweep.

Where the trials run (``resolve_executor``): the executor the profile declares ('ray', or
'local': one after another in this process, no Ray, for the seconds-long smoke profile), unless
``$BBB_SWEEP_EXECUTOR`` names one, or ``$RAY_ADDRESS`` points at a cluster (``ray start --head``
on the head node, then ``RAY_ADDRESS=auto make sweep``): then every sweep runs there, the smoke
profile's too. The results file records the executor, why, and the cluster (address, nodes,
CPUs). A killed sweep resumes with ``Tuner.restore``: finished trials are not trained again,
unfinished ones resume from their own checkpoints. Ray's storage (with per-trial TensorBoard
logs) lives under ``<checkpoints>/ray/``, git-ignored. Each sweep writes
``results/<notebook>/sweep/<name>.json``.

Needs the optional extra for Ray: ``pip install -e '.[sweep]'``.
"""
import datetime
import importlib
import itertools
import json
import math
import os
import time
from dataclasses import dataclass
from typing import Callable, Mapping, Optional

from .utils import atomic_write_bytes, checkpoints_dir, results_dir, save_results

EXECUTORS = ("ray", "local")
EXECUTOR_ENV = "BBB_SWEEP_EXECUTOR"


@dataclass(frozen=True)
class Trial:
    """What the engine is handed: an experiment's side of a search.

    ``make(settings) -> config``: a validated, JSON-able configuration dict from the settings of
    one grid point (a ValueError names unknown settings); configurations hold ``epochs`` (the
    engine sets it to the sweep's ``max_epochs``, the choice to the chosen epoch) and ``seed``.
    ``name(config) -> str``: the configuration's unique name (rows, checkpoints, duplicates).
    ``train(trial_config, report)``: train ``trial_config["cfg"]`` (the other keys: the sweep's
    fixed settings: notebook, threads, n_train, n_eval, eval_samples, metric) and call
    ``report(metrics)`` after every epoch with ``epoch``, ``val_error``, the metric,
    ``train_wall_s`` and ``started_at`` (validation numbers only); the Ray trainable's body.
    ``rules``: metric -> the rule the choice follows, in words (the metrics it can minimise).
    ``prepare(configs, fixed, data) -> [names]``: optional, run once in the driver before the
    trials (e.g. the networks that warm-started trials begin from); the names are recorded.
    ``history(config, notebook, first_epoch) -> [[epoch, val_error]]``: optional, the epochs a
    trial resumed after a restore ran before ``first_epoch`` (Ray reports only the later ones).
    """
    make: Callable[[dict], dict]
    name: Callable[[dict], str]
    train: Callable[[dict, Callable[[dict], None]], None]
    rules: Mapping[str, str]
    prepare: Optional[Callable] = None
    history: Optional[Callable] = None


def resolve_trial(trial):
    """Return the ``Trial`` that ``trial`` names: itself, or ``"module:attribute"``."""
    if isinstance(trial, Trial):
        return trial
    if not isinstance(trial, str) or trial.count(":") != 1:
        raise ValueError(f"a sweep needs a Trial, or its name as 'module:attribute' (a space's "
                         f"'trial' entry, e.g. 'helpers.classification_trial:TRIAL'), got "
                         f"{trial!r}")
    module, attr = trial.split(":")
    found = getattr(importlib.import_module(module), attr, None)
    if not isinstance(found, Trial):
        raise ValueError(f"{trial!r} is not a helpers.sweep.Trial (found {type(found).__name__})")
    return found


def _trial_of(space, trial):
    return resolve_trial(trial if trial is not None else space.get("trial"))


def resolve_executor(declared="ray"):
    """Return (executor, why): ``$BBB_SWEEP_EXECUTOR`` when set, else 'ray' when ``$RAY_ADDRESS``
    points at a cluster (a sweep never ignores the cluster it was sent to), else ``declared``."""
    forced = os.environ.get(EXECUTOR_ENV)
    if forced:
        if forced not in EXECUTORS:
            raise ValueError(f"${EXECUTOR_ENV} must be one of {EXECUTORS}, got {forced!r}")
        return forced, f"${EXECUTOR_ENV}"
    if declared not in EXECUTORS:
        raise ValueError(f"executor must be one of {EXECUTORS}, got {declared!r}")
    if os.environ.get("RAY_ADDRESS") and declared != "ray":
        return "ray", "$RAY_ADDRESS"
    return declared, "declared"


def expand(space, seed=100, trial=None):
    """Return the distinct configurations of a declared space: ``base`` settings with every
    combination of ``grid`` (setting -> list of values; a value that is a dict sets several
    settings at once, e.g. ``start``: {mu_init, init_from}), each made by the trial (``trial``, else
    ``space['trial']``); duplicates (e.g. ``mu_init`` under a warm start, which ignores it)
    appear once."""
    trial = _trial_of(space, trial)
    base, grid = dict(space.get("base", {})), dict(space.get("grid", {}))
    base.setdefault("seed", seed)
    keys = list(grid)
    configs = {}
    for values in itertools.product(*(grid[k] for k in keys)):
        settings = dict(base)
        for key, value in zip(keys, values):
            settings.update(value if isinstance(value, dict) else {key: value})
        config = trial.make(settings)
        configs.setdefault(trial.name(config), config)
    return list(configs.values())


def _ray_trainable(train):
    """Return the Ray Tune function trainable that runs ``train`` (reports go to Tune)."""
    def trainable(config):
        from ray import tune
        train(config, tune.report)
    return trainable


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


def _ray_cluster():
    """Return what the results file says of the Ray cluster the trials ran on."""
    import ray
    nodes = [n for n in ray.nodes() if n.get("Alive")]
    return {"address": ray.get_runtime_context().gcs_address,
            "requested": os.environ.get("RAY_ADDRESS") or "local",
            "nodes": len(nodes), "cpus": ray.cluster_resources().get("CPU"),
            "ray": ray.__version__}


def _ray_trials(trial, name, configs, fixed, profile, max_epochs, grace, reduction,
                threads_per_trial, cpus, quiet, metric, epoch_step, notebook):
    """Run the trials on Ray Tune with ASHA (restoring an interrupted experiment); return
    (trial rows, the Ray experiment's name, the cluster)."""
    from ray import tune
    from ray.tune.schedulers import ASHAScheduler
    _init_ray(cpus)
    storage = str((checkpoints_dir() / "ray" / notebook).resolve())
    exp_name = f"{name}_{profile}"
    path = os.path.join(storage, exp_name)
    trial_fn = tune.with_resources(_ray_trainable(trial.train), {"cpu": threads_per_trial})
    if tune.Tuner.can_restore(path):
        tuner = tune.Tuner.restore(path, trainable=trial_fn, resume_unfinished=True,
                                   restart_errored=True)
    else:
        space_ = {"cfg": tune.grid_search(configs), **fixed}
        scheduler = ASHAScheduler(time_attr="epoch", max_t=max_epochs, grace_period=grace,
                                  reduction_factor=reduction)
        tuner = tune.Tuner(trial_fn, param_space=space_,
                           tune_config=tune.TuneConfig(metric=metric, mode="min",
                                                       scheduler=scheduler),
                           run_config=tune.RunConfig(name=exp_name, storage_path=storage,
                                                     verbose=0 if quiet else 1))
    grid = tuner.fit()
    return [_trial_row(trial, r, epoch_step, metric) for r in grid], exp_name, _ray_cluster()


class _LocalResult:
    """The parts of a Ray result ``_trial_row`` reads, for a trial run in this process."""

    def __init__(self, config, reports, error):
        import pandas as pd
        self.config, self.error = config, error
        self.metrics_dataframe = pd.DataFrame(reports) if reports else None


def run_local_trial(trial, config, fixed, epoch_step=5, metric="val_error"):
    """Run one trial of a search here, in this process, and return its results-file row (what
    the 'local' executor does for each trial): for a driver that shares a search's trials among
    processes and records each trial by itself. ``fixed``: the sweep's fixed settings (notebook,
    threads, n_train, n_eval, eval_samples, metric, ...). An exception in the trial is kept in
    the row's ``error`` (the curve up to it stays); a resumed trial's early epochs come from the
    trial's ``history``."""
    if metric not in trial.rules:
        raise ValueError(f"metric must be one of {sorted(trial.rules)}, got {metric!r}")
    return _local_trial(trial, config, {**fixed, "metric": metric}, epoch_step, metric)


def _local_trial(trial, config, fixed, epoch_step, metric):
    reports, error = [], None
    trial_config = {"cfg": config, **fixed}
    try:
        trial.train(trial_config, reports.append)
    except Exception as err:  # noqa: BLE001 - recorded in the row, like Ray's errored trials
        error = err
    return _trial_row(trial, _LocalResult(trial_config, reports, error), epoch_step, metric)


def run_sweep(name, space, notebook="01_mnist_classification", profile="default",
              max_epochs=60, grace=5, reduction=3, epoch_step=5, threads_per_trial=1,
              cpus=None, seed=100, n_train=None, n_eval=None, eval_samples=10, data=None,
              extra_config=None, quiet=True, metric="val_error", executor="ray", trial=None):
    """Run the sweep ``name`` over ``space`` (see ``expand``) with ``trial`` (a ``Trial`` or its
    'module:attribute' name; default ``space['trial']``); return its results record.

    Each trial trains for at most ``max_epochs`` epochs; ASHA (grace period ``grace``, reduction
    ``reduction``) stops the poor ones; ``metric`` (one of the trial's ``rules``) is what ASHA
    and the choice minimise. ``executor``: the declared one (``resolve_executor`` may override
    it); 'local' runs the trials one after another in this process, without Ray and without
    early stopping. A sweep with an existing Ray experiment of the same name is restored
    (finished trials are kept, errored and unfinished ones rerun or resumed). The record is
    written to ``results/<notebook>/sweep/<name>.json`` and returned; trials that errored are
    listed with their error, and ``complete`` says whether every trial finished.
    """
    os.environ.setdefault("RAY_AIR_NEW_OUTPUT", "0")  # no per-trial tables in notebooks and logs
    trial = _trial_of(space, trial)
    if metric not in trial.rules:
        raise ValueError(f"metric must be one of {sorted(trial.rules)}, got {metric!r}")
    executor, why = resolve_executor(executor)
    configs = [trial.make({**c, "epochs": max_epochs}) for c in expand(space, seed, trial)]
    fixed = {"notebook": notebook, "threads": threads_per_trial, "n_train": n_train,
             "n_eval": n_eval, "eval_samples": eval_samples, "metric": metric,
             **(extra_config or {})}
    sources = trial.prepare(configs, fixed, data) if trial.prepare else []
    t0 = time.perf_counter()
    if executor == "local":
        trials = [_local_trial(trial, c, fixed, epoch_step, metric) for c in configs]
        exp_name, cluster = None, None
    else:
        trials, exp_name, cluster = _ray_trials(trial, name, configs, fixed, profile, max_epochs,
                                                grace, reduction, threads_per_trial, cpus, quiet,
                                                metric, epoch_step, notebook)
    wall = time.perf_counter() - t0
    trials.sort(key=lambda t: t["name"])
    chosen = choose(trials)
    record_config = {"space": _jsonable_space(space), "max_epochs": max_epochs,
                     "executor": executor, "executor_from": why,
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
                 extra={"selected_on": "validation", "rule": trial.rules[metric],
                        "test_evaluated": False,
                        "ray": cluster["ray"] if cluster else None,
                        "cluster": cluster["requested"] if cluster else "this process (no Ray)",
                        "ray_cluster": cluster})
    return load_sweep(name, notebook)


def _trial_row(trial, result, epoch_step, metric="val_error"):
    """Return the results-file row of one trial: its config and validation curve."""
    cfg = trial.make(result.config["cfg"])
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
    if (not err_curve or err_curve[0][0] > 1) and trial.history and "notebook" in result.config:
        # resumed: the epochs before the first report (all of them when the trial was restored
        # after its last epoch and reported nothing) come from the trial's own history
        first = err_curve[0][0] if err_curve else int(cfg["epochs"]) + 1
        early = trial.history(cfg, result.config["notebook"], first)
        err_curve = early + err_curve
        if metric == "val_error":  # the fit history holds the validation error, not the NLL
            curve = early + curve
    best = _best_epoch(curve, epoch_step)
    row = {"name": trial.name(cfg), "config": cfg,
           "metric": metric, "val": best[1] if best else None,
           "best_epoch": best[0] if best else None,
           "epochs_run": curve[-1][0] if curve else 0,
           "stopped_early": bool(curve) and curve[-1][0] < cfg["epochs"] and result.error is None,
           "val_error_ensemble_last": ens, "wall_s": wall, "started_at": started,
           "val_curve": curve, "val_error_curve": err_curve,
           "error": None if result.error is None else str(result.error).splitlines()[0][:300]}
    # the validation error at the chosen epoch (the metric itself when it is the error)
    at = dict(map(tuple, err_curve)).get(row["best_epoch"]) if best else None
    row["val_error"] = at
    return row


def splice_resumed_trials(name, notebook="01_mnist_classification", trial=None):
    """Give the trials of a sweep that resumed after a restore their early epochs back (from the
    trial's ``history``), choose again and rewrite the results file; return the changed trials'
    names. ``trial``: default, the one the recorded space names. Validation numbers only;
    nothing is trained."""
    rec = load_sweep(name, notebook)
    trial = _trial_of(rec["config"].get("space", {}), trial)
    if trial.history is None:
        raise ValueError("this trial keeps no per-epoch history: nothing can be spliced")
    changed = []
    for t in rec["metrics"]["trials"]:
        curve = t.get("val_error_curve") or []
        early = trial.history(t["config"], notebook, curve[0][0]
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


def chosen_settings(name, notebook="01_mnist_classification"):
    """Return the configuration a sweep's results file chose (a dict; ValueError when no trial
    finished). ``helpers.classification.chosen_config`` makes a RunConfig of it."""
    chosen = load_sweep(name, notebook)["metrics"]["chosen"]
    if chosen is None:
        raise ValueError(f"sweep {name!r} has no finished trial: rerun it")
    return dict(chosen["config"])


def load_sweep(name, notebook="01_mnist_classification"):
    """Return the results record of sweep ``name`` (FileNotFoundError names the command)."""
    path = results_dir() / notebook / "sweep" / f"{name}.json"
    if not path.exists():
        raise FileNotFoundError(f"no sweep results at {path}: run `make sweep ONLY={notebook[:2]}`")
    return json.loads(path.read_text())


def _jsonable_space(space):
    return json.loads(json.dumps(space, default=str))


def trial_epochs(space, max_epochs, grace, reduction, trial=None):
    """Return (trials, the most epochs ASHA can spend): the size of a sweep before it runs.

    The bound assumes every rung keeps 1/reduction of the trials that reach it."""
    n = len(expand(space, trial=trial))
    rungs, r = [], grace
    while r < max_epochs:
        rungs.append(r)
        r *= reduction
    total, alive, prev = 0.0, n, 0
    for rung in rungs + [max_epochs]:
        total += alive * (rung - prev)
        prev, alive = rung, max(1, math.ceil(alive / reduction))
    return n, int(total)


def ensure_sweeps(notebook, profile, run_missing=True, names=None, trial=None, executor=None):
    """Return {name: results record} for the sweeps ``profile`` (a ``get_profile`` namespace)
    declares: read back from results/, or run now (``run_missing``) when absent (else left out).
    ``trial`` / ``executor``: default, each space's trial and the profile's executor (see
    ``resolve_executor`` for what overrides it)."""
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
                              executor=executor or sw.get("executor", "ray"), trial=trial)
    return out
