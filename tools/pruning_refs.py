"""Notebook 04's plan v2: SNR pruning against fair references (helpers.pruning_plan).

    python tools/pruning_refs.py plan [--version 3]   # write results/04_pruning/plan_v<N>.json
                                            # (commit it before `run`)
    python tools/pruning_refs.py run        # train and prune the networks missing here (resumable;
                                            # start it twice for two cores: each claims its own)
    python tools/pruning_refs.py analyse    # test the plans' claims: results/04_pruning/v2/ and
                                            # v3/summary.json (v3: BBB's starting networks)
    python tools/pruning_refs.py status     # what is done, adopted and still to do

Only the `default` profile writes the committed results; the plan's networks are notebook 01's earlier Adam runs (table1.json), not its final Table 1's.
"""
import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("command", choices=["plan", "run", "analyse", "status"])
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--max-jobs", type=int, default=None)
    ap.add_argument("--version", type=int, default=2, choices=[2, 3],
                    help="which plan `plan` writes")
    args = ap.parse_args(argv)
    from helpers import pruning_plan as P
    if args.command == "plan":
        print(f"wrote {P.write_plan(version=args.version)}: commit it before `run`")
        return
    if args.command == "status":
        for j in P.jobs():
            state = ("adopted from version 1" if j["adopted"] is not None else
                     "done" if P.job_path(j).exists() else "to do")
            print(f"{j['role']:9s} 2x{j['H']} seed {j['seed']}: {state}  ({j['name']})")
        return
    if args.command == "analyse":
        for version in (P.VERSION, P.VERSION_V3):
            path, s = P.write_summary(version=version)
            print(f"wrote {path}" + (f" (interim: {len(s['missing'])} networks missing; "
                                     "verdicts not shown until complete)" if s["interim"] else ""))
            if not s["interim"]:
                for family, claims in s["families"].items():
                    for claim, r in claims.items():
                        print(f"  {family}: {claim}: {r['verdict']} (Holm p {r['p_holm']:.3g})")
        return
    for plan, v in ((P.PLAN, P.VERSION), (P.PLAN_V3, P.VERSION_V3)):
        if not (ROOT / plan).exists():
            sys.exit(f"no {plan}: run `python tools/pruning_refs.py plan --version {v}` and "
                     "commit it first")
    import torch

    from helpers import campaign
    from helpers.data import load_mnist
    campaign.code_version()  # read now: the code this process loaded, named in every record
    torch.set_num_threads(args.threads)
    data = load_mnist(device="cpu", n_train=None, n_test=None)
    ran = campaign.work(P.pending, lambda j: P.run_job(j, data), P.NB,
                        name_fn=lambda j: f"pruning_{j['name']}",
                        done_fn=lambda j: P.job_path(j).exists(),
                        max_jobs=args.max_jobs)
    print(f"ran {ran} networks; {len(P.pending())} still to do")


if __name__ == "__main__":
    main()
