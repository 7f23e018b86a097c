"""The package version (read by `verify --version` without importing anything else)."""

__version__ = "0.1.0"
