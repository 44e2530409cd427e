"""The package's Hydra configs (a package, so that ``pkg://my_optimizer/conf`` resolves)."""
