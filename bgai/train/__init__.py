"""Training: typed configs (:mod:`.config`), the trainer protocol (:mod:`.trainer`), the run loop with its folder,
logs, checkpoints and evaluations (:mod:`.loop`), and the algorithms it drives: TD(lambda) self-play
(:mod:`.td`, :mod:`.selfplay`, :mod:`.targets`) and supervised learning on labelled positions
(:mod:`.supervised`); :mod:`.run` picks the algorithm of a config."""
