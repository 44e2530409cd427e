"""One run, from its description to its results file: the one trial loop (``trial_loop``), the
run's set-up and its trials on folds (``runner``) with their tables (``run_tables``), the trials
of an optimizer that races over instances with their tables (``instances``), the results file's
name, provenance and writing (``results``), and the command's side: the progress bar
(``progress``), Ctrl-C and SIGTERM (``interrupt``), the journal a stopped run resumes from
(``journal``) and the command that runs and saves one run (``single``)."""
