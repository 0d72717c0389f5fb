"""The classification runs' side of a validation search: what ``helpers.sweep`` is handed.

``TRIAL`` trains one ``classification.RunConfig`` on the training set and reports, after every
epoch, validation numbers only (the test set is dropped before training): the error of the
posterior-mean weights (the network itself for SGD and dropout) and, for ``metric='val_nll'``,
the negative log-likelihood of the method's predictive distribution on the validation set. The
searches of notebooks 01, 05 and 06 name it in their declared spaces (``helpers/profiles.py``:
``trial='helpers.classification_trial:TRIAL'``). Warm-started trials begin from deterministic
networks that ``prepare`` trains in the driver first, so parallel trials never train one twice.
"""
import os
import time
from dataclasses import asdict

import torch

from .classification import RunConfig, build_model
from .layers import copy_means
from .metrics import error_rate, nll, predict
from .sweep import Trial
from .train import fit, load_checkpoint
from .uncertainty import sample_probs
from .utils import checkpoints_dir

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


def make(settings):
    """Return the configuration dict of a RunConfig made from ``settings`` (validated)."""
    fields = set(RunConfig.__dataclass_fields__)
    unknown = sorted(set(settings) - fields)
    if unknown:
        raise ValueError(f"{unknown} are not RunConfig settings; known: {sorted(fields)}")
    return {k: v for k, v in asdict(RunConfig(**settings)).items() if k != "tags"}


def name(config):
    return RunConfig.from_dict(config).name


def trial_checkpoint(cfg, notebook):
    """Return where the trial of ``cfg`` (a RunConfig or its dict) keeps its fit checkpoint."""
    cfg = cfg if isinstance(cfg, RunConfig) else RunConfig.from_dict(cfg)
    return checkpoints_dir() / notebook / "sweep" / f"{cfg.name}.pt"


def train(config, report_fn):
    """Train one configuration of a sweep, calling ``report_fn(metrics)`` after every epoch
    with validation numbers only (the test set is dropped before training)."""
    started = time.time()
    cfg = RunConfig.from_dict(config["cfg"])
    torch.set_num_threads(int(config.get("threads", 1)))
    metric = config.get("metric", "val_error")
    data = _images(cfg.data, config.get("n_train"), config.get("n_eval"))
    torch.manual_seed(cfg.seed)
    model = build_model(cfg, data.x_train.shape[1])
    if cfg.init_from is not None:  # the driver trained the source network before the trials
        copy_means(model, _load_source(cfg.init_source(), config["notebook"]))
        torch.manual_seed(cfg.seed)
    crash = config.get("_crash_once_at_epoch")  # tests: a trial that fails once, on purpose
    marker = config.get("_crash_marker")

    def crash_first():
        """True for the first trial to get here only: the marker is created atomically
        (parallel trials that only checked for it could both see it missing)."""
        try:
            os.close(os.open(marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
        except FileExistsError:
            return False
        return True

    def report(row, net):
        if crash and row["epoch"] == crash and marker and crash_first():
            raise RuntimeError("a trial failing on purpose (sweep restore test)")
        metrics = {"epoch": row["epoch"], "val_error": row["val_error"], "loss": row["loss"],
                   "train_wall_s": row["wall_s"], "started_at": started}
        gen = torch.get_rng_state()
        torch.manual_seed(cfg.seed + 12345)
        if metric == "val_nll":  # the method's predictive distribution on the validation set
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
        checkpoint=trial_checkpoint(cfg, config["notebook"]),
        checkpoint_every=int(config.get("checkpoint_every", 5)),
        eval_sets=("val",), lr_decay=None if cfg.lr_decay == 1.0 else cfg.lr_decay,
        desc=cfg.name, on_epoch=report, weight_decay=cfg.weight_decay)


_LOADED = {}  # one data set at a time: loaded once per process, not once per trial


def _images(name, n_train, n_eval):
    """Return the training and validation images of a search (``helpers.data.load_images``,
    loaded once per process for the same set, sizes, data folder and loader), with an empty
    test set: a search never sees a test image."""
    from . import data as D
    key = (name, n_train, n_eval, os.environ.get("BBB_DATA_DIR"), D.load_images)
    if key not in _LOADED:
        _LOADED.clear()
        _LOADED[key] = D.load_images(name, scale="paper", n_train=n_train, n_test=n_eval)
    d = _LOADED[key]
    return D.ImageData(d.x_train, d.y_train, d.x_val, d.y_val, d.x_test[:0], d.y_test[:0],
                       name=d.name)


def prepare(configs, fixed, data=None):
    """Train (or load) the deterministic networks that warm-started trials begin from, here in
    the driver (validation only, like the trials); return their names."""
    sources = {}
    for c in configs:
        src = RunConfig.from_dict(c).init_source()
        if src is not None:
            sources[src.name] = src
    if sources and data is None:
        first = next(iter(sources.values()))
        data = _images(first.data, fixed.get("n_train"), fixed.get("n_eval"))
    for src in sources.values():
        torch.manual_seed(src.seed)
        model = build_model(src, data.x_train.shape[1])
        fit(model, data, epochs=src.epochs, lr=src.lr, batch_size=src.batch_size,
            kl_weighting="none", optimizer=src.optimizer, momentum=src.momentum, seed=src.seed,
            checkpoint=trial_checkpoint(src, fixed["notebook"]),
            checkpoint_every=int(fixed.get("checkpoint_every", 5)),
            eval_sets=("val",), lr_decay=None if src.lr_decay == 1.0 else src.lr_decay,
            desc=f"{src.method} (warm-start source)")
    return sorted(sources)


def _load_source(src, notebook):
    model = build_model(src)
    model.load_state_dict(load_checkpoint(trial_checkpoint(src, notebook))["model"])
    return model


def history(config, notebook, first_epoch):
    """Return [[epoch, val_error]] of the epochs before ``first_epoch`` from the trial's own fit
    checkpoint: a trial resumed after ``Tuner.restore`` reports only the epochs it ran since."""
    path = trial_checkpoint(config, notebook)
    if not path.exists():
        return []
    rows = load_checkpoint(path).get("history", [])
    return [[int(h["epoch"]), float(h["val_error"])] for h in rows
            if h["epoch"] < first_epoch and h.get("val_error") is not None]


TRIAL = Trial(make=make, name=name, train=train, rules=RULES, prepare=prepare, history=history)
