"""Sweeps: every 2**32 and 2**31 runner, over one range value."""
