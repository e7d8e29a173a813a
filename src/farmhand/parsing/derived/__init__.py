"""A tool-call parser derived from a chat template, for templates no family module knows.

`probes` renders the template with inputs that differ in one thing, `analysis` diffs the
renders into a `Derived` description (shape and markers), and `parser` reads model output
with it, emitting the same events as the family parsers.
"""
