#!/usr/bin/env python3
"""Generate the DICOM data dictionary and UID dictionary tables for the DICOMData module.

The output is committed Swift source, so building px needs neither DCMTK nor pydicom.

Usage:

    python3 scripts/gen-dictionary.py \\
        --dcmtk /usr/share/libdcmtk17/dicom.dic \\
        [--pydicom-dir /path/to/site-packages/pydicom] \\
        --out Sources/DICOMData/Dictionary

`--pydicom-dir` is the pydicom package directory (the one holding `_dicom_dict.py` and
`_uid_dict.py`). Without it the script imports pydicom if it is importable, e.g.

    python3 -m venv /tmp/gen-venv && /tmp/gen-venv/bin/pip install pydicom
    /tmp/gen-venv/bin/python scripts/gen-dictionary.py --dcmtk ... --out ...

Only the standard library is used; pydicom's tables are loaded with `runpy`, not imported
as a package, so its version does not matter beyond the data it carries.

Sources of facts:

* DCMTK's `dicom.dic` (PS3.6 and PS3.7 of the edition named in its header, plus DICONDE
  and DICOS). Tab-separated lines `(gggg,eeee) VR Keyword VM Version`. Repeating groups
  and element ranges are written `(gggg-gggg,eeee)` (even numbers only),
  `(gggg-o-gggg,eeee)` (odd only) or `(gggg-u-gggg,eeee)` (all). DCMTK's lower-case
  pseudo-VRs are `ox`/`px` (OB or OW), `xs` (US or SS), `lt` (US or SS or OW),
  `up` (UL, an offset), `na` (no VR: item delimitation). Version `DICOM/retired` marks
  retired attributes, whose keywords DCMTK prefixes with `RETIRED_`. The PRIVATE,
  ILLEGAL and GENERIC catch-all entries are not emitted: the Swift lookup handles group
  lengths and private creators itself.
* pydicom's `_dicom_dict.py` (`DicomDictionary`, `RepeatersDictionary` with `xx` masks)
  and `_uid_dict.py` (`UID_dictionary`). pydicom usually tracks a newer edition of the
  standard, so it supplies the human-readable names, the retired flags, the VMs and the
  whole UID table.

Merging: the tag set is the union of both. For a tag in both, pydicom's facts win except
for the VR, where DCMTK's is kept when both spell the same set of VRs (only the notation
differs); when the sets really differ, the newer edition (pydicom) wins and the script
reports the difference on stderr. DCMTK entries that pydicom lists as a mask (e.g.
DCMTK's (1000,0010) EscapeTriplet vs pydicom's (1000,xxx0)) are folded into the mask
entry, and the DCMTK tag becomes the mask's representative tag. Entries known only to
DCMTK get a name derived from the keyword by splitting camel case.

Output: `DataDictionaryTable.swift` and `UIDDictionaryTable.swift` in `--out`, each a
single raw string literal (tab-separated, one entry per line), and `DataDictionaryIndex.swift`:
the tag table's indexes by tag, by repeating-group mask and by keyword, as fixed-width records,
so px looks entries up by binary search without building anything at start-up. A string literal keeps the type checker out of the picture, so the files
compile in well under a second, unlike thousands of struct literals.

Tag table columns: pattern, representative tag (empty: the pattern with x -> 0),
VRs joined by '/' (empty: none), VM, 'R' if retired, keyword, name.
UID table columns: UID, type, 'R' if retired, keyword, name.
The last column is never empty, so no line ends in whitespace.
"""

from __future__ import annotations

import argparse
import os
import re
import runpy
import sys

# DCMTK's notation for VRs that are not one of PS3.5's two-letter codes.
DCMTK_PSEUDO_VRS = {
    "ox": ["OB", "OW"],
    "px": ["OB", "OW"],
    "xs": ["US", "SS"],
    "lt": ["US", "SS", "OW"],
    "up": ["UL"],
    "na": [],
}

VALID_VRS = set(
    "AE AS AT CS DA DS DT FD FL IS LO LT OB OD OF OL OV OW PN SH SL SQ SS ST SV TM "
    "UC UI UL UN UR US UT UV".split()
)



def fail(message: str) -> None:
    sys.stderr.write(f"gen-dictionary: {message}\n")
    sys.exit(1)


def warn(message: str) -> None:
    sys.stderr.write(f"gen-dictionary: note: {message}\n")


def pydicom_vrs(text: str) -> list[str]:
    """'OB or OW' -> ['OB', 'OW']; 'NONE' and 'See Note' -> []."""
    if text in ("NONE", "See Note", ""):
        return []
    vrs = [part.strip() for part in text.split(" or ")]
    for vr in vrs:
        if vr not in VALID_VRS:
            fail(f"unknown pydicom VR {text!r}")
    return vrs


def dcmtk_vrs(text: str) -> list[str]:
    if text in DCMTK_PSEUDO_VRS:
        return list(DCMTK_PSEUDO_VRS[text])
    if text not in VALID_VRS:
        fail(f"unknown DCMTK VR {text!r}")
    return [text]


def split_camel_case(keyword: str) -> str:
    """'CurrentFrameFunctionalGroupsSequence' -> 'Current Frame Functional Groups Sequence',
    'SOPClassUID' -> 'SOP Class UID'."""
    spaced = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", " ", keyword)
    spaced = re.sub(r"(?<=[A-Z])(?=[A-Z][a-z])", " ", spaced)
    return spaced


def hex_range_to_pattern(low: str, high: str) -> str | None:
    """('5000', '50FF') -> '50xx'; None if the range is not whole trailing nibbles."""
    pattern = ""
    for a, b in zip(low.upper(), high.upper()):
        if a == b and not pattern.endswith("x"):
            pattern += a
        elif a == "0" and b == "F":
            pattern += "x"
        else:
            return None
    return pattern


def parse_dcmtk_part(part: str) -> tuple[str, str] | None:
    """One half of a DCMTK tag: 'gggg', 'gggg-gggg', 'gggg-o-gggg' or 'gggg-u-gggg'.
    Returns (pattern, parity) with parity 'even', 'odd', 'all' or '' for a single value."""
    pieces = part.split("-")
    if len(pieces) == 1:
        return pieces[0].upper(), ""
    if len(pieces) == 2:
        low, high, parity = pieces[0], pieces[1], "even"
    elif len(pieces) == 3:
        low, high = pieces[0], pieces[2]
        parity = {"o": "odd", "u": "all"}.get(pieces[1], "?")
    else:
        return None
    pattern = hex_range_to_pattern(low, high)
    if pattern is None:
        return None
    return pattern, parity


def load_dcmtk(path: str) -> dict[str, dict]:
    entries: dict[str, dict] = {}
    with open(path, encoding="latin-1") as handle:
        for number, line in enumerate(handle, 1):
            line = line.rstrip("\r\n")
            if not line or line.startswith("#"):
                continue
            fields = line.split("\t")
            if len(fields) != 5:
                fail(f"{path}:{number}: expected 5 tab-separated fields")
            tag, vr, keyword, vm, version = fields
            if version in ("PRIVATE", "ILLEGAL", "GENERIC"):
                continue  # catch-alls the Swift lookup covers (group length, private creator)
            match = re.fullmatch(r"\(([0-9A-Fa-f\-ou]+),([0-9A-Fa-f\-ou]+)\)", tag)
            if not match:
                fail(f"{path}:{number}: cannot parse tag {tag!r}")
            group = parse_dcmtk_part(match.group(1))
            element = parse_dcmtk_part(match.group(2))
            if group is None or element is None:
                fail(f"{path}:{number}: unsupported range {tag!r}")
            # Element ranges in the standard ((0020,31xx)) cover every element; DCMTK's
            # even-only default is an artefact of its notation. Group ranges are even only
            # (odd groups are private, PS3.5 §7.6), which the Swift side enforces.
            pattern = group[0] + element[0]
            retired = version == "DICOM/retired"
            if keyword.startswith("RETIRED_"):
                keyword = keyword[len("RETIRED_"):]
            entries[pattern] = {
                "vrs": dcmtk_vrs(vr),
                "vm": vm,
                "keyword": keyword,
                "retired": retired,
                "source": version,
            }
    return entries


def locate_pydicom(explicit: str | None) -> str:
    if explicit:
        directory = explicit
    else:
        try:
            import pydicom  # noqa: F401  (only to find its directory)
        except ImportError:
            fail("pydicom is not importable; pass --pydicom-dir or run with a venv that has it")
        directory = os.path.dirname(pydicom.__file__)
    for name in ("_dicom_dict.py", "_uid_dict.py"):
        if not os.path.isfile(os.path.join(directory, name)):
            fail(f"{directory} has no {name}")
    return directory


def load_pydicom(directory: str) -> tuple[dict[str, dict], dict[str, tuple]]:
    tags = runpy.run_path(os.path.join(directory, "_dicom_dict.py"))
    uids = runpy.run_path(os.path.join(directory, "_uid_dict.py"))
    entries: dict[str, dict] = {}
    for tag, (vr, vm, name, retired, keyword) in tags["DicomDictionary"].items():
        entries[f"{tag:08X}"] = _pydicom_entry(vr, vm, name, retired, keyword)
    for mask, (vr, vm, name, retired, keyword) in tags["RepeatersDictionary"].items():
        pattern = "".join("x" if c in "xX" else c.upper() for c in mask)
        entries[pattern] = _pydicom_entry(vr, vm, name, retired, keyword)
    return entries, uids["UID_dictionary"]


def _pydicom_entry(vr: str, vm: str, name: str, retired: str, keyword: str) -> dict:
    return {
        "vrs": pydicom_vrs(vr),
        "vm": vm,
        "name": name,
        "keyword": keyword,
        "retired": retired == "Retired",
    }


def pattern_matches(pattern: str, tag: str) -> bool:
    if not all(p == "x" or p == t for p, t in zip(pattern, tag)):
        return False
    if "x" in pattern[:4] and int(tag[:4], 16) % 2 == 1:
        return False
    return True


def merge(dcmtk: dict[str, dict], pyd: dict[str, dict]) -> list[dict]:
    merged: dict[str, dict] = {}
    masks = {p: e for p, e in pyd.items() if "x" in p}
    representative: dict[str, str] = {}

    for pattern, d in dcmtk.items():
        if "x" not in pattern and pattern not in pyd:
            # Fold into a pydicom mask with the same keyword (DCMTK lists one instance).
            folded = [
                m for m, e in masks.items()
                if e["keyword"] == d["keyword"] and pattern_matches(m, pattern)
            ]
            if folded:
                representative.setdefault(folded[0], pattern)
                continue
        p = pyd.get(pattern)
        if p is None:
            merged[pattern] = {
                "pattern": pattern,
                "vrs": d["vrs"],
                "vm": d["vm"],
                "keyword": d["keyword"],
                "name": split_camel_case(d["keyword"]),
                "retired": d["retired"],
            }
            continue
        vrs = d["vrs"]
        if set(d["vrs"]) != set(p["vrs"]):
            warn(f"({pattern[:4]},{pattern[4:]}) {p['keyword']}: VR {'/'.join(d['vrs']) or 'none'} "
                 f"(DCMTK) vs {'/'.join(p['vrs']) or 'none'} (pydicom); using pydicom's")
            vrs = p["vrs"]
        if d["keyword"] != p["keyword"]:
            warn(f"({pattern[:4]},{pattern[4:]}): keyword {d['keyword']} (DCMTK) vs {p['keyword']} (pydicom)")
        merged[pattern] = {
            "pattern": pattern,
            "vrs": vrs,
            "vm": p["vm"],
            "keyword": p["keyword"] or d["keyword"],
            "name": p["name"] or split_camel_case(p["keyword"] or d["keyword"]),
            "retired": p["retired"],
        }

    for pattern, p in pyd.items():
        if pattern in merged:
            continue
        name = p["name"]
        if not p["keyword"]:
            # A retired element whose keyword and name the standard has blanked (pydicom
            # names them "Retired-blank"): kept for its VR, found by tag only.
            if not p["retired"]:
                fail(f"{pattern} has no keyword and is not retired")
            name = "Retired"
        merged[pattern] = {
            "pattern": pattern,
            "vrs": p["vrs"],
            "vm": p["vm"],
            "keyword": p["keyword"],
            "name": name or split_camel_case(p["keyword"]),
            "retired": p["retired"],
        }

    for pattern, entry in merged.items():
        entry["representative"] = representative.get(pattern, "")

    keywords: dict[str, str] = {}
    for pattern, entry in merged.items():
        if not entry["keyword"]:
            continue
        if entry["keyword"] in keywords:
            fail(f"keyword {entry['keyword']} used by {keywords[entry['keyword']]} and {pattern}")
        keywords[entry["keyword"]] = pattern

    def sort_key(entry: dict) -> tuple[int, str]:
        return (int(entry["pattern"].replace("x", "0"), 16), entry["pattern"])

    return sorted(merged.values(), key=sort_key)


def check_text(value: str, what: str) -> str:
    if "\t" in value or "\n" in value or "\r" in value:
        fail(f"{what} {value!r} cannot go in the table")
    return value


HEADER = """\
// swift-format-ignore-file
// This file is generated by scripts/gen-dictionary.py. Do not edit it; re-run the script.
// Sources: {sources}.
"""


def swift_literal(doc: str, name: str, lines: list[str], kind: str = "String") -> str:
    body = "\n".join(lines)
    # The raw literal ends at `"""#`; no table cell may contain `"#`.
    if '"#' in body:
        fail("table text contains '\"#'")
    return doc + f"let {name}: {kind} = #\"\"\"\n" + body + "\n\"\"\"#\n"


def write_swift(path: str, header: str, doc: str, name: str, lines: list[str], kind: str = "String") -> None:
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(header + "\n" + swift_literal(doc, name, lines, kind))


def implicit_vr(vrs: list[str]) -> str:
    """The VR implicit VR encodings assume (PS3.5 §A.1): as DataDictionaryStorage.implicitVR."""
    if len(vrs) <= 1:
        return vrs[0] if vrs else "UN"
    if "US" in vrs:
        return "US"
    if "OW" in vrs:
        return "OW"
    return vrs[0]


def tag_indexes(tag_lines: list[str]) -> tuple[list[str], list[str], list[str]]:
    """The three indexes of DataDictionaryIndex.swift, computed from the table's lines.

    Each record points at its line by the line's byte offset in the table literal (5 hex digits).
    Exact tags, ascending: `TTTTTTTT` + implicit VR + `S` (the dictionary lists US and SS) or `-` +
    offset. Repeating groups and ranges, most specific mask first: `MMMMMMMM` mask + `VVVVVVVV` value
    + implicit VR + flag + offset; the mask has the group's low bit set for the even-group patterns
    (PS3.5 §7.6). Keywords, in byte order: offset only (the keyword is read from the line).
    """
    exact, masked, keywords = [], [], []
    offset = 0
    for line in tag_lines:
        if offset >= 1 << 20:
            fail("the table outgrew 5 hex digits of offset")
        cells = line.split("\t")
        pattern, vrs, keyword = cells[0], [v for v in cells[2].split("/") if v], cells[5]
        flag = "S" if "US" in vrs and "SS" in vrs else "-"
        vr = implicit_vr(vrs)
        mask = int("".join("0" if c == "x" else "F" for c in pattern), 16)
        value = int(pattern.replace("x", "0"), 16)
        if mask == 0xFFFFFFFF:
            exact.append((value, f"{value:08X}{vr}{flag}{offset:05X}"))
        else:
            if mask & 0xFFFF0000 != 0xFFFF0000:
                mask |= 0x00010000
            masked.append(((bin(mask).count("1"), mask), value, f"{mask:08X}{value:08X}{vr}{flag}{offset:05X}"))
        if keyword:
            if not keyword.isascii():
                fail(f"keyword {keyword!r} is not ASCII")
            keywords.append((keyword.encode(), f"{offset:05X}"))
        offset += len(line.encode("utf-8")) + 1
    exact.sort()
    masked.sort(key=lambda m: (m[0], -m[1]), reverse=True)
    keywords.sort()
    return [r for _, r in exact], [r for _, _, r in masked], [r for _, r in keywords]


INDEX_DOC = """\
/// Indexes into ``dataDictionaryTable``, computed with it: records of fixed width, one a line, each
/// naming its table line by byte offset (5 hex digits), so a lookup is a binary search with nothing
/// built at start-up.
///
/// Exact tags, ascending: the tag (8 hex digits), the implicit VR, `S` if the dictionary lists US and
/// SS (else `-`), the offset.
"""


def write_index(path: str, header: str, tag_lines: list[str]) -> None:
    exact, masked, keywords = tag_indexes(tag_lines)
    text = (
        header
        + "\n"
        + swift_literal(INDEX_DOC, "dataDictionaryTagIndex", exact, "StaticString")
        + "\n"
        + swift_literal(
            "/// Repeating groups and element ranges, most specific mask first: the mask, the pattern's value\n"
            "/// (8 hex digits each; the group's low bit is in the mask of even-group patterns, PS3.5 §7.6),\n"
            "/// the implicit VR, the US/SS flag, the offset.\n",
            "dataDictionaryMaskIndex",
            masked,
            "StaticString",
        )
        + "\n"
        + swift_literal(
            "/// The offsets of the lines with a keyword, in the keywords' byte order.\n",
            "dataDictionaryKeywordIndex",
            keywords,
            "StaticString",
        )
    )
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(text)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dcmtk", required=True, help="path to DCMTK's dicom.dic")
    parser.add_argument("--pydicom-dir", help="pydicom package directory (default: import pydicom)")
    parser.add_argument("--out", required=True, help="output directory (Sources/DICOMData/Dictionary)")
    args = parser.parse_args()

    dcmtk = load_dcmtk(args.dcmtk)
    directory = locate_pydicom(args.pydicom_dir)
    pyd, uid_dict = load_pydicom(directory)

    edition = ""
    with open(args.dcmtk, encoding="latin-1") as handle:
        for line in handle:
            match = re.search(r"Generated automatically from (DICOM PS ?3\.6-\S+)", line)
            if match:
                edition = match.group(1)
                break
    pydicom_version = ""
    parent = os.path.dirname(os.path.abspath(directory))
    for entry in sorted(os.listdir(parent)):
        match = re.fullmatch(r"pydicom-(.+)\.dist-info", entry)
        if match:
            pydicom_version = match.group(1)
    sources = (
        f"DCMTK dicom.dic ({edition or 'unknown edition'}) and "
        f"pydicom {pydicom_version or '(unknown version)'} _dicom_dict.py/_uid_dict.py"
    )
    header = HEADER.format(sources=sources)

    entries = merge(dcmtk, pyd)
    tag_lines = []
    for e in entries:
        cells = [
            e["pattern"],
            e["representative"],
            "/".join(e["vrs"]),
            e["vm"],
            "R" if e["retired"] else "",
            e["keyword"],
            e["name"],
        ]
        tag_lines.append("\t".join(check_text(c, "tag cell") for c in cells))

    uid_lines = []
    skipped = 0
    for uid, (name, kind, _info, retired, keyword) in uid_dict.items():
        if not name and not keyword:
            skipped += 1  # a retired UID the standard no longer names
            continue
        cells = [uid, kind, "R" if retired == "Retired" else "", keyword, name or split_camel_case(keyword)]
        uid_lines.append("\t".join(check_text(c, "UID cell") for c in cells))

    os.makedirs(args.out, exist_ok=True)
    write_swift(
        os.path.join(args.out, "DataDictionaryTable.swift"),
        header,
        "/// The registry of data elements (PS3.6 §6, PS3.7 §E.1) as tab-separated lines:\n"
        "/// pattern (`x` = any hex digit), representative tag, VRs joined by `/`, VM,\n"
        "/// `R` if retired, keyword, name. Found through ``dataDictionaryTagIndex`` and its\n"
        "/// siblings; read in place (a static string: no copy, nothing parsed at start-up).\n",
        "dataDictionaryTable",
        tag_lines,
        "StaticString",
    )
    write_index(os.path.join(args.out, "DataDictionaryIndex.swift"), header, tag_lines)
    write_swift(
        os.path.join(args.out, "UIDDictionaryTable.swift"),
        header,
        "/// The registry of DICOM unique identifiers (PS3.6 Annex A) as tab-separated lines:\n"
        "/// UID, type, `R` if retired, keyword, name. Parsed once by ``UIDDictionary``.\n",
        "uidDictionaryTable",
        uid_lines,
    )
    masks = sum(1 for e in entries if "x" in e["pattern"])
    sys.stderr.write(
        f"gen-dictionary: {len(entries)} tag entries ({masks} repeating), "
        f"{len(uid_lines)} UIDs ({skipped} unnamed skipped)\n"
    )


if __name__ == "__main__":
    main()
