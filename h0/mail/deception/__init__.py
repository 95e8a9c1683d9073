"""Text that deceives its reader, caught before a message is sent or shown: link text naming another
address (`linktext`), look-alike domains (`lookalike`, over the Unicode confusables), and what renders as
nothing (`visible`, `visible_html`, `invisible_chars`).
"""

__all__ = ["invisible_chars", "linktext", "lookalike", "visible", "visible_html"]
