"""Game layer: playing games between agents (cubeless, cubeful and match play: the batched game loop
:mod:`bgai.game.play`, and :mod:`bgai.game.table`, the same turns step by step for players who decide one position at
a time, such as a person at the terminal), the doubling cube's rules and cube decisions, and match equity tables."""
