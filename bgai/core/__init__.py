"""Core layer: the board, dice, legal plays and their notation, Position IDs and game results.

Depends on numpy and :mod:`bgai.errors` only; every other layer builds on it. Importing it loads no other
bgai layer and not torch.
"""
