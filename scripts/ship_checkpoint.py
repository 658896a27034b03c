#!/usr/bin/env python
"""Copy a run's model into ``checkpoints/`` as a small model-only checkpoint with a JSON metadata file.

Usage: ``python scripts/ship_checkpoint.py runs/tdgammon/best.pt checkpoints/NAME.pt [--eval FILE.json ...]``

Writes ``checkpoints/NAME.pt`` (weights, architecture, encoding, config, games trained, the run's evaluations;
no optimiser or self-play state) and ``checkpoints/NAME.json`` (games trained, config, encoding, the run's
evaluation history, and any final evaluation reports given with ``--eval``: the ``--json`` output of
``bgai eval``).  Both are written atomically.
"""

from __future__ import annotations

import argparse
import json
import os
import sys


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("source", help="a checkpoint of a run (best.pt or last.pt)")
    ap.add_argument("dest", help="checkpoints/NAME.pt")
    ap.add_argument("--eval", action="append", default=[], help="bgai eval --json report(s) to record")
    args = ap.parse_args(argv)

    from bgai.errors import BgaiError
    from bgai.evaluate import write_json_atomic
    from bgai.train.checkpoint import build_checkpoint, load_net, save_checkpoint

    try:
        net, enc, ckpt = load_net(args.source)
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
