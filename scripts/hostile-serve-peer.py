#!/usr/bin/env python3
"""Scripted hostile Query/Retrieve peers for px-serve's robustness tests (raw sockets, no DICOM library; the
association and PDU helpers are scripts/hostile-peer.py's).

    hostile-serve-peer.py find-no-read HOST PORT --aet AET --seconds T
        Associates (Study Root C-FIND, a tiny receive buffer) and sends C-FIND-RQs matching every study
        without ever reading the responses. Prints {"closedAfter": <seconds from the association until the
        server closed, or null>, "stalledAfter": <seconds until our own sends blocked>, "requests": N}.

Every mode prints one JSON line on stdout.
"""

import argparse
import importlib.util
import json
import os
import select
import socket
import struct
import time

_spec = importlib.util.spec_from_file_location(
    "hostile_peer", os.path.join(os.path.dirname(os.path.abspath(__file__)), "hostile-peer.py"))
hostile = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(hostile)

STUDY_ROOT_FIND = "1.2.840.10008.5.1.4.1.2.2.1"


def find_command(message_id):
    return hostile.command([
        (0x0002, hostile.uid(STUDY_ROOT_FIND)),
        (0x0100, struct.pack("<H", 0x0020)),
        (0x0110, struct.pack("<H", message_id)),
        (0x0700, struct.pack("<H", 0)),
        (0x0800, struct.pack("<H", 0x0000)),
    ])


def study_identifier():
    # Implicit VR Little Endian: Query/Retrieve Level STUDY, every study, a few keys to return (Additional
    # Patient History among them: a long text the tests put in every study, so the answers are large).
    return (
        hostile.implicit(0x0008, 0x0020, b"")
        + hostile.implicit(0x0008, 0x0052, hostile.pad("STUDY"))
        + hostile.implicit(0x0010, 0x0010, b"")
        + hostile.implicit(0x0010, 0x0020, b"")
        + hostile.implicit(0x0010, 0x21B0, b"")
        + hostile.implicit(0x0020, 0x000D, b"")
    )


def associate(host, port, aet, contexts, rcvbuf):
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
    sock.settimeout(60)
    sock.connect((host, port))
    sock.sendall(hostile.associate_rq(contexts, called=aet))
    kind, _ = hostile.recv_pdu(sock)
    if kind != 0x02:
        raise ConnectionError("association not accepted (PDU type %d)" % kind)
    return sock


def find_no_read(args):
    sock = associate(args.host, args.port, args.aet, [(STUDY_ROOT_FIND, [hostile.IMPLICIT])], 4096)
    start = time.monotonic()
    identifier = study_identifier()
    requests = 0
    stalled = None
    closed = None
    sock.setblocking(False)
    pending = b""
    while time.monotonic() - start < args.seconds:
        try:
            if stalled is None:
                if not pending:
                    requests += 1
                    pending = hostile.pdata(1, 0x03, find_command(requests & 0xFFFF)) + hostile.pdata(
                        1, 0x02, identifier)
                sent = sock.send(pending)
                pending = pending[sent:]
            else:
                # Never read: the server's close shows as a socket error or a failed send (once it reset).
                select.select([], [], [sock], 0.05)
                if sock.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR):
                    closed = time.monotonic() - start
                    break
                try:
                    if pending:
                        pending = pending[sock.send(pending):]
                    if sock.recv(1, socket.MSG_PEEK) == b"":
                        closed = time.monotonic() - start
                        break
                except BlockingIOError:
                    pass
        except BlockingIOError:
            if stalled is None:
                stalled = time.monotonic() - start
            time.sleep(0.05)
        except OSError:
            closed = time.monotonic() - start
            break
    print(json.dumps({"closedAfter": closed, "stalledAfter": stalled, "requests": requests}))


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="mode", required=True)
    p = sub.add_parser("find-no-read")
    p.add_argument("host")
    p.add_argument("port", type=int)
    p.add_argument("--aet", default="PXSERVE")
    p.add_argument("--seconds", type=float, default=30)
    args = parser.parse_args()
    {"find-no-read": find_no_read}[args.mode](args)


if __name__ == "__main__":
    main()
