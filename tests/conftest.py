"""Shared pytest configuration. The package is installed (make venv); nothing is added to sys.path."""
