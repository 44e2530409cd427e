"""``python -m hpo.data``: download, verify, list or build the dataset catalog
(:func:`hpo.data.cli.main`)."""

import sys

from hpo.data.cli import main

sys.exit(main())
