"""Run profiles: one table of settings per notebook for ``smoke``, ``default`` and ``paper``.

- ``smoke``: seconds, for CI (tiny data, few steps); proves the notebook runs top to bottom.
- ``default``: what a reader runs on a 2-core CPU in the time the notebook states.
- ``paper``: the paper's full settings (hours; a GPU is recommended).
"""
from types import SimpleNamespace

import math

PROFILE_NAMES = ("smoke", "default", "paper")

MNIST_MIXTURE = (0.5, 1.0, math.exp(-6))  # the paper's MNIST prior: pi 1/2, sigma1 1, sigma2 e^-6
BANDIT_TUNING = dict(seeds=(100, 101), steps=20_000, updates_per_step=64, record_every=100,
                     priors=[0.02, 0.05, 0.1, MNIST_MIXTURE],
                     recipes=["paper", "keep_all", "keep_all_fixed_kl"])

PROFILES = {
    "00_theory": {
        "smoke": dict(n_draws=2_000, n_kl_samples=(1, 10, 100), grad_reps=200, M=20),
        "default": dict(n_draws=200_000, n_kl_samples=(1, 10, 100, 1000, 10000), grad_reps=2_000,
                        M=469),
        "paper": dict(n_draws=1_000_000, n_kl_samples=(1, 10, 100, 1000, 10000, 100000),
                      grad_reps=10_000, M=469),
    },
    "02_regression_uncertainty": {
        "smoke": dict(n_train=100, steps=150, pred_samples=50, seeds=(0,), ensemble_size=2,
                      n_test=200),
        "default": dict(n_train=600, steps=3000, pred_samples=300, seeds=(0, 1, 2),
                        ensemble_size=5, n_test=2000),
        "paper": dict(n_train=600, steps=5000, pred_samples=1000, seeds=(0, 1, 2, 3, 4),
                      ensemble_size=5, n_test=5000),
    },
    "01_mnist_classification": {
        # n_train/n_eval: None = the paper's 50,000 / 10,000 / 10,000 split
        # sweep_warm_epochs: the sweep's horizon for warm-started configs (their deterministic start
        # already trains this long; the final runs then reuse their checkpoints)
        # mixture_extra_H: BBB scale mixture (1/M KL weights) also at these sizes; 2x1200 is the
        # network of the paper's Figure 2 and Table 2 (notebook 04 prunes it)
        "smoke": dict(hidden_sizes=(50,), mixture_extra_H=(30,), epochs=2, n_train=2000,
                      n_eval=1000, eval_samples=4,
                      sweep=dict(pi=[0.5], mu_init=[None, 0.1], samples=[1],
                                 kl_weighting=["uniform"], init_from=[None, "sgd"]),
                      sweep_epochs=1, sweep_warm_epochs=2, sweep_H=50),
        # default: random starts of the means only U(-0.1, 0.1) (nn.Linear's bound was worse in 3
        # of 4 pairs of an earlier sweep, notebook 01 section 1; 'paper' sweeps both), so the
        # whole notebook fits 30 min on 2 cores
        "default": dict(hidden_sizes=(400,), mixture_extra_H=(1200,), epochs=60, n_train=None,
                        n_eval=None, eval_samples=10,
                        sweep=dict(pi=[0.25, 0.5], mu_init=[0.1], samples=[1],
                                   kl_weighting=["uniform", "blundell"], init_from=[None, "sgd"]),
                        sweep_epochs=10, sweep_warm_epochs=60, sweep_H=400),
        "paper": dict(hidden_sizes=(400, 800, 1200), mixture_extra_H=(), epochs=600,
                      n_train=None, n_eval=None, eval_samples=10,
                      sweep=dict(pi=[0.25, 0.5, 0.75], neg_log_sigma1=[0.0, 1.0, 2.0],
                                 neg_log_sigma2=[6.0, 7.0, 8.0], samples=[1, 2, 5, 10],
                                 kl_weighting=["uniform", "blundell"], mu_init=[None, 0.1],
                                 init_from=[None, "sgd"]),
                      sweep_epochs=50, sweep_warm_epochs=600, sweep_H=400),
    },
    "04_pruning": {
        # H: the notebook-01 network pruned; compare_H: where the two KL weightings are compared
        "smoke": dict(H=30, fallback_epochs=2, n_train=2000, n_eval=1000, timing_repeats=2,
                      compare_H=50, compare_epochs=2),
        "default": dict(H=1200, fallback_epochs=60, n_train=None, n_eval=None, timing_repeats=5,
                        compare_H=400, compare_epochs=60),
        "paper": dict(H=1200, fallback_epochs=600, n_train=None, n_eval=None, timing_repeats=5,
                      compare_H=1200, compare_epochs=600),
    },
    "03_contextual_bandit": {
        # tuning: what the paper leaves open (the prior, how the KL is scaled, the buffer), chosen
        # on the regret of the BBB agent alone over ``seeds`` that are never reported
        # (tools/bandit_tuning.py); the reported runs use other seeds
        "smoke": dict(steps=60, seeds=(0,), updates_per_step=8, record_every=10,
                      tuning=dict(seeds=(100,), steps=60, updates_per_step=8, record_every=10,
                                  priors=[0.05, MNIST_MIXTURE], recipes=["paper", "keep_all"])),
        "default": dict(steps=8000, seeds=(0,), updates_per_step=64, record_every=100,
                        tuning=BANDIT_TUNING),
        "paper": dict(steps=50_000, seeds=(0, 1, 2, 3), updates_per_step=64, record_every=100,
                      tuning=BANDIT_TUNING),
    },
    "05_uncertainty": {
        # toy_*: priors on moons / circles (full-batch steps); conv_*: the Bayesian conv net
        "smoke": dict(H=50, epochs=1, bbb_epochs=1, n_train=2000, n_eval=1000, ensemble_size=2,
                      eval_samples=4, toy_n=200, toy_steps=100, conv_epochs=1,
                      conv_n_train=2000),
        "default": dict(H=400, epochs=30, bbb_epochs=50, n_train=None, n_eval=None,
                        ensemble_size=5, eval_samples=20, toy_n=500, toy_steps=2000, conv_epochs=5,
                        conv_n_train=None),
        "paper": dict(H=400, epochs=50, bbb_epochs=100, n_train=None, n_eval=None,
                      ensemble_size=5, eval_samples=50, toy_n=500, toy_steps=10000, conv_epochs=30,
                      conv_n_train=None),
    },
}


def get_profile(notebook, name, **overrides):
    """Return the settings of profile ``name`` for ``notebook`` as a namespace.

    Keyword overrides replace settings unless they are None (the notebooks' parameters cells pass
    None for "use the profile's value"). An unknown profile or setting raises ValueError.
    """
    if name not in PROFILE_NAMES:
        raise ValueError(f"unknown profile {name!r}; valid profiles are {list(PROFILE_NAMES)}")
    if notebook not in PROFILES:
        raise ValueError(f"no profiles for notebook {notebook!r}; known: {sorted(PROFILES)}")
    settings = dict(PROFILES[notebook][name])
    for key, value in overrides.items():
        if value is None:
            continue
        if key not in settings:
            raise ValueError(f"{key!r} is not a setting of notebook {notebook!r}; settings are "
                             f"{sorted(settings)}")
        settings[key] = value
    return SimpleNamespace(profile=name, **settings)
