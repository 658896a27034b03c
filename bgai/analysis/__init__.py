"""Analysis on top of the agents: rollouts of positions and plays (and, later, ranking and match analysis)."""
