"""The pieces of scripts/probe-hostile.py: the inputs by parser, and the runner."""
