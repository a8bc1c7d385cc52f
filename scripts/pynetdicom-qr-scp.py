#!/usr/bin/env python3
"""pynetdicom-qr-scp.py - a pynetdicom C-GET / C-MOVE SCP over a folder of DICOM files, for the tests of
retrieve sessions (several C-GETs or C-MOVEs on one association).

Usage:
  .venv/bin/python scripts/pynetdicom-qr-scp.py FOLDER [--host 127.0.0.1] [--port 0] [--aet PYQR]
                                                [--dest AE=HOST:PORT ...] [--abort-on-second-request]
                                                [--abort-on-second-find]
                                                [--study-root-only] [--patient-level-status 0xC000]
                                                [--study-status UID=0xC000 ...] [--claim-other-uid SOP ...]
                                                [--sub-operation-delay SECONDS]

Serves every *.dcm file under FOLDER (read once at start) with the Study Root and Patient Root C-FIND, C-GET
and C-MOVE SOP classes: a retrieve matches on StudyInstanceUID, and SeriesInstanceUID / SOPInstanceUID when
given, or at PATIENT level on PatientID; a C-FIND matches the PatientID, StudyInstanceUID, SeriesInstanceUID
and SOPInstanceUID (a list) it is given, one match per entity of its level, with the keys asked for. With
--study-root-only the Patient Root contexts are not accepted (a peer without the patient level); with
--patient-level-status, a PATIENT-level retrieve is answered with that failure status and nothing sent; with
--study-status, a retrieve of that StudyInstanceUID is answered with that failure status and nothing sent (a study
that fails among others); with --claim-other-uid, the C-GET C-STORE sub-operation of that SOP Instance UID names
another (the UID with ".9" appended) in its Affected SOP Instance UID, which the requestor should refuse (0xA900). C-MOVE sends to the --dest of the Move Destination (0xA801 for an unknown one). Files are sent as they
are: C-GET storage contexts are accepted in every transfer syntax pynetdicom knows (the requestor's first
choice in each context), and a C-MOVE proposes one context per (SOP class, transfer syntax) of the files. With
--abort-on-second-request, an association that already answered one retrieve is aborted (A-ABORT) when
the next C-GET-RQ or C-MOVE-RQ arrives, unanswered: a peer that ends associations between requests.
With --abort-on-second-find, the same for C-FIND-RQs (px-find --queries' one association).

Stdout carries one JSON object per line, flushed at once:
  {"event": "listening", "host": ..., "port": N, "aeTitle": ...}   when ready
  {"event": "associated", "callingAETitle": ...}                    per accepted association
  {"event": "retrieve", "service": "C-GET"|"C-MOVE", "level": ..., "studyInstanceUID": ..., "matches": N}
  {"event": "find", "level": ..., "matches": N}
  {"event": "refused", "service": ..., "status": "0xC000"}         per --patient-level-status or --study-status answer
  {"event": "aborted", "service": ...}                              per --abort-on-second-request abort
  {"event": "subOperation", "service": ..., "index": N}            before each sub-operation (with a delay)
  {"event": "cancelled", "service": ..., "sent": N}                 when a C-CANCEL-RQ stopped a retrieve
  {"event": "stopped"}                                              on exit
With --sub-operation-delay, each C-STORE sub-operation waits that long first: a slow peer, for C-CANCEL.
Runs until SIGTERM or SIGINT, or until the process that started it goes away.
Needs pydicom 3 and pynetdicom 3 (scripts/setup-test-env.sh installs them into .venv).
"""

import argparse
import importlib.util
import os
import sys
import threading
import time

try:
    from pydicom import Dataset, dcmread
    from pynetdicom import AE, ALL_TRANSFER_SYNTAXES, StoragePresentationContexts, build_context, evt
    from pynetdicom.sop_class import (
        PatientRootQueryRetrieveInformationModelFind,
        PatientRootQueryRetrieveInformationModelGet,
        PatientRootQueryRetrieveInformationModelMove,
        StudyRootQueryRetrieveInformationModelFind,
        StudyRootQueryRetrieveInformationModelGet,
        StudyRootQueryRetrieveInformationModelMove,
    )
except ImportError:  # pragma: no cover - environment problem
    sys.stderr.write("pynetdicom-qr-scp.py: pydicom/pynetdicom not found; run scripts/setup-test-env.sh and "
                     "use .venv/bin/python\n")
    sys.exit(1)

# emit() and serve_until_stopped() are pynetdicom-scp.py's (one definition of the peers' event lines).
_spec = importlib.util.spec_from_file_location(
    "pynetdicom_scp", os.path.join(os.path.dirname(os.path.abspath(__file__)), "pynetdicom-scp.py"))
_scp = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_scp)
emit = _scp.emit


def load(folder):
    files = []
    for directory, _, names in os.walk(folder):
        for name in sorted(names):
            if name.endswith(".dcm"):
                path = os.path.join(directory, name)
                ds = dcmread(path, stop_before_pixels=True)
                files.append((path, str(ds.StudyInstanceUID), str(ds.SeriesInstanceUID), str(ds.SOPInstanceUID),
                              str(ds.SOPClassUID), str(ds.file_meta.TransferSyntaxUID), ds))
    return files


def move_contexts(files):
    """The C-MOVE sub-association's proposals: one context per (SOP class, transfer syntax) the files hold, so
    that each file goes out as it is, then pynetdicom's default storage contexts, 128 at most."""
    pairs = sorted({(sop_class, syntax) for _, _, _, _, sop_class, syntax, _ in files})
    contexts = [build_context(sop_class, [syntax]) for sop_class, syntax in pairs][:128]
    return contexts + StoragePresentationContexts[:128 - len(contexts)]


def matches(files, identifier):
    if str(identifier.get("QueryRetrieveLevel", "") or "").strip() == "PATIENT":
        patient = str(identifier.get("PatientID", "") or "")
        return [path for path, _, _, _, _, _, ds in files if patient and str(ds.get("PatientID", "")) == patient]
    study = str(identifier.get("StudyInstanceUID", "") or "")
    series = str(identifier.get("SeriesInstanceUID", "") or "")
    instances = identifier.get("SOPInstanceUID", "") or ""
    instances = set([instances] if isinstance(instances, str) else [str(uid) for uid in instances]) - {""}
    return [path for path, st, se, sop, _, _, _ in files
            if st == study and (not series or se == series) and (not instances or sop in instances)]


FIND_KEYS = {"PATIENT": "PatientID", "STUDY": "StudyInstanceUID", "SERIES": "SeriesInstanceUID",
             "IMAGE": "SOPInstanceUID"}


def handle_find(event, files, abort_repeat=False, served=None):
    """C-FIND: exact (list) matching on the unique keys given, one match per entity of the level."""
    if abort_repeat and not served.first(event.assoc):
        emit(event="aborted", service="C-FIND")
        event.assoc.abort()
        return
    identifier = event.identifier
    level = str(identifier.get("QueryRetrieveLevel", "") or "").strip()
    found, seen = [], set()
    for _, _, _, _, _, _, ds in files:
        ok = True
        for keyword in ("PatientID", "StudyInstanceUID", "SeriesInstanceUID", "SOPInstanceUID"):
            wanted = identifier.get(keyword, "") or ""
            wanted = set([wanted] if isinstance(wanted, str) else [str(v) for v in wanted]) - {""}
            if wanted and str(ds.get(keyword, "")) not in wanted:
                ok = False
        entity = str(ds.get(FIND_KEYS.get(level, "SOPInstanceUID"), ""))
        if not ok or entity in seen:
            continue
        seen.add(entity)
        answer = Dataset()
        answer.QueryRetrieveLevel = level
        for element in identifier:
            if element.keyword and element.keyword != "QueryRetrieveLevel":
                setattr(answer, element.keyword, ds.get(element.keyword, ""))
        found.append(answer)
    emit(event="find", level=level, matches=len(found))
    for answer in found:
        if event.is_cancelled:
            yield 0xFE00, None
            return
        yield 0xFF00, answer


class Served:
    """Which associations already answered a retrieve (for --abort-on-second-request)."""

    def __init__(self):
        self.lock = threading.Lock()
        self.answered = set()

    def first(self, assoc):
        with self.lock:
            if id(assoc) in self.answered:
                return False
            self.answered.add(id(assoc))
            return True


def claim_other_uids(assoc, uids):
    """Makes the C-STORE-RQs of `uids` on `assoc` name another Affected SOP Instance UID (once per association)."""
    if getattr(assoc, "_px_claims", False):
        return
    assoc._px_claims = True
    send_msg = assoc.dimse.send_msg

    def send_with_other_uid(primitive, context_id):
        if (type(primitive).__name__ == "C_STORE" and primitive.MessageIDBeingRespondedTo is None
                and str(primitive.AffectedSOPInstanceUID) in uids):
            primitive.AffectedSOPInstanceUID = str(primitive.AffectedSOPInstanceUID) + ".9"
        send_msg(primitive, context_id)

    assoc.dimse.send_msg = send_with_other_uid


def handle_retrieve(event, service, files, dests, abort_repeat, served, patient_level_status=None,
                    study_status=None, claims=None, delay=0.0):
    if abort_repeat and not served.first(event.assoc):
        emit(event="aborted", service=service)
        event.assoc.abort()
        return
    found = matches(files, event.identifier)
    emit(event="retrieve", service=service, level=str(event.identifier.get("QueryRetrieveLevel", "")).strip(),
         studyInstanceUID=str(event.identifier.get("StudyInstanceUID", "")), matches=len(found))
    if service == "C-MOVE":
        destination = event.move_destination.decode("ascii", "replace").strip() if isinstance(
            event.move_destination, bytes) else str(event.move_destination).strip()
        if destination not in dests:
            yield None, None
            return
        yield dests[destination]
    level = str(event.identifier.get("QueryRetrieveLevel", "")).strip()
    status = patient_level_status if level == "PATIENT" else None
    if status is None:
        status = (study_status or {}).get(str(event.identifier.get("StudyInstanceUID", "") or ""))
    if status is not None:
        emit(event="refused", service=service, status="0x%04X" % status)
        yield 1
        yield status, None
        return
    if claims and service == "C-GET":
        claim_other_uids(event.assoc, claims)
    yield len(found)
    for index, path in enumerate(found):
        # pynetdicom's is_cancelled is true once per C-CANCEL-RQ (it forgets the request when asked).
        cancelled = event.is_cancelled
        if delay:
            emit(event="subOperation", service=service, index=index)
            # Wait in small steps, so that a C-CANCEL-RQ is seen as soon as it comes.
            waited = 0.0
            while waited < delay and not cancelled:
                time.sleep(0.05)
                waited += 0.05
                cancelled = event.is_cancelled
        if cancelled:
            emit(event="cancelled", service=service, sent=index)
            yield 0xFE00, None
            return
        yield 0xFF00, dcmread(path)


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("folder")
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--aet", default="PYQR")
    ap.add_argument("--dest", action="append", default=[], metavar="AE=HOST:PORT")
    ap.add_argument("--abort-on-second-request", action="store_true")
    ap.add_argument("--abort-on-second-find", action="store_true")
    ap.add_argument("--study-root-only", action="store_true")
    ap.add_argument("--patient-level-status", type=lambda text: int(text, 0), default=None, metavar="STATUS")
    ap.add_argument("--study-status", action="append", default=[], metavar="UID=STATUS")
    ap.add_argument("--claim-other-uid", action="append", default=[], metavar="SOP")
    ap.add_argument("--sub-operation-delay", type=float, default=0.0, metavar="SECONDS")
    args = ap.parse_args(argv)
    study_status = {}
    for item in args.study_status:
        uid, _, status = item.partition("=")
        study_status[uid] = int(status, 0)
    dests = {}
    for item in args.dest:
        ae_title, _, address = item.partition("=")
        host, _, port = address.rpartition(":")
        dests[ae_title] = (host, int(port))
    files = load(args.folder)

    ae = AE(ae_title=args.aet)
    ae.require_called_aet = True
    models = [StudyRootQueryRetrieveInformationModelFind, StudyRootQueryRetrieveInformationModelGet,
              StudyRootQueryRetrieveInformationModelMove]
    if not args.study_root_only:
        models += [PatientRootQueryRetrieveInformationModelFind, PatientRootQueryRetrieveInformationModelGet,
                   PatientRootQueryRetrieveInformationModelMove]
    for model in models:
        ae.add_supported_context(model)
    # C-GET sub-operations, this side as SCU (SCP role for the peer), in every transfer syntax: each file is sent
    # on an accepted context of its own syntax when the requestor offers one.
    for context in StoragePresentationContexts:
        ae.add_supported_context(context.abstract_syntax, ALL_TRANSFER_SYNTAXES, scu_role=False, scp_role=True)
    ae.requested_contexts = move_contexts(files)  # C-MOVE sub-operations
    served = Served()
    found = Served()
    handlers = [
        (evt.EVT_ACCEPTED, lambda event: emit(event="associated", callingAETitle=event.assoc.requestor.ae_title)),
        (evt.EVT_C_FIND, handle_find, [files, args.abort_on_second_find, found]),
        (evt.EVT_C_GET, handle_retrieve,
         ["C-GET", files, dests, args.abort_on_second_request, served, args.patient_level_status, study_status,
          set(args.claim_other_uid), args.sub_operation_delay]),
        (evt.EVT_C_MOVE, handle_retrieve,
         ["C-MOVE", files, dests, args.abort_on_second_request, served, args.patient_level_status, study_status,
          None, args.sub_operation_delay]),
    ]
    return _scp.serve_until_stopped(ae, args.host, args.port, args.aet, handlers, "pynetdicom-qr-scp.py")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
