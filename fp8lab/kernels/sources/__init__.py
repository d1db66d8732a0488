"""Where a kernel under test comes from: Python, torch, a shared library."""
