"""bgai: a self-play neural backgammon engine.

Data flows one way: rules (:mod:`bgai.board`) -> move generation (:mod:`bgai.movegen`) -> encoding
(:mod:`bgai.features`) -> network (:mod:`bgai.nets`) -> agents (:mod:`bgai.agents`) -> games and matches
(:mod:`bgai.play`) -> evaluation / training / serving.  Text formats live in :mod:`bgai.formats`.
"""

__version__ = "0.1.0"
