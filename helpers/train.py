"""One training loop for Bayesian and deterministic models, with atomic checkpoints and resume."""
import hashlib
import io
import math
import time
from pathlib import Path

import torch

from .data import check_labels
from .elbo import KL_WEIGHTINGS, REDUCTIONS, categorical_nll, elbo, kl_weights
from .layers import sampling
from .utils import atomic_write_bytes, progress, remove_stale_tmp

OPTIMIZERS = ("adam", "sgd")


def make_optimizer(params, name="adam", lr=1e-3, momentum=0.0, weight_decay=0.0):
    """Return a torch optimizer by name ('adam' uses the fused kernel where torch has one);
    ``params``: tensors, or parameter groups (dicts, as torch's optimisers take them)."""
    lr = float(lr)
    if not (lr > 0 and math.isfinite(lr)):
        raise ValueError(f"lr must be a finite number > 0, got {lr!r}")
    params = list(params)
    if name == "adam":
        first = params[0]["params"][0] if params and isinstance(params[0], dict) else (
            params[0] if params else None)
        dev = first.device.type if first is not None else "cpu"
        fused = dev in ("cpu", "cuda")
        return torch.optim.Adam(params, lr=lr, weight_decay=weight_decay, fused=fused)
    if name == "sgd":
        return torch.optim.SGD(params, lr=lr, momentum=momentum, weight_decay=weight_decay)
    raise ValueError(f"unknown optimizer {name!r}; choose one of {OPTIMIZERS}")


CHECKPOINT_MAGIC = b"BBBCKPT1"  # then the SHA-256 of the payload, then torch.save's bytes


class CheckpointError(ValueError):
    """A checkpoint file that cannot be used: empty, truncated, corrupt, or another run's."""


def save_checkpoint(path, **state):
    """Write ``state`` (tensors, state dicts, numbers, lists) to ``path`` atomically, with a SHA-256
    checksum that ``load_checkpoint`` verifies; return path."""
    buf = io.BytesIO()
    torch.save(state, buf)
    payload = buf.getvalue()
    return atomic_write_bytes(path, CHECKPOINT_MAGIC + hashlib.sha256(payload).digest() + payload)


def load_checkpoint(path, map_location="cpu"):
    """Return the dict saved by ``save_checkpoint`` after checking its checksum (loaded with
    ``weights_only=True``); a missing file is FileNotFoundError, an unusable one CheckpointError."""
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"no checkpoint at {path}")
    raw = path.read_bytes()
    fix = "Fix: delete it; rerunning starts that run afresh."
    if not raw:
        raise CheckpointError(f"checkpoint {path} is empty (0 bytes): its write was interrupted. "
                              + fix)
    n = len(CHECKPOINT_MAGIC)
    if raw[:n] != CHECKPOINT_MAGIC:
        raise CheckpointError(f"{path} is not a checkpoint written by helpers.save_checkpoint (or "
                              "an older version's, without a checksum). " + fix)
    digest, payload = raw[n:n + 32], raw[n + 32:]
    if len(digest) < 32 or hashlib.sha256(payload).digest() != digest:
        raise CheckpointError(f"checkpoint {path} is corrupt or truncated (its SHA-256 checksum "
                              "does not match). " + fix)
    return torch.load(io.BytesIO(payload), map_location=map_location, weights_only=True)


def data_fingerprint(data):
    """Return a short string identifying the training set of ``data`` (size, shape and a hash of
    every label and of a spread-out sample of the inputs): what a resumed run must match."""
    x, y = data.x_train, data.y_train
    step = max(1, len(x) // 512)
    h = hashlib.sha256()
    h.update(x[::step].detach().cpu().contiguous().numpy().tobytes())
    h.update(y.detach().cpu().contiguous().numpy().tobytes())
    return f"{tuple(x.shape)} {x.dtype} sha256:{h.hexdigest()[:16]}"


def model_fingerprint(model):
    """Return a short string identifying ``model``'s architecture (parameter names and shapes)."""
    spec = ";".join(f"{n}:{tuple(p.shape)}:{p.dtype}" for n, p in model.state_dict().items())
    return f"{type(model).__name__} {sum(p.numel() for p in model.parameters())} parameters " \
           f"sha256:{hashlib.sha256(spec.encode()).hexdigest()[:16]}"


def _int_setting(name, value, low):
    """Return ``value`` as an int >= ``low``, or raise ValueError saying what to pass."""
    ok = (isinstance(value, (int, float)) and not isinstance(value, bool)
          and math.isfinite(value) and float(value) == int(value) and int(value) >= low)
    if not ok:
        raise ValueError(f"{name} must be a whole number >= {low}, got {value!r}")
    return int(value)


def _float_setting(name, value):
    """Return ``value`` as a finite float, or raise ValueError naming the setting."""
    try:
        out = float(value)
    except (TypeError, ValueError):
        out = float("nan")
    if isinstance(value, bool) or not math.isfinite(out):
        raise ValueError(f"{name} must be a finite number, got {value!r}")
    return out


def _output_width(model):
    """Return the ``out_features`` of the model's last module that has one (its number of
    classes for the project's networks), or None."""
    widths = [m.out_features for m in model.modules()
              if isinstance(getattr(m, "out_features", None), int)]
    return widths[-1] if widths else None


def _check_finite_data(name, t):
    if t.is_floating_point() and not bool(torch.isfinite(t).all()):
        raise ValueError(f"{name} holds NaN or inf values: clean the data before training")


@torch.no_grad()
def misclassified(model, x, y, batch_size=5000):
    """Return a bool tensor: which examples of (x, y) the posterior-mean (or deterministic) model gets
    wrong."""
    was = model.training
    model.eval()
    wrong = []
    with sampling(model, False):
        for s in range(0, len(x), batch_size):
            wrong.append(model(x[s:s + batch_size]).argmax(-1) != y[s:s + batch_size])
    model.train(was)
    return torch.cat(wrong) if wrong else torch.zeros(0, dtype=torch.bool, device=y.device)


def evaluate_error(model, x, y, batch_size=5000):
    """Return the error rate (fraction) of the posterior-mean (or deterministic) model on (x, y)."""
    return misclassified(model, x, y, batch_size).sum().item() / max(len(x), 1)


def fit(model, data, epochs, lr=1e-3, batch_size=128, n_samples=1, kl_weighting="uniform",
        optimizer="adam", momentum=0.0, seed=0, checkpoint=None, checkpoint_every=10,
        eval_sets=("val", "test"), nll=categorical_nll, desc="train", lr_decay=None,
        on_epoch=None, weight_decay=0.0, reduction="mean", rho_lr_scale=1.0, lr_milestones=None,
        lr_gamma=0.1):
    """Train ``model`` on ``data`` (an ``ImageData``-like object with x_train, y_train, ...).

    Returns the per-epoch history: a list of dicts with epoch, loss, nll, kl (per example),
    <set>_error for each of ``eval_sets`` (posterior-mean weights), and wall_s (training time so far).
    Bayesian layers always sample while training; their sampling switch is restored afterwards.
    With ``checkpoint`` (a path) the run saves atomically every ``checkpoint_every`` epochs and at
    the end, and resumes from that file when it exists (same seed -> same numbers as an
    uninterrupted run); a checkpoint of another run (settings, seed, data or model differ) is
    refused with the fields that differ. ``lr_decay`` in (0, 1] multiplies the learning rate by
    that factor after every epoch. A non-finite loss or parameter stops the run with
    FloatingPointError before anything of that epoch is saved. ``on_epoch(row, model)`` is called
    after every epoch (and its checkpoint), e.g. to report to a sweep engine. ``weight_decay``
    adds an L2 penalty through the optimiser (a MAP estimate under a Gaussian prior).
    ``reduction``: 'mean' divides each minibatch's cost by its size; 'sum' keeps the paper's summed
    cost F_i (eq. 8), the scale the paper's learning rates refer to (``helpers.elbo.elbo``).
    ``rho_lr_scale``: the Bayesian layers' rho learn at ``lr * rho_lr_scale`` (``parameter_groups``).
    ``lr_milestones``: epochs after which the learning rate is multiplied by ``lr_gamma`` (a step
    schedule; exclusive with ``lr_decay``).
    """
    epochs = _int_setting("epochs", epochs, 0)
    batch_size = _int_setting("batch_size", batch_size, 1)
    n_samples = _int_setting("n_samples", n_samples, 1)
    checkpoint_every = _int_setting("checkpoint_every", checkpoint_every, 1)
    seed = _int_setting("seed", seed, 0)
    lr = _float_setting("lr", lr)
    if not lr > 0:
        raise ValueError(f"lr must be a finite number > 0, got {lr!r}")
    if lr_decay is not None:
        lr_decay = _float_setting("lr_decay", lr_decay)
        if not 0 < lr_decay <= 1:
            raise ValueError(f"lr_decay must be None or a number in (0, 1] (the factor applied to "
                             f"the learning rate after every epoch), got {lr_decay!r}")
    momentum = _float_setting("momentum", momentum)
    if not 0 <= momentum < 1:
        raise ValueError(f"momentum must be a number in [0, 1), got {momentum!r}")
    weight_decay = _float_setting("weight_decay", weight_decay)
    if weight_decay < 0:
        raise ValueError(f"weight_decay must be >= 0, got {weight_decay!r}")
    if reduction not in REDUCTIONS:
        raise ValueError(f"unknown reduction {reduction!r}; choose one of {REDUCTIONS}")
    if kl_weighting not in KL_WEIGHTINGS:
        raise ValueError(f"unknown kl_weighting {kl_weighting!r}; choose one of {KL_WEIGHTINGS}")
    if optimizer not in OPTIMIZERS:
        raise ValueError(f"unknown optimizer {optimizer!r}; choose one of {OPTIMIZERS}")
    for name in eval_sets:
        if name not in ("train", "val", "test"):
            raise ValueError(f"eval_sets may hold 'train', 'val' and 'test', got {name!r}")
    x, y = data.x_train, data.y_train
    N = len(x)
    if N < 1 or len(y) != N:
        raise ValueError(f"need at least one training example and as many labels as inputs; got "
                         f"{N} inputs and {len(y)} labels")
    _check_finite_data("x_train", x)
    if nll is categorical_nll:  # class labels: a clear error, not torch's IndexError mid-run
        n_classes = _output_width(model)
        check_labels(y, n_classes, "y_train")
        for name in eval_sets:
            check_labels(data.split(name)[1], n_classes, f"y_{name}")
    M = math.ceil(N / batch_size)
    weights = kl_weights(M, kl_weighting).tolist()
    rho_lr_scale = _float_setting("rho_lr_scale", rho_lr_scale)
    if not rho_lr_scale > 0:
        raise ValueError(f"rho_lr_scale must be > 0, got {rho_lr_scale!r}")
    if lr_milestones:
        lr_milestones = tuple(_int_setting("lr_milestones", m, 1) for m in lr_milestones)
        lr_gamma = _float_setting("lr_gamma", lr_gamma)
        if not 0 < lr_gamma <= 1:
            raise ValueError(f"lr_gamma must be in (0, 1], got {lr_gamma!r}")
    opt = make_optimizer(parameter_groups(model, lr, rho_lr_scale), optimizer, lr,
                         momentum=momentum, weight_decay=weight_decay)
    sched = make_schedule(opt, lr_decay, lr_milestones, lr_gamma)
    run_id = {"lr": lr, "lr_decay": lr_decay,
              "batch_size": batch_size, "n_samples": n_samples, "kl_weighting": kl_weighting,
              "optimizer": optimizer, "momentum": momentum, "seed": seed,
              "weight_decay": weight_decay, "reduction": reduction, "rho_lr_scale": rho_lr_scale,
              "lr_milestones": list(lr_milestones) if lr_milestones else None,
              "lr_gamma": lr_gamma if lr_milestones else 0.1,
              "data": data_fingerprint(data), "model": model_fingerprint(model)}
    history, start_epoch = [], 0
    if checkpoint is not None:
        remove_stale_tmp(checkpoint)
    if checkpoint is not None and Path(checkpoint).exists():
        state = load_checkpoint(checkpoint, map_location=x.device)
        check_same_run(checkpoint, state.get("run"), run_id)
        if int(state["epoch"]) > epochs:
            raise CheckpointError(f"{checkpoint} holds {int(state['epoch'])} epochs, more than the "
                                  f"{epochs} asked for: ask for at least {int(state['epoch'])} "
                                  "epochs, or delete it (or use another path) to train afresh")
        model.load_state_dict(state["model"])
        opt.load_state_dict(state["optimizer"])
        if sched is not None and "scheduler" in state:
            sched.load_state_dict(state["scheduler"])
        history, start_epoch = list(state["history"]), int(state["epoch"])
        torch.set_rng_state(state["rng"].cpu())
        if torch.cuda.is_available() and "cuda_rng" in state:
            torch.cuda.set_rng_state_all([s.cpu() for s in state["cuda_rng"]])
    wall = history[-1]["wall_s"] if history else 0.0

    def save(epoch):
        state = dict(model=model.state_dict(), optimizer=opt.state_dict(), epoch=epoch,
                     history=history, rng=torch.get_rng_state(), run=run_id)
        if sched is not None:
            state["scheduler"] = sched.state_dict()
        if torch.cuda.is_available():
            state["cuda_rng"] = torch.cuda.get_rng_state_all()
        save_checkpoint(checkpoint, **state)

    bar = progress(range(start_epoch, epochs), desc=desc, initial=start_epoch, total=epochs)
    with sampling(model, True):  # training always samples; the caller's switch comes back after
        for epoch in bar:
            model.train()
            t0 = time.perf_counter()
            gen = torch.Generator().manual_seed(seed * 1_000_003 + epoch)
            perm = torch.randperm(N, generator=gen).to(x.device)
            tot_loss = tot_nll = tot_kl = 0.0
            for i in range(M):
                idx = perm[i * batch_size:(i + 1) * batch_size]
                parts = elbo(model, x[idx], y[idx], weights[i], n_samples=n_samples, nll=nll,
                             reduction=reduction)
                opt.zero_grad(set_to_none=True)
                parts.loss.backward()
                opt.step()
                loss = parts.loss.item()
                if not math.isfinite(loss):
                    raise FloatingPointError(
                        f"loss became {loss} at epoch {epoch + 1}, minibatch {i + 1}: the run "
                        "diverged. Lower the learning rate, start rho lower, or use a wider prior.")
                tot_loss += loss * len(idx) if reduction == "mean" else loss
                tot_nll += parts.nll
                tot_kl += parts.kl * weights[i]
            bad = [n for n, p in model.named_parameters() if not bool(torch.isfinite(p).all())]
            if bad:
                raise FloatingPointError(
                    f"parameters {bad} became NaN or inf in epoch {epoch + 1}: the run diverged "
                    "(nothing of this epoch was saved). Lower the learning rate or check lr_decay.")
            if sched is not None:
                sched.step()
            wall += time.perf_counter() - t0
            row = {"epoch": epoch + 1, "loss": tot_loss / N, "nll": float(tot_nll) / N,
                   "kl": float(tot_kl) / N,
                   "wall_s": wall}
            for name in eval_sets:
                xs, ys = data.split(name)
                row[f"{name}_error"] = evaluate_error(model, xs, ys)
            history.append(row)
            bar.set_postfix({k: f"{v:.4f}" for k, v in row.items() if k.endswith("error")})
            if checkpoint is not None and ((epoch + 1) % checkpoint_every == 0
                                           or epoch + 1 == epochs):
                save(epoch + 1)
            if on_epoch is not None:
                on_epoch(row, model)
    return history


RUN_DEFAULTS = {"weight_decay": 0.0, "reduction": "mean", "rho_lr_scale": 1.0,
                "lr_milestones": None, "lr_gamma": 0.1}  # fingerprint fields added later: their value before


def parameter_groups(model, lr, rho_lr_scale=1.0):
    """Return ``model``'s parameters for the optimiser: one group, or (``rho_lr_scale`` != 1) the
    Bayesian layers' rho parameters (names ending in ``rho``) in a group of their own with the
    learning rate ``lr * rho_lr_scale`` (the paper gives mu and rho one learning rate, eqs. 5-6;
    nothing says they must share it)."""
    if rho_lr_scale == 1.0:
        return list(model.parameters())
    rho = [p for n, p in model.named_parameters() if n.endswith("rho")]
    rest = [p for n, p in model.named_parameters() if not n.endswith("rho")]
    if not rho:
        raise ValueError("rho_lr_scale is for Bayesian networks: this model has no rho parameters")
    return [{"params": rest, "lr": lr}, {"params": rho, "lr": lr * rho_lr_scale}]


def make_schedule(opt, lr_decay=None, lr_milestones=None, lr_gamma=0.1):
    """Return the learning-rate schedule stepped after every epoch, or None (constant): an
    exponential decay by ``lr_decay`` per epoch, or a step decay by ``lr_gamma`` at each epoch
    of ``lr_milestones`` (after that many epochs), never both."""
    if lr_decay is not None and lr_milestones:
        raise ValueError("give lr_decay (every epoch) or lr_milestones (steps), not both")
    if lr_decay is not None:
        return torch.optim.lr_scheduler.ExponentialLR(opt, lr_decay)
    if lr_milestones:
        return torch.optim.lr_scheduler.MultiStepLR(opt, list(lr_milestones), gamma=lr_gamma)
    return None


def check_same_run(path, saved, current):
    """Raise CheckpointError when the checkpoint at ``path`` belongs to another run."""
    if saved is None:
        raise CheckpointError(f"{path} records no run fingerprint (written by an older version of "
                              "helpers): delete it to train afresh")
    missing = object()
    diff = []
    for k in current:
        old = saved.get(k, RUN_DEFAULTS.get(k, missing))
        if old != current[k]:
            diff.append(f"{k}: checkpoint {None if old is missing else old!r}, this run "
                        f"{current[k]!r}")
    if diff:
        raise CheckpointError(f"{path} belongs to another run ({'; '.join(diff)}): use another "
                              "checkpoint path for this run, or delete the file to train afresh")


def branch_checkpoint(src, dest, lr_milestones, lr_gamma=0.1):
    """Copy the checkpoint of a run trained at a constant learning rate (``src``) to ``dest`` as
    the checkpoint of the same run under a step schedule (``lr_milestones``, ``lr_gamma``): the
    two runs are the same up to the first milestone, so ``fit`` resumed from ``dest`` with that
    schedule gives the numbers of a run that had the schedule from its first epoch. Every
    milestone must lie after the checkpoint's epoch. Returns ``dest``."""
    state = load_checkpoint(src)
    epoch = int(state["epoch"])
    run = dict(state.get("run") or {})
    if run.get("lr_milestones") or run.get("lr_decay") is not None or "scheduler" in state:
        raise ValueError(f"{src} was trained with a learning-rate schedule: only a constant-rate "
                         "run can be branched")
    milestones = tuple(int(m) for m in lr_milestones)
    if not milestones or min(milestones) <= epoch:
        raise ValueError(f"{src} holds {epoch} epochs: every milestone must come later, got "
                         f"{list(milestones)}")
    groups = state["optimizer"]["param_groups"]
    dummy = torch.optim.SGD([{"params": [torch.zeros(1, requires_grad=True)], "lr": g["lr"]}
                             for g in groups])
    sched = make_schedule(dummy, None, milestones, lr_gamma)
    for _ in range(epoch):  # the schedule's count of epochs so far (no milestone is passed)
        dummy.step()
        sched.step()
    state["scheduler"] = sched.state_dict()
    run.update(lr_milestones=list(milestones), lr_gamma=float(lr_gamma))
    state["run"] = run
    return save_checkpoint(dest, **state)
