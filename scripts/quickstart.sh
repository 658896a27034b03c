#!/usr/bin/env bash
# bgai's main job on the shipped defaults (installs what it needs into .venv first).
source "$(dirname "$0")/env.sh"
bgai moves 4HPwATDgc/ABMA 31
