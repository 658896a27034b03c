"""Game layer: playing games between agents (cubeless, cubeful and match play: the batched game loop
:mod:`bgai.game.play` on its stepping core :class:`~bgai.game.play.GameBatch`, which self-play training drives
too, and :mod:`bgai.game.table`, the same turns step by step for players who decide one position at
a time, such as a person at the terminal), the doubling cube's rules and cube decisions, and match equity tables."""
