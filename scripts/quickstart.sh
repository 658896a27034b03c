#!/usr/bin/env bash
# bgai's main job on the shipped defaults (installs what it needs into .venv first):
#  1. teach a small network backgammon by self-play with configs/quick.yaml (a few minutes on a laptop CPU;
#     tensorboard logs and checkpoints go to a new folder runs/quick-seed1-<date>),
#  2. evaluate the shipped model (checkpoints/bgai-sl8.pt) against Tesauro's pubeval and print the table.
# Extra arguments are passed to `bgai train` (e.g. --set games=5000).
source "$(dirname "$0")/env.sh"
bgai train --config configs/quick.yaml "$@"
echo
echo "== the shipped model against pubeval (duplicate dice, cubeless money) =="
bgai eval checkpoints/bgai-sl8.pt pubeval --games 2000 --seed 1 --workers 2
