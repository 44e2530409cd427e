"""What a run is: Hydra's composition of ``conf/`` (``compose``, ``search_path``), the command
line's overrides and labels (``command_line``), the composed configuration read into a run
description (``config``), the run description as parts with its identity (``spec``), the search
spaces by name, parsed once (``spaces``), and the outside code a run's identity fingerprints
(``outside_code``)."""
