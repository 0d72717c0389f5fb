"""MNIST-style classification runs: one config -> one trained model, checkpoint and result record.

Used by notebook 01 (Table 1, Figures 2-3, the validation sweep) and by notebooks 04/05, which load
the checkpoints. ``run`` resumes from its checkpoint; ``run_grid`` skips configs already done, so an
interrupted sweep continues where it stopped.
"""
import json
import math
from dataclasses import asdict, dataclass, field, replace

import torch

from .layers import BayesMLP, copy_means, mlp
from .metrics import error_rate, predict
from .priors import GaussianPrior, ScaleMixturePrior
from .train import fit, load_checkpoint
from .utils import atomic_write_bytes, checkpoints_dir, results_dir

METHODS = ("sgd", "dropout", "bbb_gaussian", "bbb_mixture")
PAPER_TABLE1 = {  # test error (fraction), Blundell et al. 2015, Table 1
    "sgd": {400: 0.0183, 800: 0.0184, 1200: 0.0188},
    "dropout": {400: 0.0151, 800: 0.0133, 1200: 0.0136},
    "bbb_gaussian": {400: 0.0182, 800: 0.0199, 1200: 0.0204},
    "bbb_mixture": {400: 0.0136, 800: 0.0134, 1200: 0.0132},
}
METHOD_LABELS = {"sgd": "SGD, no regularisation", "dropout": "SGD, dropout",
                 "bbb_gaussian": "BBB, Gaussian prior", "bbb_mixture": "BBB, scale mixture prior"}
METHOD_COLORS = {"sgd": "C2", "dropout": "C1", "bbb_gaussian": "C4", "bbb_mixture": "C0"}


@dataclass
class RunConfig:
    """Everything that defines one training run (its ``name`` keys checkpoints and results)."""
    method: str = "bbb_mixture"
    H: int = 400
    epochs: int = 50
    lr: float = 1e-3
    optimizer: str = "adam"
    momentum: float = 0.0
    lr_decay: float = 1.0          # learning rate multiplied by this after every epoch
    batch_size: int = 128
    samples: int = 1               # Monte-Carlo samples per minibatch (BBB)
    kl_weighting: str = "uniform"  # 'uniform' (1/M, eq. 8) or 'blundell' (pi_i, eq. 9)
    pi: float = 0.5                # scale mixture prior
    neg_log_sigma1: float = 0.0
    neg_log_sigma2: float = 6.0
    prior_sigma: float = 1.0       # Gaussian prior
    rho_init: float = -6.0
    mu_init: float = None          # BBB: mu ~ U(-mu_init, mu_init); None = nn.Linear's bound
    init_from: str = None          # BBB: means start at the weights of this trained run ('sgd'/'dropout')
    init_epochs: int = 60          # ... trained for this many epochs (same H, optimiser, seed)
    init_lr: float = None          # ... with this learning rate and decay (None: this run's own;
    init_lr_decay: float = None    # set when the source is another search's chosen recipe)
    dropout: float = 0.5
    weight_decay: float = 0.0      # L2 through Adam (a MAP estimate); 0 for the paper's methods
    reduction: str = "mean"        # the minibatch cost: 'mean' over its examples, or the paper's 'sum'
    rho_lr_scale: float = 1.0      # BBB: rho's learning rate is lr times this (the paper: one lr)
    lr_milestones: tuple = None    # epochs after which the learning rate is multiplied by lr_gamma
    lr_gamma: float = 0.1
    seed: int = 0
    data: str = "MNIST"
    tags: dict = field(default_factory=dict)

    def __post_init__(self):
        if self.lr_milestones is not None:  # a list when read back from JSON
            self.lr_milestones = tuple(int(m) for m in self.lr_milestones) or None
        if self.lr_milestones and self.lr_decay != 1.0:
            raise ValueError("give lr_decay (every epoch) or lr_milestones (steps), not both")
        if self.rho_lr_scale != 1.0 and not self.bayesian:
            raise ValueError("rho_lr_scale is for the BBB methods")
        if self.method not in METHODS:
            raise ValueError(f"unknown method {self.method!r}; choose one of {METHODS}")
        if int(self.H) < 1 or int(self.epochs) < 0:
            raise ValueError(f"H must be >= 1 and epochs >= 0, got H={self.H}, epochs={self.epochs}")
        if not 0.0 <= self.dropout < 1.0:
            raise ValueError(f"dropout must be in [0, 1), got {self.dropout}")
        if self.init_from is not None:
            if self.init_from not in ("sgd", "dropout"):
                raise ValueError(f"init_from must be None, 'sgd' or 'dropout', got {self.init_from!r}")
            if not self.bayesian:
                raise ValueError("init_from (a warm start of the posterior means) is for the BBB "
                                 f"methods, not {self.method!r}")
            if int(self.init_epochs) < 1:
                raise ValueError(f"init_epochs must be >= 1, got {self.init_epochs}")
            self.mu_init = None  # the means start at the trained weights: mu_init does not matter
        elif self.init_lr is not None or self.init_lr_decay is not None:
            raise ValueError("init_lr and init_lr_decay set the warm start's source network: they "
                             "need init_from")

    @classmethod
    def from_dict(cls, d):
        """Return the config stored in a result record (extra keys such as 'prior' are ignored)."""
        names = set(cls.__dataclass_fields__)
        return cls(**{k: v for k, v in d.items() if k in names})

    @property
    def bayesian(self):
        return self.method.startswith("bbb")

    @property
    def name(self):
        """Return a file-name key that differs whenever a setting that matters differs."""
        parts = [self.data.lower(), self.method, f"h{self.H}", f"e{self.epochs}",
                 f"{self.optimizer}{self.lr:g}", f"s{self.seed}"]
        if self.lr_decay != 1.0:
            parts.append(f"decay{self.lr_decay:g}")
        if self.lr_milestones:
            parts.append("steps" + "-".join(str(m) for m in self.lr_milestones)
                         + f"g{self.lr_gamma:g}")
        if self.rho_lr_scale != 1.0:
            parts.append(f"rholr{self.rho_lr_scale:g}")
        if self.optimizer == "sgd" and self.momentum:
            parts.append(f"mom{self.momentum:g}")
        if self.batch_size != 128:
            parts.append(f"b{self.batch_size}")
        if self.weight_decay:
            parts.append(f"wd{self.weight_decay:g}")
        if self.reduction != "mean":
            parts.append(f"cost-{self.reduction}")
        if self.method == "dropout":
            parts.append(f"p{self.dropout:g}")
        if self.bayesian:
            parts += [f"mc{self.samples}", self.kl_weighting, f"rho{self.rho_init:g}"]
            if self.init_from is not None:
                parts.append(f"init-{self.init_from}{self.init_epochs}")
                if self.init_lr is not None:
                    parts.append(f"initlr{self.init_lr:g}")
                if self.init_lr_decay is not None:
                    parts.append(f"initdecay{self.init_lr_decay:g}")
            elif self.mu_init is not None:
                parts.append(f"mu{self.mu_init:g}")
        if self.method == "bbb_mixture":
            parts.append(f"pi{self.pi:g}-s1_{self.neg_log_sigma1:g}-s2_{self.neg_log_sigma2:g}")
        if self.method == "bbb_gaussian":
            parts.append(f"sigma{self.prior_sigma:g}")
        return "_".join(parts).replace(".", "p")

    def init_source(self):
        """Return the config of the deterministic run whose weights start the means (or None)."""
        if self.init_from is None:
            return None
        lr = self.lr if self.init_lr is None else self.init_lr
        decay = self.lr_decay if self.init_lr_decay is None else self.init_lr_decay
        return RunConfig(method=self.init_from, H=self.H, epochs=self.init_epochs, lr=lr,
                         optimizer=self.optimizer, momentum=self.momentum, lr_decay=decay,
                         batch_size=self.batch_size, dropout=self.dropout, seed=self.seed,
                         data=self.data, reduction=self.reduction)  # no weight decay: the paper's SGD network

    def prior(self):
        """Return the prior object of a BBB method (None otherwise)."""
        if self.method == "bbb_mixture":
            return ScaleMixturePrior(self.pi, math.exp(-self.neg_log_sigma1),
                                     math.exp(-self.neg_log_sigma2))
        if self.method == "bbb_gaussian":
            return GaussianPrior(self.prior_sigma)
        return None


def build_model(cfg, in_features=784, out_features=10):
    """Return the untrained 784-H-H-10 model of ``cfg.method``."""
    hidden = (cfg.H, cfg.H)
    if cfg.bayesian:
        return BayesMLP(in_features, hidden, out_features, prior=cfg.prior(), rho_init=cfg.rho_init,
                        mu_init_scale=cfg.mu_init)
    return mlp(in_features, hidden, out_features, dropout=cfg.dropout if cfg.method == "dropout" else 0.0)


def fit_settings(cfg):
    """Return the keyword arguments of ``helpers.fit`` that train the run of ``cfg``."""
    return dict(epochs=cfg.epochs, lr=cfg.lr, batch_size=cfg.batch_size, n_samples=cfg.samples,
                kl_weighting=cfg.kl_weighting if cfg.bayesian else "none",
                optimizer=cfg.optimizer, momentum=cfg.momentum, seed=cfg.seed,
                lr_decay=None if cfg.lr_decay == 1.0 else cfg.lr_decay,
                weight_decay=cfg.weight_decay, reduction=cfg.reduction,
                rho_lr_scale=cfg.rho_lr_scale, lr_milestones=cfg.lr_milestones,
                lr_gamma=cfg.lr_gamma)


def checkpoint_path(cfg, notebook="01_mnist_classification"):
    """Return where the run of ``cfg`` keeps its checkpoint."""
    return checkpoints_dir() / notebook / f"{cfg.name}.pt"


def run(cfg, data, notebook="01_mnist_classification", eval_samples=10, device=None,
        desc=None, test=True, checkpoint_every=5, init_model=None):
    """Train (or resume, or load when finished) the run of ``cfg``; return (model, record).

    ``test=False`` (a search trial) computes nothing on the test set: neither the per-epoch
    curve nor the final error, nor those of a warm start's source network. ``checkpoint_every``:
    epochs between atomic checkpoints. ``init_model``: a trained deterministic network of the
    same architecture whose weights this deterministic run starts from (a network trained on,
    with a fresh optimiser and learning-rate schedule); its checkpoint path is that of ``cfg``,
    so give such a run a ``notebook`` of its own.

    The record holds ``config`` and ``metrics``: test_error and val_error of the predictor chosen
    on validation (BBB: the posterior-mean weights or the average of ``eval_samples`` weight
    samples, see ``choose_predictor``; the network itself otherwise), ``predictor``,
    test_error_mean_weights, test_error_ensemble, val_error_mean_weights, val_error_ensemble,
    epochs, train_wall_s, and the per-epoch ``history``.
    """
    device = device or data.x_train.device
    torch.manual_seed(cfg.seed)
    model = build_model(cfg, data.x_train.shape[1]).to(device)
    if cfg.init_from is not None:  # warm start: train (or load) the deterministic run first
        src_cfg = cfg.init_source()
        source, _ = run(src_cfg, data, notebook=notebook, eval_samples=eval_samples, device=device,
                        desc=f"{src_cfg.method} (warm start)", test=test)
        copy_means(model, source)
        torch.manual_seed(cfg.seed)
    elif init_model is not None:  # a deterministic network trained on (its weights, nothing else)
        if cfg.bayesian:
            raise ValueError("init_model continues a deterministic network; a BBB run starts from "
                             "one through init_from")
        model.load_state_dict(init_model.state_dict())
        torch.manual_seed(cfg.seed)
    ck = checkpoint_path(cfg, notebook)
    history = fit(model, data, **fit_settings(cfg), checkpoint=ck,
                  checkpoint_every=checkpoint_every, desc=desc or cfg.method,
                  eval_sets=("val", "test") if test else ("val",))
    metrics = {"epochs": len(history), "train_wall_s": history[-1]["wall_s"] if history else 0.0,
               "val_error": history[-1]["val_error"] if history else None}
    gen_state = torch.get_rng_state()
    torch.manual_seed(cfg.seed + 12345)  # evaluation noise independent of how training ended
    if cfg.bayesian:  # first the choice of predictor, on validation; then the test set
        val = predict(model, data.x_val, n_samples=eval_samples)
        metrics["val_error_ensemble"] = error_rate(val.mean, data.y_val)
        metrics["val_error_mean_weights"] = metrics["val_error"]
        metrics["predictor"] = choose_predictor(metrics["val_error_mean_weights"],
                                                metrics["val_error_ensemble"])
        metrics["val_error"] = metrics[f"val_error_{metrics['predictor']}"]
        if not test:
            torch.set_rng_state(gen_state)
            return model, _record(cfg, metrics, history)
        pred = predict(model, data.x_test, n_samples=eval_samples)
        probs = {"ensemble": pred.mean, "mean_weights": pred.posterior_mean}
        metrics["test_error_ensemble"] = error_rate(pred.mean, data.y_test)
        metrics["test_error_mean_weights"] = error_rate(pred.posterior_mean, data.y_test)
        metrics["test_error_single_samples"] = [error_rate(p, data.y_test) for p in pred.samples]
        metrics["eval_samples"] = eval_samples
        chosen = probs[metrics["predictor"]]
    else:
        metrics["predictor"] = "network"
        if not test:
            torch.set_rng_state(gen_state)
            return model, _record(cfg, metrics, history)
        chosen = predict(model, data.x_test, n_samples=1).posterior_mean
        metrics["test_error_mean_weights"] = error_rate(chosen, data.y_test)
        metrics["test_error_ensemble"] = metrics["test_error_mean_weights"]
    metrics["test_error"] = error_rate(chosen, data.y_test)
    metrics["test_misclassified"] = (chosen.argmax(-1) != data.y_test).nonzero().flatten().tolist()
    metrics["weight_histogram"] = weight_histogram(model, seed=cfg.seed)
    torch.set_rng_state(gen_state)
    return model, _record(cfg, metrics, history)


def _record(cfg, metrics, history):
    record = {"config": asdict(cfg), "name": cfg.name, "metrics": metrics, "history": history}
    record["config"]["prior"] = repr(cfg.prior()) if cfg.bayesian else None
    return record


HIST_EDGES = (-0.3, 0.3, 240)  # Figure 3: weight values in [-0.3, 0.3], 240 bins


@torch.no_grad()
def weight_histogram(model, seed=0):
    """Return the counts of the model's weight values (every layer; a BBB network: one sample
    w ~ q, seeded) in the bins of ``HIST_EDGES``, and how many weights there are in all."""
    from .layers import BayesLinear
    gen = torch.Generator().manual_seed(int(seed) + 777)
    ws = []
    for layer in model.modules():
        if isinstance(layer, BayesLinear):
            mu = layer.weight_mu.detach().cpu()
            eps = torch.randn(mu.shape, generator=gen)
            ws.append((mu + layer.weight_sigma.detach().cpu() * eps).flatten())
        elif isinstance(layer, torch.nn.Linear):
            ws.append(layer.weight.detach().cpu().flatten())
    w = torch.cat(ws)
    lo, hi, n = HIST_EDGES
    counts = torch.histc(w, bins=n, min=lo, max=hi)
    inside = (w >= lo) & (w <= hi)
    return {"lo": lo, "hi": hi, "bins": n, "counts": counts.long().tolist(),
            "total": int(w.numel()), "outside": int((~inside).sum())}


def choose_predictor(val_error_mean_weights, val_error_ensemble):
    """Return 'mean_weights' or 'ensemble': the BBB predictor with the lower validation error.

    The posterior-mean weights predict with one deterministic pass; the ensemble averages the
    predictive distributions of several weight samples (the Bayesian predictive). Which one
    generalises better depends on how wide the posterior came out, so validation decides, like
    the other settings; a tie (or no mean-weights error: 0 epochs) keeps the Bayesian predictive.
    """
    if val_error_mean_weights is not None and val_error_mean_weights < val_error_ensemble:
        return "mean_weights"
    return "ensemble"


def load_model(cfg, notebook="01_mnist_classification", device="cpu"):
    """Return the trained model of ``cfg`` from its checkpoint (FileNotFoundError if not trained)."""
    state = load_checkpoint(checkpoint_path(cfg, notebook), map_location=device)
    model = build_model(cfg).to(device)
    model.load_state_dict(state["model"])
    if int(state["epoch"]) < cfg.epochs:
        raise FileNotFoundError(f"{checkpoint_path(cfg, notebook)} holds only {state['epoch']} of "
                                f"{cfg.epochs} epochs; run notebook {notebook} to finish it")
    return model


def run_grid(configs, data, notebook="01_mnist_classification", folder="sweep", eval_samples=10,
             progress_fn=None):
    """Run every config not done yet; return the list of records (done ones read back from disk).

    Each finished run writes results/<notebook>/<folder>/<name>.json atomically, so an interrupted
    grid resumes where it stopped (an unfinished run resumes from its own checkpoint).
    """
    out_dir = results_dir() / notebook / folder
    records = []
    for i, cfg in enumerate(configs):
        path = out_dir / f"{cfg.name}.json"
        if path.exists():
            records.append(json.loads(path.read_text()))
            continue
        if progress_fn:
            progress_fn(i, len(configs), cfg)
        _, rec = run(cfg, data, notebook=notebook, eval_samples=eval_samples,
                     desc=f"{i + 1}/{len(configs)}")
        atomic_write_bytes(path, (json.dumps(rec, indent=1) + "\n").encode())
        records.append(rec)
    return records


def vary(base, **grid):
    """Return configs: ``base`` with each keyword varied over its list (a full product); configs
    that come out the same (e.g. ``mu_init`` under a warm start) appear once."""
    import itertools
    keys = list(grid)
    configs = [replace(base, **dict(zip(keys, values)))
               for values in itertools.product(*(grid[k] for k in keys))]
    return list({c.name: c for c in configs}.values())


def chosen_config(name, notebook="01_mnist_classification", seed=None, **overrides):
    """Return the RunConfig a sweep's results file chose (with ``seed`` and overrides)."""
    from .sweep import chosen_settings
    if seed is not None:
        overrides["seed"] = seed
    return replace(RunConfig.from_dict(chosen_settings(name, notebook)), **overrides)
