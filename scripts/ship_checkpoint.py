#!/usr/bin/env python
"""Copy a run's model into ``checkpoints/`` as a small model-only checkpoint with a JSON metadata file.

Usage: ``python scripts/ship_checkpoint.py SOURCE.pt [SOURCE2.pt ...] checkpoints/NAME.pt [--eval FILE.json ...]``

With several sources (e.g. the last snapshots of one run, ``runs/NAME/snapshots/model-*.pt``) the weights are
averaged (Polyak averaging of the TD iterates; all sources must have the same architecture and encoding) and the
metadata lists them.

Writes ``checkpoints/NAME.pt`` (weights, architecture, encoding, config, games trained, the run's evaluations;
no optimiser or self-play state) and ``checkpoints/NAME.json`` (games trained, config, encoding, the run's
evaluation history, and any final evaluation reports given with ``--eval``: the ``--json`` output of
``bgai eval``).  Both are written atomically.
"""

from __future__ import annotations

import json
import os
import sys

from bgai.cli.args import BgaiArgumentParser


def main(argv=None) -> int:
    ap = BgaiArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("source", nargs="+", help="checkpoint(s) of a run (best.pt, last.pt, snapshots); several: averaged")
    ap.add_argument("dest", help="checkpoints/NAME.pt")
    ap.add_argument("--eval", action="append", default=[], help="bgai eval --json report(s) to record")
    args = ap.parse_args(argv)

    from bgai.errors import BgaiError
    from bgai.evaluate.series import write_json_atomic
    from bgai.model.bundle import build_checkpoint, load_net, save_checkpoint

    try:
        nets = [load_net(src) for src in args.source]
        net, enc, ckpt = max(nets, key=lambda t: t[2]["games_trained"])
        if len(nets) > 1:
            import torch

            for other, oenc, _ in nets:
                if other.spec != net.spec or oenc.describe() != enc.describe():
                    raise BgaiError("checkpoints to average must share architecture and encoding")
            state = {k: torch.stack([n.state_dict()[k] for n, _, _ in nets]).mean(dim=0) for k in net.state_dict()}
            net.load_state_dict(state)
        model = build_checkpoint(net, enc, ckpt["config"], ckpt["games_trained"], ckpt.get("evals", []))
        save_checkpoint(model, args.dest)
        finals = []
        for path in args.eval:
            with open(path, encoding="utf-8") as fh:
                finals.append(json.load(fh))
    except (BgaiError, OSError, json.JSONDecodeError) as exc:
        print(f"ship_checkpoint: error: {exc}", file=sys.stderr)
        return 2
    meta = {
        "checkpoint": os.path.basename(args.dest),
        "games_trained": int(ckpt["games_trained"]),
        "averaged_from": [{"file": os.path.basename(src), "games_trained": int(c["games_trained"])}
                          for src, (_, _, c) in zip(args.source, nets)] if len(nets) > 1 else [],
        "encoding": enc.describe(),
        "network": net.spec.to_dict(),
        "config": ckpt["config"],
        "final_evaluations": finals,
        "training_evaluations": ckpt.get("evals", []),
        "bytes": os.path.getsize(args.dest),
    }
    write_json_atomic(os.path.splitext(args.dest)[0] + ".json", meta)
    print(f"wrote {args.dest} ({meta['bytes']} bytes, {meta['games_trained']} games) and its .json")
    return 0


if __name__ == "__main__":
    sys.exit(main())
