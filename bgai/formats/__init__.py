"""Text formats bgai reads and writes: Position ID, Match ID, XGID, wildbg boards, play notation."""
