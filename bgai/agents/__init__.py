"""Bots.  Every bot implements the small batched :class:`bgai.agents.base.Agent` interface."""
