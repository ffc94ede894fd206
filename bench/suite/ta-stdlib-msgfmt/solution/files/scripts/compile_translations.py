#!/usr/bin/env python3
"""Compile the gettext catalogs: every src/humanize/locale/*/LC_MESSAGES/*.po to .mo.

Standard library only (a replacement for ``pybabel compile``). Like ``msgfmt`` and
``pybabel compile``, fuzzy entries and untranslated messages are left out.

Usage: python scripts/compile_translations.py [PO_FILE ...]
"""

from __future__ import annotations

import array
import ast
import pathlib
import struct
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
LOCALE_DIR = ROOT / "src" / "humanize" / "locale"


class PoSyntaxError(ValueError):
    """The .po file cannot be parsed."""


def parse_po(text: str, filename: str = "<po>") -> dict[bytes, bytes]:
    """Parse the text of a .po file into {msgid: msgstr} as stored in a .mo file.

    Keys of messages with a context are ``context + b"\\x04" + msgid``; plural
    forms are joined with NUL bytes, in the key and in the translation.
    """
    messages: dict[bytes, bytes] = {}
    entry: dict[str, object] = {}
    fuzzy = False
    section: tuple[str, int | None] | None = None

    def flush() -> None:
        nonlocal entry, fuzzy, section
        if "msgid" in entry:
            msgid = entry["msgid"]
            if "msgid_plural" in entry:
                forms = entry.get("msgstr_plural", {})
                assert isinstance(forms, dict)
                msgstr = "\0".join(forms[i] for i in sorted(forms))
                key = f"{msgid}\0{entry['msgid_plural']}"
                translated = any(forms.values())
            else:
                msgstr = str(entry.get("msgstr", ""))
                key = str(msgid)
                translated = bool(msgstr)
            if "msgctxt" in entry:
                key = f"{entry['msgctxt']}\x04{key}"
            is_header = key == ""
            if (translated or is_header) and not (fuzzy and not is_header):
                messages[key.encode("utf-8")] = msgstr.encode("utf-8")
        entry, fuzzy, section = {}, False, None

    for lineno, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line:
            continue
        complete = "msgstr" in entry or "msgstr_plural" in entry
        if line.startswith("#"):
            if complete:  # comments start the next entry
                flush()
            if line.startswith("#,") and "fuzzy" in line:
                fuzzy = True
            continue
        if line.startswith('"'):
            if section is None:
                raise PoSyntaxError(f"{filename}:{lineno}: string outside of an entry")
            name, index = section
            value = ast.literal_eval(line)
            if index is None:
                entry[name] = str(entry[name]) + value
            else:
                forms = entry["msgstr_plural"]
                assert isinstance(forms, dict)
                forms[index] += value
            continue
        keyword, _, rest = line.partition(" ")
        rest = rest.strip()
        if not rest.startswith('"'):
            raise PoSyntaxError(f"{filename}:{lineno}: cannot parse {line!r}")
        value = ast.literal_eval(rest)
        if keyword in ("msgctxt", "msgid") and complete:
            flush()
        if keyword in ("msgctxt", "msgid", "msgid_plural", "msgstr"):
            entry[keyword] = value
            section = (keyword, None)
        elif keyword.startswith("msgstr[") and keyword.endswith("]"):
            index = int(keyword[7:-1])
            entry.setdefault("msgstr_plural", {})
            forms = entry["msgstr_plural"]
            assert isinstance(forms, dict)
            forms[index] = value
            section = ("msgstr_plural", index)
        else:
            raise PoSyntaxError(f"{filename}:{lineno}: unknown keyword {keyword!r}")
    flush()
    return messages


def write_mo(messages: dict[bytes, bytes]) -> bytes:
    """The bytes of a GNU .mo file holding ``messages`` (no hash table)."""
    keys = sorted(messages)
    ids = strs = b""
    offsets = []
    for key in keys:
        offsets.append((len(ids), len(key), len(strs), len(messages[key])))
        ids += key + b"\0"
        strs += messages[key] + b"\0"
    keystart = 7 * 4 + 16 * len(keys)
    valuestart = keystart + len(ids)
    koffsets: list[int] = []
    voffsets: list[int] = []
    for o1, l1, o2, l2 in offsets:
        koffsets += [l1, o1 + keystart]
        voffsets += [l2, o2 + valuestart]
    header = struct.pack(
        "Iiiiiii",
        0x950412DE,  # magic
        0,  # version
        len(keys),  # number of entries
        7 * 4,  # start of key index
        7 * 4 + len(keys) * 8,  # start of value index
        0,  # size of hash table
        0,  # offset of hash table
    )
    return header + array.array("i", koffsets + voffsets).tobytes() + ids + strs


def compile_po(po_path: pathlib.Path) -> pathlib.Path:
    """Compile one .po file to the .mo file next to it; return the .mo path."""
    messages = parse_po(po_path.read_text(encoding="utf-8"), str(po_path))
    mo_path = po_path.with_suffix(".mo")
    mo_path.write_bytes(write_mo(messages))
    return mo_path


def main(argv: list[str] | None = None) -> int:
    """Compile the given .po files, or all of them under the locale directory."""
    args = sys.argv[1:] if argv is None else argv
    po_files = [pathlib.Path(a) for a in args] or sorted(LOCALE_DIR.glob("*/LC_MESSAGES/*.po"))
    if not po_files:
        print(f"no .po files found under {LOCALE_DIR}", file=sys.stderr)
        return 1
    for po in po_files:
        try:
            mo = compile_po(po)
        except (OSError, ValueError, SyntaxError) as e:
            print(f"error: {po}: {e}", file=sys.stderr)
            return 1
        print(f"compiled {po} -> {mo.name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
