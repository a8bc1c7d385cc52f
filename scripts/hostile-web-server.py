#!/usr/bin/env python3
"""A scripted hostile DICOMweb server for the tests of px's DICOMweb client (issue 24).

    hostile-web-server.py MODE [--interval S] [--rate BYTES_PER_S] [--cut N] [--count N] [--series N]

Every request is answered the way MODE says, whatever its path (QIDO-RS when it asks for JSON, WADO-RS
when it asks for multipart, STOW-RS for a POST):

    drip        the status line and headers at once, then the body one byte every --interval seconds
    drip-head   the status line and headers themselves one byte every --interval seconds
    endless     QIDO-RS: --series series of one study; WADO-RS: a multipart answer whose one part never
                ends (a DICOM header, then bytes at --rate bytes/s)
    truncated   QIDO-RS: the one instance the server holds, at any level; WADO-RS: that instance
                (a 512x512 16-bit CT, about 525 KB) in a well-delimited part cut at --cut bytes
    huge-qido   QIDO-RS: --count studies in one page, whatever limit and offset say
    stale       keeps each connection alive (answers as truncated does without --cut, with a length), and
                closes it unanswered when a second request comes on it: a server ending an idle kept-alive
                connection just as the client sends on it ({"event": "dropped"} when it does)

The instance is made with pydicom. On start it prints {"event": "listening", "port": N} on stdout, then one
{"event": "request", "method", "path"} line per request.
"""

import argparse
import io
import json
import socket
import sys
import threading
import time

from pydicom.dataset import Dataset, FileMetaDataset
from pydicom.uid import ExplicitVRLittleEndian

STUDY = "1.2.826.0.1.3680043.10.1024.1"
SERIES = "1.2.826.0.1.3680043.10.1024.1.1"
INSTANCE = "1.2.826.0.1.3680043.10.1024.1.1.1"
CT = "1.2.840.10008.5.1.4.1.1.2"
BOUNDARY = "pxhostile"


def instance(sop_instance=INSTANCE, series=SERIES, pixels=True):
    """A Part 10 CT instance; with pixels a 512x512 16-bit image (about 525 KB in all)."""
    meta = FileMetaDataset()
    meta.MediaStorageSOPClassUID = CT
    meta.MediaStorageSOPInstanceUID = sop_instance
    meta.TransferSyntaxUID = ExplicitVRLittleEndian
    ds = Dataset()
    ds.file_meta = meta
    ds.SOPClassUID = CT
    ds.SOPInstanceUID = sop_instance
    ds.StudyInstanceUID = STUDY
    ds.SeriesInstanceUID = series
    ds.PatientID = "HOSTILE"
    ds.PatientName = "Hostile^Web"
    ds.StudyDate = "20240101"
    ds.Modality = "CT"
    ds.InstanceNumber = 1
    if pixels:
        ds.Rows = 512
        ds.Columns = 512
        ds.BitsAllocated = 16
        ds.BitsStored = 16
        ds.HighBit = 15
        ds.PixelRepresentation = 0
        ds.SamplesPerPixel = 1
        ds.PhotometricInterpretation = "MONOCHROME2"
        ds.PixelData = bytes(512 * 512 * 2)
    out = io.BytesIO()
    ds.save_as(out, enforce_file_format=True)
    return out.getvalue()


def match(study=STUDY, series=SERIES, sop=INSTANCE, instances=1):
    """One QIDO-RS match (PS3.18 §F.2) at any level."""
    return {
        "00080020": {"vr": "DA", "Value": ["20240101"]},
        "00080016": {"vr": "UI", "Value": [CT]},
        "00080018": {"vr": "UI", "Value": [sop]},
        "00080060": {"vr": "CS", "Value": ["CT"]},
        "00080061": {"vr": "CS", "Value": ["CT"]},
        "00100010": {"vr": "PN", "Value": [{"Alphabetic": "Hostile^Web"}]},
        "00100020": {"vr": "LO", "Value": ["HOSTILE"]},
        "0020000D": {"vr": "UI", "Value": [study]},
        "0020000E": {"vr": "UI", "Value": [series]},
        "00200011": {"vr": "IS", "Value": [1]},
        "00201206": {"vr": "IS", "Value": [1]},
        "00201208": {"vr": "IS", "Value": [instances]},
        "00201209": {"vr": "IS", "Value": [instances]},
    }


def read_request(conn):
    """The request line, headers and body (Content-Length or chunked); None when the client went away."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = conn.recv(65536)
        if not chunk:
            return None
        data += chunk
    head, rest = data.split(b"\r\n\r\n", 1)
    lines = head.decode("latin-1").split("\r\n")
    method, path, _ = lines[0].split(" ", 2)
    headers = {}
    for line in lines[1:]:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    if "content-length" in headers:
        need = int(headers["content-length"])
        while len(rest) < need:
            chunk = conn.recv(65536)
            if not chunk:
                break
            rest += chunk
    elif headers.get("transfer-encoding", "").lower() == "chunked":
        while not rest.endswith(b"0\r\n\r\n"):
            chunk = conn.recv(65536)
            if not chunk:
                break
            rest += chunk
    return method, path, headers


def head(status, content_type, extra=()):
    lines = [f"HTTP/1.1 {status}", f"Content-Type: {content_type}", "Connection: close"] + list(extra)
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


MULTIPART = f'multipart/related; type="application/dicom"; boundary={BOUNDARY}'
JSON = "application/dicom+json"


def drip(conn, data, interval):
    for i in range(len(data)):
        conn.sendall(data[i : i + 1])
        time.sleep(interval)


def serve_stale(conn):
    """Mode stale: one answer per connection, kept alive; the next request on it is dropped unanswered."""
    with conn:
        answered = False
        while True:
            request = read_request(conn)
            if request is None:
                return
            method, path, headers = request
            print(json.dumps({"event": "request", "method": method, "path": path}), flush=True)
            if answered:
                print(json.dumps({"event": "dropped", "path": path}), flush=True)
                return
            if method == "POST" or "json" in headers.get("accept", ""):
                content_type, body = JSON, json.dumps([match()]).encode()
            else:
                part_head = f"--{BOUNDARY}\r\nContent-Type: application/dicom\r\n\r\n".encode()
                content_type, body = MULTIPART, part_head + instance() + f"\r\n--{BOUNDARY}--\r\n".encode()
            lines = ["HTTP/1.1 200 OK", f"Content-Type: {content_type}", f"Content-Length: {len(body)}"]
            conn.sendall(("\r\n".join(lines) + "\r\n\r\n").encode() + body)
            answered = True


def serve(conn, args):
    if args.mode == "stale":
        serve_stale(conn)
        return
    with conn:
        request = read_request(conn)
        if request is None:
            return
        method, path, headers = request
        print(json.dumps({"event": "request", "method": method, "path": path}), flush=True)
        wants_json = method == "POST" or "json" in headers.get("accept", "")
        content_type = JSON if wants_json else MULTIPART
        part_head = f"--{BOUNDARY}\r\nContent-Type: application/dicom\r\n\r\n".encode()
        mode = args.mode
        if mode in ("drip", "drip-head"):
            body = b"[" + b" " * 100000 if wants_json else part_head + instance()
            if mode == "drip":
                conn.sendall(head("200 OK", content_type))
                drip(conn, body, args.interval)
            else:
                drip(conn, head("200 OK", content_type) + body, args.interval)
        elif mode == "endless":
            if wants_json:
                series = [match(series=f"{SERIES}.{i}") for i in range(args.series)]
                conn.sendall(head("200 OK", JSON) + json.dumps(series).encode())
                return
            conn.sendall(head("200 OK", MULTIPART) + part_head + instance(pixels=False))
            block = bytes(64 * 1024)
            start = time.monotonic()
            sent = 0
            while True:
                conn.sendall(block)
                sent += len(block)
                ahead = sent / args.rate - (time.monotonic() - start)
                if ahead > 0:
                    time.sleep(ahead)
        elif mode == "truncated":
            if wants_json:
                conn.sendall(head("200 OK", JSON) + json.dumps([match()]).encode())
                return
            whole = instance()
            conn.sendall(
                head("200 OK", MULTIPART) + part_head + whole[: args.cut] + f"\r\n--{BOUNDARY}--\r\n".encode()
            )
        elif mode == "huge-qido":
            conn.sendall(head("200 OK", JSON) + b"[")
            batch = []
            for i in range(args.count):
                text = json.dumps(match(study=f"{STUDY}.{i}", series=f"{SERIES}.{i}", sop=f"{INSTANCE}.{i}"))
                batch.append(("," if i else "") + text)
                if len(batch) == 1000:
                    conn.sendall("".join(batch).encode())
                    batch = []
            conn.sendall(("".join(batch) + "]").encode())


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("mode", choices=["drip", "drip-head", "endless", "truncated", "huge-qido", "stale"])
    parser.add_argument("--interval", type=float, default=1.0)
    parser.add_argument("--rate", type=float, default=8 * 1024 * 1024)
    parser.add_argument("--cut", type=int, default=5000)
    parser.add_argument("--count", type=int, default=180000)
    parser.add_argument("--series", type=int, default=8)
    args = parser.parse_args()
    server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    server.bind(("127.0.0.1", 0))
    server.listen(64)
    print(json.dumps({"event": "listening", "port": server.getsockname()[1]}), flush=True)

    def handle(conn):
        try:
            serve(conn, args)
        except OSError:
            pass  # the client closed the connection: what px is expected to do

    while True:
        conn, _ = server.accept()
        threading.Thread(target=handle, args=(conn,), daemon=True).start()


if __name__ == "__main__":
    sys.exit(main())
