"""Reading values out of words: dates, numbers and amounts, normalisers (clingo context helpers).
Imports nothing of the project.
"""
