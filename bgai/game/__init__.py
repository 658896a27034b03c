"""Game layer: playing games between agents (cubeless, cubeful and match play), the doubling cube's rules and
cube decisions, and match equity tables."""
