#!/bin/sh
# GNU Backgammon's own 0-ply match analysis: the reference of tests/test_match_analysis.py.
#
# 1. Two more games files with errors in them, played by the real GNU Backgammon (1.07, Debian's /usr/games/gnubg)
#    against itself at 0-ply with evaluation noise (fixed seeds): noisy5.sgf (a 5-point match) and noisymoney.sgf
#    (a money session of three games, Jacoby rule, with wrong takes and missed doubles).
# 2. Every game file here (match3, session, resign3, noisy5, noisymoney) analysed by GNU Backgammon at 0-ply, checker
#    play and cube decisions ("set analysis chequerplay/cubedecision evaluation plies 0"; luck is always 0-ply):
#    NAME.gnubg-analysis.sgf.gz (the analysed match as gnubg saves it: every legal play with its equity, the cube
#    equities, the luck of each roll; gzip'd) and NAME.gnubg-stats.txt (its "show statistics match").
# Usage: sh tests/data/matches/make_analysis_fixtures.sh   (from the repository root; needs make_fixtures.sh's files)
set -e
GNUBG=${GNUBG:-/usr/games/gnubg}
DIR=$(cd "$(dirname "$0")" && pwd)
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

# 5-point match: a noisy player 0 (checker-play noise 0.08, cube 0.02) against a less noisy player 1 (0.03, 0.01),
# both 0-ply: two doubles taken, three games.
"$GNUBG" -t -q >/dev/null <<END
set seed 12
set player 0 gnubg
set player 1 gnubg
set player 0 chequerplay evaluation plies 0
set player 0 cubedecision evaluation plies 0
set player 1 chequerplay evaluation plies 0
set player 1 cubedecision evaluation plies 0
set player 0 chequerplay evaluation noise 0.08
set player 0 cubedecision evaluation noise 0.02
set player 1 chequerplay evaluation noise 0.03
set player 1 cubedecision evaluation noise 0.01
new match 5
set player 0 name Noisy
set player 1 name Steady
analysis clear match
save match $DIR/noisy5.sgf
END

# money session of three games, both players 0-ply with noise 0.06.
"$GNUBG" -t -q >/dev/null <<END
set seed 23
set automatic game off
set player 0 gnubg
set player 1 gnubg
set player 0 chequerplay evaluation plies 0
set player 0 cubedecision evaluation plies 0
set player 1 chequerplay evaluation plies 0
set player 1 cubedecision evaluation plies 0
set player 0 chequerplay evaluation noise 0.06
set player 0 cubedecision evaluation noise 0.06
set player 1 chequerplay evaluation noise 0.06
set player 1 cubedecision evaluation noise 0.06
new session
new game
new game
set player 0 name Gina
set player 1 name Hugo
analysis clear match
save match $DIR/noisymoney.sgf
END

for name in match3 session resign3 noisy5 noisymoney; do
    "$GNUBG" -t -q >"$TMP/$name.out" <<END
load match $DIR/$name.sgf
set analysis chequerplay evaluation plies 0
set analysis cubedecision evaluation plies 0
analyse match
save match $TMP/$name.analysed.sgf
show statistics match
END
    # keep the statistics table only (from its "Player" header line on)
    sed -n '/^Player  /,$p' "$TMP/$name.out" >"$DIR/$name.gnubg-stats.txt"
    gzip -9 -n <"$TMP/$name.analysed.sgf" >"$DIR/$name.gnubg-analysis.sgf.gz"
done
