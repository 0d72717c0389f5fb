"""Is the posterior learning? Issue 49's diagnostics for notebook 01 (helpers.posterior_diagnostics).

    python tools/posterior_diagnostics.py [--profile default|smoke]

Reruns each source configuration for at most 50 epochs on seed 0 with a per-epoch trace of sigma
(validation only) and writes results/01_mnist_classification/posterior_diagnostics.json after
every run (profile default; other profiles under build/<profile>/); a finished run is not repeated.
"""
import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def main(argv=None):
    from helpers import posterior_diagnostics as D
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--profile", default="default", choices=sorted(D.SETTINGS))
    args = ap.parse_args(argv)
    import torch

    from helpers.utils import use_profile_outputs
    use_profile_outputs(args.profile)  # only `default` writes the committed results
    torch.set_num_threads(1)
    D.run_all(args.profile, log=lambda m: print(m, flush=True))
    print(f"wrote {D.path()}")


if __name__ == "__main__":
    main()
