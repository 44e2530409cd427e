"""Seed 004's report (Thornton 2014, Auto-WEKA): its tables beside the seed's, win matrices,
trajectories, selection frequencies and claims, from the run summaries that
``experiments/autoweka.py`` writes (``report.write_report``)."""
