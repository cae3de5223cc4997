"""Clients for the Big Two service: the ``bigtwo`` command line."""
