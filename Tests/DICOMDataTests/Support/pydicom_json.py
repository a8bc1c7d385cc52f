"""Print a DICOM file as pydicom's DICOM JSON (to_json_dict), or exit 3 when pydicom cannot read it.

Used by the px differential tests where DCMTK's dcm2json cannot convert a file.
"""
import json
import sys

import pydicom

try:
    ds = pydicom.dcmread(sys.argv[1], force=False)
    out = ds.to_json_dict(bulk_data_threshold=1 << 40)
except Exception as exc:  # any failure to read or convert is reported, not raised
    print(f"{type(exc).__name__}: {exc}", file=sys.stderr)
    sys.exit(3)
json.dump(out, sys.stdout, ensure_ascii=False)
