#!/usr/bin/env bash
# make-corpus.sh - generate a synthetic corpus of DICOM Part 10 files with DCMTK's own tools.
#
# Usage: scripts/make-corpus.sh OUTDIR
#
# Writes ~60 small, deterministic DICOM files (fixed UIDs under 2.25.<uuid>) into OUTDIR,
# plus OUTDIR/MANIFEST.tsv (file name, transfer syntax UID, description).
# Files are named <content>-<transfer syntax>.dcm, with transfer syntax one of
#   implicit-le, explicit-le, explicit-be, deflated-le   (native)
#   jpeg-lossless-sv1, jpeg-baseline, rle                 (encapsulated pixel data)
# Text dumps are written by python3 (raw bytes for non-ASCII character sets) and converted
# by dump2dcm; CR/LF inside LT/ST/UT values is added by dcmodify (a dump line cannot hold
# a CR or LF); encapsulated files come from dcmcjpeg / dcmcrle. No px code is involved.
# Every file is checked with dcmftest. Existing files of the same name in OUTDIR are replaced;
# other files in OUTDIR are left alone. Needs: dcmtk (dump2dcm dcmodify dcmcjpeg dcmcrle
# dcmftest dcmdump) and python3. Install with scripts/setup-test-env.sh or
# `apt-get install -y dcmtk python3`.
set -euo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
px_args 1 1 "$@"
outdir=$1

px_need_tools "dcmtk python3" dump2dcm dcmodify dcmcjpeg dcmcrle dcmftest dcmdump python3

mkdir -p "$outdir"
work=$(mktemp -d "${TMPDIR:-/tmp}/px-corpus.XXXXXX")
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/out"

# ---------------------------------------------------------------------------------------------
# 1. Python writes the dump files, the raw pixel files and a plan: name|dumpfile|ts|description
# ---------------------------------------------------------------------------------------------
python3 - "$work" <<'PY'
import os
import sys

work = sys.argv[1]
ROOT = "2.25.269757643672811179244064052535878479967"
dumps = os.path.join(work, "dumps")
os.makedirs(dumps, exist_ok=True)

TS = {  # suffix -> (dump2dcm option, index used in UIDs)
    "implicit-le": ("+ti", 1),
    "explicit-le": ("+te", 2),
    "explicit-be": ("+tb", 3),
    "deflated-le": ("+td", 4),
}


def b(s):
    return s if isinstance(s, bytes) else s.encode("ascii")


def el(tag, vr, value):
    """One dump line. value: bytes/str placed in [..] for string VRs, raw otherwise."""
    return b"(%s) %s %s" % (b(tag), b(vr), b(value))


def s(tag, vr, value):
    return el(tag, vr, b"[" + b(value) + b"]")


def common(base_idx, ts_idx, sop_class, modality, charset=None, patname=b"Corpus^Test",
           patid=None, desc=None):
    lines = []
    if charset is not None:
        lines.append(s("0008,0005", "CS", charset))
    lines += [
        el("0008,0016", "UI", b"=" + b(sop_class)),
        s("0008,0018", "UI", f"{ROOT}.{base_idx}.{ts_idx}"),
        s("0008,0020", "DA", "20240115"),
        s("0008,0030", "TM", "101500"),
        s("0008,0050", "SH", f"ACC{base_idx:04d}"),
        s("0008,0060", "CS", modality),
        s("0008,0070", "LO", "px corpus (dump2dcm)"),
        s("0008,1030", "LO", desc if desc is not None else "Chest [PA] view"),
        s("0010,0010", "PN", patname),
        s("0010,0020", "LO", patid or f"CORPUS{base_idx:03d}"),
        s("0010,0030", "DA", "19700101"),
        s("0010,0040", "CS", "O"),
        s("0020,000d", "UI", f"{ROOT}.{base_idx}.0"),
        s("0020,000e", "UI", f"{ROOT}.{base_idx}.0.1"),
        s("0020,0010", "SH", f"S{base_idx}"),
        s("0020,0011", "IS", "1"),
        s("0020,0013", "IS", str(ts_idx)),
    ]
    return lines


# name -> (base index, description, builder(ts_idx) -> list of lines, list of TS suffixes)
BASES = []
ALL4 = ["implicit-le", "explicit-le", "explicit-be", "deflated-le"]
LE2 = ["implicit-le", "explicit-le"]


def base(name, idx, desc, tss):
    def deco(fn):
        BASES.append((name, idx, desc, fn, tss))
        return fn
    return deco


# ---- character sets ------------------------------------------------------------------------
@base("latin1", 1, "ISO_IR 100 Latin-1: Müller^Jürgen", ALL4)
def _(t):
    return common(1, t, "SecondaryCaptureImageStorage", "OT", "ISO_IR 100",
                  "Müller^Jürgen".encode("latin-1"), desc="Thorax ÄÖÜ ß é ñ [PA]".encode("latin-1")) + [
        s("0008,0080", "LO", "Universitätsklinikum Köln".encode("latin-1")),
        s("0008,1090", "LO", "Gerät Größe".encode("latin-1")),
    ]


@base("utf8", 2, "ISO_IR 192 UTF-8: 山田^太郎=やまだ^たろう", ALL4)
def _(t):
    return common(2, t, "SecondaryCaptureImageStorage", "OT", "ISO_IR 192",
                  "山田^太郎=やまだ^たろう".encode("utf-8"),
                  desc="胸部 [PA] Müller Ελληνικά Русский 😀".encode("utf-8")) + [
        s("0008,0080", "LO", "東京病院".encode("utf-8")),
    ]


# PS3.5 Annex H.3.1 example, byte for byte
JP_NAME = (b"Yamada^Tarou=\x1b$B;3ED\x1b(B^\x1b$BB@O:\x1b(B="
           b"\x1b$B$d$^$@\x1b(B^\x1b$B$?$m$&\x1b(B")


@base("iso2022-jp", 3, r"\ISO 2022 IR 87 Japanese (PS3.5 H.3.1 example)", ALL4)
def _(t):
    return common(3, t, "SecondaryCaptureImageStorage", "OT", b"\\ISO 2022 IR 87", JP_NAME,
                  desc=b"Chest [PA] \x1b$B6;It\x1b(B") + [
        s("0008,0080", "LO", b"\x1b$BElJ~IB1!\x1b(B"),
    ]


# PS3.5 Annex I example (Korean, ISO 2022 IR 149)
KR_NAME = (b"Hong^Gildong=\x1b$)C\xfb\xf3^\x1b$)C\xd1\xce\xd4\xd7="
           b"\x1b$)C\xc8\xab^\x1b$)C\xb1\xe6\xb5\xbf")


@base("iso2022-kr", 4, r"\ISO 2022 IR 149 Korean (PS3.5 Annex I example)", LE2)
def _(t):
    return common(4, t, "SecondaryCaptureImageStorage", "OT", b"\\ISO 2022 IR 149", KR_NAME,
                  desc=b"Chest [PA] \x1b$)C" + "흉부".encode("euc_kr"))


@base("greek", 5, "ISO_IR 126 Greek", LE2)
def _(t):
    return common(5, t, "SecondaryCaptureImageStorage", "OT", "ISO_IR 126",
                  "Διονυσιος^Νικος".encode("iso8859_7"),
                  desc="Θώρακας [PA]".encode("iso8859_7"))


@base("cyrillic", 6, "ISO_IR 144 Cyrillic", LE2)
def _(t):
    return common(6, t, "SecondaryCaptureImageStorage", "OT", "ISO_IR 144",
                  "Иванов^Иван".encode("iso8859_5"),
                  desc="Грудная клетка [PA]".encode("iso8859_5"))


@base("gb18030", 7, "GB18030 Chinese (PS3.5 Annex J example name)", LE2)
def _(t):
    return common(7, t, "SecondaryCaptureImageStorage", "OT", "GB18030",
                  "Wang^XiaoDong=王^小东=".encode("gb18030"),
                  desc="胸部 [PA] 检查".encode("gb18030"))


# ---- values ----------------------------------------------------------------------------------
@base("multivalue", 8, "multi-valued CS/LO/PN/DS/IS/US/FD/AT, 12 OtherPatientIDs", ALL4)
def _(t):
    ids = "\\".join(f"ID{i:02d}" for i in range(1, 13))
    return common(8, t, "CTImageStorage", "CT") + [
        s("0008,0008", "CS", r"ORIGINAL\PRIMARY\AXIAL"),
        s("0008,1060", "PN", r"Smith^Anne\Jones^Bob"),
        s("0008,1160", "IS", r"1\2\3\-4"),
        s("0010,1000", "LO", ids),
        s("0020,0032", "DS", r"-125.000\-125.5\87.5"),
        s("0020,0037", "DS", r"1\0\0\0\1\0"),
        s("0028,0030", "DS", r"0.488281\0.488281"),
        el("0018,1310", "US", r"0\256\256\0"),
        el("0008,1163", "FD", r"0.5\1.25"),
        el("0020,5000", "AT", r"(0010,0010)\(0010,0020)"),
        s("0028,1050", "DS", r"40\400"),
        s("0028,1051", "DS", r"400\2000"),
    ]


@base("empty-values", 9, "zero-length values of many VRs, empty multi-value component, empty SQ and item", LE2)
def _(t):
    return common(9, t, "SecondaryCaptureImageStorage", "OT") + [
        s("0008,0008", "CS", r"DERIVED\\SECONDARY"),
        el("0008,0021", "DA", "(no value available)"),
        el("0008,0031", "TM", "(no value available)"),
        el("0008,0090", "PN", "(no value available)"),
        el("0008,1010", "SH", "(no value available)"),
        s("0008,1040", "LO", ""),
        el("0010,1010", "AS", "(no value available)"),
        el("0010,1020", "DS", "(no value available)"),
        el("0020,0012", "IS", "(no value available)"),
        el("0020,0052", "UI", "(no value available)"),
        el("0018,1310", "US", "(no value available)"),
        el("0018,9087", "FD", "(no value available)"),
        el("0020,4000", "LT", "(no value available)"),
        el("0008,1115", "SQ", "(Sequence with explicit length #=0)"),
        el("fffe,e0dd", "na", "(SequenceDelimitationItem for re-encod.)"),
        el("0008,1140", "SQ", "(Sequence with explicit length #=1)"),
        el("fffe,e000", "na", "(Item with explicit length #=0)"),
        el("fffe,e00d", "na", "(ItemDelimitationItem for re-encoding)"),
        el("fffe,e0dd", "na", "(SequenceDelimitationItem for re-encod.)"),
    ]


def nested(t, idx):
    return common(idx, t, "SecondaryCaptureImageStorage", "OT") + [
        # level 1: two items; level 2 inside item 1; level 3 inside level 2
        el("0008,1115", "SQ", "(Sequence #=2)"),
        el("fffe,e000", "na", "(Item #=2)"),
        s("0020,000e", "UI", f"{ROOT}.{idx}.9.1"),
        el("0008,1140", "SQ", "(Sequence #=2)"),
        el("fffe,e000", "na", "(Item #=3)"),
        el("0008,1150", "UI", "=CTImageStorage"),
        s("0008,1155", "UI", f"{ROOT}.{idx}.9.1.1"),
        el("0040,a170", "SQ", "(Sequence #=1)"),
        el("fffe,e000", "na", "(Item #=3)"),
        s("0008,0100", "SH", "121311"),
        s("0008,0102", "SH", "DCM"),
        s("0008,0104", "LO", "Localizer [level 3]"),
        el("fffe,e00d", "na", "(ItemDelimitationItem)"),
        el("fffe,e0dd", "na", "(SequenceDelimitationItem)"),
        el("fffe,e00d", "na", "(ItemDelimitationItem)"),
        el("fffe,e000", "na", "(Item #=2)"),
        el("0008,1150", "UI", "=CTImageStorage"),
        s("0008,1155", "UI", f"{ROOT}.{idx}.9.1.2"),
        el("fffe,e00d", "na", "(ItemDelimitationItem)"),
        el("fffe,e0dd", "na", "(SequenceDelimitationItem)"),
        el("fffe,e00d", "na", "(ItemDelimitationItem)"),
        el("fffe,e000", "na", "(Item #=1)"),
        s("0020,000e", "UI", f"{ROOT}.{idx}.9.2"),
        el("fffe,e00d", "na", "(ItemDelimitationItem)"),
        el("fffe,e0dd", "na", "(SequenceDelimitationItem)"),
        s("0040,0254", "LO", "after the sequence"),
    ]


@base("nested-seq", 10, "3-level nested SQ, defined (explicit) lengths everywhere", ALL4)
def _(t):
    return nested(t, 10)


# written with dump2dcm -e: every SQ and item gets undefined length + delimiters
@base("nested-seq-undeflen", 11, "3-level nested SQ, undefined lengths everywhere (dump2dcm -e)", LE2 + ["explicit-be"])
def _(t):
    return nested(t, 11)


@base("private-un", 12, "private creators + private elements (incl. private SQ), UN elements", ALL4)
def _(t):
    return common(12, t, "SecondaryCaptureImageStorage", "OT") + [
        s("0009,0010", "LO", "PX TEST CREATOR"),
        s("0009,0011", "LO", "PX OTHER CREATOR"),
        s("0009,1001", "LO", "private string"),
        el("0009,1002", "UL", "42"),
        el("0009,1003", "OB", r"01\02\03\04\05"),
        el("0009,1004", "DS", r"[1.5\2.5]"),
        el("0009,1010", "UN", r"50\58\2d\55\4e\00"),
        el("0009,1020", "SQ", "(Sequence #=1)"),
        el("fffe,e000", "na", "(Item #=1)"),
        s("0010,0020", "LO", "INSIDE-PRIVATE-SQ"),
        el("fffe,e00d", "na", "(ItemDelimitationItem)"),
        el("fffe,e0dd", "na", "(SequenceDelimitationItem)"),
        s("0009,1101", "SH", "other block"),
        # a known public tag carried as UN (as after a pass through an implicit-VR hop)
        el("0018,1030", "UN", r"50\52\4f\54\4f\43\4f\4c"),
        # a public tag not in the dictionary
        el("0018,fff0", "UN", r"de\ad\be\ef"),
    ]


@base("binary-vrs", 13, "AT FL FD SL SS UL US SV UV OB OW OF OD OL values (incl. extremes)", ALL4)
def _(t):
    return common(13, t, "SecondaryCaptureImageStorage", "OT") + [
        el("0028,0009", "AT", "(0018,1063)"),
        el("0010,9431", "FL", "-0.25"),
        el("0018,0013", "FL", "1.5"),
        el("0018,9087", "FD", "3.141592653589793"),
        el("0008,2134", "FD", "-1e+300"),
        el("0018,6020", "SL", "-2147483648"),
        el("0018,6022", "SL", "2147483647"),
        el("0018,9219", "SS", "-32768"),
        el("0018,9436", "SS", "32767"),
        el("0028,0010", "US", "65535"),
        el("0028,0011", "US", "0"),
        el("0008,1161", "UL", r"4294967295\0\1"),
        el("0072,0082", "SV", r"-9223372036854775807\42"),
        el("0072,0083", "UV", r"18446744073709551615\7"),
        el("0042,0011", "OB", r"25\50\44\46\00\ff\7f"),
        el("0028,1201", "OW", r"0000\1234\abcd\ffff"),
        el("0018,1638", "OF", r"1.5\-2.25\3.0"),
        el("0066,0022", "OD", r"1.0\-2.5"),
        el("0066,0040", "OL", r"1\2\4294967295"),
    ]


@base("dates-times", 14, "DA TM DT AS values: full, partial, fractional, offsets", LE2)
def _(t):
    return common(14, t, "SecondaryCaptureImageStorage", "OT") + [
        s("0008,0012", "DA", "20240229"),
        s("0008,0013", "TM", "235959.123456"),
        s("0008,0021", "DA", "19991231"),
        s("0008,0031", "TM", "1230"),
        s("0008,0022", "DA", "20000101"),
        s("0008,0032", "TM", "07"),
        s("0008,0023", "DA", "20240115"),
        s("0008,0033", "TM", "101500.5"),
        s("0008,002a", "DT", "20240229235959.123456+0100"),
        s("0018,9074", "DT", "2024"),
        s("0018,9151", "DT", "202402291200-0500"),
        s("0010,1010", "AS", "045Y"),
        s("0010,0032", "TM", "0000"),
    ]


@base("text", 15, "ST/LT/UT/UC/UR with backslashes, brackets, CR/LF, tabs, leading spaces", ALL4)
def _(t):
    # CR/LF values are added afterwards by dcmodify (see make-corpus.sh)
    return common(15, t, "SecondaryCaptureImageStorage", "OT") + [
        s("0010,4000", "LT", r"C:\path\to\file [not a multi-value]"),
        s("0018,9908", "UC", r"long reason one\second reason"),
        s("0008,0120", "UR", "http://example.com/a%20b?x=1"),
    ]


# ---- images ----------------------------------------------------------------------------------
def image_common(t, idx, sop, modality):
    return common(idx, t, sop, modality)


rows16 = cols16 = 64
pix16 = bytearray()
for y in range(rows16):
    for x in range(cols16):
        v = (x * 64 + y * 37 + ((x * y) % 97) * 13) % 4096   # 12 significant bits
        pix16 += v.to_bytes(2, "little")
with open(os.path.join(work, "mono16.raw"), "wb") as f:
    f.write(pix16)

rows8 = cols8 = 16
rgb = bytearray()
for y in range(rows8):
    for x in range(cols8):
        rgb += bytes([(x * 16) & 255, (y * 16) & 255, ((x + y) * 8) & 255])
with open(os.path.join(work, "rgb8.raw"), "wb") as f:
    f.write(rgb)

mono8 = bytearray()
for frame in range(2):
    for y in range(32):
        for x in range(32):
            mono8.append((x * 8 + y * 4 + frame * 100) & 255)
with open(os.path.join(work, "mono8x2.raw"), "wb") as f:
    f.write(mono8)


@base("image-mono16", 16, "CT 64x64 MONOCHROME2, 16 bits allocated / 12 stored, native OW", ALL4)
def _(t):
    return image_common(t, 16, "CTImageStorage", "CT") + [
        s("0008,0008", "CS", r"ORIGINAL\PRIMARY\AXIAL"),
        el("0028,0002", "US", "1"),
        s("0028,0004", "CS", "MONOCHROME2"),
        el("0028,0010", "US", str(rows16)),
        el("0028,0011", "US", str(cols16)),
        s("0028,0030", "DS", r"0.5\0.5"),
        el("0028,0100", "US", "16"),
        el("0028,0101", "US", "12"),
        el("0028,0102", "US", "11"),
        el("0028,0103", "US", "0"),
        s("0028,1050", "DS", "1024"),
        s("0028,1051", "DS", "4096"),
        s("0028,1052", "DS", "-1024"),
        s("0028,1053", "DS", "1"),
        el("7fe0,0010", "OW", "=" + os.path.join(work, "mono16.raw")),
    ]


@base("image-rgb8", 17, "SC 16x16 RGB 8-bit, PlanarConfiguration 0, native OB", LE2)
def _(t):
    return image_common(t, 17, "SecondaryCaptureImageStorage", "OT") + [
        el("0028,0002", "US", "3"),
        s("0028,0004", "CS", "RGB"),
        el("0028,0006", "US", "0"),
        el("0028,0010", "US", str(rows8)),
        el("0028,0011", "US", str(cols8)),
        el("0028,0100", "US", "8"),
        el("0028,0101", "US", "8"),
        el("0028,0102", "US", "7"),
        el("0028,0103", "US", "0"),
        el("7fe0,0010", "OB", "=" + os.path.join(work, "rgb8.raw")),
    ]


@base("image-mono8-2frames", 18, "SC multi-frame 2x 32x32 MONOCHROME2 8-bit, native OB", LE2)
def _(t):
    return image_common(t, 18, "MultiframeGrayscaleByteSecondaryCaptureImageStorage", "OT") + [
        el("0028,0002", "US", "1"),
        s("0028,0004", "CS", "MONOCHROME2"),
        s("0028,0008", "IS", "2"),
        el("0028,0009", "AT", "(0018,2001)"),
        el("0018,2001", "IS", r"[1\2]"),
        el("0028,0010", "US", "32"),
        el("0028,0011", "US", "32"),
        el("0028,0100", "US", "8"),
        el("0028,0101", "US", "8"),
        el("0028,0102", "US", "7"),
        el("0028,0103", "US", "0"),
        el("7fe0,0010", "OB", "=" + os.path.join(work, "mono8x2.raw")),
    ]


plan = []
for name, idx, desc, fn, tss in BASES:
    for ts in tss:
        opt, ti = TS[ts]
        lines = fn(ti)
        path = os.path.join(dumps, f"{name}-{ts}.dump")
        with open(path, "wb") as f:
            f.write(b"# generated by scripts/make-corpus.sh\n")
            f.write(b"\n".join(lines) + b"\n")
        lenopt = "-e" if name.endswith("undeflen") else "+e"
        plan.append(f"{name}-{ts}.dcm|{path}|{opt}|{lenopt}|{desc} ({ts})")
with open(os.path.join(work, "plan.txt"), "w", encoding="utf-8") as f:
    f.write("\n".join(plan) + "\n")
PY

# ---------------------------------------------------------------------------------------------
# 2. dump2dcm every planned file (dump2dcm exits 0 on parse errors, so check stderr + output)
# ---------------------------------------------------------------------------------------------
declare -A descr=()
names=()
while IFS='|' read -r name dump tsopt lenopt desc; do
    out="$work/out/$name"
    if ! dump2dcm "$tsopt" "$lenopt" "$dump" "$out" 2>"$work/err" || grep -vE "^W: Tag .* with wrong VR 'UN' found" "$work/err" | grep -q . || [[ ! -s "$out" ]]; then
        echo "make-corpus.sh: dump2dcm failed for $name:" >&2
        cat "$work/err" >&2
        exit 1
    fi
    descr[$name]=$desc
    names+=("$name")
done <"$work/plan.txt"

# ---------------------------------------------------------------------------------------------
# 3. text-*: values with CR/LF/TAB, which a dump line cannot carry, via dcmodify
# ---------------------------------------------------------------------------------------------
lt=$'first line\\with backslash\r\nsecond line [brackets]\r\n\tindented third\r\n'
st=$'Street 1\r\nCity\\Region'
ut=$'  leading spaces kept\r\nUT value with \\ backslash\nand bare LF\rand bare CR'
for f in "$work"/out/text-*.dcm; do
    dcmodify -q -nb -i "(0020,4000)=$lt" -i "(0008,0081)=$st" -i "(0040,A160)=$ut" "$f"
done

# ---------------------------------------------------------------------------------------------
# 4. encapsulated pixel data
# ---------------------------------------------------------------------------------------------
uid_root=2.25.269757643672811179244064052535878479967 # same root as in the Python part
encap_n=0
encap() { # name source description tool args...
    local name=$1 src=$2 desc=$3
    shift 3
    "$@" "$work/out/$src" "$work/out/$name"
    # own SOP Instance UID (dcmcjpeg +un / dcmcrle keep the source's); meta header follows
    encap_n=$((encap_n + 1))
    dcmodify -q -nb -m "(0008,0018)=$uid_root.19.$encap_n" "$work/out/$name"
    descr[$name]=$desc
    names+=("$name")
}
encap image-mono16-jpeg-lossless-sv1.dcm image-mono16-explicit-le.dcm \
    "CT 64x64 12-bit, JPEG Lossless SV1 (dcmcjpeg +e1)" dcmcjpeg -q +e1 +un
encap image-mono16-rle.dcm image-mono16-explicit-le.dcm \
    "CT 64x64 12-bit, RLE Lossless (dcmcrle)" dcmcrle -q
encap image-rgb8-rle.dcm image-rgb8-explicit-le.dcm \
    "SC 16x16 RGB, RLE Lossless (dcmcrle)" dcmcrle -q
encap image-rgb8-jpeg-baseline.dcm image-rgb8-explicit-le.dcm \
    "SC 16x16 RGB, JPEG Baseline (dcmcjpeg +eb, YBR_FULL_422)" dcmcjpeg -q +eb +un
encap image-mono8-2frames-jpeg-baseline.dcm image-mono8-2frames-explicit-le.dcm \
    "SC 2 frames 32x32 8-bit, JPEG Baseline, basic offset table (dcmcjpeg +eb)" dcmcjpeg -q +eb +un

# ---------------------------------------------------------------------------------------------
# 5. verify with dcmftest, write the manifest, move into OUTDIR
# ---------------------------------------------------------------------------------------------
if ! dcmftest "$work"/out/*.dcm >"$work/ftest" 2>&1 || grep -qv '^yes: ' "$work/ftest"; then
    echo "make-corpus.sh: dcmftest rejected some files:" >&2
    grep -v '^yes: ' "$work/ftest" >&2 || true
    exit 1
fi

manifest="$work/out/MANIFEST.tsv"
printf 'file\ttransfer_syntax_uid\tdescription\n' >"$manifest"
for name in "${names[@]}"; do
    tsuid=$(dcmdump -q -s -Un +P 0002,0010 "$work/out/$name" | sed -n 's/.*\[\([0-9.]*\)\].*/\1/p')
    [[ -n "$tsuid" ]] || { echo "make-corpus.sh: no transfer syntax in $name" >&2; exit 1; }
    printf '%s\t%s\t%s\n' "$name" "$tsuid" "${descr[$name]}" >>"$manifest"
done

mv -f "$work"/out/* "$outdir"/
echo "make-corpus.sh: wrote ${#names[@]} files to $outdir (see $outdir/MANIFEST.tsv)"
