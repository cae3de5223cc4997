"""The ``bigtwo`` command: the one composition root of the project (:mod:`bigtwo.cli.main` dispatches;
one module per subcommand). It alone may import both the server (``bigtwo serve``/``run``) and the
client (``bigtwo play``, ``deal``, ``health``); the import contracts in pyproject.toml hold that."""
