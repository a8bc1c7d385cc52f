#!/usr/bin/env python3
"""pynetdicom-scu.py - C-ECHO or C-STORE with pynetdicom, results as one JSON object, for interop tests.

Usage:
  .venv/bin/python scripts/pynetdicom-scu.py echo  HOST PORT [--aet PYSCU] [--aec ANY-SCP]
  .venv/bin/python scripts/pynetdicom-scu.py store HOST PORT FILE... [--aet PYSCU] [--aec ANY-SCP]
                                             [--decode] [--transfer-syntax UID]...
                                             [--affected-sop-instance UID]

echo   opens one association proposing Verification and sends one C-ECHO.
store  opens one association for all FILEs (at most 128 presentation contexts) and sends a
       C-STORE per file, in order:
         default       each file's data set goes out as it is in the file, without decoding
                       (pynetdicom's chunked sending), so only a context with the file's own
                       transfer syntax can carry it; one context is proposed per (SOP class,
                       transfer syntax) of the files.
         --decode      each file is read with pydicom and re-encoded by pynetdicom/pydicom for
                       the accepted context; with --transfer-syntax (repeatable) those syntaxes
                       are proposed for every SOP class instead of the files' own syntax.
       A file no accepted context can carry is reported with status null and not sent.
       --affected-sop-instance UID  puts UID in every C-STORE-RQ's Affected SOP Instance UID
                     instead of the data set's own (a sender whose command and data set disagree).

Stdout is one JSON object:
  {"association": "accepted" | "rejected" | "aborted" | "failed",
   "acceptedContexts": [{"abstractSyntax": ..., "transferSyntax": ...}, ...],
   "echo": {"status": N},                                                       (echo)
   "results": [{"path": ..., "sopInstanceUID": ..., "fileTransferSyntaxUID": ...,
                "status": N | null, "error": ...}, ...]}                         (store)
status is the C-ECHO/C-STORE-RSP status as an integer (0 = success). Exit status: 0 when
the association was accepted and every status is 0, 1 otherwise, 2 for bad usage.
Needs pydicom 3 and pynetdicom 3 (scripts/setup-test-env.sh installs them into .venv).
"""

import argparse
import json
import sys
import time

try:
    from pydicom import dcmread
    from pydicom.filereader import read_file_meta_info
    from pynetdicom import AE, _config, evt
    from pynetdicom.acse import ACSE
    from pynetdicom.sop_class import Verification

    from pynetdicom_fixes import keep_awaited_responses
except ImportError:  # pragma: no cover - environment problem
    sys.stderr.write("pynetdicom-scu.py: pydicom/pynetdicom not found; run scripts/setup-test-env.sh "
                     "and use .venv/bin/python\n")
    sys.exit(1)

MAX_CONTEXTS = 128  # PS3.8 §9.3.2.2: odd context IDs 1..255


def associate(ae, args):
    """Opens the association; the outcome is what the peer answered.

    pynetdicom 3.0.4's requestor can report a rejection as an abort: its ACSE thread checks that the
    socket is still connected only after the DUL thread was scheduled, and when the DUL thread has meanwhile
    received the A-ASSOCIATE-RJ and closed the connection (PS3.8 AE-4), the ACSE aborts instead of
    reading the RJ it was given. On a loaded machine that happens now and then. So the answer is taken
    from the PDUs the DUL decoded (EVT_PDU_RECV), which that race cannot change.
    """
    received = []
    handlers = [(evt.EVT_PDU_RECV, lambda event: received.append(type(event.pdu).__name__))]
    if args.delay_acse:
        # Test hook: hold the ACSE thread after it queued the A-ASSOCIATE-RQ, so the DUL thread answers first
        # (the interleaving a loaded machine produces by chance).
        send_request = ACSE.send_request

        def delayed(self):
            send_request(self)
            time.sleep(args.delay_acse)

        ACSE.send_request = delayed
    # pynetdicom waits 30 s for a DIMSE answer by default. A test peer shares 2 cores and one disk with every
    # other suite: the tests assert what arrives, not how fast, so the sender waits longer before it aborts.
    # (The stalls that first looked like a slow receiver were pynetdicom dropping the answer: pynetdicom_fixes.py.)
    ae.acse_timeout = 60
    ae.dimse_timeout = 120
    ae.network_timeout = 180
    assoc = ae.associate(args.host, args.port, ae_title=args.aec, evt_handlers=handlers)
    if assoc.is_established:
        return assoc, "accepted"
    if assoc.is_rejected or "A_ASSOCIATE_RJ" in received:
        return assoc, "rejected"
    if assoc.is_aborted:
        return assoc, "aborted"
    return assoc, "failed"


def accepted_contexts(assoc):
    return [{"abstractSyntax": str(cx.abstract_syntax), "transferSyntax": str(cx.transfer_syntax[0])}
            for cx in assoc.accepted_contexts]


def status_of(response):
    """The Status integer of a response dataset, or None when there was no (valid) response."""
    if response is None or "Status" not in response:
        return None
    return int(response.Status)


def run_echo(args):
    ae = AE(ae_title=args.aet)
    ae.add_requested_context(Verification)
    assoc, outcome = associate(ae, args)
    out = {"association": outcome, "acceptedContexts": []}
    if outcome != "accepted":
        return out, False
    out["acceptedContexts"] = accepted_contexts(assoc)
    status = status_of(assoc.send_c_echo())
    assoc.release()
    out["echo"] = {"status": status}
    return out, status == 0


def run_store(args):
    ae = AE(ae_title=args.aet)
    metas = []
    for path in args.files:
        meta = read_file_meta_info(path)
        metas.append((path, str(meta.MediaStorageSOPClassUID), str(meta.MediaStorageSOPInstanceUID),
                      str(meta.TransferSyntaxUID)))
    proposals = []
    for _, sop_class, _, syntax in metas:
        syntaxes = tuple(args.transfer_syntax) if args.transfer_syntax else (syntax,)
        if (sop_class, syntaxes) not in proposals:
            proposals.append((sop_class, syntaxes))
    if len(proposals) > MAX_CONTEXTS:
        sys.stderr.write(f"pynetdicom-scu.py: the files need {len(proposals)} presentation contexts; "
                         f"at most {MAX_CONTEXTS} fit in one association\n")
        sys.exit(2)
    for sop_class, syntaxes in proposals:
        ae.add_requested_context(sop_class, list(syntaxes))
    # Without decoding, pynetdicom streams the data set from the file as it is.
    _config.STORE_SEND_CHUNKED_DATASET = not args.decode

    assoc, outcome = associate(ae, args)
    out = {"association": outcome, "acceptedContexts": [], "results": []}
    if outcome != "accepted":
        return out, False
    out["acceptedContexts"] = accepted_contexts(assoc)
    if args.affected_sop_instance:
        send_msg = assoc.dimse.send_msg

        def send_with_other_uid(primitive, context_id):
            if type(primitive).__name__ == "C_STORE" and primitive.MessageIDBeingRespondedTo is None:
                primitive.AffectedSOPInstanceUID = args.affected_sop_instance
            send_msg(primitive, context_id)

        assoc.dimse.send_msg = send_with_other_uid
    ok = True
    for path, _, sop_instance, syntax in metas:
        result = {"path": path, "sopInstanceUID": sop_instance, "fileTransferSyntaxUID": syntax,
                  "status": None, "error": None}
        try:
            dataset = dcmread(path) if args.decode else path
            result["status"] = status_of(assoc.send_c_store(dataset))
        except (ValueError, AttributeError) as error:  # no accepted context, or cannot encode
            result["error"] = str(error)
        if result["status"] != 0:
            ok = False
        out["results"].append(result)
        if not assoc.is_established:
            out["association"] = "aborted"
            break
    if assoc.is_established:
        assoc.release()
    return out, ok


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("operation", choices=["echo", "store"])
    ap.add_argument("host")
    ap.add_argument("port", type=int)
    ap.add_argument("files", nargs="*")
    ap.add_argument("--aet", default="PYSCU", help="calling AE title (default PYSCU)")
    ap.add_argument("--aec", default="ANY-SCP", help="called AE title (default ANY-SCP)")
    ap.add_argument("--decode", action="store_true",
                    help="store: read with pydicom and let pynetdicom encode for the context")
    ap.add_argument("--affected-sop-instance", metavar="UID")
    ap.add_argument("--transfer-syntax", action="append", default=[], metavar="UID",
                    help="store --decode: propose these transfer syntaxes (repeatable)")
    ap.add_argument("--delay-acse", type=float, default=0, metavar="SECONDS",
                    help="test hook: delay pynetdicom's ACSE thread after it queued the A-ASSOCIATE-RQ")
    args = ap.parse_intermixed_args(argv)  # options may come after the files
    if not 1 <= args.port <= 65535:
        ap.error("PORT must be 1..65535")
    if args.operation == "echo" and args.files:
        ap.error("echo takes no files")
    if args.operation == "store" and not args.files:
        ap.error("store needs at least one FILE")
    if args.transfer_syntax and not args.decode:
        ap.error("--transfer-syntax needs --decode (undecoded data sets keep their own syntax)")

    keep_awaited_responses()
    out, ok = run_echo(args) if args.operation == "echo" else run_store(args)
    sys.stdout.write(json.dumps(out, ensure_ascii=False) + "\n")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
