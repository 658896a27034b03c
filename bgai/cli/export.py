"""``bgai export CHECKPOINT --out model.onnx``: export a trained model.

Writes ``model.onnx`` (input ``features``, output ``probs``, dynamic batch, metadata), ``model.npz`` (weights for
the numpy-only bot, :mod:`bgai.agents.numpy_bot`) and ``model.golden.json`` (reference features and outputs); a
model of several nets also ``model.NAME.onnx`` / ``model.NAME.npz`` per further net; see :mod:`bgai.model.export`.
``--out model.npz`` (or ``--format npz``) writes only the numpy weights.  The format is taken from ``--out``'s
ending; a ``--format`` that does not match it is an error.  All files are replaced, or none.  A model with the
bear-off database (``bgai bearoff attach``) exports with it in the class rule, and the numpy-only bot then values
bear-offs by the database (built with numpy on first use).
"""

from __future__ import annotations

import argparse


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``export`` subcommand to bgai's argument parser."""
    p = subparsers.add_parser(
        "export",
        help="export a checkpoint to ONNX (+ numpy weights and a golden file)",
        description=(
            "Export a bgai checkpoint: ONNX model (input 'features', output 'probs' = win, win gammon, win "
            "backgammon, lose gammon, lose backgammon for the side on roll; dynamic batch; opset 17), numpy "
            "weights for the torch-free bot (bgai.agents.numpy_bot) and a golden file of reference inputs and outputs."
        ),
        epilog="example:  bgai export checkpoints/model.pt --format onnx --out model.onnx.  With the exact "
               "bear-off database for bear-offs: bgai bearoff attach checkpoints/model.pt --out model-db.pt, then "
               "bgai export model-db.pt --out model.onnx.",
    )
    p.add_argument("checkpoint", metavar="CHECKPOINT", help="a bgai checkpoint (.pt), or 'default' (the shipped model)")
    p.add_argument("--format", type=str.lower, choices=("onnx", "npz"), default=None, help="onnx (also writes .npz and .golden.json "
                   "beside it) or npz (numpy weights only); default: from the ending of --out, which must match")
    p.add_argument("--out", required=True, metavar="PATH", help="output file, model.onnx or model.npz (its directory "
                   "must exist; all files of the export are replaced together, or none)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Run ``bgai export``."""
    from bgai.agents.registry import EXPORT_SUFFIXES, parse_spec, resolve_spec
    from bgai.errors import AgentSpecError
    from bgai.model.export import export_checkpoint

    resolved = resolve_spec(args.checkpoint)  # 'default' -> the model file, with the options $BGAI_MODEL gives it
    path, options = parse_spec(resolved)
    if options:  # 'default:ply=1', 'm.pt:ply=1' or $BGAI_MODEL=m.pt:ply=1: agent options, not part of a model file
        stands = "" if resolved == args.checkpoint else f" (it stands for {resolved!r})"
        raise AgentSpecError(f"bgai export takes a model file, not agent options: {args.checkpoint!r} has "
                             f"{', '.join(f'{k}={v}' for k, v in options.items())}{stands}; export the file alone "
                             "and give the options when the exported model is loaded (e.g. model.onnx:ply=1)")
    if path.lower().endswith(EXPORT_SUFFIXES):  # an exported model holds no training state to export from
        raise AgentSpecError(f"{path!r} is already an exported model; bgai export takes a checkpoint (.pt), such as "
                             "the one it was exported from")
    written = export_checkpoint(path, args.out, fmt=args.format)
    for kind, path in written.items():
        print(f"{kind:6s} {path}")
    return 0
