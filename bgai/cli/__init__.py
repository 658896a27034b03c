"""bgai's command line: ``bgai moves | hint | eval | analyse | train | generations | export | serve | play | bearoff``.

This package only parses arguments and calls the library; nothing in the library imports it.  Each subcommand
lives in its own module ``bgai/cli/<name>.py`` exposing ``register(subparsers)``, which adds its parser and sets
``func`` (called with the parsed namespace, returning the exit status).  Errors of bgai's own kinds
(:class:`bgai.errors.BgaiError`) become a one-line ``bgai: error: ...`` on stderr (quoted input cut short) and
exit status 2.  Options may come between positionals, and usage errors are one line too
(:class:`bgai.cli.args.BgaiArgumentParser`); seeds are checked here, at the edge, by
:func:`bgai.cli.args.seed_type`.
"""

from __future__ import annotations

import argparse
import importlib
import logging
import sys
import warnings

from bgai.cli.args import BgaiArgumentParser, error_text
from bgai.errors import BgaiError

#: Optional packages and the extra that brings each (``pip install 'bgai[EXTRA]'``).
EXTRAS = {
    "torch": "train", "tensorboard": "train", "tqdm": "train", "yaml": "train", "threadpoolctl": "train",
    "fastapi": "serve", "uvicorn": "serve", "starlette": "serve", "pydantic": "serve",
    "onnx": "onnx", "onnxruntime": "onnx", "gnubg_nn": "gnubg", "matplotlib": "plots", "ray": "ray",
}

#: Subcommand modules, in the order ``bgai --help`` lists them.
COMMANDS = ("moves", "hint", "eval", "analyse", "rollout", "train", "label", "generations", "export", "serve", "play",
            "bearoff")


def build_parser() -> argparse.ArgumentParser:
    """The top-level argument parser with every available subcommand registered."""
    from bgai import __version__

    parser = BgaiArgumentParser(prog="bgai", description="bgai: a self-play neural backgammon engine.")
    parser.add_argument("--version", action="version", version=f"bgai {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMANDS:
        try:
            module = importlib.import_module(f"bgai.cli.{name}")
        except ModuleNotFoundError as exc:  # a subcommand not built yet
            if exc.name == f"bgai.cli.{name}":
                continue
            raise
        module.register(sub)
    return parser


#: Loggers whose ``INFO`` lines the command line shows on stderr as ``bgai: <message>`` (one-line notices of the
#: library, silent in library use): the on-demand build of the bear-off database
#: (:data:`bgai.model.bearoff.BUILD_NOTICE`).
NOTICE_LOGGERS = ("bgai.model.bearoff",)


class _Notice(logging.Handler):
    """Writes a record as ``bgai: <message>`` to the ``sys.stderr`` of the moment (tests replace it)."""

    def emit(self, record: logging.LogRecord) -> None:
        try:
            print(f"bgai: {record.getMessage()}", file=sys.stderr, flush=True)
        except Exception:  # noqa: BLE001 - logging's own rule: a failing handler never raises
            self.handleError(record)


def _show_notices() -> None:
    """Show the ``INFO`` lines of :data:`NOTICE_LOGGERS` on stderr (once per process, however often ``main`` runs)."""
    for name in NOTICE_LOGGERS:
        logger = logging.getLogger(name)
        if not any(isinstance(h, _Notice) for h in logger.handlers):
            logger.addHandler(_Notice(logging.INFO))
        if logger.getEffectiveLevel() > logging.INFO:
            logger.setLevel(logging.INFO)


def _one_line_warning(message, category, filename, lineno, line=None) -> str:  # noqa: ARG001
    """A warning as the command line prints it: ``bgai: warning: <message>`` (no source line)."""
    return f"bgai: warning: {message}\n"


def main(argv: list[str] | None = None) -> int:
    """Run the command line; returns the exit status (0 ok, 1 some inputs failed, 2 usage or input error)."""
    args = None
    try:
        parser = build_parser()  # imports every subcommand (numpy, torch): a second or two; Ctrl-C lands below
        args = parser.parse_args(argv)
        warnings.formatwarning = _one_line_warning
        _show_notices()
        if not getattr(args, "func", None):
            parser.print_help()
            return 2
        return int(args.func(args) or 0)
    except BgaiError as exc:
        print(f"bgai: error: {error_text(exc)}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("bgai: interrupted", file=sys.stderr)
        return 130
    except ModuleNotFoundError as exc:
        top = (exc.name or "").split(".")[0]
        if top not in EXTRAS or args is None:  # a module missing while building the parser: not a user's extra
            raise
        print(
            f"bgai: error: 'bgai {args.command}' needs the Python package {top!r}, which is not installed: "
            f"pip install 'bgai[{EXTRAS[top]}]'",
            file=sys.stderr,
        )
        return 2
    except BrokenPipeError:
        return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
