"""Run profiles: one table of settings per notebook for ``smoke``, ``default`` and ``paper``.

- ``smoke``: seconds, for CI (tiny data, few steps); proves the notebook runs top to bottom.
- ``default``: what a reader runs on a 2-core CPU in the time the notebook states.
- ``paper``: the paper's full settings (hours; a GPU is recommended).
"""
from types import SimpleNamespace

PROFILE_NAMES = ("smoke", "default", "paper")

PROFILES = {
    "00_theory": {
        "smoke": dict(n_draws=2_000, n_kl_samples=(1, 10, 100), grad_reps=200, M=20),
        "default": dict(n_draws=200_000, n_kl_samples=(1, 10, 100, 1000, 10000), grad_reps=2_000,
                        M=469),
        "paper": dict(n_draws=1_000_000, n_kl_samples=(1, 10, 100, 1000, 10000, 100000),
                      grad_reps=10_000, M=469),
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
