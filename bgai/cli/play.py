"""``bgai play [--agent SPEC] [--match N] [--seed S] [--position POSITION] [--save FILE]``: play against the bot in
the terminal (:mod:`bgai.tui.terminal`)."""

from __future__ import annotations

import argparse

from bgai.cli.args import seed_type
from bgai.game.met import MAX_MATCH_LENGTH


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``play`` subcommand to bgai's argument parser."""
    p = subparsers.add_parser(
        "play",
        help="play against the bot in the terminal",
        description=(
            "Play a money session (default; Jacoby rule) or a match against the bot, with the cube.  Type plays in "
            "standard notation (13/8 13/11, bar/22*, 6/off, 8/2(2)); 'hint' shows the bot's choice, 'double', "
            "'take', 'drop' handle the cube, 'resign', 'board', 'score', 'save FILE', 'help', 'quit'."
        ),
        epilog="examples:  bgai play --agent pubeval --match 5 --save match.mat;  "
        "bgai play --agent gnubg --position 4HPwATDgc/ABMA:cAkAAAAAAAAA --save game.sgf",
    )
    p.add_argument(
        "--agent",
        default="default",
        metavar="SPEC",
        help="the opponent: 'default' ($BGAI_MODEL, else the shipped model named in checkpoints/models.json; an error if there is none), random, pubeval, racer, "
        "blocker, gnubg, or a checkpoint path such as model.pt[:ply=1]",
    )
    p.add_argument("--match", type=int, default=None, metavar="N",
                   help=f"play a match to N points, 1..{MAX_MATCH_LENGTH} (default: a money session)")
    p.add_argument("--seed", type=seed_type, default=None, help="seed for the dice, 0..2**63-1 (default: random)")
    p.add_argument(
        "--position",
        default=None,
        metavar="POSITION",
        help="start the first game from this position, with its cube, score and dice: a Position ID[:Match ID], an "
        "XGID or a FIBS board (you are the side to act); later games start from the opening position",
    )
    p.add_argument(
        "--save",
        default=None,
        metavar="FILE",
        help="when the session ends (also after Ctrl-C), write its games to FILE.mat or FILE.sgf (atomically); "
        "a game from --position needs .sgf",
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Run ``bgai play``."""
    from bgai.errors import BgaiError
    from bgai.serve.bot import default_agent_spec
    from bgai.tui.terminal import play_in_terminal

    if args.match is not None and not 1 <= args.match <= MAX_MATCH_LENGTH:
        raise BgaiError(f"--match N: a match is played to 1..{MAX_MATCH_LENGTH} points (the longest match equity "
                        f"table and GNU Backgammon's limit), got {args.match} (leave --match out for a money session)")
    if args.save:
        from bgai.util.fileio import check_destination

        check_destination(args.save, probe=True)  # a missing folder is an error now, not after the session
    spec = default_agent_spec() if args.agent == "default" else args.agent
    return play_in_terminal(spec, match_length=args.match or 0, seed=args.seed, position=args.position,
                            save=args.save)
