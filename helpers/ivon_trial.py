"""IVON's side of a validation search: what ``helpers.sweep`` is handed for notebook 06's IVON.

IVON (Shen et al. 2024, the ``ivon-opt`` package) trains an ordinary MLP with a variational
optimiser; ``TRIAL`` trains one setting (``helpers.alternatives.train_ivon``: the learning-rate
schedule the setting names, constant in notebook 06's plan v3, cosine before; checkpoints every
5 epochs, resumes) on the training set and
reports after every epoch validation numbers only: the error of the mean weights and, for
``metric='val_nll'``, the negative log-likelihood of IVON's predictive (the average over
``eval_samples`` weight samples) on the validation set, as ``helpers.classification_trial`` does
for the other methods, so one rule chooses for every method of the notebook.
"""
import time

import torch

from .alternatives import ivon_name, ivon_probs, train_ivon
from .classification_trial import _images
from .metrics import error_rate, nll
from .sweep import Trial

RULES = {
    "val_nll": ("the setting and number of epochs (a multiple of epoch_step, or the last epoch "
                "reported) with the lowest validation negative log-likelihood of IVON's "
                "predictive (the average over eval_samples weight samples); ties go to fewer "
                "epochs, then to the earlier trial"),
}
DEFAULTS = dict(H=400, batch_size=128, ess_factor=1.0, weight_decay=1e-4, hess_init=1.0,
                data="MNIST", epochs=30,  # the engine sets epochs to the search's max_epochs
                schedule="cosine")
REQUIRED = ("lr", "seed")


def make(settings):
    """Return the configuration of one IVON setting: ``lr``, ``hess_init``, ``weight_decay``,
    ``ess_factor`` (IVON's effective sample size = ess_factor x training set size; the package's
    documented use is 1), ``schedule`` ('cosine' over the epochs, or 'constant' as in the
    package's README loop), ``H``, ``batch_size``, ``epochs``, ``seed``, ``data``."""
    known = set(DEFAULTS) | set(REQUIRED)
    unknown = sorted(set(settings) - known)
    if unknown:
        raise ValueError(f"{unknown} are not IVON trial settings; known: {sorted(known)}")
    cfg = {**DEFAULTS, **settings}
    missing = [k for k in REQUIRED if k not in cfg]
    if missing:
        raise ValueError(f"an IVON trial needs {missing}")
    for k in ("lr", "hess_init", "ess_factor"):
        if not float(cfg[k]) > 0:
            raise ValueError(f"IVON's {k} must be > 0, got {cfg[k]!r}")
    if cfg["schedule"] not in ("cosine", "constant"):
        raise ValueError(f"IVON's schedule must be 'cosine' or 'constant', got {cfg['schedule']!r}")
    if float(cfg["weight_decay"]) < 0:
        raise ValueError(f"IVON's weight_decay must be >= 0, got {cfg['weight_decay']!r}")
    cfg["epochs"], cfg["seed"], cfg["H"] = int(cfg["epochs"]), int(cfg["seed"]), int(cfg["H"])
    return cfg


def name(config):
    return ivon_name(config, config["seed"], config["epochs"])


def train(config, report_fn):
    """Train one IVON setting, calling ``report_fn(metrics)`` after every epoch with validation
    numbers only (the test set is dropped before training)."""
    started = time.time()
    cfg = config["cfg"]
    torch.set_num_threads(int(config.get("threads", 1)))
    data = _images(cfg.get("data", "MNIST"), config.get("n_train"), config.get("n_eval"))
    S = int(config.get("eval_samples", 10))

    def report(epoch, model, opt, row):
        gen = torch.get_rng_state()
        torch.manual_seed(cfg["seed"] + 12345)
        samples = ivon_probs(model, opt, data.x_val, S)
        model.eval()
        with torch.no_grad():
            mean_error = error_rate(torch.softmax(model(data.x_val), -1), data.y_val)
        probs = samples.mean(0)
        torch.set_rng_state(gen)
        report_fn({"epoch": epoch, "val_error": mean_error, "val_nll": nll(probs, data.y_val),
                   "val_error_predictive": error_rate(probs, data.y_val),
                   "train_wall_s": row["wall_s"], "started_at": started})

    train_ivon(cfg, data, cfg["seed"], cfg["epochs"], notebook=config["notebook"],
               on_epoch=report)


TRIAL = Trial(make=make, name=name, train=train, rules=RULES)
