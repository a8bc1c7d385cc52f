#!/usr/bin/env python3
"""pynetdicom-worklist-scp.py - a pynetdicom Modality Worklist SCP over a folder of worklist files, for the
tests of px-find --model worklist.

Usage:
  .venv/bin/python scripts/pynetdicom-worklist-scp.py FOLDER [--host 127.0.0.1] [--port 0] [--aet PYWL]

Answers C-FIND on the Modality Worklist Information Model - FIND (1.2.840.10008.5.1.4.31, PS3.4 Annex K) from
every *.wl file under FOLDER (DICOM files, as DCMTK's wlmscpfs reads them; read once at start). Matching,
after PS3.4 §C.2.2.2: an empty key is a return key; a key with a value matches a value of the entry
(single value, `*`/`?` wildcards, `A-B` date and time ranges); a sequence key with an item matches when an
item of the entry's sequence matches every key of the request's item (sequence matching, §C.2.2.2.6). A
response holds the requested keys only, with the entry's values (an empty value when the entry has none),
SpecificCharacterSet from the entry.

Stdout carries one JSON object per line, flushed at once:
  {"event": "listening", "host": ..., "port": N, "aeTitle": ...}   when ready
  {"event": "worklist", "matches": N}                               per C-FIND
  {"event": "stopped"}                                              on exit
Runs until SIGTERM or SIGINT, or until the process that started it goes away.
Needs pydicom 3 and pynetdicom 3 (scripts/setup-test-env.sh installs them into .venv).
"""

import argparse
import fnmatch
import importlib.util
import os
import sys

try:
    from pydicom import dcmread
    from pydicom.dataset import Dataset
    from pynetdicom import AE, evt
    from pynetdicom.sop_class import ModalityWorklistInformationFind
except ImportError:  # pragma: no cover - environment problem
    sys.stderr.write("pynetdicom-worklist-scp.py: pydicom/pynetdicom not found; run scripts/setup-test-env.sh "
                     "and use .venv/bin/python\n")
    sys.exit(1)

# emit() and serve_until_stopped() are pynetdicom-scp.py's (one definition of the peers' event lines).
_spec = importlib.util.spec_from_file_location(
    "pynetdicom_scp", os.path.join(os.path.dirname(os.path.abspath(__file__)), "pynetdicom-scp.py"))
_scp = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_scp)
emit = _scp.emit


def load(folder):
    entries = []
    for directory, _, names in os.walk(folder):
        for name in sorted(names):
            if name.endswith(".wl"):
                entries.append(dcmread(os.path.join(directory, name)))
    return entries


def texts(element):
    if element is None or element.value is None or element.value == "":
        return []
    value = element.value
    if isinstance(value, (list, tuple)) or type(value).__name__ == "MultiValue":
        return [str(v) for v in value]
    return [str(value)]


def value_matches(key, element):
    """Single value, wildcard or range matching of one key with a value (PS3.4 §C.2.2.2.2-5)."""
    wanted = str(key.value)
    have = texts(element)
    if key.VR in ("DA", "TM", "DT") and "-" in wanted:
        low, _, high = wanted.partition("-")
        return any((not low or v >= low) and (not high or v <= high) for v in have)
    if "\\" in wanted or isinstance(key.value, (list, tuple)) or type(key.value).__name__ == "MultiValue":
        options = texts(key)
        return any(v in options for v in have)
    if "*" in wanted or "?" in wanted:
        return any(fnmatch.fnmatchcase(v, wanted) for v in have)
    return wanted in have


def matches(request, entry):
    for key in request:
        if key.keyword in ("SpecificCharacterSet", "QueryRetrieveLevel"):
            continue
        if key.VR == "SQ":
            if not key.value:
                continue
            wanted = key.value[0]
            items = entry[key.tag].value if key.tag in entry else []
            if not any(matches(wanted, item) for item in items):
                return False
        elif key.value not in (None, ""):
            if not value_matches(key, entry.get(key.tag)):
                return False
    return True


def response(request, entry):
    """The requested keys with the entry's values (PS3.4 §C.4.1.1.3.2: only the keys asked)."""
    out = Dataset()
    for key in request:
        if key.VR == "SQ":
            wanted = key.value[0] if key.value else Dataset()
            items = entry[key.tag].value if key.tag in entry else []
            chosen = [item for item in items if matches(wanted, item)] if key.value else list(items)
            out.add_new(key.tag, "SQ", [response(wanted, item) if len(wanted) else item for item in chosen])
        elif key.tag in entry:
            out.add(entry[key.tag])
        else:
            out.add_new(key.tag, key.VR, None)
    if "SpecificCharacterSet" in entry and "SpecificCharacterSet" not in out:
        out.SpecificCharacterSet = entry.SpecificCharacterSet
    return out


def handle_find(event, entries):
    request = event.identifier
    found = [entry for entry in entries if matches(request, entry)]
    emit(event="worklist", matches=len(found))
    for entry in found:
        if event.is_cancelled:
            yield 0xFE00, None
            return
        yield 0xFF00, response(request, entry)


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("folder")
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--aet", default="PYWL")
    args = ap.parse_args(argv)
    entries = load(args.folder)

    ae = AE(ae_title=args.aet)
    ae.add_supported_context(ModalityWorklistInformationFind)
    handlers = [(evt.EVT_C_FIND, handle_find, [entries])]
    return _scp.serve_until_stopped(ae, args.host, args.port, args.aet, handlers, "pynetdicom-worklist-scp.py")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
