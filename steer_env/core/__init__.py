"""TEMPORARY stand-in for the one-definition core (replaced by the issue8-lib branch)."""
