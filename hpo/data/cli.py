"""``python -m hpo.data``: the datasets' command line.

``download`` fetches the UCI-121 archive and verifies it, ``verify`` checks a copy against the
catalog's SHA-256 sums, ``list`` prints the catalog, ``fetch-openml`` keeps OpenML sets in the
OpenML folder, ``build-catalog`` rebuilds ``data/catalog.tsv`` from a copy. The UCI-121 folder:
``--dest`` or ``--data-dir``, else ``$HPO_UCI121_DIR``, else ``<repo>/data/uci121`` (where ``make
data`` puts it).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from hpo.data.catalog import CATALOG_PATH, catalog
from hpo.data.download import build_catalog, download, report_verification
from hpo.data.openml_sets import load_openml, openml_dir
from hpo.data.types import DatasetError
from hpo.data.uci121 import ENV_UCI121_DIR, UCI121_URL, uci121_dir


def main(argv: list[str] | None = None) -> int:
    """Run one command of ``python -m hpo.data``; 0 on success, 1 (one line on stderr) on a
    :class:`DatasetError`."""
    parser = argparse.ArgumentParser(prog="python -m hpo.data", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    get = sub.add_parser("download", help="download and verify the UCI-121 archive")
    get.add_argument("--dest", default=None, help=f"target folder (default ${ENV_UCI121_DIR})")
    get.add_argument("--url", default=UCI121_URL)
    get.add_argument("--force", action="store_true")
    check = sub.add_parser("verify", help="verify an existing copy against the catalog")
    check.add_argument("--data-dir", default=None)
    sub.add_parser("list", help="print the catalog")
    fetch = sub.add_parser("fetch-openml", help="fetch OpenML datasets into the OpenML folder")
    fetch.add_argument("ids", nargs="+", type=int, help="OpenML ids, e.g. 389 772")
    build = sub.add_parser("build-catalog", help="rebuild data/catalog.tsv from a copy")
    build.add_argument("source_dir", type=Path)
    build.add_argument("thesis_names_csv", type=Path)
    args = parser.parse_args(argv)
    try:
        if args.command == "download":
            download(args.dest, args.url, args.force)
        elif args.command == "verify":
            report_verification(uci121_dir(args.data_dir))
        elif args.command == "fetch-openml":
            for dataset_id in args.ids:
                data = load_openml(dataset_id)
                print(f"openml:{dataset_id}: {data.X.shape[0]} rows, {data.X.shape[1]} features")
            print(f"kept in {openml_dir()}")
        elif args.command == "list":
            print(catalog().drop(columns=["sha256"]).to_string(index=False))
        else:
            build_catalog(args.source_dir, args.thesis_names_csv).to_csv(
                CATALOG_PATH, sep="\t", index=False
            )
            print(f"wrote {CATALOG_PATH}")
    except DatasetError as err:
        print(f"error: {err}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
