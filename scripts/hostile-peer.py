#!/usr/bin/env python3
"""Scripted hostile DICOM peers for px-listen's robustness tests (raw sockets, no DICOM library).

    hostile-peer.py bomb-file OUT [--inflated-mib N]
        Writes a Part 10 file in Deflated Explicit VR Little Endian whose data set inflates to N MiB
        (a private OB element of zeros before Pixel Data). Prints {"path", "bytes", "inflated"}.
        With --plain, the same file uncompressed (Explicit VR Little Endian): a long element before Pixel Data.
    hostile-peer.py measure CMD [ARGS...]
        Runs CMD and prints {"exitCode", "maxRSSKiB", "stdout"} (its peak resident memory).
    hostile-peer.py store HOST PORT FILE
        Associates and sends FILE's data set as one C-STORE in the file's transfer syntax, as it is on
        disk. Prints {"status": <C-STORE-RSP status>} or {"status": null, "error": ...}.
    hostile-peer.py trickle HOST PORT --interval S --seconds T
        Associates, starts a C-STORE and sends one byte of its data set every S seconds for up to T
        seconds. Prints {"closedAfter": <seconds until the server closed, or null>}.
    hostile-peer.py no-read HOST PORT --seconds T
        Associates with a tiny receive buffer and sends C-ECHO-RQs without ever reading the responses.
        Prints {"closedAfter": <seconds until the server closed, or null>}.
    hostile-peer.py echo-loop HOST PORT --seconds T
        Associates and sends valid C-ECHO-RQs one after another, reading each response, for up to T seconds.
        Prints {"closedAfter": <seconds until the server ended the association, or null>, "echoes": N,
        "abortSource": <source of the server's A-ABORT (2: service provider), or null>}.
    hostile-peer.py pre-association HOST PORT --connections N --bytes B --seconds T
        Opens N connections, each sending the first B bytes of a ~1 MB A-ASSOCIATE-RQ and nothing more;
        holds them for T seconds. Prints {"opened", "closedByServer"}.

Every mode prints one JSON line on stdout.
"""

import argparse
import json
import select
import socket
import struct
import sys
import time
import zlib

CT = "1.2.840.10008.5.1.4.1.1.2"
VERIFICATION = "1.2.840.10008.1.1"
IMPLICIT = "1.2.840.10008.1.2"
EXPLICIT = "1.2.840.10008.1.2.1"
DEFLATED = "1.2.840.10008.1.2.1.99"
APP_CONTEXT = "1.2.840.10008.3.1.1.1"


def uid(text):
    b = text.encode()
    return b + (b"\0" if len(b) % 2 else b"")


def pad(text, char=b" "):
    b = text.encode()
    return b + (char if len(b) % 2 else b"")


def explicit(group, element, vr, value):
    if vr in (b"OB", b"OW", b"SQ", b"UN", b"UT", b"OF"):
        return struct.pack("<HH2sHI", group, element, vr, 0, len(value)) + value
    return struct.pack("<HH2sH", group, element, vr, len(value)) + value


def implicit(group, element, value):
    return struct.pack("<HHI", group, element, len(value)) + value


def meta(sop_class, sop_instance, ts):
    body = (
        explicit(0x0002, 0x0001, b"OB", b"\0\1")
        + explicit(0x0002, 0x0002, b"UI", uid(sop_class))
        + explicit(0x0002, 0x0003, b"UI", uid(sop_instance))
        + explicit(0x0002, 0x0010, b"UI", uid(ts))
        + explicit(0x0002, 0x0012, b"UI", uid("1.2.3.4"))
    )
    return b"\0" * 128 + b"DICM" + explicit(0x0002, 0x0000, b"UL", struct.pack("<I", len(body))) + body


def bomb_file(args):
    sop = "1.2.826.0.1.3680043.8.498.%d" % int(time.time() * 1000)
    head = (
        explicit(0x0008, 0x0016, b"UI", uid(CT))
        + explicit(0x0008, 0x0018, b"UI", uid(sop))
        + explicit(0x0010, 0x0010, b"PN", pad("BOMB^DEFLATE"))
        + explicit(0x0010, 0x0020, b"LO", pad("BOMB"))
        + explicit(0x0020, 0x000D, b"UI", uid(sop + ".1"))
        + explicit(0x0020, 0x000E, b"UI", uid(sop + ".2"))
        + explicit(0x0029, 0x0010, b"LO", pad("PX BOMB"))
    )
    size = args.inflated_mib << 20
    if args.plain:
        with open(args.out, "wb") as f:
            f.write(meta(CT, sop, EXPLICIT) + head + struct.pack("<HH2sHI", 0x0029, 0x1010, b"OB", 0, size))
            zeros = b"\0" * (1 << 20)
            for _ in range(args.inflated_mib):
                f.write(zeros)
            f.write(explicit(0x7FE0, 0x0010, b"OW", b"\0" * 64))
            written = f.tell()
        print(json.dumps({"path": args.out, "sopInstanceUID": sop, "bytes": written, "inflated": size}))
        return
    compressor = zlib.compressobj(9, zlib.DEFLATED, -15)
    with open(args.out, "wb") as f:
        f.write(meta(CT, sop, DEFLATED))
        f.write(compressor.compress(head + struct.pack("<HH2sHI", 0x0029, 0x1010, b"OB", 0, size)))
        zeros = b"\0" * (1 << 20)
        for _ in range(args.inflated_mib):
            f.write(compressor.compress(zeros))
        f.write(compressor.compress(explicit(0x7FE0, 0x0010, b"OW", b"\0" * 64)))
        f.write(compressor.flush())
        written = f.tell()
    print(json.dumps({"path": args.out, "sopInstanceUID": sop, "bytes": written, "inflated": size}))


def associate_rq(contexts, called="PXLISTEN", calling="HOSTILE", max_pdu=16384, extra_user=b""):
    items = struct.pack(">BBH", 0x10, 0, len(APP_CONTEXT)) + APP_CONTEXT.encode()
    for i, (abstract, syntaxes) in enumerate(contexts):
        sub = struct.pack(">BBH", 0x30, 0, len(abstract)) + abstract.encode()
        for ts in syntaxes:
            sub += struct.pack(">BBH", 0x40, 0, len(ts)) + ts.encode()
        items += struct.pack(">BBHBBBB", 0x20, 0, len(sub) + 4, 2 * i + 1, 0, 0, 0) + sub
    user = struct.pack(">BBHI", 0x51, 0, 4, max_pdu)
    user += struct.pack(">BBH", 0x52, 0, 7) + b"1.2.3.4"
    user += extra_user
    items += struct.pack(">BBH", 0x50, 0, len(user)) + user
    body = struct.pack(">HH16s16s32s", 1, 0, called.ljust(16).encode(), calling.ljust(16).encode(), b"\0" * 32) + items
    return struct.pack(">BBI", 0x01, 0, len(body)) + body


def recv_exact(sock, n):
    data = b""
    while len(data) < n:
        chunk = sock.recv(n - len(data))
        if not chunk:
            raise ConnectionError("closed by the server")
        data += chunk
    return data


def recv_pdu(sock):
    header = recv_exact(sock, 6)
    kind, length = header[0], struct.unpack(">I", header[2:6])[0]
    return kind, recv_exact(sock, length)


def associate(host, port, contexts, rcvbuf=None):
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    if rcvbuf:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
    sock.settimeout(60)
    sock.connect((host, port))
    sock.sendall(associate_rq(contexts))
    kind, body = recv_pdu(sock)
    if kind != 0x02:
        raise ConnectionError("association not accepted (PDU type %d)" % kind)
    return sock


def pdata(context_id, control, value):
    pdv = struct.pack(">IBB", len(value) + 2, context_id, control) + value
    return struct.pack(">BBI", 0x04, 0, len(pdv)) + pdv


def command(fields):
    body = b"".join(implicit(0x0000, e, v) for e, v in fields)
    return implicit(0x0000, 0x0000, struct.pack("<I", len(body))) + body


def store_command(sop_class, sop_instance, message_id=1):
    return command([
        (0x0002, uid(sop_class)),
        (0x0100, struct.pack("<H", 0x0001)),
        (0x0110, struct.pack("<H", message_id)),
        (0x0700, struct.pack("<H", 0)),
        (0x0800, struct.pack("<H", 0x0000)),
        (0x1000, uid(sop_instance)),
    ])


def echo_command(message_id):
    return command([
        (0x0002, uid(VERIFICATION)),
        (0x0100, struct.pack("<H", 0x0030)),
        (0x0110, struct.pack("<H", message_id)),
        (0x0800, struct.pack("<H", 0x0101)),
    ])


def response_status(sock):
    """Reads P-DATA-TF PDUs until a complete command; returns its Status (0000,0900)."""
    data = b""
    while True:
        kind, body = recv_pdu(sock)
        if kind != 0x04:
            raise ConnectionError("PDU type %d instead of a response" % kind)
        offset = 0
        last = False
        while offset < len(body):
            length = struct.unpack(">I", body[offset:offset + 4])[0]
            control = body[offset + 5]
            data += body[offset + 6:offset + 4 + length]
            last = last or (control & 0x03) == 0x03
            offset += 4 + length
        if last:
            break
    offset = 0
    while offset < len(data):
        group, element, length = struct.unpack("<HHI", data[offset:offset + 8])
        if (group, element) == (0x0000, 0x0900):
            return struct.unpack("<H", data[offset + 8:offset + 10])[0]
        offset += 8 + length
    return None


def read_file(path):
    with open(path, "rb") as f:
        raw = f.read()
    offset = 132
    values = {}
    while offset < len(raw) and raw[offset:offset + 2] == b"\x02\x00":
        element = struct.unpack("<H", raw[offset + 2:offset + 4])[0]
        vr = raw[offset + 4:offset + 6]
        if vr in (b"OB", b"OW", b"SQ", b"UN", b"UT"):
            length = struct.unpack("<I", raw[offset + 8:offset + 12])[0]
            start = offset + 12
        else:
            length = struct.unpack("<H", raw[offset + 6:offset + 8])[0]
            start = offset + 8
        values[element] = raw[start:start + length].rstrip(b"\0 ").decode("latin-1")
        offset = start + length
    return values[0x0002], values[0x0003], values[0x0010], raw[offset:]


def store(args):
    sop_class, sop_instance, ts, dataset = read_file(args.file)
    try:
        sock = associate(args.host, args.port, [(sop_class, [ts])])
        sock.sendall(pdata(1, 0x03, store_command(sop_class, sop_instance)))
        chunk = 16000
        for offset in range(0, len(dataset), chunk):
            last = offset + chunk >= len(dataset)
            sock.sendall(pdata(1, 0x02 if last else 0x00, dataset[offset:offset + chunk]))
        status = response_status(sock)
        sock.sendall(struct.pack(">BBI", 0x05, 0, 4) + b"\0\0\0\0")
        recv_pdu(sock)  # A-RELEASE-RP
        sock.close()
        print(json.dumps({"status": status}))
    except (OSError, ConnectionError) as error:
        print(json.dumps({"status": None, "error": str(error)}))


def wait_closed(sock, start, seconds, send=None):
    """Until the server closes (EOF or reset) or `seconds` pass; `send` is called when writable."""
    sock.setblocking(False)
    while time.monotonic() - start < seconds:
        readable, _, _ = select.select([sock], [], [], 0.05)
        if readable:
            try:
                if not sock.recv(65536, socket.MSG_PEEK):
                    return time.monotonic() - start
            except OSError:
                return time.monotonic() - start
        if send is not None:
            try:
                if not send():
                    return time.monotonic() - start
            except BlockingIOError:
                pass
            except OSError:
                return time.monotonic() - start
    return None


def trickle(args):
    sock = associate(args.host, args.port, [(CT, [EXPLICIT])])
    sock.sendall(pdata(1, 0x03, store_command(CT, "1.2.3.999")))
    start = time.monotonic()
    sock.setblocking(False)
    next_byte = [start]

    def send():
        now = time.monotonic()
        if now >= next_byte[0]:
            next_byte[0] = now + args.interval
            sock.send(pdata(1, 0x00, b"\x08"))
        return True

    print(json.dumps({"closedAfter": wait_closed(sock, start, args.seconds, send)}))


def echo_loop(args):
    sock = associate(args.host, args.port, [(VERIFICATION, [IMPLICIT])])
    start = time.monotonic()
    echoes = 0
    closed = None
    source = None
    while time.monotonic() - start < args.seconds:
        try:
            sock.sendall(pdata(1, 0x03, echo_command((echoes + 1) & 0xFFFF)))
            kind, body = recv_pdu(sock)
        except OSError:
            closed = time.monotonic() - start
            break
        if kind == 0x07:  # A-ABORT: reserved, reserved, source, reason (PS3.8 §9.3.8)
            source = body[2] if len(body) >= 4 else None
            closed = time.monotonic() - start
            break
        if kind != 0x04:
            closed = time.monotonic() - start
            break
        echoes += 1
    print(json.dumps({"closedAfter": closed, "echoes": echoes, "abortSource": source}))


def no_read(args):
    sock = associate(args.host, args.port, [(VERIFICATION, [IMPLICIT])], rcvbuf=4096)
    start = time.monotonic()
    counter = [0]
    sent_all = [None]

    def send():
        # Send echo requests until our send buffer is full too, then only watch for the close.
        if sent_all[0] is None:
            counter[0] += 1
            sock.send(pdata(1, 0x03, echo_command(counter[0] & 0xFFFF)))
        return True

    def watch():
        try:
            return send()
        except BlockingIOError:
            sent_all[0] = time.monotonic()
            return True

    sock.setblocking(False)
    # Never read: closure is seen as a failed send (EPIPE/ECONNRESET) or, once the flood stops, as EOF/RST
    # through MSG_PEEK, which reads nothing.
    closed = None
    while time.monotonic() - start < args.seconds:
        try:
            if sent_all[0] is None:
                watch()
            else:
                # Probe with a tiny send: fails once the server has closed.
                _, writable, errored = select.select([], [sock], [sock], 0.05)
                err = sock.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
                if err:
                    closed = time.monotonic() - start
                    break
                try:
                    sock.send(pdata(1, 0x03, echo_command(1)))
                except BlockingIOError:
                    time.sleep(0.05)
        except OSError:
            closed = time.monotonic() - start
            break
    stalled = None if sent_all[0] is None else sent_all[0] - start
    print(json.dumps({"closedAfter": closed, "stalledAfter": stalled, "requests": counter[0]}))


def pre_association(args):
    request = associate_rq([(CT, [EXPLICIT])], extra_user=struct.pack(">BBH", 0x55, 0, 0))
    # Grow the request to just under 1 MiB (what a 1 MiB PDU cap would buffer) with user-information
    # sub-items of an unknown type, which the server must read before it can negotiate.
    body = request[6:]
    while len(body) < 1000000 - 0x10003:
        body += struct.pack(">BBH", 0x59, 0, 0xFFFF) + b"\0" * 0xFFFF
    request = struct.pack(">BBI", 0x01, 0, len(body)) + body
    sockets = []
    for _ in range(args.connections):
        try:
            sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            sock.settimeout(10)
            sock.connect((args.host, args.port))
            sock.setblocking(False)
            sockets.append(sock)
        except OSError:
            break
    for sock in sockets:
        try:
            sock.send(request[:args.bytes])
        except OSError:
            pass
    end = time.monotonic() + args.seconds
    closed = set()
    while time.monotonic() < end and len(closed) < len(sockets):
        open_ones = [s for s in sockets if s.fileno() not in closed]
        readable, _, _ = select.select(open_ones, [], [], 0.1)
        for s in readable:
            try:
                if not s.recv(65536):
                    closed.add(s.fileno())
            except OSError:
                closed.add(s.fileno())
    print(json.dumps({"opened": len(sockets), "closedByServer": len(closed)}))
    sys.stdout.flush()


def measure(args):
    import resource
    import subprocess

    run = subprocess.run(args.command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    print(json.dumps({"exitCode": run.returncode, "maxRSSKiB": peak, "stdout": run.stdout.decode(errors="replace")}))


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="mode", required=True)
    p = sub.add_parser("bomb-file")
    p.add_argument("out")
    p.add_argument("--inflated-mib", type=int, default=1024)
    p.add_argument("--plain", action="store_true")
    p = sub.add_parser("measure")
    p.add_argument("command", nargs=argparse.REMAINDER)
    p = sub.add_parser("store")
    p.add_argument("host")
    p.add_argument("port", type=int)
    p.add_argument("file")
    p = sub.add_parser("trickle")
    p.add_argument("host")
    p.add_argument("port", type=int)
    p.add_argument("--interval", type=float, default=1.0)
    p.add_argument("--seconds", type=float, default=30)
    p = sub.add_parser("no-read")
    p.add_argument("host")
    p.add_argument("port", type=int)
    p.add_argument("--seconds", type=float, default=30)
    p = sub.add_parser("echo-loop")
    p.add_argument("host")
    p.add_argument("port", type=int)
    p.add_argument("--seconds", type=float, default=30)
    p = sub.add_parser("pre-association")
    p.add_argument("host")
    p.add_argument("port", type=int)
    p.add_argument("--connections", type=int, default=100)
    p.add_argument("--bytes", type=int, default=1000000)
    p.add_argument("--seconds", type=float, default=10)
    args = parser.parse_args()
    {"bomb-file": bomb_file, "measure": measure, "store": store, "trickle": trickle, "no-read": no_read, "echo-loop": echo_loop, "pre-association": pre_association}[
        args.mode
    ](args)


if __name__ == "__main__":
    main()
