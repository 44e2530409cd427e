"""A run's files, below both the code that writes them (:mod:`experiments`) and the code that
reads them (:mod:`analysis`): where they live (:mod:`runfiles.layout`), the columns they hold and
their types (:mod:`runfiles.schema`), and how they are written atomically, read, compared and set
aside (:mod:`runfiles.files`). What a run's identity is, and so a file's name, is the
experiments' business (:mod:`experiments.run.results`)."""
