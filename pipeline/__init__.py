"""The spine: Run record (records), settings, stage runner (run), the stages and what they use.
Imports nothing outside pipeline/ (never workers/ or nesyplan/); layers: pyproject.toml.
"""
