"""``python -m hpo.data``: download, verify, list or build the dataset catalog
(``catalog._main``)."""

import sys

from hpo.data.catalog import _main

sys.exit(_main())
