"""bgai: a self-play neural backgammon engine.

Data flows one way: rules (:mod:`bgai.core.board`) -> move generation (:mod:`bgai.core.movegen`) -> encoding
(:mod:`bgai.model.features`) -> network (:mod:`bgai.model.nets`) -> agents (:mod:`bgai.agents`) -> games and matches
(:mod:`bgai.game.play`) -> evaluation / training / serving.  Text formats live in :mod:`bgai.formats`.
"""

__version__ = "0.1.0"
