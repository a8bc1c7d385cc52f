#!/usr/bin/env python3
"""make-qr-corpus.py - write a small query/retrieve test corpus for a PACS (dcmqrscp, Orthanc).

Usage:
  .venv/bin/python scripts/make-qr-corpus.py OUTDIR
  .venv/bin/python scripts/make-qr-corpus.py --ct-bench N OUTDIR

Without --ct-bench: writes 6 instances (Explicit VR Little Endian, 16x16 16-bit pixel data,
fixed 2.25 UUID-derived UIDs) for 4 patients, plus OUTDIR/index.json listing every
patient / study / series / instance with its UIDs and key attributes:

  PAT001 Doe^John                  2 studies: CT (2 instances) and MR (1 instance);
                                   OtherPatientIDs ALT1\\ALT2\\ALT3,
                                   NameOfPhysiciansReadingStudy Smith^Anne\\Jones^Bob
  PAT002 Müller^Jürgen             SpecificCharacterSet ISO_IR 100 (Latin-1), CT
  PAT003 山田^太郎=やまだ^たろう   SpecificCharacterSet ISO_IR 192 (UTF-8), MR
  PAT004 O'Brien^Mary^Ann^Dr.^PhD  12-valued OtherPatientIDs, empty PatientSex, CT

Every instance has StudyDescription "Chest [PA] view", StudyDate/Time, SeriesDate/Time,
AccessionNumber, Modality, SeriesDescription, SeriesNumber, InstanceNumber,
PatientBirthDate and PatientSex.

With --ct-bench N: writes only N CT Image Storage files of 512x512 16-bit (12 bits stored,
~512 KB each, deterministic pseudo-random pixels) in one study/series of patient BENCH001
(files bench-00001.dcm ...), for benchmarks.

Output is deterministic (same bytes on every run); existing files of the same name are
replaced. Needs pydicom 3 (scripts/setup-test-env.sh installs it into .venv).
"""

import argparse
import json
import os
import random
import sys
import uuid

try:
    import pydicom
    from pydicom.dataset import Dataset, FileMetaDataset
    from pydicom.uid import ExplicitVRLittleEndian, CTImageStorage, MRImageStorage
except ImportError:  # pragma: no cover - environment problem
    sys.stderr.write("make-qr-corpus.py: pydicom not found; run scripts/setup-test-env.sh and use "
                     ".venv/bin/python\n")
    sys.exit(1)

NAMESPACE = uuid.UUID("6f0d1c52-8a0e-5b3e-9d4c-7078785f7172")  # fixed, px QR corpus


def uid(*parts):
    """Deterministic 2.25 UID derived from a name (UUID v5 as an integer)."""
    return "2.25.%d" % uuid.uuid5(NAMESPACE, "/".join(str(p) for p in parts)).int


def pixels16(rows, cols, seed):
    """Deterministic 16-bit little-endian pixel bytes with 12 significant bits."""
    data = bytearray(random.Random(seed).randbytes(rows * cols * 2))
    mask = bytes(b & 0x0F for b in range(256))
    data[1::2] = data[1::2].translate(mask)
    return bytes(data)


SMALL_PIXELS = {}


def small_pixels(seed):
    if seed not in SMALL_PIXELS:
        out = bytearray()
        for y in range(16):
            for x in range(16):
                out += ((x * 256 + y * 16 + seed * 7) % 4096).to_bytes(2, "little")
        SMALL_PIXELS[seed] = bytes(out)
    return SMALL_PIXELS[seed]


def make_instance(patient, study, series, number, rows, cols, pixel_data):
    sop_class = CTImageStorage if series["modality"] == "CT" else MRImageStorage
    sop_uid = series["instance_uids"][number - 1]

    meta = FileMetaDataset()
    meta.MediaStorageSOPClassUID = sop_class
    meta.MediaStorageSOPInstanceUID = sop_uid
    meta.TransferSyntaxUID = ExplicitVRLittleEndian

    ds = Dataset()
    ds.file_meta = meta
    if patient.get("charset"):
        ds.SpecificCharacterSet = patient["charset"]
    ds.ImageType = ["ORIGINAL", "PRIMARY", "AXIAL"]
    ds.SOPClassUID = sop_class
    ds.SOPInstanceUID = sop_uid
    ds.StudyDate = study["date"]
    ds.SeriesDate = study["date"]
    ds.ContentDate = study["date"]
    ds.StudyTime = study["time"]
    ds.SeriesTime = series["time"]
    ds.ContentTime = series["time"]
    ds.AccessionNumber = study["accession"]
    ds.Modality = series["modality"]
    ds.Manufacturer = "px test corpus"
    ds.ReferringPhysicianName = ""
    ds.StudyDescription = "Chest [PA] view"
    ds.SeriesDescription = series["description"]
    if patient.get("readers"):
        ds.NameOfPhysiciansReadingStudy = patient["readers"]
    ds.PatientName = patient["name"]
    ds.PatientID = patient["id"]
    ds.PatientBirthDate = patient["birth_date"]
    ds.PatientSex = patient["sex"]
    if patient.get("other_ids"):
        ds.OtherPatientIDs = patient["other_ids"]
    ds.StudyInstanceUID = study["uid"]
    ds.SeriesInstanceUID = series["uid"]
    ds.StudyID = study["id"]
    ds.SeriesNumber = series["number"]
    ds.InstanceNumber = number
    ds.FrameOfReferenceUID = uid(patient["id"], study["id"], "for")
    ds.ImagePositionPatient = [0, 0, number * 5]
    ds.ImageOrientationPatient = [1, 0, 0, 0, 1, 0]
    ds.SliceThickness = "5"
    ds.SamplesPerPixel = 1
    ds.PhotometricInterpretation = "MONOCHROME2"
    ds.Rows = rows
    ds.Columns = cols
    ds.PixelSpacing = [0.5, 0.5]
    ds.BitsAllocated = 16
    ds.BitsStored = 12
    ds.HighBit = 11
    ds.PixelRepresentation = 0
    if series["modality"] == "CT":
        ds.KVP = "120"
        ds.RescaleIntercept = "-1024"
        ds.RescaleSlope = "1"
        ds.RescaleType = "HU"
    else:
        ds.ScanningSequence = "SE"
        ds.SequenceVariant = "NONE"
        ds.ScanOptions = ""
        ds.MRAcquisitionType = "2D"
        ds.EchoTime = "20"
        ds.RepetitionTime = "500"
        ds.MagneticFieldStrength = "1.5"
    ds.WindowCenter = "1024"
    ds.WindowWidth = "4096"
    ds.PixelData = pixel_data
    return ds


def save(ds, path):
    ds.save_as(path, enforce_file_format=True)


def patients():
    def study(pid, n, date, time, accession, series):
        st = {"id": f"S{n}", "uid": uid(pid, f"study{n}"), "date": date, "time": time,
              "accession": accession, "series": []}
        for i, (modality, desc, count) in enumerate(series, start=1):
            se_uid = uid(pid, f"study{n}", f"series{i}")
            st["series"].append({
                "uid": se_uid, "number": i, "modality": modality, "description": desc,
                "time": time, "instance_uids": [uid(pid, f"study{n}", f"series{i}", f"inst{k}")
                                                for k in range(1, count + 1)],
            })
        return st

    return [
        {"id": "PAT001", "name": "Doe^John", "birth_date": "19700101", "sex": "M",
         "other_ids": ["ALT1", "ALT2", "ALT3"], "readers": ["Smith^Anne", "Jones^Bob"],
         "studies": [study("PAT001", 1, "20240115", "101500", "ACC001", [("CT", "CT Chest", 2)]),
                     study("PAT001", 2, "20240116", "143000", "ACC005", [("MR", "MR Brain T1", 1)])]},
        {"id": "PAT002", "name": "Müller^Jürgen", "birth_date": "19650312", "sex": "M",
         "charset": "ISO_IR 100",
         "studies": [study("PAT002", 1, "20240115", "090000", "ACC002",
                           [("CT", "Thorax Übersicht", 1)])]},
        {"id": "PAT003", "name": "山田^太郎=やまだ^たろう", "birth_date": "19800704", "sex": "M",
         "charset": "ISO_IR 192",
         "studies": [study("PAT003", 1, "20240115", "113000", "ACC003",
                           [("MR", "頭部 MR", 1)])]},
        {"id": "PAT004", "name": "O'Brien^Mary^Ann^Dr.^PhD", "birth_date": "19751224", "sex": "",
         "other_ids": [f"OTHERID{i:02d}" for i in range(12)],
         "studies": [study("PAT004", 1, "20240115", "160000", "ACC004", [("CT", "CT Chest", 1)])]},
    ]


def write_corpus(outdir):
    index = []
    count = 0
    for p in patients():
        for st in p["studies"]:
            for se in st["series"]:
                for n in range(1, len(se["instance_uids"]) + 1):
                    seed = count + 1
                    ds = make_instance(p, st, se, n, 16, 16, small_pixels(seed))
                    name = f"{p['id']}-{st['id']}-{se['modality']}{se['number']}-{n}.dcm"
                    save(ds, os.path.join(outdir, name))
                    se.setdefault("files", []).append(name)
                    count += 1
        index.append(p)
    with open(os.path.join(outdir, "index.json"), "w", encoding="utf-8") as f:
        json.dump({"patients": index, "instances": count, "pydicom": pydicom.__version__},
                  f, ensure_ascii=False, indent=1)
        f.write("\n")
    return count


def write_bench(outdir, n):
    p = {"id": "BENCH001", "name": "Bench^CT", "birth_date": "19700101", "sex": "O"}
    st = {"id": "B1", "uid": uid("BENCH001", "study"), "date": "20240201", "time": "120000",
          "accession": "BENCH001"}
    se = {"uid": uid("BENCH001", "series"), "number": 1, "modality": "CT",
          "description": "CT benchmark 512x512", "time": "120000",
          "instance_uids": [uid("BENCH001", "inst", k) for k in range(1, n + 1)]}
    for k in range(1, n + 1):
        ds = make_instance(p, st, se, k, 512, 512, pixels16(512, 512, k))
        save(ds, os.path.join(outdir, f"bench-{k:05d}.dcm"))
    return n


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 usage=__doc__.split("Usage:\n")[1].split("\n\n")[0].strip())
    ap.add_argument("outdir")
    ap.add_argument("--ct-bench", type=int, metavar="N",
                    help="write N 512x512 16-bit CT files (one study/series) instead")
    args = ap.parse_args(argv)
    os.makedirs(args.outdir, exist_ok=True)
    if args.ct_bench is not None:
        if args.ct_bench < 1:
            ap.error("--ct-bench needs N >= 1")
        n = write_bench(args.outdir, args.ct_bench)
        print(f"make-qr-corpus.py: wrote {n} benchmark CT files to {args.outdir}")
    else:
        n = write_corpus(args.outdir)
        print(f"make-qr-corpus.py: wrote {n} instances to {args.outdir} (see index.json)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
