"""One training loop for Bayesian and deterministic models, with atomic checkpoints and resume."""
import io
import math
import time
from pathlib import Path

import torch

from .elbo import KL_WEIGHTINGS, categorical_nll, elbo, kl_weights
from .layers import sampling
from .utils import atomic_write_bytes, progress

OPTIMIZERS = ("adam", "sgd")


def make_optimizer(params, name="adam", lr=1e-3, momentum=0.0, weight_decay=0.0):
    """Return a torch optimizer by name ('adam' uses the fused kernel where torch has one)."""
    lr = float(lr)
    if not (lr > 0 and math.isfinite(lr)):
        raise ValueError(f"lr must be a finite number > 0, got {lr!r}")
    params = list(params)
    if name == "adam":
        dev = params[0].device.type if params else "cpu"
        fused = dev in ("cpu", "cuda")
        return torch.optim.Adam(params, lr=lr, weight_decay=weight_decay, fused=fused)
    if name == "sgd":
        return torch.optim.SGD(params, lr=lr, momentum=momentum, weight_decay=weight_decay)
    raise ValueError(f"unknown optimizer {name!r}; choose one of {OPTIMIZERS}")


def save_checkpoint(path, **state):
    """Write ``state`` (tensors, state dicts, numbers, lists) to ``path`` atomically; return path."""
    buf = io.BytesIO()
    torch.save(state, buf)
    return atomic_write_bytes(path, buf.getvalue())


def load_checkpoint(path, map_location="cpu"):
    """Return the dict saved by ``save_checkpoint`` (loaded with ``weights_only=True``)."""
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"no checkpoint at {path}")
    return torch.load(path, map_location=map_location, weights_only=True)


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
        eval_sets=("val", "test"), nll=categorical_nll, desc="train", lr_decay=None):
    """Train ``model`` on ``data`` (an ``ImageData``-like object with x_train, y_train, ...).

    Returns the per-epoch history: a list of dicts with epoch, loss, nll, kl (per example),
    <set>_error for each of ``eval_sets`` (posterior-mean weights), and wall_s (training time so far).
    With ``checkpoint`` (a path) the run saves atomically every ``checkpoint_every`` epochs and at
    the end, and resumes from that file when it exists (same seed -> same numbers as an
    uninterrupted run). ``lr_decay`` multiplies the learning rate by that factor after every epoch.
    """
    epochs, batch_size, n_samples = int(epochs), int(batch_size), int(n_samples)
    if epochs < 0 or batch_size < 1 or n_samples < 1:
        raise ValueError(f"need epochs >= 0, batch_size >= 1 and n_samples >= 1; got {epochs}, "
                         f"{batch_size}, {n_samples}")
    if kl_weighting not in KL_WEIGHTINGS:
        raise ValueError(f"unknown kl_weighting {kl_weighting!r}; choose one of {KL_WEIGHTINGS}")
    x, y = data.x_train, data.y_train
    N = len(x)
    M = math.ceil(N / batch_size)
    weights = kl_weights(M, kl_weighting).tolist()
    opt = make_optimizer(model.parameters(), optimizer, lr, momentum=momentum)
    sched = (torch.optim.lr_scheduler.ExponentialLR(opt, float(lr_decay))
             if lr_decay is not None else None)
    history, start_epoch = [], 0
    if checkpoint is not None and Path(checkpoint).exists():
        state = load_checkpoint(checkpoint, map_location=x.device)
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
                     history=history, rng=torch.get_rng_state())
        if sched is not None:
            state["scheduler"] = sched.state_dict()
        if torch.cuda.is_available():
            state["cuda_rng"] = torch.cuda.get_rng_state_all()
        save_checkpoint(checkpoint, **state)

    bar = progress(range(start_epoch, epochs), desc=desc, initial=start_epoch, total=epochs)
    for epoch in bar:
        model.train()
        t0 = time.perf_counter()
        gen = torch.Generator().manual_seed(int(seed) * 1_000_003 + epoch)
        perm = torch.randperm(N, generator=gen).to(x.device)
        tot_loss = tot_nll = tot_kl = 0.0
        for i in range(M):
            idx = perm[i * batch_size:(i + 1) * batch_size]
            parts = elbo(model, x[idx], y[idx], weights[i], n_samples=n_samples, nll=nll)
            opt.zero_grad(set_to_none=True)
            parts.loss.backward()
            opt.step()
            loss = parts.loss.item()
            if not math.isfinite(loss):
                raise FloatingPointError(
                    f"loss became {loss} at epoch {epoch + 1}, minibatch {i + 1}: the run diverged. "
                    "Lower the learning rate, start rho lower, or use a wider prior.")
            tot_loss += loss * len(idx)
            tot_nll += parts.nll
            tot_kl += parts.kl * weights[i]
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
        if checkpoint is not None and ((epoch + 1) % checkpoint_every == 0 or epoch + 1 == epochs):
            save(epoch + 1)
    return history


def train_step_fn(model, opt, kl_weight=1.0, n_samples=1, nll=categorical_nll):
    """Return a function ``step(x, y) -> loss tensor`` doing one ELBO update (for benchmarks)."""
    def step(xb, yb):
        parts = elbo(model, xb, yb, kl_weight, n_samples=n_samples, nll=nll)
        opt.zero_grad(set_to_none=True)
        parts.loss.backward()
        opt.step()
        return parts.loss
    return step

