"""The wheel carries the checkout's notebooks inside the package (fp8lab/notebooks/).

In a checkout the top-level notebooks/ is the one source; this copies it into the
built package only, so an installed fp8lab runs its notebooks from any folder.
"""

import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py


class BuildWithNotebooks(build_py):
    """build_py, then the notebooks into the built package."""

    def run(self) -> None:
        """Build the package, then copy the notebooks in."""
        super().run()
        source = Path(__file__).resolve().parent / "notebooks"
        target = Path(self.build_lib) / "fp8lab" / "notebooks"
        target.mkdir(parents=True, exist_ok=True)
        for notebook in sorted(source.glob("*.ipynb")):
            shutil.copy2(notebook, target / notebook.name)


setup(cmdclass={"build_py": BuildWithNotebooks})
