#!/usr/bin/env python3
"""bench-web-clients.py - the Python DICOMweb clients px-get is compared with, downloading studies by WADO-RS.

Usage (from the bench venv, scripts/setup-bench-env.sh):
  .bench-venv/bin/python scripts/bench-web-clients.py dicomtrolley|dicomweb-client URL OUTDIR STUDY_UID...

Each tool is used as its documentation shows, one WADO-RS request per study (as px-get makes for a
list of studies), every instance written to OUTDIR as a DICOM file:

  dicomtrolley     Trolley(WadoRS(session, URL, request_per_series=False)).download(StudyReferences, OUTDIR)
                   (its StorageDir layout: study/series/instance; dicomtrolley 4.1 downloads one object
                   after the other, whatever max_workers says)
  dicomweb-client  DICOMwebClient(URL).iter_study(uid), each data set saved as OUTDIR/<SOPInstanceUID>.dcm

Prints the number of instances written.
"""

import os
import sys


def dicomtrolley(url, out, studies):
    import requests
    from dicomtrolley.core import StudyReference
    from dicomtrolley.trolley import Trolley
    from dicomtrolley.wado_rs import WadoRS

    session = requests.Session()
    trolley = Trolley(downloader=WadoRS(session, url, request_per_series=False), searcher=None)
    trolley.download([StudyReference(study_uid=uid) for uid in studies], out)


def dicomweb_client(url, out, studies):
    from dicomweb_client.api import DICOMwebClient

    client = DICOMwebClient(url=url)
    for uid in studies:
        for ds in client.iter_study(study_instance_uid=uid):
            ds.save_as(os.path.join(out, ds.SOPInstanceUID + ".dcm"))


def main():
    tool, url, out, studies = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
    os.makedirs(out, exist_ok=True)
    {"dicomtrolley": dicomtrolley, "dicomweb-client": dicomweb_client}[tool](url, out, studies)
    print(sum(len(files) for _, _, files in os.walk(out)))


if __name__ == "__main__":
    main()
