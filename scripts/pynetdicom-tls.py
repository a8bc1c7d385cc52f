#!/usr/bin/env python3
"""pynetdicom over DICOM TLS (PS3.15 Annex B.9), for px's TLS tests.

  pynetdicom-tls.py scu HOST PORT AET --ca CA [--cert C --key K] [--server-hostname NAME]
      One C-ECHO over TLS; prints {"status": 0} or {"error": "..."} and exits 0 or 1.
  pynetdicom-tls.py scp PORT AET --cert C --key K [--ca CA --require-client-cert]
      A Verification SCP over TLS; prints {"event": "ready", "port": N}, then one {"event": "echo", ...}
      line per C-ECHO, until killed.
"""
import argparse
import json
import ssl
import sys
import threading

from pynetdicom import AE, evt
from pynetdicom.sop_class import Verification


def emit(obj):
    print(json.dumps(obj), flush=True)


def scu(args):
    context = ssl.create_default_context(ssl.Purpose.SERVER_AUTH, cafile=args.ca)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    if args.cert:
        context.load_cert_chain(args.cert, args.key)
    ae = AE(ae_title="PYTLSSCU")
    ae.add_requested_context(Verification)
    ae.acse_timeout = ae.network_timeout = ae.connection_timeout = 10
    try:
        assoc = ae.associate(args.host, args.port, ae_title=args.aet,
                             tls_args=(context, args.server_hostname or args.host))
    except (ssl.SSLError, OSError) as error:
        emit({"error": str(error)})
        return 1
    if not assoc.is_established:
        emit({"error": "association not established"})
        return 1
    status = assoc.send_c_echo()
    assoc.release()
    emit({"status": int(status.Status) if status else None})
    return 0 if status and status.Status == 0 else 1


def scp(args):
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    context.load_cert_chain(args.cert, args.key)
    if args.ca:
        context.load_verify_locations(cafile=args.ca)
    context.verify_mode = ssl.CERT_REQUIRED if args.require_client_cert else ssl.CERT_NONE

    def on_echo(event):
        emit({"event": "echo", "callingAETitle": event.assoc.requestor.ae_title.strip()})
        return 0x0000

    ae = AE(ae_title=args.aet)
    ae.add_supported_context(Verification)
    server = ae.start_server(("127.0.0.1", args.port), block=False, ssl_context=context,
                             evt_handlers=[(evt.EVT_C_ECHO, on_echo)])
    emit({"event": "ready", "port": server.server_address[1]})
    threading.Event().wait()


def main():
    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers(dest="mode", required=True)
    s = sub.add_parser("scu")
    s.add_argument("host")
    s.add_argument("port", type=int)
    s.add_argument("aet")
    s.add_argument("--ca", required=True)
    s.add_argument("--cert")
    s.add_argument("--key")
    s.add_argument("--server-hostname")
    p = sub.add_parser("scp")
    p.add_argument("port", type=int)
    p.add_argument("aet")
    p.add_argument("--cert", required=True)
    p.add_argument("--key", required=True)
    p.add_argument("--ca")
    p.add_argument("--require-client-cert", action="store_true")
    args = parser.parse_args()
    return scu(args) if args.mode == "scu" else scp(args)


if __name__ == "__main__":
    sys.exit(main())
