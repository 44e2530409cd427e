"""Entry point: one run (``python run.py optimizer=gp_r dataset=adult protocol=cv5``) or a Hydra
multirun (``-m``). Composes the config and hands a plain RunSpec to the library."""

from __future__ import annotations

import sys

import hydra
from omegaconf import DictConfig, OmegaConf

from experiments.config import UsageError, check_overrides, spec_from_config
from experiments.single import run_and_save, summarize
from hpo.datasets import DatasetError


@hydra.main(config_path="conf", config_name="config", version_base=None)
def main(cfg: DictConfig) -> None:
    try:
        spec = spec_from_config(OmegaConf.to_container(cfg, resolve=True))
        existed = False
        from pathlib import Path

        from experiments.results import run_filename

        existed = (Path(cfg.results_dir) / run_filename(spec)).exists()
        path = run_and_save(spec, cfg.results_dir, cfg.data_dir)
    except (UsageError, DatasetError, ValueError) as err:
        print(f"error: {err}", file=sys.stderr)
        sys.exit(2)
    if existed:
        print(f"already finished, not run again (results are never overwritten): {path}")
    print(summarize(path).to_string(index=False))
    print(f"results: {path}")


if __name__ == "__main__":
    try:
        check_overrides(sys.argv[1:])
    except UsageError as err:
        print(f"error: {err}", file=sys.stderr)
        sys.exit(2)
    main()
