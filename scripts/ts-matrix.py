#!/usr/bin/env python3
"""ts-matrix.py - the files of the transfer-syntax matrix test, and the check of what a receiver stored.

Usage:
  .venv/bin/python scripts/ts-matrix.py prepare OUTDIR [CORPUS_DIR]
  .venv/bin/python scripts/ts-matrix.py study OUTDIR COUNT PYDICOM_FILE [PYDICOM_FILE...]
  .venv/bin/python scripts/ts-matrix.py compare ORIGINALS_DIR RECEIVED_DIR

prepare  copies pydicom's test files of ten transfer syntaxes (JPEG Baseline 4.50, JPEG Extended 4.51,
         JPEG Lossless SV1 4.70, JPEG-LS 4.80 and 4.81, JPEG 2000 4.90 and 4.91, RLE, Explicit VR Big
         Endian, Deflated) and, with CORPUS_DIR (scripts/make-corpus.sh's output), its seven image files of
         seven transfer syntaxes into OUTDIR, each its own patient, study, series and instance (new UIDs under
         2.25), written by pydicom in the file's own transfer syntax. Prints one JSON object:
           {"files": [{"name": ..., "path": ..., "transferSyntaxUID": ..., "SOPClassUID": ...,
                       "StudyInstanceUID": ..., "SeriesInstanceUID": ..., "SOPInstanceUID": ...}, ...]}
study    writes COUNT instances of each PYDICOM_FILE (a pydicom test file name) into OUTDIR, all of one
         study (patient TSSTUDY) and one series per file, in each file's own transfer syntax; prints
         {"StudyInstanceUID": ..., "files": [...]} as prepare does.
compare  finds, for every DICOM file under ORIGINALS_DIR, the file under RECEIVED_DIR with the same SOP
         Instance UID (both searched recursively), and prints one JSON object:
           {"results": [{"name": ..., "transferSyntaxUID": ..., "received": PATH | null,
                         "receivedTransferSyntaxUID": ..., "equal": bool, "bytesEqual": bool}, ...]}
         equal: the data sets are equal (pydicom ==, Data Set Trailing Padding (FFFC,FFFC) left out and
         encapsulated Pixel Data taken as OB: DCMTK drops the one and corrects the other); bytesEqual: the bytes after the file meta information are the same.
Needs pydicom 3 (scripts/setup-test-env.sh installs it into .venv).
"""

import json
import os
import sys
import uuid

import pydicom
from pydicom.data import get_testdata_file

# (pydicom test file, the transfer syntax it is expected to hold)
PYDICOM_FILES = [
    ("SC_rgb_jpeg_dcmtk.dcm", "1.2.840.10008.1.2.4.50"),
    ("JPEG-lossy.dcm", "1.2.840.10008.1.2.4.51"),
    ("SC_rgb_jpeg_gdcm.dcm", "1.2.840.10008.1.2.4.70"),
    ("MR_small_jpeg_ls_lossless.dcm", "1.2.840.10008.1.2.4.80"),
    ("JPEGLSNearLossless_16.dcm", "1.2.840.10008.1.2.4.81"),
    ("GDCMJ2K_TextGBR.dcm", "1.2.840.10008.1.2.4.90"),
    ("JPEG2000.dcm", "1.2.840.10008.1.2.4.91"),
    ("MR_small_RLE.dcm", "1.2.840.10008.1.2.5"),
    ("MR_small_bigendian.dcm", "1.2.840.10008.1.2.2"),
    ("image_dfl.dcm", "1.2.840.10008.1.2.1.99"),
]

CORPUS_FILES = [
    ("image-mono16-explicit-le.dcm", "1.2.840.10008.1.2.1"),
    ("image-mono16-implicit-le.dcm", "1.2.840.10008.1.2"),
    ("image-mono16-explicit-be.dcm", "1.2.840.10008.1.2.2"),
    ("image-mono16-deflated-le.dcm", "1.2.840.10008.1.2.1.99"),
    ("image-mono16-jpeg-lossless-sv1.dcm", "1.2.840.10008.1.2.4.70"),
    ("image-rgb8-jpeg-baseline.dcm", "1.2.840.10008.1.2.4.50"),
    ("image-rgb8-rle.dcm", "1.2.840.10008.1.2.5"),
]


def study(outdir, count, names):
    os.makedirs(outdir, exist_ok=True)
    study_uid = new_uid()
    files = []
    for name in names:
        series_uid = new_uid()
        for number in range(count):
            ds = pydicom.dcmread(get_testdata_file(name))
            ds.PatientID = "TSSTUDY"
            ds.PatientName = "Matrix^Study"
            ds.StudyInstanceUID = study_uid
            ds.SeriesInstanceUID = series_uid
            ds.SOPInstanceUID = new_uid()
            ds.InstanceNumber = number + 1
            ds.file_meta.MediaStorageSOPInstanceUID = ds.SOPInstanceUID
            target = os.path.join(outdir, f"{len(files):02d}-{name}")
            ds.save_as(target, enforce_file_format=True)
            files.append({"name": name, "path": target, "transferSyntaxUID": str(ds.file_meta.TransferSyntaxUID),
                          "SOPInstanceUID": str(ds.SOPInstanceUID)})
    print(json.dumps({"StudyInstanceUID": study_uid, "files": files}))


def new_uid():
    return "2.25." + str(uuid.uuid4().int)


def prepare(outdir, corpus):
    os.makedirs(outdir, exist_ok=True)
    sources = [(get_testdata_file(name), name, syntax) for name, syntax in PYDICOM_FILES]
    if corpus:
        sources += [(os.path.join(corpus, name), name, syntax) for name, syntax in CORPUS_FILES]
    files = []
    for index, (path, name, syntax) in enumerate(sources):
        if path is None or not os.path.exists(path):
            raise SystemExit(f"ts-matrix.py: {name} is missing")
        ds = pydicom.dcmread(path)
        if str(ds.file_meta.TransferSyntaxUID) != syntax:
            raise SystemExit(f"ts-matrix.py: {name} holds {ds.file_meta.TransferSyntaxUID}, not {syntax}")
        ds.PatientID = "TSMATRIX"
        ds.PatientName = f"Matrix^{index:02d}"
        ds.StudyInstanceUID = new_uid()
        ds.SeriesInstanceUID = new_uid()
        ds.SOPInstanceUID = new_uid()
        ds.file_meta.MediaStorageSOPInstanceUID = ds.SOPInstanceUID
        ds.StudyID = f"TS{index:02d}"
        target = os.path.join(outdir, f"{index:02d}-{name}")
        ds.save_as(target, enforce_file_format=True)
        check = pydicom.dcmread(target, stop_before_pixels=True)
        files.append({
            "name": name, "path": target, "transferSyntaxUID": str(check.file_meta.TransferSyntaxUID),
            "SOPClassUID": str(check.SOPClassUID), "StudyInstanceUID": str(check.StudyInstanceUID),
            "SeriesInstanceUID": str(check.SeriesInstanceUID), "SOPInstanceUID": str(check.SOPInstanceUID),
        })
    print(json.dumps({"files": files}))


def data_set_bytes(path):
    with open(path, "rb") as f:
        data = f.read()
    ds = pydicom.dcmread(path, stop_before_pixels=True)
    # The file meta group's length: preamble (128) + DICM (4) + the group (12 + its length element's value).
    group_length = int(ds.file_meta.FileMetaInformationGroupLength)
    return data[132 + 12 + group_length:]


def dicom_files(folder):
    """{SOP Instance UID: path} of the DICOM files under folder (recursively; other files are skipped)."""
    found = {}
    for directory, _, names in os.walk(folder):
        for name in sorted(names):
            path = os.path.join(directory, name)
            try:
                ds = pydicom.dcmread(path, stop_before_pixels=True)
                found[str(ds.SOPInstanceUID)] = path
            except Exception:  # not DICOM: an index, info files of the storage layout
                continue
    return found


def without_padding(ds):
    # Data Set Trailing Padding (FFFC,FFFC) has no meaning and may be removed (PS3.10 §7.2): DCMTK drops it.
    if 0xFFFCFFFC in ds:
        del ds[0xFFFCFFFC]
    # Encapsulated Pixel Data is OB (PS3.5 §A.4); DCMTK writes OB where a file said OW (MR_small_jpeg_ls_lossless).
    if "PixelData" in ds and ds["PixelData"].is_undefined_length:
        ds["PixelData"].VR = "OB"
    return ds


def compare(originals, received):
    copies = dicom_files(received)
    results = []
    for uid, path in sorted(dicom_files(originals).items(), key=lambda item: item[1]):
        original = pydicom.dcmread(path)
        entry = {"name": os.path.basename(path), "transferSyntaxUID": str(original.file_meta.TransferSyntaxUID),
                 "SOPInstanceUID": uid, "received": copies.get(uid), "receivedTransferSyntaxUID": None,
                 "equal": False, "bytesEqual": False}
        if entry["received"]:
            copy = pydicom.dcmread(entry["received"])
            entry["receivedTransferSyntaxUID"] = str(copy.file_meta.TransferSyntaxUID)
            entry["equal"] = bool(without_padding(original) == without_padding(copy))
            entry["bytesEqual"] = data_set_bytes(path) == data_set_bytes(entry["received"])
        results.append(entry)
    print(json.dumps({"results": results}))


def main(argv):
    if len(argv) >= 2 and argv[0] == "prepare":
        prepare(argv[1], argv[2] if len(argv) > 2 else None)
    elif len(argv) >= 4 and argv[0] == "study":
        study(argv[1], int(argv[2]), argv[3:])
    elif len(argv) == 3 and argv[0] == "compare":
        compare(argv[1], argv[2])
    else:
        sys.stderr.write(__doc__)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
