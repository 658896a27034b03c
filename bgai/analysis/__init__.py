"""Analysis layer: rank the plays of a position, evaluate it, decide the cube, roll it out, analyse matches."""
