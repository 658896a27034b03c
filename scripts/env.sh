# Sourced by scripts/quickstart.sh and scripts/test.sh: make sure .venv exists with bgai installed.
# Creates .venv with Python >= 3.11, installs torch's CPU build (torch==2.13.0, which pip takes from the
# local wheel store on bgai's machines instead of a multi-GB CUDA download), then bgai with its dev extra.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
PY=""
for cand in python3.11 python3.12 python3.13 python3; do
  if command -v "$cand" >/dev/null 2>&1 && "$cand" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else 1)'; then
    PY="$cand"; break
  fi
done
[ -n "$PY" ] || { echo "bgai needs Python >= 3.11" >&2; exit 2; }
STAMP=".venv/.bgai-installed"
if [ ! -x .venv/bin/python ]; then
  "$PY" -m venv .venv
fi
if [ ! -f "$STAMP" ] || [ pyproject.toml -nt "$STAMP" ]; then
  .venv/bin/python -m pip install -q --upgrade pip >/dev/null 2>&1 || true
  if ! .venv/bin/python -c 'import torch' >/dev/null 2>&1; then
    # CPU build: on machines without the local wheel store, take it from PyTorch's CPU index.
    .venv/bin/python -m pip install -q torch==2.13.0 \
      || .venv/bin/python -m pip install -q torch==2.13.0 --index-url https://download.pytorch.org/whl/cpu
  fi
  .venv/bin/python -m pip install -q -e ".[dev]"
  touch "$STAMP"
fi
export PATH="$ROOT/.venv/bin:$PATH:/usr/games"  # Debian installs gnubg in /usr/games
