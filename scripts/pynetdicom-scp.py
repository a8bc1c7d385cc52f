#!/usr/bin/env python3
"""pynetdicom-scp.py - a pynetdicom Verification + Storage SCP on loopback, for interop tests.

Usage:
  .venv/bin/python scripts/pynetdicom-scp.py OUTDIR [--host 127.0.0.1] [--port 0] [--aet PYSCP]
                                             [--abort-on SOP_INSTANCE_UID ...]
                                             [--require-user USER:PASSWORD ...]
                                             [--accept-token TOKEN ...] [--server-response TEXT]

Accepts C-ECHO and C-STORE of every storage SOP class pynetdicom knows, in every transfer
syntax it knows (uncompressed, deflated and encapsulated), only when the called AE title is
--aet. Each received instance is written without decoding (pynetdicom's encoded_dataset(): the
data set bytes exactly as they arrived, behind a file meta header built by pynetdicom) to

  OUTDIR/<calling AE title>/<SOP Instance UID>_<transfer syntax UID>.dcm

and then answered with status 0x0000 (0xA700 when the file cannot be written). --port 0 picks a
free port.

Stdout carries one JSON object per line, flushed at once:
  {"event": "listening", "host": ..., "port": N, "aeTitle": ...}          when ready
  {"event": "echo", "callingAETitle": ...}                                 per C-ECHO
  {"event": "stored", "callingAETitle": ..., "calledAETitle": ...,
   "sopClassUID": ..., "sopInstanceUID": ..., "transferSyntaxUID": ..., "path": ...}
  {"event": "aborted", "callingAETitle": ..., "sopInstanceUID": ...}      per --abort-on abort
  {"event": "userIdentity", "type": N, "username": ..., "positiveResponseRequested": bool,
   "accepted": bool}                                                        per presented identity
  {"event": "stopped"}                                                      on exit
With --require-user or --accept-token, a user identity (PS3.7 D.3.3.7, pynetdicom's EVT_USER_ID)
is checked: a username and password (type 2) must be one of --require-user, a Kerberos, SAML or
JWT token (types 3-5) one of --accept-token (answered with --server-response when a positive
response is asked for); anything else is rejected (pynetdicom's A-ASSOCIATE-RJ: transient, ACSE
provider, no reason given). An association that presents no identity is accepted (pynetdicom
checks only what is presented). pynetdicom sends no positive response for username types.
Diagnostics go to stderr. Runs until SIGTERM or SIGINT, and also ends by itself when the
process that started it goes away (so a crashed test run leaves no SCP behind).
Needs pynetdicom 3 (scripts/setup-test-env.sh installs it into .venv).
"""

import argparse
import json
import os
import signal
import sys
import threading

try:
    from pynetdicom import AE, ALL_TRANSFER_SYNTAXES, AllStoragePresentationContexts, evt
    from pynetdicom.sop_class import Verification

    from pynetdicom_fixes import keep_awaited_responses
except ImportError:  # pragma: no cover - environment problem
    sys.stderr.write("pynetdicom-scp.py: pynetdicom not found; run scripts/setup-test-env.sh and "
                     "use .venv/bin/python\n")
    sys.exit(1)

_print_lock = threading.Lock()


def emit(**fields):
    """One JSON event line on stdout (handlers run on pynetdicom's threads)."""
    line = json.dumps(fields, ensure_ascii=False)
    with _print_lock:
        sys.stdout.write(line + "\n")
        sys.stdout.flush()


def safe_name(text):
    """A path component from an AE title or UID: keeps letters, digits, '.', '-' and '_'."""
    cleaned = "".join(c if c.isalnum() or c in ".-_" else "_" for c in text.strip())
    return cleaned or "_"


def handle_echo(event):
    emit(event="echo", callingAETitle=event.assoc.requestor.ae_title)
    return 0x0000


def handle_store(event, outdir, abort_on):
    request = event.request
    calling = event.assoc.requestor.ae_title
    syntax = str(event.context.transfer_syntax)
    sop_instance = str(request.AffectedSOPInstanceUID)
    if sop_instance in abort_on:
        # A peer that cannot take this instance and aborts the association instead of answering.
        emit(event="aborted", callingAETitle=calling, sopInstanceUID=sop_instance)
        event.assoc.abort()
        return 0xC000
    directory = os.path.join(outdir, safe_name(calling))
    path = os.path.join(directory, f"{safe_name(sop_instance)}_{safe_name(syntax)}.dcm")
    try:
        os.makedirs(directory, exist_ok=True)
        partial = path + ".part"
        with open(partial, "wb") as f:
            f.write(event.encoded_dataset())
        os.replace(partial, path)  # complete before the response goes out
    except OSError as error:
        sys.stderr.write(f"pynetdicom-scp.py: cannot write {path}: {error}\n")
        return 0xA700
    emit(event="stored", callingAETitle=calling, calledAETitle=event.assoc.acceptor.ae_title,
         sopClassUID=str(request.AffectedSOPClassUID), sopInstanceUID=sop_instance,
         transferSyntaxUID=syntax, path=path)
    return 0x0000


def handle_user_id(event, users, tokens, server_response):
    """EVT_USER_ID: (accepted, server response) for the identity the requestor presented."""
    kind = event.user_id_type
    primary = bytes(event.primary_field or b"")
    secondary = bytes(event.secondary_field or b"")
    if kind == 2:
        accepted = (primary.decode("utf-8", "replace"), secondary.decode("utf-8", "replace")) in users
    elif kind in (3, 4, 5):
        accepted = primary.decode("utf-8", "replace").strip() in tokens
    else:
        accepted = False
    requested = bool(event.assoc.requestor.user_identity.positive_response_requested)
    emit(event="userIdentity", type=kind,
         username=primary.decode("utf-8", "replace") if kind in (1, 2) else None,
         positiveResponseRequested=requested, accepted=accepted)
    return accepted, (server_response.encode() if accepted and kind in (3, 4, 5) else None)


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("outdir")
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--aet", default="PYSCP")
    ap.add_argument("--abort-on", action="append", default=[], metavar="UID",
                    help="abort the association (A-ABORT) on a C-STORE of this SOP Instance UID")
    ap.add_argument("--require-user", action="append", default=[], metavar="USER:PASSWORD",
                    help="accept this username and password (user identity type 2); repeatable")
    ap.add_argument("--accept-token", action="append", default=[], metavar="TOKEN",
                    help="accept this Kerberos/SAML/JWT token (types 3-5); repeatable")
    ap.add_argument("--server-response", default="px-test-server-response",
                    help="the positive response sent for an accepted token")
    args = ap.parse_args(argv)
    if not 0 <= args.port <= 65535:
        ap.error("--port must be 0..65535")
    os.makedirs(args.outdir, exist_ok=True)
    outdir = os.path.abspath(args.outdir)

    ae = AE(ae_title=args.aet)
    ae.require_called_aet = True
    ae.add_supported_context(Verification, ALL_TRANSFER_SYNTAXES)
    for context in AllStoragePresentationContexts:
        ae.add_supported_context(context.abstract_syntax, ALL_TRANSFER_SYNTAXES)

    handlers = [(evt.EVT_C_ECHO, handle_echo), (evt.EVT_C_STORE, handle_store, [outdir, set(args.abort_on)])]
    if args.require_user or args.accept_token:
        users = {tuple(entry.split(":", 1)) for entry in args.require_user if ":" in entry}
        handlers.append((evt.EVT_USER_ID, handle_user_id, [users, set(args.accept_token), args.server_response]))
    return serve_until_stopped(ae, args.host, args.port, args.aet, handlers, "pynetdicom-scp.py")


def serve_until_stopped(ae, host, port, aet, handlers, name):
    """Runs ae's server until SIGTERM/SIGINT or until the parent process goes away, with the
    "listening" and "stopped" events (shared with pynetdicom-qr-scp.py)."""
    keep_awaited_responses()  # C-MOVE sub-operations make the server a requestor too
    server = ae.start_server((host, port), block=False, evt_handlers=handlers)
    host, port = server.server_address[:2]

    stop = threading.Event()
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, lambda *_: stop.set())
    parent = os.getppid()
    emit(event="listening", host=host, port=port, aeTitle=aet)
    while not stop.wait(0.5):
        if os.getppid() != parent:
            sys.stderr.write(f"{name}: parent process gone, stopping\n")
            break
    server.shutdown()
    emit(event="stopped")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
