#!/usr/bin/env python3
"""Writes the raw seed inputs of px's fuzzers (Fuzz/) into a directory, one folder per fuzzer.

The seeds come from files the project already tests with: the PDU vectors captured from DCMTK
(Tests/DICOMProtocolTests), pynetdicom's encoded PDU and DIMSE test vectors, pydicom's test files
(every transfer syntax, Deflated included) and DICOM JSON rendered from them by pydicom. Each seed
starts with the option byte its fuzzer reads first (see the comment at the top of each fuzzer).

scripts/fuzz.sh seed minimises them (libFuzzer -merge=1) into Fuzz/Corpus, which is committed.
Usage: .venv/bin/python scripts/fuzz-seeds.py OUTPUT_DIR
"""

import hashlib
import importlib
import io
import json
import os
import re
import sys
import warnings
import zlib
from pathlib import Path

import pydicom
import pydicom.data
from pydicom.filewriter import write_dataset

ROOT = Path(__file__).resolve().parent.parent
LARGEST = 64 * 1024  # scripts/fuzz.sh runs with -max_len=65536


def write(out: Path, name: str, data: bytes) -> None:
    if len(data) > LARGEST:
        return
    out.mkdir(parents=True, exist_ok=True)
    digest = hashlib.sha1(data).hexdigest()[:16]
    (out / f"{name}-{digest}").write_bytes(data)


def pdu_vectors() -> list[bytes]:
    """PDUs from the Swift tests (hex literals) and from pynetdicom's test vectors."""
    vectors = []
    for path in sorted((ROOT / "Tests" / "DICOMProtocolTests").glob("*.swift")):
        text = path.read_text()
        # A vector is one or more "hex" literals joined with +.
        for match in re.finditer(r'"([0-9a-fA-F]{12,})"(?:\s*\+\s*"([0-9a-fA-F]+)")*', text):
            literal = re.findall(r'"([0-9a-fA-F]+)"', match.group(0))
            hexits = "".join(literal)
            if len(hexits) % 2 == 0:
                data = bytes.fromhex(hexits)
                if data[0] in range(1, 8) and data[1] == 0:
                    vectors.append(data)
    for module in ("pynetdicom.tests.encoded_pdu_items", "pynetdicom.tests.encoded_dimse_msg"):
        try:
            mod = importlib.import_module(module)
        except ImportError:
            continue
        for name in sorted(dir(mod)):
            value = getattr(mod, name)
            if isinstance(value, (bytes, bytearray)) and len(value) >= 6:
                vectors.append(bytes(value))
    return vectors


def command_set_seeds() -> list[bytes]:
    """Bare DIMSE command sets (Implicit VR Little Endian) for the command set decoder."""
    seeds = []
    for fields in (
        {"CommandField": 0x0030, "MessageID": 1, "CommandDataSetType": 0x0101,
         "AffectedSOPClassUID": "1.2.840.10008.1.1"},
        {"CommandField": 0x0001, "MessageID": 7, "Priority": 0, "CommandDataSetType": 0x0001,
         "AffectedSOPClassUID": "1.2.840.10008.5.1.4.1.1.2", "AffectedSOPInstanceUID": "1.2.3.4.5",
         "MoveOriginatorApplicationEntityTitle": "ORIGIN", "MoveOriginatorMessageID": 3},
        {"CommandField": 0x8021, "MessageIDBeingRespondedTo": 2, "CommandDataSetType": 0x0101,
         "Status": 0xFF00, "NumberOfRemainingSuboperations": 4, "NumberOfCompletedSuboperations": 1,
         "NumberOfFailedSuboperations": 0, "NumberOfWarningSuboperations": 0,
         "OffendingElement": [0x00100010], "ErrorComment": "broken"},
    ):
        ds = pydicom.Dataset()
        for key, value in fields.items():
            setattr(ds, key, value)
        buffer = io.BytesIO()
        raw = pydicom.filebase.DicomFileLike(buffer)
        raw.is_little_endian, raw.is_implicit_VR = True, True
        write_dataset(raw, ds)
        seeds.append(buffer.getvalue())
    return seeds


def bare(ds: pydicom.Dataset, little: bool, implicit: bool) -> bytes:
    buffer = io.BytesIO()
    raw = pydicom.filebase.DicomFileLike(buffer)
    raw.is_little_endian, raw.is_implicit_VR = little, implicit
    write_dataset(raw, ds)
    return buffer.getvalue()


def test_files() -> list[Path]:
    folder = Path(pydicom.data.__file__).parent / "test_files"
    return sorted(p for p in folder.rglob("*") if p.is_file() and p.stat().st_size <= LARGEST)


def main() -> None:
    warnings.filterwarnings("ignore")
    out = Path(sys.argv[1])

    for i, pdu in enumerate(pdu_vectors()):
        # Whole and streamed, byte by byte and in 38-byte reads, 16 KiB data cap.
        for options in (0x00, 0x01, 0x0B, 0x0A):
            write(out / "pdu", f"pdu{i}-{options:02x}", bytes([options]) + pdu)
    for i, command in enumerate(command_set_seeds()):
        write(out / "pdu", f"command{i}", bytes([0x80]) + command)

    for path in test_files():
        data = path.read_bytes()
        write(out / "dataset", f"file-{path.name}", bytes([0]) + data)
        write(out / "dataset", f"header-{path.name}", bytes([1]) + data)
        try:
            ds = pydicom.dcmread(path, force=True)
            ds.remove_private_tags()
            if "PixelData" in ds:
                del ds.PixelData
            explicit = bare(ds, True, False)
            write(out / "dataset", f"implicit-{path.name}", bytes([2]) + bare(ds, True, True))
            write(out / "dataset", f"explicit-{path.name}", bytes([3]) + explicit)
            write(out / "dataset", f"big-{path.name}", bytes([4]) + bare(ds, False, False))
            deflater = zlib.compressobj(9, zlib.DEFLATED, -15)
            write(out / "dataset", f"deflated-{path.name}", bytes([5]) + deflater.compress(explicit) + deflater.flush())
            write(out / "json", f"json-{path.name}", ds.to_json(bulk_data_threshold=4096).encode())
        except Exception:  # pydicom cannot read or re-encode every deliberately broken test file
            continue

    for name, text in (
        ("array", '[{"00100010": {"vr": "PN", "Value": [{"Alphabetic": "Yamada^Tarou", "Ideographic": "山田^太郎"}]}}]'),
        ("numbers", '{"00280010": {"vr": "US", "Value": [512]}, "00181050": {"vr": "DS", "Value": [1.5e-3, -2]}}'),
        ("inline", '{"7FE00010": {"vr": "OB", "InlineBinary": "AAECAwQ="}}'),
        ("escapes", '{"00081030": {"vr": "LO", "Value": ["a\\"b\\\\c\\u00e9\\ud83d\\ude00"]}}'),
    ):
        write(out / "json", name, text.encode())

    ff = b"\xff"
    for name, options, fields in (
        ("pypx", 0x30, [b"12345", b"Yamada^Tarou=\xe5\xb1\xb1\xe7\x94\xb0", b"CT HEAD", b"20240101", b"1.2.3",
                        b"AX T1", b"20240102", b"1.2.3.4", b"7", b"1.2.3.4.5"]),
        ("traversal", 0x31, [b"../../etc", b"..", b".", b"a/b\\c\x00d", b"/", b" ", b"", b"\x01\x7f", b"12", b"1.2.3.4+5"]),
        ("charset", 0xB2, [b"ISO 2022 IR 87", b"\x1b$B;3ED\x1b(B^\x1b$BB@O:\x1b(B"] + [b"x" * 200] * 9),
        ("template", 0x07, [b"{PatientID}/{SOPInstanceUID}.dcm", b"P1", b"Name"]),
    ):
        write(out / "layout", name, bytes([options]) + ff.join(fields))

    zip_seeds(out / "zip")
    web_seeds(out / "web")


def web_seeds(out: Path) -> None:
    """fuzz-web: byte 0 even = a multipart body (first line the boundary), odd = a QIDO-RS JSON array;
    byte 1 picks the chunk size."""
    part = b"--pxb\r\nContent-Type: application/dicom\r\nContent-Length: 12\r\n\r\nDICM-content\r\n"
    for chunk in (0, 1, 5, 40):
        write(out, f"multipart-{chunk}", bytes([0, chunk]) + b"pxb\n" + b"preamble\r\n" + part * 2 + b"--pxb--\r\n")
    write(out, "multipart-padding", bytes([2, 3]) + b"x\n--x  \t\r\n\r\nbody\r\n--x--")
    write(out, "multipart-cut", bytes([0, 9]) + b"pxb\n" + part[:30])
    array = json.dumps(
        [
            {"0020000D": {"vr": "UI", "Value": ["1.2.3"]}, "00100010": {"vr": "PN", "Value": [{"Alphabetic": "A^B"}]}},
            {"00081030": {"vr": "LO", "Value": ['a"]}\\{[', "\u00e9"]}},
        ]
    ).encode()
    for chunk in (0, 1, 3, 64):
        write(out, f"qido-{chunk}", bytes([1, chunk]) + array)
    write(out, "qido-empty", bytes([1, 0]) + b" [ ] ")
    write(out, "qido-cut", bytes([1, 2]) + array[:50])


def zip_seeds(out: Path) -> None:
    """Zip archives for fuzz-zip: stored and deflated entries, a zip place's shape, a data descriptor,
    Zip64 extra fields, and the hostile shapes the reader refuses (the fuzzer mutates from both)."""
    import struct
    import zipfile

    def archive(entries, **options) -> bytes:
        raw = io.BytesIO()
        with zipfile.ZipFile(raw, "w", **options) as z:
            for name, data, method in entries:
                info = zipfile.ZipInfo(name, date_time=(2026, 1, 1, 0, 0, 0))
                info.compress_type = method
                z.writestr(info, data)
        return raw.getvalue()

    text = b"DICM zip " * 200
    write(out, "stored", archive([("a.dcm", b"hello", zipfile.ZIP_STORED)]))
    write(out, "deflated", archive([("1.2/1.2.3.dcm", text, zipfile.ZIP_DEFLATED), ("e", b"", zipfile.ZIP_DEFLATED)]))
    manifest = b'{"px-zip-place": 1, "study": {"0020000D": {"vr": "UI", "Value": ["1.2"]}}, "series": []}'
    write(out, "place", archive([("px-study.json", manifest, zipfile.ZIP_DEFLATED), ("1.2.1/1.2.1.1.dcm", text, 8)]))
    write(out, "folders", archive([("d/", b"", zipfile.ZIP_STORED), ("d/f", b"x", zipfile.ZIP_STORED)]))
    write(out, "traversal", archive([("../evil", b"x", zipfile.ZIP_STORED)]))
    write(out, "comment", archive([("c", b"xyz", zipfile.ZIP_STORED)]) [:-2] + struct.pack("<H", 5) + b"hello")
    # A data descriptor (bit 3): sizes after the data, as streaming writers make them.
    body = zlib.compressobj(6, zlib.DEFLATED, -15)
    deflated = body.compress(text) + body.flush()
    crc = zlib.crc32(text)
    local = struct.pack("<IHHHHHIIIHH", 0x04034B50, 20, 8, 8, 0, 0x21, 0, 0, 0, 1, 0) + b"s" + deflated
    local += struct.pack("<IIII", 0x08074B50, crc, len(deflated), len(text))
    central = struct.pack("<IHHHHHHIIIHHHHHII", 0x02014B50, 0x031E, 20, 8, 8, 0, 0x21, crc, len(deflated), len(text),
                          1, 0, 0, 0, 0, 0, 0) + b"s"
    end = struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, 1, 1, len(central), len(local), 0)
    write(out, "descriptor", local + central + end)
    # Zip64: all-ones sizes and offset in the central directory, the values in a Zip64 extra field, and a
    # Zip64 end record and locator.
    data = b"zip64"
    local = struct.pack("<IHHHHHIIIHH", 0x04034B50, 45, 0, 0, 0, 0x21, zlib.crc32(data), len(data), len(data), 1, 0)
    local += b"z" + data
    extra = struct.pack("<HHQQQ", 1, 24, len(data), len(data), 0)
    central = struct.pack("<IHHHHHHIIIHHHHHII", 0x02014B50, 0x032D, 45, 0, 0, 0, 0x21, zlib.crc32(data),
                          0xFFFFFFFF, 0xFFFFFFFF, 1, len(extra), 0, 0, 0, 0, 0xFFFFFFFF) + b"z" + extra
    record_at = len(local) + len(central)
    record = struct.pack("<IQHHIIQQQQ", 0x06064B50, 44, 0x032D, 45, 0, 0, 1, 1, len(central), len(local))
    locator = struct.pack("<IIQI", 0x07064B50, 0, record_at, 1)
    end = struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, 0xFFFF, 0xFFFF, 0xFFFFFFFF, 0xFFFFFFFF, 0)
    write(out, "zip64", local + central + record + locator + end)


if __name__ == "__main__":
    main()
