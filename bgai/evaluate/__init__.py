"""Evaluation layer: long series of games between two agents (cubeless, cubeful, matches) with statistics."""
