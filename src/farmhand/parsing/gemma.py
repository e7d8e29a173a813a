"""Gemma 2 / 3: no tool-call format of their own, so llama.cpp's generic JSON format.

What differs from `generic` is the turn header, `<start_of_turn>model\\n`, after which the
prompt's text is part of the reply.
"""

from __future__ import annotations

from farmhand.parsing.generic import GenericParser


class GemmaParser(GenericParser):
    family = "gemma"
    assistant_start = ("<start_of_turn>model\n",)
