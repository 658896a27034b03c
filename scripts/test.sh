#!/usr/bin/env bash
# Run bgai's test suite (installs what it needs into .venv first). Extra arguments go to pytest.
source "$(dirname "$0")/env.sh"
exec python -m pytest -n 2 "$@"
