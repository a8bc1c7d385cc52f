#!/usr/bin/env python3
"""make-listen-corpus.py - DICOM files for px-listen's tests and benchmark.

Usage:
  .venv/bin/python scripts/make-listen-corpus.py many N SERIES OUTDIR   N small CT instances (16x16, 16-bit)
                                                                        spread over SERIES series of one study
  .venv/bin/python scripts/make-listen-corpus.py hostile OUTDIR        instances whose values try to escape a
                                                                        directory tree: PatientID ../../etc,
                                                                        a SOP Instance UID with '/', a
                                                                        300-character description, NUL bytes,
                                                                        empty names, backslashes, control chars
  .venv/bin/python scripts/make-listen-corpus.py large MIB OUTDIR      one CT instance with MIB MiB of pixel data,
                                                                        zeros in a sparse file (large.dcm)

Files are Explicit VR Little Endian with fixed UIDs (2.25 from UUID v5), so runs are repeatable.
Prints nothing; exit 0. Needs pydicom 3 (scripts/setup-test-env.sh installs it into .venv).
"""

import os
import struct
import sys
import uuid

import pydicom
from pydicom.dataset import Dataset, FileMetaDataset
from pydicom.uid import ExplicitVRLittleEndian, CTImageStorage

NAMESPACE = uuid.UUID("0a6b7f7e-7c0c-5d4e-8a55-1f1e0b7a3c21")


def uid(*parts):
    return "2.25.%d" % uuid.uuid5(NAMESPACE, "/".join(str(p) for p in parts)).int


def base(sop_uid, study, series, number, rows=16, cols=16, pixels=True):
    meta = FileMetaDataset()
    meta.MediaStorageSOPClassUID = CTImageStorage
    meta.MediaStorageSOPInstanceUID = sop_uid
    meta.TransferSyntaxUID = ExplicitVRLittleEndian
    ds = Dataset()
    ds.file_meta = meta
    ds.SOPClassUID = CTImageStorage
    ds.SOPInstanceUID = sop_uid
    ds.PatientID = "LISTEN001"
    ds.PatientName = "Listen^Test"
    ds.StudyInstanceUID = study
    ds.SeriesInstanceUID = series
    ds.StudyDescription = "Listen study"
    ds.SeriesDescription = "Listen series"
    ds.StudyDate = "20240101"
    ds.SeriesDate = "20240101"
    ds.Modality = "CT"
    ds.InstanceNumber = number
    ds.Rows = rows
    ds.Columns = cols
    ds.BitsAllocated = 16
    ds.BitsStored = 12
    ds.HighBit = 11
    ds.PixelRepresentation = 0
    ds.SamplesPerPixel = 1
    ds.PhotometricInterpretation = "MONOCHROME2"
    if pixels:
        ds.PixelData = bytes((i * 7 + number) & 0xFF for i in range(rows * cols * 2))
    return ds


def save(ds, path):
    ds.save_as(path, enforce_file_format=True)


def many(n, series_count, out):
    study = uid("many", "study")
    for i in range(n):
        s = i % series_count
        ds = base(uid("many", n, i), study, uid("many", "series", s), i + 1)
        ds.SeriesDescription = "Series %d" % s
        save(ds, os.path.join(out, "many-%05d.dcm" % i))


def hostile(out):
    study = uid("hostile", "study")
    cases = [
        ("dotdot", {"PatientID": "../../etc", "PatientName": "../..", "StudyDescription": "..",
                    "SeriesDescription": "/etc/passwd"}),
        ("slashuid", {"SOPInstanceUID": "1.2.3/../../4", "SeriesDescription": "a/b\\c"}),
        ("long", {"StudyDescription": "D" * 300, "SeriesDescription": "S" * 300, "PatientID": "P" * 64}),
        ("nul", {"PatientID": "abc\x00def", "PatientName": "x\x00y", "SeriesDescription": "nul\x00\x01\x1f\x7f"}),
        ("empty", {"PatientID": "", "PatientName": "", "StudyDescription": "", "SeriesDescription": "",
                   "StudyDate": "", "SeriesDate": ""}),
        ("dots", {"PatientID": ".", "PatientName": ".hidden", "SeriesDescription": "...."}),
    ]
    for name, values in cases:
        ds = base(uid("hostile", name), study, uid("hostile", "series", name), 1)
        for key, value in values.items():
            setattr(ds, key, value)
        if "SOPInstanceUID" in values:
            ds.file_meta.MediaStorageSOPInstanceUID = values["SOPInstanceUID"]
        save(ds, os.path.join(out, "hostile-%s.dcm" % name))


def large(mib, out):
    cols = 16384
    total = mib * 1024 * 1024
    rows = max(1, total // (cols * 2))
    ds = base(uid("large", mib), uid("large", "study"), uid("large", "series"), 1, rows=rows, cols=cols, pixels=False)
    path = os.path.join(out, "large.dcm")
    save(ds, path)
    length = rows * cols * 2
    with open(path, "ab") as f:
        f.write(struct.pack("<HH2sHI", 0x7FE0, 0x0010, b"OW", 0, length))
        # Zero pixels as a sparse file: the instance is large on the wire but costs the disk nothing, so
        # making it does not stall the other suites' writes on a shared CI disk (512 MiB written out did).
        f.truncate(f.tell() + length)


def main(argv):
    if len(argv) >= 2 and argv[1] in ("-h", "--help"):
        print(__doc__)
        return 0
    if len(argv) == 5 and argv[1] == "many":
        os.makedirs(argv[4], exist_ok=True)
        many(int(argv[2]), int(argv[3]), argv[4])
    elif len(argv) == 3 and argv[1] == "hostile":
        os.makedirs(argv[2], exist_ok=True)
        hostile(argv[2])
    elif len(argv) == 4 and argv[1] == "large":
        os.makedirs(argv[3], exist_ok=True)
        large(int(argv[2]), argv[3])
    else:
        sys.stderr.write(__doc__)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
