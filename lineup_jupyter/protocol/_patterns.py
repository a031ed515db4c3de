"""Regular expressions that agents and apps supply, run on a linear-time engine (H14, C6).

An input's ``pattern`` (H14) and a JSON Schema's ``pattern`` and ``patternProperties`` (app
event schemas, capability input schemas) come from agents and apps. Python's ``re``
backtracks and cannot be interrupted: one pattern and one typed answer held the kernel, and
the host's lock, for seconds (issue 14). Every such pattern runs on RE2 (google-re2), whose
time is linear in the text, or is refused when it is shown, declared or installed.

The syntax is JavaScript's, as the browser reads it (an HTML ``pattern`` attribute is a
JavaScript regular expression with the ``v`` flag; JSON Schema says ECMA-262, which JavaScript
validators run with the ``u`` flag), in the part RE2 runs with the same meaning.
:func:`compile_pattern` translates it token by token: ``.`` and ``\\s`` get JavaScript's
character sets, ``\\uHHHH`` and ``(?<name>`` RE2's spelling. Whatever is outside that part is
refused with the reason and the position:

- backreferences (``\\1``, ``\\k<name>``) and lookaround (``(?=``, ``(?!``, ``(?<=``,
  ``(?<!``): RE2 has none, which is what keeps it linear;
- what JavaScript would read otherwise or not at all: inline modifiers (``(?i)``, ``(?x)``),
  Python's ``(?P<name>``, a lone ``{``, ``}`` or ``]``, and with the ``v`` flag nested classes,
  set operations, ``(){}/|-`` or a doubled punctuator unescaped inside a class; ``\\p{...}``
  other than a general category or a script, an escaped letter JavaScript does not know;
- what RE2 will not compile: a repetition count above 1000, a program above its memory
  budget (``_MAX_MEM``).
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

__all__ = ["Pattern", "PatternError", "compile_pattern"]

# RE2's budget for one compiled pattern and its matching caches; past it a pattern is refused
# at compile time and never grows at match time. Patterns are cached (below), so this times
# the cache size bounds what they can hold together (64 MiB).
_MAX_MEM = 1 << 20
_CACHED = 64

# JavaScript's \s (WhiteSpace and LineTerminator) and the line terminators '.' does not match.
_JS_SPACE = (
    r"\t\n\x{0B}\f\r \x{A0}\x{1680}\x{2000}-\x{200A}\x{2028}\x{2029}\x{202F}\x{205F}"
    r"\x{3000}\x{FEFF}"
)
_LINE_TERMINATORS = r"\n\r\x{2028}\x{2029}"
_SAME_ESCAPES = {
    "d": r"\d",  # [0-9] in both (JavaScript's u and v flags, RE2's Perl classes)
    "D": r"\D",
    "w": r"\w",  # [0-9A-Za-z_] in both
    "W": r"\W",
    "t": r"\t",
    "n": r"\n",
    "r": r"\r",
    "f": r"\f",
    "v": r"\x{0B}",
}
# Unicode general categories RE2 knows under the name JavaScript uses for them.
_CATEGORIES = frozenset(
    {
        "C",
        "Cc",
        "Cf",
        "Co",
        "Cs",
        "L",
        "Ll",
        "Lm",
        "Lo",
        "Lt",
        "Lu",
        "M",
        "Mc",
        "Me",
        "Mn",
        "N",
        "Nd",
        "Nl",
        "No",
        "P",
        "Pc",
        "Pd",
        "Pe",
        "Pf",
        "Pi",
        "Po",
        "Ps",
        "S",
        "Sc",
        "Sk",
        "Sm",
        "So",
        "Z",
        "Zl",
        "Zp",
        "Zs",
    }
)
_QUANTIFIER = re.compile(r"\{([0-9]+)(,([0-9]*))?\}")
_GROUP_NAME = re.compile(r"\(\?<([A-Za-z_][A-Za-z0-9_]*)>")
_HEX2 = re.compile(r"[0-9A-Fa-f]{2}")
_HEX4 = re.compile(r"[0-9A-Fa-f]{4}")
_HEX_BRACED = re.compile(r"\{([0-9A-Fa-f]{1,6})\}")
_PROPERTY = re.compile(r"\{(?:(?:General_Category|gc|Script|sc)=)?([A-Za-z_]{1,64})\}")
# What a backslash may escape as itself with the u and v flags: the syntax characters and
# '/' anywhere; inside a class also '-', and with the v flag the reserved punctuators.
_IDENTITY = "^$\\.*+?()[]{}|/"
_CLASS_IDENTITY_U = "-"
_CLASS_IDENTITY_V = "-&!#%,:;<=>@`~"
# v-flag classes: these must be escaped, and a doubled one of the second set is reserved.
_CLASS_SYNTAX = "(){}/|"
_CLASS_DOUBLES = "&!#$%*+,.:;<=>?@^`~-"


class PatternError(ValueError):
    """Why a pattern is refused; ``str()`` is the message for the user or the agent."""


class Pattern:
    """A compiled pattern: ``fullmatch`` for an input's pattern (HTML checks the whole
    value), ``search`` for JSON Schema's ``pattern`` (ECMA-262 semantics: anywhere)."""

    __slots__ = ("_regex", "source")

    def __init__(self, source: str, regex: Any) -> None:
        self.source = source
        self._regex = regex

    def fullmatch(self, text: str) -> bool:
        return _run(self._regex.fullmatch, text)

    def search(self, text: str) -> bool:
        return _run(self._regex.search, text)


def _run(method: Any, text: str) -> bool:
    try:
        return method(text) is not None
    except UnicodeEncodeError:  # a lone surrogate: not text any pattern of ours can match
        return False


def compile_pattern(source: str, *, unicode_sets: bool = True) -> Pattern:
    """The pattern, translated to RE2 and compiled; :class:`PatternError` says why not.

    ``unicode_sets``: read classes as the ``v`` flag does (an HTML ``pattern`` attribute);
    False reads them with the ``u`` flag, as JSON Schema validators in JavaScript do, where
    ``[/(]`` is two plain characters and a ``-`` at either end of a class is itself."""
    return _compiled(source, unicode_sets)


@lru_cache(maxsize=_CACHED)
def _compiled(source: str, unicode_sets: bool) -> Pattern:
    import re2  # about 13 ms, paid by the first host that checks a pattern, not at import

    translated = _Translator(source, unicode_sets).translate()
    options = re2.Options()
    options.log_errors = False  # RE2 would print every refused pattern on the kernel's stderr
    options.max_mem = _MAX_MEM
    try:
        regex = re2.compile(translated, options)
    except re2.error as exc:
        reason = exc.args[0].decode("utf-8", "replace") if exc.args else str(exc)
        raise PatternError(f"RE2 cannot run it ({reason})") from None
    except UnicodeEncodeError:
        raise PatternError("it holds a lone surrogate, which is not text") from None
    return Pattern(source, regex)


class _Translator:
    def __init__(self, source: str, unicode_sets: bool) -> None:
        self.source = source
        self.unicode_sets = unicode_sets
        self.class_identity = _CLASS_IDENTITY_V if unicode_sets else _CLASS_IDENTITY_U
        self.at = 0

    def refuse(self, why: str, at: int | None = None) -> PatternError:
        where = self.at if at is None else at
        return PatternError(f"{why} (at character {where})")

    def startswith(self, *prefixes: str) -> bool:
        return self.source.startswith(prefixes, self.at)

    def translate(self) -> str:
        out: list[str] = []
        source = self.source
        while self.at < len(source):
            char = source[self.at]
            if char == "\\":
                out.append(self.escape(in_class=False))
            elif char == "[":
                out.append(self.char_class())
            elif char == "(":
                out.append(self.group())
            elif char == "{":
                quantifier = _QUANTIFIER.match(source, self.at)
                if quantifier is None:
                    raise self.refuse("a lone '{' is not a repetition; write '\\{' for the brace")
                out.append(quantifier.group())
                self.at = quantifier.end()
            elif char in "}]":
                raise self.refuse(f"a lone {char!r}; write '\\{char}' for the character")
            elif char == ".":
                out.append(f"[^{_LINE_TERMINATORS}]")
                self.at += 1
            else:  # ^ $ * + ? | ) keep their meaning; anything else is itself
                out.append(char)
                self.at += 1
        return "".join(out)

    def group(self) -> str:
        if self.startswith("(?:"):
            self.at += 3
            return "(?:"
        if self.startswith("(?=", "(?!", "(?<=", "(?<!"):
            raise self.refuse(
                "lookaround ((?=, (?!, (?<=, (?<!) is not supported: patterns run on a "
                "linear-time engine (RE2), which has none"
            )
        named = _GROUP_NAME.match(self.source, self.at)
        if named is not None:
            self.at = named.end()
            return f"(?P<{named.group(1)}>"
        if self.startswith("(?"):
            raise self.refuse(
                "'(?' starts only (?:...) or (?<name>...) here; inline modifiers such as (?i) "
                "or (?x) and Python's (?P<name>...) are not JavaScript pattern syntax"
            )
        self.at += 1
        return "("

    def escape(self, *, in_class: bool) -> str:
        """One escape at ``self.at`` (a backslash), as RE2 writes it."""
        source, start = self.source, self.at
        if start + 1 >= len(source):
            raise self.refuse("the pattern ends with a lone backslash")
        char = source[start + 1]
        self.at = start + 2
        if char in "123456789" or char == "k":
            raise self.refuse(
                f"'\\{char}' is a backreference: patterns run on a linear-time engine (RE2), "
                "which has none",
                start,
            )
        if char == "0":
            if self.at < len(source) and source[self.at].isdigit():
                raise self.refuse("'\\0' followed by a digit is not JavaScript syntax", start)
            return r"\x{0}"
        if char in _SAME_ESCAPES:
            return _SAME_ESCAPES[char]
        if char == "b":
            return r"\x{08}" if in_class else r"\b"  # backspace inside a class, as in JS
        if char == "B" and not in_class:
            return r"\B"
        if char == "s":
            return _JS_SPACE if in_class else f"[{_JS_SPACE}]"
        if char == "S":
            if in_class:
                raise self.refuse("'\\S' inside a class is not supported; use [^\\s...]", start)
            return f"[^{_JS_SPACE}]"
        if char == "x":
            digits = _HEX2.match(source, self.at)
            if digits is None:
                raise self.refuse("'\\x' takes two hex digits", start)
            self.at = digits.end()
            return _code_point(int(digits.group(), 16))
        if char == "u":
            return self.unicode_escape(start)
        if char == "c":
            letter = source[self.at : self.at + 1]
            if not (letter.isascii() and letter.isalpha()):
                raise self.refuse("'\\c' takes a letter", start)
            self.at += 1
            return _code_point(ord(letter) % 32)
        if char in "pP":
            prop = _PROPERTY.match(source, self.at)
            if prop is None:
                raise self.refuse(f"'\\{char}' takes {{Category}} or {{Script=Name}}", start)
            name = prop.group(1)
            if "=" not in prop.group() and name not in _CATEGORIES:
                raise self.refuse(
                    f"'\\{char}{{{name}}}' is not a general category (L, Lu, Nd...); "
                    "binary properties are not supported",
                    start,
                )
            self.at = prop.end()
            return f"\\{char}{{{name}}}"  # RE2 names scripts as JavaScript does (Greek, Han)
        if char in _IDENTITY or (in_class and char in self.class_identity):
            return "\\" + char
        raise self.refuse(f"'\\{char}' is not an escape JavaScript patterns know", start)

    def unicode_escape(self, start: int) -> str:
        source = self.source
        braced = _HEX_BRACED.match(source, self.at)
        if braced is not None:
            self.at = braced.end()
            value = int(braced.group(1), 16)
        else:
            digits = _HEX4.match(source, self.at)
            if digits is None:
                raise self.refuse("'\\u' takes four hex digits or {hex}", start)
            self.at = digits.end()
            value = int(digits.group(), 16)
            low = _HEX4.match(source, self.at + 2) if self.startswith("\\u") else None
            if 0xD800 <= value < 0xDC00 and low and 0xDC00 <= int(low.group(), 16) < 0xE000:
                self.at = low.end()  # a surrogate pair is one code point, as with the v flag
                value = 0x10000 + ((value - 0xD800) << 10) + (int(low.group(), 16) - 0xDC00)
        if value > 0x10FFFF or 0xD800 <= value < 0xE000:
            raise self.refuse(f"'\\u' names {value:#x}, which is not a Unicode scalar", start)
        return _code_point(value)

    def char_class(self) -> str:
        """A ``[...]`` class at ``self.at``, under the ``v`` or the ``u`` flag's rules."""
        source, start = self.source, self.at
        self.at += 1
        negated = self.startswith("^")
        if negated:
            self.at += 1
        if self.startswith("]"):
            raise self.refuse("an empty class ('[]' or '[^]') is not supported", start)
        items: list[str] = []
        while True:
            if self.at >= len(source):
                raise self.refuse("a '[' is never closed", start)
            char = source[self.at]
            if char == "]":
                self.at += 1
                break
            low, single = self.class_atom()
            if self.startswith("-") and not self.startswith("-]"):
                self.at += 1
                high, high_single = self.class_atom()
                if not (single and high_single):
                    raise self.refuse("a range needs a single character at each end")
                items.append(f"{low}-{high}")
            else:
                items.append(low)
        return ("[^" if negated else "[") + "".join(items) + "]"

    def class_atom(self) -> tuple[str, bool]:
        """One member of a class: its RE2 text, and whether it is a single character."""
        source = self.source
        if self.at >= len(source):
            raise self.refuse("a '[' is never closed")
        char = source[self.at]
        if self.unicode_sets:
            if char == "[" or self.startswith("&&", "--"):
                raise self.refuse("nested classes and set operations (v flag) are not supported")
            if char in _CLASS_DOUBLES and source[self.at + 1 : self.at + 2] == char:
                raise self.refuse(f"{char * 2!r} inside a class is reserved; escape one of them")
            if char in _CLASS_SYNTAX or char == "-":
                raise self.refuse(f"{char!r} inside a class must be escaped: '\\{char}'")
        if char == "\\":
            before = self.at
            text = self.escape(in_class=True)
            single = source[before + 1] not in "dDwWsSpP"
            return text, single
        self.at += 1
        return _code_point(ord(char)), True


def _code_point(value: int) -> str:
    return f"\\x{{{value:X}}}"
