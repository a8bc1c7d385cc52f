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


if __name__ == "__main__":
    main()
