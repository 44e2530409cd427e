"""Glue between configs and the library: builds runs from Hydra configs, executes them, writes
results, runs and resumes sweeps."""
