#!/bin/sh
# Regenerate the match-file fixtures of tests/test_matchfiles.py with the real GNU Backgammon (1.07, Debian's
# /usr/games/gnubg): it plays the games itself (fixed seeds), then exports them as .mat and saves them as .sgf
# ("analysis clear match" first drops the evaluations its players store, to keep the files small).
# Usage: sh tests/data/matches/make_fixtures.sh   (from the repository root)
set -e
GNUBG=${GNUBG:-/usr/games/gnubg}
DIR=$(cd "$(dirname "$0")" && pwd)

# 3-point match, gnubg against itself: a take, a resignation of a single game with the cube on 2, the Crawford
# game, a post-Crawford double dropped, a gammon.
"$GNUBG" -t -q >/dev/null <<END
set seed 7
set player 0 gnubg
set player 1 gnubg
new match 3
set player 0 name Alice
set player 1 name Bob
analysis clear match
export match mat $DIR/match3.mat
save match $DIR/match3.sgf
END

# money session of three games (Jacoby rule, gnubg's default), with takes, drops and a redouble.
"$GNUBG" -t -q >/dev/null <<END
set seed 6
set automatic game off
set player 0 gnubg
set player 1 gnubg
new session
new game
new game
set player 0 name Erin
set player 1 name Frank
analysis clear match
export match mat $DIR/session.mat
save match $DIR/session.sgf
END

# 3-point match where player 1 rolls 6-5 and then resigns a gammon instead of playing it (a roll with no play),
# then gnubg plays the rest for both sides.
"$GNUBG" -t -q >/dev/null <<END
set seed 3
set player 0 gnubg
set player 1 human
new match 3
roll
resign gammon
set player 1 gnubg
play
set player 0 name Carol
set player 1 name Dave
analysis clear match
export match mat $DIR/resign3.mat
save match $DIR/resign3.sgf
END
