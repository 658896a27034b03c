"""``python -m bgai`` runs the command line."""

import sys

from bgai.cli import main

sys.exit(main())
