"""Self-play TD(lambda) training: configuration (:mod:`.config`), the trainer (:mod:`.td`), checkpoint files
(:mod:`.checkpoint`) and the run loop with logging and evaluation (:mod:`.run`)."""
