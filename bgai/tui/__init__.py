"""Terminal front end: play bgai in a terminal."""
