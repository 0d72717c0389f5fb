"""Notebook 04's plan v2: SNR pruning against fair references (helpers.pruning_plan).

    python tools/pruning_refs.py plan       # write results/04_pruning/plan_v2.json (commit it first)
    python tools/pruning_refs.py run        # train and prune the networks missing here (resumable;
                                            # start it twice for two cores: each claims its own)
    python tools/pruning_refs.py analyse    # test the plan's claims: results/04_pruning/v2/summary.json
    python tools/pruning_refs.py status     # what is done, adopted and still to do

Only the `default` profile writes the committed results; the plan's networks are Table 1's.
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
    args = ap.parse_args(argv)
    from helpers import pruning_plan as P
    if args.command == "plan":
        print(f"wrote {P.write_plan()}: commit it before `run`")
        return
    if args.command == "status":
        for j in P.jobs():
            state = ("adopted from version 1" if j["adopted"] is not None else
                     "done" if P.record_path(j["name"]).exists() else "to do")
            print(f"{j['role']:9s} 2x{j['H']} seed {j['seed']}: {state}  ({j['name']})")
        return
    if args.command == "analyse":
        path = P.write_summary()
        s = P.summary()
        print(f"wrote {path}" + (f" (interim: {len(s['missing'])} networks missing)"
                                 if s["interim"] else ""))
        for family, claims in s["families"].items():
            for claim, r in claims.items():
                print(f"{family}: {claim}: {r['verdict']} (Holm p {r['p_holm']})")
        return
    if not (ROOT / P.PLAN).exists():
        sys.exit(f"no {P.PLAN}: run `python tools/pruning_refs.py plan` and commit it first")
    import torch

    from helpers import campaign
    from helpers.data import load_mnist
    campaign.code_version()  # read now: the code this process loaded, named in every record
    torch.set_num_threads(args.threads)
    data = load_mnist(device="cpu", n_train=None, n_test=None)
    ran = campaign.work(P.pending, lambda j: P.run_job(j, data), P.NB,
                        name_fn=lambda j: f"v{P.VERSION}_{j['name']}",
                        done_fn=lambda j: P.record_path(j["name"]).exists(),
                        max_jobs=args.max_jobs)
    print(f"ran {ran} networks; {len(P.pending())} still to do")


if __name__ == "__main__":
    main()
