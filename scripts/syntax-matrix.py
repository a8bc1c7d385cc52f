#!/usr/bin/env python3
"""syntax-matrix.py - helpers of the sending-path transfer syntax matrix test (issue 20).

Usage:
  .venv/bin/python scripts/syntax-matrix.py compare ORIGINALS_DIR RECEIVED_DIR
  .venv/bin/python scripts/syntax-matrix.py get HOST PORT AEC OUTDIR STUDY_UID... [--aet PYGET]
                                             [--context SOP_CLASS=TS[,TS...]|all]...

compare  reads every Part 10 file below both folders with pydicom and pairs them by SOP Instance
         UID. Stdout is one JSON object keyed by the originals' SOP Instance UIDs:
           {"<uid>": {"original": "<file>", "received": "<file>" | null,
                      "originalSyntax": "<UID>", "receivedSyntax": "<UID>" | null,
                      "equal": true | false}}
         "equal" is pydicom's Dataset == (every data element, file meta information apart),
         with Data Set Trailing Padding (FFFC,FFFC) and group lengths (gggg,0000) left out on
         both sides: PS3.10 §7.2 gives the padding no meaning and PS3.5 §7.2 makes group lengths
         optional, and storage SCPs differ in keeping them; encapsulated Pixel Data compared as OB
         whatever VR the file gave it (PS3.5 §A.4; DCMTK writes OB). When the two syntaxes differ and
         both are uncompressed, "equalAfterConversion" also says whether the data sets hold the
         same elements and the same pixel values (Big Endian words swapped, PS3.5 §A.3).
get      one association proposing Study Root C-GET and, for every storage SOP class pynetdicom
         knows, ONE presentation context offering all the transfer syntaxes it knows (or, with
         --context, the contexts given; "all" for every syntax pynetdicom knows), with the SCP role (PS3.4 §C.4.3, PS3.7 §D.3.3.4); one
         C-GET per study at STUDY level. Each
         received data set is written without decoding (its bytes as they arrived) to
         OUTDIR/<SOP Instance UID>.dcm with pynetdicom's file meta. Stdout is one JSON object:
           {"association": "accepted" | "failed",
            "acceptedContexts": {"<SOP class>": ["<transfer syntax>", ...], ...},
            "results": [{"study": ..., "status": N, "completed": N, "failed": N, "warning": N}],
            "stored": [{"sopInstanceUID": ..., "transferSyntaxUID": ...}]}
Needs pydicom 3 and pynetdicom 3 (scripts/setup-test-env.sh installs them into .venv).
"""

import json
import os
import sys

from pydicom import dcmread
from pydicom.dataset import Dataset


def comparable(path):
    dataset = dcmread(path)
    for tag in [t for t in dataset.keys() if t.element == 0 or t == 0xFFFCFFFC]:
        del dataset[tag]
    # Encapsulated Pixel Data is OB (PS3.5 §A.4); a file that says OW is written back as OB by DCMTK: the
    # value counts, not that VR.
    if "PixelData" in dataset and dataset["PixelData"].VR in ("OB", "OW") and \
            dataset.file_meta.TransferSyntaxUID.is_compressed:
        dataset["PixelData"].VR = "OB"
    return dataset


def part10_files(root):
    for directory, _, names in os.walk(root):
        for name in names:
            path = os.path.join(directory, name)
            try:
                meta = dcmread(path, stop_before_pixels=True, specific_tags=["SOPInstanceUID"])
                yield path, str(meta.SOPInstanceUID), str(meta.file_meta.TransferSyntaxUID)
            except Exception:  # not a DICOM file (Orthanc's index, logs...)
                continue


UNCOMPRESSED = {"1.2.840.10008.1.2", "1.2.840.10008.1.2.1", "1.2.840.10008.1.2.1.99", "1.2.840.10008.1.2.2"}


def pixel_words(dataset, big_endian):
    """Pixel Data as little endian bytes (OW swapped from big endian, PS3.5 §A.3), or None."""
    if "PixelData" not in dataset:
        return None
    data = bytes(dataset.PixelData)
    if big_endian and dataset.get("BitsAllocated", 8) > 8:
        data = b"".join(data[i:i + 2][::-1] for i in range(0, len(data) - 1, 2))
    return data


def same_after_lossless_conversion(original, copy):
    """Equal but for the encoding: the same elements and the same pixel values."""
    a, b = comparable(original), comparable(copy)
    pixels_a = pixel_words(a, str(a.file_meta.TransferSyntaxUID) == "1.2.840.10008.1.2.2")
    pixels_b = pixel_words(b, str(b.file_meta.TransferSyntaxUID) == "1.2.840.10008.1.2.2")
    for dataset in (a, b):
        if "PixelData" in dataset:
            del dataset.PixelData
    return a == b and pixels_a == pixels_b


def compare(originals, received):
    copies = {uid: (path, syntax) for path, uid, syntax in part10_files(received)}
    out = {}
    for path, uid, syntax in part10_files(originals):
        copy = copies.get(uid)
        entry = {"original": path, "received": None, "originalSyntax": syntax, "receivedSyntax": None,
                 "equal": False}
        if copy:
            entry["received"], entry["receivedSyntax"] = copy
            entry["equal"] = comparable(path) == comparable(copy[0])
            if copy[1] != syntax and {syntax, copy[1]} <= UNCOMPRESSED:
                entry["equalAfterConversion"] = same_after_lossless_conversion(path, copy[0])
        out[uid] = entry
    json.dump(out, sys.stdout)
    sys.stdout.write("\n")


def get(host, port, called, outdir, studies, calling, contexts):
    from pynetdicom import AE, ALL_TRANSFER_SYNTAXES, StoragePresentationContexts, build_role, evt
    from pynetdicom.sop_class import StudyRootQueryRetrieveInformationModelGet

    os.makedirs(outdir, exist_ok=True)
    stored = []

    def handle_store(event):
        path = os.path.join(outdir, f"{event.request.AffectedSOPInstanceUID}.dcm")
        with open(path, "wb") as f:
            f.write(event.encoded_dataset())
        stored.append({"sopInstanceUID": str(event.request.AffectedSOPInstanceUID),
                       "transferSyntaxUID": str(event.context.transfer_syntax)})
        return 0x0000

    ae = AE(ae_title=calling)
    ae.acse_timeout = ae.dimse_timeout = ae.network_timeout = 30
    ae.add_requested_context(StudyRootQueryRetrieveInformationModelGet)
    roles = []
    if not contexts:
        # 127 storage contexts at most next to the C-GET one (PS3.8 §9.3.2.2).
        contexts = [(c.abstract_syntax, ALL_TRANSFER_SYNTAXES) for c in StoragePresentationContexts[:127]]
    for abstract_syntax, syntaxes in contexts:
        ae.add_requested_context(abstract_syntax, syntaxes)
    for abstract_syntax in dict.fromkeys(c[0] for c in contexts):
        roles.append(build_role(abstract_syntax, scp_role=True))
    assoc = ae.associate(host, int(port), ae_title=called, ext_neg=roles,
                         evt_handlers=[(evt.EVT_C_STORE, handle_store)])
    out = {"association": "accepted" if assoc.is_established else "failed", "acceptedContexts": {},
           "results": [], "stored": stored}
    if assoc.is_established:
        for context in assoc.accepted_contexts:
            out["acceptedContexts"].setdefault(str(context.abstract_syntax), []).append(
                str(context.transfer_syntax[0]))
        for study in studies:
            identifier = Dataset()
            identifier.QueryRetrieveLevel = "STUDY"
            identifier.StudyInstanceUID = study
            result = {"study": study, "status": None}
            for status, _ in assoc.send_c_get(identifier, StudyRootQueryRetrieveInformationModelGet):
                if status and "Status" in status:
                    result["status"] = int(status.Status)
                    for key, name in [("completed", "NumberOfCompletedSuboperations"),
                                      ("failed", "NumberOfFailedSuboperations"),
                                      ("warning", "NumberOfWarningSuboperations")]:
                        if name in status:
                            result[key] = int(status[name].value)
            out["results"].append(result)
        assoc.release()
    json.dump(out, sys.stdout)
    sys.stdout.write("\n")


def main(argv):
    from pynetdicom import ALL_TRANSFER_SYNTAXES

    if len(argv) >= 3 and argv[0] == "compare":
        compare(argv[1], argv[2])
        return 0
    if len(argv) >= 6 and argv[0] == "get":
        calling = "PYGET"
        if "--aet" in argv:
            at = argv.index("--aet")
            calling = argv[at + 1]
            argv = argv[:at] + argv[at + 2:]
        contexts = []
        while "--context" in argv:
            at = argv.index("--context")
            abstract_syntax, syntaxes = argv[at + 1].split("=", 1)
            contexts.append((abstract_syntax, ALL_TRANSFER_SYNTAXES if syntaxes == "all" else syntaxes.split(",")))
            argv = argv[:at] + argv[at + 2:]
        get(argv[1], argv[2], argv[3], argv[4], argv[5:], calling, contexts)
        return 0
    sys.stderr.write(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
