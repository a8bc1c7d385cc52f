// sync-to-zip PLACE ZIPDIR [PatientID]: one zip per study in ZIPDIR for every study of PLACE (of one
// patient) that is not there yet, as `px-sync PLACE zip:ZIPDIR --PatientID ID` does.
//
//     sync-to-zip ORTHANC@127.0.0.1:4242 /data/zips P1
import PX

let arguments = Array(CommandLine.arguments.dropFirst())
guard arguments.count >= 2 else { fatalError("usage: sync-to-zip PLACE ZIPDIR [PatientID]") }
let keys = arguments.count > 2 ? ["PatientID": arguments[2]] : [:]

// One expression: the run's events, as px-sync prints them (one NDJSON line each), the summary last.
for try await event in PX.sync(
    from: try await PX.place(arguments[0]), to: try await PX.destination("zip:" + arguments[1]), where: keys)
{
    print(PX.json(event))
}
