"""Is the posterior learning? Issue 49's diagnostics for notebook 01 (helpers.posterior_diagnostics).

    python tools/posterior_diagnostics.py [--profile default|smoke]
    python tools/posterior_diagnostics.py --adam-mixture [--profile default|smoke] [--widths 400 800 1200]
    python tools/posterior_diagnostics.py --alternatives-bbb [--profile default|smoke] [--seeds 0 1 2]

Without --adam-mixture: reruns each source configuration for at most 50 epochs on seed 0 with a
per-epoch trace of sigma (validation only) and writes
results/01_mnist_classification/posterior_diagnostics.json after every run.

--adam-mixture: reruns seed 0 of the Adam recipe's warm-started scale-mixture Table 1 run at each
width exactly as it was run (the committed record's config; one thread, as the records ran), reads
sigma from the network at its end, compares the rerun with the record, and writes
results/01_mnist_classification/adam_sigma_check.json after every width. It trains with the code
of the record's commit (helpers/ extracted by `git archive` under build/code/, run in a
subprocess): today's BBB kernels draw another noise stream. --current-code trains with today's
code instead (stored apart, under "current_code").

--alternatives-bbb: reruns notebook 06's final BBB runs (plan v3; notebook 05 reads them too) of
seeds 0, 1, 2 in that order, one at a time, each exactly as it was run
(helpers.alternatives_final.run_one with the code of its record's commit, in a subprocess on one
thread), reads sigma from the network at its end, compares every score with the record, and
writes results/06_alternatives/v3/bbb_sigma_check.json (with a rendered "text") after every seed.

Profile default writes the committed results; other profiles write under build/<profile>/. A
finished run or width is not repeated.
"""
import argparse
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def main(argv=None):
    from helpers import posterior_diagnostics as D
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--profile", default="default", choices=sorted(D.SETTINGS))
    ap.add_argument("--adam-mixture", action="store_true",
                    help="measure sigma in the Adam recipe's warm-started scale-mixture runs")
    ap.add_argument("--widths", type=int, nargs="+", default=None,
                    help="--adam-mixture: the widths to rerun, in order (default: the profile's)")
    ap.add_argument("--current-code", action="store_true",
                    help="--adam-mixture: train with today's code (another noise stream) instead "
                         "of the record's commit; stored apart, under 'current_code'")
    ap.add_argument("--alternatives-bbb", action="store_true",
                    help="measure sigma in notebook 06's final BBB runs (reruns of seeds 0, 1, 2)")
    ap.add_argument("--seeds", type=int, nargs="+", default=None,
                    help="--alternatives-bbb: the seeds to rerun, in order (default: the profile's)")
    args = ap.parse_args(argv)
    os.environ.setdefault("OMP_NUM_THREADS", "1")  # the records ran on one thread
    os.environ.setdefault("MKL_NUM_THREADS", "1")
    import torch

    from helpers.utils import use_profile_outputs
    use_profile_outputs(args.profile)  # only `default` writes the committed results
    torch.set_num_threads(1)
    log = lambda m: print(m, flush=True)  # noqa: E731
    if args.alternatives_bbb:
        D.bbb06_run_all(args.profile, seeds=args.seeds, log=log)
        print(f"wrote {D.bbb06_path()}")
        return
    if args.adam_mixture:
        D.adam_run_all(args.profile, widths=args.widths, log=log,
                       code="current" if args.current_code else "record")
        print(f"wrote {D.adam_path()}")
        return
    D.run_all(args.profile, log=log)
    print(f"wrote {D.path()}")


if __name__ == "__main__":
    main()
