"""Benchmarks. Each runs from the checkout either way:

    .venv/bin/python tools/bench/<name>.py [options]
    .venv/bin/python -m tools.bench.<name> [options]

Run as a script, Python puts this folder first on sys.path, where a module named like a package
shadows it (`mcp.py` here once hid the `mcp` SDK from every bench that imported the hub), and the
repository root, which `tools.bench.*` imports need, is not there at all. So a bench that imports
either starts by taking this folder off sys.path and, unless `tools` is importable already (a driver
such as `tools/bench/ab.py` names the tree on PYTHONPATH, and that tree must win), putting the
root of the checkout the file lives in first. No module here may share a name with a package.
"""
