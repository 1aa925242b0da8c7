"""The top floor: the `nesyplan` command line (cli), `make demo` (demo), a Run in the terminal (show).
May import workers/ and pipeline/; nothing imports it.
"""
