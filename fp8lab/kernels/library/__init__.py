"""Third-party libraries' quantizers as GQ kernels, each called the way its library calls it.

One module per library; each imports its library inside the kernel, so the
module imports (and names its kernels as ``MODULE:FUNC``) where the library is
absent. They are kernels under test: ``fp8lab gates --kernel`` and the
``ecosystem`` notebook run them in a child process with ``--arrays torch``.
"""
