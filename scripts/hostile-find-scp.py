#!/usr/bin/env python3
"""A hostile C-FIND SCP on raw sockets: it answers one C-FIND-RQ with COUNT pending responses as fast
as the socket takes them, then runs a client command against itself and reports the client's peak
memory.

    hostile-find-scp.py COUNT [--ignore-cancel] [--sop-class UID] -- px-find HOSTILE@127.0.0.1:{port} ...

{port} in the command is replaced by the listening port. Prints one JSON line:
{"exitCode", "maxRSSKiB" (the child's peak resident set, the kernel's hiwater mark, as VmHWM in
/proc/PID/status), "sent" (pending responses sent), "cancelled" (a C-CANCEL-RQ arrived), "stdoutLines",
"lastLine"}. A C-CANCEL stops the flood with a final Cancel (0xFE00) response (PS3.7 §9.1.2.1.5);
with --ignore-cancel it goes on sending all COUNT (as an SCP that ignores C-CANCEL does) unless the
client aborts or closes ("serverError" then says so). --sop-class UID answers with that Affected SOP
Class UID instead of the request's. Bounded: it serves one association and stops by itself.
"""
import json
import os
import resource
import select
import socket
import struct
import subprocess
import sys
import threading

IMPLICIT = b"1.2.840.10008.1.2"


def pdu(kind, body):
    return struct.pack(">BBI", kind, 0, len(body)) + body


def element_implicit(group, elem, value):
    if len(value) % 2:
        value += b"\x00" if group == 0 or value[-1:] != b" " else b" "
    return struct.pack("<HHI", group, elem, len(value)) + value


def uid(text):
    raw = text.encode()
    return raw + (b"\x00" if len(raw) % 2 else b"")


def command(sop_class, message_id, status, has_data):
    body = (
        element_implicit(0, 0x0002, uid(sop_class))
        + element_implicit(0, 0x0100, struct.pack("<H", 0x8020))
        + element_implicit(0, 0x0120, struct.pack("<H", message_id))
        + element_implicit(0, 0x0800, struct.pack("<H", 0x0000 if has_data else 0x0101))
        + element_implicit(0, 0x0900, struct.pack("<H", status))
    )
    return element_implicit(0, 0x0000, struct.pack("<I", len(body))) + body


def pdata(context_id, control, data):
    item = struct.pack(">IBB", len(data) + 2, context_id, control) + data
    return pdu(0x04, item)


def read_exact(sock, n):
    out = b""
    while len(out) < n:
        chunk = sock.recv(n - len(out))
        if not chunk:
            raise EOFError("peer closed")
        out += chunk
    return out


def read_pdu(sock):
    head = read_exact(sock, 6)
    kind, _, length = struct.unpack(">BBI", head)
    if length > 1 << 20:
        raise ValueError("PDU too large")
    return kind, read_exact(sock, length)


def items(data, start):
    pos = start
    while pos + 4 <= len(data):
        kind, _, length = struct.unpack(">BBH", data[pos:pos + 4])
        yield kind, data[pos + 4:pos + 4 + length]
        pos += 4 + length


def pending_pdata(conn):
    """Whether the bytes queued unread on conn begin with a P-DATA-TF PDU (type 0x04)."""
    try:
        conn.setblocking(False)
        first = conn.recv(1, socket.MSG_PEEK)
    except OSError:
        return False
    return first == b"\x04"


def serve(server, count, report, ignore_cancel=False, answer_class=None):
    conn, _ = server.accept()
    # This side writes far faster than px-find reads: the whole flood, final response included, sits in the
    # two sockets' buffers long before px-find gets to it (15 s after the final response was written, 2.2 MB
    # were still queued here and 0.5 MB unread at px-find's end), and the wait for the A-RELEASE-RQ starts
    # then. On a loaded 2-core machine a debug px-find took over a minute to drain 20,000
    # matches, so a 60 s bound here cut it off mid-flood ("timed out"). The bound is the one main() puts on the
    # child (600 s): it only has to stop a px-find that never answers.
    conn.settimeout(600)
    sent, cancelled = 0, False
    try:
        kind, rq = read_pdu(conn)
        assert kind == 0x01, "expected A-ASSOCIATE-RQ"
        called, calling = rq[4:20], rq[20:36]
        contexts = []
        for kind, body in items(rq, 68):
            if kind == 0x20:
                cid = body[0]
                syntaxes = [sub for k, sub in items(body, 4) if k == 0x40]
                abstract = next((sub for k, sub in items(body, 4) if k == 0x30), b"")
                contexts.append((cid, abstract, syntaxes))
        cid, abstract, syntaxes = contexts[0]
        chosen = IMPLICIT if IMPLICIT in syntaxes else syntaxes[0]
        ac_items = b"\x10\x00" + struct.pack(">H", 21) + b"1.2.840.10008.3.1.1.1"
        ts_item = b"\x40\x00" + struct.pack(">H", len(chosen)) + chosen
        ac_items += b"\x21\x00" + struct.pack(">H", 4 + len(ts_item)) + bytes([cid, 0, 0, 0]) + ts_item
        user = b"\x51\x00\x00\x04" + struct.pack(">I", 1 << 20)
        user += b"\x52\x00" + struct.pack(">H", 8) + b"1.2.3.44"
        ac_items += b"\x50\x00" + struct.pack(">H", len(user)) + user
        conn.sendall(pdu(0x02, struct.pack(">HH", 1, 0) + called + calling + b"\x00" * 32 + ac_items))
        # The C-FIND-RQ: command and identifier, each up to its last fragment.
        message_id, done_command, done_data = 1, False, False
        while not (done_command and done_data):
            kind, body = read_pdu(conn)
            assert kind == 0x04, "expected P-DATA-TF"
            for length_at in [0]:
                pos = 0
                while pos < len(body):
                    length = struct.unpack(">I", body[pos:pos + 4])[0]
                    control, data = body[pos + 5], body[pos + 6:pos + 4 + length]
                    if control & 1:
                        at = data.find(b"\x00\x00\x10\x01")
                        if at >= 0:
                            message_id = struct.unpack("<H", data[at + 8:at + 10])[0]
                        done_command = done_command or bool(control & 2)
                    else:
                        done_data = done_data or bool(control & 2)
                    pos += 4 + length
        sop_class = answer_class or abstract.decode().rstrip("\x00")
        pending_command = pdata(cid, 0x03, command(sop_class, message_id, 0xFF00, True))
        batch = []
        for n in range(count):
            identifier = (
                element_implicit(0x0008, 0x0052, b"STUDY ")
                + element_implicit(0x0010, 0x0010, b"HOSTILE^FLOOD")
                + element_implicit(0x0020, 0x000D, uid("1.2.826.0.1.3680043.10.543.%012d" % n))
            )
            batch.append(pending_command + pdata(cid, 0x02, identifier))
            sent += 1
            if len(batch) == 256 or n == count - 1:
                conn.sendall(b"".join(batch))
                batch = []
                readable, _, _ = select.select([conn], [], [], 0)
                if readable:
                    cancelled = True  # a C-CANCEL-RQ (or anything: the client wants us to stop)
                    if not ignore_cancel:
                        break
        final = 0xFE00 if cancelled and not ignore_cancel else 0x0000
        conn.sendall(pdata(cid, 0x03, command(sop_class, message_id, final, False)))
        # Until the A-RELEASE-RQ (or the close): anything else is skipped.
        while True:
            kind, _ = read_pdu(conn)
            if kind == 0x05:
                conn.sendall(pdu(0x06, b"\x00" * 4))
                break
            if kind == 0x07:
                break
        report.update(sent=sent, cancelled=cancelled)
    except (EOFError, OSError, ValueError, AssertionError) as error:
        # px-find may abort while this side is blocked in sendall (its receive buffer already held the
        # matches it still wanted), so the send fails before the check after the batch sees the C-CANCEL.
        # What px sent before its abort is still queued here, reset or not: a P-DATA-TF first is the
        # C-CANCEL-RQ.
        cancelled = cancelled or pending_pdata(conn)
        report.update(serverError=str(error), sent=sent, cancelled=cancelled)
    finally:
        conn.close()


def main():
    count = int(sys.argv[1])
    own = sys.argv[2:sys.argv.index("--")]
    ignore_cancel = "--ignore-cancel" in own
    answer_class = own[own.index("--sop-class") + 1] if "--sop-class" in own else None
    client = sys.argv[sys.argv.index("--") + 1:]
    server = socket.socket()
    server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    server.settimeout(120)
    port = server.getsockname()[1]
    report = {}
    thread = threading.Thread(target=serve, args=(server, count, report, ignore_cancel, answer_class), daemon=True)
    thread.start()
    command_line = [part.replace("{port}", str(port)) for part in client]
    child = subprocess.Popen(command_line, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    lines, last = 0, ""
    for line in child.stdout:
        lines += 1
        last = line.decode(errors="replace").rstrip("\n")
    code = child.wait(timeout=600)
    thread.join(timeout=30)
    report.update(
        exitCode=code,
        maxRSSKiB=resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss,
        stdoutLines=lines,
        lastLine=last,
    )
    print(json.dumps(report))


if __name__ == "__main__":
    main()
