"""``python -m experiments.sweep``: the sweep command line (:mod:`experiments.sweep.cli`)."""

import sys

from experiments.run.interrupt import raise_on_signals
from experiments.sweep.cli import main

# A signal is one line and exit 130 (SIGINT) or 143 (SIGTERM), as for a single run.
raise_on_signals()
sys.exit(main())
