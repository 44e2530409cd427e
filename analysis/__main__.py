"""Command line: ``python -m analysis <results dir> [--chapter NAME] [--out DIR]
[--fig31-dataset NAME] [--no-pdf | --no-figures]``.

Re-runs only the analysis on existing results (a sweep folder ``results/<experiment>/<profile>``
or a consolidated folder) and writes the report of the chapter plug-in chosen from the results
(or ``--chapter``; ``analysis.plugins``): ``report.md``, ``tables/`` and ``figures/``, by
default in ``<sweep folder>/report/``.
"""

from __future__ import annotations

import argparse
import sys
import time

from analysis.load import PooledLabelError, default_report_dir
from analysis.plugins import REGISTRY


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m analysis", description=__doc__)
    parser.add_argument(
        "results",
        help="sweep folder (with runs/ or consolidated/) or a folder holding outcomes.parquet",
    )
    parser.add_argument(
        "--out",
        default=None,
        help="report folder (default: <results>/report, "
        "next to consolidated/ for a consolidated folder)",
    )
    parser.add_argument(
        "--chapter",
        default=None,
        choices=sorted(REGISTRY),
        help="chapter plug-in (default: from the results' experiment column, else the plug-in "
        "whose methods match)",
    )
    parser.add_argument(
        "--fig31-dataset",
        default=None,
        help="dataset of Fig 3.1 (default: the smoke profile's first dataset)",
    )
    parser.add_argument(
        "--candidates",
        nargs="+",
        default=None,
        metavar="METHOD",
        help="the benchmark report's candidates, as the results name them or by their method "
        "file's name (default: those the sweep folder remembers; every other method is a "
        "baseline)",
    )
    drawn = parser.add_mutually_exclusive_group()
    drawn.add_argument(
        "--no-pdf",
        action="store_true",
        help="write figures as PNG only (the report links PNGs; PDF doubles the drawing time)",
    )
    drawn.add_argument(
        "--no-figures",
        action="store_true",
        help="draw no figure: tables, claims and the plotted data only (the lean report of a "
        "paper-scale result set; drawing is most of its time)",
    )
    return parser


def main(argv: list[str] | None = None) -> int:
    """Write the report; 0 on success, 2 (one line on stderr) when the results are not found."""
    args = _parser().parse_args(argv)
    from analysis import figures
    from analysis.report import write_report

    started = time.perf_counter()
    try:
        suffixes = () if args.no_figures else ("png",) if args.no_pdf else ("png", "pdf")
        with figures.formats(*suffixes):
            report = write_report(
                args.results, args.out, args.fig31_dataset, args.chapter, args.candidates
            )
    except (FileNotFoundError, PooledLabelError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    out = args.out or default_report_dir(args.results)
    print(
        f"report: {report} (tables/ and figures/ in {out}; {time.perf_counter() - started:.0f} s)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
